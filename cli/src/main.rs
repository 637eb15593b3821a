//! `mlx-arm`: run language models from the command line.
//!
//! - `mlx-arm generate "prompt"` — one answer (the model's chat template applied unless
//!   `--raw`), streamed as it is generated, with speed figures at the end;
//! - `mlx-arm chat` — an interactive conversation that keeps the KV cache between turns;
//! - `mlx-arm bench` — prompt-processing and generation speed, llama-bench style.
//!
//! With no `--model`, the default model that `scripts/setup.sh` installs is used.

#[cfg(target_os = "linux")]
mod code_pages;
#[cfg(target_os = "linux")]
mod heap;
mod progress;

/// Small blocks from mimalloc, large ones from glibc ([`heap`]): a decode step allocates and
/// frees thousands of small blocks.
#[cfg(target_os = "linux")]
#[global_allocator]
static ALLOCATOR: heap::SplitHeap = heap::SplitHeap;

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::{Args, Parser, Subcommand};
use mlx_arm_core::{Device, Error, Result};
use mlx_arm_lm::chat::{self, Message};
use mlx_arm_lm::generate::{self, GenerateConfig, Stats};
use mlx_arm_lm::kv_cache::KvCache;
use mlx_arm_lm::load::files::{self, LoadedModel, Origin, WeightMemory};
use mlx_arm_lm::sample::SamplerConfig;
use mlx_arm_lm::text::generate_text;
use mlx_arm_lm::tokenizer::Tokenizer;

#[derive(Parser)]
#[command(name = "mlx-arm", version, about = "Run language models with mlx-arm")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Generate a reply to (or, with --raw, a continuation of) a prompt.
    Generate(GenerateArgs),
    /// Chat interactively; an empty line or end of input quits.
    Chat(ChatArgs),
    /// Measure prompt processing and generation speed.
    Bench(BenchArgs),
}

#[derive(Args)]
struct ModelArgs {
    /// A .gguf file or an MLX / Hugging Face model directory [default: the default model]
    #[arg(short, long)]
    model: Option<PathBuf>,
    /// Worker threads for the kernels [default: all cores]
    #[arg(short, long)]
    threads: Option<usize>,
    /// cpu, or gpu (Vulkan; ops without a GPU kernel run on the CPU)
    #[arg(long, default_value = "cpu")]
    device: String,
    /// Map the weight files and view them in place instead of reading them into huge-page
    /// memory: nothing is copied and the kernel may page weights out, but decode is slower
    #[arg(long)]
    mmap: bool,
}

#[derive(Args)]
struct SamplingArgs {
    /// Most tokens to generate
    #[arg(short = 'n', long, default_value_t = 256)]
    max_tokens: usize,
    /// Sampling temperature; 0 is greedy
    #[arg(long = "temp", default_value_t = 0.0)]
    temperature: f32,
    /// Keep the k most likely tokens (0: all)
    #[arg(long, default_value_t = 0)]
    top_k: usize,
    /// Nucleus sampling threshold
    #[arg(long, default_value_t = 1.0)]
    top_p: f32,
    /// Drop tokens below min-p times the most likely one
    #[arg(long, default_value_t = 0.0)]
    min_p: f32,
    /// Penalty for tokens seen in the last 64 (1: off)
    #[arg(long, default_value_t = 1.0)]
    repeat_penalty: f32,
    /// Random seed
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Stop when this text is generated (repeatable)
    #[arg(long)]
    stop: Vec<String>,
}

impl SamplingArgs {
    fn config(&self) -> GenerateConfig {
        GenerateConfig {
            max_tokens: self.max_tokens,
            sampler: SamplerConfig {
                temperature: self.temperature,
                top_k: self.top_k,
                top_p: self.top_p,
                min_p: self.min_p,
                repetition_penalty: self.repeat_penalty,
                seed: self.seed,
                ..Default::default()
            },
            ..Default::default()
        }
    }
}

#[derive(Args)]
struct GenerateArgs {
    /// The prompt ("-" reads it from standard input)
    prompt: String,
    #[command(flatten)]
    model: ModelArgs,
    #[command(flatten)]
    sampling: SamplingArgs,
    /// Continue the prompt as plain text instead of applying the chat template
    #[arg(long)]
    raw: bool,
    /// A system message for the chat template
    #[arg(long)]
    system: Option<String>,
    /// Print no figures at the end
    #[arg(short, long)]
    quiet: bool,
}

