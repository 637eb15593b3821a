//! The thread pool's fixed cost: time per `parallel_for` call whose chunks do (almost) no
//! work, at each thread count — the floor under every threaded kernel of a decode step, which
//! issues a few hundred small ones. A diagnostic for issue 17's "no kernel is slower with N
//! threads than with one", not a benchmark against an anchor.
//!
//! `cargo run --release -p mlx-arm-core --example bench_pool [-- THREADS...]`

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use mlx_arm_core::parallel::{parallel_for, set_num_threads};

/// Mean µs per call over `calls` calls of `parallel_for(n, 1, body)` after a warm-up.
fn per_call_us(n: usize, calls: usize, body: &(dyn Fn(std::ops::Range<usize>) + Sync)) -> f64 {
    for _ in 0..calls / 10 {
        parallel_for(n, 1, body);
    }
    let t = Instant::now();
    for _ in 0..calls {
        parallel_for(n, 1, body);
    }
    t.elapsed().as_secs_f64() * 1e6 / calls as f64
}

fn main() {
    let threads: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let threads = if threads.is_empty() { vec![1, 2, 4, 8, 16] } else { threads };
    let sink = AtomicU64::new(0);
    let empty = |r: std::ops::Range<usize>| {
        black_box(r);
    };
    // ~1 µs of arithmetic per index: the size of one thread's share of a small decode GEMV.
    let small = |r: std::ops::Range<usize>| {
        let mut acc = 0u64;
        for i in r {
            for j in 0..1000u64 {
                acc = acc.wrapping_mul(6364136223846793005).wrapping_add(j ^ i as u64);
            }
        }
        sink.fetch_add(acc & 1, Ordering::Relaxed);
    };
    println!("| threads | empty, n = 4·threads (µs/call) | empty, n = 12 (µs/call) | 1 µs per index, n = 4·threads (µs/call) | same, serial (µs) | 1 µs per index, n = 12 (µs/call) |");
    println!("|---:|---:|---:|---:|---:|---:|");
    for t in threads {
        set_num_threads(t);
        let n = 4 * t;
        let e = per_call_us(n, 20_000, &empty);
        // 12 chunks: a decode step's 576-row GEMV (48-row tasks) or 9-head attention, fewer
        // chunks than threads at 16.
        let e12 = per_call_us(12, 20_000, &empty);
        let s = per_call_us(n, 5_000, &small);
        let s12 = per_call_us(12, 5_000, &small);
        let t0 = Instant::now();
        for _ in 0..100 {
            small(0..n);
        }
        let serial = t0.elapsed().as_secs_f64() * 1e6 / 100.0;
        println!("| {t} | {e:.2} | {e12:.2} | {s:.2} | {serial:.2} | {s12:.2} |");
    }
}
