//! Our float GEMM beside OpenBLAS's sgemm, case by case in alternating order over several rounds
//! (issue 17's "≥ 1.0× OpenBLAS at 2 threads"): on a machine other work also loads, a ratio is
//! only worth quoting when both sides were timed back to back, and alternating which side goes
//! first cancels a drift in the load. Cases: square row-major products at 512/1024/2048 and the
//! short wide Linear product `x @ Wᵀ` (64×4096 times the 4096×4096 W stored [out, in]), f32 and
//! f16 inputs (f32 accumulation; OpenBLAS has no f16 GEMM, so f16 rows compare with its sgemm on
//! the same shape). Both libraries at kernel level on the same buffers (ours: the core's `gemm`;
//! OpenBLAS: the provider's entry, i.e. `cblas_sgemm`).
//!
//! Output: per case and round ours and OpenBLAS in GFLOP/s and the ratio (> 1: ours faster), then
//! the median ratio over the rounds. Threads: `MLX_ARM_NUM_THREADS` (OpenBLAS follows it).
//!
//! `--cpu` times one thread by its own CPU clock (`CLOCK_THREAD_CPUTIME_ID`), the fastest of the
//! runs: on a machine where other jobs take turns on the cores, wall time measures the queue, CPU
//! time mostly the code (cache pollution by the neighbours still counts).
//!
//! `cargo build --release -p mlx-arm-openblas --example bench_gemm_rounds`, then
//! `MLX_ARM_NUM_THREADS=2 ./bench_gemm_rounds [--rounds R] [--only SUBSTR] [--no-2048] [--cpu]`.

#[path = "../../../core/examples/common/mod.rs"]
mod common;

use half::f16;
use mlx_arm_core::cpu::gemm::{gemm, GemmIn, MatMut, MatRef};
use mlx_arm_core::cpu::gemm_provider::BlasGemm;
use mlx_arm_openblas as openblas;
use std::time::Duration;

#[repr(C)]
struct Timespec {
    sec: i64,
    nsec: i64,
}
extern "C" {
    fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
}
/// Linux's CLOCK_THREAD_CPUTIME_ID.
const THREAD_CPU: i32 = 3;

fn thread_cpu_seconds() -> f64 {
    let mut ts = Timespec { sec: 0, nsec: 0 };
    // SAFETY: `ts` is a valid out-pointer.
    unsafe { clock_gettime(THREAD_CPU, &mut ts) };
    ts.sec as f64 + ts.nsec as f64 * 1e-9
}

/// Whether `--cpu` was given (one thread, CPU-clock minimum).
static CPU_CLOCK: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Seconds per call of `f`: the wall-time median after a warm-up, or with `--cpu` the least
/// thread CPU time of the runs.
fn seconds(runs: usize, mut f: impl FnMut()) -> f64 {
    if !CPU_CLOCK.load(std::sync::atomic::Ordering::Relaxed) {
        return common::median_seconds(1, runs, f);
    }
    f();
    (0..runs * 2)
        .map(|_| {
            let t = thread_cpu_seconds();
            f();
            thread_cpu_seconds() - t
        })
        .fold(f64::INFINITY, f64::min)
}

/// Longer than OpenBLAS's default idle spin (its workers yield ~0.1 s after a call).
const OPENBLAS_SETTLE: Duration = Duration::from_millis(300);

/// One product shape: C (m×n) = A (m×k, row-major) · B, B row-major k×n or (`linear`) the
/// transpose of a row-major n×k W.
struct Case {
    m: usize,
    n: usize,
    k: usize,
    linear: bool,
    f16: bool,
}

impl Case {
    fn name(&self) -> String {
        let t = if self.f16 { "f16" } else { "f32" };
        let l = if self.linear { " x@Wt" } else { "" };
        format!("{t} {}x{}x{}{l}", self.m, self.k, self.n)
    }
    fn runs(&self) -> usize {
        if self.m * self.n * self.k >= 1 << 30 {
            5
        } else {
            9
        }
    }
    fn flops(&self) -> f64 {
        2.0 * (self.m * self.n * self.k) as f64
    }
    /// B's (row stride, column stride) in elements.
    fn b_strides(&self) -> (isize, isize) {
        if self.linear {
            (1, self.k as isize)
        } else {
            (self.n as isize, 1)
        }
    }
}

