//! Model hyper-parameters, read from a GGUF file's metadata (`general.architecture` and the
//! `<arch>.*` keys llama.cpp writes) or from a Hugging Face / MLX `config.json`. One struct
//! for every Llama-family model; the architecture decides the few things that differ (QKV
//! bias, the rotary layout, Gemma's norms, embedding scale and activation). Gemma 2 / 3's
//! extra settings (soft-capping, sliding windows, local rope bases) are read in [`crate::gemma`].

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use mlx_arm_core::io::gguf::{Array as GgufArray, Value};
use mlx_arm_core::io::json::Json;
use mlx_arm_core::{Error, Result};

const OP: &str = "load_model";

/// The model families this crate runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arch {
    /// Llama 2/3, Mistral, SmolLM, TinyLlama (GGUF `llama`, HF `LlamaForCausalLM`/`MistralForCausalLM`).
    Llama,
    /// Qwen2 / Qwen2.5: Llama with biases on the q, k and v projections.
    Qwen2,
    /// Gemma (1), as mlx-lm's `gemma` model runs it from an MLX / Hugging Face directory:
    /// RMSNorm by `1 + weight`, embeddings scaled by √hidden, a GELU-gated feed-forward and the
    /// embedding as the output layer.
    Gemma,
    /// Gemma 2: Gemma plus norms after attention and after the feed-forward, soft-capped
    /// attention and output logits, and sliding-window attention on alternate layers.
    Gemma2,
    /// Gemma 3 (text): Gemma 2's layout without soft-capping, with RMSNorm on queries and keys,
    /// one global layer in every `sliding_window_pattern` and a separate rope base for local layers.
    Gemma3,
}

impl Arch {
    /// The GGUF `general.architecture` name.
    pub fn gguf_name(self) -> &'static str {
        match self {
            Arch::Llama => "llama",
            Arch::Qwen2 => "qwen2",
            Arch::Gemma => "gemma",
            Arch::Gemma2 => "gemma2",
            Arch::Gemma3 => "gemma3",
        }
    }

    /// Whether this is a Gemma generation (embedding scale, `1 + weight` norms in
    /// Hugging Face files, GELU feed-forward, tied output).
    pub fn is_gemma(self) -> bool {
        matches!(self, Arch::Gemma | Arch::Gemma2 | Arch::Gemma3)
    }

    /// Whether Hugging Face / MLX files store RMSNorm weights as an offset from 1 (the norm
    /// multiplies by `1 + weight`). llama.cpp's converter adds the 1 when it writes a GGUF.
    pub fn norm_weight_offset(self) -> bool {
        self.is_gemma()
    }

    /// Whether each block also normalizes the attention output and the feed-forward output
    /// before adding them to the residual stream (Gemma 2 and 3: four norms per block).
    pub fn sandwich_norms(self) -> bool {
        matches!(self, Arch::Gemma2 | Arch::Gemma3)
    }

    /// Whether queries and keys are RMS-normalized per head before rope (Gemma 3).
    pub fn qk_norm(self) -> bool {
        self == Arch::Gemma3
    }
}

/// The activation of the gated feed-forward: `down(act(gate(x)) · up(x))`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FfnActivation {
    /// `x · sigmoid(x)` (SwiGLU: Llama, Mistral, Qwen2).
    Silu,
    /// `x · (1 + erf(x / √2)) / 2`, MLX's `nn.gelu` (mlx-lm's Gemma).
    Gelu,
    /// The tanh approximation of GELU, MLX's `nn.gelu_approx` (mlx-lm's Gemma 2 / 3,
    /// llama.cpp's `ggml_gelu` for every Gemma).
    GeluApprox,
}

/// How rotary frequencies are scaled for long contexts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RopeScaling {
    /// Plain RoPE.
    None,
    /// Positions divided by `factor` (`rope_scaling.type = "linear"`).
    Linear {
        /// The divisor of positions.
        factor: f32,
    },
    /// Llama 3.1's frequency-dependent scaling.
    Llama3 {
        /// Scale of the low frequencies.
        factor: f32,
        /// Wavelength bound (as a fraction of the original context) below which nothing is scaled.
        low_freq_factor: f32,
        /// Wavelength bound above which frequencies are divided by `factor`.
        high_freq_factor: f32,
        /// The context length the model was trained at.
        original_max_position_embeddings: f32,
    },
}

