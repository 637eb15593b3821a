//! Tiny random-weight models against their reference implementations: Hugging Face
//! transformers (fp32) for HF directories and for the GGUF files llama.cpp's converter makes
//! from them, real mlx-lm for an `mlx_lm.convert` 4-bit directory. Models and goldens:
//! tests/data/hf/gen_hf_models.py (hidden 64, 2 layers, 4 query / 2 KV heads, ffn 128, vocab
//! 320; every weight random with std 0.2 so attention is far from uniform and RoPE matters).
//!
//! Variants: `llama` (untied output head), `tied` (tied embeddings), `llama3` (Llama 3.1 rope
//! scaling with original context 64 and head_dim 32, config in transformers 5's
//! `rope_parameters` form), `qwen2` (q/k/v biases, rope_theta 1e6, config in the older
//! top-level `rope_theta` form), `mistral` (llama's weights under MistralForCausalLM's config;
//! transformers gives bit-identical logits). GGUF: `llama` at F32/F16/Q8_0/Q4_0, `llama3` and
//! `qwen2` at F32 (llama.cpp permutes Llama's q/k rows, so these check the adjacent-pair rope
//! layout, Qwen2's half-split layout and the `rope_freqs.weight` factors).
//!
//! Errors are `max |ours − reference| / max |reference|` over all 12 × 320 logits.

use std::path::{Path, PathBuf};

use mlx_arm_core::Array;
use mlx_arm_lm::generate::{generate, GenerateConfig};
use mlx_arm_lm::load::files::{load_model, load_model_with, WeightMemory};
use mlx_arm_lm::model::Model;
use mlx_arm_lm::sample::argmax;

/// HF f32 directories and the F32 GGUF conversions against transformers: measured
/// 7.8e-7 – 1.5e-6.
const F32_REL: f64 = 1e-4;
/// F16 GGUF against transformers on the same (half-precision) weights: ours multiplies f16
/// weights with f16 activations, as mlx-lm does; measured 1.1e-3.
const F16_REL: f64 = 5e-3;
/// Q8_0 GGUF against transformers on the same dequantized weights: ours rounds activation rows
/// to 8 bits before each matmul, as llama.cpp does; measured 3.1e-2 (this random model amplifies
/// small perturbations: see below). A wrong layout or block decoding is off by ~1.
const Q8_0_REL: f64 = 0.1;
/// Q4_0 GGUF, likewise: measured 3.6e-2.
const Q4_0_REL: f64 = 0.1;
/// MLX 4-bit directory against mlx-lm on the same directory (same quantized weights, fp32
/// scales and activations): measured 1.0e-6.
const MLX_REL: f64 = 1e-4;

fn data(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/hf").join(p)
}

fn goldens() -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(data("goldens.json")).unwrap()).unwrap()
}

fn ids_of(v: &serde_json::Value) -> Vec<u32> {
    v.as_array().unwrap().iter().map(|x| x.as_u64().unwrap() as u32).collect()
}

/// A little-endian float32 `.npy` file (numpy's `np.save`): (shape, values).
fn read_npy(path: &Path) -> (Vec<usize>, Vec<f32>) {
    let b = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(&b[..6], b"\x93NUMPY");
    let (hlen, start) = match b[6] {
        1 => (u16::from_le_bytes([b[8], b[9]]) as usize, 10),
        _ => (u32::from_le_bytes([b[8], b[9], b[10], b[11]]) as usize, 12),
    };
    let header = std::str::from_utf8(&b[start..start + hlen]).unwrap();
    assert!(header.contains("'descr': '<f4'") && header.contains("'fortran_order': False"), "{header}");
    let shape_txt = header.split("'shape': (").nth(1).unwrap().split(')').next().unwrap();
    let shape: Vec<usize> = shape_txt.split(',').filter(|s| !s.trim().is_empty()).map(|s| s.trim().parse().unwrap()).collect();
    let vals: Vec<f32> =
        b[start + hlen..].chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    assert_eq!(vals.len(), shape.iter().product::<usize>());
    (shape, vals)
}

