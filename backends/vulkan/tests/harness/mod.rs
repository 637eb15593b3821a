//! Backend conformance (after ggml's test-backend-ops): one case list covering every op the
//! Vulkan backend claims, each run for every dtype it claims on the GPU and on our CPU kernels
//! (the oracle), compared by normalized error ‖gpu − cpu‖ / ‖cpu‖. Each case also asserts that
//! the GPU really ran it (dispatches were recorded) and, for host inputs, that nothing was
//! read back before the result was asked for.
//! Runs on Mesa lavapipe in CI (scripts/test.sh, section `backend: vulkan`), once per memory
//! model (tests/conformance.rs: the device's default; tests/conformance_device_memory.rs:
//! device-local memory with staged copies, as on a discrete GPU).

use mlx_arm_core::buffer;
use mlx_arm_core::ops::fused::{FusedOp, Step};
use mlx_arm_core::ops::{BinaryOp, UnaryOp};
use mlx_arm_core::primitive::Primitive;
use std::sync::Arc;
use mlx_arm_core::quant::GgmlType;
use mlx_arm_core::{device, ops, Array, DType, Device, Result};
use mlx_arm_vulkan as vkb;

type Build = fn(&[Array]) -> Result<Array>;

struct Case {
    name: &'static str,
    shapes: &'static [&'static [usize]],
    /// Input values are drawn from [lo, hi).
    range: (f32, f32),
    build: Build,
    /// Does the GPU compute it (false: a CPU fallback case, still compared).
    gpu: bool,
    /// Multiplies the dtype's tolerance: ops whose GPU math functions (sin, cos, exp) may differ
    /// from the CPU's by a few ulps on large arguments state a looser bound.
    slack: f64,
    /// A bound for every dtype instead of the dtype's tolerance (a GPU kernel that computes
    /// more precisely than the CPU's by design, compared with it anyway).
    bound: Option<f64>,
    /// What the CPU computes as the reference, when not `build` itself (the exact math a GPU
    /// kernel promises while the CPU kernel approximates it).
    oracle: Option<Build>,
    /// A matmul whose float16 layout the tensor-core shader takes: where the device has
    /// cooperative matrices (and `MLX_ARM_VULKAN_COOPMAT` does not turn them off) its float16
    /// run must go through that shader.
    coopmat: bool,
}

