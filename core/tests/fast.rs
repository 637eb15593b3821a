//! mx.fast (rms_norm, layer_norm, rope, scaled_dot_product_attention): the fused kernels and
//! their composed fallbacks, each against real MLX 0.32 goldens
//! (core/tests/data/fast/gen_fast.py), and fused against fallback with a tolerance of about
//! one rounding step of the dtype. Failures are collected and reported together.

mod common;

use common::{array, load, values};
use mlx_arm_core::error::ErrorKind;
use mlx_arm_core::ops::fast::{self, RopeOffset, SdpaMask};
use mlx_arm_core::{Array, DType, Result};
use mlx_arm_core::ops;
use serde_json::Value as J;
#[path = "common/levels.rs"]
mod levels;

fn opt<'a>(x: &'a [Array], args: &J, k: &str) -> Option<&'a Array> {
    args[k].as_u64().map(|i| &x[i as usize])
}

fn run_case(op: &str, x: &[Array], args: &J, fused: bool) -> Result<Array> {
    let eps = args["eps"].as_f64().unwrap_or(0.0) as f32;
    match op {
        "rms_norm" => {
            let w = opt(x, args, "weight");
            if fused { fast::rms_norm(&x[0], w, eps) } else { fast::rms_norm_fallback(&x[0], w, eps) }
        }
        "layer_norm" => {
            let (w, b) = (opt(x, args, "weight"), opt(x, args, "bias"));
            if fused { fast::layer_norm(&x[0], w, b, eps) } else { fast::layer_norm_fallback(&x[0], w, b, eps) }
        }
        "rope" => {
            let offset = match &args["offset"] {
                J::Number(n) => RopeOffset::Int(n.as_i64().unwrap() as i32),
                o => RopeOffset::Array(&x[o["input"].as_u64().unwrap() as usize]),
            };
            let dims = args["dims"].as_i64().unwrap() as isize;
            let trad = args["traditional"].as_bool().unwrap();
            let base = args["base"].as_f64().map(|b| b as f32);
            let scale = args["scale"].as_f64().unwrap() as f32;
            let freqs = opt(x, args, "freqs");
            if fused {
                fast::rope(&x[0], dims, trad, base, scale, offset, freqs)
            } else {
                fast::rope_fallback(&x[0], dims, trad, base, scale, offset, freqs)
            }
        }
        "sdpa" => {
            let mask = match &args["mask"] {
                J::Null => SdpaMask::None,
                J::String(s) if s == "causal" => SdpaMask::Causal,
                J::Number(n) => SdpaMask::Array(&x[n.as_u64().unwrap() as usize]),
                o => panic!("bad mask {o}"),
            };
            let scale = args["scale"].as_f64().unwrap() as f32;
            if fused {
                fast::scaled_dot_product_attention(&x[0], &x[1], &x[2], scale, mask)
            } else {
                fast::scaled_dot_product_attention_fallback(&x[0], &x[1], &x[2], scale, mask)
            }
        }
        o => panic!("unknown op {o}"),
    }
}

/// Against MLX: summation order differs, half types may land one rounding step apart.
fn golden_tol(dtype: &str) -> (f64, f64) {
    match dtype {
        "float16" => (2e-3, 2e-3),
        "bfloat16" => (1.6e-2, 1.6e-2),
        _ => (1e-5, 1e-5),
    }
}

fn compare(what: &str, got: &Array, want: &Array, rtol: f64, atol: f64) -> std::result::Result<(), String> {
    if got.dtype() != want.dtype() || got.shape() != want.shape() {
        return Err(format!("{what}: {:?} {} vs {:?} {}", got.shape(), got.dtype(), want.shape(), want.dtype()));
    }
    for (i, (x, y)) in values(got).iter().zip(values(want).iter()).enumerate() {
        let ok = (x.0.is_nan() && y.0.is_nan()) || x.0 == y.0 || (x.0 - y.0).abs() <= atol + rtol * y.0.abs();
        if !ok {
            return Err(format!("{what}: element {i}: got {}, want {}", x.0, y.0));
        }
    }
    Ok(())
}

