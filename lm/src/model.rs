//! The Llama-family decoder (Llama 2/3, Mistral, SmolLM, TinyLlama, Qwen2): token embedding,
//! `n_layers` blocks of RMSNorm → grouped-query attention with RoPE → residual, RMSNorm →
//! SwiGLU → residual, a final RMSNorm and the output projection. Written only with the public
//! array API (`ops::*`, `fast` ops), so any backend that evaluates those runs it.

use alloc::sync::Arc;
use alloc::vec::Vec;

use mlx_arm_core::ops::fast::lm::{add_rms_norm, decode_heads, HeadsRope};
use mlx_arm_core::ops::fused::{FusedOp, Step};
use mlx_arm_core::ops::{self, BinaryOp, RopeOffset, UnaryOp};
use mlx_arm_core::primitive::Primitive;
use mlx_arm_core::{Array, DType, Error, Result};

use crate::attention::{attend, AttentionSpec};
use crate::config::{FfnActivation, ModelConfig, RopeScaling};
use crate::kv_cache::KvCache;
use crate::weights::Weight;

/// One transformer block's weights.
#[derive(Clone, Debug)]
pub struct Layer {
    /// RMSNorm weight before attention, `(hidden,)`.
    pub attn_norm: Array,
    /// Query projection `(n_heads·head_dim, hidden)`.
    pub wq: Weight,
    /// Key projection `(n_kv_heads·head_dim, hidden)`.
    pub wk: Weight,
    /// Value projection `(n_kv_heads·head_dim, hidden)`.
    pub wv: Weight,
    /// Query/key/value biases (Qwen2).
    pub qkv_bias: Option<[Array; 3]>,
    /// Attention output projection `(hidden, n_heads·head_dim)`.
    pub wo: Weight,
    /// RMSNorm weight before the feed-forward, `(hidden,)`.
    pub ffn_norm: Array,
    /// SwiGLU gate `(ffn, hidden)`.
    pub w_gate: Weight,
    /// SwiGLU up `(ffn, hidden)`.
    pub w_up: Weight,
    /// SwiGLU down `(hidden, ffn)`.
    pub w_down: Weight,
    /// RMSNorm weights of the attention output and of the feed-forward output, `(hidden,)`
    /// each (Gemma 2 / 3).
    pub post_norms: Option<[Array; 2]>,
    /// Per-head RMSNorm weights of queries and keys, `(head_dim,)` each (Gemma 3).
    pub qk_norms: Option<[Array; 2]>,
}

/// A loaded decoder.
#[derive(Clone, Debug)]
pub struct Model {
    /// Hyper-parameters.
    pub config: ModelConfig,
    /// Token embedding `(vocab, hidden)`.
    pub embed: Weight,
    /// The blocks.
    pub layers: Vec<Layer>,
    /// Final RMSNorm weight.
    pub norm: Array,
    /// Output projection `(vocab, hidden)`; the embedding itself when tied.
    pub output: Weight,
    /// Per-frequency divisors for RoPE (`fast.rope`'s `freqs`) when the model scales its
    /// frequencies (Llama 3); `None` for plain RoPE from `rope_theta`.
    pub rope_freqs: Option<Array>,
    /// Activation dtype (float32: the quantized kernels accumulate in f32 anyway).
    pub dtype: DType,
}

impl Model {
    /// Checks every weight against the configuration, so a file with a wrong-sized tensor
    /// fails at load with the tensor's name rather than during generation.
    pub fn validate(&self) -> Result<()> {
        self.validate_named(&|block, s| match block {
            Some(i) => alloc::format!("blk.{i}.{s}"),
            None => s.into(),
        })
    }

