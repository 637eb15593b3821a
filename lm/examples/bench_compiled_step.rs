//! A decode step traced once by the core's `compile` and replayed, against the same step
//! uncompiled: `bench_compiled_step [MODEL] [PROMPT_TOKENS] [NEW_TOKENS] [ROUNDS]`
//! (issue 19's benchmark; docs/COMPILE.md "A compiled decode step").
//!
//! The step is a pure function of arrays, as `compile` needs:
//! `(token (1, 1) i32, position () i32, K₀, V₀, … K₋₁, V₋₁) → (logits, K₀', V₀', …)`, each
//! cache buffer `(1, kv_heads, CAP, head_dim)` of a fixed capacity. The new key and value are
//! written at `position` by a dynamic `slice_update` (a start read from an array) and the
//! attention reads the whole buffer under a mask `column ≤ position`, so every step has the
//! same shapes and one trace serves them all (a cache that grows by one row a step would
//! need a trace per length). The same function is run four ways, in one process, with the
//! prompt fed one token per step and greedy decoding after it:
//! - `uncompiled`: the pure step called directly (the graph is built op by op every step);
//! - `compiled`: the pure step through `compile` (traced on the first call, replayed since);
//! - `compiled, no fusion`: the same trace replayed without fusion (`CompileMode::NoFuse`);
//! - `forward`: the ordinary path (`generate::step`: `Model::forward` over a growing
//!   `KvCache`), for reference.
//! The generated tokens of all must be equal (the program fails otherwise). Times are
//! wall-clock (the step, and its graph building: until the call returns, before evaluation);
//! rounds alternate the modes so that load on a shared machine hits them alike.
//! Models with sliding-window layers, soft-capped attention or per-head norms are refused
//! (the step here covers the plain Llama-family decoder).

use std::sync::Arc;
use std::time::Instant;

use mlx_arm_core::ops::fast::lm::{add_rms_norm, decode_heads, HeadsRope};
use mlx_arm_core::ops::{self, SdpaMask};
use mlx_arm_core::transforms::compile::{compile, set_compile_mode, CompileMode, Compiled};
use mlx_arm_core::{Array, DType, Error, Result};
use mlx_arm_lm::config::{FfnActivation, RopeScaling};
use mlx_arm_lm::model::Model;
use mlx_arm_lm::weights::Weight;

/// Checks that [`pure_step`] computes what `Model::forward` computes for this model.
fn supported(model: &Model) -> Result<()> {
    let c = &model.config;
    let plain = (0..c.n_layers).all(|i| !c.is_local(i))
        && c.attn_softcap.is_none()
        && c.activation == FfnActivation::Silu
        && model.layers.iter().all(|l| l.qk_norms.is_none());
    if !plain {
        return Err(Error::invalid("bench_compiled_step", "the pure step covers plain Llama-family models only"));
    }
    Ok(())
}

/// RoPE's base, scale and frequencies for a global layer (as `Model::forward` picks them).
fn rope_params(model: &Model) -> (Option<f32>, f32, Option<&Array>) {
    let c = &model.config;
    let scale = match c.rope_scaling {
        RopeScaling::Linear { factor } if factor > 0.0 => 1.0 / factor,
        _ => 1.0,
    };
    match &model.rope_freqs {
        Some(f) => (None, scale, Some(f)),
        None => (Some(c.rope_theta), scale, None),
    }
}