fn cases() -> Vec<Case> {
    macro_rules! case {
        // A GPU case checked against `oracle` computed on the CPU (first: the other arms would
        // read `oracle |x| …` as an expression).
        ($name:literal, $shapes:expr, oracle |$o:ident| $obody:expr, |$x:ident| $body:expr) => {
            Case {
                name: $name,
                shapes: $shapes,
                range: (-1.0, 1.0),
                gpu: true,
                slack: 1.0,
                bound: None,
                oracle: Some(|$o: &[Array]| $obody),
                build: |$x: &[Array]| $body,
                coopmat: false,
            }
        };
        // A matmul the tensor-core shader takes in float16 (values in [-1, 1)).
        ($name:literal, $shapes:expr, coopmat, |$x:ident| $body:expr) => {
            Case { name: $name, shapes: $shapes, range: (-1.0, 1.0), gpu: true, slack: 1.0, bound: None, oracle: None, build: |$x: &[Array]| $body, coopmat: true }
        };
        ($name:literal, $shapes:expr, $range:expr, $gpu:expr, |$x:ident| $body:expr) => {
            Case { name: $name, shapes: $shapes, range: $range, gpu: $gpu, slack: 1.0, bound: None, oracle: None, build: |$x: &[Array]| $body, coopmat: false }
        };
        ($name:literal, $shapes:expr, $range:expr, $gpu:expr, slack $slack:expr, |$x:ident| $body:expr) => {
            Case { name: $name, shapes: $shapes, range: $range, gpu: $gpu, slack: $slack, bound: None, oracle: None, build: |$x: &[Array]| $body, coopmat: false }
        };
        ($name:literal, $shapes:expr, $range:expr, $gpu:expr, bound $bound:expr, |$x:ident| $body:expr) => {
            Case { name: $name, shapes: $shapes, range: $range, gpu: $gpu, slack: 1.0, bound: Some($bound), oracle: None, build: |$x: &[Array]| $body, coopmat: false }
        };
    }
    const V: &[&[usize]] = &[&[3, 5, 7]];
    const BIG: &[&[usize]] = &[&[1000, 300]];
    vec![
        case!("abs", V, (-2.0, 2.0), true, |x| ops::abs(&x[0])),
        case!("negative", V, (-2.0, 2.0), true, |x| ops::negative(&x[0])),
        case!("square", V, (-2.0, 2.0), true, |x| ops::square(&x[0])),
        case!("sqrt", V, (0.1, 4.0), true, |x| ops::sqrt(&x[0])),
        case!("rsqrt", V, (0.1, 4.0), true, |x| ops::rsqrt(&x[0])),
        case!("reciprocal", V, (0.5, 4.0), true, |x| ops::reciprocal(&x[0])),
        case!("exp", V, (-3.0, 3.0), true, |x| ops::exp(&x[0])),
        case!("log", V, (0.1, 4.0), true, |x| ops::log(&x[0])),
        case!("sin", V, (-3.0, 3.0), true, |x| ops::sin(&x[0])),
        case!("cos", V, (-3.0, 3.0), true, |x| ops::cos(&x[0])),
        case!("tanh", V, (-3.0, 3.0), true, |x| ops::tanh(&x[0])),
        case!("sigmoid", V, (-5.0, 5.0), true, |x| ops::sigmoid(&x[0])),
        case!("floor", V, (-3.0, 3.0), true, |x| ops::floor(&x[0])),
        case!("ceil", V, (-3.0, 3.0), true, |x| ops::ceil(&x[0])),
        case!("exp of a transposed view", V, (-2.0, 2.0), true, |x| ops::exp(&ops::transpose(&x[0], None)?)),
        case!("copy of a sliced view", &[&[6, 8]], (-2.0, 2.0), true, |x| ops::contiguous(&ops::slice(&x[0], &[1, 2], &[5, 8], &[2, 3])?)),
        // The KV-cache write of a decode step, a strided window, a broadcast update.
        case!("slice_update one position", &[&[1, 3, 40, 16], &[1, 3, 1, 16]], (-2.0, 2.0), true, |x| {
            ops::slice_update(&x[0], &x[1], &[0, 0, 17, 0], &[1, 3, 18, 16], &[1, 1, 1, 1])
        }),
        case!("slice_update stepped window of a transposed view", &[&[9, 12], &[6, 3]], (-2.0, 2.0), true, |x| {
            ops::slice_update(&ops::transpose(&x[0], None)?, &x[1], &[1, 2], &[12, 9], &[2, 3])
        }),
        case!("slice_update broadcast update", &[&[4, 6, 5], &[5]], (-2.0, 2.0), true, |x| {
            ops::slice_update(&x[0], &x[1], &[1, 0, 0], &[3, 6, 5], &[1, 2, 1])
        }),
        case!("add", &[&[3, 5, 7], &[3, 5, 7]], (-2.0, 2.0), true, |x| ops::add(&x[0], &x[1])),
        case!("add broadcast", &[&[4, 1, 7], &[5, 1]], (-2.0, 2.0), true, |x| ops::add(&x[0], &x[1])),
        case!("subtract broadcast scalar", &[&[4, 6], &[]], (-2.0, 2.0), true, |x| ops::subtract(&x[0], &x[1])),
        case!("multiply transposed", &[&[5, 9], &[9, 5]], (-2.0, 2.0), true, |x| ops::multiply(&x[0], &ops::transpose(&x[1], None)?)),
        case!("divide", &[&[3, 5, 7], &[5, 7]], (0.5, 2.0), true, |x| ops::divide(&x[0], &x[1])),
        case!("maximum", &[&[3, 5, 7], &[3, 5, 7]], (-2.0, 2.0), true, |x| ops::maximum(&x[0], &x[1])),
        case!("minimum", &[&[3, 5, 7], &[7]], (-2.0, 2.0), true, |x| ops::minimum(&x[0], &x[1])),
        case!("large add", &[&[1000, 300], &[300]], (-2.0, 2.0), true, |x| ops::add(&x[0], &x[1])),
        case!("sum axis 0", V, (-2.0, 2.0), true, |x| ops::sum(&x[0], Some(&[0]), false)),
        case!("sum axis 2 keepdims", V, (-2.0, 2.0), true, |x| ops::sum(&x[0], Some(&[2]), true)),
        case!("sum long rows", BIG, (-1.0, 1.0), true, |x| ops::sum(&x[0], Some(&[1]), false)),
        case!("max axis 1", V, (-2.0, 2.0), true, |x| ops::max(&x[0], Some(&[1]), false)),
        case!("min axis 2", V, (-2.0, 2.0), true, |x| ops::min(&x[0], Some(&[2]), false)),
        case!("prod axis 0", V, (0.5, 1.5), true, |x| ops::prod(&x[0], Some(&[0]), false)),
        case!("sum of a transposed view", V, (-2.0, 2.0), true, |x| ops::sum(&ops::transpose(&x[0], None)?, Some(&[1]), false)),
        case!("softmax last axis", &[&[4, 5, 33]], (-4.0, 4.0), true, |x| ops::softmax(&x[0], Some(&[-1]), false)),
        case!("softmax axis 0", &[&[6, 5]], (-4.0, 4.0), true, |x| ops::softmax(&x[0], Some(&[0]), false)),
        case!("rms_norm", &[&[3, 4, 96], &[96]], (-2.0, 2.0), true, |x| ops::fast::rms_norm(&x[0], Some(&x[1]), 1e-5)),
        case!("rms_norm no weight", &[&[5, 300]], (-2.0, 2.0), true, |x| ops::fast::rms_norm(&x[0], None, 1e-6)),
        case!("rms_norm odd rows of a transposed view", &[&[301, 7]], (-2.0, 2.0), true, |x| {
            ops::fast::rms_norm(&ops::transpose(&x[0], None)?, None, 1e-6)
        }),
        case!("layer_norm", &[&[3, 4, 96], &[96], &[96]], (-2.0, 2.0), true, |x| {
            ops::fast::layer_norm(&x[0], Some(&x[1]), Some(&x[2]), 1e-5)
        }),
        case!("layer_norm weight only, odd dim", &[&[5, 1001], &[1001]], (-2.0, 2.0), true, |x| {
            ops::fast::layer_norm(&x[0], Some(&x[1]), None, 1e-5)
        }),
        case!("layer_norm no affine, offset data", &[&[6, 33]], (3.0, 5.0), true, |x| ops::fast::layer_norm(&x[0], None, None, 1e-6)),
        // rope: positions up to ~40 rad; cos/sin of those on the GPU agree with the CPU's to a
        // few ulps of the argument, hence the slack.
        case!("rope", &[&[1, 4, 9, 64]], (-2.0, 2.0), true, slack 10.0, |x| {
            ops::fast::rope(&x[0], 64, false, Some(10000.0), 1.0, ops::RopeOffset::Int(7), None)
        }),
        case!("rope traditional, partial dims", &[&[2, 3, 5, 40]], (-2.0, 2.0), true, slack 10.0, |x| {
            ops::fast::rope(&x[0], 24, true, Some(10000.0), 0.5, ops::RopeOffset::Int(3), None)
        }),
        case!("rope offset per batch item", &[&[2, 3, 1, 32]], (-2.0, 2.0), true, slack 10.0, |x| {
            let off = Array::from_slice(&[5i32, 17], &[2])?;
            ops::fast::rope(&x[0], 32, false, Some(500000.0), 1.0, ops::RopeOffset::Array(&off), None)
        }),
        case!("rope freqs", &[&[1, 2, 7, 16]], (-2.0, 2.0), true, slack 10.0, |x| {
            let f: Vec<f32> = (0..8).map(|j| 1.0 + 1.7 * j as f32).collect();
            let freqs = Array::from_slice(&f, &[8])?;
            ops::fast::rope(&x[0], 16, false, None, 1.0, ops::RopeOffset::Int(11), Some(&freqs))
        }),
        case!("rope of a transposed view (B, L, H, D)", &[&[1, 9, 4, 64]], (-2.0, 2.0), true, slack 10.0, |x| {
            let q = ops::transpose(&x[0], Some(&[0, 2, 1, 3]))?;
            ops::fast::rope(&q, 64, true, Some(10000.0), 1.0, ops::RopeOffset::Int(0), None)
        }),
        case!("rope 3-D, odd rows", &[&[6, 37, 24]], (-2.0, 2.0), true, slack 10.0, |x| {
            ops::fast::rope(&x[0], 24, false, Some(10000.0), 1.0, ops::RopeOffset::Int(2), None)
        }),
        // The decode step's fused ops (core's fast::lm; backends/vulkan/src/lm_ops.rs), each
        // output against the CPU kernel of the same fused node.
        case!("add_rms_norm sum", &[&[1, 1, 576], &[1, 1, 576], &[576]], (-2.0, 2.0), true, |x| lm_out(add_rms(x), 0)),
        case!("add_rms_norm normed", &[&[1, 1, 576], &[1, 1, 576], &[576]], (-2.0, 2.0), true, |x| lm_out(add_rms(x), 1)),
        case!("add_rms_norm normed, 5 rows", &[&[5, 96], &[5, 96], &[96]], (-2.0, 2.0), true, |x| lm_out(add_rms(x), 1)),
        case!("decode_heads queries", &[&[1, 1, 192], &[1, 1, 64], &[1, 1, 64]], (-2.0, 2.0), true, slack 10.0, |x| lm_out(heads(x, false), 0)),
        case!("decode_heads keys", &[&[1, 1, 192], &[1, 1, 64], &[1, 1, 64]], (-2.0, 2.0), true, slack 10.0, |x| lm_out(heads(x, false), 1)),
        case!("decode_heads values", &[&[1, 1, 192], &[1, 1, 64], &[1, 1, 64]], (-2.0, 2.0), true, |x| lm_out(heads(x, false), 2)),
        // Two batch items at their own positions, adjacent pairs, 24 of 32 features rotated
        // by given frequencies.
        case!("decode_heads keys, per-item offsets, freqs", &[&[2, 1, 128], &[2, 1, 64], &[2, 1, 64]], (-2.0, 2.0), true, slack 10.0, |x| {
            lm_out(heads(x, true), 1)
        }),
        case!("decode_heads queries, per-item offsets, freqs", &[&[2, 1, 128], &[2, 1, 64], &[2, 1, 64]], (-2.0, 2.0), true, slack 10.0, |x| {
            lm_out(heads(x, true), 0)
        }),
        case!("sdpa decode, GQA 4:1", &[&[1, 8, 1, 64], &[1, 2, 37, 64], &[1, 2, 37, 64]], (-1.0, 1.0), true, |x| {
            ops::scaled_dot_product_attention(&x[0], &x[1], &x[2], 0.125, ops::SdpaMask::None)
        }),
        case!("sdpa decode, sliced KV cache, q transposed", &[&[1, 1, 8, 64], &[1, 2, 300, 64], &[1, 2, 300, 64]], (-1.0, 1.0), true, |x| {
            let q = ops::transpose(&x[0], Some(&[0, 2, 1, 3]))?;
            let k = ops::slice(&x[1], &[0, 0, 0, 0], &[1, 2, 261, 64], &[1, 1, 1, 1])?;
            let v = ops::slice(&x[2], &[0, 0, 0, 0], &[1, 2, 261, 64], &[1, 1, 1, 1])?;
            ops::scaled_dot_product_attention(&q, &k, &v, 0.125, ops::SdpaMask::None)
        }),
        case!("sdpa decode, long context", &[&[1, 4, 1, 128], &[1, 1, 700, 128], &[1, 1, 700, 128]], (-1.0, 1.0), true, |x| {
            ops::scaled_dot_product_attention(&x[0], &x[1], &x[2], 0.088, ops::SdpaMask::None)
        }),
        // More than 256 keys for at most 1024 query rows: sdpa_split.comp (a workgroup per row
        // and chunk of 256 keys, then a combining pass); the two cases above take it too.
        case!("sdpa split over keys, causal chunked prefill, GQA 2:1", &[&[1, 4, 5, 32], &[1, 2, 600, 32], &[1, 2, 600, 40]], (-1.0, 1.0), true, |x| {
            ops::scaled_dot_product_attention(&x[0], &x[1], &x[2], 0.2, ops::SdpaMask::Causal)
        }),
        case!("sdpa split over keys, additive mask", &[&[1, 2, 2, 16], &[1, 2, 530, 16], &[1, 2, 530, 16], &[2, 530]], (-3.0, 3.0), true, |x| {
            ops::scaled_dot_product_attention(&x[0], &x[1], &x[2], 0.25, ops::SdpaMask::Array(&x[3]))
        }),
        case!("sdpa split over keys, -inf mask over whole chunks", &[&[1, 2, 1, 16], &[1, 2, 800, 16], &[1, 2, 800, 16]], (-1.0, 1.0), true, |x| {
            // Keys past 300 masked out: chunks 2 and 3 hold nothing but -inf.
            let far = ops::greater(&ops::arange(0.0, 800.0, 1.0, DType::Float32)?, &Array::scalar(300.0f32)?)?;
            let m = ops::where_(&far, &Array::scalar(f32::NEG_INFINITY)?, &Array::scalar(0.0f32)?)?;
            let m = ops::astype(&m, x[0].dtype())?;
            ops::scaled_dot_product_attention(&x[0], &x[1], &x[2], 0.25, ops::SdpaMask::Array(&m))
        }),
        case!("sdpa prefill, causal", &[&[2, 4, 13, 32], &[2, 4, 13, 32], &[2, 4, 13, 32]], (-1.0, 1.0), true, |x| {
            ops::scaled_dot_product_attention(&x[0], &x[1], &x[2], 0.18, ops::SdpaMask::Causal)
        }),
        case!("sdpa chunked prefill causal, GQA 2:1, dv != dk", &[&[1, 4, 5, 48], &[1, 2, 20, 48], &[1, 2, 20, 40]], (-1.0, 1.0), true, |x| {
            ops::scaled_dot_product_attention(&x[0], &x[1], &x[2], 0.15, ops::SdpaMask::Causal)
        }),
        // 2400 rows × 2100 keys exceed one dispatch's score scratch: two dispatches.
        case!("sdpa causal prefill split over dispatches", &[&[1, 4, 600, 16], &[1, 4, 2100, 16], &[1, 4, 2100, 16]], (-1.0, 1.0), true, |x| {
            ops::scaled_dot_product_attention(&x[0], &x[1], &x[2], 0.25, ops::SdpaMask::Causal)
        }),
        case!("sdpa value dim over 256", &[&[1, 2, 3, 16], &[1, 1, 45, 16], &[1, 1, 45, 300]], (-1.0, 1.0), true, |x| {
            ops::scaled_dot_product_attention(&x[0], &x[1], &x[2], 0.25, ops::SdpaMask::Causal)
        }),
        case!("sdpa additive mask broadcast over batch and heads", &[&[1, 2, 3, 16], &[1, 2, 7, 16], &[1, 2, 7, 16], &[3, 7]], (-1.0, 1.0), true, |x| {
            ops::scaled_dot_product_attention(&x[0], &x[1], &x[2], 0.25, ops::SdpaMask::Array(&x[3]))
        }),
        case!("sdpa additive mask per head, GQA 3:1", &[&[2, 6, 4, 32], &[2, 2, 9, 32], &[2, 2, 9, 32], &[2, 6, 4, 9]], (-3.0, 3.0), true, |x| {
            ops::scaled_dot_product_attention(&x[0], &x[1], &x[2], 0.3, ops::SdpaMask::Array(&x[3]))
        }),
        case!("sdpa prefill, no mask", &[&[1, 2, 9, 16], &[1, 2, 11, 16], &[1, 2, 11, 16]], (-1.0, 1.0), true, |x| {
            ops::scaled_dot_product_attention(&x[0], &x[1], &x[2], 0.25, ops::SdpaMask::None)
        }),
        case!("matmul", &[&[33, 65], &[65, 17]], (-1.0, 1.0), true, |x| ops::matmul(&x[0], &x[1])),
        case!("matmul batched", &[&[3, 70, 40], &[3, 40, 130]], (-1.0, 1.0), true, |x| ops::matmul(&x[0], &x[1])),
        case!("matmul a @ b.T", &[&[64, 128], &[96, 128]], coopmat, |x| ops::matmul(&x[0], &ops::transpose(&x[1], None)?)),
        case!("matmul broadcast batch", &[&[2, 1, 9, 20], &[3, 20, 11]], (-1.0, 1.0), true, |x| ops::matmul(&x[0], &x[1])),
        case!("matvec", &[&[1, 256], &[256, 300]], (-1.0, 1.0), true, |x| ops::matmul(&x[0], &x[1])),
        // Layouts matmul_coopmat.comp takes in float16 (the portable shader elsewhere): tails in
        // M, N and K (200 = 128 + 72 rows, 264 = 2·128 + 8 columns, K = 4·32 + 8), several
        // K slices, B column-major (x @ Wᵀ) with N not a multiple of 8, A column-major, batches.
        case!("matmul tiles with tails", &[&[200, 136], &[136, 264]], coopmat, |x| ops::matmul(&x[0], &x[1])),
        case!("matmul full tiles, 16 K slices", &[&[256, 512], &[512, 384]], coopmat, |x| ops::matmul(&x[0], &x[1])),
        case!("matmul x @ W.T, odd N", &[&[130, 72], &[100, 72]], coopmat, |x| ops::matmul(&x[0], &ops::transpose(&x[1], None)?)),
        case!("matmul A.T @ B", &[&[40, 136], &[40, 48]], coopmat, |x| ops::matmul(&ops::transpose(&x[0], None)?, &x[1])),
        case!("matmul A.T @ B.T, K tail", &[&[24, 16], &[40, 24]], coopmat, |x| {
            ops::matmul(&ops::transpose(&x[0], None)?, &ops::transpose(&x[1], None)?)
        }),
        case!("matmul batched, tensor-core layout", &[&[3, 40, 64], &[3, 64, 24]], coopmat, |x| ops::matmul(&x[0], &x[1])),
        case!("matmul broadcast batch, tensor-core layout", &[&[2, 1, 24, 32], &[3, 32, 16]], coopmat, |x| ops::matmul(&x[0], &x[1])),
        case!("quantized_matmul 4-bit g64 GEMV", &[&[1, 256], &[99, 256]], (-1.0, 1.0), true, |x| qmm(x, 64, 4)),
        case!("quantized_matmul 8-bit g32 GEMV", &[&[1, 1, 320], &[37, 320]], (-1.0, 1.0), true, |x| qmm(x, 32, 8)),
        case!("quantized_matmul 4-bit g32, batched rows", &[&[2, 5, 128], &[66, 128]], (-1.0, 1.0), true, |x| qmm(x, 32, 4)),
        case!("quantized_matmul 2-bit g128", &[&[3, 256], &[21, 256]], (-1.0, 1.0), true, |x| qmm(x, 128, 2)),
        case!("quantized_matmul 8-bit g64, x transposed", &[&[64, 3], &[10, 64]], (-1.0, 1.0), true, |x| {
            let xt = ops::transpose(&x[0], None)?;
            qmm(&[xt, x[1].clone()], 64, 8)
        }),
        // GGUF blocks (the default model's Q4_1 layers and Q8_0 embedding): decode-size GEMVs,
        // prefill row tiles (8 rows per workgroup on GPUs: 10 and 19 rows leave partial tiles), output
        // counts not a multiple of a workgroup's 4, rows of more blocks than the 64 lanes.
        case!("ggml_matmul q4_0 GEMV, odd n", &[&[1, 256], &[99, 256]], oracle |x| ggml_dense(x, GgmlType::Q4_0, false), |x| ggml_mm(x, GgmlType::Q4_0, false)),
        case!("ggml_matmul q4_1 batched rows", &[&[2, 5, 96], &[37, 96]], oracle |x| ggml_dense(x, GgmlType::Q4_1, false), |x| ggml_mm(x, GgmlType::Q4_1, false)),
        // 67 rows: the tiled kernel on every device (CPU drivers take it from 64 rows).
        case!("ggml_matmul q4_1 tiled prefill, 67 rows", &[&[67, 64], &[9, 64]], oracle |x| ggml_dense(x, GgmlType::Q4_1, false), |x| ggml_mm(x, GgmlType::Q4_1, false)),
        case!("ggml_matmul q8_0 prefill, 19 rows", &[&[19, 320], &[66, 320]], oracle |x| ggml_dense(x, GgmlType::Q8_0, false), |x| ggml_mm(x, GgmlType::Q8_0, false)),
        case!("ggml_matmul q4_0 130 blocks per row", &[&[3, 4160], &[5, 4160]], oracle |x| ggml_dense(x, GgmlType::Q4_0, false), |x| ggml_mm(x, GgmlType::Q4_0, false)),
        case!("ggml_matmul q4_1 576 (SmolLM2 width)", &[&[1, 1, 576], &[67, 576]], oracle |x| ggml_dense(x, GgmlType::Q4_1, false), |x| ggml_mm(x, GgmlType::Q4_1, false)),
        // Q4_1 blocks (20 bytes) starting in the middle of a word: every block of the row is
        // then unaligned (Q4_0 and Q8_0 rows alternate by themselves).
        case!("ggml_matmul q4_1 weight at byte 2", &[&[1, 1, 576], &[13, 576]], oracle |x| ggml_dense(x, GgmlType::Q4_1, false), |x| {
            ggml_mm_at_byte_2(x, GgmlType::Q4_1)
        }),
        // K-quants: 256-weight blocks of 8 chunks; 1280 = 5 blocks, 40 chunks (lanes left idle).
        case!("ggml_matmul q4_K GEMV, odd n", &[&[1, 1280], &[23, 1280]], oracle |x| ggml_dense(x, GgmlType::Q4_K, false), |x| ggml_mm(x, GgmlType::Q4_K, false)),
        case!("ggml_matmul q6_K GEMV, odd n", &[&[1, 1280], &[23, 1280]], oracle |x| ggml_dense(x, GgmlType::Q6_K, false), |x| ggml_mm(x, GgmlType::Q6_K, false)),
        case!("ggml_matmul q4_K 67 rows, 9 blocks per row", &[&[67, 2304], &[6, 2304]], oracle |x| ggml_dense(x, GgmlType::Q4_K, false), |x| ggml_mm(x, GgmlType::Q4_K, false)),
        case!("ggml_matmul q6_K prefill, 5 rows", &[&[5, 512], &[9, 512]], oracle |x| ggml_dense(x, GgmlType::Q6_K, false), |x| ggml_mm(x, GgmlType::Q6_K, false)),
        case!("ggml_matmul q8_0 x transposed", &[&[64, 3], &[10, 64]], oracle |x| ggml_dense(x, GgmlType::Q8_0, true), |x| {
            ggml_mm(x, GgmlType::Q8_0, true)
        }),
        // Against the CPU's own ggml_matmul, which quantizes x to Q8 first (ggml's scheme):
        // the GPU keeps x exact, so the two differ by Q8's rounding of x, ~4e-3 normalized
        // for values uniform in [-1, 1]; 1e-2 bounds it in every dtype.
        case!("ggml_matmul q4_1 vs CPU's Q8 activations", &[&[4, 576], &[40, 576]], (-1.0, 1.0), true, bound 1e-2, |x| {
            ggml_mm(x, GgmlType::Q4_1, false)
        }),
        // Several GGUF projections of one x (a layer's Q/K/V, its gate/up): one row runs as one
        // GEMV over the weights joined end to end; several rows or mixed types one kernel each.
        // Each case checks one output (joining them would need a CPU op): outputs of 40, 17
        // and 24 rows, so the later ones start inside a workgroup's columns.
        case!("ggml_matmul_many q4_1 joined, 1st of 3", &[&[1, 1, 576], &[40, 576], &[17, 576], &[24, 576]], oracle |x| ggml_dense_of(x, 0, GgmlType::Q4_1), |x| {
            ggml_many(x, &[GgmlType::Q4_1; 3], 0)
        }),
        case!("ggml_matmul_many q4_1 joined, 2nd of 3", &[&[1, 1, 576], &[40, 576], &[17, 576], &[24, 576]], oracle |x| ggml_dense_of(x, 1, GgmlType::Q4_1), |x| {
            ggml_many(x, &[GgmlType::Q4_1; 3], 1)
        }),
        case!("ggml_matmul_many q4_1 joined, 3rd of 3", &[&[1, 1, 576], &[40, 576], &[17, 576], &[24, 576]], oracle |x| ggml_dense_of(x, 2, GgmlType::Q4_1), |x| {
            ggml_many(x, &[GgmlType::Q4_1; 3], 2)
        }),
        case!("ggml_matmul_many q8_0 joined, 2nd of 2", &[&[1, 320], &[9, 320], &[33, 320]], oracle |x| ggml_dense_of(x, 1, GgmlType::Q8_0), |x| {
            ggml_many(x, &[GgmlType::Q8_0; 2], 1)
        }),
        case!("ggml_matmul_many q4_1, 5 rows, 2nd of 2", &[&[5, 96], &[13, 96], &[7, 96]], oracle |x| ggml_dense_of(x, 1, GgmlType::Q4_1), |x| {
            ggml_many(x, &[GgmlType::Q4_1; 2], 1)
        }),
        case!("ggml_matmul_many q4_1 + q8_0, 2nd", &[&[1, 64], &[6, 64], &[5, 64]], oracle |x| ggml_dense_of(x, 1, GgmlType::Q8_0), |x| {
            ggml_many(x, &[GgmlType::Q4_1, GgmlType::Q8_0], 1)
        }),
        // Fused elementwise programs (core's FusedOp): the SwiGLU of a decode step, and one of
        // four inputs (one a single element) over every binary op and several unary ones.
        case!("fused swiglu g·sigmoid(g)·u", &[&[1, 1, 1536], &[1, 1, 1536]], (-4.0, 4.0), true, |x| fused(x, SWIGLU)),
        case!("fused program, 4 inputs and a scalar", &[&[3, 50], &[3, 50], &[1], &[3, 50]], (0.5, 2.0), true, |x| fused(x, MIXED)),
        // A row-vector input (broadcast over rows) is not covered: the CPU runs it.
        case!("fused program, broadcast row (CPU fallback)", &[&[1, 1536], &[1536]], (-4.0, 4.0), false, |x| fused(x, SWIGLU)),
        // argmax / argmin (greedy decoding reads back only the index): first index on ties, the
        // first NaN wins (MLX's rule), any axis of a strided view, a vocabulary-sized row.
        case!("argmax last axis", V, (-2.0, 2.0), true, |x| ops::argmax(&x[0], Some(-1), false)),
        case!("argmin axis 1 of a transposed view", V, (-2.0, 2.0), true, |x| ops::argmin(&ops::transpose(&x[0], None)?, Some(1), true)),
        case!("argmax with ties (first wins)", &[&[4, 300]], (-2.0, 2.0), true, |x| ops::argmax(&ops::floor(&x[0])?, Some(-1), false)),
        case!("argmin with ties (first wins)", &[&[4, 300]], (-2.0, 2.0), true, |x| ops::argmin(&ops::floor(&x[0])?, Some(0), false)),
        case!("argmax with NaNs (first NaN wins)", &[&[6, 40]], (-1.0, 1.0), true, |x| {
            let nan = ops::where_(&ops::greater(&x[0], &Array::scalar(0.9f32)?)?, &Array::scalar(f32::NAN)?, &x[0])?;
            ops::argmax(&ops::astype(&nan, x[0].dtype())?, Some(-1), false)
        }),
        case!("argmax over a 49152-wide row", &[&[2, 49152]], (-4.0, 4.0), true, |x| ops::argmax(&x[0], Some(-1), false)),
        // The embedding lookup of a GGUF model: `take` of whole block rows (host token ids,
        // negative ones from the end, repeats) and ggml_dequantize of those rows, both on the GPU.
        case!("ggml_dequantize q8_0", &[&[5, 576]], (-1.0, 1.0), true, |x| ggml_rows(x, GgmlType::Q8_0, None)),
        case!("ggml_dequantize q4_0", &[&[3, 64]], (-1.0, 1.0), true, |x| ggml_rows(x, GgmlType::Q4_0, None)),
        case!("ggml_dequantize q4_1", &[&[3, 96]], (-1.0, 1.0), true, |x| ggml_rows(x, GgmlType::Q4_1, None)),
        case!("ggml_dequantize q4_K", &[&[2, 512]], (-1.0, 1.0), true, |x| ggml_rows(x, GgmlType::Q4_K, None)),
        case!("ggml_dequantize q6_K", &[&[2, 512]], (-1.0, 1.0), true, |x| ggml_rows(x, GgmlType::Q6_K, None)),
        case!("take q8_0 rows + ggml_dequantize", &[&[40, 576]], (-1.0, 1.0), true, |x| ggml_rows(x, GgmlType::Q8_0, Some(&[7, 0, -1, 7, 39]))),
        case!("take q4_1 rows + ggml_dequantize", &[&[9, 64]], (-1.0, 1.0), true, |x| ggml_rows(x, GgmlType::Q4_1, Some(&[8, 2]))),
        // Indices computed on the device (a decode step's chosen token, read by the next step's
        // embedding lookup before the host sees it): gather.comp.
        case!("take rows at indices on the device", &[&[6, 8], &[5, 6]], (-1.0, 1.0), true, |x| {
            ops::take(&x[0], &ops::argmax(&x[1], Some(-1), false)?, Some(0))
        }),
        case!("take float rows", &[&[6, 3, 5]], (-1.0, 1.0), true, |x| ops::take(&x[0], &Array::from_slice(&[5i32, -6, 2], &[3, 1])?, Some(0))),
        case!("ggml_matmul q5_0 (CPU fallback)", &[&[2, 64], &[7, 64]], (-1.0, 1.0), false, |x| ggml_mm(x, GgmlType::Q5_0, false)),
        case!("quantized_matmul 3-bit (CPU fallback)", &[&[2, 128], &[9, 128]], (-1.0, 1.0), false, |x| qmm(x, 64, 3)),
        // No GPU kernel: runs on the CPU behind a counted transfer, and must still agree.
        case!("sdpa with a boolean mask (CPU fallback)", &[&[1, 2, 3, 16], &[1, 2, 7, 16], &[1, 2, 7, 16], &[3, 7]], (-1.0, 1.0), false, |x| {
            let keep = ops::greater_equal(&x[3], &Array::scalar(-0.5f32)?)?;
            ops::scaled_dot_product_attention(&x[0], &x[1], &x[2], 0.25, ops::SdpaMask::Array(&keep))
        }),
        case!("cumsum (CPU fallback)", V, (-2.0, 2.0), false, |x| ops::cumsum(&ops::exp(&x[0])?, Some(1), false, true, None)),
    ]
}