/// All positions' logits of `ids` run in one pass.
fn logits(model: &Model, ids: &[u32]) -> Vec<f32> {
    let x = Array::from_slice(&ids.iter().map(|&t| t as i32).collect::<Vec<_>>(), &[1, ids.len()]).unwrap();
    let mut cache = model.new_cache();
    let out = model.forward(&x, &mut cache, false).unwrap();
    assert_eq!(out.shape(), [1, ids.len(), model.config.vocab_size]);
    out.to_vec::<f32>().unwrap()
}

struct Cmp {
    rel: f64,
    top1_agree: usize,
    positions: usize,
}

fn compare(ours: &[f32], reference: &[f32], vocab: usize) -> Cmp {
    assert_eq!(ours.len(), reference.len());
    let max_ref = reference.iter().fold(0f64, |m, &r| m.max((r as f64).abs()));
    let max_diff = ours.iter().zip(reference).fold(0f64, |m, (&a, &r)| m.max((a as f64 - r as f64).abs()));
    let positions = reference.len() / vocab;
    let top1_agree = (0..positions)
        .filter(|&p| argmax(&ours[p * vocab..(p + 1) * vocab]) == argmax(&reference[p * vocab..(p + 1) * vocab]))
        .count();
    Cmp { rel: max_diff / max_ref, top1_agree, positions }
}

fn greedy(model: &Model, prompt: &[u32], n: usize) -> Vec<u32> {
    let cfg = GenerateConfig { max_tokens: n, ..GenerateConfig::default() };
    let mut cache = model.new_cache();
    generate(model, &mut cache, prompt, &cfg, &|| 0.0, &mut |_| true).unwrap().0
}

