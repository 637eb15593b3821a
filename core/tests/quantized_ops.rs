//! The array-level quantization API (`ops::quantize`, `dequantize`, `quantized_matmul`,
//! `gather_qmm`, `to_fp8`, `from_fp8`) against real MLX 0.32.4 goldens
//! (`data/quantized_ops/gen_quantized_ops.py`), and GGUF block weights as arrays
//! (`ops::ggml_matmul`, `ggml_dequantize`, `ggml_quantize`) against an f64 product of the
//! dequantized weights within ggml-style error budgets. Every case runs; failures are
//! collected and reported together.

mod common;

use mlx_arm_core::buffer::Buffer;
use mlx_arm_core::error::ErrorKind;
use mlx_arm_core::quant::{ggml, GgmlType};
use mlx_arm_core::{ops, Array, DType, Error};
use serde_json::Value as J;

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

fn shape_of(v: &J) -> Vec<usize> {
    v["shape"].as_array().unwrap().iter().map(|d| d.as_u64().unwrap() as usize).collect()
}

/// Decodes `{"dtype", "shape", "hex"}` exactly.
fn arr(v: &J) -> Array {
    let dt = DType::from_name(v["dtype"].as_str().unwrap()).unwrap();
    Array::from_bytes(&unhex(v["hex"].as_str().unwrap()), &shape_of(v), dt).unwrap()
}

/// Element values as f64 (for budget comparisons).
fn vals(a: &Array) -> Vec<f64> {
    match a.dtype() {
        DType::Float32 => a.to_vec::<f32>().unwrap().into_iter().map(f64::from).collect(),
        DType::Float16 => a.to_vec::<half::f16>().unwrap().into_iter().map(|x| x.to_f64()).collect(),
        DType::Bfloat16 => a.to_vec::<half::bf16>().unwrap().into_iter().map(|x| x.to_f64()).collect(),
        DType::Float64 => a.to_vec::<f64>().unwrap(),
        d => panic!("vals of {d}"),
    }
}

fn input(c: &J, name: &str) -> Option<Array> {
    let v = &c["inputs"][name];
    if v.is_null() {
        return None;
    }
    let a = arr(v);
    Some(match c["views"][name].as_str() {
        Some("swap_last") => ops::swapaxes(&a, -1, -2).unwrap(),
        Some(o) => panic!("unknown view {o}"),
        None => a,
    })
}

fn opt_i(args: &J, k: &str) -> Option<i64> {
    args[k].as_i64()
}

fn run_case(c: &J) -> Result<Vec<Array>, Error> {
    let a = &c["args"];
    let mode = a["mode"].as_str().unwrap_or("affine");
    let (gs, bits) = (opt_i(a, "group_size"), opt_i(a, "bits"));
    let i = |n: &str| input(c, n);
    let dtype = |k: &str| a[k].as_str().map(|s| DType::from_name(s).unwrap());
    match c["op"].as_str().unwrap() {
        "quantize" => ops::quantize(&i("w").unwrap(), gs, bits, mode, i("global_scale").as_ref()),
        "dequantize" => ops::dequantize(
            &i("w").unwrap(),
            &i("scales").unwrap(),
            i("biases").as_ref(),
            gs,
            bits,
            mode,
            i("global_scale").as_ref(),
            dtype("dtype"),
        )
        .map(|x| vec![x]),
        "quantized_matmul" => ops::quantized_matmul(
            &i("x").unwrap(),
            &i("w").unwrap(),
            &i("scales").unwrap(),
            i("biases").as_ref(),
            a["transpose"].as_bool().unwrap_or(true),
            gs,
            bits,
            mode,
        )
        .map(|x| vec![x]),
        "gather_qmm" => ops::gather_qmm(
            &i("x").unwrap(),
            &i("w").unwrap(),
            &i("scales").unwrap(),
            i("biases").as_ref(),
            i("lhs_indices").as_ref(),
            i("rhs_indices").as_ref(),
            a["transpose"].as_bool().unwrap_or(true),
            gs,
            bits,
            mode,
            a["sorted_indices"].as_bool().unwrap_or(false),
        )
        .map(|x| vec![x]),
        "to_fp8" => ops::to_fp8(&i("x").unwrap()).map(|x| vec![x]),
        "from_fp8" => ops::from_fp8(&i("x").unwrap(), dtype("dtype").unwrap()).map(|x| vec![x]),
        o => panic!("unknown op {o}"),
    }
}