/// Hyper-parameters of a Llama-family decoder.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelConfig {
    /// The family.
    pub arch: Arch,
    /// Number of transformer blocks.
    pub n_layers: usize,
    /// Width of the residual stream.
    pub hidden: usize,
    /// Width of the SwiGLU hidden layer.
    pub ffn: usize,
    /// Query heads.
    pub n_heads: usize,
    /// Key/value heads (grouped-query attention when fewer than `n_heads`).
    pub n_kv_heads: usize,
    /// Features per head.
    pub head_dim: usize,
    /// Vocabulary size (rows of the embedding).
    pub vocab_size: usize,
    /// Longest context the model was trained for.
    pub context_length: usize,
    /// RMSNorm epsilon.
    pub rms_eps: f32,
    /// RoPE base frequency.
    pub rope_theta: f32,
    /// Features of each head that are rotated.
    pub rope_dims: usize,
    /// Whether rotated pairs are adjacent features (MLX's `traditional=True`, llama.cpp's
    /// "normal" rope, which GGUF Llama files use because the converter permutes q and k) or
    /// the two halves of the head (Hugging Face's layout, llama.cpp's "neox").
    pub rope_traditional: bool,
    /// Long-context scaling of the rotary frequencies.
    pub rope_scaling: RopeScaling,
    /// Biases on the q, k, v projections (Qwen2).
    pub qkv_bias: bool,
    /// Whether the output projection reuses the token embedding (decided at load when the
    /// file has no separate output weight).
    pub tie_embeddings: bool,
    /// The feed-forward gate's activation.
    pub activation: FfnActivation,
    /// What the token embeddings are multiplied by before the first block (Gemma: √hidden).
    pub embed_scale: Option<f32>,
    /// The factor queries are multiplied by before `q·k` (`1/√head_dim`, or Gemma 2/3's
    /// `1/√query_pre_attn_scalar`).
    pub attn_scale: f32,
    /// Attention logits become `cap · tanh(logits / cap)` (Gemma 2's `attn_logit_softcapping`).
    pub attn_softcap: Option<f32>,
    /// Output logits become `cap · tanh(logits / cap)` (Gemma 2's `final_logit_softcapping`).
    pub final_softcap: Option<f32>,
    /// Local layers attend to this many positions, their own included (`sliding_window`).
    pub sliding_window: Option<usize>,
    /// Every `sliding_pattern`-th layer is global, the others local (when `sliding_window`
    /// is set): layer `i` is local when `i % sliding_pattern < sliding_pattern - 1`. Gemma 2
    /// alternates (2), Gemma 3 has 6; 1 means every layer is global.
    pub sliding_pattern: usize,
    /// Rope base of local layers, which are never frequency-scaled (Gemma 3's
    /// `rope_local_base_freq`); `None`: local layers rotate as global ones.
    pub rope_local_theta: Option<f32>,
}