/// `x[0] @ dequantize(quantize(x[1]))ᵀ` through `quantized_matmul` (affine, transposed).
fn qmm(x: &[Array], group_size: i64, bits: i64) -> Result<Array> {
    let q = ops::quantized::quantize(&x[1], Some(group_size), Some(bits), "affine", None)?;
    ops::quantized::quantized_matmul(&x[0], &q[0], &q[1], Some(&q[2]), true, Some(group_size), Some(bits), "affine")
}

/// `x[0] @ Wᵀ` (`x[0]ᵀ` when `t`) with `W = x[1]` quantized to GGUF blocks of type `ty`,
/// through `ggml_matmul`.
fn ggml_mm(x: &[Array], ty: GgmlType, t: bool) -> Result<Array> {
    let k = x[1].shape()[1];
    let a = if t { ops::transpose(&x[0], None)? } else { x[0].clone() };
    ops::ggml_matmul(&a, &ops::ggml_quantize(&x[1], ty)?, ty, k)
}

/// `fast::lm::add_rms_norm(x[0], x[1], x[2])`.
fn add_rms(x: &[Array]) -> Result<Vec<Array>> {
    Ok(ops::fast::lm::add_rms_norm(&x[0], &x[1], &x[2], 1e-5)?.to_vec())
}