#[derive(Args)]
struct ChatArgs {
    #[command(flatten)]
    model: ModelArgs,
    #[command(flatten)]
    sampling: SamplingArgs,
    /// A system message
    #[arg(long)]
    system: Option<String>,
}

#[derive(Args)]
struct BenchArgs {
    #[command(flatten)]
    model: ModelArgs,
    /// Prompt tokens to process
    #[arg(short = 'p', long, default_value_t = 128)]
    prompt_tokens: usize,
    /// Tokens to generate
    #[arg(short = 'n', long, default_value_t = 64)]
    gen_tokens: usize,
    /// Repetitions (the median is reported)
    #[arg(short, long, default_value_t = 3)]
    reps: usize,
    /// Prompt tokens for the time-to-first-token row (0: skip it)
    #[arg(long, default_value_t = 32)]
    ttft_tokens: usize,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Generate(a) => run_generate(a),
        Command::Chat(a) => run_chat(a),
        Command::Bench(a) => run_bench(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mlx-arm: {e}");
            ExitCode::FAILURE
        }
    }
}

/// A model with its tokenizer, ready to run.
struct Session {
    loaded: LoadedModel,
    tokenizer: Tokenizer,
}

fn open(args: &ModelArgs) -> Result<Session> {
    if let Some(n) = args.threads {
        if n == 0 {
            return Err(Error::invalid("mlx-arm", "--threads must be at least 1"));
        }
        mlx_arm_core::parallel::set_num_threads(n);
    }
    match args.device.as_str() {
        "cpu" => mlx_arm_core::device::set_default_device(Device::CPU)?,
        "gpu" => {
            let name = gpu_init()?;
            mlx_arm_core::device::set_default_device(Device::GPU)?;
            eprintln!("device: gpu ({name})");
        }
        other => return Err(Error::invalid("mlx-arm", format!("unknown device '{other}' (cpu or gpu)"))),
    }
    let path = match &args.model {
        Some(p) => p.clone(),
        None => {
            let p = files::default_model_path();
            if !p.exists() {
                return Err(Error::invalid(
                    "mlx-arm",
                    format!(
                        "the default model {} is not installed: run scripts/setup.sh, or pass --model FILE.gguf|DIR",
                        p.display()
                    ),
                ));
            }
            p
        }
    };
    let mut bar = progress::LoadProgress::new();
    let memory = if args.mmap { WeightMemory::Mapped } else { WeightMemory::Auto };
    let mut loaded = if memory == WeightMemory::Mapped && !bar.can_show() {
        // Nothing to report: mapped pages are read in as the first prompt touches them.
        files::load_model(&path)?
    } else {
        files::load_model_with(&path, memory, &mut |done, total| bar.update(done, total))?
    };
    bar.finish();
    let tokenizer = match &mut loaded.origin {
        // The tokenizer is the metadata's only user here: it takes the vocabulary over
        // rather than copying it.
        Origin::Gguf { metadata, .. } => Tokenizer::from_gguf_owned(std::mem::take(metadata))?,
        Origin::Dir(dir) => files::dir_tokenizer(dir)?,
    };
    release_freed_heap();
    Ok(Session { loaded, tokenizer })
}

/// Hands the heap pages that loading freed (the parsed vocabulary, now compacted into the
/// tokenizer; the header's scratch) back to the OS: an allocator keeps freed memory resident
/// for reuse, ~3 MB of the default model's peak RSS. mimalloc's (Rust's heap) and glibc's
/// (what C libraries allocate).
#[cfg(target_os = "linux")]
fn release_freed_heap() {
    // SAFETY: mi_collect only frees mimalloc's unused pages; no live pointer is invalidated.
    unsafe { libmimalloc_sys::mi_collect(true) };
    #[cfg(target_env = "gnu")]
    // SAFETY: malloc_trim only returns free heap memory to the OS; no pointer is invalidated.
    unsafe {
        libc::malloc_trim(0)
    };
    // The code that only loading ran (parsers, builders) leaves the resident set too.
    code_pages::drop_resident_code();
}

#[cfg(not(target_os = "linux"))]
fn release_freed_heap() {}

/// Starts the GPU backend and returns the device's name; the reason it cannot, otherwise.
#[cfg(feature = "vulkan")]
fn gpu_init() -> Result<String> {
    match mlx_arm_vulkan::init() {
        Ok(info) => Ok(format!("Vulkan: {}", info.name)),
        Err(e) => Err(Error::unsupported("mlx-arm", format!("--device gpu needs a Vulkan driver and device: {e}"))),
    }
}

