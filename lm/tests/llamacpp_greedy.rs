//! The default model (SmolLM2-135M-Instruct, Q4_1 GGUF) against llama.cpp on the same file.
//! Goldens: tests/data/llamacpp/gen_llamacpp_goldens.sh (llama.cpp with an f32 KV cache, as
//! ours keeps). The model is installed by scripts/setup.sh; without it the tests say so
//! loudly, and fail under CI.
//!
//! Why "near-ties" appear below: this model quantizes every activation row to 8 bits before
//! each matmul (Q8_1/Q8_0, as llama.cpp does), so a rounding difference of one ulp anywhere can
//! flip an 8-bit value and move the logits by ~0.1. llama.cpp is not consistent with itself at
//! that level either: its greedy decode and its batched evaluation of the same sequence pick
//! different tokens where two candidates are within ~0.1 (cases 3 and 4 of the goldens), and its
//! f16 KV cache changes the first prompt's 6th token. So tokens are compared where llama.cpp's
//! top two are at least `TIE` apart; below that either of its top two is accepted.

use std::path::PathBuf;

use mlx_arm_core::Array;
use mlx_arm_lm::generate::{generate, GenerateConfig};
use mlx_arm_lm::load::files::{default_model_path, load_model};
use mlx_arm_lm::sample::argmax;

/// Largest |ours − llama.cpp| over the 64 most likely logits of a prompt's last position.
/// Measured 0.26–0.72 on the four prompts; the logits' standard deviation is about 3.
const MAX_TOP_LOGIT_DIFF: f64 = 1.0;
/// A margin between llama.cpp's two best tokens below which the choice is a tie: twice the
/// measured logit disagreement.
const TIE: f64 = 1.5;

fn model_path() -> Option<PathBuf> {
    let p = default_model_path();
    if p.exists() {
        return Some(p);
    }
    eprintln!("SKIPPED: the default model {} is not installed (scripts/setup.sh installs it)", p.display());
    assert!(std::env::var_os("CI").is_none(), "CI must have the default model installed");
    None
}

fn ids(v: &serde_json::Value) -> Vec<u32> {
    v.as_array().expect("array").iter().map(|x| x.as_u64().expect("id") as u32).collect()
}

fn goldens() -> serde_json::Value {
    serde_json::from_str(include_str!("data/llamacpp/llamacpp_goldens.json")).expect("golden json")
}

#[test]
fn logits_and_greedy_tokens_match_llamacpp() {
    let Some(path) = model_path() else { return };
    let model = &load_model(&path).expect("load the default model").model;
    let mut problems = Vec::new();
    for case in goldens()["cases"].as_array().expect("cases") {
        let prompt = case["prompt"].as_str().unwrap();
        let prompt_ids = ids(&case["ids"]);
        let want = ids(&case["greedy"]);
        let (top1, top2) = (ids(&case["step_top1"]), ids(&case["step_top2"]));
        let margin: Vec<f64> = case["step_margin"].as_array().unwrap().iter().map(|m| m.as_f64().unwrap()).collect();

        // Teacher forcing: prompt + llama.cpp's continuation in one pass; every generated
        // position's logits.
        let mut seq = prompt_ids.clone();
        seq.extend(&want[..want.len() - 1]);
        let x = Array::from_slice(&seq.iter().map(|&t| t as i32).collect::<Vec<_>>(), &[1, seq.len()]).unwrap();
        let mut cache = model.new_cache();
        let logits = model.forward(&x, &mut cache, false).unwrap().to_vec::<f32>().unwrap();
        let vocab = model.config.vocab_size;
        let row = |p: usize| &logits[p * vocab..(p + 1) * vocab];

        let last = row(prompt_ids.len() - 1);
        let mut worst = 0f64;
        for (i, l) in case["last_top_ids"].as_array().unwrap().iter().zip(case["last_top_logits"].as_array().unwrap()) {
            worst = worst.max((last[i.as_u64().unwrap() as usize] as f64 - l.as_f64().unwrap()).abs());
        }
        eprintln!("{prompt:?}: max top-64 logit difference {worst:.3}");
        if worst > MAX_TOP_LOGIT_DIFF {
            problems.push(format!("{prompt:?}: logits differ by {worst}"));
        }
        for (j, m) in margin.iter().enumerate() {
            let ours = argmax(row(prompt_ids.len() - 1 + j));
            let ok = if *m >= TIE { ours == top1[j] } else { ours == top1[j] || ours == top2[j] };
            if !ok {
                problems.push(format!("{prompt:?} position {j}: ours {ours}, llama.cpp {} / {} (margin {m:.2})", top1[j], top2[j]));
            }
        }

        // Free-running greedy: equal to llama.cpp's up to its first near-tie.
        let mut cache = model.new_cache();
        let cfg = GenerateConfig { max_tokens: want.len(), ..Default::default() };
        let (got, _, _) = generate(model, &mut cache, &prompt_ids, &cfg, &|| 0.0, &mut |_| true).unwrap();
        let same = got.iter().zip(&want).take_while(|(a, b)| a == b).count();
        let first_tie = margin.iter().position(|&m| m < TIE).unwrap_or(want.len());
        eprintln!("{prompt:?}: {same} of {} greedy tokens equal llama.cpp's (its first near-tie: token {first_tie})", want.len());
        if same < first_tie.min(want.len()) {
            problems.push(format!("{prompt:?}: greedy differs at token {same}, before llama.cpp's first near-tie {first_tie}"));
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}