/// `fast::lm::decode_heads` of x[0..3] (head_dim 64, at position 9; `varied`: head_dim 32, a
/// position per batch item, traditional, 24 dims rotated by given frequencies).
fn heads(x: &[Array], varied: bool) -> Result<Vec<Array>> {
    use ops::fast::lm::{decode_heads, HeadsRope};
    let pos = Array::scalar(9i32)?;
    if !varied {
        let r = HeadsRope { dims: 64, traditional: false, base: Some(10000.0), scale: 1.0, offset: &pos, freqs: None };
        return Ok(decode_heads(&x[0], &x[1], &x[2], 64, &r)?.to_vec());
    }
    let per_item = Array::from_slice(&[4i32, 21], &[2])?;
    let f: Vec<f32> = (0..12).map(|j| 1.0 + 2.3 * j as f32).collect();
    let freqs = Array::from_slice(&f, &[12])?;
    let r = HeadsRope { dims: 24, traditional: true, base: None, scale: 0.5, offset: &per_item, freqs: Some(&freqs) };
    Ok(decode_heads(&x[0], &x[1], &x[2], 32, &r)?.to_vec())
}

/// Output `i` of a fused op (tests/lm_ops.rs checks that the GPU runs it as one node).
fn lm_out(outs: Result<Vec<Array>>, i: usize) -> Result<Array> {
    Ok(outs?.swap_remove(i))
}

