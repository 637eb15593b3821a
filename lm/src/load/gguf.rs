//! A [`Model`] from a GGUF file's tensors, kept as stored: every projection stays GGML blocks
//! (`ggml_matmul` consumes them directly), norms are viewed as float vectors. Works on bytes
//! in memory (no OS needed): the `std` layer memory-maps the file first.

use alloc::format;
use alloc::vec::Vec;

use mlx_arm_core::io::arrays::{GgufNative, NativeTensor};
use mlx_arm_core::{ops, Array, DType, Error, Result};

use crate::config::ModelConfig;
use crate::model::{llama3_rope_freqs, Layer, Model};
use crate::weights::{plain_from_blocks, Weight};

const OP: &str = "load_model";

fn tensor<'a>(g: &'a GgufNative, name: &str) -> Result<&'a NativeTensor> {
    g.get(name).ok_or_else(|| Error::format(OP, format!("the GGUF file has no tensor '{name}'")))
}

fn matrix(t: &NativeTensor) -> Result<Weight> {
    if t.shape.len() != 2 {
        return Err(Error::format(OP, format!("tensor '{}' must be 2-D but has shape {:?}", t.name, t.shape)));
    }
    if mlx_arm_core::quant::ggml::vec_dot_type(t.ty).is_none() {
        return Err(Error::unsupported(OP, format!("tensor '{}' has type {}, which has no matmul kernel", t.name, t.ty.name())));
    }
    Ok(Weight::Ggml { blocks: t.array.clone(), ty: t.ty, k: t.shape[1] })
}

fn vector(t: &NativeTensor) -> Result<Array> {
    let n: usize = t.shape.iter().product();
    let v = plain_from_blocks(&t.array, t.ty, &[n], &t.name)?;
    if v.dtype() == DType::Float32 {
        Ok(v)
    } else {
        ops::astype(&v, DType::Float32)
    }
}

/// Builds the model described by a loaded GGUF file.
pub fn model_from_gguf(g: &GgufNative) -> Result<Model> {
    let embed_t = tensor(g, "token_embd.weight")?;
    let embed = matrix(embed_t)?;
    let mut config = ModelConfig::from_gguf(&g.metadata, embed.rows())?;
    let output = match g.get("output.weight") {
        Some(t) => matrix(t)?,
        None => {
            config.tie_embeddings = true;
            embed.clone()
        }
    };
    let mut layers = Vec::with_capacity(config.n_layers);
    for i in 0..config.n_layers {
        let t = |s: &str| tensor(g, &format!("blk.{i}.{s}"));
        let qkv_bias = if config.qkv_bias {
            Some([vector(t("attn_q.bias")?)?, vector(t("attn_k.bias")?)?, vector(t("attn_v.bias")?)?])
        } else {
            None
        };
        // llama.cpp's converter stores Gemma's norms with the 1 already added.
        let post_norms = if config.arch.sandwich_norms() {
            Some([vector(t("post_attention_norm.weight")?)?, vector(t("post_ffw_norm.weight")?)?])
        } else {
            None
        };
        let qk_norms = if config.arch.qk_norm() {
            Some([vector(t("attn_q_norm.weight")?)?, vector(t("attn_k_norm.weight")?)?])
        } else {
            None
        };
        layers.push(Layer {
            attn_norm: vector(t("attn_norm.weight")?)?,
            wq: matrix(t("attn_q.weight")?)?,
            wk: matrix(t("attn_k.weight")?)?,
            wv: matrix(t("attn_v.weight")?)?,
            qkv_bias,
            wo: matrix(t("attn_output.weight")?)?,
            ffn_norm: vector(t("ffn_norm.weight")?)?,
            w_gate: matrix(t("ffn_gate.weight")?)?,
            w_up: matrix(t("ffn_up.weight")?)?,
            w_down: matrix(t("ffn_down.weight")?)?,
            post_norms,
            qk_norms,
        });
    }
    // Llama 3 files carry their frequency scaling as per-frequency factors.
    let rope_freqs = match g.get("rope_freqs.weight") {
        Some(t) => Some(scaled_freqs(&config, &vector(t)?)?),
        None => llama3_rope_freqs(&config)?,
    };
    let model = Model {
        config,
        embed,
        layers,
        norm: vector(tensor(g, "output_norm.weight")?)?,
        output,
        rope_freqs,
        dtype: DType::Float32,
    };
    model.validate()?;
    Ok(model)
}

/// `base^(2i/d) · factor_i`: llama.cpp's `rope_freqs` factors as `fast.rope` divisors.
fn scaled_freqs(cfg: &ModelConfig, factors: &Array) -> Result<Array> {
    let half = cfg.rope_dims / 2;
    if factors.size() != half {
        return Err(Error::format(OP, format!("rope_freqs.weight has {} values, {half} expected", factors.size())));
    }
    let f = factors.to_vec::<f32>()?;
    let v: Vec<f32> =
        (0..half).map(|i| libm::powf(cfg.rope_theta, (2 * i) as f32 / cfg.rope_dims as f32) * f[i]).collect();
    Array::from_slice(&v, &[half])
}

