//! Our float GEMM beside OpenBLAS's (issue 17: OpenBLAS is the yardstick) and PyTorch CPU's on the
//! same threads: square products at 512/1024/2048 with f32, f16 and bf16 inputs (f32
//! accumulation) and a decode-style GEMV (`y = W·x`, W 4096×4096 stored [out, in], f32 and f16).
//! Both libraries are called at kernel level on the same buffers (ours: the core's `gemm`, which
//! runs its GEMV path for one row; OpenBLAS: the provider's entry, i.e. `cblas_sgemm`, and a
//! direct `cblas_sgemv` for the GEMV). OpenBLAS has no f16/bf16 GEMM, so those rows compare with
//! its sgemm on the same shape. PyTorch (`--python PY`, default `python3`; skipped when it has no
//! torch) runs `A @ B` / `W @ x` in each dtype in a child process before ours (so its threads are
//! gone). Ratios are ours ÷ theirs in GFLOP/s (> 1: ours is faster). Threads:
//! `MLX_ARM_NUM_THREADS` (OpenBLAS and torch follow it).
//!
//! OpenBLAS's idle workers keep spinning (sched_yield) ~0.1 s after each call; on as many cores
//! as threads they would take a core from whatever runs next, so the program pauses after every
//! OpenBLAS measurement before timing ours.
//!
//! `cargo run --release -p mlx-arm-openblas --example bench_openblas [-- --quick] [--python PY]`
//! (`--quick` drops the 2048³ products).

#[path = "../../../core/examples/common/mod.rs"]
mod common;

use half::{bf16, f16};
use mlx_arm_core::cpu::gemm::{gemm, GemmIn, MatMut, MatRef};
use mlx_arm_core::cpu::gemm_provider::BlasGemm;
use mlx_arm_openblas as openblas;
use std::collections::HashMap;
use std::os::raw::c_int;
use std::time::Duration;

extern "C" {
    // The GEMV anchor only; products go through the provider itself.
    #[allow(clippy::too_many_arguments)]
    fn cblas_sgemv(layout: c_int, trans: c_int, m: c_int, n: c_int, alpha: f32, a: *const f32, lda: c_int, x: *const f32, incx: c_int, beta: f32, y: *mut f32, incy: c_int);
}

/// Longer than OpenBLAS's default idle spin (2^28 cycles).
const OPENBLAS_SETTLE: Duration = Duration::from_millis(300);

/// GFLOP/s of `flops` work timed by the shared rule (median of `runs` after a warm-up).
fn gflops(flops: f64, runs: usize, f: impl FnMut()) -> f64 {
    flops / common::median_seconds(1, runs, f) / 1e9
}

const TORCH: &str = r#"
import sys, time
try:
    import torch
except Exception:
    sys.exit(0)
