//! The tiny Llama directories the Python tests drive mlx-lm with (tests/python/golden/mlx_lm,
//! float32 and `mlx_lm.convert`'s 4-bit), run by the Rust runner: the tokenizer and greedy
//! tokens equal real MLX 0.32.4 + mlx-lm 0.32.2's (goldens.json, written by gen_mlx_lm.py).
//! Their tokenizer_config.json holds `model_max_length` as 10^30, the integer transformers
//! writes by default, and their chat template lives in chat_template.jinja, as every directory
//! `mlx_lm.convert` makes has them.

use std::path::PathBuf;

use mlx_arm_lm::generate::{generate, GenerateConfig};
use mlx_arm_lm::chat::{render, Message};
use mlx_arm_lm::load::files::{dir_tokenizer, load_model};

fn golden_dir(p: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/python/golden/mlx_lm").join(p)
}

fn ids(v: &serde_json::Value) -> Vec<u32> {
    v.as_array().unwrap().iter().map(|x| x.as_u64().unwrap() as u32).collect()
}

#[test]
fn mlx_lm_directories_generate_real_mlx_tokens() {
    let g: serde_json::Value = serde_json::from_slice(&std::fs::read(golden_dir("goldens.json")).unwrap()).unwrap();
    for (variant, dir) in [("fp32", "tiny_llama"), ("q4", "tiny_llama_q4")] {
        let dir = golden_dir(dir);
        let config = std::fs::read(dir.join("tokenizer_config.json")).unwrap();
        assert!(String::from_utf8_lossy(&config).contains("1000000000000000019884624838656"), "the fixture lost its 10^30");
        let tok = dir_tokenizer(&dir).unwrap_or_else(|e| panic!("{variant}: tokenizer: {e}"));
        // The chat prompt, rendered from chat_template.jinja, as mlx-lm renders it.
        let chat = &g[variant]["chat"];
        let template = tok.chat_template().unwrap_or_else(|| panic!("{variant}: chat_template.jinja not read"));
        let text = render(template, &[Message::new("user", "Tell me about arrays.")], true, "", "").unwrap();
        assert_eq!(text, chat["prompt"].as_str().unwrap(), "{variant}: rendered chat prompt");
        assert_eq!(tok.encode(&text, true).unwrap(), ids(&chat["prompt_ids"]), "{variant}: chat prompt ids");
        let case = &g[variant]["text"];
        let prompt = tok.encode(case["prompt"].as_str().unwrap(), true).unwrap();
        assert_eq!(prompt, ids(&case["prompt_ids"]), "{variant}: prompt ids");
        let loaded = load_model(&dir).unwrap_or_else(|e| panic!("{variant}: {e}"));
        let want = ids(&case["tokens"]);
        let cfg = GenerateConfig { max_tokens: want.len(), ..GenerateConfig::default() };
        let mut cache = loaded.model.new_cache();
        let (got, _, _) = generate(&loaded.model, &mut cache, &prompt, &cfg, &|| 0.0, &mut |_| true).unwrap();
        assert_eq!(got, want, "{variant}: greedy tokens differ from mlx-lm's");
    }
}