impl ModelConfig {
    /// Checks the numbers are usable (positive, heads divide evenly), so a hostile file
    /// gives an error here rather than a shape error deep in the forward pass.
    pub fn validate(&self) -> Result<()> {
        let pos = [
            ("block count", self.n_layers),
            ("embedding length", self.hidden),
            ("feed-forward length", self.ffn),
            ("head count", self.n_heads),
            ("KV head count", self.n_kv_heads),
            ("head dimension", self.head_dim),
            ("vocabulary size", self.vocab_size),
        ];
        for (what, v) in pos {
            if v == 0 {
                return Err(Error::format(OP, format!("the model's {what} is 0")));
            }
        }
        if self.n_heads % self.n_kv_heads != 0 {
            return Err(Error::format(
                OP,
                format!("{} query heads are not a multiple of {} KV heads", self.n_heads, self.n_kv_heads),
            ));
        }
        if self.rope_dims == 0 || self.rope_dims > self.head_dim || self.rope_dims % 2 != 0 {
            return Err(Error::format(
                OP,
                format!("rotary dimension {} does not fit head dimension {}", self.rope_dims, self.head_dim),
            ));
        }
        // Bounds that keep every derived size far from overflow on 32-bit targets too.
        if self.hidden > 1 << 16 || self.ffn > 1 << 18 || self.n_layers > 1 << 10 || self.vocab_size > 1 << 22 {
            return Err(Error::format(OP, "the model's sizes are implausibly large"));
        }
        if !(self.rms_eps.is_finite() && self.rms_eps >= 0.0 && self.rope_theta.is_finite() && self.rope_theta > 0.0) {
            return Err(Error::format(OP, "the model's norm epsilon or rope base is not a positive number"));
        }
        let positive = |v: Option<f32>| v.is_none_or(|x| x.is_finite() && x > 0.0);
        let scales = [Some(self.attn_scale), self.attn_softcap, self.final_softcap, self.rope_local_theta, self.embed_scale];
        if !scales.into_iter().all(positive) {
            return Err(Error::format(
                OP,
                "the model's attention scale, soft-caps, local rope base or embedding scale is not a positive number",
            ));
        }
        if self.sliding_window == Some(0) || self.sliding_pattern == 0 {
            return Err(Error::format(OP, "the model's sliding window or sliding-window pattern is 0"));
        }
        Ok(())
    }

    /// Whether layer `i` attends only to the last [`ModelConfig::sliding_window`] positions.
    pub fn is_local(&self, i: usize) -> bool {
        self.sliding_window.is_some() && i % self.sliding_pattern < self.sliding_pattern - 1
    }

    /// Reads the hyper-parameters from GGUF metadata. `vocab_rows` is the embedding's row
    /// count, used when the file omits `<arch>.vocab_size`.
    pub fn from_gguf(metadata: &[(String, Value)], vocab_rows: usize) -> Result<ModelConfig> {
        let get = |key: &str| metadata.iter().find(|(k, _)| k == key).map(|(_, v)| v);
        let name = match get("general.architecture") {
            Some(Value::String(s)) => s.clone(),
            _ => return Err(Error::format(OP, "the GGUF file has no general.architecture")),
        };
        let arch = match name.as_str() {
            "llama" | "mistral" => Arch::Llama,
            "qwen2" => Arch::Qwen2,
            "gemma" => Arch::Gemma,
            "gemma2" => Arch::Gemma2,
            "gemma3" => Arch::Gemma3,
            other => {
                return Err(Error::unsupported(
                    OP,
                    format!("architecture '{other}' is not supported (supported: llama, mistral, qwen2, gemma, gemma2, gemma3)"),
                ))
            }
        };
        let key = |k: &str| format!("{name}.{k}");
        let uint = |k: &str| -> Result<usize> {
            get(&key(k)).and_then(as_usize).ok_or_else(|| Error::format(OP, format!("missing or invalid {}", key(k))))
        };
        let opt_uint = |k: &str| get(&key(k)).and_then(as_usize);
        let opt_f32 = |k: &str| get(&key(k)).and_then(as_f32);
        let hidden = uint("embedding_length")?;
        let n_heads = uint("attention.head_count")?;
        let n_kv_heads = match get(&key("attention.head_count_kv")) {
            None => n_heads,
            Some(v) => as_usize(v).ok_or_else(|| Error::format(OP, format!("invalid {}", key("attention.head_count_kv"))))?,
        };
        let head_dim = opt_uint("attention.key_length").unwrap_or(if n_heads > 0 { hidden / n_heads } else { 0 });
        let rope_scaling = match get(&key("rope.scaling.type")) {
            Some(Value::String(t)) if t == "linear" => RopeScaling::Linear { factor: opt_f32("rope.scaling.factor").unwrap_or(1.0) },
            Some(Value::String(t)) if t == "none" => RopeScaling::None,
            Some(Value::String(t)) => return Err(Error::unsupported(OP, format!("rope scaling '{t}' is not supported"))),
            _ => RopeScaling::None,
        };
        let mut cfg = ModelConfig {
            arch,
            n_layers: uint("block_count")?,
            hidden,
            ffn: uint("feed_forward_length")?,
            n_heads,
            n_kv_heads,
            head_dim,
            vocab_size: opt_uint("vocab_size").unwrap_or(vocab_rows),
            context_length: opt_uint("context_length").unwrap_or(4096),
            rms_eps: opt_f32("attention.layer_norm_rms_epsilon").unwrap_or(1e-5),
            rope_theta: opt_f32("rope.freq_base").unwrap_or(10_000.0),
            rope_dims: opt_uint("rope.dimension_count").unwrap_or(head_dim),
            rope_traditional: arch == Arch::Llama,
            rope_scaling,
            qkv_bias: arch == Arch::Qwen2,
            tie_embeddings: false,
            ..ModelConfig::plain_extras(arch, head_dim)
        };
        if arch.is_gemma() {
            crate::gemma::gguf_settings(&mut cfg, &|k| get(&key(k)))?;
        }
        cfg.validate()?;
        Ok(cfg)
    }