#[test]
fn fast_ops_match_mlx_and_their_fallbacks() {
    let golden = load("fast/fast.json");
    let cases = golden["cases"].as_array().unwrap();
    let mut failures = Vec::new();
    for c in cases {
        let name = c["name"].as_str().unwrap();
        let op = c["op"].as_str().unwrap();
        let x: Vec<Array> = c["inputs"].as_array().unwrap().iter().map(array).collect();
        let eval = |fused| run_case(op, &x, &c["args"], fused).and_then(|a| a.eval().map(|_| a));
        let (fused, fallback) = (eval(true), eval(false));
        match c.get("error") {
            Some(want) => {
                let kind = if want == "IndexError" { ErrorKind::Index } else { ErrorKind::InvalidArgument };
                for (which, r) in [("fused", &fused), ("fallback", &fallback)] {
                    match r {
                        Ok(_) => failures.push(format!("{name} ({which}): expected {want}")),
                        Err(e) if e.kind != kind => failures.push(format!("{name} ({which}): {e} is not {want}")),
                        Err(_) => {}
                    }
                }
            }
            None => {
                let want = array(&c["output"]);
                let (rtol, atol) = golden_tol(want.dtype().name());
                match (&fused, &fallback) {
                    (Ok(f), Ok(b)) => {
                        for r in [
                            compare(&format!("{name} fused vs mlx"), f, &want, rtol, atol),
                            compare(&format!("{name} fallback vs mlx"), b, &want, rtol, atol),
                            // About one rounding step of the dtype: the kernels round where the fallback does.
                            compare(&format!("{name} fused vs fallback"), f, b, rtol, atol),
                        ] {
                            if let Err(e) = r {
                                failures.push(e);
                            }
                        }
                    }
                    (f, b) => failures.push(format!("{name}: fused {:?} / fallback {:?}", f.as_ref().err(), b.as_ref().err())),
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} failures over {} cases:\n{}", failures.len(), cases.len(), failures.join("\n"));
}

/// On f32, fused and fallback agree to a few ulps on a larger attention problem (rows of 128
/// keys, GQA, causal) where summation order is the only difference.
#[test]
fn fused_attention_tracks_fallback_on_larger_f32() {
    let (b, hq, hkv, l, s, d) = (1, 4, 2, 16, 128, 32);
    let mk = |n: usize, k: usize| -> Vec<f32> { (0..n).map(|i| (((i * k) % 97) as f32 / 97.0 - 0.5) * 2.0).collect() };
    let q = Array::from_slice(&mk(b * hq * l * d, 7), &[b, hq, l, d]).unwrap();
    let k = Array::from_slice(&mk(b * hkv * s * d, 13), &[b, hkv, s, d]).unwrap();
    let v = Array::from_slice(&mk(b * hkv * s * d, 29), &[b, hkv, s, d]).unwrap();
    let scale = 1.0 / (d as f32).sqrt();
    let f = fast::scaled_dot_product_attention(&q, &k, &v, scale, SdpaMask::Causal).unwrap();
    let g = fast::scaled_dot_product_attention_fallback(&q, &k, &v, scale, SdpaMask::Causal).unwrap();
    compare("large sdpa", &f, &g, 1e-5, 1e-6).unwrap();
}

/// Rope's cos/sin table is the `libm` crate's in every build (not glibc's with `std`), so the
/// hosted and bare-metal builds of a language model agree bit for bit
/// (examples/firmware-aarch64-lm). With x = 1 in the first half of each row and 0 in the
/// second, the rotation writes exactly cos θ and sin θ; θ = position · e^(−j·ln(base)/half),
/// recomputed here with `libm`. glibc's expf/cosf/sinf round a few of these 8192 values
/// differently, so the check fails if the table goes back to the platform's math.
#[test]
fn rope_table_is_the_libm_crates_in_every_build() {
    let (t, d, base) = (128usize, 128usize, 100_000f32);
    let half = d / 2;
    let row: Vec<f32> = (0..d).map(|i| if i < half { 1.0 } else { 0.0 }).collect();
    let x = Array::from_slice(&row.repeat(t), &[1, 1, t, d]).unwrap();
    let got = fast::rope(&x, d as isize, false, Some(base), 1.0, RopeOffset::Int(0), None).unwrap().to_vec::<f32>().unwrap();
    let c = libm::logf(base) / half as f32;
    let mut differ = Vec::new();
    for p in 0..t {
        for j in 0..half {
            let theta = p as f32 * libm::expf(-(j as f32) * c);
            let (cos, sin) = (got[p * d + j], got[p * d + half + j]);
            if cos.to_bits() != libm::cosf(theta).to_bits() || sin.to_bits() != libm::sinf(theta).to_bits() {
                differ.push((p, j));
            }
        }
    }
    assert!(differ.is_empty(), "{} of {} (position, frequency) pairs differ from libm's, first {:?}", differ.len(), t * half, &differ[..differ.len().min(5)]);
}

/// Keys and values that are windows of a larger cache (heads a capacity apart, the decode
/// case) or transposed views give exactly the result of the same data made contiguous: the
/// kernel reads each head's rows in place or copies them, with the same arithmetic. In f32,
/// f16 and bf16 (whose kernel widens one K/V head per task), with grouped-query heads.
#[test]
fn attention_over_cache_windows_and_transposed_views() {
    let (b, hq, hkv, cap, s, d) = (2, 6, 2, 40, 25, 32);
    let mk = |n: usize, k: usize| -> Vec<f32> { (0..n).map(|i| (((i * k) % 89) as f32 / 89.0 - 0.5) * 2.0).collect() };
    for (dtype, tol) in [(DType::Float32, 1e-5), (DType::Float16, 4e-3), (DType::Bfloat16, 3e-2)] {
        let cast = |a: Array| ops::astype(&a, dtype).unwrap();
        let k_cache = cast(Array::from_slice(&mk(b * hkv * cap * d, 13), &[b, hkv, cap, d]).unwrap());
        let v_cache = cast(Array::from_slice(&mk(b * hkv * cap * d, 31), &[b, hkv, cap, d]).unwrap());
        let window = |a: &Array| ops::slice(a, &[0, 0, 0, 0], &[b as isize, hkv as isize, s as isize, d as isize], &[1, 1, 1, 1]).unwrap();
        let (k, v) = (window(&k_cache), window(&v_cache));
        // The same keys stored (batch, row, head, width) and viewed transposed: not dense per head.
        let k_t = ops::transpose(&ops::contiguous(&ops::transpose(&k, Some(&[0, 2, 1, 3])).unwrap()).unwrap(), Some(&[0, 2, 1, 3])).unwrap();
        let (kc, vc) = (ops::contiguous(&k).unwrap(), ops::contiguous(&v).unwrap());
        let scale = 1.0 / (d as f32).sqrt();
        let f32s = |a: &Array| ops::astype(a, DType::Float32).unwrap().to_vec::<f32>().unwrap();
        for l in [1usize, 3] {
            let q = cast(Array::from_slice(&mk(b * hq * l * d, 7), &[b, hq, l, d]).unwrap());
            let mask = if l > 1 { SdpaMask::Causal } else { SdpaMask::None };
            let dense = f32s(&fast::scaled_dot_product_attention(&q, &kc, &vc, scale, mask_of(&mask)).unwrap());
            for (name, kk) in [("cache window", &k), ("transposed view", &k_t)] {
                let got = f32s(&fast::scaled_dot_product_attention(&q, kk, &v, scale, mask_of(&mask)).unwrap());
                assert!(got.iter().zip(&dense).all(|(a, b)| a.to_bits() == b.to_bits()), "{dtype:?} {name}, {l} queries: differs from contiguous inputs");
            }
            let fallback = ops::astype(&fast::scaled_dot_product_attention_fallback(&q, &kc, &vc, scale, mask_of(&mask)).unwrap(), DType::Float32).unwrap();
            compare(&format!("{dtype:?} cache window vs fallback"), &Array::from_slice(&dense, &[b, hq, l, d]).unwrap(), &fallback, tol, tol).unwrap();
        }
    }
}

fn mask_of<'a>(m: &SdpaMask<'a>) -> SdpaMask<'a> {
    match m {
        SdpaMask::Causal => SdpaMask::Causal,
        _ => SdpaMask::None,
    }
}

/// The cos/sin table is kept between calls for the last arguments: a run of calls that change
/// one thing at a time (position, base, scale, dtype, given frequencies, per-batch offsets,
/// length) each matches the unfused composition, so no call reuses another's table.
#[test]
fn rope_calls_in_a_row_never_reuse_a_stale_table() {
    let x = Array::from_slice(&(0..2 * 3 * 2 * 8).map(|i| ((i * 7 % 23) as f32 - 11.0) * 0.21).collect::<Vec<_>>(), &[2, 3, 2, 8]).unwrap();
    let x1 = ops::slice(&x, &[0, 0, 0, 0], &[2, 3, 1, 8], &[1, 1, 1, 1]).unwrap();
    let x16 = ops::astype(&x1, DType::Float16).unwrap();
    let freqs = Array::from_slice(&[1.0f32, 3.0, 9.0, 27.0], &[4]).unwrap();
    let freqs2 = Array::from_slice(&[1.0f32, 2.0, 9.0, 27.0], &[4]).unwrap();
    let ofs = Array::from_slice(&[2i32, 7], &[2]).unwrap();
    let ofs2 = Array::from_slice(&[7i32, 2], &[2]).unwrap();
    type Case<'a> = (&'a Array, Option<f32>, f32, RopeOffset<'a>, Option<&'a Array>);
    let cases: Vec<Case> = vec![
        (&x1, Some(10000.0), 1.0, RopeOffset::Int(3), None),
        (&x1, Some(10000.0), 1.0, RopeOffset::Int(4), None),
        (&x1, Some(10000.0), 1.0, RopeOffset::Int(3), None),
        (&x1, Some(500.0), 1.0, RopeOffset::Int(3), None),
        (&x1, Some(500.0), 0.5, RopeOffset::Int(3), None),
        (&x16, Some(500.0), 0.5, RopeOffset::Int(3), None),
        (&x1, None, 1.0, RopeOffset::Int(3), Some(&freqs)),
        (&x1, None, 1.0, RopeOffset::Int(3), Some(&freqs2)),
        (&x1, Some(10000.0), 1.0, RopeOffset::Array(&ofs), None),
        (&x1, Some(10000.0), 1.0, RopeOffset::Array(&ofs2), None),
        (&x, Some(10000.0), 1.0, RopeOffset::Array(&ofs2), None),
        (&x, Some(10000.0), 1.0, RopeOffset::Int(3), None),
    ];
    for (i, (input, base, scale, offset, f)) in cases.into_iter().enumerate() {
        let again = match &offset {
            RopeOffset::Int(v) => RopeOffset::Int(*v),
            RopeOffset::Array(a) => RopeOffset::Array(a),
        };
        let got = fast::rope(input, 8, false, base, scale, again, f).unwrap();
        let want = fast::rope_fallback(input, 8, false, base, scale, offset, f).unwrap();
        let (got, want) = (ops::astype(&got, DType::Float32).unwrap(), ops::astype(&want, DType::Float32).unwrap());
        let tol = if input.dtype() == DType::Float16 { 1e-2 } else { 1e-5 };
        for (g, w) in got.to_vec::<f32>().unwrap().iter().zip(want.to_vec::<f32>().unwrap()) {
            assert!((g - w).abs() <= tol * (1.0 + w.abs()), "case {i}: {g} vs {w}");
        }
    }
}

