//! `vmap` batching rules against the unbatched computation: for each rule, the vectorized
//! function must equal the function applied to every example in turn (stacked), which is
//! the definition of vmap (real MLX agrees: tests/python/test_grad.py holds its goldens).

use mlx_arm_core::ops::{self, Index};
use mlx_arm_core::transforms::vmap;
use mlx_arm_core::{Array, DType, Result};

#[path = "common/rng.rs"]
mod rng;

fn f32s(a: &Array) -> Vec<f32> {
    ops::astype(a, DType::Float32).unwrap().to_vec::<f32>().unwrap()
}

/// `f` vmapped over axis `axes[i]` of input `i` (-1: not mapped) equals `f` on each example.
fn check(name: &str, f: &dyn Fn(&[Array]) -> Result<Vec<Array>>, inputs: &[Array], axes: &[i32]) {
    let got = vmap(f, inputs, axes, &[]).unwrap_or_else(|e| panic!("{name}: {e}"));
    let n = inputs.iter().zip(axes).find(|(_, &a)| a >= 0).map(|(x, &a)| x.shape()[a as usize]).unwrap();
    for i in 0..n {
        let ex: Vec<Array> = inputs
            .iter()
            .zip(axes)
            .map(|(x, &a)| if a < 0 { x.clone() } else { ops::take(x, &Array::scalar(i as i32).unwrap(), Some(a as isize)).unwrap() })
            .collect();
        let want = f(&ex).unwrap();
        for (k, (g, w)) in got.iter().zip(&want).enumerate() {
            let gi = ops::take(g, &Array::scalar(i as i32).unwrap(), Some(0)).unwrap();
            assert_eq!(gi.shape(), w.shape(), "{name}: output {k} example {i} shape");
            assert_eq!(gi.dtype(), w.dtype(), "{name}: output {k} dtype");
            let (a, b) = (f32s(&gi), f32s(w));
            for (j, (x, y)) in a.iter().zip(&b).enumerate() {
                assert!((x - y).abs() <= 1e-4 * (1.0 + y.abs()), "{name}: output {k} example {i} [{j}]: {x} vs {y}");
            }
        }
    }
}

fn arr(shape: &[usize], seed: u64) -> Array {
    Array::from_slice(&rng::Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1).row(shape.iter().product(), 2.0), shape).unwrap()
}

#[test]
fn sort_family() {
    let x = arr(&[3, 4, 5], 1);
    check("sort", &|v| Ok(vec![ops::sort(&v[0], Some(-1))?]), &[x.clone()], &[0]);
    check("sort axis 0 of mapped axis 1", &|v| Ok(vec![ops::sort(&v[0], Some(0))?]), &[x.clone()], &[1]);
    check("argsort", &|v| Ok(vec![ops::argsort(&v[0], Some(0))?]), &[x.clone()], &[2]);
    check("partition", &|v| Ok(vec![ops::partition(&v[0], 1, Some(1))?]), &[x.clone()], &[0]);
    check("argpartition", &|v| Ok(vec![ops::argpartition(&v[0], 2, Some(-1))?]), &[x.clone()], &[1]);
    check("topk", &|v| Ok(vec![ops::topk(&v[0], 2, Some(-1))?]), &[x], &[0]);
}

#[test]
fn scatter_family() {
    let a = arr(&[3, 4, 5], 2);
    let u = arr(&[3, 2, 5], 3);
    let idx = Array::from_slice(&[3i32, 1], &[2]).unwrap();
    let bidx = Array::from_slice(&[3i32, 1, 0, 0, 2, 2], &[3, 2]).unwrap();
    let at = |i: &Array| vec![Index::Array(i.clone())];
    check("at set", &|v| Ok(vec![ops::index_update(&v[0], &at(&idx), &v[1])?]), &[a.clone(), u.clone()], &[0, 0]);
    check("at add, unmapped updates", &|v| Ok(vec![ops::at_add(&v[0], &at(&idx), &v[1])?]), &[a.clone(), arr(&[2, 5], 4)], &[0, -1]);
    check("at maximum, mapped indices", &|v| Ok(vec![ops::at_maximum(&v[0], &at(&v[2]), &v[1])?]), &[a.clone(), u.clone(), bidx.clone()], &[0, 0, 0]);
    check("at multiply, only indices mapped", &|v| Ok(vec![ops::at_multiply(&v[0], &at(&v[1]), &Array::scalar(2.0f32)?)?]), &[arr(&[4, 5], 5), bidx.clone()], &[-1, 0]);
    let pidx = Array::from_slice(&[1i32, 0, 3, 2, 4, 4], &[3, 1, 2]).unwrap();
    check(
        "put_along_axis",
        &|v| Ok(vec![ops::put_along_axis(&v[0], &v[1], &v[2], Some(1))?]),
        &[arr(&[3, 2, 5], 6), pidx, arr(&[3, 2, 2], 7)],
        &[0, 0, 0],
    );
    // Mapped along a non-leading axis of the array.
    let idx2 = Array::from_slice(&[2i32, 0], &[2]).unwrap();
    check("at set axis 2", &|v| Ok(vec![ops::index_update(&v[0], &at(&idx2), &v[1])?]), &[a, arr(&[2, 4, 5], 8)], &[2, 2]);
}