    /// Reads a Hugging Face / MLX `config.json` (as `mlx_lm.load` accepts it). A Gemma 3
    /// `gemma3` (image-text) directory gives its `text_config` model; the vision tower's
    /// weights are never read, as mlx-lm drops them.
    pub fn from_hf_json(text: &[u8]) -> Result<ModelConfig> {
        let json = mlx_arm_core::io::json::parse(OP, text)?;
        let Json::Object(fields) = json else {
            return Err(Error::format(OP, "config.json is not a JSON object"));
        };
        let fields = match fields.iter().find(|(n, _)| n == "model_type") {
            Some((_, Json::Str(t))) if t == "gemma3" => crate::gemma::gemma3_text_config(&fields)?,
            _ => fields,
        };
        Self::from_hf_fields(&fields)
    }

    fn from_hf_fields(fields: &[(String, Json)]) -> Result<ModelConfig> {
        let get = |k: &str| fields.iter().find(|(n, _)| n == k).map(|(_, v)| v);
        let model_type = match get("model_type") {
            Some(Json::Str(s)) => s.clone(),
            _ => return Err(Error::format(OP, "config.json has no model_type")),
        };
        let arch = match model_type.as_str() {
            "llama" | "mistral" => Arch::Llama,
            "qwen2" => Arch::Qwen2,
            "gemma" => Arch::Gemma,
            "gemma2" => Arch::Gemma2,
            "gemma3_text" => Arch::Gemma3,
            other => {
                return Err(Error::unsupported(
                    OP,
                    format!(
                        "model_type '{other}' is not supported (supported: llama, mistral, qwen2, gemma, gemma2, gemma3, gemma3_text)"
                    ),
                ))
            }
        };
        let defaults = crate::gemma::hf_defaults(arch);
        let get = |k: &str| get(k).or_else(|| defaults.iter().find(|(n, _)| n == k).map(|(_, v)| v));
        let uint = |k: &str| -> Result<usize> {
            get(k).and_then(json_usize).ok_or_else(|| Error::format(OP, format!("config.json: missing or invalid {k}")))
        };
        let hidden = uint("hidden_size")?;
        let n_heads = uint("num_attention_heads")?;
        let n_kv_heads = get("num_key_value_heads").and_then(json_usize).unwrap_or(n_heads);
        let head_dim = get("head_dim").and_then(json_usize).unwrap_or(if n_heads > 0 { hidden / n_heads } else { 0 });
        // transformers ≥ 5 writes the rotary settings as `rope_parameters` {rope_theta,
        // rope_type, factor …}; older files have top-level `rope_theta` and `rope_scaling`.
        let rope_params = match get("rope_parameters") {
            Some(Json::Object(rp)) => Some(rp.as_slice()),
            _ => None,
        };
        let rope_scaling = match (get("rope_scaling"), rope_params) {
            (Some(Json::Object(rs)), _) => hf_rope_scaling(rs)?,
            (_, Some(rp)) => hf_rope_scaling(rp)?,
            _ => RopeScaling::None,
        };
        let rope_theta = get("rope_theta")
            .or_else(|| rope_params.and_then(|rp| rp.iter().find(|(n, _)| n == "rope_theta").map(|(_, v)| v)))
            .and_then(json_f32)
            .unwrap_or(10_000.0);
        let mut cfg = ModelConfig {
            arch,
            n_layers: uint("num_hidden_layers")?,
            hidden,
            ffn: uint("intermediate_size")?,
            n_heads,
            n_kv_heads,
            head_dim,
            vocab_size: uint("vocab_size")?,
            context_length: get("max_position_embeddings").and_then(json_usize).unwrap_or(4096),
            rms_eps: get("rms_norm_eps").and_then(json_f32).unwrap_or(1e-6),
            rope_theta,
            rope_dims: head_dim,
            rope_traditional: matches!(get("rope_traditional"), Some(Json::Bool(true))),
            rope_scaling,
            qkv_bias: match get("attention_bias") {
                Some(Json::Bool(b)) => *b,
                _ => arch == Arch::Qwen2,
            },
            // Gemma has no separate output layer (mlx-lm always uses the embedding).
            tie_embeddings: arch == Arch::Gemma || matches!(get("tie_word_embeddings"), Some(Json::Bool(true))),
            ..ModelConfig::plain_extras(arch, head_dim)
        };
        if arch.is_gemma() {
            crate::gemma::hf_settings(&mut cfg, &get)?;
        }
        cfg.validate()?;
        Ok(cfg)
    }
}

