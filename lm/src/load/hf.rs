//! A [`Model`] from Hugging Face / MLX tensors (`model.layers.N.self_attn.q_proj.weight` …):
//! float weights as they are, or MLX affine-quantized triples (`.weight` packed uint32,
//! `.scales`, `.biases`) as `mlx_lm` writes them with a `quantization` entry in config.json.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use mlx_arm_core::io::json::Json;
use mlx_arm_core::{ops, Array, DType, Error, Result};

use crate::config::ModelConfig;
use crate::model::{llama3_rope_freqs, Layer, Model};
use crate::weights::{vector, Weight};

const OP: &str = "load_model";

/// MLX's `quantization` settings from config.json.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Quantization {
    /// Elements per group.
    pub group_size: i64,
    /// Bits per element.
    pub bits: i64,
}

/// Reads `quantization` (or `quantization_config`) from config.json, if any.
pub fn quantization(config_json: &[u8]) -> Result<Option<Quantization>> {
    let Json::Object(fields) = mlx_arm_core::io::json::parse(OP, config_json)? else {
        return Err(Error::format(OP, "config.json is not a JSON object"));
    };
    let Some((_, Json::Object(q))) = fields.iter().find(|(k, _)| k == "quantization" || k == "quantization_config") else {
        return Ok(None);
    };
    let get = |k: &str| match q.iter().find(|(n, _)| n == k) {
        Some((_, Json::UInt(u))) => i64::try_from(*u).ok(),
        _ => None,
    };
    match (get("group_size"), get("bits")) {
        (Some(group_size), Some(bits)) => Ok(Some(Quantization { group_size, bits })),
        _ => Err(Error::format(OP, "config.json's quantization needs integer group_size and bits")),
    }
}

/// What the text model's tensor names start with: `language_model.` in a Gemma 3 image-text
/// (`gemma3`) directory, whose vision tower's tensors are left unread (as mlx-lm drops them).
pub fn tensor_prefix(config_json: &[u8]) -> Result<&'static str> {
    let Json::Object(fields) = mlx_arm_core::io::json::parse(OP, config_json)? else {
        return Err(Error::format(OP, "config.json is not a JSON object"));
    };
    Ok(match fields.iter().find(|(k, _)| k == "model_type") {
        Some((_, Json::Str(t))) if t == "gemma3" => "language_model.",
        _ => "",
    })
}