/// [`ggml_mm`] with the blocks a view that starts 2 bytes into its buffer.
fn ggml_mm_at_byte_2(x: &[Array], ty: GgmlType) -> Result<Array> {
    let k = x[1].shape()[1];
    let blocks = ops::ggml_quantize(&x[1], ty)?;
    let (n, row_bytes) = (blocks.shape()[0], blocks.shape()[1]);
    let flat = ops::concatenate(&[ops::zeros(&[2], DType::Uint8)?, ops::reshape(&blocks, &[-1])?], Some(0))?;
    let end = (2 + n * row_bytes) as isize;
    let w = ops::reshape(&ops::slice(&flat, &[2], &[end], &[1])?, &[n as isize, row_bytes as isize])?;
    ops::ggml_matmul(&x[0], &w, ty, k)
}

/// Output `pick` of one `ggml_matmul_many` of `x[0]` by `Wᵢ = x[i + 1]` quantized to `tys[i]`.
fn ggml_many(x: &[Array], tys: &[GgmlType], pick: usize) -> Result<Array> {
    let k = x[0].shape()[x[0].ndim() - 1];
    let blocks: Vec<Array> = x[1..].iter().zip(tys).map(|(w, &ty)| ops::ggml_quantize(w, ty)).collect::<Result<_>>()?;
    let pairs: Vec<(&Array, GgmlType)> = blocks.iter().zip(tys).map(|(b, &ty)| (b, ty)).collect();
    Ok(ops::ggml_matmul_many(&x[0], &pairs, k)?.swap_remove(pick))
}