/// Loads `path`, compares its logits with `golden` (an .npy under tests/data/hf) and, when
/// `greedy_of` names a variant, its 16-token greedy continuation with transformers'.
fn check(path: &Path, golden: &str, bound: f64, greedy_of: Option<&str>) -> Cmp {
    let g = goldens();
    let ids = ids_of(&g["ids"]);
    let loaded = load_model(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let model = &loaded.model;
    let (shape, reference) = read_npy(&data(golden));
    assert_eq!(shape, [ids.len(), model.config.vocab_size]);
    let c = compare(&logits(model, &ids), &reference, model.config.vocab_size);
    eprintln!(
        "{}: max|diff|/max|ref| = {:.2e} (bound {bound:.0e}), top-1 agrees at {}/{} positions",
        path.strip_prefix(data("")).unwrap_or(path).display(),
        c.rel,
        c.top1_agree,
        c.positions
    );
    assert!(c.rel <= bound, "{}: relative logit error {:.3e} above {bound:.0e}", path.display(), c.rel);
    if let Some(v) = greedy_of {
        let want = ids_of(&g["variants"][v]["greedy"]);
        let got = greedy(model, &ids, want.len());
        assert_eq!(got, want, "{}: greedy continuation differs from transformers'", path.display());
    }
    c
}

#[test]
fn hf_directories_match_transformers() {
    for v in ["llama", "tied", "llama3", "qwen2"] {
        let c = check(&data(v), &format!("{v}/logits.npy"), F32_REL, Some(v));
        assert_eq!(c.top1_agree, c.positions);
    }
}

#[test]
fn tied_and_untied_heads_are_detected() {
    let untied = load_model(&data("llama")).unwrap().model;
    let tied = load_model(&data("tied")).unwrap().model;
    assert!(!untied.config.tie_embeddings);
    assert!(tied.config.tie_embeddings);
}

/// MistralForCausalLM without a sliding window is Llama under another name: its config.json
/// with llama's weights gives transformers' llama logits (the generator checks transformers
/// agrees with itself bit for bit).
#[test]
fn mistral_config_runs_as_llama() {
    let dir = scratch("mistral");
    std::fs::copy(data("mistral/config.json"), dir.join("config.json")).unwrap();
    std::fs::copy(data("llama/model.safetensors"), dir.join("model.safetensors")).unwrap();
    check(&dir, "llama/logits.npy", F32_REL, Some("llama"));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn gguf_f32_conversions_match_transformers() {
    // llama: q/k permuted by the converter, adjacent-pair rope; llama3: rope_freqs.weight;
    // qwen2: half-split rope and biases.
    for v in ["llama", "llama3", "qwen2"] {
        let c = check(&data(&format!("gguf/{v}-F32.gguf")), &format!("{v}/logits.npy"), F32_REL, Some(v));
        assert_eq!(c.top1_agree, c.positions);
    }
}

/// F16/Q8_0/Q4_0 files against transformers run with the very weights each file stores
/// (dequantized by gguf-py, q/k un-permuted): what remains is our activation rounding (f16
/// matmuls for F16, 8-bit activation rows for Q8_0/Q4_0, as llama.cpp does). The files'
/// distance from the fp32 model itself is reported, not asserted: this random model is
/// sensitive, and transformers on the dequantized Q8_0 weights is already 3.8e-2 away from fp32
/// (top-1 10/12), on the Q4_0 weights 0.55 away (top-1 6/12).
#[test]
fn gguf_f16_and_quantized_match_their_dequantized_weights() {
    let g = goldens();
    for (q, bound) in [("F16", F16_REL), ("Q8_0", Q8_0_REL), ("Q4_0", Q4_0_REL)] {
        let c = check(&data(&format!("gguf/llama-{q}.gguf")), &format!("gguf/llama-{q}.logits.npy"), bound, None);
        let far = &g["gguf_llama_vs_hf_fp32"][q];
        eprintln!("  (transformers on these weights vs fp32: {:.2e}, top-1 {}/12)", far["rel"].as_f64().unwrap(), far["top1_agree"]);
        assert_eq!(c.top1_agree, c.positions, "{q}: top-1 differs from transformers on the same weights");
    }
}

#[test]
fn mlx_4bit_directory_matches_mlx_lm() {
    let c = check(&data("mlx-llama-4bit"), "mlx-llama-4bit/logits.npy", MLX_REL, None);
    assert_eq!(c.top1_agree, c.positions);
}

/// A tiny random Gemma directory (tests/data/hf/gen_gemma_mlx.py) against real mlx-lm's
/// `gemma` model on it: (1 + weight) norms, √hidden embedding scale, GELU feed-forward, tied
/// output, head dimension 32 with 4 query heads of a 64-wide model, one KV head.
#[test]
fn gemma_directory_matches_mlx_lm() {
    let dir = data("gemma");
    let g: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("goldens.json")).unwrap()).unwrap();
    let ids = ids_of(&g["ids"]);
    let model = load_model(&dir).unwrap().model;
    assert!(model.config.tie_embeddings && model.config.head_dim == 32);
    let (shape, reference) = read_npy(&dir.join("logits.npy"));
    assert_eq!(shape, [ids.len(), model.config.vocab_size]);
    let c = compare(&logits(&model, &ids), &reference, model.config.vocab_size);
    eprintln!("gemma: max|diff|/max|ref| = {:.2e}, top-1 {}/{}", c.rel, c.top1_agree, c.positions);
    assert!(c.rel <= F32_REL, "gemma: relative logit error {:.3e} above {F32_REL:.0e}", c.rel);
    assert_eq!(c.top1_agree, c.positions);
    assert_eq!(greedy(&model, &ids, 16), ids_of(&g["greedy"]), "gemma: greedy continuation differs from mlx-lm's");
}

/// Goldens of the Gemma 2 / 3 models and Gemma GGUF files (tests/data/hf/gen_gemma23_mlx.py).
fn gemma23_goldens() -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(data("gemma23_goldens.json")).unwrap()).unwrap()
}

