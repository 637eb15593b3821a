//! Gemma's settings beyond the Llama-family core: how Gemma, Gemma 2 and Gemma 3 read their
//! attention scale, soft-caps, sliding windows, local rope base, activation and embedding
//! scale from a Hugging Face / MLX `config.json` (as mlx-lm reads it) or from GGUF metadata
//! (as llama.cpp reads it: several of these are implied by the architecture there, not stored).

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use mlx_arm_core::io::gguf::Value;
use mlx_arm_core::io::json::Json;
use mlx_arm_core::{Error, Result};

use crate::config::{as_f32, as_usize, hf_rope_scaling, inverse_sqrt, json_f32, json_usize, Arch, FfnActivation, ModelConfig, RopeScaling};

const OP: &str = "load_model";

/// Gemma 2's window where a file does not say (transformers' and llama.cpp's default).
const GEMMA2_WINDOW: usize = 4096;
/// Every Gemma 3 model has one global layer in six; llama.cpp fixes it for GGUF files.
const GEMMA3_PATTERN: usize = 6;
/// Gemma 3's local-layer rope base, which llama.cpp fixes for GGUF files.
const GEMMA3_LOCAL_THETA: f32 = 10_000.0;

/// `config.json` values mlx-lm's `gemma3_text` assumes when a file leaves them out (the
/// text part of a `gemma3` directory usually does). Sizes that shape the weights are not
/// defaulted: a file without them is refused.
pub(crate) fn hf_defaults(arch: Arch) -> Vec<(String, Json)> {
    let num = |k: &str, v: &str| (k.to_string(), Json::Number(v.to_string()));
    let uint = |k: &str, v: u64| (k.to_string(), Json::UInt(v));
    match arch {
        Arch::Gemma3 => alloc::vec![
            uint("head_dim", 256),
            uint("num_attention_heads", 4),
            uint("num_key_value_heads", 1),
            uint("vocab_size", 262_144),
            uint("max_position_embeddings", 32_768),
            num("rms_norm_eps", "1e-6"),
            num("rope_theta", "1000000.0"),
        ],
        _ => Vec::new(),
    }
}

/// The text model of a `gemma3` (image-text) `config.json`: its `text_config`, completed as
/// mlx-lm's `gemma3` model completes it (the vocabulary size comes from the top level, 262208
/// when absent; 8 query and 4 KV heads when absent).
pub(crate) fn gemma3_text_config(top: &[(String, Json)]) -> Result<Vec<(String, Json)>> {
    let Some((_, Json::Object(text))) = top.iter().find(|(k, _)| k == "text_config") else {
        return Err(Error::format(OP, "config.json of model_type 'gemma3' has no text_config object"));
    };
    let mut fields: Vec<(String, Json)> = text.iter().filter(|(k, _)| k != "model_type" && k != "vocab_size").cloned().collect();
    fields.push(("model_type".into(), Json::Str("gemma3_text".into())));
    let vocab = match top.iter().find(|(k, _)| k == "vocab_size") {
        Some((_, v)) => v.clone(),
        None => Json::UInt(262_208),
    };
    fields.push(("vocab_size".into(), vocab));
    for (k, v) in [("num_attention_heads", 8), ("num_key_value_heads", 4)] {
        if !fields.iter().any(|(n, _)| n == k) {
            fields.push((k.into(), Json::UInt(v)));
        }
    }
    Ok(fields)
}

/// A soft-cap value: absent or `null` means none, as does 0 (llama.cpp's "off").
fn cap(v: Option<f32>) -> Option<f32> {
    v.filter(|&c| c != 0.0)
}

/// Fills `cfg`'s Gemma settings from `config.json` fields, as mlx-lm's `gemma`, `gemma2` and
/// `gemma3_text` models read them. Gemma 2's sliding window is applied as transformers and
/// llama.cpp apply it (every other layer, starting with the first); mlx-lm 0.32 attends to
/// the whole context in every Gemma 2 layer, which differs once a context exceeds the window.
pub(crate) fn hf_settings<'j>(cfg: &mut ModelConfig, get: &dyn Fn(&str) -> Option<&'j Json>) -> Result<()> {
    let float = |k: &str| -> Result<Option<f32>> {
        match get(k) {
            None | Some(Json::Null) => Ok(None),
            Some(v) => json_f32(v).map(Some).ok_or_else(|| Error::format(OP, format!("config.json: {k} is not a number"))),
        }
    };
    let uint = |k: &str| -> Result<Option<usize>> {
        match get(k) {
            None | Some(Json::Null) => Ok(None),
            Some(v) => json_usize(v).map(Some).ok_or_else(|| Error::format(OP, format!("config.json: {k} is not a count"))),
        }
    };
    let sqrt_hidden = libm::sqrt(cfg.hidden as f64) as f32;
    match cfg.arch {
        Arch::Gemma => {
            cfg.activation = FfnActivation::Gelu;
            cfg.embed_scale = Some(sqrt_hidden);
        }
        Arch::Gemma2 => {
            cfg.activation = FfnActivation::GeluApprox;
            cfg.embed_scale = Some(sqrt_hidden);
            cfg.attn_scale = inverse_sqrt(float("query_pre_attn_scalar")?.unwrap_or(144.0) as f64);
            // Absent: mlx-lm's defaults; `null`: no capping (transformers' meaning).
            let capping = |k: &str, default: f32| -> Result<Option<f32>> {
                if is_null(get(k)) {
                    return Ok(None);
                }
                Ok(cap(Some(float(k)?.unwrap_or(default))))
            };
            cfg.attn_softcap = capping("attn_logit_softcapping", 50.0)?;
            cfg.final_softcap = capping("final_logit_softcapping", 30.0)?;
            cfg.sliding_window = Some(uint("sliding_window")?.unwrap_or(GEMMA2_WINDOW));
            cfg.sliding_pattern = 2;
            // mlx-lm's Gemma 2 always reads the embedding as its output layer.
            cfg.tie_embeddings = true;
        }
        Arch::Gemma3 => {
            cfg.activation = FfnActivation::GeluApprox;
            // mlx-lm rounds √hidden to bfloat16 before scaling (Gemma 3 was trained in bf16).
            cfg.embed_scale = Some(half::bf16::from_f32(sqrt_hidden).to_f32());
            cfg.attn_scale = inverse_sqrt(float("query_pre_attn_scalar")?.unwrap_or(256.0) as f64);
            cfg.sliding_window = Some(uint("sliding_window")?.unwrap_or(512));
            cfg.sliding_pattern = uint("sliding_window_pattern")?.unwrap_or(GEMMA3_PATTERN);
            cfg.rope_local_theta = Some(float("rope_local_base_freq")?.unwrap_or(GEMMA3_LOCAL_THETA));
            per_layer_type_rope(cfg, get)?;
        }
        _ => {}
    }
    Ok(())
}

