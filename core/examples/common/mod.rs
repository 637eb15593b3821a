//! Shared by the benchmark programs: the timing rule every figure in docs/BENCHMARKS.md uses.

use std::time::Instant;

/// Deterministic test values in [-1, 1) (no RNG dependency).
#[allow(dead_code)]
pub fn fill(n: usize, seed: u32) -> Vec<f32> {
    (0..n as u32).map(|i| ((i.wrapping_mul(2654435761) ^ seed) % 2000) as f32 / 1000.0 - 1.0).collect()
}

/// A `parallel_for` that runs the body on the calling thread only (the 1-thread figures).
#[allow(dead_code)]
pub fn serial(n: usize, _grain: usize, body: &(dyn Fn(std::ops::Range<usize>) + Sync)) {
    body(0..n)
}

/// Median wall time of `runs` calls of `f`, after `warmup` uncounted calls.
pub fn median_seconds(warmup: usize, runs: usize, mut f: impl FnMut()) -> f64 {
    for _ in 0..warmup {
        f();
    }
    let mut s: Vec<f64> = (0..runs.max(1))
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .collect();
    s.sort_by(|a, b| a.total_cmp(b));
    s[s.len() / 2]
}

/// (memcpy GB/s counting read + write, read-only GB/s) over 256 MiB.
#[allow(dead_code)]
pub fn bandwidth() -> (f64, f64) {
    let n = 64 * 1024 * 1024;
    let src: Vec<u32> = (0..n as u32).collect();
    let mut dst = vec![0u32; n];
    let copy = median_seconds(1, 5, || {
        dst.copy_from_slice(&src);
        std::hint::black_box(&mut dst);
    });
    // An integer sum vectorizes freely (no float reassociation), so this is bound by reads.
    // 16 independent lanes so the loop is bound by loads, not by one add chain.
    let read = median_seconds(1, 5, || {
        let s = src.chunks_exact(16).fold([0u32; 16], |mut a, c| {
            for (x, &y) in a.iter_mut().zip(c) {
                *x = x.wrapping_add(y);
            }
            a
        });
        std::hint::black_box(s);
    });
    ((8 * n) as f64 / copy / 1e9, (4 * n) as f64 / read / 1e9)
}