/// [`ggml_dense`] of `x[0]` by weight `x[pick + 1]` quantized to `ty`.
fn ggml_dense_of(x: &[Array], pick: usize, ty: GgmlType) -> Result<Array> {
    ggml_dense(&[x[0].clone(), x[pick + 1].clone()], ty, false)
}

/// A fused program's steps: (unary or binary primitive, argument registers).
type Program = &'static [(Primitive, &'static [usize])];

/// SiLU(g)·u over g = register 0, u = 1 (lm's SwiGLU).
const SWIGLU: Program = &[
    (Primitive::Unary(UnaryOp::Sigmoid), &[0]),
    (Primitive::Binary(BinaryOp::Multiply), &[0, 2]),
    (Primitive::Binary(BinaryOp::Multiply), &[3, 1]),
];

/// Every binary op and some unary ones over four inputs, the third a single element.
const MIXED: Program = &[
    (Primitive::Binary(BinaryOp::Subtract), &[0, 1]),
    (Primitive::Unary(UnaryOp::Tanh), &[4]),
    (Primitive::Binary(BinaryOp::Add), &[5, 2]),
    (Primitive::Binary(BinaryOp::Divide), &[6, 3]),
    (Primitive::Binary(BinaryOp::Maximum), &[7, 0]),
    (Primitive::Binary(BinaryOp::Minimum), &[8, 1]),
    (Primitive::Unary(UnaryOp::Exp), &[9]),
    (Primitive::Binary(BinaryOp::Multiply), &[10, 3]),
    (Primitive::Unary(UnaryOp::Sqrt), &[11]),
];

