//! The array-level `mx.random` API (and `mx.erfinv`) against real MLX 0.32: goldens from
//! `data/random_ops/gen_random_ops.py`. Every sample is compared exactly (floats by value,
//! which for f32/f16/bf16 is their bit pattern up to the sign of zero and NaN payloads;
//! zeros are also compared by sign). Errors must have the same kind and message.

mod common;

use mlx_arm_core::ops::random::{self, Param};
use mlx_arm_core::{ops, Array, DType, Error, ErrorKind};
use serde_json::Value as J;

fn u64s(v: &J) -> Vec<u64> {
    v.as_array().unwrap().iter().map(|x| x.as_u64().unwrap()).collect()
}

fn usizes(v: &J) -> Vec<usize> {
    u64s(v).into_iter().map(|x| x as usize).collect()
}

fn opt_shape(v: &J) -> Option<Vec<usize>> {
    if v.is_null() {
        None
    } else {
        Some(usizes(v))
    }
}

fn num(v: &J) -> f64 {
    match v {
        J::String(s) if s == "inf" => f64::INFINITY,
        J::String(s) if s == "-inf" => f64::NEG_INFINITY,
        J::String(s) if s == "nan" => f64::NAN,
        v => v.as_f64().unwrap(),
    }
}

fn dtype(v: &J) -> DType {
    DType::from_name(v.as_str().unwrap()).unwrap()
}

fn key_of(c: &J) -> Array {
    let w: Vec<u32> = u64s(&c["key"]).into_iter().map(|x| x as u32).collect();
    Array::from_slice(&w, &[2]).unwrap()
}

/// A JSON parameter: an encoded array or a number (f32, like a Python float in MLX).
fn param(v: &J) -> Param {
    if v.is_object() {
        Param::Array(common::array(v))
    } else {
        Param::Scalar(num(v))
    }
}

fn opt_param(v: &J) -> Option<Param> {
    if v.is_null() {
        None
    } else {
        Some(param(v))
    }
}

/// Runs one case; `Ok(outputs)` or the error.
fn run(c: &J) -> Result<Vec<Array>, Error> {
    let one = |r: Result<Array, Error>| r.map(|a| vec![a]);
    let key = || key_of(c);
    let shape = || usizes(&c["shape"]);
    match c["op"].as_str().unwrap() {
        "key" => one(random::key(c["seed"].as_u64().unwrap())),
        "split" => one(random::split(&key(), c["num"].as_u64().unwrap() as usize)),
        "uniform" => {
            let k = if c.get("badkey").is_some() { common::array(&c["badkey"]) } else { key() };
            one(random::uniform(param(&c["low"]), param(&c["high"]), &shape(), dtype(&c["dtype"]), Some(&k)))
        }
        "normal" => one(random::normal(
            &shape(),
            dtype(&c["dtype"]),
            opt_param(&c["loc"]),
            opt_param(&c["scale"]),
            Some(&key()),
        )),
        "truncated_normal" => {
            let sh = opt_shape(&c["shape"]);
            one(random::truncated_normal(
                num(&c["lower"]) as f32,
                num(&c["upper"]) as f32,
                sh.as_deref(),
                dtype(&c["dtype"]),
                Some(&key()),
            ))
        }
        "gumbel" => one(random::gumbel(&shape(), dtype(&c["dtype"]), Some(&key()))),
        "laplace" => one(random::laplace(
            &shape(),
            dtype(&c["dtype"]),
            num(&c["loc"]) as f32,
            num(&c["scale"]) as f32,
            Some(&key()),
        )),
        "bernoulli" => {
            let sh = opt_shape(&c["shape"]);
            let mut p = param(&c["p"]);
            if let (Param::Array(a), Some(_)) = (&p, c.get("transpose")) {
                p = Param::Array(ops::transpose(a, None).unwrap());
            }
            one(random::bernoulli(p, sh.as_deref(), Some(&key())))
        }
        "randint" => one(random::randint(
            c["low"].as_i64().unwrap() as i32,
            c["high"].as_i64().unwrap() as i32,
            &shape(),
            dtype(&c["dtype"]),
            Some(&key()),
        )),
        "categorical" => {
            let mut logits = common::array(&c["logits"]);
            if c.get("transpose").is_some() {
                logits = ops::transpose(&logits, None).unwrap();
            }
            let sh = opt_shape(&c["shape"]);
            let ns = c["num_samples"].as_u64().map(|n| n as usize);
            one(random::categorical(&logits, c["axis"].as_i64().unwrap() as isize, sh.as_deref(), ns, Some(&key())))
        }
        "permutation_n" => one(random::permutation_n(c["n"].as_u64().unwrap() as usize, Some(&key()))),
        "permutation" => {
            let x = common::array(&c["x"]);
            one(random::permutation(&x, c["axis"].as_i64().unwrap() as isize, Some(&key())))
        }
        "seeded" => {
            random::seed(c["seed"].as_u64().unwrap());
            Ok(vec![
                random::normal(&[5], DType::Float32, None, None, None)?,
                random::normal(&[2, 3], DType::Float16, None, None, None)?,
                random::uniform(0.0f32, 1.0f32, &[4], DType::Float32, None)?,
                random::randint(0, 100, &[6], DType::Int32, None)?,
                random::bernoulli(0.5f32, Some(&[8]), None)?,
                random::split(&random::key(1)?, 2)?,
            ])
        }
        "erfinv" => one(ops::erfinv(&common::array(&c["x"]))),
        other => panic!("unknown op {other}"),
    }
}

