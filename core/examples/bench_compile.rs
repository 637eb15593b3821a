//! `compile` fusion (issue 19): a chain of 8 elementwise ops on 16M float32, uncompiled (8
//! kernels, 8 passes over memory) and compiled (one fused kernel, one pass), beside a memcpy
//! of the same bytes (64 MiB read + 64 MiB written) in the same run — the floor a one-pass
//! kernel can reach.
//!
//! `cargo run --release -p mlx-arm-core --example bench_compile [-- --n ELEMENTS]`

#[path = "common/mod.rs"]
mod common;
use mlx_arm_core::parallel::parallel_for;
use mlx_arm_core::ops::fused::{FusedOp, Step};
use mlx_arm_core::ops::BinaryOp;
use mlx_arm_core::primitive::Primitive;
use mlx_arm_core::transforms::compile::{compile, fused_steps};
use mlx_arm_core::{ops, Array, DType, Result};
use std::sync::Arc;

/// The 8-op chain: scale, shift, subtract the input, abs, square, clamp below, sqrt, negate.
fn chain(x: &[Array]) -> Result<Vec<Array>> {
    let s = |v: f32| Array::scalar(v);
    let t = ops::multiply(&x[0], &s(1.5)?)?;
    let t = ops::add(&t, &s(0.25)?)?;
    let t = ops::subtract(&t, &x[0])?;
    let t = ops::abs(&t)?;
    let t = ops::square(&t)?;
    let t = ops::maximum(&t, &s(0.1)?)?;
    let t = ops::sqrt(&t)?;
    Ok(vec![ops::negative(&t)?])
}

/// 8 ops with no scalar operands (every binary op reads two full arrays): the pure fusion
/// effect, without the uncompiled path's cost of reading a broadcast scalar.
fn chain_full(x: &[Array]) -> Result<Vec<Array>> {
    let t = ops::multiply(&x[0], &x[0])?;
    let t = ops::add(&t, &x[0])?;
    let t = ops::abs(&t)?;
    let t = ops::subtract(&t, &x[0])?;
    let t = ops::square(&t)?;
    let t = ops::maximum(&t, &x[0])?;
    let t = ops::sqrt(&t)?;
    Ok(vec![ops::negative(&t)?])
}

/// A raw pointer parallel chunks write disjoint ranges of.
#[derive(Clone, Copy)]
struct Dst(*mut f32);
unsafe impl Send for Dst {}
unsafe impl Sync for Dst {}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args.iter().position(|a| a == "--n").and_then(|i| args.get(i + 1)).and_then(|v| v.parse().ok()).unwrap_or(16 << 20);
    let data: Vec<f32> = (0..n as u32).map(|i| (i % 1000) as f32 / 250.0 - 2.0).collect();
    let x = Array::from_slice(&data, &[n]).unwrap();
    let mut figures = Vec::new();
    for (name, f) in [("with scalar operands", chain as fn(&[Array]) -> Result<Vec<Array>>), ("array operands only", chain_full)] {
        let compiled = compile(Arc::new(f), false);
        // Same values first (the fused kernel runs the same per-element kernels).
        let (a, b) = (f(&[x.clone()]).unwrap(), compiled.call(&[x.clone()]).unwrap());
        assert_eq!(a[0].to_bytes().unwrap(), b[0].to_bytes().unwrap(), "compiled and uncompiled differ");
        let plain = common::median_seconds(2, 9, || f(&[x.clone()]).unwrap()[0].eval().unwrap());
        let fused = common::median_seconds(2, 9, || compiled.call(&[x.clone()]).unwrap()[0].eval().unwrap());
        figures.push((name, plain, fused));
    }
    let mut dst = vec![0f32; n];
    let copy1 = common::median_seconds(2, 9, || {
        dst.copy_from_slice(&data);
        std::hint::black_box(&mut dst);
    });
    // memcpy split over the same thread pool the kernels use.
    let p = Dst(dst.as_mut_ptr());
    let src = &data;
    let copy_mt = common::median_seconds(2, 9, || {
        parallel_for(n, 1 << 16, &|r| {
            let p = p;
            // SAFETY: disjoint ranges of a live buffer of n floats.
            let d = unsafe { std::slice::from_raw_parts_mut(p.0.add(r.start), r.len()) };
            d.copy_from_slice(&src[r]);
        })
    });
    let bytes = (8 * n) as f64; // 4 B read + 4 B written per element
    println!("8-op f32 chain on {n} elements, {} threads", mlx_arm_core::parallel::num_threads());
    println!("memcpy     {:8.2} ms 1 thread ({:.1} GB/s), {:.2} ms pooled ({:.1} GB/s)", copy1 * 1e3, bytes / copy1 / 1e9, copy_mt * 1e3, bytes / copy_mt / 1e9);
    for (name, plain, fused) in figures {
        println!("{name}:");
        println!("  uncompiled {:8.2} ms  ({:.1} GB/s effective)", plain * 1e3, bytes / plain / 1e9);
        println!("  compiled   {:8.2} ms  ({:.1} GB/s effective)", fused * 1e3, bytes / fused / 1e9);
        println!("  speedup    {:8.2}x  (goal >= 4x); compiled / pooled memcpy = {:.2}", plain / fused, fused / copy_mt);
    }
    single_broadcast_op(&x, n);
}