    /// [`Model::validate`] with the file's own tensor names in errors: `name(block, gguf_name)`
    /// turns a GGUF-style name (`token_embd`, `output`, `attn_q` … of block `i`, or
    /// `output_norm`) into the name the file uses.
    pub fn validate_named(&self, name: &dyn Fn(Option<usize>, &str) -> alloc::string::String) -> Result<()> {
        let c = &self.config;
        let (h, q, kv) = (c.hidden, c.n_heads * c.head_dim, c.n_kv_heads * c.head_dim);
        self.embed.expect_shape(&name(None, "token_embd"), c.vocab_size, h)?;
        self.output.expect_shape(&name(None, "output"), c.vocab_size, h)?;
        if self.layers.len() != c.n_layers {
            return Err(Error::format("load_model", alloc::format!("{} blocks found, {} expected", self.layers.len(), c.n_layers)));
        }
        for (i, l) in self.layers.iter().enumerate() {
            let n = |s: &str| name(Some(i), s);
            l.wq.expect_shape(&n("attn_q"), q, h)?;
            l.wk.expect_shape(&n("attn_k"), kv, h)?;
            l.wv.expect_shape(&n("attn_v"), kv, h)?;
            l.wo.expect_shape(&n("attn_output"), h, q)?;
            l.w_gate.expect_shape(&n("ffn_gate"), c.ffn, h)?;
            l.w_up.expect_shape(&n("ffn_up"), c.ffn, h)?;
            l.w_down.expect_shape(&n("ffn_down"), h, c.ffn)?;
            let mut norms = alloc::vec![(&l.attn_norm, "attn_norm", h), (&l.ffn_norm, "ffn_norm", h)];
            if c.arch.sandwich_norms() != l.post_norms.is_some() || c.arch.qk_norm() != l.qk_norms.is_some() {
                return Err(Error::format("load_model", alloc::format!("block {i} lacks norms its architecture needs")));
            }
            if let Some([pa, pf]) = &l.post_norms {
                norms.extend([(pa, "post_attention_norm", h), (pf, "post_ffw_norm", h)]);
            }
            if let Some([qn, kn]) = &l.qk_norms {
                norms.extend([(qn, "attn_q_norm", c.head_dim), (kn, "attn_k_norm", c.head_dim)]);
            }
            for (norm, name, len) in norms {
                if norm.shape() != [len] {
                    return Err(Error::format("load_model", alloc::format!("tensor '{}' must have {len} elements", n(name))));
                }
            }
            if let Some(b) = &l.qkv_bias {
                if b[0].shape() != [q] || b[1].shape() != [kv] || b[2].shape() != [kv] {
                    return Err(Error::format("load_model", alloc::format!("the q/k/v biases of block {i} have wrong sizes")));
                }
            }
        }
        if self.norm.shape() != [h] {
            return Err(Error::format("load_model", alloc::format!("tensor '{}' has the wrong size", name(None, "output_norm"))));
        }
        Ok(())
    }

    /// A fresh KV cache for this model.
    pub fn new_cache(&self) -> KvCache {
        self.cache_with_step(crate::kv_cache::DEFAULT_STEP)
    }

    /// A fresh KV cache growing `step` positions at a time; its sliding-window layers keep
    /// only what their window sees.
    pub fn cache_with_step(&self, step: usize) -> KvCache {
        let c = &self.config;
        let windows: Vec<Option<usize>> =
            (0..c.n_layers).map(|i| if c.is_local(i) { c.sliding_window } else { None }).collect();
        KvCache::with_windows(&windows, step)
    }