/// Loads `path` and checks, against mlx-lm: the logits of the prompt followed by its greedy
/// continuation (28 positions in one pass, far past the 4-position window of the sliding
/// layers) and the greedy continuation itself, which generation computes one token at a
/// time through the KV cache.
fn check_gemma(path: &Path, golden_npy: &str, golden: &serde_json::Value) -> Model {
    let g = gemma23_goldens();
    let prompt = ids_of(&g["ids"]);
    let want = ids_of(&golden["greedy"]);
    let model = load_model(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())).model;
    let all: Vec<u32> = prompt.iter().chain(&want).copied().collect();
    let (shape, reference) = read_npy(&data(golden_npy));
    assert_eq!(shape, [all.len(), model.config.vocab_size]);
    let c = compare(&logits(&model, &all), &reference, model.config.vocab_size);
    let name = path.strip_prefix(data("")).unwrap_or(path).display().to_string();
    eprintln!("{name}: max|diff|/max|ref| = {:.2e}, top-1 {}/{}", c.rel, c.top1_agree, c.positions);
    assert!(c.rel <= F32_REL, "{name}: relative logit error {:.3e} above {F32_REL:.0e}", c.rel);
    assert_eq!(c.top1_agree, c.positions, "{name}");
    // The same positions run in chunks through the cache: several queries at an offset, where
    // the window both slices the cache and masks within the chunk.
    let mut cache = model.new_cache();
    let mut chunked = Vec::new();
    for part in [&all[..5], &all[5..12], &all[12..]] {
        let x = Array::from_slice(&part.iter().map(|&t| t as i32).collect::<Vec<_>>(), &[1, part.len()]).unwrap();
        chunked.extend(model.forward(&x, &mut cache, false).unwrap().to_vec::<f32>().unwrap());
    }
    let cc = compare(&chunked, &reference, model.config.vocab_size);
    assert!(cc.rel <= F32_REL, "{name}: chunked prefill's relative logit error {:.3e} above {F32_REL:.0e}", cc.rel);
    assert_eq!(greedy(&model, &prompt, want.len()), want, "{name}: greedy continuation differs from mlx-lm's");
    // One position at a time through a cache growing 2 positions at a time: the sliding-window
    // layers move to a new buffer every few tokens, keeping only the window's positions.
    let mut cache = model.cache_with_step(2);
    let mut stepped = Vec::new();
    for &tok in &all {
        let x = Array::from_slice(&[tok as i32], &[1, 1]).unwrap();
        stepped.extend(model.forward(&x, &mut cache, false).unwrap().to_vec::<f32>().unwrap());
    }
    let sc = compare(&stepped, &reference, model.config.vocab_size);
    assert!(sc.rel <= F32_REL, "{name}: stepped decoding's relative logit error {:.3e} above {F32_REL:.0e}", sc.rel);
    if (0..model.config.n_layers).any(|i| model.config.is_local(i)) {
        let mut full = mlx_arm_lm::kv_cache::KvCache::new(model.config.n_layers, 2);
        let x = Array::from_slice(&all.iter().map(|&t| t as i32).collect::<Vec<_>>(), &[1, all.len()]).unwrap();
        model.forward(&x, &mut full, false).unwrap().to_vec::<f32>().unwrap();
        assert!(cache.nbytes() < full.nbytes(), "{name}: the sliding-window layers kept every position");
    }
    model
}

/// Gemma 2 (four norms per block, tanh GELU, attention and final soft-caps,
/// query_pre_attn_scalar 48 with head_dim 32, a 4-position window on layer 0) against mlx-lm's
/// gemma2 blocks with the window applied on even layers.
#[test]
fn gemma2_directory_matches_mlx_lm() {
    let m = check_gemma(&data("gemma2"), "gemma2/logits.npy", &gemma23_goldens()["gemma2"]);
    let c = &m.config;
    assert_eq!((c.sliding_window, c.attn_softcap, c.final_softcap), (Some(4), Some(5.0), Some(15.0)));
    assert!(c.is_local(0) && !c.is_local(1) && c.tie_embeddings);
}

/// Gemma 3 text (q/k norms, 5 local layers with a 4-position window and rope base 1e4, one
/// global layer with base 1e6 and linear rope scaling) against mlx-lm's gemma3_text.
#[test]
fn gemma3_directory_matches_mlx_lm() {
    let m = check_gemma(&data("gemma3"), "gemma3/logits.npy", &gemma23_goldens()["gemma3"]);
    let locals: Vec<bool> = (0..6).map(|i| m.config.is_local(i)).collect();
    assert_eq!(locals, [true, true, true, true, true, false]);
}