/// Unit roundoff of the half types (MLX accumulates qmm in them).
fn unit(dt: DType) -> f64 {
    match dt {
        DType::Float16 => 2f64.powi(-11),
        DType::Bfloat16 => 2f64.powi(-8),
        _ => 2f64.powi(-24),
    }
}

fn check(c: &J) -> Result<(), String> {
    let exp = &c["expect"];
    let got = run_case(c).and_then(|outs| {
        for o in &outs {
            o.eval()?;
        }
        Ok(outs)
    });
    if let Some(et) = exp["error"].as_str() {
        let e = match got {
            Ok(_) => return Err(format!("expected {et}, got a result")),
            Err(e) => e,
        };
        let kind = match et {
            "ValueError" => ErrorKind::InvalidArgument,
            "RuntimeError" => ErrorKind::Runtime,
            other => panic!("unmapped error {other}"),
        };
        if e.kind != kind {
            return Err(format!("kind {:?}, want {et} ({e})", e.kind));
        }
        let want = exp["message"].as_str().unwrap();
        if e.to_string() != want {
            return Err(format!("message\n   got  {e}\n   want {want}"));
        }
        return Ok(());
    }
    let outs = got.map_err(|e| format!("unexpected error {e}"))?;
    let want = exp["outputs"].as_array().unwrap();
    if outs.len() != want.len() {
        return Err(format!("{} outputs, want {}", outs.len(), want.len()));
    }
    for (k, (o, w)) in outs.iter().zip(want).enumerate() {
        let wd = DType::from_name(w["dtype"].as_str().unwrap()).unwrap();
        if o.dtype() != wd || o.shape() != shape_of(w).as_slice() {
            return Err(format!("output {k}: {:?} {}, want {:?} {wd}", o.shape(), o.dtype(), shape_of(w)));
        }
        let f32_qmm = affine_f32_absref(c);
        let exact = c["absref"].is_null() && f32_qmm.is_none();
        if let Some(r) = &f32_qmm {
            // f32 products run the SIMD kernels (cpu::affine, cpu::mlx_fp), which sum in another
            // order and apply scale (and bias) per group: their bound (tests/affine_qmm.rs) is
            // (K + 2·gs)·u·Σ|x|·(|ŵ| + |b|) beside MLX's own K·u·Σ|x·ŵ|, plus one rounding.
            let kdim = c["inputs"]["x"]["shape"].as_array().unwrap().last().unwrap().as_u64().unwrap() as f64;
            let gs = c["args"]["group_size"].as_u64().unwrap_or(64) as f64;
            let (g, e, r) = (vals(o), vals(&arr(w)), vals(r));
            let u = unit(DType::Float32);
            for (j, ((gv, ev), rv)) in g.iter().zip(&e).zip(&r).enumerate() {
                let budget = (2.0 * kdim + 2.0 * gs + 2.0) * u * rv + 2.0 * u * ev.abs();
                if !((gv - ev).abs() <= budget) {
                    return Err(format!("output {k}[{j}]: got {gv}, MLX {ev}, budget {budget}"));
                }
            }
        } else if exact {
            let bytes = o.to_bytes().unwrap();
            if bytes != unhex(w["hex"].as_str().unwrap()) {
                // Bit-identical, except that any NaN matches any NaN (payloads differ).
                let (g, e) = (vals_or_bytes(o), vals_or_bytes(&arr(w)));
                let same = |a: &f64, b: &f64| (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits();
                if let Some(first) = g.iter().zip(&e).position(|(a, b)| !same(a, b)) {
                    return Err(format!("output {k} not bit-identical at {first}: {} vs {}", g[first], e[first]));
                }
            }
        } else {
            // MLX accumulates in the half type: each output lies within the recursive
            // summation bound (K+2)·u·Σ|x·ŵ| of ours (plus a few subnormal steps).
            let kdim = c["inputs"]["x"]["shape"].as_array().unwrap().last().unwrap().as_u64().unwrap() as f64;
            let (g, e, r) = (vals(o), vals(&arr(w)), vals(&arr(&c["absref"])));
            let u = unit(o.dtype());
            for (j, ((gv, ev), rv)) in g.iter().zip(&e).zip(&r).enumerate() {
                let budget = (kdim + 2.0) * u * rv + (kdim + 2.0) * 1e-7;
                if !((gv - ev).abs() <= budget) {
                    return Err(format!("output {k}[{j}]: got {gv}, MLX {ev}, budget {budget}"));
                }
            }
        }
    }
    Ok(())
}

/// For a `quantized_matmul` / `gather_qmm` case with f32 output: `|x| @ (|ŵ| + |b|)ᵀ`
/// (or without the transpose), the magnitude the f32 error bound scales with; `ŵ` and the
/// per-element bias `b` come from `dequantize` (itself bit-identical with MLX, above).
fn affine_f32_absref(c: &J) -> Option<Array> {
    let op = c["op"].as_str()?;
    let a = &c["args"];
    let mode = a["mode"].as_str().unwrap_or("affine");
    let out = &c["expect"]["outputs"][0];
    if !matches!(op, "quantized_matmul" | "gather_qmm") || out["dtype"].as_str()? != "float32" {
        return None;
    }
    let (gs, bits) = (opt_i(a, "group_size"), opt_i(a, "bits"));
    let (w, s) = (input(c, "w")?, input(c, "scales")?);
    let f = Some(DType::Float32);
    // The fp modes (cpu::mlx_fp) have no bias: |ŵ| alone.
    let mag = if mode == "affine" {
        let b = input(c, "biases")?;
        let wd = ops::dequantize(&w, &s, Some(&b), gs, bits, "affine", None, f).ok()?;
        let bd = ops::dequantize(&w, &ops::zeros_like(&s).ok()?, Some(&b), gs, bits, "affine", None, f).ok()?;
        ops::add(&ops::abs(&wd).ok()?, &ops::abs(&bd).ok()?).ok()?
    } else {
        ops::abs(&ops::dequantize(&w, &s, None, gs, bits, mode, None, f).ok()?).ok()?
    };
    let mag = if a["transpose"].as_bool().unwrap_or(true) { ops::swapaxes(&mag, -1, -2).ok()? } else { mag };
    let xa = ops::abs(&ops::astype(&input(c, "x")?, DType::Float32).ok()?).ok()?;
    let r = if op == "gather_qmm" {
        ops::gather_mm(&xa, &mag, input(c, "lhs_indices").as_ref(), input(c, "rhs_indices").as_ref(), false)
    } else {
        ops::matmul(&xa, &mag)
    };
    let r = r.ok()?;
    r.eval().ok()?;
    Some(r)
}

fn vals_or_bytes(a: &Array) -> Vec<f64> {
    match a.dtype() {
        DType::Uint32 => a.to_vec::<u32>().unwrap().into_iter().map(f64::from).collect(),
        DType::Uint8 => a.to_vec::<u8>().unwrap().into_iter().map(f64::from).collect(),
        _ => vals(a),
    }
}

#[test]
fn array_api_matches_real_mlx() {
    let g = common::load("quantized_ops/quantized_ops.json");
    let cases = g["cases"].as_array().unwrap();
    let mut fails = Vec::new();
    for c in cases {
        if let Err(m) = check(c) {
            fails.push(format!("{}: {m}", c["name"].as_str().unwrap()));
        }
    }
    assert!(fails.is_empty(), "{} of {} cases failed:\n{}", fails.len(), cases.len(), fails.join("\n"));
}

#[test]
fn gather_qmm_index_out_of_range_is_an_error() {
    // MLX reads outside the weight batch here (undefined); we report an index error.
    let w = Array::from_slice(&vec![0.5f32; 3 * 4 * 64], &[3, 4, 64]).unwrap();
    let q = ops::quantize(&w, None, None, "affine", None).unwrap();
    let x = Array::from_slice(&vec![1f32; 64], &[1, 64]).unwrap();
    let idx = Array::from_slice(&[7u32], &[1]).unwrap();
    let r = ops::gather_qmm(&x, &q[0], &q[1], Some(&q[2]), None, Some(&idx), true, None, None, "affine", false)
        .and_then(|a| a.eval().map(|_| a));
    assert_eq!(r.unwrap_err().kind, ErrorKind::Index);
}

// ---- GGUF block weights --------------------------------------------------------------------

/// Deterministic pseudo-normal values (xorshift + Box-Muller-free sum of uniforms).
fn noise(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            let mut acc = 0f32;
            for _ in 0..4 {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                acc += (s >> 40) as f32 / (1u64 << 24) as f32 - 0.5;
            }
            acc * 1.7
        })
        .collect()
}