/// One multiply with a broadcast operand (a scalar, a row, a column), as MLX compiles it into
/// one `CompiledBroadcastMultiply` kernel: the ordinary binary kernel against a one-step fused
/// node, and what `compile` makes of `x * b` (which of the two it replays).
fn single_broadcast_op(x: &Array, n: usize) {
    let cols = 1024.min(n.max(1));
    let rows = n / cols;
    let x = ops::reshape(&ops::slice(x, &[0], &[(rows * cols) as isize], &[1]).unwrap(), &[rows as isize, cols as isize]).unwrap();
    x.eval().unwrap();
    let row: Vec<f32> = (0..cols).map(|i| 1.0 + i as f32 / cols as f32).collect();
    let column: Vec<f32> = (0..rows).map(|i| 1.0 + (i % 97) as f32 / 97.0).collect();
    let operands = [
        ("scalar", Array::scalar(1.5f32).unwrap()),
        ("row (1024,)", Array::from_slice(&row, &[cols]).unwrap()),
        ("column (rows, 1)", Array::from_slice(&column, &[rows, 1]).unwrap()),
    ];
    let program = std::sync::Arc::new(FusedOp {
        n_inputs: 2,
        steps: vec![Step { prim: Primitive::Binary(BinaryOp::Multiply), args: vec![0, 1], dtype: DType::Float32 }],
    });
    println!("one multiply with a broadcast operand, ({rows}, {cols}) float32:");
    println!("| operand | uncompiled ms (best of 15) | one-step fused ms | compiled ms | fused node in the compiled graph | uncompiled / fused |");
    println!("|---|---:|---:|---:|---|---:|");
    for (name, b) in operands {
        let f = |a: &[Array]| -> Result<Vec<Array>> { Ok(vec![ops::multiply(&a[0], &a[1])?]) };
        let compiled = compile(Arc::new(f), false);
        let (plain, fused) = (f(&[x.clone(), b.clone()]).unwrap(), FusedOp::record(&program, vec![x.clone(), b.clone()]).unwrap());
        let comp = compiled.call(&[x.clone(), b.clone()]).unwrap();
        let in_graph = fused_steps(&comp[0]).is_some();
        let want = plain[0].to_bytes().unwrap();
        assert_eq!(want, fused.to_bytes().unwrap(), "fused and uncompiled differ");
        assert_eq!(want, comp[0].to_bytes().unwrap(), "compiled and uncompiled differ");
        // The three in turn, round after round, so that load on a shared machine hits them
        // alike; the best round of each (on a loaded machine the median mixes in rounds
        // another job interrupted).
        let mut times: [Vec<f64>; 3] = Default::default();
        for round in 0..17 {
            let runs: [&dyn Fn() -> Array; 3] = [
                &|| f(&[x.clone(), b.clone()]).unwrap().remove(0),
                &|| FusedOp::record(&program, vec![x.clone(), b.clone()]).unwrap(),
                &|| compiled.call(&[x.clone(), b.clone()]).unwrap().remove(0),
            ];
            for (t, run) in times.iter_mut().zip(runs) {
                let t0 = std::time::Instant::now();
                run().eval().unwrap();
                if round >= 2 {
                    t.push(t0.elapsed().as_secs_f64());
                }
            }
        }
        let [t_plain, t_fused, t_comp] = times.map(|t| t.into_iter().fold(f64::INFINITY, f64::min));
        println!("| {name} | {:.2} | {:.2} | {:.2} | {} | {:.2} |", t_plain * 1e3, t_fused * 1e3, t_comp * 1e3, if in_graph { "yes" } else { "no" }, t_plain / t_fused);
    }
}