/// A `gemma3` (image-text) directory: the same text model under `text_config`, its tensors
/// under `language_model.`, beside vision-tower tensors that must be left alone.
#[test]
fn gemma3_image_text_directory_runs_its_text_model() {
    let d = scratch("gemma3-it");
    let text: serde_json::Value = serde_json::from_slice(&std::fs::read(data("gemma3/config.json")).unwrap()).unwrap();
    let vocab = text["vocab_size"].clone();
    let cfg = serde_json::json!({"model_type": "gemma3", "text_config": text, "vocab_size": vocab,
                                 "vision_config": {"model_type": "siglip_vision_model"}});
    std::fs::write(d.join("config.json"), cfg.to_string()).unwrap();
    std::fs::copy(data("gemma3/model.safetensors"), d.join("model.safetensors")).unwrap();
    rename_safetensors(&d.join("model.safetensors"), &|n| format!("language_model.{n}"), "vision_tower.patch_embedding.weight");
    let ids = ids_of(&gemma23_goldens()["ids"]);
    let want = logits(&load_model(&data("gemma3")).unwrap().model, &ids);
    let got = logits(&load_model(&d).unwrap().model, &ids);
    assert!(got.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits()), "gemma3 wrapper logits differ");
    // Without its text_config, the directory is refused with a clear error.
    std::fs::write(d.join("config.json"), r#"{"model_type": "gemma3"}"#).unwrap();
    let e = load_err(&d);
    assert!(e.contains("text_config"), "{e}");
    std::fs::remove_dir_all(&d).ok();
}

/// The same tiny models as GGUF files written with llama.cpp's conventions (norms stored with
/// the 1 added, post_attention_norm / post_ffw_norm / attn_q_norm names, soft-cap and window
/// keys, tied output), against mlx-lm run with the settings llama.cpp implies: attention scale
/// 1/√head_dim, the tanh GELU for Gemma 1, Gemma 3's fixed pattern of 6 and local base 1e4.
#[test]
fn gemma_gguf_files_match_mlx_lm() {
    let g = gemma23_goldens();
    check_gemma(&data("gguf/gemma-F32.gguf"), "gguf/gemma-F32.logits.npy", &g["gemma_gguf"]);
    let m = check_gemma(&data("gguf/gemma2-F32.gguf"), "gemma2/gguf_logits.npy", &g["gemma2"]["gguf"]);
    assert_eq!((m.config.sliding_window, m.config.attn_softcap), (Some(4), Some(5.0)));
    check_gemma(&data("gguf/gemma3-F32.gguf"), "gemma3/logits.npy", &g["gemma3"]);
}

/// The Gemma-style SentencePiece vocabulary of gguf/gemma3-F32.gguf (gen_gemma23_mlx.py):
/// no space prefix (llama.cpp's converter writes `add_space_prefix = false` for Gemma),
/// control tokens parsed, `<0x0A>` byte fallback for the newline, and the file's chat
/// template rendered and encoded with one BOS although it writes `bos_token` itself. The
/// expected ids follow by hand from llama.cpp's rule (merge the pair whose piece scores
/// highest): ids 21 `Hello`, 26 `▁world`, 29 `user`, 4/5 `<start_of_turn>`/`<end_of_turn>`,
/// 6 `<0x0A>`, 17 11 14 9 10 `m o d e l` (no merges).
#[test]
fn gemma_gguf_tokenizer_and_chat_template() {
    use mlx_arm_lm::chat::{render, Message};
    use mlx_arm_lm::load::files::Origin;
    use mlx_arm_lm::tokenizer::Tokenizer;
    let Origin::Gguf { metadata, .. } = load_model(&data("gguf/gemma3-F32.gguf")).unwrap().origin else {
        panic!("not a GGUF origin")
    };
    let tok = Tokenizer::from_gguf(&metadata).unwrap();
    assert_eq!(tok.encode("Hello world", true).unwrap(), [2, 21, 26]);
    assert_eq!(tok.decode(&[21, 26]).unwrap(), "Hello world");
    assert_eq!(tok.encode("<start_of_turn>user\nHello<end_of_turn>\n", true).unwrap(), [2, 4, 29, 6, 21, 5, 6]);
    let bos = tok.token_text(tok.bos_id().unwrap()).unwrap().to_string();
    let text = render(tok.chat_template().unwrap(), &[Message::new("user", " Hello world ")], true, &bos, "<eos>").unwrap();
    assert_eq!(text, "<bos><start_of_turn>user\nHello world<end_of_turn>\n<start_of_turn>model\n");
    assert_eq!(tok.encode_prompt(&text).unwrap(), [2, 4, 29, 6, 21, 26, 5, 6, 4, 17, 11, 14, 9, 10, 6]);
    // A prompt without the BOS text still gets one.
    assert_eq!(tok.encode_prompt("Hello world").unwrap(), [2, 21, 26]);
    assert!(tok.eos_ids().contains(&5), "<end_of_turn> must end generation");
}