#[test]
fn decompositions() {
    // Well-conditioned matrices: identity plus a small random part.
    let eye = ops::broadcast_to(&ops::eye(4, None, 0, DType::Float32).unwrap(), &[3, 4, 4]).unwrap();
    let m = ops::add(&ops::multiply(&arr(&[3, 4, 4], 9), &Array::scalar(0.2f32).unwrap()).unwrap(), &eye).unwrap();
    check("inv", &|v| Ok(vec![ops::inv(&v[0])?]), &[m.clone()], &[0]);
    check("svd values", &|v| Ok(vec![ops::svd(&v[0], false)?.remove(0)]), &[m.clone()], &[0]);
    // Singular vectors are unique up to sign: compare the reconstruction u·diag(s)·vt.
    check(
        "svd",
        &|v| {
            let usv = ops::svd(&v[0], true)?;
            let us = ops::multiply(&usv[0], &ops::expand_dims(&usv[1], &[-2])?)?;
            Ok(vec![ops::matmul(&us, &usv[2])?, usv[1].clone()])
        },
        &[m],
        &[0],
    );
}

#[test]
fn convolutions() {
    let (x, w) = (arr(&[3, 2, 7, 4], 10), arr(&[3, 6, 3, 2], 11));
    // groups = 2, stride 2: the input mapped, the weight mapped, both, on non-leading axes.
    let conv = |v: &[Array]| Ok(vec![ops::conv1d(&v[0], &v[1], 2, 1, 1, 2)?]);
    let w0 = ops::take(&w, &Array::scalar(0i32).unwrap(), Some(0)).unwrap();
    let x0 = ops::take(&x, &Array::scalar(0i32).unwrap(), Some(0)).unwrap();
    check("conv input mapped", &conv, &[x.clone(), w0], &[0, -1]);
    check("conv weight mapped", &conv, &[x0, w.clone()], &[-1, 0]);
    check("conv both mapped", &conv, &[x.clone(), w.clone()], &[0, 0]);
    check("conv both, inner axes", &conv, &[ops::moveaxis(&x, 0, 2).unwrap(), ops::moveaxis(&w, 0, 3).unwrap()], &[2, 3]);
    let (x2, w2) = (arr(&[2, 1, 5, 5, 3], 12), arr(&[2, 4, 2, 3, 3], 13));
    check(
        "conv_general 2-D, dilations and flip",
        &|v| Ok(vec![ops::conv_general(&v[0], &v[1], &[1, 2], &[1, 0], &[0, 1], &[2, 1], &[1, 2], 1, true)?]),
        &[x2, w2],
        &[0, 0],
    );
}

#[test]
fn fast_ops_fft_and_searchsorted() {
    use mlx_arm_core::ops::fast::{self, RopeOffset};
    let x = arr(&[2, 2, 3, 8], 14);
    check("rope", &|v| Ok(vec![fast::rope(&v[0], 8, false, Some(10000.0), 1.0, RopeOffset::Int(2), None)?]), &[x.clone()], &[0]);
    let off = Array::from_slice(&[1i32, 3], &[2]).unwrap();
    check(
        "rope per-sequence offsets",
        &|v| Ok(vec![fast::rope(&v[0], 4, true, Some(100.0), 0.5, RopeOffset::Array(&off), None)?]),
        &[x.clone()],
        &[1],
    );
    let w = arr(&[2, 8], 15);
    check("rms_norm, mapped weight", &|v| Ok(vec![fast::rms_norm(&v[0], Some(&v[1]), 1e-5)?]), &[x.clone(), w.clone()], &[0, 0]);
    check("layer_norm", &|v| Ok(vec![fast::layer_norm(&v[0], Some(&v[1]), None, 1e-5)?]), &[x.clone(), w], &[1, 0]);
    use mlx_arm_core::ops::fft::{self as fft, FftNorm};
    check("rfft2", &|v| Ok(vec![ops::real(&fft::rfft2(&v[0], None, None, FftNorm::Ortho)?)?]), &[x.clone()], &[1]);
    let z = ops::astype(&x, DType::Complex64).unwrap();
    check("irfft", &|v| Ok(vec![fft::irfft(&v[0], Some(6), 0, FftNorm::Backward)?]), &[z], &[2]);
    let seq = Array::from_slice(&[0.0f32, 1.0, 2.0, 3.0], &[4]).unwrap();
    check("searchsorted values", &|v| Ok(vec![ops::searchsorted(&v[0], &v[1], "right")?]), &[seq.clone(), x], &[-1, 1]);
    let e = vmap(&|v| Ok(vec![ops::searchsorted(&v[0], &v[1], "left")?]), &[arr(&[3, 4], 16), seq], &[0, -1], &[]).unwrap_err();
    assert!(e.to_string().contains("Cannot vmap over the sorted sequence"), "{e}");
}