/// `program` over `x` as one fused node.
fn fused(x: &[Array], program: Program) -> Result<Array> {
    let dtype = x[0].dtype();
    let steps = program.iter().map(|(prim, args)| Step { prim: prim.clone(), args: args.to_vec(), dtype }).collect();
    FusedOp::record(&Arc::new(FusedOp { n_inputs: x.len(), steps }), x.to_vec())
}

/// `x[0]` quantized to GGUF blocks of type `ty` (on the CPU: no GPU kernel), the rows `ids`
/// taken (all when `None`), then dequantized: the embedding lookup of a GGUF model.
fn ggml_rows(x: &[Array], ty: GgmlType, ids: Option<&[i32]>) -> Result<Array> {
    let k = x[0].shape()[1];
    let blocks = ops::ggml_quantize(&x[0], ty)?;
    let rows = match ids {
        Some(ids) => ops::take(&blocks, &Array::from_slice(ids, &[ids.len()])?, Some(0))?,
        None => blocks,
    };
    ops::ggml_dequantize(&rows, ty, k)
}

/// The same product in float32 with `W` dequantized whole: the math ggml_matmul.comp promises.
fn ggml_dense(x: &[Array], ty: GgmlType, t: bool) -> Result<Array> {
    let k = x[1].shape()[1];
    let a = if t { ops::transpose(&x[0], None)? } else { x[0].clone() };
    let w = ops::ggml_dequantize(&ops::ggml_quantize(&x[1], ty)?, ty, k)?;
    let y = ops::matmul(&ops::astype(&a, DType::Float32)?, &ops::transpose(&w, None)?)?;
    ops::astype(&y, x[0].dtype())
}

