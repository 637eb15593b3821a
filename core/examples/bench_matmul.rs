//! The float GEMM rows of the CPU-speed issue's table through the public array API (what
//! `bench_ops.py` times from Python, without the Python layer), plus bf16: `x @ w.T` with x
//! (m×k) and w (n×k) in the row's dtype, the output in that dtype. Threads from
//! `MLX_ARM_NUM_THREADS` (pin with `taskset`); `MLX_ARM_ISA` forces a kernel level. One line
//! per case: name and GFLOP/s (median of the runs after one warm-up).
//!
//! `cargo build --release -p mlx-arm-core --example bench_matmul`, then
//! `MLX_ARM_NUM_THREADS=T taskset -c 0-$((T-1)) ./bench_matmul [FILTER]` (FILTER: run only the
//! cases whose name contains it, e.g. `bfloat16`; the count of bf16 products that ran on AMX
//! tiles goes to stderr at the end). The PyTorch anchor of the
//! same cases: `core/examples/bench_matmul_torch.py` (see docs/BENCHMARKS.md, section "fg26").

#[path = "common/mod.rs"]
mod common;
use mlx_arm_core::{ops, Array, DType};

fn main() {
    let cases: [(usize, usize, usize, DType, usize); 8] = [
        (64, 4096, 4096, DType::Float32, 5),
        (512, 2048, 2048, DType::Float32, 5),
        (1024, 1024, 1024, DType::Float32, 5),
        (1024, 1024, 1024, DType::Float16, 5),
        (1024, 1024, 1024, DType::Bfloat16, 5),
        (64, 4096, 4096, DType::Bfloat16, 5),
        (512, 2048, 2048, DType::Bfloat16, 5),
        (2048, 2048, 2048, DType::Bfloat16, 3),
    ];
    let filter = std::env::args().nth(1).unwrap_or_default();
    for (m, k, n, dt, runs) in cases {
        let name = format!("matmul_{m}x{k}x{n}_{}", dt.name());
        if !name.contains(&filter) {
            continue;
        }
        let mk = |r: usize, c: usize, seed: u32| {
            let a = Array::from_slice(&common::fill(r * c, seed), &[r, c]).unwrap();
            let a = ops::astype(&a, dt).unwrap();
            a.eval().unwrap();
            a
        };
        let (x, w) = (mk(m, k, 1), mk(n, k, 2));
        let wt = ops::transpose(&w, None).unwrap();
        let s = common::median_seconds(1, runs, || ops::matmul(&x, &wt).unwrap().eval().unwrap());
        println!("{name} {:.1}", 2.0 * (m * n * k) as f64 / s / 1e9);
    }
    eprintln!("amx_bf16_products {}", mlx_arm_core::cpu::gemm::amx_bf16_products());
}
