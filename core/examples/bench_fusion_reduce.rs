//! `compile` fusing an elementwise chain into the reduction that reads it (helper fu29):
//! MLX programs whose elementwise prologue feeds a sum / max, on 16M float32 elements,
//! uncompiled (the chain's kernels write a 64 MiB temporary each, the reduction reads it back)
//! and compiled (one fused reduction: the inputs read once, nothing written but the result).
//! Each pair is checked bit-equal first, and the compiled graph's kernels are printed.
//! Threads: all of the pool, then each count given with `--threads` (e.g. `--threads 1,2`).
//!
//! `cargo run --release -p mlx-arm-core --example bench_fusion_reduce [-- --n ELEMENTS --threads 1,2]`

#[path = "common/mod.rs"]
mod common;
use mlx_arm_core::transforms::compile::{compile, kernels};
use mlx_arm_core::{ops, Array, Result};
use std::sync::Arc;

/// Row length of the row-wise programs.
const COLS: usize = 4096;

fn two() -> Result<Array> {
    Array::scalar(2.0f32)
}

/// `sum(x * y)`: a dot product.
fn dot(x: &[Array]) -> Result<Vec<Array>> {
    Ok(vec![ops::sum(&ops::multiply(&x[0], &x[1])?, None, false)?])
}

/// `mean(square(a - b))`: a mean squared error.
fn mse(x: &[Array]) -> Result<Vec<Array>> {
    Ok(vec![ops::mean(&ops::square(&ops::subtract(&x[0], &x[1])?)?, None, false)?])
}

/// `sqrt(sum(x ** 2, -1))`: row norms.
fn norm(x: &[Array]) -> Result<Vec<Array>> {
    Ok(vec![ops::sqrt(&ops::sum(&ops::power(&x[0], &two()?)?, Some(&[-1]), false)?)?])
}

/// `mean((x - mean(x, -1)) ** 2, -1)`: row variances written by hand.
fn variance(x: &[Array]) -> Result<Vec<Array>> {
    let m = ops::mean(&x[0], Some(&[-1]), true)?;
    Ok(vec![ops::mean(&ops::power(&ops::subtract(&x[0], &m)?, &two()?)?, Some(&[-1]), false)?])
}

/// `log(sum(exp(x - max(x, -1)), -1)) + max`: logsumexp written by hand.
fn logsumexp(x: &[Array]) -> Result<Vec<Array>> {
    let m = ops::max(&x[0], Some(&[-1]), true)?;
    let s = ops::sum(&ops::exp(&ops::subtract(&x[0], &m)?)?, Some(&[-1]), true)?;
    Ok(vec![ops::add(&ops::log(&s)?, &m)?])
}

/// The 8-op chain over 9 distinct arrays (`((a·b + c − d)·e + f − g)·h + i`): unfused
/// 8 kernels move 24 arrays (2 read + 1 written each), fused 10 (9 read + 1 written), so
/// memory traffic bounds the gain at 24 / 10 = 2.4× (the all-array row of issue 19's
/// checklist); printed beside that bound.
fn chain9(x: &[Array]) -> Result<Vec<Array>> {
    let t = ops::add(&ops::multiply(&x[0], &x[1])?, &x[2])?;
    let t = ops::multiply(&ops::subtract(&t, &x[3])?, &x[4])?;
    let t = ops::multiply(&ops::subtract(&ops::add(&t, &x[5])?, &x[6])?, &x[7])?;
    Ok(vec![ops::add(&t, &x[8])?])
}

type Prog = fn(&[Array]) -> Result<Vec<Array>>;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |k: &str| args.iter().position(|a| a == k).and_then(|i| args.get(i + 1)).cloned();
    let n: usize = arg("--n").and_then(|v| v.parse().ok()).unwrap_or(16 << 20);
    let mut threads: Vec<usize> = vec![mlx_arm_core::parallel::num_threads()];
    if let Some(t) = arg("--threads") {
        threads.extend(t.split(',').filter_map(|v| v.parse::<usize>().ok()));
    }
    let rows = n / COLS;
    let x = Array::from_slice(&common::fill(rows * COLS, 1), &[rows, COLS]).unwrap();
    let y = Array::from_slice(&common::fill(rows * COLS, 2), &[rows, COLS]).unwrap();
    let nine: Vec<Array> = (0..9).map(|k| Array::from_slice(&common::fill(rows * COLS, 10 + k), &[rows * COLS]).unwrap()).collect();
    let programs: [(&str, Prog, Vec<Array>); 6] = [
        ("sum(x*y)", dot, vec![x.clone(), y.clone()]),
        ("mean(square(a-b))", mse, vec![x.clone(), y.clone()]),
        ("sqrt(sum(x**2,-1))", norm, vec![x.clone()]),
        ("mean((x-mean(x,-1))**2,-1)", variance, vec![x.clone()]),
        ("logsumexp by hand", logsumexp, vec![x.clone()]),
        ("8 ops, 9 arrays (bound 2.4x)", chain9, nine),
    ];
    println!("fused reductions on {rows} x {COLS} float32 ({} elements)", rows * COLS);
    for &t in &threads {
        mlx_arm_core::parallel::set_num_threads(t);
        println!("{t} thread(s):");
        println!("  {:28} {:>10} {:>10} {:>7}  kernels (compiled)", "program", "unfused ms", "fused ms", "ratio");
        for (name, f, inputs) in &programs {
            let c = compile(Arc::new(*f), false);
            let (a, b) = (f(inputs).unwrap(), c.call(inputs).unwrap());
            let ks = kernels(&b).join(" ");
            assert_eq!(a[0].to_bytes().unwrap(), b[0].to_bytes().unwrap(), "{name}: compiled and uncompiled differ");
            let plain = common::median_seconds(2, 9, || f(inputs).unwrap()[0].eval().unwrap());
            let fused = common::median_seconds(2, 9, || c.call(inputs).unwrap()[0].eval().unwrap());
            println!("  {:28} {:10.2} {:10.2} {:6.2}x  {ks}", name, plain * 1e3, fused * 1e3, plain / fused);
        }
    }
}