/// Counters [`gpu_queue`] gives.
const QUEUE_COUNTERS: usize = 10;

/// The GPU queue's counters once its backend runs: dispatches, barriers, submissions, waits,
/// and seconds spent waiting, recording (in the backend), submitting, taking output buffers,
/// in dispatches' Vulkan calls and freeing finished batches (what `bench` reports per decode
/// step).
#[cfg(feature = "vulkan")]
fn gpu_queue() -> Option<[f64; QUEUE_COUNTERS]> {
    mlx_arm_vulkan::device_info()?;
    let q = mlx_arm_vulkan::queue_stats();
    let s = |ns: u64| ns as f64 * 1e-9;
    Some([
        q.dispatches as f64,
        q.barriers as f64,
        q.submits as f64,
        q.waits as f64,
        s(q.wait_ns),
        s(q.record_ns),
        s(q.submit_ns),
        s(q.alloc_ns),
        s(q.command_ns),
        s(q.reclaim_ns),
    ])
}

#[cfg(not(feature = "vulkan"))]
fn gpu_queue() -> Option<[f64; QUEUE_COUNTERS]> {
    None
}

/// GPU time per kernel so far (name, dispatches, nanoseconds): empty unless the backend runs
/// with `MLX_ARM_VULKAN_PROFILE=1`.
#[cfg(feature = "vulkan")]
fn gpu_kernel_times() -> Vec<(&'static str, f64, f64)> {
    mlx_arm_vulkan::kernel_times().into_iter().map(|k| (k.name, k.count as f64, k.gpu_ns)).collect()
}

#[cfg(not(feature = "vulkan"))]
fn gpu_kernel_times() -> Vec<(&'static str, f64, f64)> {
    Vec::new()
}

#[cfg(not(feature = "vulkan"))]
fn gpu_init() -> Result<String> {
    Err(Error::unsupported("mlx-arm", "--device gpu: this mlx-arm was built without the `vulkan` feature"))
}

impl Session {
    /// The prompt text for `messages`: the chat template's rendering (with the assistant's
    /// turn opened), or the last message's text when the model has no template.
    fn chat_prompt(&self, messages: &[Message]) -> Result<String> {
        match self.tokenizer.chat_template() {
            Some(t) => {
                let bos = self.tokenizer.bos_id().map(|id| self.tokenizer.token_text(id)).transpose()?.unwrap_or_default().to_string();
                let eos = self.tokenizer.eos_ids().first().map(|&id| self.tokenizer.token_text(id)).transpose()?.unwrap_or_default().to_string();
                chat::render(t, messages, true, &bos, &eos)
            }
            None => Ok(messages.last().map(|m| m.content.clone()).unwrap_or_default()),
        }
    }
}

fn print_stats(stats: &Stats, cache: &KvCache) {
    eprintln!(
        "\n[prompt: {} tokens, {:.1} tok/s | generation: {} tokens, {:.1} tok/s | first token after {:.0} ms | peak memory {:.1} MB (KV cache {:.1} MB), peak RSS {}]",
        stats.prompt_tokens,
        stats.prompt_tps(),
        stats.generated_tokens,
        stats.generation_tps(),
        stats.prompt_secs * 1e3,
        mlx_arm_core::buffer::peak_memory() as f64 / 1e6,
        cache.nbytes() as f64 / 1e6,
        peak_rss().map_or_else(|| "n/a".to_string(), |kb| format!("{:.1} MB", kb as f64 / 1e3)),
    );
}

/// The process's peak resident set (kB) from /proc (Linux).
fn peak_rss() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn run_generate(a: GenerateArgs) -> Result<()> {
    let prompt = if a.prompt == "-" {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut s)
            .map_err(|e| Error::runtime("mlx-arm", format!("reading the prompt: {e}")))?;
        s
    } else {
        a.prompt.clone()
    };
    let s = open(&a.model)?;
    let text = if a.raw {
        prompt
    } else {
        let mut messages = Vec::new();
        if let Some(sys) = &a.system {
            messages.push(Message::new("system", sys));
        }
        messages.push(Message::new("user", &prompt));
        s.chat_prompt(&messages)?
    };
    // A template already writes the special tokens it wants; a raw prompt gets the
    // tokenizer's BOS rule.
    let ids = s.tokenizer.encode_prompt(&text)?;
    let mut cache = s.loaded.model.new_cache();
    let start = Instant::now();
    let now = || start.elapsed().as_secs_f64();
    let mut out = std::io::stdout();
    if a.raw {
        print!("{text}");
    }
    let res = generate_text(&s.loaded.model, &s.tokenizer, &mut cache, &ids, &a.sampling.config(), &a.sampling.stop, &now, &mut |t| {
        print!("{t}");
        let _ = out.flush();
        true
    })?;
    println!();
    if !a.quiet {
        print_stats(&res.stats, &cache);
    }
    Ok(())
}

