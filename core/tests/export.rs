//! `transforms::export`: a function exported to bytes and imported back gives bit-identical
//! results to calling it (per family of exportable ops), picks its trace by signature, and
//! refuses bad calls, unexportable ops and malformed files with errors (never a panic).

use mlx_arm_core::ops;
use mlx_arm_core::transforms::export::{ExportedFunction, MAGIC};
use mlx_arm_core::{Array, DType, ErrorKind, Result};

#[path = "common/rng.rs"]
mod rng;

/// Deterministic values in [-2, 2) of `shape`.
fn arr(shape: &[usize], seed: u64) -> Array {
    let n = shape.iter().product();
    let mut r = rng::Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    Array::from_slice(&r.row(n, 2.0), shape).unwrap()
}

type F = dyn Fn(&[Array]) -> Result<Vec<Array>>;

/// Exports `f` on `inputs`, imports the bytes, and asserts the imported outputs equal
/// `f(inputs)` bit for bit.
fn round_trip(name: &str, f: &F, inputs: &[Array]) {
    let mut x = ExportedFunction::new();
    x.add(f, inputs, &[], false).unwrap_or_else(|e| panic!("{name}: export: {e}"));
    let bytes = x.to_bytes().unwrap();
    let imported = ExportedFunction::from_bytes(&bytes).unwrap_or_else(|e| panic!("{name}: import: {e}"));
    let got = imported.call(inputs, &[]).unwrap_or_else(|e| panic!("{name}: call: {e}"));
    let want = f(inputs).unwrap();
    assert_eq!(got.len(), want.len(), "{name}: output count");
    for (g, w) in got.iter().zip(&want) {
        assert_eq!((g.shape(), g.dtype()), (w.shape(), w.dtype()), "{name}: meta");
        assert_eq!(g.to_bytes().unwrap(), w.to_bytes().unwrap(), "{name}: values");
    }
}

#[test]
fn families_round_trip() {
    let a = arr(&[3, 4], 1);
    let b = arr(&[4], 2);
    let m = arr(&[4, 5], 3);
    let c = Array::from_slice(&[0.5f32; 15], &[3, 5]).unwrap();
    round_trip("elementwise", &|x| Ok(vec![ops::exp(&ops::add(&x[0], &x[1])?)?, ops::greater(&x[0], &x[1])?]), &[a.clone(), b.clone()]);
    round_trip("where+cast", &|x| Ok(vec![ops::where_(&ops::greater(&x[0], &x[1])?, &x[0], &x[1]).and_then(|w| ops::astype(&w, DType::Float16))?]), &[a.clone(), b.clone()]);
    round_trip("reduce", &|x| Ok(vec![ops::sum(&x[0], Some(&[1]), false)?, ops::argmax(&x[0], Some(0), false)?, ops::cumsum(&x[0], Some(1), true, false, None)?]), &[a.clone()]);
    round_trip("shape", &|x| {
        let t = ops::transpose(&x[0], None)?;
        let s = ops::slice(&x[0], &[2, 3], &[-4, 0], &[-1, -2])?;
        Ok(vec![ops::reshape(&t, &[2, 6])?, s, ops::concatenate(&[x[0].clone(), x[0].clone()], Some(1))?, ops::broadcast_to(&x[1], &[2, 4])?])
    }, &[a.clone(), b.clone()]);
    round_trip("matmul+addmm+captured", &move |x| Ok(vec![ops::matmul(&x[0], &x[1])?, ops::addmm(&c, &x[0], &x[1], 2.0, 0.5)?]), &[a.clone(), m.clone()]);
    round_trip("sort+gather", &|x| {
        let idx = ops::argsort(&x[0], Some(1))?;
        Ok(vec![ops::sort(&x[0], Some(0))?, ops::take_along_axis(&x[0], &idx, Some(1))?])
    }, &[a.clone()]);
    // The CPU's fused softmax primitive (and a softmax over another axis: composed ops).
    round_trip("softmax", &|x| Ok(vec![ops::softmax(&x[0], Some(&[-1]), false)?, ops::softmax(&x[0], Some(&[0]), true)?]), &[a.clone()]);
    round_trip("arange", &|x| Ok(vec![ops::add(&x[0], &ops::arange(0.0, 4.0, 1.0, DType::Float32)?)?]), &[b.clone()]);
    round_trip("no inputs", &|_| Ok(vec![ops::zeros(&[2, 2], DType::Int32)?]), &[]);
}

