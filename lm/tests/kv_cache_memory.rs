//! The KV cache's memory over a long generation. Growing copies every layer's buffers into
//! larger ones; the outgrown buffers must not stay behind in the core's buffer cache (no later
//! request has their size, so they would stay until the process ends: 224 MB peak RSS for
//! 1000 tokens of the 94 MB default model before, 155 MB after), and a generation whose length
//! is known grows once. Its own test binary: the buffer cache is process-wide.

use mlx_arm_core::buffer::cache_memory;
use mlx_arm_lm::generate::{generate, prefill, step, GenerateConfig, DEFAULT_PREFILL_CHUNK};
use mlx_arm_lm::kv_cache::KvCache;
use mlx_arm_lm::load::files::{default_model_path, load_model};
use mlx_arm_lm::sample::argmax;

const STEP: usize = 8;
const PROMPT: [u32; 5] = [504, 3458, 282, 4649, 314]; // five ordinary token ids

#[test]
fn outgrown_buffers_are_released_and_a_known_length_grows_once() {
    let path = default_model_path();
    if !path.exists() {
        eprintln!("SKIPPED: the default model {} is not installed (scripts/setup.sh installs it)", path.display());
        assert!(std::env::var_os("CI").is_none(), "CI must have the default model installed");
        return;
    }
    let model = &load_model(&path).unwrap().model;
    let layers = model.config.n_layers as u64;

    // Step by step: 5 prompt positions fill a capacity of 8; positions 8, 16 and 24 grow it.
    let mut cache = KvCache::new(model.config.n_layers, STEP);
    let mut logits = prefill(model, &mut cache, &PROMPT, DEFAULT_PREFILL_CHUNK).unwrap();
    let mut settled = usize::MAX;
    for _ in 0..27 {
        let before = cache.growths();
        logits = step(model, &mut cache, &[argmax(&logits)]).unwrap();
        if cache.growths() == before {
            // A step that did not grow leaves only its own temporaries in the buffer cache.
            settled = cache_memory();
        } else {
            // Each growth replaces both buffers of every layer…
            assert_eq!(cache.growths() - before, 2 * layers);
            // …and the replaced ones are gone from the buffer cache (without the release it
            // held 60 outgrown buffers more here).
            assert!(cache_memory() <= settled, "buffer cache {} bytes after a growth, {settled} before", cache_memory());
        }
    }
    assert_eq!(cache.offset(), 32);
    assert_eq!(cache.growths(), 3 * 2 * layers);

    // `generate` knows the reply's length: room for prompt + 27 tokens (32 positions) at once.
    let mut cache = KvCache::new(model.config.n_layers, STEP);
    let cfg = GenerateConfig { max_tokens: 27, ..Default::default() };
    let (out, _, _) = generate(model, &mut cache, &PROMPT, &cfg, &|| 0.0, &mut |_| true).unwrap();
    assert_eq!(out.len(), 27);
    assert_eq!(cache.growths(), 0, "the cache grew while generating a reply of known length");
    // A second turn grows once more, for its own reply.
    let (out, _, _) = generate(model, &mut cache, &[1, 2, 3], &cfg, &|| 0.0, &mut |_| true).unwrap();
    assert_eq!(out.len(), 27);
    assert_eq!(cache.growths(), 2 * layers);
}
