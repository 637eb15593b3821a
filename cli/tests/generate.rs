//! `mlx-arm generate` as a user runs it: the printed text of a greedy raw continuation of the
//! default model starts with the prompt and llama.cpp's greedy continuation up to llama.cpp's
//! first near-tie (two best tokens within 1.5: see docs/MODELS.md for why no implementation can
//! be held to llama.cpp past that), and bad input ends with a clear message and a failure status.

use std::process::Command;

fn default_model_installed() -> bool {
    let ok = mlx_arm_lm::load::files::default_model_path().exists();
    if !ok {
        eprintln!("SKIPPED: the default model is not installed (scripts/setup.sh installs it)");
        assert!(std::env::var_os("CI").is_none(), "CI must have the default model installed");
    }
    ok
}

#[test]
fn generate_prints_llamacpps_text() {
    if !default_model_installed() {
        return;
    }
    let golden: serde_json::Value =
        serde_json::from_str(include_str!("../../lm/tests/data/llamacpp/llamacpp_goldens.json")).unwrap();
    let case = &golden["cases"][1];
    let prompt = case["prompt"].as_str().unwrap();
    let ids: Vec<u32> = case["greedy"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as u32).collect();
    let first_tie = case["step_margin"].as_array().unwrap().iter().position(|m| m.as_f64().unwrap() < 1.5).unwrap_or(ids.len());
    let loaded = mlx_arm_lm::load::files::load_model(&mlx_arm_lm::load::files::default_model_path()).unwrap();
    let mlx_arm_lm::load::files::Origin::Gguf { metadata, .. } = &loaded.origin else { panic!("a GGUF model") };
    let tok = mlx_arm_lm::tokenizer::Tokenizer::from_gguf(metadata).unwrap();
    let want = tok.decode(&ids[..first_tie]).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_mlx-arm"))
        .args(["generate", "--raw", "--quiet", "-n", "32", prompt])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with(&format!("{prompt}{want}")), "{text:?} does not start with {prompt:?} + {want:?}");
    assert!(text.len() > prompt.len() + want.len(), "nothing generated past llama.cpp's first near-tie");
}

#[test]
fn bad_input_is_a_clear_error() {
    let run = |args: &[&str]| Command::new(env!("CARGO_BIN_EXE_mlx-arm")).args(args).output().unwrap();
    let out = run(&["generate", "--model", "/nonexistent/model.gguf", "hi"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/model.gguf"));
    // --device gpu where no Vulkan driver loads (both names the loader reads point nowhere):
    // a clear message and exit status 1, before any model is read.
    let out = Command::new(env!("CARGO_BIN_EXE_mlx-arm"))
        .args(["generate", "--device", "gpu", "--model", "/nonexistent/model.gguf", "hi"])
        .env("VK_ICD_FILENAMES", "/nonexistent/mlx-arm-no-such-icd.json")
        .env("VK_DRIVER_FILES", "/nonexistent/mlx-arm-no-such-icd.json")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--device gpu needs a Vulkan driver and device"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let out = run(&["generate", "--temp", "-1", "--model", "/nonexistent", "hi"]);
    assert!(!out.status.success());
}
