//! GGUF quantized matmul (`ops::ggml_matmul`, f32 activations) per weight type, shape, thread
//! count and ISA level: GEMV (m = 1) and GEMM (m = 128 / 512), printing GB/s of weight bytes
//! and GFLOP/s beside llama.cpp's test-backend-ops MUL_MAT anchor (quoted from
//! shared/anchors/llamacpp/RESULTS.md, 2 threads, same machine kind). If the anchor binary
//! exists it is run in the same invocation (`--anchor PATH`, default
//! /tmp/llama/anchor-bin/test-backend-ops-anchor) and its lines are printed too.
//!
//! `cargo run --release -p mlx-arm-core --example bench_ggml [-- --quick] [--gemm-m 512]`
//! `--quick`: 4096×4096 and the SmolLM shapes only, GEMM at the best ISA only;
//! `--types q4_0,q4_1`: only those weight types; `--isa portable,avx512`: only those levels.

#[path = "common/mod.rs"]
mod common;
use mlx_arm_core::cpu::isa::{self, Isa};
use mlx_arm_core::parallel::set_num_threads;
use mlx_arm_core::quant::ggml::quantize_row;
use mlx_arm_core::quant::GgmlType as T;
use mlx_arm_core::{ops, Array, DType};

fn fill(n: usize, seed: u32) -> Vec<f32> {
    (0..n as u32).map(|i| ((i.wrapping_mul(2654435761) ^ seed) % 2001) as f32 / 1000.0 - 1.0).collect()
}

/// `n` rows of `k`: 16 distinct quantized rows repeated (quantizing a whole 4096×14336 matrix
/// with the portable K-quant search takes longer than the benchmark).
fn weights(ty: T, n: usize, k: usize) -> Array {
    let rb = ty.row_bytes(k).unwrap();
    let mut distinct = vec![0u8; 16 * rb];
    for (r, dst) in distinct.chunks_exact_mut(rb).enumerate() {
        quantize_row(ty, &fill(k, 11 + r as u32), dst).unwrap();
    }
    let mut all = Vec::with_capacity(n * rb);
    for r in 0..n {
        all.extend_from_slice(&distinct[(r % 16) * rb..(r % 16 + 1) * rb]);
    }
    let a = Array::from_bytes(&all, &[n, rb], DType::Uint8).unwrap();
    a.eval().unwrap();
    a
}

/// llama.cpp MUL_MAT GFLOP/s at 2 threads (RESULTS.md): (GEMV, GEMM n=512) for k = 4096 and
/// k = 14336 (weights 4096 × k).
fn anchor(ty: T, k: usize) -> Option<(f64, f64)> {
    match (ty, k) {
        (T::Q4_0, 4096) => Some((69.0, 131.0)),
        (T::Q8_0, 4096) => Some((80.2, 188.0)),
        (T::Q4_K, 4096) => Some((128.0, 435.0)),
        (T::Q4_0, 14336) => Some((47.6, 149.0)),
        (T::Q8_0, 14336) => Some((38.3, 176.0)),
        (T::Q4_K, 14336) => Some((46.4, 515.0)),
        // docs/BENCHMARKS.md "IQ4_NL / IQ4_XS kernels" (a quiet dev-VM run, test-backend-ops'
        // stock cases: k = 14336 only).
        (T::IQ4_NL, 14336) => Some((65.8, 135.9)),
        (T::IQ4_XS, 14336) => Some((77.3, 526.6)),
        _ => None,
    }
}

/// The dev VM's 2-thread DRAM read bandwidth, low end (35 GiB/s, sysbench; RESULTS.md): the
/// anchor of GEMVs that have no llama.cpp figure (weight GB/s over it; 4096×4096 weights fit
/// in cache on larger hosts, so only 4096×14336 is DRAM-bound).
const DRAM_READ_GBS: f64 = 37.6;

/// Seconds per GEMV the way benchmarks/ggml_gemv_anchor.c times llama.cpp's, so the two are
/// compared like for like: 3 uncounted calls, then 41 samples of enough back-to-back calls for
/// ~20 MB of weights each, the median sample's time per call. (15 single calls, the earlier
/// rule, made a 1 ms GEMV's figure 15 ms of work: one slow interval moved it by ±30 %.)
fn gemv_seconds(weight_bytes: f64, mut f: impl FnMut()) -> f64 {
    let reps = (2e7 / (weight_bytes + 1.0)) as usize + 1;
    let mut samples: Vec<f64> = Vec::with_capacity(41);
    for _ in 0..3 {
        f();
    }
    for _ in 0..41 {
        let t = std::time::Instant::now();
        for _ in 0..reps {
            f();
        }
        samples.push(t.elapsed().as_secs_f64() / reps as f64);
    }
    samples.sort_by(|a, b| a.total_cmp(b));
    samples[samples.len() / 2]
}