/// Every way of bringing weights into memory gives the very same model: the bytes read into
/// huge-page memory are the file's, so logits are bit-identical to the mapped model's, for a
/// GGUF file and for a safetensors directory; progress ends at the files' total size.
#[test]
fn weight_memory_modes_load_the_same_bytes() {
    let ids = ids_of(&goldens()["ids"]);
    for path in [data("gguf/llama-Q8_0.gguf"), data("llama")] {
        let want = logits(&load_model(&path).unwrap().model, &ids);
        for memory in [WeightMemory::Mapped, WeightMemory::HugePages, WeightMemory::Auto] {
            let mut reports: Vec<(u64, u64)> = Vec::new();
            let loaded = load_model_with(&path, memory, &mut |d, t| reports.push((d, t))).unwrap();
            let got = logits(&loaded.model, &ids);
            assert!(got.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits()), "{}: {memory:?} logits differ", path.display());
            assert!(reports.windows(2).all(|w| w[0].0 <= w[1].0), "{memory:?}: progress went backwards");
            assert_eq!(reports.last(), Some(&(loaded.file_bytes, loaded.file_bytes)), "{memory:?}: progress did not end at the total");
        }
    }
    let missing = data("no-such-model.gguf");
    assert!(load_model_with(&missing, WeightMemory::HugePages, &mut |_, _| {}).is_err());
}

// ---- hostile directories ------------------------------------------------------------------

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mlx-arm-hfref-{}-{name}", std::process::id()));
    std::fs::remove_dir_all(&d).ok();
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A copy of the `llama` directory in a scratch folder.
fn llama_copy(name: &str) -> PathBuf {
    let d = scratch(name);
    for f in ["config.json", "model.safetensors"] {
        std::fs::copy(data("llama").join(f), d.join(f)).unwrap();
    }
    d
}

/// Rewrites a safetensors file through `edit(name, dtype, shape) -> Some(new shape)` (None
/// drops the tensor); data are repacked.
fn edit_safetensors(path: &Path, edit: &dyn Fn(&str, &mut Vec<u64>) -> bool) {
    let b = std::fs::read(path).unwrap();
    let n = u64::from_le_bytes(b[..8].try_into().unwrap()) as usize;
    let header: serde_json::Map<String, serde_json::Value> = serde_json::from_slice(&b[8..8 + n]).unwrap();
    let body = &b[8 + n..];
    let mut out_header = serde_json::Map::new();
    let mut out_body = Vec::new();
    for (name, info) in header {
        if name == "__metadata__" {
            out_header.insert(name, info);
            continue;
        }
        let off: Vec<usize> = info["data_offsets"].as_array().unwrap().iter().map(|x| x.as_u64().unwrap() as usize).collect();
        let mut shape: Vec<u64> = info["shape"].as_array().unwrap().iter().map(|x| x.as_u64().unwrap()).collect();
        if !edit(&name, &mut shape) {
            continue;
        }
        let start = out_body.len();
        out_body.extend_from_slice(&body[off[0]..off[1]]);
        out_header.insert(
            name,
            serde_json::json!({"dtype": info["dtype"], "shape": shape, "data_offsets": [start, out_body.len()]}),
        );
    }
    let h = serde_json::to_vec(&out_header).unwrap();
    let mut out = (h.len() as u64).to_le_bytes().to_vec();
    out.extend(h);
    out.extend(out_body);
    std::fs::write(path, out).unwrap();
}

/// Renames every tensor of a safetensors file by `rename` and appends a copy of the first
/// tensor's data under the name `extra`.
fn rename_safetensors(path: &Path, rename: &dyn Fn(&str) -> String, extra: &str) {
    let b = std::fs::read(path).unwrap();
    let n = u64::from_le_bytes(b[..8].try_into().unwrap()) as usize;
    let header: serde_json::Map<String, serde_json::Value> = serde_json::from_slice(&b[8..8 + n]).unwrap();
    let mut body = b[8 + n..].to_vec();
    let mut out_header = serde_json::Map::new();
    for (name, info) in header {
        if name == "__metadata__" {
            out_header.insert(name, info);
            continue;
        }
        if !out_header.contains_key(extra) {
            let off: Vec<usize> = info["data_offsets"].as_array().unwrap().iter().map(|x| x.as_u64().unwrap() as usize).collect();
            let start = body.len();
            body.extend_from_within(off[0]..off[1]);
            let copy = serde_json::json!({"dtype": info["dtype"], "shape": info["shape"], "data_offsets": [start, body.len()]});
            out_header.insert(extra.into(), copy);
        }
        out_header.insert(rename(&name), info);
    }
    let h = serde_json::to_vec(&out_header).unwrap();
    let mut out = (h.len() as u64).to_le_bytes().to_vec();
    out.extend(h);
    out.extend(body);
    std::fs::write(path, out).unwrap();
}