impl ModelConfig {
    /// Placeholder values of every field, with the settings of a plain Llama-family model
    /// for `arch` — SiLU, no embedding scale, `1/√head_dim` attention, no soft-capping or
    /// sliding window — which the parsers overwrite.
    fn plain_extras(arch: Arch, head_dim: usize) -> ModelConfig {
        ModelConfig {
            arch,
            n_layers: 0,
            hidden: 0,
            ffn: 0,
            n_heads: 0,
            n_kv_heads: 0,
            head_dim,
            vocab_size: 0,
            context_length: 0,
            rms_eps: 0.0,
            rope_theta: 0.0,
            rope_dims: 0,
            rope_traditional: false,
            rope_scaling: RopeScaling::None,
            qkv_bias: false,
            tie_embeddings: false,
            activation: FfnActivation::Silu,
            embed_scale: None,
            attn_scale: inverse_sqrt(head_dim as f64),
            attn_softcap: None,
            final_softcap: None,
            sliding_window: None,
            sliding_pattern: 1,
            rope_local_theta: None,
        }
    }
}

/// `1/√x` computed in f64 and rounded once, as Python's `x**-0.5` (mlx-lm's attention scales).
pub fn inverse_sqrt(x: f64) -> f32 {
    (1.0 / libm::sqrt(x)) as f32
}

pub(crate) fn hf_rope_scaling(fields: &[(String, Json)]) -> Result<RopeScaling> {
    let get = |k: &str| fields.iter().find(|(n, _)| n == k).map(|(_, v)| v);
    let kind = match get("rope_type").or_else(|| get("type")) {
        Some(Json::Str(s)) => s.to_string(),
        _ => return Ok(RopeScaling::None),
    };
    let f = |k: &str, default: f32| get(k).and_then(json_f32).unwrap_or(default);
    match kind.as_str() {
        "default" => Ok(RopeScaling::None),
        "linear" => Ok(RopeScaling::Linear { factor: f("factor", 1.0) }),
        "llama3" => Ok(RopeScaling::Llama3 {
            factor: f("factor", 8.0),
            low_freq_factor: f("low_freq_factor", 1.0),
            high_freq_factor: f("high_freq_factor", 4.0),
            original_max_position_embeddings: f("original_max_position_embeddings", 8192.0),
        }),
        other => Err(Error::unsupported(OP, format!("rope scaling '{other}' is not supported"))),
    }
}

/// A GGUF integer value that fits `usize`.
pub fn as_usize(v: &Value) -> Option<usize> {
    let u: u64 = match *v {
        Value::U8(x) => x.into(),
        Value::U16(x) => x.into(),
        Value::U32(x) => x.into(),
        Value::U64(x) => x,
        Value::I8(x) => u64::try_from(x).ok()?,
        Value::I16(x) => u64::try_from(x).ok()?,
        Value::I32(x) => u64::try_from(x).ok()?,
        Value::I64(x) => u64::try_from(x).ok()?,
        _ => return None,
    };
    usize::try_from(u).ok()
}