/// Read bandwidth at `threads` threads (each summing its own share of a
/// 256 MiB buffer, median of 5 passes), measured once per thread count in this process, so the
/// GEMV's weight GB/s can be put over the read bandwidth of the same run (issue 17's "≥ 85 % of
/// read bandwidth"; only meaningful for weights the caches do not hold).
fn read_gbs(cache: &mut Vec<(usize, Option<f64>)>, threads: usize) -> Option<f64> {
    if let Some(&(_, v)) = cache.iter().find(|(t, _)| *t == threads) {
        return v;
    }
    let n: usize = 64 * 1024 * 1024;
    let src: Vec<u32> = (0..n as u32).collect();
    let per = n.div_ceil(threads.max(1)).next_multiple_of(16);
    let t = common::median_seconds(1, 5, || {
        std::thread::scope(|s| {
            for part in src.chunks(per) {
                s.spawn(move || {
                    // Integer sums vectorize freely: 16 independent lanes, bound by loads.
                    let acc = part.chunks_exact(16).fold([0u32; 16], |mut a, c| {
                        for (x, &y) in a.iter_mut().zip(c) {
                            *x = x.wrapping_add(y);
                        }
                        a
                    });
                    std::hint::black_box(acc);
                });
            }
        })
    });
    let v = Some((4 * n) as f64 / t / 1e9);
    if let Some(r) = v {
        println!("read bandwidth, {threads} thread(s), 256 MiB: {r:.1} GB/s");
    }
    cache.push((threads, v));
    v
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |k: &str| args.iter().position(|a| a == k).and_then(|i| args.get(i + 1)).cloned();
    let quick = args.iter().any(|a| a == "--quick");
    let gemm_m: usize = arg("--gemm-m").and_then(|s| s.parse().ok()).unwrap_or(128);
    let anchor_bin = arg("--anchor").unwrap_or_else(|| "/tmp/llama/anchor-bin/test-backend-ops-anchor".into());

    let mut shapes = vec![(4096usize, 4096usize), (1536, 576), (576, 1536)];
    if !quick {
        shapes.insert(1, (4096, 14336));
    }
    // `--shapes 4096x4096,576x1536`: only these n×k weight shapes.
    if let Some(list) = arg("--shapes") {
        shapes = list
            .split(',')
            .filter_map(|s| s.split_once('x').and_then(|(n, k)| Some((n.parse().ok()?, k.parse().ok()?))))
            .collect();
    }
    // `--threads 1`: only that thread count (default 1 and 2).
    let thread_counts: Vec<usize> = arg("--threads").map_or(vec![1, 2], |t| t.split(',').filter_map(|v| v.parse().ok()).collect());
    let only_isa = arg("--isa");
    let levels: Vec<Isa> =
        isa::available().into_iter().filter(|l| only_isa.as_ref().is_none_or(|o| o.split(',').any(|n| n == l.name()))).collect();
    let best = *levels.last().unwrap();
    println!("ggml_matmul, f32 activations; weights n×k; ISA levels here: {:?}", levels.iter().map(|l| l.name()).collect::<Vec<_>>());
    println!(
        "{:<6} {:>11} {:>5} {:>9} {:>3} | {:>9} {:>8} {:>9} | {:>8} {:>7} {:>6}",
        "type", "n×k", "m", "isa", "thr", "ms", "GB/s", "GFLOP/s", "anchor", "ratio", "%read"
    );
    // `--no-read-bw`: skip the read-bandwidth measurement (the %read column).
    let mut read_bw: Vec<(usize, Option<f64>)> = Vec::new();
    if args.iter().any(|a| a == "--no-read-bw") {
        read_bw.extend(thread_counts.iter().map(|&t| (t, None)));
    }
    // `--types q4_0,q8_0` limits the run to those weight types.
    let only = arg("--types");
    for ty in [
        T::Q4_0, T::Q4_1, T::Q5_0, T::Q5_1, T::Q8_0, T::Q2_K, T::Q3_K, T::Q4_K, T::Q5_K, T::Q6_K, T::IQ4_NL, T::IQ4_XS, T::MXFP4, T::TQ1_0, T::TQ2_0,
    ] {
        if only.as_ref().is_some_and(|o| !o.split(',').any(|t| t.eq_ignore_ascii_case(ty.name()))) {
            continue;
        }
        for &(n, k) in &shapes {
            if k % ty.block_len() != 0 {
                continue; // K-quants need k % 256 == 0 (SmolLM's 576 is not)
            }
            let w = weights(ty, n, k);
            let bytes = (ty.row_bytes(k).unwrap() * n) as f64;
            let mut ms = vec![1usize];
            if n * k >= 4096 * 4096 {
                ms.push(gemm_m);
            }
            for &m in &ms {
                let x = Array::from_slice(&fill(m * k, 5), &[m, k]).unwrap();
                x.eval().unwrap();
                for &level in &levels {
                    if m > 1 && (quick || level == Isa::Portable) && level != best {
                        continue;
                    }
                    isa::set_isa(level).unwrap();
                    for &threads in &thread_counts {
                        if m > 1 && level == Isa::Portable && threads == 1 {
                            continue;
                        }
                        set_num_threads(threads);
                        let call = || ops::ggml_matmul(&x, &w, ty, k).unwrap().eval().unwrap();
                        let t = if m == 1 { gemv_seconds(bytes, call) } else { common::median_seconds(1, 3, call) };
                        let gflops = 2.0 * (m * n * k) as f64 / t / 1e9;
                        let (a, ratio) = match (anchor(ty, k), threads == 2 && n == 4096, m) {
                            (Some((g1, _)), true, 1) => (format!("{g1:.1}"), format!("{:.2}", gflops / g1)),
                            (Some((_, gm)), true, _) => (format!("{gm:.0}*"), format!("{:.2}", gflops / gm)),
                            // No llama.cpp figure: a GEMV against the 2-thread DRAM read bandwidth.
                            (None, true, 1) => (format!("{DRAM_READ_GBS}GB/s"), format!("{:.2}", bytes / t / 1e9 / DRAM_READ_GBS)),
                            _ => ("–".into(), "–".into()),
                        };
                        let of_read = read_gbs(&mut read_bw, threads).map_or("–".into(), |r| format!("{:.0}%", 100.0 * bytes / t / 1e9 / r));
                        println!(
                            "{:<6} {:>11} {:>5} {:>9} {:>3} | {:>9.3} {:>8.2} {:>9.1} | {:>8} {:>7} {:>6}",
                            ty.name(),
                            format!("{n}×{k}"),
                            m,
                            level.name(),
                            threads,
                            t * 1e3,
                            bytes / t / 1e9,
                            gflops,
                            a,
                            ratio,
                            if m == 1 { of_read } else { "–".into() }
                        );
                    }
                }
            }
        }
    }
    set_num_threads(0);
    println!("anchor = llama.cpp test-backend-ops MUL_MAT GFLOP/s, 2 threads (RESULTS.md); * = its GEMM is n=512; GB/s = DRAM read, ratio of weight GB/s");
    println!("%read = weight GB/s of the GEMV over the read bandwidth at its thread count, this run (caches may hold the weights)");
    if std::path::Path::new(&anchor_bin).exists() {
        // Only the weight types and shapes measured above (the whole MUL_MAT table takes minutes).
        // ggml spells the K-quants `q4_K` (a regex, so case matters).
        let ggml_name = |t: &str| {
            let t = t.to_ascii_lowercase();
            t.strip_suffix("_k").map_or(t.clone(), |stem| format!("{stem}_K"))
        };
        let types = only.as_deref().unwrap_or("q4_0,q4_1,q5_0,q5_1,q8_0,q2_k,q3_k,q4_k,q5_k,q6_k,iq4_nl,iq4_xs,mxfp4,tq1_0,tq2_0");
        let types = types.split(',').map(ggml_name).collect::<Vec<_>>().join("|");
        let filter = format!("type_a=({types}),type_b=f32,m=4096,n=(1|512),k=(14336|4096),");
        // At every thread count measured above (`--threads`).
        for &threads in &thread_counts {
            println!("\n--- {anchor_bin} perf -o MUL_MAT -b CPU -p \"{filter}\" (GGML_N_THREADS={threads}), this run:");
            match std::process::Command::new(&anchor_bin)
                .args(["perf", "-o", "MUL_MAT", "-b", "CPU", "-p", &filter])
                .env("GGML_N_THREADS", threads.to_string())
                .output()
            {
                Ok(out) => {
                    for line in String::from_utf8_lossy(&out.stdout).lines() {
                        if line.contains("MUL_MAT") && ["q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "q2_K", "q3_K", "q4_K", "q5_K", "q6_K", "iq4_nl", "iq4_xs", "mxfp4", "tq1_0", "tq2_0"].iter().any(|t| line.contains(t)) {
                            println!("{line}");
                        }
                    }
                }
                Err(e) => println!("(could not run: {e})"),
            }
        }
    }
}