/// ggml's dot-product budget per type (test-quantize-fns.cpp), used on top of the analytic bound.
const TYPES: &[GgmlType] = &[
    GgmlType::F32,
    GgmlType::F16,
    GgmlType::BF16,
    GgmlType::Q4_0,
    GgmlType::Q4_1,
    GgmlType::Q5_0,
    GgmlType::Q5_1,
    GgmlType::Q8_0,
    GgmlType::Q2_K,
    GgmlType::Q3_K,
    GgmlType::Q4_K,
    GgmlType::Q5_K,
    GgmlType::Q6_K,
    GgmlType::TQ1_0,
    GgmlType::TQ2_0,
    GgmlType::MXFP4,
];

/// `ggml_matmul(x, W)` against `x · dequantize(W)ᵀ` in f64. The only approximation in ggml's
/// product is the activations' quantization to the partner type (Q8_0/Q8_1: d = amax/127, error
/// ≤ d/2 per element; Q8_K: ≤ amax/256; f16/bf16 partners: one rounding) plus f16 rounding of
/// d (and of Q8_1's s), and f32 summation; the budget adds exactly these terms per output.
fn ggml_case(ty: GgmlType, batch: &[usize], n: usize, blocks: usize, seed: u64) -> Result<(), String> {
    let k = ty.block_len().max(32) * blocks;
    let wv = noise(n * k, seed);
    let w = Array::from_slice(&wv, &[n, k]).unwrap();
    let wq = ops::ggml_quantize(&w, ty).map_err(|e| e.to_string())?;
    let wdq = ops::ggml_dequantize(&wq, ty, k).map_err(|e| e.to_string())?;
    let wd: Vec<f64> = wdq.to_vec::<f32>().unwrap().into_iter().map(f64::from).collect();
    let m: usize = batch.iter().product();
    let xv = noise(m * k, seed + 1);
    let mut xshape = batch.to_vec();
    xshape.push(k);
    let x = Array::from_slice(&xv, &xshape).unwrap();
    let out = ops::ggml_matmul(&x, &wq, ty, k).map_err(|e| e.to_string())?;
    let mut oshape = batch.to_vec();
    oshape.push(n);
    if out.shape() != oshape.as_slice() || out.dtype() != DType::Float32 {
        return Err(format!("shape {:?} {}", out.shape(), out.dtype()));
    }
    let got = out.to_vec::<f32>().map_err(|e| e.to_string())?;
    let act = ggml::vec_dot_type(ty).unwrap();
    let ab = act.block_len().max(1);
    for i in 0..m {
        let xr = &xv[i * k..(i + 1) * k];
        for j in 0..n {
            let wr = &wd[j * k..(j + 1) * k];
            let wmax = wr.iter().fold(0f64, |a, v| a.max(v.abs()));
            let mut exact = 0f64;
            let mut budget = 0f64;
            for (xb, wb) in xr.chunks(ab).zip(wr.chunks(ab)) {
                let amax = xb.iter().fold(0f64, |a, v| a.max(f64::from(*v).abs()));
                let step = match act {
                    GgmlType::Q8_0 | GgmlType::Q8_1 => amax / 254.0,
                    GgmlType::Q8_K => amax / 256.0,
                    GgmlType::F16 => 0.0,
                    GgmlType::BF16 => 0.0,
                    _ => 0.0,
                };
                for (xe, we) in xb.iter().zip(wb) {
                    let xe = f64::from(*xe);
                    exact += xe * we;
                    let rel = match act {
                        GgmlType::F16 => 2f64.powi(-11),
                        GgmlType::BF16 => 2f64.powi(-8),
                        GgmlType::F32 => 0.0,
                        _ => 2f64.powi(-10), // f16 d (and s) of the activation block
                    };
                    budget += (step * 1.0001 + xe.abs() * rel) * we.abs() + xe.abs() * rel * wmax;
                }
            }
            let sum_abs: f64 = xr.iter().zip(wr).map(|(a, b)| (f64::from(*a) * b).abs()).sum();
            budget += (k as f64 + 2.0) * 2f64.powi(-23) * sum_abs + 1e-6;
            let g = f64::from(got[i * n + j]);
            if !((g - exact).abs() <= budget) {
                return Err(format!("{}[{i},{j}]: got {g}, f64 {exact}, budget {budget}", ty.name()));
            }
            // ggml's own per-element budget (test-quantize-fns: dot error / n).
            let ggml_budget = match ty {
                GgmlType::Q2_K => 0.04,
                GgmlType::TQ1_0 | GgmlType::TQ2_0 => 0.15,
                _ => 0.02,
            };
            if (g - exact).abs() / k as f64 > ggml_budget {
                return Err(format!("{}[{i},{j}]: over ggml's dot budget", ty.name()));
            }
        }
    }
    // The array product equals the slice kernel on the same rows, whatever the thread split —
    // except for plain-float weights, which the op runs through the float GEMM (f32 sums in
    // its own order, held to the f64 budget above) rather than the slice kernel's scalar dot.
    if matches!(ty, GgmlType::F32 | GgmlType::F16 | GgmlType::BF16) {
        return Ok(());
    }
    let mut full = vec![0f32; m * n];
    ggml::qmatmul_rows(ty, &wq.to_bytes().unwrap(), n, k, &xv, m, &mut full, 0..n).unwrap();
    if full != got {
        return Err(format!("{}: differs from qmatmul_rows", ty.name()));
    }
    Ok(())
}

