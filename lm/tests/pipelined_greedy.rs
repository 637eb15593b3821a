//! Greedy generation on the CPU is pipelined (step n+1 is built from step n's lazy token while
//! step n runs in the background, and a step built past the end is undone). The oracle is the
//! plain loop — evaluate a step, take `argmax` of its logits, run the next — on the default
//! model: the same tokens, and the same KV-cache length after every way generation can end,
//! so that a conversation continues from the right place.

use mlx_arm_core::parallel::{available_cores, num_threads, set_num_threads};
use mlx_arm_lm::generate::{generate, prefill, step, GenerateConfig, StopReason, DEFAULT_PREFILL_CHUNK};
use mlx_arm_lm::kv_cache::KvCache;
use mlx_arm_lm::load::files::{default_model_path, load_model};
use mlx_arm_lm::model::Model;
use mlx_arm_lm::sample::argmax;

/// The plain loop: up to `max` tokens, ending early at a stop id or after `stop_after` tokens
/// (the callback's stop); leaves the cache as `generate` must.
fn plain(model: &Model, cache: &mut KvCache, prompt: &[u32], max: usize, stop_ids: &[u32], stop_after: usize) -> Vec<u32> {
    let mut logits = prefill(model, cache, prompt, DEFAULT_PREFILL_CHUNK).unwrap();
    let mut out = Vec::new();
    loop {
        let t = argmax(&logits);
        if stop_ids.contains(&t) {
            break;
        }
        out.push(t);
        if out.len() >= stop_after || out.len() >= max {
            break;
        }
        logits = step(model, cache, &[t]).unwrap();
    }
    out
}

#[test]
fn pipelined_greedy_equals_the_plain_loop_and_leaves_the_cache_in_place() {
    let path = default_model_path();
    if !path.exists() {
        eprintln!("SKIPPED: the default model {} is not installed (scripts/setup.sh installs it)", path.display());
        assert!(std::env::var_os("CI").is_none(), "CI must have the default model installed");
        return;
    }
    // The pipeline runs where a core is left beside the kernels' threads.
    set_num_threads(1);
    if num_threads() >= available_cores() {
        eprintln!("SKIPPED: one core only, generation is not pipelined here");
        return;
    }
    let model = &load_model(&path).unwrap().model;
    let prompt: Vec<u32> = vec![504, 3458, 282, 4649, 314]; // five ordinary token ids
    let full = plain(model, &mut model.new_cache(), &prompt, 12, &[], usize::MAX);
    assert_eq!(full.len(), 12);
    // (max tokens, stop ids, callback stop after): the length limit, a stop token (the 4th
    // token of the full run), the callback.
    for (max, stop_ids, stop_after, reason) in [
        (12, vec![], usize::MAX, StopReason::Length),
        (12, vec![full[3]], usize::MAX, StopReason::Stop),
        (12, vec![], 5, StopReason::Callback),
        (1, vec![], usize::MAX, StopReason::Length),
    ] {
        let (mut want_cache, mut got_cache) = (model.new_cache(), model.new_cache());
        let want = plain(model, &mut want_cache, &prompt, max, &stop_ids, stop_after);
        let cfg = GenerateConfig { max_tokens: max, stop_ids: stop_ids.clone(), ..Default::default() };
        let mut seen = 0;
        let (got, why, _) = generate(model, &mut got_cache, &prompt, &cfg, &|| 0.0, &mut |_| {
            seen += 1;
            seen < stop_after
        })
        .unwrap();
        assert_eq!(got, want, "max {max}, stop ids {stop_ids:?}, stop after {stop_after}");
        assert_eq!(why, reason);
        assert_eq!(got_cache.offset(), want_cache.offset(), "cache length after {reason:?}");
        // The conversation goes on from there: the next turn's tokens are the same too.
        let next: Vec<u32> = vec![1, 2, 3];
        let want2 = plain(model, &mut want_cache, &next, 6, &[], usize::MAX);
        let cfg2 = GenerateConfig { max_tokens: 6, ..Default::default() };
        let (got2, _, _) = generate(model, &mut got_cache, &next, &cfg2, &|| 0.0, &mut |_| true).unwrap();
        assert_eq!(got2, want2, "second turn after {reason:?}");
    }
    set_num_threads(0);
}
