//! Index family against real MLX 0.32 goldens (core/tests/data/index/gen_index.py): take,
//! take_along_axis, put_along_axis, Python-style indexing, `__setitem__` and `.at[]` updates
//! (duplicates, NaN, bool, ints, half floats, complex), plus our bounds-checking contract.

mod common;
#[path = "shape_ops.rs"]
#[allow(dead_code)]
mod shape_cases;

use common::array;
use mlx_arm_core::ops::{self, Index};
use mlx_arm_core::{Array, DType, ErrorKind, Result};
use serde_json::Value as J;

/// Cases where we deliberately differ from MLX 0.32 (see the report / module docs).
const DEVIATIONS: &[&str] = &[
    // MLX 0.32 refuses `A[0, 0] = x` with x of shape (1, 1, 1, 4); numpy (and we) drop the
    // update's leading size-1 axes first and accept it.
    "set_leading_ones",
];

fn decode_idx(v: &J) -> Vec<Index> {
    let opt = |x: &J| x.as_i64().map(|i| i as isize);
    v.as_array()
        .unwrap()
        .iter()
        .map(|e| {
            if let Some(i) = e.get("int") {
                Index::Int(i.as_i64().unwrap() as isize)
            } else if let Some(s) = e.get("slice") {
                Index::slice(opt(&s[0]), opt(&s[1]), opt(&s[2]))
            } else if e.get("none").is_some() {
                Index::NewAxis
            } else if e.get("ellipsis").is_some() {
                Index::Ellipsis
            } else {
                Index::Array(array(&e["array"]))
            }
        })
        .collect()
}

fn run_case(c: &J) -> Result<Vec<Array>> {
    let mut ins: Vec<Array> = c["inputs"].as_array().unwrap().iter().map(array).collect();
    if c["view"].as_str() == Some("T") {
        ins[0] = ops::transpose(&ins[0], None)?;
    }
    let a = &c["args"];
    let axis = a["axis"].as_i64().map(|v| v as isize);
    let one = |r: Result<Array>| r.map(|v| vec![v]);
    match c["op"].as_str().unwrap() {
        "take" => one(ops::take(&ins[0], &ins[1], axis)),
        "take_along_axis" => one(ops::take_along_axis(&ins[0], &ins[1], axis)),
        "put_along_axis" => one(ops::put_along_axis(&ins[0], &ins[1], &ins[2], axis)),
        "index" => one(ops::index(&ins[0], &decode_idx(&a["idx"]))),
        "index_update" => one(ops::index_update(&ins[0], &decode_idx(&a["idx"]), &ins[1])),
        "at" => {
            let idx = decode_idx(&a["idx"]);
            let f = match a["mode"].as_str().unwrap() {
                "add" => ops::at_add,
                "subtract" => ops::at_subtract,
                "multiply" => ops::at_multiply,
                "divide" => ops::at_divide,
                "maximum" => ops::at_maximum,
                _ => ops::at_minimum,
            };
            one(f(&ins[0], &idx, &ins[1]))
        }
        other => panic!("unknown op {other}"),
    }
}

#[test]
fn index_ops_match_mlx() {
    // Deviations are checked by their own tests below.
    let g = common::load("index/index.json");
    let cases: Vec<J> =
        g["cases"].as_array().unwrap().iter().filter(|c| !DEVIATIONS.contains(&c["name"].as_str().unwrap())).cloned().collect();
    assert!(cases.len() > 100);
    shape_cases::check_cases(&cases, run_case);
}

#[test]
fn leading_ones_are_dropped_from_updates_like_numpy() {
    let a = ops::reshape(&ops::arange(0.0, 24.0, 1.0, DType::Int32).unwrap(), &[2, 3, 4]).unwrap();
    let v = Array::from_slice(&[1i32, 2, 3, 4], &[1, 1, 1, 4]).unwrap();
    let r = ops::index_update(&a, &[Index::Int(0), Index::Int(0)], &v).unwrap();
    let got = r.to_vec::<i32>().unwrap();
    assert_eq!(&got[..4], &[1, 2, 3, 4]);
    assert_eq!(&got[4..8], &[4, 5, 6, 7]);
}

#[test]
fn out_of_range_indices_are_errors_never_reads() {
    // MLX 0.32 returns garbage here (it reads outside the array); we report an IndexError.
    let a = ops::arange(0.0, 3.0, 1.0, DType::Float32).unwrap();
    for bad in [[3i32, 0], [-4, 0]] {
        let i = Array::from_slice(&bad, &[2]).unwrap();
        let e = ops::take(&a, &i, Some(0)).unwrap().eval().unwrap_err();
        assert_eq!(e.kind, ErrorKind::Index, "{e:?}");
        let e = ops::at_add(&a, &[Index::Array(i.clone())], &Array::scalar(1.0f32).unwrap()).unwrap().eval().unwrap_err();
        assert_eq!(e.kind, ErrorKind::Index, "{e:?}");
    }
    let big = Array::from_slice(&[u64::MAX], &[1]).unwrap();
    assert_eq!(ops::take(&a, &big, None).unwrap().eval().unwrap_err().kind, ErrorKind::Index);
    let e = ops::index(&a, &[Index::Int(3)]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Index);
    // Scatter windows must fit too.
    let upd = Array::from_slice(&[1.0f32, 2.0], &[1, 2]).unwrap();
    let idx = Array::from_slice(&[2i32], &[1]).unwrap();
    let r = ops::scatter(&a, &[idx], &upd, &[0]).unwrap();
    assert_eq!(r.eval().unwrap_err().kind, ErrorKind::Index);
}

#[test]
fn gather_primitive_windows() {
    // mx.gather semantics (C++ API): output = indices.shape + slice_sizes.
    let a = ops::reshape(&ops::arange(0.0, 12.0, 1.0, DType::Int32).unwrap(), &[3, 4]).unwrap();
    let i0 = Array::from_slice(&[0i32, 2], &[2]).unwrap();
    let i1 = Array::from_slice(&[1i32, 2], &[2]).unwrap();
    let g = ops::gather(&a, &[i0, i1], &[0, 1], &[1, 2]).unwrap();
    assert_eq!(g.shape(), &[2, 1, 2]);
    // numpy: [a[0, 1:3], a[2, 2:4]]
    assert_eq!(g.to_vec::<i32>().unwrap(), vec![1, 2, 10, 11]);
}
