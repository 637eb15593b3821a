//! Shape ops against real MLX 0.32 goldens (core/tests/data/shape/gen_shape.py): values,
//! dtypes, negative axes, empty and 0-d arrays, transposed / strided inputs, and errors.

mod common;

use common::{array, assert_outputs, load, tol};
use mlx_arm_core::ops::{self, PadMode, SplitSpec};
use mlx_arm_core::{Array, ErrorKind, Result};
use serde_json::Value as J;

fn isz(v: &J) -> Vec<isize> {
    v.as_array().unwrap().iter().map(|x| x.as_i64().unwrap() as isize).collect()
}
fn usz(v: &J) -> Vec<usize> {
    v.as_array().unwrap().iter().map(|x| x.as_u64().unwrap() as usize).collect()
}
fn opt_axes(v: &J) -> Option<Vec<isize>> {
    if v.is_null() { None } else { Some(isz(v)) }
}

fn view(a: &Array, v: &J) -> Array {
    match v.as_str() {
        Some("T") => ops::transpose(a, None).unwrap(),
        Some("step2") => {
            let nd = a.ndim();
            let mut stop: Vec<isize> = a.shape().iter().map(|&d| d as isize).collect();
            stop[nd - 1] = a.shape()[nd - 1] as isize;
            let mut step = vec![1; nd];
            step[nd - 1] = 2;
            ops::slice(a, &vec![0; nd], &stop, &step).unwrap()
        }
        _ => a.clone(),
    }
}

pub fn run_case(c: &J) -> Result<Vec<Array>> {
    let mut ins: Vec<Array> = c["inputs"].as_array().unwrap().iter().map(array).collect();
    ins[0] = view(&ins[0], &c["view"]);
    if c["args"]["view_all"].as_bool() == Some(true) {
        ins[1] = view(&ins[1], &c["view"]);
    }
    let a = &c["args"];
    let x = &ins[0];
    let one = |r: Result<Array>| r.map(|v| vec![v]);
    let i = |k: &str| a[k].as_i64().unwrap() as isize;
    match c["op"].as_str().unwrap() {
        "concatenate" => one(ops::concatenate(&ins, a["axis"].as_i64().map(|v| v as isize))),
        "stack" => one(ops::stack(&ins, i("axis"))),
        "unstack" => ops::unstack(x, i("axis")),
        "split" => {
            let spec = match a["sections"].as_u64() {
                Some(n) => SplitSpec::Sections(n as usize),
                None => return ops::split(x, SplitSpec::Indices(&isz(&a["indices"])), i("axis")),
            };
            ops::split(x, spec, i("axis"))
        }
        "reshape" => one(ops::reshape(x, &isz(&a["shape"]))),
        "flatten" => one(ops::flatten(x, i("start"), i("end"))),
        "unflatten" => one(ops::unflatten(x, i("axis"), &isz(&a["shape"]))),
        "squeeze" => one(ops::squeeze(x, opt_axes(&a["axes"]).as_deref())),
        "expand_dims" => one(ops::expand_dims(x, &isz(&a["axes"]))),
        "transpose" => one(ops::transpose(x, opt_axes(&a["axes"]).as_deref())),
        "swapaxes" => one(ops::swapaxes(x, i("axis1"), i("axis2"))),
        "moveaxis" => one(ops::moveaxis(x, i("source"), i("destination"))),
        "matrix_transpose" => one(ops::matrix_transpose(x)),
        "broadcast_to" => one(ops::broadcast_to(x, &usz(&a["shape"]))),
        "broadcast_arrays" => ops::broadcast_arrays(&ins),
        "atleast_1d" => one(ops::atleast_1d(x)),
        "atleast_2d" => one(ops::atleast_2d(x)),
        "atleast_3d" => one(ops::atleast_3d(x)),
        "tile" => one(ops::tile(x, &usz(&a["reps"]))),
        "repeat" => one(ops::repeat(x, i("repeats"), a["axis"].as_i64().map(|v| v as isize))),
        "roll" => one(ops::roll(x, &isz(&a["shift"]), opt_axes(&a["axes"]).as_deref())),
        "flip" => one(ops::flip(x, opt_axes(&a["axes"]).as_deref())),
        "pad" => {
            let w: Vec<(usize, usize)> =
                a["widths"].as_array().unwrap().iter().map(|p| (p[0].as_u64().unwrap() as usize, p[1].as_u64().unwrap() as usize)).collect();
            let mode = PadMode::from_name(a["mode"].as_str().unwrap())?;
            let v = Array::scalar(a["value"].as_f64().unwrap_or(0.0) as f32)?;
            one(ops::pad(x, &w, mode, &v))
        }
        "diag" => one(ops::diag(x, i("k"))),
        "diagonal" => one(ops::diagonal(x, i("offset"), i("axis1"), i("axis2"))),
        "tril" => one(ops::tril(x, i("k"))),
        "triu" => one(ops::triu(x, i("k"))),
        "contiguous" => one(ops::contiguous(x)),
        "slice_dynamic" => one(ops::slice_dynamic(x, &isz(&a["start"]), &isz(&a["axes"]), &usz(&a["size"]))),
        "slice_update_dynamic" => one(ops::slice_update_dynamic(x, &ins[1], &isz(&a["start"]), &isz(&a["axes"]))),
        "slice_at" => one(ops::slice_at(x, &ins[1], &isz(&a["axes"]), &usz(&a["size"]))),
        "slice_update_at" => one(ops::slice_update_at(x, &ins[1], &ins[2], &isz(&a["axes"]))),
        "as_strided" => one(ops::as_strided(x, &usz(&a["shape"]), &isz(&a["strides"]), a["offset"].as_u64().unwrap() as usize)),
        other => panic!("unknown op {other}"),
    }
}