#[test]
fn signatures_pick_traces_and_mismatches_are_errors() {
    let f = |x: &[Array]| Ok(vec![ops::multiply(&x[0], &x[1])?]);
    let mut x = ExportedFunction::new();
    x.add(&f, &[arr(&[2], 1)], &[("b".into(), arr(&[2], 2))], false).unwrap();
    x.add(&f, &[arr(&[3], 1), arr(&[3], 2)], &[], false).unwrap();
    let imp = ExportedFunction::from_bytes(&x.to_bytes().unwrap()).unwrap();
    assert_eq!(imp.len(), 2);
    let (p, q) = (arr(&[2], 5), arr(&[2], 6));
    let got = imp.call(&[p.clone()], &[("b".into(), q.clone())]).unwrap();
    assert_eq!(got[0].to_vec::<f32>().unwrap(), ops::multiply(&p, &q).unwrap().to_vec::<f32>().unwrap());
    let got = imp.call(&[arr(&[3], 7), arr(&[3], 8)], &[]).unwrap();
    assert_eq!(got[0].shape(), &[3]);
    // As MLX's `FunctionTable::match` (mlx-c's example-export.c calls a function exported with
    // one positional argument with one keyword): inputs in all, keywords after the positional
    // ones in name order, any name the trace was not made with.
    let (u, v) = (arr(&[3], 9), arr(&[3], 10));
    let want = ops::multiply(&u, &v).unwrap().to_vec::<f32>().unwrap();
    for (args, kw) in [(vec![u.clone()], vec![("z".to_string(), v.clone())]), (vec![], vec![("a".to_string(), u.clone()), ("b".to_string(), v.clone())])] {
        assert_eq!(imp.call(&args, &kw).unwrap()[0].to_vec::<f32>().unwrap(), want);
    }
    for (args, kw) in [
        (vec![p.clone(), q.clone()], vec![]),                    // 2-positional trace is (3,)
        (vec![p.clone()], vec![("c".to_string(), q.clone())]), // wrong keyword name
        (vec![p.clone()], vec![("b".to_string(), ops::astype(&q, DType::Int32).unwrap())]),
    ] {
        let e = imp.call(&args, &kw).unwrap_err();
        assert_eq!(e.kind, ErrorKind::InvalidArgument);
        assert!(e.msg.starts_with("No imported function found"), "{}", e.msg);
        assert!(e.msg.contains("\"b\": (2) float32"), "{}", e.msg);
    }
}

#[test]
fn shapeless_replays_at_new_shapes_where_builders_infer_them() {
    let f = |x: &[Array]| Ok(vec![ops::sum(&ops::matmul(&ops::exp(&x[0])?, &x[1])?, Some(&[0]), true)?]);
    let mut x = ExportedFunction::new();
    x.add(&f, &[arr(&[2, 3], 1), arr(&[3, 4], 2)], &[], true).unwrap();
    let imp = ExportedFunction::from_bytes(&x.to_bytes().unwrap()).unwrap();
    let ins = [arr(&[5, 6], 3), arr(&[6, 2], 4)];
    let got = imp.call(&ins, &[]).unwrap();
    assert_eq!(got[0].to_bytes().unwrap(), f(&ins).unwrap()[0].to_bytes().unwrap());
    // A reshape fixed the shape at export time.
    let g = |x: &[Array]| Ok(vec![ops::reshape(&x[0], &[-1])?]);
    let mut x = ExportedFunction::new();
    x.add(&g, &[arr(&[2, 3], 1)], &[], true).unwrap();
    let imp = ExportedFunction::from_bytes(&x.to_bytes().unwrap()).unwrap();
    let e = imp.call(&[arr(&[3, 3], 1)], &[]).unwrap_err();
    assert!(e.msg.contains("fixed when the function was exported"), "{}", e.msg);
}