    /// Runs `tokens` (`(B, T)` integers) through the model at the cache's position, storing
    /// their keys and values, and returns the logits `(B, T, vocab)` — or `(B, 1, vocab)` for
    /// the last position only when `last_only` (what generation needs). Lazy: nothing is
    /// computed until the result is evaluated.
    pub fn forward(&self, tokens: &Array, cache: &mut KvCache, last_only: bool) -> Result<Array> {
        let c = &self.config;
        if tokens.ndim() != 2 {
            return Err(Error::invalid("forward", "tokens must be a (batch, length) array"));
        }
        let (b, t) = (tokens.shape()[0], tokens.shape()[1]);
        if t == 0 {
            return Err(Error::invalid("forward", "no tokens to run"));
        }
        let offset = cache.offset();
        let mut x = self.embed.lookup(tokens, self.dtype)?;
        if let Some(s) = c.embed_scale {
            x = ops::multiply(&x, &Array::scalar(s)?)?;
        }
        let (bi, ti) = (b as isize, t as isize);
        // Every rope of the step rotates from the same position: one offset array for all of
        // them rather than one per call (two per layer).
        let position = i32::try_from(offset).map_err(|_| Error::invalid("forward", "position overflows int32"))?;
        let position = Array::scalar(position)?;
        // The fused SiLU·up program (see `gated`), made once for the layers' dtype, where the
        // default device runs it (`swiglu_for`: the dtype it was decided for).
        let mut swiglu: Option<Arc<FusedOp>> = None;
        let mut swiglu_for: Option<DType> = None;
        // The residual stream `x` and its normed form for the next block: each residual add and
        // the RMSNorm after it are one node (`add_rms_norm`), so `h` is made by the previous
        // block's last add (or here, for the first block).
        let first_norm = self.layers.first().map_or(&self.norm, |l| &l.attn_norm);
        if self.layers.is_empty() && last_only && t > 1 {
            x = ops::slice(&x, &[0, ti - 1, 0], &[bi, ti, c.hidden as isize], &[1, 1, 1])?;
        }
        let mut h = ops::rms_norm(&x, Some(first_norm), c.rms_eps)?;
        for (i, l) in self.layers.iter().enumerate() {
            let [mut q, mut k, mut v] = exactly(Weight::project_all(&[&l.wq, &l.wk, &l.wv], &h)?)?;
            if let Some([bq, bk, bv]) = &l.qkv_bias {
                q = ops::add(&q, bq)?;
                k = ops::add(&k, bk)?;
                v = ops::add(&v, bv)?;
            }
            let heads = |a: &Array, n: usize| -> Result<Array> {
                if t == 1 {
                    // (B, 1, H·D) and (B, H, 1, D) are the same memory: no transpose node.
                    return ops::reshape(a, &[bi, n as isize, 1, c.head_dim as isize]);
                }
                let a = ops::reshape(a, &[bi, ti, n as isize, c.head_dim as isize])?;
                ops::transpose(&a, Some(&[0, 2, 1, 3]))
            };
            let local = c.is_local(i);
            let [q, k, v] = if t == 1 && l.qk_norms.is_none() {
                // One position: heads and both ropes in one node.
                let (base, scale, freqs) = self.rope_params(local);
                let r = HeadsRope { dims: c.rope_dims, traditional: c.rope_traditional, base, scale, offset: &position, freqs };
                decode_heads(&q, &k, &v, c.head_dim, &r)?
            } else {
                let (mut q, mut k) = (heads(&q, c.n_heads)?, heads(&k, c.n_kv_heads)?);
                if let Some([qn, kn]) = &l.qk_norms {
                    q = ops::rms_norm(&q, Some(qn), c.rms_eps)?;
                    k = ops::rms_norm(&k, Some(kn), c.rms_eps)?;
                }
                [self.rope(&q, &position, local)?, self.rope(&k, &position, local)?, heads(&v, c.n_kv_heads)?]
            };
            let kv = cache.update(i, &k, &v)?;
            let spec = AttentionSpec {
                scale: c.attn_scale,
                softcap: c.attn_softcap,
                window: if local { c.sliding_window } else { None },
            };
            let o = attend(&q, &kv.keys, &kv.values, kv.first, offset, &spec)?;
            let o = if t == 1 { o } else { ops::transpose(&o, Some(&[0, 2, 1, 3]))? };
            let o = ops::reshape(&o, &[bi, ti, (c.n_heads * c.head_dim) as isize])?;
            let post = |y: Array, which: usize| -> Result<Array> {
                match &l.post_norms {
                    Some(n) => ops::rms_norm(&y, Some(&n[which]), c.rms_eps),
                    None => Ok(y),
                }
            };
            [x, h] = add_rms_norm(&x, &post(l.wo.project(&o)?, 0)?, &l.ffn_norm, c.rms_eps)?;
            let [g, u] = exactly(Weight::project_all(&[&l.w_gate, &l.w_up], &h)?)?;
            if c.activation == FfnActivation::Silu && swiglu_for != Some(g.dtype()) {
                let p = swiglu_program(g.dtype());
                swiglu = crate::weights::device_runs(|| (Primitive::Fused(p.clone()), alloc::vec![g.dtype(), u.dtype()])).then_some(p);
                swiglu_for = Some(g.dtype());
            }
            let act = gated(c.activation, &g, &u, swiglu.as_ref())?;
            let y = post(l.w_down.project(&act)?, 1)?;
            match self.layers.get(i + 1) {
                Some(next) => [x, h] = add_rms_norm(&x, &y, &next.attn_norm, c.rms_eps)?,
                // The last block: the final norm, of the last position only where that is all
                // the caller wants.
                None if last_only && t > 1 => {
                    let hd = c.hidden as isize;
                    x = ops::slice(&ops::add(&x, &y)?, &[0, ti - 1, 0], &[bi, ti, hd], &[1, 1, 1])?;
                    h = ops::rms_norm(&x, Some(&self.norm), c.rms_eps)?;
                }
                None => [x, h] = add_rms_norm(&x, &y, &self.norm, c.rms_eps)?,
            }
        }
        cache.advance(t);
        drop(x);
        let logits = self.output.project(&h)?;
        match c.final_softcap {
            Some(cap) => {
                let cap = Array::scalar(cap)?;
                ops::multiply(&ops::tanh(&ops::divide(&logits, &cap)?)?, &cap)
            }
            None => Ok(logits),
        }
    }