#[test]
fn ggml_matmul_matches_f64_reference_of_dequantized_weights() {
    let mut fails = Vec::new();
    let shapes: &[(&[usize], usize, usize)] = &[(&[1], 7, 1), (&[2, 3], 5, 2), (&[3], 33, 3), (&[], 9, 1)];
    for (t, &ty) in TYPES.iter().enumerate() {
        for (s, &(batch, n, blocks)) in shapes.iter().enumerate() {
            if let Err(e) = ggml_case(ty, batch, n, blocks, (t * 10 + s) as u64) {
                fails.push(format!("{} batch {batch:?} n {n}: {e}", ty.name()));
            }
        }
    }
    assert!(fails.is_empty(), "{}", fails.join("\n"));
}

#[test]
fn ggml_matmul_large_k_and_half_activations() {
    // k = 4096 (the benchmark's shape, smaller N) through the thread split; f16/bf16 x are
    // widened exactly, so their result is the f32 product of the widened x, rounded once.
    for ty in [GgmlType::Q4_0, GgmlType::Q4_K, GgmlType::Q6_K, GgmlType::TQ2_0, GgmlType::Q8_0] {
        ggml_case(ty, &[2], 64, 4096 / ty.block_len().max(32), 99).unwrap();
        let k = 512;
        let w = Array::from_slice(&noise(16 * k, 5), &[16, k]).unwrap();
        let wq = ops::ggml_quantize(&w, ty).unwrap();
        let x32 = Array::from_slice(&noise(3 * k, 6), &[3, k]).unwrap();
        for dt in [DType::Float16, DType::Bfloat16] {
            let xh = ops::astype(&x32, dt).unwrap();
            let got = ops::ggml_matmul(&xh, &wq, ty, k).unwrap();
            assert_eq!(got.dtype(), dt);
            let via32 = ops::ggml_matmul(&ops::astype(&xh, DType::Float32).unwrap(), &wq, ty, k).unwrap();
            let want = ops::astype(&via32, dt).unwrap();
            assert_eq!(got.to_bytes().unwrap(), want.to_bytes().unwrap(), "{} {dt}", ty.name());
        }
    }
}

