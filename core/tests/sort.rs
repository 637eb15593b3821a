//! sort, argsort, partition, argpartition, topk and searchsorted against real MLX 0.32 goldens
//! (core/tests/data/sort/gen_sort.py). sort/argsort/searchsorted are compared exactly;
//! partition-like ops by property, since MLX leaves the order inside each side unspecified.

mod common;

use common::{array, values, view};
use mlx_arm_core::error::ErrorKind;
use mlx_arm_core::{ops, Array, Result};
use serde_json::Value as J;

fn input(v: &J) -> Array {
    match v["gen"].as_str() {
        Some("mul7919_mod10007") => {
            let shape: Vec<usize> = v["shape"].as_array().unwrap().iter().map(|d| d.as_u64().unwrap() as usize).collect();
            let n: usize = shape.iter().product();
            let data: Vec<i32> = (0..n as i64).map(|i| ((i * 7919) % 10007) as i32).collect();
            Array::from_slice(&data, &shape).unwrap()
        }
        Some(o) => panic!("unknown generator {o}"),
        None => array(v),
    }
}

fn num(v: &J) -> (f64, f64) {
    let f = |v: &J| match v {
        J::Number(n) => n.as_f64().unwrap(),
        J::String(s) if s == "nan" => f64::NAN,
        J::String(s) if s == "inf" => f64::INFINITY,
        J::String(s) if s == "-inf" => f64::NEG_INFINITY,
        J::Bool(b) => *b as u8 as f64,
        o => panic!("not a number {o}"),
    };
    match v {
        J::Array(p) => (f(&p[0]), f(&p[1])),
        o => (f(o), 0.0),
    }
}

fn same(a: (f64, f64), b: (f64, f64)) -> bool {
    let eq = |x: f64, y: f64| (x.is_nan() && y.is_nan()) || x == y;
    eq(a.0, b.0) && eq(a.1, b.1)
}

/// Ascending, NaN last, complex lexicographic: the oracle's order, for comparing multisets.
fn key_sort(v: &mut [(f64, f64)]) {
    v.sort_by(|a, b| {
        let k = |x: &(f64, f64)| (x.0.is_nan() || x.1.is_nan(), x.0, x.1);
        let (ka, kb) = (k(a), k(b));
        ka.0.cmp(&kb.0).then(ka.1.partial_cmp(&kb.1).unwrap_or(std::cmp::Ordering::Equal)).then(
            ka.2.partial_cmp(&kb.2).unwrap_or(std::cmp::Ordering::Equal),
        )
    });
}

/// Rows along the last axis of a row-major buffer.
fn rows(v: &[(f64, f64)], n: usize) -> Vec<Vec<(f64, f64)>> {
    if n == 0 {
        return vec![];
    }
    v.chunks(n).map(|c| c.to_vec()).collect()
}

fn shape_of(w: &J) -> Vec<usize> {
    w["shape"].as_array().unwrap().iter().map(|d| d.as_u64().unwrap() as usize).collect()
}

/// `got` (moved so the op's axis is last) against `want` (same layout): dtype, shape, and per
/// row either exact equality or the partition property around `kth`.
///
/// `src` (argpartition along the last axis): the input; rows holding NaN are compared by the
/// values their indices select, since MLX's comparator leaves NaNs unordered, even by index.
fn compare(got: &Array, want: &J, mode: &str, kth: Option<usize>, src: Option<&Array>) -> std::result::Result<(), String> {
    let src_rows = src.map(|s| rows(&values(s), *s.shape().last().unwrap_or(&1)));
    if got.dtype().name() != want["dtype"].as_str().unwrap() {
        return Err(format!("dtype {} != {}", got.dtype(), want["dtype"]));
    }
    let ws = shape_of(want);
    if got.shape() != &ws[..] {
        return Err(format!("shape {:?} != {ws:?}", got.shape()));
    }
    let g = values(got);
    let w: Vec<(f64, f64)> = want["data"].as_array().unwrap().iter().map(num).collect();
    let n = *ws.last().unwrap_or(&1);
    for (r, (gr, wr)) in rows(&g, n).into_iter().zip(rows(&w, n)).enumerate() {
        let (mut gr, mut wr) = (gr, wr);
        // Rows with NaNs: compare the values the indices select (NaN ties are unordered).
        if let Some(sr) = src_rows.as_ref().filter(|sr| sr[r].iter().any(|v| v.0.is_nan())) {
            gr = gr.iter().map(|i| sr[r][i.0 as usize]).collect();
            wr = wr.iter().map(|i| sr[r][i.0 as usize]).collect();
        }
        match (mode, kth) {
            ("exact", _) => {}
            ("partition", Some(k)) => {
                if !same(gr[k], wr[k]) {
                    return Err(format!("row {r}: kth element {:?} != {:?}", gr[k], wr[k]));
                }
                key_sort(&mut gr[..k]);
                key_sort(&mut wr[..k]);
                key_sort(&mut gr[k + 1..]);
                key_sort(&mut wr[k + 1..]);
            }
            _ => {
                key_sort(&mut gr);
                key_sort(&mut wr);
            }
        }
        if let Some(i) = (0..gr.len()).find(|&i| !same(gr[i], wr[i])) {
            return Err(format!("row {r} element {i}: got {:?}, want {:?}", gr[i], wr[i]));
        }
    }
    Ok(())
}