#[test]
fn random_draws_batch_over_keys() {
    // As MLX: a batch of keys draws each key's sample (real MLX: vmap(normal)(stack([k0, k1]))
    // equals [normal(key=k0), normal(key=k1)]); a key that is not mapped draws the same sample
    // for every example.
    use ops::random;
    let keys = random::split(&random::key(7).unwrap(), 3).unwrap();
    check("normal", &|v| Ok(vec![random::normal(&[4], DType::Float32, None, None, Some(&v[0]))?]), &[keys.clone()], &[0]);
    check("normal keys on axis 1", &|v| Ok(vec![random::normal(&[2, 3], DType::Float16, None, None, Some(&v[0]))?]), &[ops::transpose(&keys, None).unwrap()], &[1]);
    check("uniform", &|v| Ok(vec![random::uniform(-1.0f32, 2.0f32, &[5], DType::Float32, Some(&v[0]))?]), &[keys.clone()], &[0]);
    check("bits", &|v| Ok(vec![ops::astype(&random::bits(&[3], 4, Some(&v[0]))?, DType::Float32)?]), &[keys.clone()], &[0]);
    check("randint", &|v| Ok(vec![random::randint(0, 100, &[6], DType::Int32, Some(&v[0]))?]), &[keys.clone()], &[0]);
    check("split", &|v| Ok(vec![ops::astype(&random::split(&v[0], 2)?, DType::Float32)?]), &[keys.clone()], &[0]);
    // A mapped probability with one shared key, and both mapped.
    let p = Array::from_slice(&[0.1f32, 0.5, 0.9], &[3]).unwrap();
    let key = random::key(3).unwrap();
    check(
        "bernoulli shared key",
        &|v| Ok(vec![ops::astype(&random::bernoulli(v[0].clone(), Some(&[8]), Some(&v[1]))?, DType::Float32)?]),
        &[p.clone(), key],
        &[0, -1],
    );
    check(
        "bernoulli per key",
        &|v| Ok(vec![ops::astype(&random::bernoulli(v[0].clone(), Some(&[8]), Some(&v[1]))?, DType::Float32)?]),
        &[p, keys.clone()],
        &[0, 0],
    );
    // The draws differ between keys (the rule does not reuse one key).
    let d = vmap(&|v| Ok(vec![random::normal(&[4], DType::Float32, None, None, Some(&v[0]))?]), &[keys], &[0], &[]).unwrap();
    let rows = f32s(&d[0]);
    assert_ne!(rows[..4], rows[4..8]);
}

#[test]
fn quantize_and_dequantize_batch_per_example() {
    let w = arr(&[3, 4, 64], 40);
    check("quantize", &|v| ops::quantize(&v[0], Some(32), Some(4), "affine", None), &[w.clone()], &[0]);
    check("quantize mxfp4", &|v| ops::quantize(&v[0], Some(32), None, "mxfp4", None), &[w.clone()], &[1]);
    let q = ops::quantize(&w, Some(64), Some(8), "affine", None).unwrap();
    check(
        "dequantize",
        &|v| Ok(vec![ops::dequantize(&v[0], &v[1], Some(&v[2]), Some(64), Some(8), "affine", None, None)?]),
        &[q[0].clone(), q[1].clone(), q[2].clone()],
        &[0, 0, 0],
    );
    // Scales and biases mapped, codes shared.
    let w0 = ops::take(&q[0], &Array::scalar(0i32).unwrap(), Some(0)).unwrap();
    check(
        "dequantize mapped scales",
        &|v| Ok(vec![ops::dequantize(&v[0], &v[1], Some(&v[2]), Some(64), Some(8), "affine", None, None)?]),
        &[w0, q[1].clone(), q[2].clone()],
        &[-1, 0, 0],
    );
}

#[test]
fn primitives_mlx_does_not_batch_are_mlx_errors() {
    let w = arr(&[8, 64], 41);
    let q = ops::quantize(&w, Some(64), Some(4), "affine", None).unwrap();
    let x = arr(&[3, 2, 64], 42);
    let qmm = |v: &[Array]| Ok(vec![ops::quantized_matmul(&v[0], &q[0], &q[1], Some(&q[2]), true, Some(64), Some(4), "affine")?]);
    let e = vmap(&qmm, &[x.clone()], &[0], &[]).unwrap_err();
    assert_eq!(e.to_string(), "[QuantizedMatmul::vmap] NYI");
    let e = vmap(&|v| ops::depends(&[v[0].clone()], &[ops::exp(&v[0])?]), &[x.clone()], &[0], &[]).unwrap_err();
    assert_eq!(e.to_string(), "[Primitive::vmap] Not implemented for Depends.");
    let e = vmap(&|v| Ok(vec![ops::as_strided(&v[0], &[2, 2], &[1, 1], 0)?]), &[x.clone()], &[0], &[]).unwrap_err();
    assert_eq!(e.to_string(), "[Primitive::vmap] Not implemented for AsStrided.");
    // An op that does not depend on the mapped input needs no rule (the same for every example).
    let out = vmap(&|v| Ok(vec![ops::add(&v[0], &qmm(&[ops::ones(&[1, 64], DType::Float32)?])?[0])?]), &[arr(&[3, 1, 8], 43)], &[0], &[]).unwrap();
    assert_eq!(out[0].shape(), &[3, 1, 8]);
}