    /// Rotates `x` for positions from `offset` (an int32 scalar); a local (sliding-window)
    /// layer uses its own base without frequency scaling where the model has one (Gemma 3).
    fn rope(&self, x: &Array, offset: &Array, local: bool) -> Result<Array> {
        let c = &self.config;
        let (base, scale, freqs) = self.rope_params(local);
        ops::rope(x, c.rope_dims as isize, c.rope_traditional, base, scale, RopeOffset::Array(offset), freqs)
    }

    /// `fast.rope`'s base, scale and freqs for a layer (see [`Model::rope`]).
    fn rope_params(&self, local: bool) -> (Option<f32>, f32, Option<&Array>) {
        let c = &self.config;
        if let (true, Some(theta)) = (local, c.rope_local_theta) {
            return (Some(theta), 1.0, None);
        }
        let scale = match c.rope_scaling {
            RopeScaling::Linear { factor } if factor > 0.0 => 1.0 / factor,
            _ => 1.0,
        };
        match &self.rope_freqs {
            Some(f) => (None, scale, Some(f)),
            None => (Some(c.rope_theta), scale, None),
        }
    }
}

/// `activation(g) · u`, the gated feed-forward's middle. SiLU is one fused node where the device
/// runs one (the CPU; the Vulkan backend's fused.comp): sigmoid and two products in one pass,
/// the same per-element operations, so bit-identical:
/// a decode step has one per layer, and three nodes cost three dispatches of a vector of a
/// few thousand elements — mlx-lm compiles its `swiglu` for the same reason.
/// `swiglu` is [`swiglu_program`], made once per forward pass where it applies.
fn gated(act: FfnActivation, g: &Array, u: &Array, swiglu: Option<&Arc<FusedOp>>) -> Result<Array> {
    if let Some(p) = swiglu {
        if act == FfnActivation::Silu && g.dtype() == u.dtype() && p.dtype().ok() == Some(g.dtype()) {
            return FusedOp::record(p, alloc::vec![g.clone(), u.clone()]);
        }
    }
    ops::multiply(&activation(act, g)?, u)
}

/// `g · sigmoid(g) · u` over registers `g = 0`, `u = 1`, in [`activation`]'s order.
fn swiglu_program(dtype: DType) -> Arc<FusedOp> {
    let step = |prim, args: &[usize]| Step { prim, args: args.to_vec(), dtype };
    Arc::new(FusedOp {
        n_inputs: 2,
        steps: alloc::vec![
            step(Primitive::Unary(UnaryOp::Sigmoid), &[0]),
            step(Primitive::Binary(BinaryOp::Multiply), &[0, 2]),
            step(Primitive::Binary(BinaryOp::Multiply), &[3, 1]),
        ],
    })
}

/// The feed-forward gate's activation, in the order of operations MLX's `nn.silu` / `nn.gelu`
/// use, so that results match theirs.
fn activation(act: FfnActivation, g: &Array) -> Result<Array> {
    match act {
        FfnActivation::Silu => ops::multiply(g, &ops::sigmoid(g)?),
        FfnActivation::Gelu => {
            let erf = ops::erf(&ops::divide(g, &Array::scalar(core::f32::consts::SQRT_2)?)?)?;
            let one_plus = ops::add(&Array::scalar(1.0f32)?, &erf)?;
            ops::divide(&ops::multiply(g, &one_plus)?, &Array::scalar(2.0f32)?)
        }
        FfnActivation::GeluApprox => gelu_approx(g),
    }
}