/// Gradients of the norms called without weight (and bias): the op stores the absent ones as
/// 0-d constants, which the vjp rule must not hand to the fallback as given (that raised
/// "(*weight) must have 1 dimension"). Checked against the same expressions written with
/// ordinary ops, each differentiated by its own rules.
#[test]
fn norm_gradients_without_weight_or_bias() {
    use mlx_arm_core::transforms::grad;
    let eps = 1e-5f32;
    let vals: Vec<f32> = (0..24).map(|i| ((i * 7 % 11) as f32 - 5.0) / 3.0).collect();
    let x = Array::from_slice(&vals, &[2, 3, 4]).unwrap();
    let y = Array::from_slice(&vals.iter().rev().copied().collect::<Vec<_>>(), &[2, 3, 4]).unwrap();
    let weighted_sum = |out: Array| ops::sum(&ops::multiply(&out, &y)?, None, false);
    let rms = |v: &[Array]| Ok(vec![weighted_sum(fast::rms_norm(&v[0], None, eps)?)?]);
    let rms_ops = |v: &[Array]| {
        let ms = ops::mean(&ops::square(&v[0])?, Some(&[-1]), true)?;
        Ok(vec![weighted_sum(ops::multiply(&v[0], &ops::rsqrt(&ops::add(&ms, &Array::scalar(eps)?)?)?)?)?])
    };
    let ln = |v: &[Array]| Ok(vec![weighted_sum(fast::layer_norm(&v[0], None, None, eps)?)?]);
    let ln_ops = |v: &[Array]| {
        let c = ops::subtract(&v[0], &ops::mean(&v[0], Some(&[-1]), true)?)?;
        let var = ops::mean(&ops::square(&c)?, Some(&[-1]), true)?;
        Ok(vec![weighted_sum(ops::multiply(&c, &ops::rsqrt(&ops::add(&var, &Array::scalar(eps)?)?)?)?)?])
    };
    type F<'a> = &'a dyn Fn(&[Array]) -> Result<Vec<Array>>;
    let cases: [(&str, F, F); 2] = [("rms_norm", &rms, &rms_ops), ("layer_norm", &ln, &ln_ops)];
    for (name, fused, composed) in cases {
        let got = grad(fused, core::slice::from_ref(&x), &[0]).unwrap_or_else(|e| panic!("{name}: {e}"));
        let want = grad(composed, core::slice::from_ref(&x), &[0]).unwrap();
        let (g, w) = (got[0].to_vec::<f32>().unwrap(), want[0].to_vec::<f32>().unwrap());
        for (a, b) in g.iter().zip(&w) {
            assert!((a - b).abs() <= 1e-5 * (1.0 + b.abs()), "{name}: {a} vs {b}");
        }
    }
}