#[test]
fn unexportable_ops_are_refused_at_export() {
    let f = |x: &[Array]| Ok(vec![ops::inv(&x[0])?]);
    let e = ExportedFunction::new().add(&f, &[ops::eye(3, None, 0, DType::Float32).unwrap()], &[], false).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Unsupported);
    assert!(e.msg.contains("is not supported yet"), "{}", e.msg);
}

fn exported_bytes() -> Vec<u8> {
    let w = arr(&[3], 9);
    let f = move |x: &[Array]| Ok(vec![ops::add(&ops::multiply(&x[0], &w)?, &x[0])?]);
    let mut x = ExportedFunction::new();
    x.add(&f, &[arr(&[3], 1)], &[], false).unwrap();
    x.to_bytes().unwrap()
}

#[test]
fn malformed_files_are_errors() {
    let good = exported_bytes();
    assert_eq!(&good[..8], MAGIC);
    // Every truncation is an error.
    for n in 0..good.len() {
        assert!(ExportedFunction::from_bytes(&good[..n]).is_err(), "truncated at {n} was accepted");
    }
    // Every single-byte corruption is an error or a function that still runs (or refuses to
    // run) without panicking.
    let x = arr(&[3], 4);
    for i in 0..good.len() {
        for v in [0u8, 1, 2, 0x7f, 0xff] {
            let mut bad = good.clone();
            bad[i] = v;
            if let Ok(f) = ExportedFunction::from_bytes(&bad) {
                if let Ok(out) = f.call(&[x.clone()], &[]) {
                    for o in out {
                        let _ = o.to_bytes();
                    }
                }
            }
        }
    }
    let mut trailing = good.clone();
    trailing.push(0);
    assert!(ExportedFunction::from_bytes(&trailing).unwrap_err().msg.contains("unexpected bytes"));
    let mut version = good.clone();
    version[8] = 99;
    assert!(ExportedFunction::from_bytes(&version).unwrap_err().msg.contains("format version 99"));
}

#[test]
fn apple_mlxfn_files_are_recognized_and_refused() {
    // The start of a file MLX 0.32.4 wrote: a u64 length, then its version string.
    let mut apple = 6u64.to_le_bytes().to_vec();
    apple.extend_from_slice(b"0.32.4");
    apple.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0]);
    let e = ExportedFunction::from_bytes(&apple).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Unsupported);
    assert!(e.msg.contains("Apple's MLX 0.32.4"), "{}", e.msg);
}

#[test]
fn hand_written_file_follows_the_documented_format() {
    // docs/EXPORT.md, "File format": f(x) = exp(x) + c, x and c float32 of shape [3]
    // (the same bytes as fuzz/make_seeds.py's seed).
    let u32b = |v: u32| v.to_le_bytes().to_vec();
    let u64b = |v: u64| v.to_le_bytes().to_vec();
    let meta = [vec![10u8], u32b(1), u64b(3)].concat();
    let name = |s: &[u8]| [u32b(s.len() as u32), s.to_vec()].concat();
    let c: Vec<u8> = [1f32, 2., 3.].iter().flat_map(|v| v.to_le_bytes()).collect();
    let konst = [meta.clone(), u64b(12), c].concat();
    let exp = [vec![1u8], name(b"exp"), u32b(1), vec![0], u32b(0), u32b(1), meta.clone()].concat();
    let add = [vec![2u8], name(b"add"), u32b(2), vec![2], u32b(0), u32b(0), vec![1], u32b(0), u32b(1), meta.clone()].concat();
    let trace = [vec![0u8], u32b(1), u32b(0), u32b(1), meta.clone(), u32b(1), u32b(0), u32b(2), exp, add, u32b(1), vec![2], u32b(1), u32b(0)].concat();
    let file = [MAGIC.to_vec(), u32b(1), u32b(1), konst, u32b(1), trace].concat();
    let f = ExportedFunction::from_bytes(&file).unwrap();
    let x = Array::from_slice(&[0f32, 1., -1.], &[3]).unwrap();
    let got = f.call(&[x], &[]).unwrap()[0].to_vec::<f32>().unwrap();
    let want = [1f32 + 0f32.exp(), 2. + 1f32.exp(), 3. + (-1f32).exp()];
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() <= 1e-6 * w.abs(), "{got:?} vs {want:?}");
    }
}