fn is_null(v: Option<&Json>) -> bool {
    matches!(v, Some(Json::Null))
}

/// transformers ≥ 5 writes Gemma 3's rope settings per layer type:
/// `rope_parameters: {full_attention: {rope_theta, rope_type, factor}, sliding_attention: {…}}`.
fn per_layer_type_rope<'j>(cfg: &mut ModelConfig, get: &dyn Fn(&str) -> Option<&'j Json>) -> Result<()> {
    let Some(Json::Object(rp)) = get("rope_parameters") else {
        return Ok(());
    };
    let part = |k: &str| match rp.iter().find(|(n, _)| n == k) {
        Some((_, Json::Object(o))) => Some(o.as_slice()),
        _ => None,
    };
    let theta = |o: &[(String, Json)]| o.iter().find(|(n, _)| n == "rope_theta").and_then(|(_, v)| json_f32(v));
    if let Some(full) = part("full_attention") {
        if let Some(t) = theta(full) {
            cfg.rope_theta = t;
        }
        cfg.rope_scaling = hf_rope_scaling(full)?;
    }
    if let Some(local) = part("sliding_attention") {
        if let Some(t) = theta(local) {
            cfg.rope_local_theta = Some(t);
        }
        if hf_rope_scaling(local)? != RopeScaling::None {
            return Err(Error::unsupported(OP, "rope scaling of Gemma 3's sliding-window layers is not supported"));
        }
    }
    Ok(())
}

/// Fills `cfg`'s Gemma settings from GGUF metadata as llama.cpp reads them; `get(key)` looks
/// up `<arch>.<key>`. llama.cpp stores no attention scale: it is `1/√head_dim`, except for
/// the 27B models (46-layer Gemma 2, 62-layer Gemma 3), whose `query_pre_attn_scalar` is
/// `hidden / heads`. Every Gemma's feed-forward uses the tanh GELU there.
pub(crate) fn gguf_settings<'v>(cfg: &mut ModelConfig, get: &dyn Fn(&str) -> Option<&'v Value>) -> Result<()> {
    let float = |k: &str| -> Result<Option<f32>> {
        match get(k) {
            None => Ok(None),
            Some(v) => as_f32(v).map(Some).ok_or_else(|| Error::format(OP, format!("GGUF key {k} is not a number"))),
        }
    };
    let uint = |k: &str| -> Result<Option<usize>> {
        match get(k) {
            None => Ok(None),
            Some(v) => as_usize(v).map(Some).ok_or_else(|| Error::format(OP, format!("GGUF key {k} is not a count"))),
        }
    };
    cfg.activation = FfnActivation::GeluApprox;
    cfg.embed_scale = Some(libm::sqrt(cfg.hidden as f64) as f32);
    let is_27b = matches!((cfg.arch, cfg.n_layers), (Arch::Gemma2, 46) | (Arch::Gemma3, 62));
    if is_27b && cfg.n_heads > 0 {
        cfg.attn_scale = inverse_sqrt((cfg.hidden / cfg.n_heads) as f64);
    }
    match cfg.arch {
        Arch::Gemma2 => {
            cfg.attn_softcap = cap(Some(float("attn_logit_softcapping")?.unwrap_or(50.0)));
            cfg.final_softcap = cap(Some(float("final_logit_softcapping")?.unwrap_or(30.0)));
            cfg.sliding_window = Some(uint("attention.sliding_window")?.unwrap_or(GEMMA2_WINDOW));
            cfg.sliding_pattern = 2;
        }
        Arch::Gemma3 => {
            cfg.final_softcap = cap(float("final_logit_softcapping")?);
            cfg.sliding_window = uint("attention.sliding_window")?.filter(|&w| w > 0);
            cfg.sliding_pattern = match get("attention.sliding_window_pattern") {
                None => GEMMA3_PATTERN,
                Some(v) => as_usize(v).ok_or_else(|| {
                    Error::unsupported(OP, "a per-layer attention.sliding_window_pattern is not supported (only a period)")
                })?,
            };
            cfg.rope_local_theta = Some(float("rope.freq_base_swa")?.unwrap_or(GEMMA3_LOCAL_THETA));
        }
        _ => {}
    }
    Ok(())
}