torch.set_num_threads(int(sys.argv[1]))
sizes = [int(s) for s in sys.argv[2].split(",")]
dt = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
def med(fn, n):
    fn(); ts = []
    for _ in range(n):
        t = time.perf_counter(); fn(); ts.append(time.perf_counter() - t)
    ts.sort(); return ts[len(ts) // 2]
for name, d in dt.items():
    for s in sizes:
        a = torch.rand(s, s, dtype=torch.float32).to(d); b = torch.rand(s, s, dtype=torch.float32).to(d)
        print(f"gemm {name} {s} {med(lambda: a @ b, 5 if s >= 1024 else 20)}", flush=True)
    if name != "bf16":
        w = torch.rand(4096, 4096, dtype=torch.float32).to(d); x = torch.rand(4096, dtype=torch.float32).to(d)
        print(f"gemv {name} 4096 {med(lambda: w @ x, 20)}", flush=True)
print(f"torch {torch.__version__}", flush=True)
"#;

/// Seconds per case from PyTorch, keyed "gemm f32 512" / "gemv f16 4096"; empty without torch.
fn torch_times(python: &str, threads: usize, sizes: &[usize]) -> (HashMap<String, f64>, String) {
    let list = sizes.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(",");
    let out = std::process::Command::new(python).args(["-c", TORCH, &threads.to_string(), &list]).env("OMP_NUM_THREADS", threads.to_string()).output();
    let mut times = HashMap::new();
    let mut version = String::from("not run");
    if let Ok(o) = out {
        for line in String::from_utf8_lossy(&o.stdout).lines() {
            let parts: Vec<&str> = line.split_whitespace().collect();
            match parts.as_slice() {
                ["torch", v] => version = format!("torch {v}"),
                [kind, dtype, size, secs] => {
                    if let Ok(t) = secs.parse::<f64>() {
                        times.insert(format!("{kind} {dtype} {size}"), t);
                    }
                }
                _ => {}
            }
        }
    }
    (times, version)
}

/// One output line: ours, OpenBLAS (f32 anchor), torch (same dtype), in GFLOP/s, and ratios.
fn row(case: &str, ours: f64, blas: f64, torch: Option<f64>) {
    let (t, tr) = match torch {
        Some(t) => (format!("{t:.1}"), format!("{:.2}", ours / t)),
        None => ("n/a".into(), "n/a".into()),
    };
    println!("{case:<28} {ours:>8.1} {blas:>10.1} {:>8.2} {t:>8} {tr:>8}", ours / blas);
}

/// Our GEMM on `s×s` row-major inputs converted to `S`.
fn ours_gemm<S: GemmIn<f32>>(s: usize, a: &[f32], b: &[f32], from: fn(f32) -> S) -> f64 {
    let (a, b): (Vec<S>, Vec<S>) = (a.iter().map(|&x| from(x)).collect(), b.iter().map(|&x| from(x)).collect());
    let mut c = vec![0f32; s * s];
    let runs = if s >= 1024 { 5 } else { 20 };
    gflops(2.0 * (s * s * s) as f64, runs, || unsafe {
        // SAFETY: s×s row-major buffers.
        gemm(s, s, s, 1.0, MatRef::new(a.as_ptr(), s as isize, 1), MatRef::new(b.as_ptr(), s as isize, 1), 0.0, MatMut::new(c.as_mut_ptr(), s), true)
    })
}

/// Our GEMV `y = W·x` (x as a 1×k row times the k×n view Wᵀ of the n×k row-major W).
fn ours_gemv<S: GemmIn<f32>>(n: usize, k: usize, w: &[f32], x: &[f32], from: fn(f32) -> S) -> f64 {
    let (w, x): (Vec<S>, Vec<S>) = (w.iter().map(|&v| from(v)).collect(), x.iter().map(|&v| from(v)).collect());
    let mut y = vec![0f32; n];
    gflops(2.0 * (n * k) as f64, 20, || unsafe {
        // SAFETY: x is 1×k; Wᵀ is the k×n view (strides 1, k) of the n×k row-major W.
        gemm(1, n, k, 1.0, MatRef::new(x.as_ptr(), k as isize, 1), MatRef::new(w.as_ptr(), 1, k as isize), 0.0, MatMut::new(y.as_mut_ptr(), n), true)
    })
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    let python = args.iter().position(|a| a == "--python").and_then(|i| args.get(i + 1)).cloned().unwrap_or_else(|| "python3".into());
    let sizes: &[usize] = if quick { &[512, 1024] } else { &[512, 1024, 2048] };
    let threads = mlx_arm_core::parallel::num_threads();
    let (torch, torch_version) = torch_times(&python, threads, sizes);
    openblas::follow_core_threads();
    println!("threads: ours {threads} | OpenBLAS {} ({}) | {torch_version}", openblas::threads(), openblas::config());
    println!("{:<28} {:>8} {:>10} {:>8} {:>8} {:>8}", "case (GFLOP/s)", "ours", "OpenBLAS", "ratio", "torch", "ratio");
    for &s in sizes {
        let (a, b) = (common::fill(s * s, 1), common::fill(s * s, 2));
        let mut c = vec![0f32; s * s];
        let runs = if s >= 1024 { 5 } else { 20 };
        let flops = 2.0 * (s * s * s) as f64;
        let call = BlasGemm { trans_a: false, trans_b: false, m: s, n: s, k: s, alpha: 1.0, a: a.as_ptr(), lda: s, b: b.as_ptr(), ldb: s, beta: 0.0, c: c.as_mut_ptr(), ldc: s };
        let blas = gflops(flops, runs, || unsafe {
            // SAFETY: s×s row-major buffers.
            assert!((openblas::PROVIDER.sgemm)(&call));
        });
        std::thread::sleep(OPENBLAS_SETTLE);
        let tf = |d: &str| torch.get(&format!("gemm {d} {s}")).map(|t| flops / t / 1e9);
        row(&format!("gemm f32 {s}³"), ours_gemm(s, &a, &b, |x| x), blas, tf("f32"));
        row(&format!("gemm f16 {s}³ (blas f32)"), ours_gemm(s, &a, &b, f16::from_f32), blas, tf("f16"));
        row(&format!("gemm bf16 {s}³ (blas f32)"), ours_gemm(s, &a, &b, bf16::from_f32), blas, tf("bf16"));
    }
    let (n, k) = (4096, 4096);
    let (w, x) = (common::fill(n * k, 3), common::fill(k, 4));
    let mut y = vec![0f32; n];
    let flops = 2.0 * (n * k) as f64;
    let blas = gflops(flops, 20, || unsafe {
        // SAFETY: W is n×k row-major, x has k elements, y n.
        cblas_sgemv(101, 111, n as c_int, k as c_int, 1.0, w.as_ptr(), k as c_int, x.as_ptr(), 1, 0.0, y.as_mut_ptr(), 1)
    });
    std::thread::sleep(OPENBLAS_SETTLE);
    let tv = |d: &str| torch.get(&format!("gemv {d} 4096")).map(|t| flops / t / 1e9);
    let f32v = ours_gemv(n, k, &w, &x, |v| v);
    let f16v = ours_gemv(n, k, &w, &x, f16::from_f32);
    row("gemv f32 4096² (sgemv)", f32v, blas, tv("f32"));
    row("gemv f16 4096² (blas f32)", f16v, blas, tv("f16"));
    // GB/s of weights streamed (f32: 4 bytes per multiply-add, f16: 2).
    println!("weight stream GB/s: f32 ours {:.1} | OpenBLAS sgemv {:.1} | f16 ours {:.1}", f32v * 2.0, blas * 2.0, f16v);
}
