//! The language models' fused decode ops (`ops::fast::lm`, internal, not MLX API): each fused
//! node against the ordinary ops it stands for, bit for bit, over dtypes, shapes, strided
//! inputs and rope variants; the sum and norm also against a hand computation in f64; the
//! KV-cache write in place where it may and never where it may not; bad arguments are errors; gradients and vmap are refused with an error.

use mlx_arm_core::ops::fast::lm::{
    add_rms_norm, add_rms_norm_fallback, decode_heads, decode_heads_fallback, kv_write, kv_write_fallback, HeadsRope,
};
use mlx_arm_core::{ops, transforms, Array, DType};

/// Deterministic values in about [-2, 2).
fn vals(n: usize, seed: usize) -> Vec<f32> {
    (0..n).map(|i| (((i * 7919 + seed * 104_729) % 4001) as f32 - 2000.0) / 1000.0).collect()
}

fn arr(shape: &[usize], seed: usize, dt: DType) -> Array {
    let n = shape.iter().product();
    ops::astype(&Array::from_slice(&vals(n, seed), shape).unwrap(), dt).unwrap()
}

/// Bits of `a` widened to f32 (exact for every float dtype used here) with its shape.
fn bits(a: &Array) -> (Vec<usize>, Vec<u32>) {
    let f = ops::astype(a, DType::Float32).unwrap().to_vec::<f32>().unwrap();
    (a.shape().to_vec(), f.iter().map(|v| v.to_bits()).collect())
}

#[test]
fn add_rms_norm_equals_add_then_rms_norm_bitwise() {
    for dt in [DType::Float32, DType::Float16, DType::Bfloat16] {
        for shape in [&[1usize, 1, 576][..], &[2, 7, 64], &[3, 37], &[5, 1], &[1, 1, 4099]] {
            let d = *shape.last().unwrap();
            let (x, r, w) = (arr(shape, 1, dt), arr(shape, 2, dt), arr(&[d], 3, dt));
            let fused = add_rms_norm(&x, &r, &w, 1e-5).unwrap();
            let plain = add_rms_norm_fallback(&x, &r, &w, 1e-5).unwrap();
            for (f, p) in fused.iter().zip(&plain) {
                assert_eq!(bits(f), bits(p), "{dt:?} {shape:?}");
            }
        }
    }
}

/// x as a lazy temporary the fused node holds alone (the model's residual stream): the CPU
/// kernel writes the sum into x's buffer, with the same bits as the ordinary ops.
#[test]
fn add_rms_norm_into_a_donated_x_equals_add_then_rms_norm() {
    for dt in [DType::Float32, DType::Float16, DType::Bfloat16] {
        for shape in [&[1usize, 128, 576][..], &[2, 7, 64], &[3, 37]] {
            let d = *shape.last().unwrap();
            let (a, b, r, w) = (arr(shape, 4, dt), arr(shape, 5, dt), arr(shape, 2, dt), arr(&[d], 3, dt));
            let plain = add_rms_norm_fallback(&ops::add(&a, &b).unwrap(), &r, &w, 1e-5).unwrap();
            let x = ops::add(&a, &b).unwrap();
            let fused = add_rms_norm(&x, &r, &w, 1e-5).unwrap();
            drop(x);
            mlx_arm_core::eval(&fused).unwrap();
            for (f, p) in fused.iter().zip(&plain) {
                assert_eq!(bits(f), bits(p), "{dt:?} {shape:?}");
            }
        }
    }
}