/// MLX's `nn.gelu_approx`: `0.5 · x · (1 + tanh(√(2/π) · (x + 0.044715 · x³)))`.
fn gelu_approx(x: &Array) -> Result<Array> {
    let s = |v: f32| Array::scalar(v);
    let cube = ops::multiply(&ops::multiply(x, x)?, x)?;
    let sqrt_2_over_pi = libm::sqrt(2.0 / core::f64::consts::PI) as f32;
    let inner = ops::multiply(&s(sqrt_2_over_pi)?, &ops::add(x, &ops::multiply(&s(0.044715)?, &cube)?)?)?;
    let one_plus = ops::add(&s(1.0)?, &ops::tanh(&inner)?)?;
    ops::multiply(&ops::multiply(&s(0.5)?, x)?, &one_plus)
}

/// The arrays of a `Vec` known to hold `N` (what [`Weight::project_all`] returns for `N` weights).
fn exactly<const N: usize>(v: Vec<Array>) -> Result<[Array; N]> {
    v.try_into().map_err(|_| Error::runtime("forward", "a projection returned the wrong number of arrays"))
}

/// The `freqs` argument of `fast.rope` for Llama 3.1 scaling: each frequency's wavelength
/// `base^(2i/d)`, multiplied by `factor` for long wavelengths, unchanged for short ones and
/// interpolated smoothly between (Meta's reference recipe, as mlx-lm and llama.cpp apply it).
pub fn llama3_rope_freqs(cfg: &ModelConfig) -> Result<Option<Array>> {
    let RopeScaling::Llama3 { factor, low_freq_factor, high_freq_factor, original_max_position_embeddings: orig } =
        cfg.rope_scaling
    else {
        return Ok(None);
    };
    let dims = cfg.rope_dims;
    let low_wavelen = orig / low_freq_factor;
    let high_wavelen = orig / high_freq_factor;
    let mut freqs = Vec::with_capacity(dims / 2);
    for i in 0..dims / 2 {
        let f = libm::powf(cfg.rope_theta, (2 * i) as f32 / dims as f32);
        let wavelen = 2.0 * core::f32::consts::PI * f;
        let v = if wavelen < high_wavelen {
            f
        } else if wavelen > low_wavelen {
            f * factor
        } else {
            let smooth = (orig / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor);
            f / ((1.0 - smooth) / factor + smooth)
        };
        freqs.push(v);
    }
    Ok(Some(Array::from_slice(&freqs, &[dims / 2])?))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fused SiLU·up node gives the very bits of the unfused nodes, at lengths below,
    /// at and across the fused kernel's 64-element blocks, and in f16.
    #[test]
    fn fused_swiglu_equals_unfused_bitwise() {
        for (n, dtype) in [(1usize, DType::Float32), (100, DType::Float32), (1536, DType::Float32), (4099, DType::Float16)] {
            let g: Vec<f32> = (0..n).map(|i| ((i * 37 % 101) as f32 - 50.0) * 0.173).collect();
            let u: Vec<f32> = (0..n).map(|i| ((i * 53 % 89) as f32 - 44.0) * 0.091).collect();
            let g = ops::astype(&Array::from_slice(&g, &[1, 1, n]).unwrap(), dtype).unwrap();
            let u = ops::astype(&Array::from_slice(&u, &[1, 1, n]).unwrap(), dtype).unwrap();
            let fused = gated(FfnActivation::Silu, &g, &u, Some(&swiglu_program(dtype))).unwrap();
            assert_eq!(mlx_arm_core::transforms::compile::fused_steps(&fused), Some(3));
            let plain = ops::multiply(&activation(FfnActivation::Silu, &g).unwrap(), &u).unwrap();
            let (a, b) = (ops::astype(&fused, DType::Float32).unwrap(), ops::astype(&plain, DType::Float32).unwrap());
            let (a, b) = (a.to_vec::<f32>().unwrap(), b.to_vec::<f32>().unwrap());
            assert!(a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()), "n = {n}, {dtype:?}");
        }
    }
}