/// One decode step as a function of arrays (see the file's comment): the same ops as
/// `Model::forward` for one token, with the cache write and attention over fixed buffers.
fn pure_step(model: &Model, inputs: &[Array]) -> Result<Vec<Array>> {
    let c = &model.config;
    let (token, position, caches) = match inputs {
        [t, p, rest @ ..] if rest.len() == 2 * c.n_layers => (t, p, rest),
        _ => return Err(Error::invalid("pure_step", "takes a token, a position and two buffers per layer")),
    };
    let cap = caches.first().map_or(0, |k| k.shape()[2]);
    let mut x = model.embed.lookup(token, model.dtype)?;
    if let Some(s) = c.embed_scale {
        x = ops::multiply(&x, &Array::scalar(s)?)?;
    }
    // Column j of every buffer holds position j: visible when j ≤ position.
    let columns = ops::arange(0.0, cap as f64, 1.0, DType::Int32)?;
    let mask = ops::less_equal(&columns, position)?;
    let start = ops::reshape(position, &[1])?;
    let (base, scale, freqs) = rope_params(model);
    let rope = HeadsRope { dims: c.rope_dims, traditional: c.rope_traditional, base, scale, offset: position, freqs };
    let first_norm = model.layers.first().map_or(&model.norm, |l| &l.attn_norm);
    let mut h = ops::rms_norm(&x, Some(first_norm), c.rms_eps)?;
    let mut out = vec![Array::scalar(0f32)?];
    for (i, l) in model.layers.iter().enumerate() {
        let qkv = Weight::project_all(&[&l.wq, &l.wk, &l.wv], &h)?;
        let [mut q, mut k, mut v]: [Array; 3] = qkv.try_into().map_err(|_| Error::runtime("pure_step", "three projections expected"))?;
        if let Some([bq, bk, bv]) = &l.qkv_bias {
            q = ops::add(&q, bq)?;
            k = ops::add(&k, bk)?;
            v = ops::add(&v, bv)?;
        }
        let [q, k, v] = decode_heads(&q, &k, &v, c.head_dim, &rope)?;
        let keys = ops::slice_update_at(&caches[2 * i], &k, &start, &[2])?;
        let values = ops::slice_update_at(&caches[2 * i + 1], &v, &start, &[2])?;
        let o = ops::scaled_dot_product_attention(&q, &keys, &values, c.attn_scale, SdpaMask::Array(&mask))?;
        out.extend([keys, values]);
        let o = ops::reshape(&o, &[1, 1, (c.n_heads * c.head_dim) as isize])?;
        let post = |y: Array, which: usize| -> Result<Array> {
            match &l.post_norms {
                Some(n) => ops::rms_norm(&y, Some(&n[which]), c.rms_eps),
                None => Ok(y),
            }
        };
        [x, h] = add_rms_norm(&x, &post(l.wo.project(&o)?, 0)?, &l.ffn_norm, c.rms_eps)?;
        let gu = Weight::project_all(&[&l.w_gate, &l.w_up], &h)?;
        let [g, u]: [Array; 2] = gu.try_into().map_err(|_| Error::runtime("pure_step", "two projections expected"))?;
        // SiLU(g)·u in the order of the model's fused SwiGLU (sigmoid, ·g, ·u): same values.
        let act = ops::multiply(&ops::multiply(&g, &ops::sigmoid(&g)?)?, &u)?;
        let y = post(l.w_down.project(&act)?, 1)?;
        let next = model.layers.get(i + 1).map_or(&model.norm, |n| &n.attn_norm);
        [x, h] = add_rms_norm(&x, &y, next, c.rms_eps)?;
    }
    let logits = model.output.project(&h)?;
    out[0] = match c.final_softcap {
        Some(cap) => {
            let cap = Array::scalar(cap)?;
            ops::multiply(&ops::tanh(&ops::divide(&logits, &cap)?)?, &cap)?
        }
        None => logits,
    };
    Ok(out)
}

/// The greedy run of one mode: the generated tokens and the seconds of each step (prompt
/// steps first).
struct Run {
    tokens: Vec<u32>,
    step_secs: Vec<f64>,
    /// Of each step, the seconds spent making its graph (before anything is evaluated).
    build_secs: Vec<f64>,
}

fn argmax(logits: &Array) -> Result<u32> {
    Ok(mlx_arm_lm::sample::argmax(&logits.to_vec::<f32>()?))
}

/// Runs the prompt then `n` greedy tokens through the pure step (`compiled` or direct).
fn run_pure(model: &Model, step: Option<&Compiled>, prompt: &[u32], n: usize) -> Result<Run> {
    let c = &model.config;
    let cap = prompt.len() + n;
    let mut caches: Vec<Array> =
        (0..2 * c.n_layers).map(|_| ops::zeros(&[1, c.n_kv_heads, cap, c.head_dim], model.dtype)).collect::<Result<_>>()?;
    mlx_arm_core::eval::eval(&caches)?;
    let (mut tokens, mut step_secs, mut build_secs) = (Vec::new(), Vec::new(), Vec::new());
    let mut tok = prompt[0];
    for pos in 0..cap - 1 {
        let t0 = Instant::now();
        let mut inputs = vec![Array::from_slice(&[tok as i32], &[1, 1])?, Array::scalar(pos as i32)?];
        inputs.append(&mut caches);
        let mut outs = match step {
            Some(f) => f.call(&inputs)?,
            None => pure_step(model, &inputs)?,
        };
        // The old buffers go before the step runs, so the cache writes may take them over.
        drop(inputs);
        caches = outs.split_off(1);
        build_secs.push(t0.elapsed().as_secs_f64());
        let next = argmax(&outs[0])?;
        step_secs.push(t0.elapsed().as_secs_f64());
        tok = next_input(prompt, pos, next, &mut tokens);
    }
    Ok(Run { tokens, step_secs, build_secs })
}

