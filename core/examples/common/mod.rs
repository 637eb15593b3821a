//! Shared by the benchmark programs: the timing rule every figure in docs/BENCHMARKS.md uses.

use std::time::Instant;

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
