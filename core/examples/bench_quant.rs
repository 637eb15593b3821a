//! Quantized matmul benchmark: GEMV (1×4096 · 4096×4096ᵀ) and GEMM (M×4096 · 4096×4096ᵀ,
//! M = 64 by default: the portable scalar kernels on this 2-core VM make M = 512 take
//! minutes) for GGUF Q4_0, Q8_0, Q4_K, Q6_K, TQ2_0 (`ops::ggml_matmul`) and MLX affine 4-bit
//! g64 (`ops::quantized_matmul`), f32 activations. Prints GB/s of weight bytes and GFLOP/s
//! beside llama.cpp's MUL_MAT figures (quoted from shared/anchors/llamacpp/RESULTS.md,
//! measured with 2 threads on this machine kind) and real MLX's `quantized_matmul`, which
//! runs in the same process run through a Python snippet.
//!
//! `cargo run --release -p mlx-arm-core --example bench_quant [-- --python PATH] [--m 512]`
//! PATH is a Python with `mlx` installed (default `python3`); without it MLX is skipped.
//!
//! `--affine [--gemm-m M]` runs only the MLX affine section (`cpu::affine`, issue 17): 2-, 3-,
//! 4-, 5-, 6- and 8-bit g64, GEMV `x @ Ŵᵀ` with W 4096×4096 and 4096×14336, `x @ W` on the
//! square one (and the GEMM M×4096·4096ᵀ when M > 0) at 1 and 2 threads, beside real MLX's
//! `quantized_matmul` on the same shapes (same run, Python subprocess) and this machine's read
//! bandwidth at the same thread count.
//!
//! `--fp` runs only the MLX fp-mode section (`cpu::mlx_fp`, issue 17 / mf26): `mxfp4`, `nvfp4`,
//! `mxfp8` beside affine 4-bit g64, `x @ Ŵᵀ` at m = 1 and m = 128 with W 4096×4096 and
//! 4096×14336, 1 and 2 threads, the active level against the portable one (`--fp-portable`
//! adds the portable level's m = 1 rows; the old path, `quant::mlx::qmm` run on one thread,
//! is timed at m = 1 as the before figure) and the read bandwidth, all in one run.
//! `--threads 1,2,4,8,16` picks the thread counts (default 1,2; the read bandwidth is measured
//! at each), `--no-old` skips the old path and `--no-gemm` the m = 128 rows; affine 8-bit g64
//! runs beside affine 4-bit (issue 17's goal covers both).

#[path = "common/mod.rs"]
mod common;
use mlx_arm_core::quant::GgmlType;
use mlx_arm_core::{ops, Array};

const K: usize = 4096;
const N: usize = 4096;


fn fill(n: usize, seed: u32) -> Vec<f32> {
    (0..n as u32).map(|i| ((i.wrapping_mul(2654435761) ^ seed) % 2001) as f32 / 1000.0 - 1.0).collect()
}

/// llama.cpp test-backend-ops MUL_MAT, 2 threads, k = 4096 (RESULTS.md), in GFLOP/s:
/// (GEMV n=1, GEMM n=512). Types without an anchor row are `None`.
fn llama_anchor(ty: GgmlType) -> Option<(f64, f64)> {
    match ty {
        GgmlType::Q4_0 => Some((69.0, 131.0)),
        GgmlType::Q8_0 => Some((80.2, 188.0)),
        GgmlType::Q4_K => Some((128.0, 435.0)),
        _ => None,
    }
}