#[test]
fn ggml_blocks_from_an_unaligned_external_buffer() {
    // A file's bytes back the weight array without a copy, at an odd offset.
    let (n, k, ty) = (6, 256, GgmlType::Q4_K);
    let w = Array::from_slice(&noise(n * k, 11), &[n, k]).unwrap();
    let blocks = ops::ggml_quantize(&w, ty).unwrap().to_bytes().unwrap();
    let mut file = vec![0xAAu8; 3];
    file.extend_from_slice(&blocks);
    let buf = Buffer::external(Box::new(file));
    let wa = Array::from_buffer(buf, 3, &[n, blocks.len() / n], DType::Uint8).unwrap();
    let mut want = vec![0f32; n * k];
    ggml::dequantize_row(ty, &blocks, &mut want).unwrap();
    assert_eq!(ops::ggml_dequantize(&wa, ty, k).unwrap().to_vec::<f32>().unwrap(), want);
    let x = Array::from_slice(&noise(2 * k, 12), &[2, k]).unwrap();
    let copy = Array::from_bytes(&blocks, &[n, blocks.len() / n], DType::Uint8).unwrap();
    assert_eq!(
        ops::ggml_matmul(&x, &wa, ty, k).unwrap().to_vec::<f32>().unwrap(),
        ops::ggml_matmul(&x, &copy, ty, k).unwrap().to_vec::<f32>().unwrap()
    );
}