fn run_chat(a: ChatArgs) -> Result<()> {
    let s = open(&a.model)?;
    let mut messages = Vec::new();
    if let Some(sys) = &a.system {
        messages.push(Message::new("system", sys));
    }
    let mut cache = s.loaded.model.new_cache();
    // Ids the cache holds, to reuse the common prefix of the next turn's prompt.
    let mut cached: Vec<u32> = Vec::new();
    let stdin = std::io::stdin();
    let mut out = std::io::stdout();
    loop {
        print!("> ");
        let _ = out.flush();
        let mut line = String::new();
        let n = stdin.lock().read_line(&mut line).map_err(|e| Error::runtime("mlx-arm", format!("{e}")))?;
        let line = line.trim_end_matches(['\n', '\r']);
        if n == 0 || line.is_empty() {
            return Ok(());
        }
        messages.push(Message::new("user", line));
        let ids = s.tokenizer.encode_prompt(&s.chat_prompt(&messages)?)?;
        let common = cached.iter().zip(&ids).take_while(|(a, b)| a == b).count().min(ids.len().saturating_sub(1));
        cache.truncate(common);
        let start = Instant::now();
        let now = || start.elapsed().as_secs_f64();
        let res = generate_text(&s.loaded.model, &s.tokenizer, &mut cache, &ids[common..], &a.sampling.config(), &a.sampling.stop, &now, &mut |t| {
            print!("{t}");
            let _ = out.flush();
            true
        })?;
        println!();
        cached = ids;
        cached.extend(&res.ids);
        cached.truncate(cache.offset());
        messages.push(Message::new("assistant", &res.text));
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

fn run_bench(a: BenchArgs) -> Result<()> {
    let s = open(&a.model)?;
    let model = &s.loaded.model;
    let vocab = model.config.vocab_size as u64;
    // Token ids as llama-bench uses them: arbitrary but fixed (a simple LCG over the vocabulary).
    let mut x = 12345u64;
    let prompt: Vec<u32> = (0..a.prompt_tokens.max(1))
        .map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((x >> 33) % vocab) as u32
        })
        .collect();
    let reps = a.reps.max(1);
    let mut pp = Vec::new();
    let mut tg = Vec::new();
    // GPU queue counters summed over the measured decode runs, and their time.
    let (mut tg_queue, mut tg_queue_s) = ([0f64; QUEUE_COUNTERS], 0f64);
    // GPU time per kernel over the measured decode runs (name, dispatches, ns).
    let mut tg_kernels: Vec<(&'static str, f64, f64)> = Vec::new();
    // One untimed warm-up of each, as llama-bench does. Each run's cache is dropped before
    // the next is made, so the peak RSS holds one cache at a time, as generation does.
    for rep in 0..=reps {
        let pp_s = {
            let mut cache = model.new_cache();
            let t = Instant::now();
            generate::prefill(model, &mut cache, &prompt, generate::DEFAULT_PREFILL_CHUNK)?;
            t.elapsed().as_secs_f64()
        };
        let queue_before = gpu_queue();
        let kernels_before = gpu_kernel_times();
        let tg_s = {
            let mut cache = model.new_cache();
            let t = Instant::now();
            // Greedy decoding as `generate` runs it: on the GPU only the chosen id comes back,
            // and each step is submitted before the previous one's token is read.
            std::hint::black_box(generate::decode_greedy(model, &mut cache, prompt[0], a.gen_tokens)?);
            t.elapsed().as_secs_f64()
        };
        if rep > 0 {
            pp.push(prompt.len() as f64 / pp_s);
            tg.push(a.gen_tokens as f64 / tg_s);
            if let (Some(b), Some(e)) = (queue_before, gpu_queue()) {
                for i in 0..QUEUE_COUNTERS {
                    tg_queue[i] += e[i] - b[i];
                }
                tg_queue_s += tg_s;
            }
            for (name, n, ns) in gpu_kernel_times() {
                let (n0, ns0) = kernels_before.iter().find(|k| k.0 == name).map_or((0.0, 0.0), |k| (k.1, k.2));
                match tg_kernels.iter_mut().find(|k| k.0 == name) {
                    Some(k) => (k.1, k.2) = (k.1 + n - n0, k.2 + ns - ns0),
                    None => tg_kernels.push((name, n - n0, ns - ns0)),
                }
            }
        }
    }
    // Time to first token: a fresh cache, the prompt, and the first token chosen (greedy).
    let mut ttft = Vec::new();
    let ttft_prompt = &prompt[..a.ttft_tokens.min(prompt.len())];
    if !ttft_prompt.is_empty() {
        for rep in 0..=reps {
            let mut cache = model.new_cache();
            let t = Instant::now();
            std::hint::black_box(generate::prefill_greedy(model, &mut cache, ttft_prompt, generate::DEFAULT_PREFILL_CHUNK)?);
            if rep > 0 {
                ttft.push(t.elapsed().as_secs_f64() * 1e3);
            }
        }
    }
    // The KV cache of the longest context measured (the prompt), as the cache allocates it.
    let kv_bytes = {
        let mut cache = model.new_cache();
        generate::prefill(model, &mut cache, &prompt, generate::DEFAULT_PREFILL_CHUNK)?;
        cache.nbytes()
    };
    let threads = mlx_arm_core::parallel::num_threads();
    println!("| model | size | threads | test | tok/s (median of {reps}) |");
    println!("|---|---:|---:|---|---:|");
    let name = match &s.loaded.origin {
        Origin::Gguf { path, .. } => path.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default(),
        Origin::Dir(d) => d.display().to_string(),
    };
    let size = format!("{:.1} MiB", s.loaded.file_bytes as f64 / (1 << 20) as f64);
    println!("| {name} | {size} | {threads} | pp{} | {:.1} |", prompt.len(), median(pp));
    println!("| {name} | {size} | {threads} | tg{} | {:.1} |", a.gen_tokens, median(tg));
    if tg_queue_s > 0.0 {
        let steps = (reps * a.gen_tokens).max(1) as f64;
        let [d, b, sub, w, wait_s, record_s, submit_s, alloc_s, command_s, reclaim_s] = tg_queue.map(|v| v / steps);
        let step_s = tg_queue_s / steps;
        println!(
            "GPU queue per decode step: {d:.0} dispatches, {b:.0} barriers, {sub:.1} submissions, {w:.1} waits; {:.2} ms waiting of {:.2} ms",
            wait_s * 1e3,
            step_s * 1e3
        );
        // Where the host's time goes: the backend's recording (µs per dispatch), the
        // submissions within it, and the rest (building the graph and walking it in core).
        println!(
            "GPU host time per decode step: {:.2} ms recording ({:.1} µs a dispatch; {:.2} ms of it submitting), {:.2} ms building and walking the graph",
            record_s * 1e3,
            record_s * 1e6 / d.max(1.0),
            submit_s * 1e3,
            (step_s - record_s - wait_s).max(0.0) * 1e3
        );
        println!(
            "  of the recording: {:.2} ms taking output buffers, {:.2} ms in dispatches' Vulkan calls, {:.2} ms freeing finished batches",
            alloc_s * 1e3,
            command_s * 1e3,
            reclaim_s * 1e3
        );
        if !tg_kernels.is_empty() {
            // The GPU's busy time per step, by kernel (MLX_ARM_VULKAN_PROFILE=1).
            tg_kernels.sort_by(|a, b| b.2.total_cmp(&a.2));
            let busy: f64 = tg_kernels.iter().map(|k| k.2).sum::<f64>() / steps;
            println!("GPU busy per decode step: {:.3} ms of {:.3} ms", busy * 1e-6, step_s * 1e3);
            for (name, n, ns) in &tg_kernels {
                println!("  {name:<14} {:>6.1} dispatches {:>8.1} µs ({:.2} µs each)", n / steps, ns / steps * 1e-3, ns / n.max(1.0) * 1e-3);
            }
        }
    }
    if !ttft.is_empty() {
        println!("time to first token, {}-token prompt: {:.1} ms (median of {reps})", ttft_prompt.len(), median(ttft));
    }
    let mib = |b: f64| b / (1 << 20) as f64;
    if let Some(kb) = peak_rss() {
        let rss = kb as f64 * 1024.0;
        let budget = s.loaded.file_bytes as f64 + kv_bytes as f64;
        println!(
            "peak RSS: {:.1} MiB = {:.3}x (file {:.1} MiB + KV cache {:.1} MiB)",
            mib(rss),
            rss / budget,
            mib(s.loaded.file_bytes as f64),
            mib(kv_bytes as f64)
        );
    }
    Ok(())
}