/// `mx.softmax` over the last axis of float32 rows is one fused primitive on the CPU: at every
/// ISA level and thread count it tracks an f64 softmax within a few f32 roundings (more where
/// exp amplifies the rounding of a large `x − max`), its
/// composed fallback likewise, non-finite rows as the fallback (NaN anywhere → a NaN row, a
/// row of −inf → NaN), and strided inputs read right.
#[test]
fn fused_softmax_tracks_f64_and_its_fallback_at_every_level() {
    use mlx_arm_core::cpu::isa;
    use mlx_arm_core::parallel::set_num_threads;
    let mk = |n: usize, k: usize| -> Vec<f32> { (0..n).map(|i| (((i * k) % 101) as f32 / 101.0 - 0.5) * 24.0).collect() };
    // Rows shorter than, equal to and past every vector width, with tails; many rows (threads).
    let shapes: &[&[usize]] = &[&[1], &[3, 5], &[4, 16], &[7, 33], &[2, 3, 1000], &[300, 17]];
    let mut failures = vec![];
    for level in levels::levels() {
        isa::set_isa(level).unwrap();
        for threads in [1usize, 3] {
            set_num_threads(threads);
            for (si, shape) in shapes.iter().enumerate() {
                let n: usize = shape.iter().product();
                let xs = mk(n, 7 + si);
                let x = Array::from_slice(&xs, shape).unwrap();
                let got = ops::softmax(&x, Some(&[-1]), false).unwrap().to_vec::<f32>().unwrap();
                let fallback = fast::softmax_rows_fallback(&x).unwrap().to_vec::<f32>().unwrap();
                let d = *shape.last().unwrap();
                for (r, row) in xs.chunks(d).enumerate() {
                    let m = row.iter().fold(f64::NEG_INFINITY, |a, &b| a.max(b as f64));
                    let total: f64 = row.iter().map(|&v| (v as f64 - m).exp()).sum();
                    for (j, &v) in row.iter().enumerate() {
                        let want = (v as f64 - m).exp() / total;
                        for (what, y) in [("fused", got[r * d + j]), ("fallback", fallback[r * d + j])] {
                            // exp turns the rounding of x − max (|x − max|·ε) into relative error.
                            let bound = (8.0 + (v as f64 - m).abs()) * f32::EPSILON as f64 * want + 1e-30;
                            if (y as f64 - want).abs() > bound {
                                failures.push(format!("{} {threads}t {shape:?} {what} [{r},{j}]: {y} vs {want}", level.name()));
                            }
                        }
                    }
                }
            }
            // Non-finite rows: the fused kernel gives what the composed ops give.
            let (inf, nan) = (f32::INFINITY, f32::NAN);
            let rows = [1.0, nan, 2.0, 0.5, -inf, -inf, -inf, -inf, inf, 1.0, -inf, 0.0, -inf, 3.0, -inf, 2.0];
            let x = Array::from_slice(&rows, &[4, 4]).unwrap();
            let got = ops::softmax(&x, Some(&[-1]), false).unwrap().to_vec::<f32>().unwrap();
            let want = fast::softmax_rows_fallback(&x).unwrap().to_vec::<f32>().unwrap();
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                if g.is_nan() != w.is_nan() || (!g.is_nan() && (g - w).abs() > 4.0 * f32::EPSILON * w.abs()) {
                    failures.push(format!("{} {threads}t non-finite [{i}]: {g} vs fallback {w}", level.name()));
                }
            }
            // A transposed view: rows read through strides.
            let x = Array::from_slice(&mk(6 * 9, 5), &[6, 9]).unwrap();
            let t = ops::transpose(&x, None).unwrap();
            let got = ops::softmax(&t, Some(&[-1]), false).unwrap().to_vec::<f32>().unwrap();
            let want = fast::softmax_rows_fallback(&ops::contiguous(&t).unwrap()).unwrap().to_vec::<f32>().unwrap();
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                if (g - w).abs() > 8.0 * f32::EPSILON * w.abs() + 1e-30 {
                    failures.push(format!("{} {threads}t transposed [{i}]: {g} vs {w}", level.name()));
                }
            }
        }
    }
    set_num_threads(0);
    isa::set_isa(*isa::available().last().unwrap()).unwrap();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The fused softmax is differentiable and vmappable like the ops it replaces: its gradient