/// The same through `Model::forward` and its `KvCache` (one token per step throughout).
fn run_forward(model: &Model, prompt: &[u32], n: usize) -> Result<Run> {
    let mut cache = model.new_cache();
    let (mut tokens, mut step_secs, mut build_secs) = (Vec::new(), Vec::new(), Vec::new());
    let mut tok = prompt[0];
    for pos in 0..prompt.len() + n - 1 {
        let t0 = Instant::now();
        // What `generate::step` does, with the graph building timed on its own.
        let logits = model.forward(&Array::from_slice(&[tok as i32], &[1, 1])?, &mut cache, true)?;
        build_secs.push(t0.elapsed().as_secs_f64());
        let next = argmax(&logits)?;
        step_secs.push(t0.elapsed().as_secs_f64());
        tok = next_input(prompt, pos, next, &mut tokens);
    }
    Ok(Run { tokens, step_secs, build_secs })
}

/// The token fed at step `pos + 1`: the prompt's while it lasts (teacher forcing), then the model's
/// own greedy choice `next`, which is kept in `tokens`.
fn next_input(prompt: &[u32], pos: usize, next: u32, tokens: &mut Vec<u32>) -> u32 {
    match prompt.get(pos + 1) {
        Some(&p) => p,
        None => {
            tokens.push(next);
            next
        }
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> std::result::Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).map(std::path::PathBuf::from).unwrap_or_else(mlx_arm_lm::load::files::default_model_path);
    let prompt_len: usize = args.get(2).map(|s| s.parse()).transpose()?.unwrap_or(16).max(1);
    let n: usize = args.get(3).map(|s| s.parse()).transpose()?.unwrap_or(64).max(1);
    let rounds: usize = args.get(4).map(|s| s.parse()).transpose()?.unwrap_or(3).max(1);
    let loaded = mlx_arm_lm::load::files::load_model(&path)?;
    let model = Arc::new(loaded.model);
    supported(&model)?;
    let prompt: Vec<u32> = (0..prompt_len as u32).map(|i| (i * 7919 + 13) % model.config.vocab_size as u32).collect();
    let m = model.clone();
    let compiled = compile(Arc::new(move |x: &[Array]| pure_step(&m, x)), false);
    let names = ["uncompiled", "compiled", "compiled, no fusion", "forward"];
    // Per mode: the decode steps' seconds (whole step, graph building) of every round, and
    // the very first step's (for `compiled`, the call that traces).
    let mut decode: [Vec<f64>; 4] = Default::default();
    let mut builds: [Vec<f64>; 4] = Default::default();
    let mut firsts = [(0f64, 0f64); 4];
    let mut reference: Option<Vec<u32>> = None;
    // Uncounted: the weights' first reads (page faults of the mapped file), pool threads.
    run_forward(&model, &prompt[..1], 4)?;
    for round in 0..rounds {
        for (k, name) in names.iter().enumerate() {
            let run = match k {
                0 => run_pure(&model, None, &prompt, n)?,
                1 => run_pure(&model, Some(&compiled), &prompt, n)?,
                2 => {
                    // The same trace replayed unfused (`NoFuse` keeps its simplified tape).
                    set_compile_mode(CompileMode::NoFuse);
                    let r = run_pure(&model, Some(&compiled), &prompt, n);
                    set_compile_mode(CompileMode::Enabled);
                    r?
                }
                _ => run_forward(&model, &prompt, n)?,
            };
            match &reference {
                None => reference = Some(run.tokens.clone()),
                Some(r) if *r != run.tokens => {
                    return Err(format!("round {round}: {name} generated {:?}, uncompiled {:?}", run.tokens, r).into());
                }
                _ => {}
            }
            if round == 0 {
                firsts[k] = (run.step_secs[0], run.build_secs[0]);
            }
            decode[k].extend_from_slice(&run.step_secs[prompt_len..]);
            builds[k].extend_from_slice(&run.build_secs[prompt_len..]);
        }
    }
    let threads = mlx_arm_core::parallel::num_threads();
    println!(
        "{} prompt tokens (one per step), {n} greedy tokens, {rounds} rounds, {threads} threads; traces: {}",
        prompt_len,
        compiled.traces()
    );
    println!("tokens equal in all modes: {:?}", reference.unwrap_or_default());
    println!("| mode | median ms/step | tok/s (median) | mean ms/step | graph building ms/step (median) | first step ms (of which graph) |");
    println!("|---|---:|---:|---:|---:|---:|");
    let mut med = [0f64; 4];
    for (k, name) in names.iter().enumerate() {
        let mean = decode[k].iter().sum::<f64>() / decode[k].len() as f64;
        med[k] = median(&mut decode[k]);
        println!(
            "| {name} | {:.3} | {:.1} | {:.3} | {:.3} | {:.1} ({:.1}) |",
            med[k] * 1e3,
            1.0 / med[k],
            mean * 1e3,
            median(&mut builds[k]) * 1e3,
            firsts[k].0 * 1e3,
            firsts[k].1 * 1e3
        );
    }
    println!(
        "speed (median) compiled / uncompiled: {:.3}; compiled / compiled without fusion: {:.3}; compiled / forward: {:.3}",
        med[0] / med[1],
        med[2] / med[1],
        med[3] / med[1]
    );
    Ok(())
}