#[test]
fn ggml_zero_rows_and_errors() {
    let (k, ty) = (64, GgmlType::Q8_0);
    let w = Array::from_slice(&noise(4 * k, 1), &[4, k]).unwrap();
    let wq = ops::ggml_quantize(&w, ty).unwrap();
    assert_eq!(wq.shape(), &[4, 68]);
    let x0 = Array::from_slice::<f32>(&[], &[0, k]).unwrap();
    let o = ops::ggml_matmul(&x0, &wq, ty, k).unwrap();
    assert_eq!(o.shape(), &[0, 4]);
    o.eval().unwrap();
    let x = Array::from_slice(&noise(k, 2), &[k]).unwrap();
    let kind = |r: Result<Array, Error>| r.and_then(|a| a.eval().map(|_| a)).unwrap_err().kind;
    use ErrorKind::*;
    // Wrong dtype, wrong row bytes, K not a whole number of blocks, K mismatch, int x,
    // activation-only and unimplemented types, a 3-D block array.
    assert_eq!(kind(ops::ggml_matmul(&x, &ops::astype(&wq, DType::Int8).unwrap(), ty, k)), InvalidArgument);
    assert_eq!(kind(ops::ggml_matmul(&x, &wq, GgmlType::Q4_0, k)), InvalidArgument);
    assert_eq!(kind(ops::ggml_matmul(&x, &wq, ty, 48)), InvalidArgument);
    assert_eq!(kind(ops::ggml_matmul(&Array::from_slice(&noise(32, 2), &[32]).unwrap(), &wq, ty, k)), InvalidArgument);
    assert_eq!(kind(ops::ggml_matmul(&ops::astype(&x, DType::Int32).unwrap(), &wq, ty, k)), InvalidArgument);
    let q8k = ops::ggml_quantize(&Array::from_slice(&noise(256, 3), &[1, 256]).unwrap(), GgmlType::Q8_K).unwrap();
    assert_eq!(kind(ops::ggml_matmul(&Array::from_slice(&noise(256, 3), &[256]).unwrap(), &q8k, GgmlType::Q8_K, 256)), Unsupported);
    assert_eq!(kind(ops::ggml_dequantize(&q8k, GgmlType::IQ2_XXS, 256)), Unsupported);
    assert_eq!(kind(ops::ggml_dequantize(&ops::reshape(&wq, &[2, 2, 68]).unwrap(), ty, k)), InvalidArgument);
    assert_eq!(kind(ops::ggml_quantize(&Array::from_slice(&noise(40, 3), &[1, 40]).unwrap(), ty)), InvalidArgument);
}

