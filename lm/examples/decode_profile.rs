//! Where one decode step's time goes: `decode_profile [--ops] [MODEL] [CONTEXT] [STEPS]`.
//!
//! Prefills CONTEXT tokens (default 32), then runs STEPS (default 64) single-token steps and
//! splits each into building the graph (`Model::forward`), evaluating it (kernels, scheduling,
//! allocation), and sampling (argmax over the vocabulary). Times are the calling thread's CPU
//! time (`CLOCK_THREAD_CPUTIME_ID`, which other jobs on a shared machine do not inflate)
//! and wall time; run with `MLX_ARM_NUM_THREADS=1` for a per-thread account. `--ops` adds the
//! wall time per primitive (`mlx_arm_core::profile`). A debugging aid
//! for issue 16/17's decode speed, not a benchmark (`mlx-arm bench` is).

use std::time::Instant;

use mlx_arm_core::Array;

/// Nanoseconds this thread has run on a CPU.
fn thread_cpu_ns() -> u64 {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: a valid out-pointer; CLOCK_THREAD_CPUTIME_ID exists on every Unix we build for.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

#[derive(Default)]
struct Acc {
    cpu: u64,
    wall: f64,
}

impl Acc {
    fn add(&mut self, cpu0: u64, wall0: Instant) {
        self.cpu += thread_cpu_ns() - cpu0;
        self.wall += wall0.elapsed().as_secs_f64();
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args: Vec<String> = std::env::args().collect();
    let per_op = args.iter().any(|a| a == "--ops");
    args.retain(|a| a != "--ops");
    let path = args.get(1).map(std::path::PathBuf::from).unwrap_or_else(mlx_arm_lm::load::files::default_model_path);
    let context: usize = args.get(2).map(|s| s.parse()).transpose()?.unwrap_or(32);
    let steps: usize = args.get(3).map(|s| s.parse()).transpose()?.unwrap_or(64);
    let loaded = mlx_arm_lm::load::files::load_model_with(&path, mlx_arm_lm::load::files::WeightMemory::Auto, &mut |_, _| {})?;
    let model = &loaded.model;
    let mut cache = model.new_cache();
    let prompt: Vec<u32> = (0..context.max(1) as u32).map(|i| (i * 7919 + 13) % model.config.vocab_size as u32).collect();
    let logits = mlx_arm_lm::generate::prefill(model, &mut cache, &prompt, 512)?;
    let mut tok = mlx_arm_lm::sample::argmax(&logits);
    // Warm-up steps (allocator caches, pool threads, page faults of the mapped weights).
    for _ in 0..4 {
        tok = mlx_arm_lm::sample::argmax(&mlx_arm_lm::generate::step(model, &mut cache, &[tok])?);
    }
    mlx_arm_core::profile::set_enabled(per_op);
    let (cpu_all, wall_all) = (thread_cpu_ns(), Instant::now());
    let [build, eval, sample] = measured_steps(model, &mut cache, tok, steps)?;
    let cpu_total = (thread_cpu_ns() - cpu_all) as f64 / 1e6 / steps as f64;
    let wall_total = wall_all.elapsed().as_secs_f64() * 1e3 / steps as f64;
    println!("{} steps after {} context tokens, {} threads", steps, context, mlx_arm_core::parallel::num_threads());
    println!("| part | caller CPU ms/step | wall ms/step |");
    println!("|---|---:|---:|");
    for (name, a) in [("build graph (forward)", &build), ("evaluate", &eval), ("sample (argmax)", &sample)] {
        println!("| {name} | {:.3} | {:.3} |", a.cpu as f64 / 1e6 / steps as f64, a.wall * 1e3 / steps as f64);
    }
    println!("| total | {cpu_total:.3} | {wall_total:.3} |");
    println!("wall: {:.1} tok/s", 1e3 / wall_total);
    if per_op {
        print_op_times(steps);
    }
    Ok(())
}

/// The per-primitive wall times of the measured steps, per step.
fn print_op_times(steps: usize) {
    let pool = mlx_arm_core::profile::take_pool();
    let per = |x: u64| x as f64 / steps as f64;
    println!(
        "pool per step: {:.0} threaded calls ({:.1} chunks/call), {:.3} ms in them ({:.2} µs/call), caller waiting for workers {:.3} ms; {:.0} calls run inline",
        per(pool.calls),
        pool.chunks as f64 / pool.calls.max(1) as f64,
        per(pool.nanos) / 1e6,
        pool.nanos as f64 / 1e3 / pool.calls.max(1) as f64,
        per(pool.wait_nanos) / 1e6,
        per(pool.inline_calls)
    );
    println!("| primitive | calls/step | ms/step | µs/call |");
    println!("|---|---:|---:|---:|");
    for row in mlx_arm_core::profile::take() {
        let ms = row.nanos as f64 / 1e6 / steps as f64;
        println!("| {} | {:.0} | {ms:.3} | {:.2} |", row.name, row.calls as f64 / steps as f64, row.nanos as f64 / 1e3 / row.calls as f64);
    }
}

/// The measured steps, in a function of their own so that a profiler can collect just them
/// (`valgrind --tool=callgrind --toggle-collect='*measured_steps*'`).
#[inline(never)]
fn measured_steps(
    model: &mlx_arm_lm::model::Model,
    cache: &mut mlx_arm_lm::kv_cache::KvCache,
    mut tok: u32,
    steps: usize,
) -> mlx_arm_core::Result<[Acc; 3]> {
    let (mut build, mut eval, mut sample) = (Acc::default(), Acc::default(), Acc::default());
    for _ in 0..steps {
        let (c, w) = (thread_cpu_ns(), Instant::now());
        let x = Array::from_slice(&[tok as i32], &[1, 1])?;
        let y = model.forward(&x, cache, true)?;
        build.add(c, w);
        let (c, w) = (thread_cpu_ns(), Instant::now());
        let v = y.to_vec::<f32>()?;
        eval.add(c, w);
        let (c, w) = (thread_cpu_ns(), Instant::now());
        tok = mlx_arm_lm::sample::argmax(&v);
        sample.add(c, w);
    }
    Ok([build, eval, sample])
}