/// Builds a model from named tensors; `get` returns the tensor of a name.
pub fn model_from_tensors(
    mut config: ModelConfig,
    quant: Option<Quantization>,
    get: &dyn Fn(&str) -> Option<Array>,
) -> Result<Model> {
    let need = |name: &str| get(name).ok_or_else(|| Error::format(OP, format!("the model has no tensor '{name}'")));
    let weight = |prefix: &str| -> Result<Weight> {
        let w = need(&format!("{prefix}.weight"))?;
        match (quant, get(&format!("{prefix}.scales"))) {
            (Some(q), Some(scales)) => {
                if w.dtype() != DType::Uint32 {
                    return Err(Error::format(OP, format!("quantized tensor '{prefix}.weight' must be uint32")));
                }
                let biases = need(&format!("{prefix}.biases"))?;
                Ok(Weight::Affine { w, scales, biases, group_size: q.group_size, bits: q.bits })
            }
            _ => {
                if w.ndim() != 2 || !w.dtype().is_float() {
                    return Err(Error::format(OP, format!("tensor '{prefix}.weight' must be a 2-D float matrix")));
                }
                Ok(Weight::Dense(w))
            }
        }
    };
    let offset = config.arch.norm_weight_offset();
    let sized_norm = |name: &str, len: usize| -> Result<Array> {
        let w = vector(&need(name)?, len, name, DType::Float32)?;
        if offset {
            ops::add(&w, &Array::scalar(1.0f32)?)
        } else {
            Ok(w)
        }
    };
    let norm = |name: &str| sized_norm(name, config.hidden);
    let embed = weight("model.embed_tokens")?;
    let output = if get("lm_head.weight").is_some() {
        weight("lm_head")?
    } else {
        config.tie_embeddings = true;
        embed.clone()
    };
    let (q, kv) = (config.n_heads * config.head_dim, config.n_kv_heads * config.head_dim);
    let mut layers = Vec::with_capacity(config.n_layers);
    for i in 0..config.n_layers {
        let p = |s: &str| -> String { format!("model.layers.{i}.{s}") };
        let qkv_bias = if config.qkv_bias {
            let b = |s: &str, n: usize| vector(&need(&p(s))?, n, &p(s), DType::Float32);
            Some([b("self_attn.q_proj.bias", q)?, b("self_attn.k_proj.bias", kv)?, b("self_attn.v_proj.bias", kv)?])
        } else {
            None
        };
        // Gemma 2 / 3 name the norm after attention `post_attention_layernorm`, which is the
        // feed-forward's input norm in every other family.
        let sandwich = config.arch.sandwich_norms();
        let ffn_norm = if sandwich { "pre_feedforward_layernorm.weight" } else { "post_attention_layernorm.weight" };
        let post_norms = if sandwich {
            Some([norm(&p("post_attention_layernorm.weight"))?, norm(&p("post_feedforward_layernorm.weight"))?])
        } else {
            None
        };
        let qk_norms = if config.arch.qk_norm() {
            let hd = config.head_dim;
            Some([sized_norm(&p("self_attn.q_norm.weight"), hd)?, sized_norm(&p("self_attn.k_norm.weight"), hd)?])
        } else {
            None
        };
        layers.push(Layer {
            attn_norm: norm(&p("input_layernorm.weight"))?,
            wq: weight(&p("self_attn.q_proj"))?,
            wk: weight(&p("self_attn.k_proj"))?,
            wv: weight(&p("self_attn.v_proj"))?,
            qkv_bias,
            wo: weight(&p("self_attn.o_proj"))?,
            ffn_norm: norm(&p(ffn_norm))?,
            w_gate: weight(&p("mlp.gate_proj"))?,
            w_up: weight(&p("mlp.up_proj"))?,
            w_down: weight(&p("mlp.down_proj"))?,
            post_norms,
            qk_norms,
        });
    }
    let rope_freqs = llama3_rope_freqs(&config)?;
    let model = Model { norm: norm("model.norm.weight")?, config, embed, layers, output, rope_freqs, dtype: DType::Float32 };
    let (tied, sandwich) = (model.config.tie_embeddings, model.config.arch.sandwich_norms());
    model.validate_named(&|block, s| hf_name(block, s, tied, sandwich))?;
    Ok(model)
}

/// The Hugging Face name of a tensor that [`Model::validate_named`] calls by its GGUF name.
fn hf_name(block: Option<usize>, gguf: &str, tied: bool, sandwich: bool) -> String {
    let part = match gguf {
        "token_embd" => return "model.embed_tokens.weight".into(),
        "output" if tied => return "model.embed_tokens.weight (tied output)".into(),
        "output" => return "lm_head.weight".into(),
        "output_norm" => return "model.norm.weight".into(),
        "attn_q" => "self_attn.q_proj.weight",
        "attn_k" => "self_attn.k_proj.weight",
        "attn_v" => "self_attn.v_proj.weight",
        "attn_output" => "self_attn.o_proj.weight",
        "ffn_gate" => "mlp.gate_proj.weight",
        "ffn_up" => "mlp.up_proj.weight",
        "ffn_down" => "mlp.down_proj.weight",
        "attn_norm" => "input_layernorm.weight",
        "ffn_norm" if sandwich => "pre_feedforward_layernorm.weight",
        "ffn_norm" | "post_attention_norm" => "post_attention_layernorm.weight",
        "post_ffw_norm" => "post_feedforward_layernorm.weight",
        "attn_q_norm" => "self_attn.q_norm.weight",
        "attn_k_norm" => "self_attn.k_norm.weight",
        other => other,
    };
    match block {
        Some(i) => format!("model.layers.{i}.{part}"),
        None => part.into(),
    }
}