fn values(n: usize, seed: u32, (lo, hi): (f32, f32)) -> Vec<f32> {
    let mut s = seed.wrapping_mul(747796405).wrapping_add(2891336453);
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            lo + (hi - lo) * ((s >> 8) as f32 / (1u32 << 24) as f32)
        })
        .collect()
}

fn as_f64(a: &Array) -> Vec<f64> {
    let f = ops::astype(a, DType::Float32).unwrap();
    f.to_vec::<f32>().unwrap().into_iter().map(f64::from).collect()
}

fn run(case: &Case, build: Build, dt: DType, dev: Device) -> Array {
    device::set_default_device(Device::CPU).unwrap();
    let inputs: Vec<Array> = case
        .shapes
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let n: usize = s.iter().product();
            let a = Array::from_slice(&values(n, 17 + i as u32, case.range), s).unwrap();
            let a = ops::astype(&a, dt).unwrap();
            a.eval().unwrap();
            a
        })
        .collect();
    device::set_default_device(dev).unwrap();
    let out = build(&inputs).unwrap_or_else(|e| panic!("{}: {e}", case.name));
    out.eval().unwrap_or_else(|e| panic!("{} on {dev:?}: {e}", case.name));
    device::set_default_device(Device::CPU).unwrap();
    out
}

/// Runs every case for every claimed dtype and fails with the list of mismatches.
#[allow(dead_code)] // Test crates that run a subset use `check_matching` alone.
pub fn check_all() {
    check_matching(|_| true);
}

/// [`check_all`] for the cases whose name `pick` accepts.
pub fn check_matching(pick: fn(&str) -> bool) {
    let info = vkb::init().expect("a Vulkan device (CI: Mesa lavapipe)");
    eprintln!("device: {} ({}), shared memory: {}, f16: {}", info.name, info.kind, info.shared_memory, info.f16);
    match info.coopmat {
        Some(s) => eprintln!("float16 matmul: tensor cores (VK_NV_cooperative_matrix, fragment {}x{}x{})", s[0], s[1], s[2]),
        None => eprintln!("float16 matmul: portable shader (no cooperative matrices, or {}=off)", vkb::COOPMAT_ENV),
    }
    match info.subgroup {
        Some(n) => eprintln!("GGUF matmul sums: subgroup arithmetic, subgroups of {n}"),
        None => eprintln!("GGUF matmul sums: shared memory (no subgroup arithmetic, or {}=off)", vkb::SUBGROUP_ENV),
    }
    let mut dtypes = vec![(DType::Float32, 1e-5)];
    if info.f16 {
        dtypes.push((DType::Float16, 2e-3));
    }
    let mut failures = Vec::new();
    for case in cases().into_iter().filter(|c| pick(c.name)) {
        for &(dt, tol) in &dtypes {
            let want = run(&case, case.oracle.unwrap_or(case.build), dt, Device::CPU);
            let before = vkb::queue_stats().dispatches;
            let coop_before = vkb::coopmat_dispatches();
            buffer::reset_transfer_stats();
            let got = run(&case, case.build, dt, Device::GPU);
            let on_tensor_cores = vkb::coopmat_dispatches() > coop_before;
            let reads_before_ask = buffer::transfer_stats().device_to_host;
            assert_eq!(got.shape(), want.shape(), "{} {dt}", case.name);
            assert_eq!(got.dtype(), want.dtype(), "{} {dt}", case.name);
            let (g, w) = (as_f64(&got), as_f64(&want));
            // Counted once read: the recorder may hold the last dispatch back until then
            // (src/defer.rs).
            let dispatched = vkb::queue_stats().dispatches - before;
            let num: f64 = g.iter().zip(&w).map(|(a, b)| (a - b) * (a - b)).sum();
            let den: f64 = w.iter().map(|b| b * b).sum::<f64>().max(1e-30);
            let err = (num / den).sqrt();
            let tol = case.bound.unwrap_or(tol * case.slack);
            let ok = err <= tol && g.iter().all(|v| v.is_finite());
            let path = if on_tensor_cores { " (tensor cores)" } else { "" };
            eprintln!("{:<32} {:<8} err {:.2e} dispatches {}{path}", case.name, dt.to_string(), err, dispatched);
            let want_coop = case.coopmat && dt == DType::Float16 && info.coopmat.is_some();
            assert_eq!(on_tensor_cores, want_coop, "{} {dt}: tensor-core path taken: {on_tensor_cores}, expected {want_coop}", case.name);
            if !ok {
                failures.push(format!("{} {dt}: normalized error {err:.3e} > {tol:.0e}", case.name));
            }
            if case.gpu {
                assert!(dispatched > 0, "{} {dt}: nothing ran on the GPU", case.name);
                if !info.shared_memory {
                    assert_eq!(reads_before_ask, 0, "{} {dt}: data came back before it was read", case.name);
                }
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