fn error_kind(name: &str) -> ErrorKind {
    match name {
        "ValueError" => ErrorKind::InvalidArgument,
        "IndexError" => ErrorKind::Index,
        "TypeError" => ErrorKind::Type,
        other => panic!("unmapped MLX error {other}"),
    }
}

#[test]
fn sort_family_matches_mlx() {
    let g = common::load("sort/sort.json")["cases"].as_array().unwrap().clone();
    let mut failures = vec![];
    for c in &g {
        let name = c["name"].as_str().unwrap();
        let op = c["op"].as_str().unwrap();
        let args = &c["args"];
        let ins: Vec<Array> = c["inputs"].as_array().unwrap().iter().map(input).collect();
        let x = view(&ins[0], &c["view"]);
        let axis = args["axis"].as_i64().map(|a| a as isize);
        let kth = args["kth"].as_i64().unwrap_or(0) as isize;
        let got: Result<Array> = match op {
            "sort" => ops::sort(&x, axis),
            "argsort" => ops::argsort(&x, axis),
            "partition" => ops::partition(&x, kth, axis),
            "argpartition" => ops::argpartition(&x, kth, axis),
            "topk" => ops::topk(&x, args["k"].as_i64().unwrap() as isize, axis),
            "searchsorted" => ops::searchsorted(&x, &ins[1], args["side"].as_str().unwrap()),
            o => panic!("unknown op {o}"),
        };
        let got = got.and_then(|a| {
            a.eval()?;
            Ok(a)
        });
        match (got, c.get("error")) {
            (Err(e), Some(want)) => {
                if e.kind != error_kind(want.as_str().unwrap()) {
                    failures.push(format!("{name}: error kind {:?}, MLX {want}: {}", e.kind, c["message"]));
                }
            }
            (Err(e), None) => failures.push(format!("{name}: unexpected error {e}")),
            (Ok(_), Some(want)) => failures.push(format!("{name}: succeeded, MLX raised {want}: {}", c["message"])),
            (Ok(mut out), None) => {
                if let Some(ps) = args["post_slice"].as_array() {
                    let get = |k: usize| ps.iter().map(|s| s[k].as_i64().unwrap() as isize).collect::<Vec<_>>();
                    out = ops::slice(&out, &get(0), &get(1), &get(2)).unwrap();
                }
                if let Some(m) = args["move_axis"].as_i64() {
                    out = ops::moveaxis(&out, m as isize, -1).unwrap();
                }
                let n_axis = *out.shape().last().unwrap_or(&1);
                let k = if kth < 0 { kth + n_axis as isize } else { kth } as usize;
                let mode = match op {
                    "partition" | "argpartition" => "partition",
                    "topk" => "multiset",
                    _ => "exact",
                };
                let src = (op == "argpartition" && args["move_axis"].is_null() && axis.is_some()).then_some(&x);
                if let Err(m) = compare(&out, &c["output"], mode, Some(k), src) {
                    failures.push(format!("{name}: {m}"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} of {} cases failed:\n{}", failures.len(), g.len(), failures.join("\n"));
}