/// equals the fallback's, and vmap over a leading axis equals the unbatched rows.
#[test]
fn fused_softmax_gradient_and_vmap() {
    use mlx_arm_core::transforms;
    let xs: Vec<f32> = (0..24).map(|i| ((i * 5 % 11) as f32 - 5.0) * 0.7).collect();
    let x = Array::from_slice(&xs, &[2, 3, 4]).unwrap();
    let w = Array::from_slice(&(0..24).map(|i| (i % 7) as f32 - 3.0).collect::<Vec<_>>(), &[2, 3, 4]).unwrap();
    let loss = |f: fn(&Array) -> Result<Array>| {
        let w = w.clone();
        move |a: &[Array]| -> Result<Vec<Array>> { Ok(vec![ops::sum(&ops::multiply(&f(&a[0])?, &w)?, None, false)?]) }
    };
    let fused = |a: &Array| ops::softmax(a, Some(&[-1]), false);
    let g1 = transforms::grad(&loss(fused), &[x.clone()], &[0]).unwrap();
    let g2 = transforms::grad(&loss(fast::softmax_rows_fallback), &[x.clone()], &[0]).unwrap();
    compare("softmax grad", &g1[0], &g2[0], 1e-6, 1e-7).unwrap();
    let batched = transforms::vmap(&|a: &[Array]| Ok(vec![ops::softmax(&a[0], Some(&[-1]), false)?]), &[x.clone()], &[1], &[0]).unwrap();
    let want = ops::swapaxes(&ops::softmax(&x, Some(&[-1]), false).unwrap(), 0, 1).unwrap();
    compare("softmax vmap", &batched[0], &want, 0.0, 0.0).unwrap();
}