pub fn kind_of(py: &str) -> ErrorKind {
    match py {
        "IndexError" => ErrorKind::Index,
        "TypeError" => ErrorKind::Type,
        _ => ErrorKind::InvalidArgument,
    }
}

/// Runs every case of a golden file, collecting failures.
pub fn check_all(file: &str, run: fn(&J) -> Result<Vec<Array>>) {
    let g = load(file);
    check_cases(g["cases"].as_array().unwrap(), run);
}

/// Runs the cases, collecting failures (a panic inside one case is caught and reported).
pub fn check_cases(cases: &[J], run: fn(&J) -> Result<Vec<Array>>) {
    let mut bad = vec![];
    for c in cases {
        let name = c["name"].as_str().unwrap().to_string();
        let res = std::panic::catch_unwind(|| {
            let got = run(c).and_then(|v| {
                for o in &v {
                    o.eval()?;
                }
                Ok(v)
            });
            match (got, c.get("error")) {
                (Err(e), Some(err)) => {
                    // flip's out-of-range axis: IndexError in MLX 0.32, ValueError in later
                    // MLX, whose upstream test_flip this project passes.
                    let newer = c["op"] == "flip" && e.kind == ErrorKind::InvalidArgument;
                    if e.kind != kind_of(err.as_str().unwrap()) && !newer {
                        return Err(format!("error kind {:?}, MLX {} ({})", e.kind, err, c["message"]));
                    }
                    Ok(())
                }
                (Err(e), None) => Err(format!("unexpected error {e:?}")),
                (Ok(_), Some(err)) => Err(format!("expected {err}: {}", c["message"])),
                (Ok(v), None) => assert_outputs(&v, c, tol),
            }
        });
        match res {
            Ok(Ok(())) => {}
            Ok(Err(m)) => bad.push(format!("{name}: {m}")),
            Err(p) => bad.push(format!(
                "{name}: {}",
                p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default()
            )),
        }
    }
    assert!(bad.is_empty(), "{} failing cases:\n{}", bad.len(), bad.join("\n"));
}

#[test]
fn shape_ops_match_mlx() {
    check_all("shape/shape.json", run_case);
}

#[test]
fn split_outputs_share_one_buffer() {
    let a = ops::arange(0.0, 12.0, 1.0, mlx_arm_core::DType::Float32).unwrap();
    let parts = ops::split(&a, SplitSpec::Sections(3), 0).unwrap();
    for p in &parts {
        p.eval().unwrap();
    }
    assert!(Array::ptr_eq_data(&parts[0], &parts[2]));
    assert_eq!(parts[2].to_vec::<f32>().unwrap(), vec![8.0, 9.0, 10.0, 11.0]);
}

fn grid() -> Array {
    Array::from_slice(&(0..12).collect::<Vec<i32>>(), &[3, 4]).unwrap()
}

/// Out-of-range array starts (real MLX 0.32 reads outside the array there, or segfaults for
/// negative ones): wrapped once when negative, then clamped so the window fits — the rule of
/// the static `slice_dynamic`. Expected windows computed by hand on arange(12).reshape(3, 4).
#[test]
fn slice_at_clamps_out_of_range_starts() {
    let a = grid();
    let cases: [([i32; 2], [i32; 4]); 4] = [
        ([2, 3], [6, 7, 10, 11]),
        ([5, 3], [6, 7, 10, 11]),
        ([-1, 2], [6, 7, 10, 11]),
        ([-100, 100], [2, 3, 6, 7]),
    ];
    for (st, want) in cases {
        let s = Array::from_slice(&st, &[2]).unwrap();
        let got = ops::slice_at(&a, &s, &[0, 1], &[2, 2]).unwrap();
        assert_eq!(got.to_vec::<i32>().unwrap(), want, "start {st:?}");
        let stat = ops::slice_dynamic(&a, &[st[0] as isize, st[1] as isize], &[0, 1], &[2, 2]).unwrap();
        assert_eq!(stat.to_vec::<i32>().unwrap(), want, "static form, start {st:?}");
    }
    // slice_update: rows clamp to 1..3, columns -1 → 3 → clamped to 2..4.
    let z = ops::zeros(&[3, 4], mlx_arm_core::DType::Int32).unwrap();
    let one = ops::ones(&[2, 2], mlx_arm_core::DType::Int32).unwrap();
    let s = Array::from_slice(&[5i64, -1], &[2]).unwrap();
    let got = ops::slice_update_at(&z, &one, &s, &[0, 1]).unwrap();
    assert_eq!(got.to_vec::<i32>().unwrap(), [0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 1, 1]);
}

/// The starts may be a lazy result of other ops: they are read when the slice is evaluated.
#[test]
fn slice_at_reads_lazy_starts_at_eval() {
    let a = grid();
    let s = ops::add(&Array::from_slice(&[0i32, 1], &[2]).unwrap(), &Array::from_slice(&[1i32], &[1]).unwrap()).unwrap();
    let got = ops::slice_at(&a, &s, &[0, 1], &[2, 2]).unwrap();
    assert_eq!(got.shape(), &[2, 2]);
    assert_eq!(got.to_vec::<i32>().unwrap(), [6, 7, 10, 11]);
    let u = Array::from_slice(&[-1i32, -2], &[1, 2]).unwrap();
    let up = ops::slice_update_at(&a, &u, &s, &[0, 1]).unwrap();
    assert_eq!(up.to_vec::<i32>().unwrap(), [0, 1, 2, 3, 4, 5, -1, -2, 8, 9, 10, 11]);
    // The source is unchanged (slice_update copies unless the source is uniquely held).
    assert_eq!(a.to_vec::<i32>().unwrap(), (0..12).collect::<Vec<i32>>());
}