/// A GGUF numeric value as `f32`.
pub fn as_f32(v: &Value) -> Option<f32> {
    match *v {
        Value::F32(x) => Some(x),
        Value::F64(x) => Some(x as f32),
        _ => as_usize(v).map(|u| u as f32),
    }
}

/// A GGUF array of strings.
pub fn as_strings(v: &Value) -> Option<&Vec<String>> {
    match v {
        Value::Array(GgufArray::String(s)) => Some(s),
        _ => None,
    }
}

pub(crate) fn json_usize(v: &Json) -> Option<usize> {
    match v {
        Json::UInt(u) => usize::try_from(*u).ok(),
        _ => None,
    }
}

pub(crate) fn json_f32(v: &Json) -> Option<f32> {
    match v {
        Json::UInt(u) => Some(*u as f32),
        Json::Number(s) => s.parse::<f32>().ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    fn smollm_meta() -> Vec<(String, Value)> {
        let s = |k: &str, v: Value| (k.to_string(), v);
        vec![
            s("general.architecture", Value::String("llama".into())),
            s("llama.block_count", Value::U32(30)),
            s("llama.context_length", Value::U32(8192)),
            s("llama.embedding_length", Value::U32(576)),
            s("llama.feed_forward_length", Value::U32(1536)),
            s("llama.attention.head_count", Value::U32(9)),
            s("llama.attention.head_count_kv", Value::U32(3)),
            s("llama.rope.freq_base", Value::F32(100000.0)),
            s("llama.attention.layer_norm_rms_epsilon", Value::F32(1e-5)),
            s("llama.rope.dimension_count", Value::U32(64)),
        ]
    }

    #[test]
    fn gguf_llama_metadata_gives_smollm2_shape() {
        let c = ModelConfig::from_gguf(&smollm_meta(), 49152).unwrap();
        assert_eq!((c.n_layers, c.hidden, c.ffn, c.n_heads, c.n_kv_heads, c.head_dim), (30, 576, 1536, 9, 3, 64));
        assert_eq!(c.vocab_size, 49152);
        assert!(c.rope_traditional && !c.qkv_bias);
        assert_eq!(c.rope_theta, 100000.0);
    }

    #[test]
    fn bad_gguf_metadata_is_a_clear_error() {
        let mut m = smollm_meta();
        m[0].1 = Value::String("mamba".into());
        let e = ModelConfig::from_gguf(&m, 10).unwrap_err();
        assert!(alloc::format!("{e}").contains("mamba"), "{e}");
        let mut m = smollm_meta();
        m.retain(|(k, _)| k != "llama.block_count");
        assert!(alloc::format!("{}", ModelConfig::from_gguf(&m, 10).unwrap_err()).contains("block_count"));
        let mut m = smollm_meta();
        m[6].1 = Value::U32(4); // 9 heads over 4 KV heads
        assert!(ModelConfig::from_gguf(&m, 10).is_err());
        let mut m = smollm_meta();
        m[5].1 = Value::U32(0);
        assert!(ModelConfig::from_gguf(&m, 10).is_err());
    }

    #[test]
    fn hf_config_json_with_llama3_rope_scaling() {
        let text = br#"{"model_type":"llama","hidden_size":2048,"num_attention_heads":32,"num_key_value_heads":8,
            "num_hidden_layers":16,"intermediate_size":8192,"vocab_size":128256,"rms_norm_eps":1e-05,
            "rope_theta":500000.0,"tie_word_embeddings":true,"max_position_embeddings":131072,
            "rope_scaling":{"factor":32.0,"high_freq_factor":4.0,"low_freq_factor":1.0,
            "original_max_position_embeddings":8192,"rope_type":"llama3"}}"#;
        let c = ModelConfig::from_hf_json(text).unwrap();
        assert_eq!((c.head_dim, c.n_kv_heads, c.vocab_size), (64, 8, 128256));
        assert!(c.tie_embeddings && !c.rope_traditional);
        assert_eq!(
            c.rope_scaling,
            RopeScaling::Llama3 { factor: 32.0, low_freq_factor: 1.0, high_freq_factor: 4.0, original_max_position_embeddings: 8192.0 }
        );
        assert!(ModelConfig::from_hf_json(br#"{"model_type":"gpt2"}"#).is_err());
        // transformers 5's form of the same settings.
        let v5 = br#"{"model_type":"llama","hidden_size":2048,"num_attention_heads":32,"num_hidden_layers":16,
            "intermediate_size":8192,"vocab_size":128256,"rope_parameters":{"rope_theta":500000.0,"factor":32.0,
            "high_freq_factor":4.0,"low_freq_factor":1.0,"original_max_position_embeddings":8192,"rope_type":"llama3"}}"#;
        let c5 = ModelConfig::from_hf_json(v5).unwrap();
        assert_eq!((c5.rope_theta, c5.rope_scaling), (500000.0, c.rope_scaling));
        let plain = br#"{"model_type":"qwen2","hidden_size":64,"num_attention_heads":4,"num_hidden_layers":2,
            "intermediate_size":128,"vocab_size":320,"rope_parameters":{"rope_theta":1000000.0,"rope_type":"default"}}"#;
        let cp = ModelConfig::from_hf_json(plain).unwrap();
        assert_eq!((cp.rope_theta, cp.rope_scaling), (1_000_000.0, RopeScaling::None));
        assert!(ModelConfig::from_hf_json(b"[1,2]").is_err());
    }

    const GEMMA2: &str = r#"{"model_type":"gemma2","hidden_size":64,"num_hidden_layers":2,"intermediate_size":128,
        "num_attention_heads":4,"num_key_value_heads":2,"head_dim":32,"rms_norm_eps":1e-6,"vocab_size":256,
        "query_pre_attn_scalar":48,"attn_logit_softcapping":5.0,"final_logit_softcapping":15.0,"sliding_window":4}"#;

    #[test]
    fn gemma2_config_reads_its_settings_and_defaults() {
        let c = ModelConfig::from_hf_json(GEMMA2.as_bytes()).unwrap();
        assert_eq!((c.arch, c.activation, c.sliding_window, c.sliding_pattern), (Arch::Gemma2, FfnActivation::GeluApprox, Some(4), 2));
        assert_eq!(c.attn_scale, inverse_sqrt(48.0));
        assert_eq!((c.attn_softcap, c.final_softcap, c.embed_scale), (Some(5.0), Some(15.0), Some(8.0)));
        // Absent: mlx-lm's defaults (and the usual 4096 window); null: no capping.
        let d = GEMMA2.replace(r#""query_pre_attn_scalar":48,"attn_logit_softcapping":5.0,"final_logit_softcapping":15.0,"sliding_window":4"#,
            r#""final_logit_softcapping":null"#);
        let c = ModelConfig::from_hf_json(d.as_bytes()).unwrap();
        assert_eq!((c.attn_scale, c.attn_softcap, c.final_softcap, c.sliding_window), (inverse_sqrt(144.0), Some(50.0), None, Some(4096)));
    }

    #[test]
    fn malformed_gemma_configs_are_clear_errors() {
        for (from, to, says) in [
            (r#""sliding_window":4"#, r#""sliding_window":0"#, "sliding window"),
            (r#""sliding_window":4"#, r#""sliding_window":"4""#, "sliding_window"),
            (r#""query_pre_attn_scalar":48"#, r#""query_pre_attn_scalar":[48]"#, "query_pre_attn_scalar"),
            (r#""query_pre_attn_scalar":48"#, r#""query_pre_attn_scalar":0"#, "attention scale"),
            (r#""attn_logit_softcapping":5.0"#, r#""attn_logit_softcapping":-5.0"#, "soft-caps"),
            (r#""hidden_size":64,"#, "", "hidden_size"),
            (r#""num_hidden_layers":2"#, r#""num_hidden_layers":4294967296000"#, "implausibly large"),
        ] {
            let bad = GEMMA2.replace(from, to);
            let e = alloc::format!("{}", ModelConfig::from_hf_json(bad.as_bytes()).unwrap_err());
            assert!(e.contains(says), "{to}: {e}");
        }
        let e = ModelConfig::from_hf_json(br#"{"model_type":"gemma3","vocab_size":10}"#).unwrap_err();
        assert!(alloc::format!("{e}").contains("text_config"), "{e}");
        let e = ModelConfig::from_hf_json(br#"{"model_type":"gemma3","text_config":{"num_hidden_layers":2}}"#).unwrap_err();
        assert!(alloc::format!("{e}").contains("hidden_size"), "{e}");
        let e = ModelConfig::from_hf_json(br#"{"model_type":"gemma3n"}"#).unwrap_err();
        assert!(alloc::format!("{e}").contains("not supported"), "{e}");
    }

    #[test]
    fn gemma3_image_text_config_completes_its_text_config_as_mlx_lm() {
        let text = br#"{"model_type":"gemma3","vocab_size":1000,"text_config":{"hidden_size":2560,"intermediate_size":10240,
            "model_type":"gemma3_text","num_hidden_layers":34,"sliding_window":1024,
            "rope_scaling":{"factor":8.0,"rope_type":"linear"}},"vision_config":{"hidden_size":1152}}"#;
        let c = ModelConfig::from_hf_json(text).unwrap();
        assert_eq!((c.arch, c.n_heads, c.n_kv_heads, c.head_dim, c.vocab_size), (Arch::Gemma3, 8, 4, 256, 1000));
        assert_eq!((c.sliding_window, c.sliding_pattern, c.rope_local_theta), (Some(1024), 6, Some(10_000.0)));
        assert_eq!((c.rope_theta, c.rope_scaling, c.attn_scale), (1_000_000.0, RopeScaling::Linear { factor: 8.0 }, inverse_sqrt(256.0)));
        // mlx-lm rounds √2560 to bfloat16.
        assert_eq!(c.embed_scale, Some(half::bf16::from_f32(libm::sqrtf(2560.0)).to_f32()));
        assert!(c.is_local(4) && !c.is_local(5) && c.is_local(6));
    }

    fn gemma_meta(arch: &str, layers: u32) -> Vec<(String, Value)> {
        let s = |k: &str, v: Value| (alloc::format!("{arch}.{k}"), v);
        vec![
            ("general.architecture".to_string(), Value::String(arch.into())),
            s("block_count", Value::U32(layers)),
            s("embedding_length", Value::U32(4608)),
            s("feed_forward_length", Value::U32(36864)),
            s("attention.head_count", Value::U32(32)),
            s("attention.head_count_kv", Value::U32(16)),
            s("attention.key_length", Value::U32(128)),
            s("attention.sliding_window", Value::U32(4096)),
        ]
    }

    #[test]
    fn gemma_gguf_settings_follow_llama_cpp() {
        // Gemma 2 27B (46 layers): query_pre_attn_scalar = hidden / heads = 144; defaults
        // of the soft-caps; every other layer local.
        let c = ModelConfig::from_gguf(&gemma_meta("gemma2", 46), 256000).unwrap();
        assert_eq!((c.attn_scale, c.attn_softcap, c.final_softcap), (inverse_sqrt(144.0), Some(50.0), Some(30.0)));
        assert!(c.is_local(0) && !c.is_local(1) && !c.rope_traditional && c.activation == FfnActivation::GeluApprox);
        // Other sizes: 1/√head_dim.
        let c = ModelConfig::from_gguf(&gemma_meta("gemma2", 42), 256000).unwrap();
        assert_eq!(c.attn_scale, inverse_sqrt(128.0));
        let c = ModelConfig::from_gguf(&gemma_meta("gemma3", 34), 262144).unwrap();
        assert_eq!((c.sliding_pattern, c.rope_local_theta, c.attn_softcap, c.final_softcap), (6, Some(10_000.0), None, None));
        // A per-layer pattern (Gemma 3n's form) is refused, not misread.
        let mut m = gemma_meta("gemma3", 34);
        m.push(("gemma3.attention.sliding_window_pattern".into(), Value::Array(GgufArray::Bool(vec![true, false]))));
        assert!(alloc::format!("{}", ModelConfig::from_gguf(&m, 10).unwrap_err()).contains("sliding_window_pattern"));
        let mut m = gemma_meta("gemma2", 46);
        m.push(("gemma2.attn_logit_softcapping".into(), Value::String("50".into())));
        assert!(ModelConfig::from_gguf(&m, 10).is_err());
        assert!(ModelConfig::from_gguf(&gemma_meta("gemma3n", 34), 10).is_err());
    }
}