/// A captured value computed by elementwise ops from a large constant, not yet evaluated, is
/// written as those ops over the constant — the file holds the constant once, whatever number
/// of traces reach it (MLX's test_export_variable_inputs: `constant + sum(args)` with no
/// arguments) — and the import computes the same values.
#[test]
fn lazy_elementwise_captures_are_written_as_ops_over_the_constant() {
    let constant = arr(&[16, 256], 90);
    constant.eval().unwrap();
    let (c0, c1) = (constant.clone(), constant.clone());
    let none = move |_: &[Array]| -> Result<Vec<Array>> { Ok(vec![ops::add(&c0, &Array::scalar(0.0f32)?)?]) };
    let one = move |x: &[Array]| -> Result<Vec<Array>> { Ok(vec![ops::add(&c1, &x[0])?]) };
    let mut x = ExportedFunction::new();
    x.add(&none, &[], &[], false).unwrap();
    x.add(&one, &[Array::scalar(1.0f32).unwrap()], &[], false).unwrap();
    let bytes = x.to_bytes().unwrap();
    let data = 16 * 256 * 4;
    assert!(bytes.len() < data + 1024, "{} bytes for one constant of {data}", bytes.len());
    let imported = ExportedFunction::from_bytes(&bytes).unwrap();
    let got = imported.call(&[], &[]).unwrap();
    assert_eq!(got[0].to_bytes().unwrap(), constant.to_bytes().unwrap());
    let two = Array::scalar(2.0f32).unwrap();
    let got = imported.call(&[two.clone()], &[]).unwrap();
    assert_eq!(got[0].to_bytes().unwrap(), ops::add(&constant, &two).unwrap().to_bytes().unwrap());
}

#[test]
fn metadata_is_kept_and_version_1_files_still_read() {
    let f = |xs: &[Array]| -> Result<Vec<Array>> { Ok(vec![ops::abs(&xs[0])?]) };
    let x = arr(&[3], 5);
    let mut e = ExportedFunction::with_metadata("{\"params\": 7}");
    e.add(&f, &[x.clone()], &[], false).unwrap();
    let bytes = e.to_bytes().unwrap();
    let back = ExportedFunction::from_bytes(&bytes).unwrap();
    assert_eq!(back.metadata(), "{\"params\": 7}");
    assert_eq!(back.call(&[x.clone()], &[]).unwrap()[0].to_bytes().unwrap(), ops::abs(&x).unwrap().to_bytes().unwrap());
    // A version-1 file is the same bytes without the metadata string (u32 length + text).
    let mut plain = ExportedFunction::new();
    plain.add(&f, &[x.clone()], &[], false).unwrap();
    let v2 = plain.to_bytes().unwrap();
    assert_eq!(&v2[12..16], &[0, 0, 0, 0], "an empty metadata string");
    let mut v1 = v2[..12].to_vec();
    v1[8] = 1;
    v1.extend_from_slice(&v2[16..]);
    let old = ExportedFunction::from_bytes(&v1).unwrap();
    assert_eq!(old.metadata(), "");
    assert_eq!(old.call(&[x.clone()], &[]).unwrap()[0].to_bytes().unwrap(), ops::abs(&x).unwrap().to_bytes().unwrap());
}

#[test]
fn quantized_ops_round_trip() {
    let w = arr(&[32, 64], 7);
    let q = ops::quantize(&w, Some(32), Some(4), "affine", None).unwrap();
    let (wq, s, b) = (q[0].clone(), q[1].clone(), q[2].clone());
    let f = move |xs: &[Array]| -> Result<Vec<Array>> {
        let y = ops::quantized_matmul(&xs[0], &wq, &s, Some(&b), true, Some(32), Some(4), "affine")?;
        let d = ops::dequantize(&wq, &s, Some(&b), Some(32), Some(4), "affine", None, None)?;
        Ok(vec![y, d])
    };
    round_trip("quantized_matmul + dequantize", &f, &[arr(&[3, 64], 8)]);
    let g = |xs: &[Array]| -> Result<Vec<Array>> { ops::quantize(&xs[0], Some(64), Some(8), "affine", None) };
    round_trip("quantize", &g, &[arr(&[4, 64], 9)]);
}