/// Exact comparison of one output with its golden (float outputs by bit pattern); `None`
/// when equal.
fn compare(got: &Array, want: &J) -> Option<String> {
    let wd = want["dtype"].as_str().unwrap();
    if got.dtype().name() != wd {
        return Some(format!("dtype {} != {wd}", got.dtype()));
    }
    let ws = usizes(&want["shape"]);
    if got.shape() != &ws[..] {
        return Some(format!("shape {:?} != {ws:?}", got.shape()));
    }
    if let Err(e) = got.eval() {
        return Some(format!("evaluation failed: {e}"));
    }
    if let Some(bits) = want.get("bits") {
        let want_bits = u64s(bits);
        let got_bits: Vec<u64> = match got.dtype() {
            DType::Float32 => got.to_vec::<f32>().unwrap().iter().map(|x| u64::from(x.to_bits())).collect(),
            DType::Float16 => got.to_vec::<half::f16>().unwrap().iter().map(|x| u64::from(x.to_bits())).collect(),
            DType::Bfloat16 => got.to_vec::<half::bf16>().unwrap().iter().map(|x| u64::from(x.to_bits())).collect(),
            DType::Float64 => got.to_vec::<f64>().unwrap().iter().map(|x| x.to_bits()).collect(),
            d => return Some(format!("bits given for {d}")),
        };
        // NaN payloads are not compared: MLX's half conversions make their own NaN patterns
        // (bf16 0x7fc0, f16 0xfd00 for erfinv(2)), which `astype` here does not imitate.
        let is_nan = |b: u64| match got.dtype() {
            DType::Float32 => f32::from_bits(b as u32).is_nan(),
            DType::Float16 => half::f16::from_bits(b as u16).is_nan(),
            DType::Bfloat16 => half::bf16::from_bits(b as u16).is_nan(),
            _ => f64::from_bits(b).is_nan(),
        };
        let same = |i: usize| match got_bits.get(i) {
            Some(&g) => g == want_bits[i] || (is_nan(g) && is_nan(want_bits[i])),
            None => false,
        };
        let bad: Vec<usize> = (0..want_bits.len()).filter(|&i| !same(i)).collect();
        return bad.first().map(|&i| {
            format!("{} of {} differ in bits; first element {i}: got {:?} want {:#x}", bad.len(), want_bits.len(), got_bits.get(i), want_bits[i])
        });
    }
    let g = common::values(got);
    let w = want["data"].as_array().unwrap();
    let mut bad = 0;
    let mut first = None;
    for (i, (x, y)) in g.iter().zip(w).enumerate() {
        let y = if y.is_boolean() { y.as_bool().unwrap() as u8 as f64 } else { num(y) };
        let same = (x.0.is_nan() && y.is_nan()) || (x.0 == y && x.0.is_sign_negative() == y.is_sign_negative());
        if !same {
            bad += 1;
            first.get_or_insert(format!("element {i}: got {} want {y}", x.0));
        }
    }
    first.map(|f| format!("{bad} of {} differ; first {f}", w.len()))
}

fn kind_of(py: &str) -> Vec<ErrorKind> {
    match py {
        "ValueError" => vec![ErrorKind::InvalidArgument],
        "IndexError" => vec![ErrorKind::Index],
        "TypeError" => vec![ErrorKind::Type],
        "RuntimeError" => vec![ErrorKind::Runtime],
        other => panic!("unexpected python error {other}"),
    }
}