#[test]
fn add_rms_norm_matches_a_hand_computation() {
    let (rows, d) = (3, 50);
    let (x, r, w) = (vals(rows * d, 4), vals(rows * d, 5), vals(d, 6));
    let [s, y] = add_rms_norm(
        &Array::from_slice(&x, &[rows, d]).unwrap(),
        &Array::from_slice(&r, &[rows, d]).unwrap(),
        &Array::from_slice(&w, &[d]).unwrap(),
        1e-6,
    )
    .unwrap();
    let (s, y) = (s.to_vec::<f32>().unwrap(), y.to_vec::<f32>().unwrap());
    for i in 0..rows {
        let row: Vec<f64> = (0..d).map(|j| (x[i * d + j] + r[i * d + j]) as f64).collect();
        let inv = 1.0 / (row.iter().map(|v| v * v).sum::<f64>() / d as f64 + 1e-6).sqrt();
        for j in 0..d {
            assert_eq!(s[i * d + j], x[i * d + j] + r[i * d + j]);
            let want = row[j] * inv * w[j] as f64;
            assert!((y[i * d + j] as f64 - want).abs() <= 1e-5 * (1.0 + want.abs()), "({i}, {j}): {} vs {want}", y[i * d + j]);
        }
    }
}

#[test]
fn add_rms_norm_of_strided_inputs_and_mixed_weight_dtype() {
    // x transposed (strided), r broadcast-free; an f32 weight with f16 summands promotes, so
    // the op takes the composed path — still the composition's values.
    let x = ops::transpose(&arr(&[16, 8], 7, DType::Float32), None).unwrap();
    let r = arr(&[8, 16], 8, DType::Float32);
    let w = arr(&[16], 9, DType::Float32);
    let f = add_rms_norm(&x, &r, &w, 1e-5).unwrap();
    let p = add_rms_norm_fallback(&x, &r, &w, 1e-5).unwrap();
    assert_eq!(bits(&f[0]), bits(&p[0]));
    assert_eq!(bits(&f[1]), bits(&p[1]));
    let (xh, rh) = (arr(&[2, 16], 1, DType::Float16), arr(&[2, 16], 2, DType::Float16));
    let f = add_rms_norm(&xh, &rh, &w, 1e-5).unwrap();
    let p = add_rms_norm_fallback(&xh, &rh, &w, 1e-5).unwrap();
    assert_eq!(f[1].dtype(), DType::Float32);
    assert_eq!(bits(&f[1]), bits(&p[1]));
}

#[test]
fn add_rms_norm_rejects_bad_arguments() {
    let x = arr(&[2, 8], 1, DType::Float32);
    assert!(add_rms_norm(&x, &arr(&[2, 7], 1, DType::Float32), &arr(&[8], 1, DType::Float32), 1e-5).is_err());
    assert!(add_rms_norm(&x, &arr(&[2, 8], 1, DType::Float16), &arr(&[8], 1, DType::Float32), 1e-5).is_err());
    assert!(add_rms_norm(&x, &x, &arr(&[7], 1, DType::Float32), 1e-5).is_err());
    assert!(add_rms_norm(&x, &x, &arr(&[2, 8], 1, DType::Float32), 1e-5).is_err());
    let i = Array::from_slice(&[1i32, 2], &[1, 2]).unwrap();
    assert!(add_rms_norm(&i, &i, &Array::from_slice(&[1i32, 2], &[2]).unwrap(), 1e-5).is_err());
}

/// One configuration of `decode_heads`: batch, query heads, kv heads, head_dim, rope dims,
/// traditional, freqs given, per-batch offsets, dtype.
#[allow(clippy::type_complexity)]
const CASES: &[(usize, usize, usize, usize, usize, bool, bool, bool, DType)] = &[
    (1, 9, 3, 64, 64, false, false, false, DType::Float32), // the default model
    (1, 9, 3, 64, 64, true, false, false, DType::Float32),
    (2, 4, 2, 32, 16, false, false, true, DType::Float32), // partial rotary, offsets per sequence
    (1, 8, 2, 16, 16, false, true, false, DType::Float32),  // Llama 3 freqs
    (1, 6, 6, 24, 24, false, false, false, DType::Float16),
    (2, 4, 1, 8, 8, true, false, true, DType::Bfloat16),
];