/// Our GEMM in GFLOP/s on the inputs converted to `S`.
fn ours<S: GemmIn<f32>>(case: &Case, a: &[f32], b: &[f32], c: &mut [f32], from: fn(f32) -> S) -> f64 {
    let (a, b): (Vec<S>, Vec<S>) = (a.iter().map(|&x| from(x)).collect(), b.iter().map(|&x| from(x)).collect());
    let (brs, bcs) = case.b_strides();
    let s = seconds(case.runs(), || unsafe {
        // SAFETY: A is m×k row-major, B k×n through its strides, C m×n.
        gemm(case.m, case.n, case.k, 1.0, MatRef::new(a.as_ptr(), case.k as isize, 1), MatRef::new(b.as_ptr(), brs, bcs), 0.0, MatMut::new(c.as_mut_ptr(), case.n), true)
    });
    case.flops() / s / 1e9
}

/// OpenBLAS's sgemm in GFLOP/s on the f32 inputs.
fn blas(case: &Case, a: &[f32], b: &[f32], c: &mut [f32]) -> f64 {
    let ldb = if case.linear { case.k } else { case.n };
    let call = BlasGemm { trans_a: false, trans_b: case.linear, m: case.m, n: case.n, k: case.k, alpha: 1.0, a: a.as_ptr(), lda: case.k, b: b.as_ptr(), ldb, beta: 0.0, c: c.as_mut_ptr(), ldc: case.n };
    let s = seconds(case.runs(), || unsafe {
        // SAFETY: the buffers hold the shapes `call` describes.
        assert!((openblas::PROVIDER.sgemm)(&call));
    });
    if !CPU_CLOCK.load(std::sync::atomic::Ordering::Relaxed) {
        std::thread::sleep(OPENBLAS_SETTLE);
    }
    case.flops() / s / 1e9
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let rounds: usize = arg("--rounds").and_then(|r| r.parse().ok()).unwrap_or(3);
    let only = arg("--only");
    let big = !args.iter().any(|a| a == "--no-2048");
    let mut cases = Vec::new();
    for f16 in [false, true] {
        for s in [512usize, 1024, 2048] {
            if s < 2048 || big {
                cases.push(Case { m: s, n: s, k: s, linear: false, f16 });
            }
        }
        cases.push(Case { m: 64, n: 4096, k: 4096, linear: true, f16 });
    }
    if args.iter().any(|a| a == "--cpu") {
        CPU_CLOCK.store(true, std::sync::atomic::Ordering::Relaxed);
        mlx_arm_core::parallel::set_num_threads(1);
    }
    cases.retain(|c| only.as_ref().is_none_or(|o| c.name().contains(o.as_str())));
    openblas::follow_core_threads();
    println!("threads: ours {} | OpenBLAS {} ({}) | rounds {rounds}", mlx_arm_core::parallel::num_threads(), openblas::threads(), openblas::config());
    println!("{:<24} {:>5} {:>8} {:>9} {:>6}", "case (GFLOP/s)", "round", "ours", "OpenBLAS", "ratio");
    for case in &cases {
        let (a, b) = (common::fill(case.m * case.k, 1), common::fill(case.k * case.n, 2));
        let mut c = vec![0f32; case.m * case.n];
        let mut ratios = Vec::new();
        for r in 0..rounds {
            let run_ours = |c: &mut [f32]| if case.f16 { ours(case, &a, &b, c, f16::from_f32) } else { ours(case, &a, &b, c, |x| x) };
            // Alternate which side goes first.
            let (o, bl) = if r % 2 == 0 {
                let o = run_ours(&mut c);
                (o, blas(case, &a, &b, &mut c))
            } else {
                let bl = blas(case, &a, &b, &mut c);
                (run_ours(&mut c), bl)
            };
            ratios.push(o / bl);
            println!("{:<24} {r:>5} {o:>8.1} {bl:>9.1} {:>6.2}", case.name(), o / bl);
        }
        ratios.sort_by(|x, y| x.total_cmp(y));
        println!("{:<24} median ratio {:.2} (min {:.2}, max {:.2})", case.name(), ratios[ratios.len() / 2], ratios[0], ratios[ratios.len() - 1]);
    }
}
