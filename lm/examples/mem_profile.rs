//! Where the resident memory of a generation goes: `mem_profile [MODEL] [PROMPT] [STEPS]`.
//!
//! Prints the process's resident set split into file pages (the memory-mapped weights) and
//! anonymous pages (everything the program allocated), with the peak so far, after each
//! stage: loading the model, building the tokenizer, prefilling PROMPT tokens (default 128),
//! and STEPS decode steps (default 64). A debugging aid for issue 16's memory target
//! (`mlx-arm bench` reports the figure itself). Linux only (reads /proc/self/status).

use std::time::Instant;

/// `(VmRSS, RssAnon, RssFile, VmHWM)` in kB.
fn rss() -> [u64; 4] {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let get = |key: &str| -> u64 {
        s.lines()
            .find(|l| l.starts_with(key))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    [get("VmRSS:"), get("RssAnon:"), get("RssFile:"), get("VmHWM:")]
}

fn report(stage: &str, t: Instant) {
    let [total, anon, file, hwm] = rss();
    let mib = |kb: u64| kb as f64 / 1024.0;
    println!(
        "| {stage} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.0} |",
        mib(total),
        mib(file),
        mib(anon),
        mib(hwm),
        mlx_arm_core::buffer::cache_memory() as f64 / (1 << 20) as f64,
        t.elapsed().as_secs_f64() * 1e3
    );
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).map(std::path::PathBuf::from).unwrap_or_else(mlx_arm_lm::load::files::default_model_path);
    let prompt_len: usize = args.get(2).map(|s| s.parse()).transpose()?.unwrap_or(128);
    let steps: usize = args.get(3).map(|s| s.parse()).transpose()?.unwrap_or(64);
    let t = Instant::now();
    println!("| stage | RSS MiB | file MiB | anon MiB | peak (VmHWM) MiB | buffer cache MiB | ms |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    report("start", t);
    // As `mlx-arm` loads: the weights read in, the metadata handed to the tokenizer.
    let mut loaded = mlx_arm_lm::load::files::load_model_with_progress(&path, &mut |_, _| {})?;
    report("model loaded", t);
    let tokenizer = match &mut loaded.origin {
        mlx_arm_lm::load::files::Origin::Gguf { metadata, .. } => {
            Some(mlx_arm_lm::tokenizer::Tokenizer::from_gguf_owned(core::mem::take(metadata))?)
        }
        mlx_arm_lm::load::files::Origin::Dir(_) => None,
    };
    report("tokenizer built", t);
    let model = &loaded.model;
    let mut cache = model.new_cache();
    let prompt: Vec<u32> = (0..prompt_len.max(1) as u32).map(|i| (i * 7919 + 13) % model.config.vocab_size as u32).collect();
    let logits = mlx_arm_lm::generate::prefill(model, &mut cache, &prompt, mlx_arm_lm::generate::DEFAULT_PREFILL_CHUNK)?;
    report(&format!("prefill {prompt_len}"), t);
    let mut tok = mlx_arm_lm::sample::argmax(&logits);
    for _ in 0..steps {
        tok = mlx_arm_lm::sample::argmax(&mlx_arm_lm::generate::step(model, &mut cache, &[tok])?);
    }
    report(&format!("{steps} decode steps"), t);
    println!("KV cache {:.1} MiB, file {:.1} MiB", cache.nbytes() as f64 / (1 << 20) as f64, loaded.file_bytes as f64 / (1 << 20) as f64);
    drop(tokenizer);
    Ok(())
}