#[test]
fn decode_heads_equals_reshape_and_rope_bitwise() {
    for (ci, &(b, hq, hk, d, dims, trad, with_freqs, per_seq, dt)) in CASES.iter().enumerate() {
        let (q, k, v) = (arr(&[b, 1, hq * d], 11, dt), arr(&[b, 1, hk * d], 12, dt), arr(&[b, 1, hk * d], 13, dt));
        let offset = if per_seq { Array::from_slice(&[17i32, 3], &[2]).unwrap() } else { Array::scalar(41i32).unwrap() };
        let freqs: Vec<f32> = (0..dims / 2).map(|i| 10000f32.powf(2.0 * i as f32 / dims as f32) * (1.0 + (i % 3) as f32)).collect();
        let freqs = Array::from_slice(&freqs, &[dims / 2]).unwrap();
        let r = HeadsRope {
            dims,
            traditional: trad,
            base: if with_freqs { None } else { Some(10000.0) },
            scale: if ci == 1 { 0.25 } else { 1.0 },
            offset: &offset,
            freqs: with_freqs.then_some(&freqs),
        };
        let fused = decode_heads(&q, &k, &v, d, &r).unwrap();
        let plain = decode_heads_fallback(&q, &k, &v, d, &r).unwrap();
        for (f, p) in fused.iter().zip(&plain) {
            assert_eq!(bits(f), bits(p), "case {ci}");
        }
        assert_eq!(fused[0].shape(), &[b, hq, 1, d]);
        assert_eq!(fused[2].shape(), &[b, hk, 1, d]);
        // v is the projection itself, as heads.
        assert_eq!(bits(&fused[2]).1, bits(&v).1);
    }
}

#[test]
fn decode_heads_rotates_by_hand_and_reads_strided_projections() {
    // (2, 1, 2·8) slices of a (2, 1, 48) array: rows 48 apart, not dense.
    let (b, h, d) = (2, 2, 8);
    let all = arr(&[b, 1, 48], 21, DType::Float32);
    let q = ops::slice(&all, &[0, 0, 0], &[2, 1, 16], &[1, 1, 1]).unwrap();
    let k = ops::slice(&all, &[0, 0, 16], &[2, 1, 32], &[1, 1, 1]).unwrap();
    let v = ops::slice(&all, &[0, 0, 32], &[2, 1, 48], &[1, 1, 1]).unwrap();
    let offset = Array::scalar(5i32).unwrap();
    let r = HeadsRope { dims: d, traditional: false, base: Some(10000.0), scale: 1.0, offset: &offset, freqs: None };
    let fused = decode_heads(&q, &k, &v, d, &r).unwrap();
    let plain = decode_heads_fallback(&q, &k, &v, d, &r).unwrap();
    for (f, p) in fused.iter().zip(&plain) {
        assert_eq!(bits(f), bits(p));
    }
    // By hand: feature j < d/2 of each head pairs with j + d/2, angle 5 / 10000^(2j/d).
    let qv = q.to_vec::<f32>().unwrap();
    let out = fused[0].to_vec::<f32>().unwrap();
    for bh in 0..b * h {
        for j in 0..d / 2 {
            let theta = 5.0f64 / 10000f64.powf(2.0 * j as f64 / d as f64);
            let (x1, x2) = (qv[bh * d + j] as f64, qv[bh * d + j + d / 2] as f64);
            let (y1, y2) = (x1 * theta.cos() - x2 * theta.sin(), x1 * theta.sin() + x2 * theta.cos());
            assert!((out[bh * d + j] as f64 - y1).abs() < 1e-5, "{bh} {j}");
            assert!((out[bh * d + j + d / 2] as f64 - y2).abs() < 1e-5, "{bh} {j}");
        }
    }
    assert_eq!(fused[2].to_vec::<f32>().unwrap(), v.to_vec::<f32>().unwrap());
}

