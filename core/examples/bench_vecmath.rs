//! The memory-bound float32 kernels of `cpu/vecmath` (exp, sigmoid, softmax, rms_norm,
//! layer_norm, rope, decode attention) through the public array API, at 1 and 2 threads, each
//! beside two anchors measured in the same run: a memcpy of the same number of bytes (what a
//! pass over this data can cost at best) and the same op at the portable kernel level.
//!
//! `cargo run --release -p mlx-arm-core --example bench_vecmath`
//! GB/s counts the bytes the op must read and write once; "of memcpy" is our GB/s over the
//! memcpy's (read + write) GB/s, "× portable" the portable level's time over ours.
//! `MLX_ARM_ISA=avx2|…` picks the SIMD level compared (default: the best one here).

#[path = "common/mod.rs"]
mod common;
use mlx_arm_core::cpu::isa::{self, Isa};
use mlx_arm_core::ops::fast::{RopeOffset, SdpaMask};
use mlx_arm_core::{ops, Array};

/// Values in [-scale, scale), evaluated.
fn arr(shape: &[usize], seed: u32, scale: f32) -> Array {
    let v: Vec<f32> = common::fill(shape.iter().product(), seed).into_iter().map(|x| x * scale).collect();
    let a = Array::from_slice(&v, shape).unwrap();
    a.eval().unwrap();
    a
}

/// One case: name, the op, and the bytes it must move (inputs read + output written once).
struct Case {
    name: &'static str,
    run: Box<dyn Fn()>,
    bytes: usize,
}

/// Seconds for one memcpy of `bytes / 2` bytes (so `bytes` of traffic, read + write).
fn memcpy_seconds(bytes: usize) -> f64 {
    let n = bytes / 2 / 4;
    let src: Vec<u32> = (0..n as u32).collect();
    let mut dst = vec![0u32; n];
    common::median_seconds(1, 7, || {
        dst.copy_from_slice(&src);
        std::hint::black_box(&mut dst);
    })
}

fn main() {
    let level = isa::isa();
    let ev = |a: Array| a.eval().unwrap();
    let (x16m, s, xn, wn, bn) = (arr(&[16 << 20], 1, 20.0), arr(&[32, 32000], 2, 10.0), arr(&[64, 4096], 3, 2.0), arr(&[4096], 4, 1.0), arr(&[4096], 5, 1.0));
    let rx = arr(&[1, 32, 512, 128], 6, 1.0);
    let q = arr(&[1, 32, 1, 128], 7, 1.0);
    let (kk, vv) = (arr(&[1, 8, 4096, 128], 8, 1.0), arr(&[1, 8, 4096, 128], 9, 1.0));
    let f = 4usize;
    let cases = vec![
        Case { name: "exp f32 16M", run: Box::new({ let x = x16m.clone(); move || ev(ops::exp(&x).unwrap()) }), bytes: 2 * f * (16 << 20) },
        Case { name: "sigmoid f32 16M", run: Box::new({ let x = x16m.clone(); move || ev(ops::sigmoid(&x).unwrap()) }), bytes: 2 * f * (16 << 20) },
        Case { name: "softmax f32 32x32000 (fused)", run: Box::new({ let s = s.clone(); move || ev(ops::softmax(&s, Some(&[-1]), false).unwrap()) }), bytes: 2 * f * 32 * 32000 },
        Case { name: "rms_norm f32 64x4096", run: Box::new({ let (x, w) = (xn.clone(), wn.clone()); move || ev(ops::fast::rms_norm(&x, Some(&w), 1e-5).unwrap()) }), bytes: 2 * f * 64 * 4096 },
        Case { name: "layer_norm f32 64x4096", run: Box::new({ let (x, w, b) = (xn.clone(), wn.clone(), bn.clone()); move || ev(ops::fast::layer_norm(&x, Some(&w), Some(&b), 1e-5).unwrap()) }), bytes: 2 * f * 64 * 4096 },
        Case { name: "rope f32 32h x 512 x 128", run: Box::new({ let x = rx.clone(); move || ev(ops::fast::rope(&x, 128, false, Some(10000.0), 1.0, RopeOffset::Int(7), None).unwrap()) }), bytes: 2 * f * 32 * 512 * 128 },
        Case { name: "sdpa decode 32q/8kv x 4096 x 128", run: Box::new({ let (q, k, v) = (q.clone(), kk.clone(), vv.clone()); move || ev(ops::fast::scaled_dot_product_attention(&q, &k, &v, 0.0884, SdpaMask::None).unwrap()) }), bytes: 2 * f * 8 * 4096 * 128 },
    ];
    println!("machine: {} cores, SIMD level: {}", std::thread::available_parallelism().map_or(1, |c| c.get()), level.name());
    println!("{:<34} {:>3} {:>11} {:>13} {:>9} {:>13} {:>10}", "case", "thr", "mlx-arm", "memcpy same B", "of memcpy", "portable", "x portable");
    for threads in [1usize, 2] {
        mlx_arm_core::parallel::set_parallel_for(if threads == 1 { Some(common::serial) } else { None });
        mlx_arm_core::parallel::set_num_threads(threads);
        for c in &cases {
            let gbs = |t: f64| c.bytes as f64 / t / 1e9;
            isa::set_isa(level).unwrap();
            let ours = common::median_seconds(1, 7, &c.run);
            isa::set_isa(Isa::Portable).unwrap();
            let portable = common::median_seconds(1, 7, &c.run);
            isa::set_isa(level).unwrap();
            // The memcpy anchor is single-threaded: at 2 threads "of memcpy" can pass 100 %.
            let copy = memcpy_seconds(c.bytes);
            println!(
                "{:<34} {:>3} {:>6.1} GB/s {:>8.1} GB/s {:>8.0}% {:>8.1} GB/s {:>9.2}x",
                c.name,
                threads,
                gbs(ours),
                gbs(copy),
                100.0 * copy / ours,
                gbs(portable),
                portable / ours
            );
        }
    }
}