#[test]
fn ggml_matmul_many_equals_each_ggml_matmul() {
    // The oracle is `ggml_matmul` of each weight, bit for bit: the fused op quantizes x once
    // per activation type and shares one parallel pass, but every output is the same dot
    // product. Mixed types (Q8_0 partners, Q8_1, Q8_K), row counts that split tasks across
    // weight boundaries, GEMV and GEMM rows, f32 and half activations.
    let k = 256;
    let specs = [(GgmlType::Q4_1, 97), (GgmlType::Q4_K, 33), (GgmlType::Q8_0, 33), (GgmlType::Q6_K, 130), (GgmlType::Q4_0, 5)];
    let ws: Vec<(Array, GgmlType)> = specs
        .iter()
        .enumerate()
        .map(|(i, &(ty, n))| {
            let w = Array::from_slice(&noise(n * k, 40 + i as u64), &[n, k]).unwrap();
            (ops::ggml_quantize(&w, ty).unwrap(), ty)
        })
        .collect();
    let pairs: Vec<(&Array, GgmlType)> = ws.iter().map(|(w, ty)| (w, *ty)).collect();
    for (shape, dt) in [(vec![1usize, 1, k], DType::Float32), (vec![3, k], DType::Float32), (vec![1, k], DType::Float16), (vec![2, 1, k], DType::Bfloat16)] {
        let n: usize = shape.iter().product();
        let x = ops::astype(&Array::from_slice(&noise(n, 7), &shape).unwrap(), dt).unwrap();
        let many = ops::ggml_matmul_many(&x, &pairs, k).unwrap();
        assert_eq!(many.len(), ws.len());
        for (got, (w, ty)) in many.iter().zip(&ws) {
            let want = ops::ggml_matmul(&x, w, *ty, k).unwrap();
            assert_eq!(got.shape(), want.shape());
            assert_eq!(got.dtype(), dt);
            assert_eq!(got.to_bytes().unwrap(), want.to_bytes().unwrap(), "{} x {shape:?} {dt}", ty.name());
        }
    }
    // Errors: no weights, blocks that are not the named type, a K the weights do not have.
    let x = Array::from_slice(&noise(k, 2), &[k]).unwrap();
    assert_eq!(ops::ggml_matmul_many(&x, &[], k).unwrap_err().kind, ErrorKind::InvalidArgument);
    assert_eq!(ops::ggml_matmul_many(&x, &[pairs[0], (pairs[1].0, GgmlType::Q8_0)], k).unwrap_err().kind, ErrorKind::InvalidArgument);
    assert_eq!(ops::ggml_matmul_many(&x, &pairs[..2], 128).unwrap_err().kind, ErrorKind::InvalidArgument);
}