#[test]
fn decode_heads_rejects_bad_arguments() {
    let off = Array::scalar(0i32).unwrap();
    let r = HeadsRope { dims: 8, traditional: false, base: Some(10000.0), scale: 1.0, offset: &off, freqs: None };
    let a = |s: &[usize]| arr(s, 1, DType::Float32);
    // Two positions; a width that is not whole heads; a batch mismatch; dims over head_dim;
    // mixed dtypes; no base and no freqs.
    assert!(decode_heads(&a(&[1, 2, 16]), &a(&[1, 2, 8]), &a(&[1, 2, 8]), 8, &r).is_err());
    assert!(decode_heads(&a(&[1, 1, 12]), &a(&[1, 1, 8]), &a(&[1, 1, 8]), 8, &r).is_err());
    assert!(decode_heads(&a(&[2, 1, 16]), &a(&[1, 1, 8]), &a(&[1, 1, 8]), 8, &r).is_err());
    assert!(decode_heads(&a(&[1, 1, 16]), &a(&[1, 1, 8]), &a(&[1, 1, 8]), 4, &r).is_err());
    assert!(decode_heads(&a(&[1, 1, 16]), &arr(&[1, 1, 8], 1, DType::Float16), &a(&[1, 1, 8]), 8, &r).is_err());
    let nob = HeadsRope { base: None, ..r };
    assert!(decode_heads(&a(&[1, 1, 16]), &a(&[1, 1, 8]), &a(&[1, 1, 8]), 8, &nob).is_err());
}

#[test]
fn transforms_refuse_the_fused_nodes_with_an_error() {
    // Several outputs: gradients and vmap are refused (lm-internal ops; the model never
    // transforms them), as errors, not panics.
    let f = |v: &[Array]| -> mlx_arm_core::Result<Vec<Array>> {
        let [_, y] = add_rms_norm(&v[0], &v[1], &v[2], 1e-5)?;
        Ok(vec![ops::sum(&y, None, false)?])
    };
    let ins = [arr(&[2, 8], 1, DType::Float32), arr(&[2, 8], 2, DType::Float32), arr(&[8], 3, DType::Float32)];
    assert!(transforms::grad(&f, &ins, &[0]).is_err());
    let g = |v: &[Array]| -> mlx_arm_core::Result<Vec<Array>> { Ok(add_rms_norm(&v[0], &v[1], &v[2], 1e-5)?.to_vec()) };
    let (x, r, w) = (arr(&[3, 2, 8], 4, DType::Float32), arr(&[3, 2, 8], 5, DType::Float32), arr(&[8], 6, DType::Float32));
    assert!(transforms::vmap(&g, &[x, r, w], &[0, 0, -1], &[]).is_err());
}

/// The address of an evaluated array's buffer.
fn buf_addr(a: &Array) -> usize {
    a.data().unwrap().buf.as_ptr() as usize
}

#[test]
fn kv_write_equals_slice_update_and_slice_bitwise() {
    // (batch, heads, capacity, head_dim of keys, of values, rows written, at, dtype)
    let cases = [
        (1, 3, 16, 64, 64, 1, 0, DType::Float32), // the default model's first decode position
        (1, 3, 16, 64, 64, 1, 15, DType::Float32), // the last row of the buffer
        (2, 2, 9, 8, 4, 3, 4, DType::Float32),    // a chunk; values narrower than keys
        (1, 4, 8, 16, 16, 8, 0, DType::Float16),  // the whole buffer
        (2, 1, 5, 8, 8, 2, 1, DType::Bfloat16),
    ];
    for (ci, &(b, h, cap, dk, dv, t, at, dt)) in cases.iter().enumerate() {
        let (kb, vb) = (arr(&[b, h, cap, dk], 31, dt), arr(&[b, h, cap, dv], 32, dt));
        let (k, v) = (arr(&[b, h, t, dk], 33, dt), arr(&[b, h, t, dv], 34, dt));
        let fused = kv_write(&kb, &vb, &k, &v, at).unwrap();
        let plain = kv_write_fallback(&kb, &vb, &k, &v, at).unwrap();
        for (i, (f, p)) in fused.iter().zip(&plain).enumerate() {
            assert_eq!(bits(f), bits(p), "case {ci}, output {i}");
        }
        assert_eq!(fused[2].shape(), &[b, h, at + t, dk]);
        assert_eq!(fused[3].shape(), &[b, h, at + t, dv]);
        // By hand: rows at..at+t are k's, the others the buffer's (which the caller still
        // holds, so it was copied, not written).
        let (kbv, kv, out) = (bits(&kb).1, bits(&k).1, bits(&fused[0]).1);
        for bh in 0..b * h {
            for r in 0..cap {
                for j in 0..dk {
                    let want = if (at..at + t).contains(&r) { kv[(bh * t + r - at) * dk + j] } else { kbv[(bh * cap + r) * dk + j] };
                    assert_eq!(out[(bh * cap + r) * dk + j], want, "case {ci} ({bh}, {r}, {j})");
                }
            }
        }
        assert_eq!(bits(&kb).1, kbv, "case {ci}: a buffer its caller holds is not written");
        // Each view is its buffer's memory, not a copy.
        assert!(Array::ptr_eq_data(&fused[0], &fused[2]) && Array::ptr_eq_data(&fused[1], &fused[3]));
    }
}