fn load_err(dir: &Path) -> String {
    match load_model(dir) {
        Ok(_) => panic!("{} loaded but should not", dir.display()),
        Err(e) => e.to_string(),
    }
}

#[test]
fn hostile_directories_give_clear_errors() {
    // No config.json.
    let d = llama_copy("noconfig");
    std::fs::remove_file(d.join("config.json")).unwrap();
    let e = load_err(&d);
    assert!(e.contains("config.json"), "{e}");

    // A tensor missing.
    let d = llama_copy("notensor");
    edit_safetensors(&d.join("model.safetensors"), &|n, _| n != "model.layers.1.mlp.down_proj.weight");
    let e = load_err(&d);
    assert!(e.contains("model.layers.1.mlp.down_proj.weight"), "{e}");

    // A tensor with the wrong shape (same number of elements, transposed).
    let d = llama_copy("badshape");
    edit_safetensors(&d.join("model.safetensors"), &|n, s| {
        if n == "model.layers.0.self_attn.k_proj.weight" {
            s.reverse();
        }
        true
    });
    let e = load_err(&d);
    assert!(e.contains("k_proj") && e.contains("32x64"), "{e}");

    // A norm of the wrong length.
    let d = llama_copy("badnorm");
    edit_safetensors(&d.join("model.safetensors"), &|n, s| {
        if n == "model.norm.weight" {
            s[0] = 32;
        }
        true
    });
    let e = load_err(&d);
    assert!(e.contains("model.norm.weight"), "{e}");

    // A shard index naming a file outside the directory.
    for bad in ["../model.safetensors", "sub/model.safetensors"] {
        let d = llama_copy("badindex");
        let index = serde_json::json!({"metadata": {}, "weight_map": {"model.embed_tokens.weight": bad}});
        std::fs::write(d.join("model.safetensors.index.json"), index.to_string()).unwrap();
        let e = load_err(&d);
        assert!(e.contains(bad) && e.contains("not a plain file name"), "{e}");
    }

    // A shard index naming a shard that is not there.
    let d = llama_copy("missingshard");
    let index = serde_json::json!({"metadata": {}, "weight_map": {"model.embed_tokens.weight": "model-00002-of-00002.safetensors"}});
    std::fs::write(d.join("model.safetensors.index.json"), index.to_string()).unwrap();
    let e = load_err(&d);
    assert!(e.contains("model-00002-of-00002.safetensors"), "{e}");

    // An architecture this crate does not run.
    let d = llama_copy("gpt2");
    let cfg = std::fs::read_to_string(d.join("config.json")).unwrap().replace("\"llama\"", "\"gpt2\"");
    std::fs::write(d.join("config.json"), cfg).unwrap();
    let e = load_err(&d);
    assert!(e.contains("gpt2") && e.contains("not supported"), "{e}");

    // Heads that do not divide.
    let d = llama_copy("heads");
    let cfg = std::fs::read_to_string(d.join("config.json"))
        .unwrap()
        .replace("\"num_key_value_heads\": 2", "\"num_key_value_heads\": 3");
    std::fs::write(d.join("config.json"), cfg).unwrap();
    let e = load_err(&d);
    assert!(e.contains("KV heads"), "{e}");

    // Not a directory of weights at all.
    let d = scratch("empty");
    std::fs::write(d.join("config.json"), std::fs::read(data("llama/config.json")).unwrap()).unwrap();
    let e = load_err(&d);
    assert!(e.contains("safetensors"), "{e}");

    for n in ["noconfig", "notensor", "badshape", "badnorm", "badindex", "missingshard", "gpt2", "heads", "empty"] {
        std::fs::remove_dir_all(std::env::temp_dir().join(format!("mlx-arm-hfref-{}-{n}", std::process::id()))).ok();
    }
}