/// Cases whose MLX message we do not reproduce word for word (the broadcast message is the
/// shared `broadcast_shapes` helper's, which prints shapes as Rust lists). Messages that MLX
/// raises without an `[op]` tag are compared without ours.
fn message_exempt(msg: &str) -> bool {
    msg.starts_with("[broadcast_shapes]")
}

#[test]
fn random_ops_match_mlx() {
    let g = common::load("random_ops/random_ops.json");
    assert_eq!(g["mlx_version"].as_str().unwrap(), "0.32.4");
    let mut failures = Vec::new();
    let cases = g["cases"].as_array().unwrap();
    for c in cases {
        let name = c["name"].as_str().unwrap();
        let r = run(c);
        if let Some(err) = c.get("error") {
            let msg = c["message"].as_str().unwrap();
            match r {
                Ok(outs) => {
                    // MLX may fail at evaluation; so may we.
                    let ev: Result<(), Error> = outs.iter().try_for_each(|a| a.eval());
                    match ev {
                        Err(e) if kind_of(err.as_str().unwrap()).contains(&e.kind) => {}
                        other => failures.push(format!("{name}: expected {err} ({msg}), got {other:?}")),
                    }
                }
                Err(e) => {
                    if !kind_of(err.as_str().unwrap()).contains(&e.kind) {
                        failures.push(format!("{name}: expected {err} ({msg}), got {e:?}"));
                    } else if !message_exempt(msg) && e.to_string() != msg && e.msg != msg {
                        failures.push(format!("{name}: message {:?} != MLX {msg:?}", e.to_string()));
                    }
                }
            }
            continue;
        }
        let outs = match r {
            Ok(o) => o,
            Err(e) => {
                failures.push(format!("{name}: unexpected error {e}"));
                continue;
            }
        };
        let wants: Vec<&J> = match c.get("outputs") {
            Some(o) => o.as_array().unwrap().iter().collect(),
            None => vec![&c["output"]],
        };
        if outs.len() != wants.len() {
            failures.push(format!("{name}: {} outputs, want {}", outs.len(), wants.len()));
            continue;
        }
        for (i, (o, w)) in outs.iter().zip(wants).enumerate() {
            if let Some(f) = compare(o, w) {
                failures.push(format!("{name} [output {i}]: {f}"));
            }
        }
    }
    assert!(failures.is_empty(), "{} of {} cases fail:\n{}", failures.len(), cases.len(), failures.join("\n"));
}

/// A rejected call must not advance the global key sequence (MLX validates before `next()`).
#[test]
fn failed_sampler_does_not_advance_the_key_sequence() {
    random::seed(11);
    let a = random::normal(&[4], DType::Float32, None, None, None).unwrap().to_vec::<f32>().unwrap();
    random::seed(11);
    assert!(random::uniform(0.0f32, 1.0f32, &[2], DType::Int32, None).is_err());
    assert!(random::randint(0, 3, &[2], DType::Float32, None).is_err());
    let b = random::normal(&[4], DType::Float32, None, None, None).unwrap().to_vec::<f32>().unwrap();
    assert_eq!(a.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), b.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
}

/// `bits` (C++-only in MLX) widths 1 and 2 are the little-endian bytes of the width-4 words;
/// the width-4 words are `split`'s (checked against MLX above).
#[test]
fn bits_widths_share_one_byte_stream() {
    let k = random::key(42).unwrap();
    let w = random::bits(&[3], 4, Some(&k)).unwrap().to_vec::<u32>().unwrap();
    let b = random::bits(&[11], 1, Some(&k)).unwrap().to_vec::<u8>().unwrap();
    let h = random::bits(&[5], 2, Some(&k)).unwrap().to_vec::<u16>().unwrap();
    let bytes: Vec<u8> = w.iter().flat_map(|x| x.to_le_bytes()).collect();
    assert_eq!(b, bytes[..11]);
    let halves: Vec<u16> = bytes.chunks_exact(2).take(5).map(|c| u16::from_le_bytes([c[0], c[1]])).collect();
    assert_eq!(h, halves);
    // split(key, 3) words are bits((3, 2)).
    let s = random::split(&k, 3).unwrap().to_vec::<u32>().unwrap();
    assert_eq!(s, random::bits(&[3, 2], 4, Some(&k)).unwrap().to_vec::<u32>().unwrap());
    let e = random::bits(&[2], 3, Some(&k)).unwrap_err();
    assert_eq!(e.to_string(), "[bits] Bit width must be in {1, 2, 4} but got 3.");
}