#[test]
fn kv_write_writes_in_place_only_into_buffers_it_holds_alone() {
    // Dense, evaluated buffers of the kernels' allocator (sums, as a cache's first write is).
    let (kb, vb) = (arr(&[1, 2, 8, 4], 41, DType::Float32), arr(&[1, 2, 8, 4], 42, DType::Float32));
    let (kb, vb) = (ops::add(&kb, &kb).unwrap(), ops::add(&vb, &vb).unwrap());
    mlx_arm_core::eval(&[kb.clone(), vb.clone()]).unwrap();
    let (ka, va, vb_bits) = (buf_addr(&kb), buf_addr(&vb), bits(&vb));
    let (k, v) = (arr(&[1, 2, 1, 4], 43, DType::Float32), arr(&[1, 2, 1, 4], 44, DType::Float32));
    let want = kv_write_fallback(&kb, &vb, &k, &v, 3).unwrap();
    mlx_arm_core::eval(&want).unwrap();
    let want: Vec<_> = want.iter().map(bits).collect();
    // The key buffer is given up; the value buffer stays held here.
    let outs = kv_write(&kb, &vb, &k, &v, 3).unwrap();
    drop(kb);
    mlx_arm_core::eval(&outs).unwrap();
    assert_eq!(buf_addr(&outs[0]), ka, "the keys' buffer was written in place");
    assert_ne!(buf_addr(&outs[1]), va, "the values' buffer, still held, was copied");
    for (o, w) in outs.iter().zip(&want) {
        assert_eq!(&bits(o), w);
    }
    assert_eq!(bits(&vb), vb_bits, "the held buffer is unchanged");
}

#[test]
fn kv_write_rejects_bad_arguments() {
    let a = |s: &[usize]| arr(s, 1, DType::Float32);
    let (kb, vb, k) = (a(&[1, 2, 8, 4]), a(&[1, 2, 8, 4]), a(&[1, 2, 1, 4]));
    assert!(kv_write(&kb, &vb, &k, &k, 8).is_err(), "past the end");
    assert!(kv_write(&kb, &vb, &a(&[1, 2, 2, 4]), &a(&[1, 2, 2, 4]), 7).is_err(), "runs past the end");
    assert!(kv_write(&kb, &vb, &k, &a(&[1, 2, 2, 4]), 0).is_err(), "keys and values of different lengths");
    assert!(kv_write(&kb, &vb, &a(&[1, 3, 1, 4]), &k, 0).is_err(), "other heads");
    assert!(kv_write(&kb, &vb, &a(&[1, 2, 1, 5]), &k, 0).is_err(), "another head_dim");
    assert!(kv_write(&a(&[2, 8, 4]), &vb, &k, &k, 0).is_err(), "a 3-D buffer");
    assert!(kv_write(&kb, &vb, &arr(&[1, 2, 1, 4], 1, DType::Float16), &k, 0).is_err(), "another dtype");
    assert!(kv_write(&kb, &vb, &k, &k, usize::MAX).is_err(), "an overflowing row");
}