fn mlx_reference(python: &str, m: usize) -> Option<(f64, f64)> {
    let script = format!(
        r#"
import time, json, mlx.core as mx
mx.random.seed(0)
W = mx.random.normal(({N}, {K}))
wq, s, b = mx.quantize(W, group_size=64, bits=4)
def med(f, runs):
    f(); t = []
    for _ in range(runs):
        t0 = time.perf_counter(); f(); t.append(time.perf_counter() - t0)
    t.sort(); return t[len(t) // 2]
x1 = mx.random.normal((1, {K})); xm = mx.random.normal(({m}, {K})); mx.eval(wq, s, b, x1, xm)
g1 = med(lambda: mx.eval(mx.quantized_matmul(x1, wq, s, b, group_size=64, bits=4)), 9)
gm = med(lambda: mx.eval(mx.quantized_matmul(xm, wq, s, b, group_size=64, bits=4)), 3)
print(json.dumps([g1, gm]))
"#
    );
    let out = std::process::Command::new(python).arg("-c").arg(script).output().ok()?;
    if !out.status.success() {
        eprintln!("real MLX not measured: {}", String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or(""));
        return None;
    }
    let v: Vec<f64> = serde_json::from_slice(&out.stdout).ok()?;
    Some((*v.first()?, *v.get(1)?))
}

struct Row {
    name: String,
    bytes: usize,
    gemv: f64,
    gemm: f64,
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |k: &str| args.iter().position(|a| a == k).and_then(|i| args.get(i + 1)).cloned();
    let python = arg("--python").unwrap_or_else(|| "python3".into());
    let m: usize = arg("--m").and_then(|s| s.parse().ok()).unwrap_or(64);
    if args.iter().any(|a| a == "--fp") {
        let threads: Vec<usize> = arg("--threads").map_or(vec![1, 2], |t| t.split(',').filter_map(|v| v.parse().ok()).collect());
        let flag = |f: &str| args.iter().any(|a| a == f);
        fp_section(flag("--fp-portable"), &threads, !flag("--no-old"), !flag("--no-gemm"));
        return;
    }
    if args.iter().any(|a| a == "--affine") {
        affine_section(&python, arg("--gemm-m").and_then(|s| s.parse().ok()).unwrap_or(0));
        return;
    }

    let w = Array::from_slice(&fill(N * K, 3), &[N, K]).unwrap();
    let x1 = Array::from_slice(&fill(K, 5), &[1, K]).unwrap();
    let xm = Array::from_slice(&fill(m * K, 7), &[m, K]).unwrap();
    let mut rows = Vec::new();
    for ty in [GgmlType::Q4_0, GgmlType::Q8_0, GgmlType::Q4_K, GgmlType::Q6_K, GgmlType::TQ2_0] {
        let wq = ops::ggml_quantize(&w, ty).unwrap();
        wq.eval().unwrap();
        let gemv = common::median_seconds(1, 9, || ops::ggml_matmul(&x1, &wq, ty, K).unwrap().eval().unwrap());
        let gemm = common::median_seconds(1, 3, || ops::ggml_matmul(&xm, &wq, ty, K).unwrap().eval().unwrap());
        rows.push(Row { name: ty.name().to_string(), bytes: wq.nbytes(), gemv, gemm });
    }
    let q = ops::quantize(&w, Some(64), Some(4), "affine", None).unwrap();
    mlx_arm_core::eval(&q).unwrap();
    let qmm = |x: &Array| ops::quantized_matmul(x, &q[0], &q[1], Some(&q[2]), true, Some(64), Some(4), "affine").unwrap();
    let gemv = common::median_seconds(1, 9, || qmm(&x1).eval().unwrap());
    let gemm = common::median_seconds(1, 3, || qmm(&xm).eval().unwrap());
    let mlx_bytes = q.iter().map(|a| a.nbytes()).sum();
    rows.push(Row { name: "mlx affine 4b g64".into(), bytes: mlx_bytes, gemv, gemm });
    let mlx = mlx_reference(&python, m);

    let flop1 = 2.0 * (K * N) as f64;
    let flopm = flop1 * m as f64;
    println!("quantized matmul, f32 activations, W {N}x{K}; GEMV M=1, GEMM M={m}; {} threads available",
        std::thread::available_parallelism().map_or(1, |c| c.get()));
    println!(
        "{:<18} {:>9} | {:>9} {:>8} {:>11} {:>7} | {:>9} {:>10} {:>7}",
        "weights", "MB", "GEMV ms", "GB/s", "anchor GB/s", "ratio", "GEMM ms", "GFLOP/s", "ratio"
    );
    for r in &rows {
        let gbs = r.bytes as f64 / r.gemv / 1e9;
        let gf = flopm / r.gemm / 1e9;
        let (a1, am, src) = match (llama_anchor(match r.name.as_str() {
            "q4_0" => GgmlType::Q4_0,
            "q8_0" => GgmlType::Q8_0,
            "q4_K" => GgmlType::Q4_K,
            _ => GgmlType::F32,
        }), r.name.starts_with("mlx"), mlx) {
            (Some((g1, gm)), _, _) => (Some(r.bytes as f64 / (flop1 / (g1 * 1e9)) / 1e9), Some(gm), "llama.cpp (quoted)"),
            (None, true, Some((t1, tm))) => (Some(r.bytes as f64 / t1 / 1e9), Some(flopm / tm / 1e9), "real MLX (this run)"),
            _ => (None, None, "no anchor"),
        };
        let f = |v: Option<f64>, d: usize| v.map_or("–".to_string(), |v| format!("{v:.d$}"));
        println!(
            "{:<18} {:>9.2} | {:>9.3} {:>8.2} {:>11} {:>7} | {:>9.1} {:>10.2} {:>7}   vs {src}",
            r.name,
            r.bytes as f64 / 1e6,
            r.gemv * 1e3,
            gbs,
            f(a1, 2),
            f(a1.map(|a| gbs / a), 2),
            r.gemm * 1e3,
            gf,
            f(am.map(|a| gf / a), 2),
        );
    }
    if let Some((t1, tm)) = mlx {
        println!("real MLX qmm 4-bit g64: GEMV {:.3} ms, GEMM M={m} {:.1} ms", t1 * 1e3, tm * 1e3);
    }
    println!("llama.cpp GEMM anchors are n=512 (its kernels batch activation rows); ratios compare GFLOP/s.");
}

/// Fastest of `runs` timed calls after one warm-up, in seconds: on a shared, loaded machine
/// the minimum is the run least disturbed by others (the median moves with their load).
fn best_seconds(runs: usize, mut f: impl FnMut()) -> f64 {
    f();
    (0..runs)
        .map(|_| {
            let t = std::time::Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

/// Affine widths the section measures (every width of MLX's affine mode).
const AFFINE_BITS: [u32; 6] = [2, 3, 4, 5, 6, 8];
/// Weight shapes (n, k) of the section's GEMVs: a square projection and a down projection.
const AFFINE_SHAPES: [(usize, usize); 2] = [(4096, 4096), (4096, 14336)];

/// Real MLX's medians (seconds) for each case of the affine section, keyed "bits/case/n/k".
fn mlx_affine_reference(python: &str, gemm_m: usize) -> Option<std::collections::HashMap<String, f64>> {
    let script = format!(
        r#"
import time, json, mlx.core as mx
mx.random.seed(0)
def med(f, runs):
    f(); t = []
    for _ in range(runs):
        t0 = time.perf_counter(); f(); t.append(time.perf_counter() - t0)
    return min(t)
res = {{}}
for (n, k) in {shapes:?}:
    W = mx.random.normal((n, k)); x1 = mx.random.normal((1, k)); mx.eval(W, x1)
    xm = mx.random.normal(({gemm_m}, k)); mx.eval(xm)
    for bits in {bits:?}:
        wq, s, b = mx.quantize(W, group_size=64, bits=bits); mx.eval(wq, s, b)
        q = lambda x, t: mx.eval(mx.quantized_matmul(x, wq, s, b, transpose=t, group_size=64, bits=bits))
        res[f"{{bits}}/gemv_t/{{n}}/{{k}}"] = med(lambda: q(x1, True), 15)
        if n == k:
            res[f"{{bits}}/gemv_n/{{n}}/{{k}}"] = med(lambda: q(x1, False), 15)
            if {gemm_m} > 0:
                res[f"{{bits}}/gemm_t/{{n}}/{{k}}"] = med(lambda: q(xm, True), 3)
print(json.dumps(res))
"#,
        shapes = AFFINE_SHAPES.map(|(n, k)| [n, k]),
        bits = AFFINE_BITS,
    );
    let out = std::process::Command::new(python).arg("-c").arg(script).output().ok()?;
    if !out.status.success() {
        eprintln!("real MLX not measured: {}", String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or(""));
        return None;
    }
    serde_json::from_slice(&out.stdout).ok()
}

/// Read-only bandwidth (GB/s) of `threads` threads each summing its share of 256 MiB.
fn read_bandwidth(threads: usize) -> f64 {
    let n: usize = 64 * 1024 * 1024;
    let src: Vec<u32> = (0..n as u32).collect();
    let t = best_seconds(5, || {
        std::thread::scope(|sc| {
            for part in src.chunks(n.div_ceil(threads)) {
                sc.spawn(move || {
                    let s = part.chunks_exact(16).fold([0u32; 16], |mut a, c| {
                        for (x, &y) in a.iter_mut().zip(c) {
                            *x = x.wrapping_add(y);
                        }
                        a
                    });
                    std::hint::black_box(s);
                });
            }
        });
    });
    (4 * n) as f64 / t / 1e9
}

/// `--affine`: every affine width, g64, f32 activations. GEMV `x @ Ŵᵀ` at each
/// [`AFFINE_SHAPES`]; on the square shape also `x @ Ŵ` and (`--gemm-m M`, 0 skips; default 0)
/// the GEMM. 1 and 2 threads; ours vs real MLX (same run) and vs this machine's read bandwidth.
fn affine_section(python: &str, gemm_m: usize) {
    let mlx = mlx_affine_reference(python, gemm_m).unwrap_or_default();
    println!(
        "MLX affine quantized_matmul, f32 activations, g64, kernels {:?}, {} cores; ours vs real MLX 0.32 (same run)",
        mlx_arm_core::cpu::isa::isa(),
        std::thread::available_parallelism().map_or(1, |c| c.get())
    );
    println!("{:<8} {:<24} {:>3} {:>10} {:>13} {:>9} {:>8} {:>8}", "weights", "case", "thr", "ours ms", "ours", "MLX ms", "vs MLX", "of read");
    let mut data = Vec::new();
    for &(n, k) in &AFFINE_SHAPES {
        let w = Array::from_slice(&fill(n * k, 3), &[n, k]).unwrap();
        let x1 = Array::from_slice(&fill(k, 5), &[1, k]).unwrap();
        let xm = Array::from_slice(&fill(gemm_m.max(1) * k, 7), &[gemm_m.max(1), k]).unwrap();
        for bits in AFFINE_BITS {
            let q = ops::quantize(&w, Some(64), Some(bits as i64), "affine", None).unwrap();
            mlx_arm_core::eval(&q).unwrap();
            data.push((n, k, bits, q, x1.clone(), xm.clone()));
        }
    }
    for threads in [1usize, 2] {
        mlx_arm_core::parallel::set_parallel_for(if threads == 1 { Some(common::serial) } else { None });
        mlx_arm_core::parallel::set_num_threads(threads);
        let read = read_bandwidth(threads);
        println!("read bandwidth, {threads} thread(s): {read:.1} GB/s");
        for (n, k, bits, q, x1, xm) in &data {
            let (n, k, bits) = (*n, *k, *bits);
            let bytes: usize = q.iter().map(|a| a.nbytes()).sum();
            let qmm = |x: &Array, t: bool| ops::quantized_matmul(x, &q[0], &q[1], Some(&q[2]), t, Some(64), Some(bits as i64), "affine").unwrap();
            let mut cases: Vec<(&str, &Array, bool, usize)> = vec![("gemv_t", x1, true, 15)];
            if n == k {
                cases.push(("gemv_n", x1, false, 15));
                if gemm_m > 0 {
                    cases.push(("gemm_t", xm, true, 3));
                }
            }
            for (name, x, t, runs) in cases {
                let secs = best_seconds(runs, || qmm(x, t).eval().unwrap());
                let (fig, of_read) = if name.starts_with("gemv") {
                    let gbs = bytes as f64 / secs / 1e9;
                    (format!("{gbs:.2} GB/s"), format!("{:.0} %", 100.0 * gbs / read))
                } else {
                    (format!("{:.1} GFLOP/s", 2.0 * (gemm_m * n * k) as f64 / secs / 1e9), "–".into())
                };
                let rows = if name == "gemm_t" { gemm_m } else { 1 };
                let label = format!("{name} {rows}x{k}·{n}x{k}");
                let (mlx_ms, ratio) = match mlx.get(&format!("{bits}/{name}/{n}/{k}")) {
                    Some(&m) => (format!("{:.3}", m * 1e3), format!("{:.2}x", m / secs)),
                    None => ("–".into(), "–".into()),
                };
                println!("{:<8} {:<24} {:>3} {:>10.3} {:>13} {:>9} {:>8} {:>8}", format!("{bits}-bit"), label, threads, secs * 1e3, fig, mlx_ms, ratio, of_read);
            }
        }
    }
    mlx_arm_core::parallel::set_parallel_for(None);
    mlx_arm_core::parallel::set_num_threads(0);
    println!("Times are the fastest of 15 runs (GEMM 3), both sides. vs MLX = MLX time / our time (>1: we are faster); MLX's CPU qmm uses its own threading.");
    println!("of read = weight bytes (codes, scales, biases) / time vs the read bandwidth at that thread count.");
}

/// `--fp`: the fp modes beside affine 4-bit g64 (see the module doc).
fn fp_section(with_portable: bool, thread_counts: &[usize], with_old: bool, with_gemm: bool) {
    use mlx_arm_core::cpu::isa::{self, Isa};
    use mlx_arm_core::quant::mlx::{qmm, QScales, QuantMode, QuantParams};
    let level = isa::isa();
    println!("MLX fp-mode quantized_matmul x @ Wᵀ, f32 activations, level {level:?}, {} cores", std::thread::available_parallelism().map_or(1, |c| c.get()));
    println!("{:<14} {:<18} {:>3} {:>9} {:>10} {:>8} {:>12} {:>9}", "mode", "case", "thr", "ms", "fig", "of read", "old qmm ms", "speed-up");
    let modes: [(&str, Option<i64>, Option<i64>); 5] =
        [("affine", Some(64), Some(4)), ("affine", Some(64), Some(8)), ("mxfp4", None, None), ("nvfp4", None, None), ("mxfp8", None, None)];
    for &(n, k) in &AFFINE_SHAPES {
        let w = Array::from_slice(&fill(n * k, 3), &[n, k]).unwrap();
        let x1 = Array::from_slice(&fill(k, 5), &[1, k]).unwrap();
        let xm = Array::from_slice(&fill(128 * k, 7), &[128, k]).unwrap();
        let qs: Vec<_> = modes
            .iter()
            .map(|&(mode, gs, bits)| {
                let q = ops::quantize(&w, gs, bits, mode, None).unwrap();
                mlx_arm_core::eval(&q).unwrap();
                q
            })
            .collect();
        for &threads in thread_counts {
            mlx_arm_core::parallel::set_parallel_for(if threads == 1 { Some(common::serial) } else { None });
            mlx_arm_core::parallel::set_num_threads(threads);
            let read = read_bandwidth(threads);
            println!("W {n}x{k}: read bandwidth, {threads} thread(s): {read:.1} GB/s");
            for (&(mode, gs, bits), q) in modes.iter().zip(&qs) {
                let bytes: usize = q.iter().map(|a| a.nbytes()).sum();
                let qmm_op = |x: &Array| ops::quantized_matmul(x, &q[0], &q[1], q.get(2), true, gs, bits, mode).unwrap();
                // The old path (the portable reference, one thread) at m = 1.
                let old = (with_old && mode != "affine" && threads == 1).then(|| {
                    let md = QuantMode::parse(mode, "quantize").unwrap();
                    let p = QuantParams::new("quantize", md, md.default_group_size(), md.default_bits()).unwrap();
                    let (wq, sc, xv) = (q[0].to_vec::<u32>().unwrap(), q[1].to_vec::<u8>().unwrap(), x1.to_vec::<f32>().unwrap());
                    let mut y = vec![0f32; n];
                    best_seconds(2, || qmm(&xv, 1, k, &wq, QScales::Fp(&sc), n, &p, true, &mut y, 0..1).unwrap())
                });
                let mut levels = vec![level];
                if with_portable && level != Isa::Portable {
                    levels.push(Isa::Portable);
                }
                for lv in levels {
                    isa::set_isa(lv).unwrap();
                    for (label, x, runs) in [("m=1", &x1, 15usize), ("m=128", &xm, 3)] {
                        if (lv == Isa::Portable || !with_gemm) && label == "m=128" {
                            continue;
                        }
                        let secs = best_seconds(runs, || qmm_op(x).eval().unwrap());
                        let m = x.shape()[0];
                        let (fig, of_read) = if m == 1 {
                            let gbs = bytes as f64 / secs / 1e9;
                            (format!("{gbs:.2} GB/s"), format!("{:.0} %", 100.0 * gbs / read))
                        } else {
                            (format!("{:.1} GF/s", 2.0 * (m * n * k) as f64 / secs / 1e9), "–".into())
                        };
                        let (o, su) = match (old, m) {
                            (Some(o), 1) if lv == level => (format!("{:.3}", o * 1e3), format!("{:.1}x", o / secs)),
                            _ => ("–".into(), "–".into()),
                        };
                        let name = if mode == "affine" { format!("affine{} {:?}", bits.unwrap_or(4), lv) } else { format!("{mode} {:?}", lv) };
                        println!("{:<14} {:<18} {:>3} {:>9.3} {:>10} {:>8} {:>12} {:>9}", name.to_lowercase(), format!("{label} {n}x{k}"), threads, secs * 1e3, fig, of_read, o, su);
                    }
                }
                isa::set_isa(level).unwrap();
            }
        }
    }
    mlx_arm_core::parallel::set_parallel_for(None);
    mlx_arm_core::parallel::set_num_threads(0);
    println!("Times are the fastest of 15 runs (m=128: 3). of read = weight bytes (codes, scales[, biases]) / time vs the read bandwidth.");
    println!("old qmm = the portable reference kernel (the path before mf26), one thread, m = 1; speed-up = old / new at 1 thread.");
}
