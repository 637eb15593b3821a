//! Greedy continuation of a prompt given as token ids: `greedy_ids MODEL N ID ID ...`.
//! Prints the generated ids and the speed (a debugging aid beside the `mlx-arm` CLI).
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 4 {
        eprintln!("usage: greedy_ids MODEL N_TOKENS ID [ID ...]");
        std::process::exit(2);
    }
    let loaded = mlx_arm_lm::load::files::load_model(std::path::Path::new(&args[1]))?;
    let n: usize = args[2].parse()?;
    let prompt: Vec<u32> = args[3..].iter().map(|s| s.parse()).collect::<Result<_, _>>()?;
    let mut cache = loaded.model.new_cache();
    let cfg = mlx_arm_lm::generate::GenerateConfig { max_tokens: n, ..Default::default() };
    let start = Instant::now();
    let now = || start.elapsed().as_secs_f64();
    let (ids, _, stats) = mlx_arm_lm::generate::generate(&loaded.model, &mut cache, &prompt, &cfg, &now, &mut |_| true)?;
    println!("{ids:?}");
    // MLX_ARM_DUMP_LOGITS=FILE: the prompt's last-position logits as raw little-endian f32.
    if let Ok(path) = std::env::var("MLX_ARM_DUMP_LOGITS") {
        let mut cache = loaded.model.new_cache();
        // MLX_ARM_PREFILL_CHUNK=1 runs the prompt one token per step (a check of the prefill path).
        let chunk = std::env::var("MLX_ARM_PREFILL_CHUNK").ok().and_then(|v| v.parse().ok()).unwrap_or(512);
        let logits = mlx_arm_lm::generate::prefill(&loaded.model, &mut cache, &prompt, chunk)?;
        let bytes: Vec<u8> = logits.iter().flat_map(|v| v.to_le_bytes()).collect();
        std::fs::write(path, bytes)?;
    }
    eprintln!(
        "prompt {} tok in {:.3}s ({:.1} tok/s), generated {} tok ({:.1} tok/s)",
        stats.prompt_tokens, stats.prompt_secs, stats.prompt_tps(), stats.generated_tokens, stats.generation_tps()
    );
    Ok(())
}
