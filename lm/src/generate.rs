//! The generation loop over token ids: prefill the prompt in chunks (one graph per chunk,
//! all positions at once), then decode one token per step, sampling each from the last
//! logits, until a stop token or the token budget. Callers see each token as it is chosen
//! (streaming) and get timing figures at the end. Text — tokenizing, detokenizing, stop
//! strings, chat templates — lives a layer above, so this runs on firmware as well.

use alloc::vec::Vec;

use mlx_arm_core::{device, ops, parallel, Array, DType, Device, Error, Result};

use crate::kv_cache::KvCache;
use crate::model::Model;
use crate::sample::{Sampler, SamplerConfig};

/// Prompt positions run through the model per graph: bounds the size of one prefill graph
/// and its activations (mlx-lm's `prefill_step_size` plays the same role).
pub const DEFAULT_PREFILL_CHUNK: usize = 512;

/// Settings of one generation.
#[derive(Clone, Debug)]
pub struct GenerateConfig {
    /// Most tokens to generate.
    pub max_tokens: usize,
    /// How tokens are chosen.
    pub sampler: SamplerConfig,
    /// Tokens that end generation (not emitted).
    pub stop_ids: Vec<u32>,
    /// Prompt positions per prefill graph.
    pub prefill_chunk: usize,
}

impl Default for GenerateConfig {
    fn default() -> Self {
        GenerateConfig { max_tokens: 256, sampler: SamplerConfig::default(), stop_ids: Vec::new(), prefill_chunk: DEFAULT_PREFILL_CHUNK }
    }
}

/// Why generation ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// A stop token was sampled.
    Stop,
    /// `max_tokens` were generated.
    Length,
    /// The caller's callback asked to stop (e.g. a stop string was printed).
    Callback,
    /// The model's context is full.
    Context,
}

/// Figures of one generation, in seconds as measured by the caller's clock.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    /// Prompt tokens run.
    pub prompt_tokens: usize,
    /// Time to run the prompt (first token included: that is what a user waits for).
    pub prompt_secs: f64,
    /// Tokens generated (the first one included).
    pub generated_tokens: usize,
    /// Time from the first generated token to the last.
    pub generation_secs: f64,
}

impl Stats {
    /// Prompt tokens per second.
    pub fn prompt_tps(&self) -> f64 {
        if self.prompt_secs > 0.0 { self.prompt_tokens as f64 / self.prompt_secs } else { 0.0 }
    }
    /// Generated tokens per second, after the first.
    pub fn generation_tps(&self) -> f64 {
        let n = self.generated_tokens.saturating_sub(1);
        if self.generation_secs > 0.0 { n as f64 / self.generation_secs } else { 0.0 }
    }
}

/// The logits of the last position of `tokens` after running them through the model,
/// evaluated, as host floats. Runs `tokens` in chunks of `chunk`.
pub fn prefill(model: &Model, cache: &mut KvCache, tokens: &[u32], chunk: usize) -> Result<Vec<f32>> {
    let last = prefill_all_but_last(model, cache, tokens, chunk)?;
    step(model, cache, last)
}

/// Runs `tokens` at the cache's position and returns the last position's logits.
pub fn step(model: &Model, cache: &mut KvCache, tokens: &[u32]) -> Result<Vec<f32>> {
    // Evaluating the logits materializes the cache's buffers and releases the step's graph.
    let logits = logits_graph(model, cache, tokens)?;
    let built_at = cache.growths();
    let host = logits.to_vec::<f32>()?;
    cache.release_outgrown(built_at);
    Ok(host)
}

/// Runs `tokens` at the cache's position and returns the greedy choice after the last one.
/// On the GPU the argmax runs there and only the token id comes back (not the vocabulary's
/// logits); elsewhere it is `sample::argmax` of [`step`]'s logits, as before. The two differ
/// only on NaN logits (the device's argmax takes the first NaN, `sample::argmax` never does).
pub fn step_greedy(model: &Model, cache: &mut KvCache, tokens: &[u32]) -> Result<u32> {
    if device::default_device() != Device::GPU {
        return Ok(crate::sample::argmax(&step(model, cache, tokens)?));
    }
    let ids = lazy_argmax(&logits_graph(model, cache, tokens)?)?;
    let built_at = cache.growths();
    let tok = read_token(&ids)?;
    cache.release_outgrown(built_at);
    Ok(tok)
}

/// [`prefill`] followed by the greedy choice ([`step_greedy`] for the last chunk).
pub fn prefill_greedy(model: &Model, cache: &mut KvCache, tokens: &[u32], chunk: usize) -> Result<u32> {
    let last = prefill_all_but_last(model, cache, tokens, chunk)?;
    step_greedy(model, cache, last)
}

/// Runs every prefill chunk of `tokens` but the last, and returns that last chunk (the one
/// whose logits the caller wants).
fn prefill_all_but_last<'t>(model: &Model, cache: &mut KvCache, tokens: &'t [u32], chunk: usize) -> Result<&'t [u32]> {
    let chunks = prompt_chunks(tokens, chunk)?;
    let (last, rest) = chunks.split_last().ok_or_else(|| Error::invalid("generate", "the prompt has no tokens"))?;
    for c in rest {
        step(model, cache, c)?;
    }
    Ok(last)
}

/// `tokens` in chunks of `chunk` (at least one token each), or an error for an empty prompt.
fn prompt_chunks(tokens: &[u32], chunk: usize) -> Result<Vec<&[u32]>> {
    if tokens.is_empty() {
        return Err(Error::invalid("generate", "the prompt has no tokens"));
    }
    Ok(tokens.chunks(chunk.max(1)).collect())
}

/// The graph of the last position's float32 logits after running `tokens` (checked).
fn logits_graph(model: &Model, cache: &mut KvCache, tokens: &[u32]) -> Result<Array> {
    let vocab = model.config.vocab_size;
    if let Some(&bad) = tokens.iter().find(|&&t| t as usize >= vocab) {
        return Err(Error::invalid("generate", alloc::format!("token id {bad} is outside the vocabulary of {vocab}")));
    }
    let ids: Vec<i32> = tokens.iter().map(|&t| t as i32).collect();
    logits_graph_of(model, cache, &Array::from_slice(&ids, &[1, ids.len()])?)
}

/// [`logits_graph`] of a `(1, T)` token array, which may itself be lazy (the previous step's
/// greedy choice).
fn logits_graph_of(model: &Model, cache: &mut KvCache, ids: &Array) -> Result<Array> {
    if cache.offset() + ids.shape()[1] > model.config.context_length {
        return Err(Error::invalid("generate", "the model's context length is exhausted"));
    }
    let logits = model.forward(ids, cache, true)?;
    if logits.dtype() == DType::Float32 { Ok(logits) } else { ops::astype(&logits, DType::Float32) }
}

/// The greedy token after `logits` (`(1, 1, vocab)`), lazily, as the `(1, 1)` input of the
/// next step.
fn lazy_argmax(logits: &Array) -> Result<Array> {
    ops::argmax(logits, Some(-1), false)
}

/// The token id a [`lazy_argmax`] holds (waiting for it if it is still being computed).
fn read_token(ids: &Array) -> Result<u32> {
    ids.to_vec::<u32>()?.first().copied().ok_or_else(|| Error::runtime("generate", "the model returned no logits"))
}

/// Whether greedy decoding builds step n+1 from step n's lazy choice before reading it. On
/// the GPU always: step n+1 is recorded and submitted behind step n, so the GPU runs it while
/// the host reads step n's token and builds step n+2 (reading a token waits for its own step
/// only). On the CPU where a core is left beside the kernels' threads: step n runs in the
/// background while the host builds step n+1 (`eval_in_background`); without a spare core the
/// builder would take its time from the kernels' threads.
fn pipelines() -> bool {
    device::default_device() == Device::GPU || parallel::num_threads() < parallel::available_cores()
}

/// Starts computing `ids` (a step's lazy choice) without waiting for it: recorded and
/// submitted on the GPU, run on a background thread on the CPU.
fn start(ids: &Array) -> Result<()> {
    if device::default_device() == Device::GPU {
        mlx_arm_core::eval::eval(core::slice::from_ref(ids))
    } else {
        mlx_arm_core::eval::eval_in_background(core::slice::from_ref(ids))
    }
}

/// `n` greedy decode steps after `token` (at the cache's position): the tokens chosen, as
/// [`generate`] chooses them when it samples greedily (without stop tokens), pipelined where
/// it pipelines. What `mlx-arm bench` times as token generation.
pub fn decode_greedy(model: &Model, cache: &mut KvCache, token: u32, n: usize) -> Result<Vec<u32>> {
    let mut out = Vec::with_capacity(n);
    if !pipelines() {
        let mut tok = token;
        for _ in 0..n {
            tok = step_greedy(model, cache, &[tok])?;
            out.push(tok);
        }
        return Ok(out);
    }
    if n == 0 {
        return Ok(out);
    }
    let mut pending = lazy_argmax(&logits_graph(model, cache, &[token])?)?;
    start(&pending)?;
    let mut built_at = cache.growths();
    loop {
        let ahead = if out.len() + 1 < n {
            let following = lazy_argmax(&logits_graph_of(model, cache, &pending)?)?;
            start(&following)?;
            Some((following, cache.growths()))
        } else {
            None
        };
        out.push(read_token(&pending)?);
        cache.release_outgrown(built_at);
        match ahead {
            Some((following, at)) => (pending, built_at) = (following, at),
            None => return Ok(out),
        }
    }
}

/// What a step leaves for the next choice: logits to sample from, the token already chosen,
/// or the greedy token still being computed in the background (`(1, 1)` uint32, with the
/// cache's growth count after its step was built).
enum Next {
    Logits(Vec<f32>),
    Token(u32),
    Pending(Array, u64),
}

/// Generates after `prompt`: calls `on_token(id)` for every generated token (stop tokens
/// excluded); `on_token` returns false to stop. `now` is a clock in seconds (with `std`:
/// an `Instant`). Returns the generated ids, the reason and the figures.
pub fn generate(
    model: &Model,
    cache: &mut KvCache,
    prompt: &[u32],
    cfg: &GenerateConfig,
    now: &dyn Fn() -> f64,
    on_token: &mut dyn FnMut(u32) -> bool,
) -> Result<(Vec<u32>, StopReason, Stats)> {
    let mut sampler = Sampler::new(cfg.sampler.clone())?;
    // Room for the whole reply at once, so the cache grows (and copies itself) once, not every
    // `step` tokens. Up to the context length: llama.cpp reserves all of it up front.
    cache.reserve((cache.offset() + prompt.len() + cfg.max_tokens).min(model.config.context_length));
    let mut stats = Stats { prompt_tokens: prompt.len(), ..Default::default() };
    let t0 = now();
    // Plain greedy decoding on the GPU chooses there: one token id comes back per step. It is
    // pipelined where [`pipelines`] says: step n+1's graph is built from step n's lazy choice
    // before that choice is read; a step built past the end is undone.
    let on_device = sampler.is_greedy() && device::default_device() == Device::GPU;
    let pipelined = sampler.is_greedy() && pipelines();
    let mut next = if pipelined {
        let last = prefill_all_but_last(model, cache, prompt, cfg.prefill_chunk)?;
        let first = lazy_argmax(&logits_graph(model, cache, last)?)?;
        start(&first)?;
        Next::Pending(first, cache.growths())
    } else {
        Next::Logits(prefill(model, cache, prompt, cfg.prefill_chunk)?)
    };
    let mut history: Vec<u32> = prompt.to_vec();
    let mut out = Vec::new();
    let mut t_first = t0;
    // The step built ahead from a pending token, run if that token is kept, with the cache's
    // growth count after building it.
    let mut ahead: Option<(Array, u64)> = None;
    let reason = loop {
        if out.len() >= cfg.max_tokens {
            break StopReason::Length;
        }
        let tok = match &next {
            Next::Token(t) => *t,
            Next::Logits(l) => sampler.sample(l, &history)?,
            Next::Pending(ids, built_at) => {
                // The same conditions as the step at the end of this loop.
                if out.len() + 1 < cfg.max_tokens && cache.offset() < model.config.context_length {
                    let following = lazy_argmax(&logits_graph_of(model, cache, ids)?)?;
                    start(&following)?;
                    ahead = Some((following, cache.growths()));
                }
                let tok = read_token(ids)?;
                cache.release_outgrown(*built_at);
                tok
            }
        };
        if out.is_empty() {
            t_first = now();
            stats.prompt_secs = t_first - t0;
        }
        stats.generated_tokens += 1;
        if cfg.stop_ids.contains(&tok) {
            break StopReason::Stop;
        }
        out.push(tok);
        history.push(tok);
        if !on_token(tok) {
            break StopReason::Callback;
        }
        if out.len() >= cfg.max_tokens {
            break StopReason::Length;
        }
        if cache.offset() + 1 > model.config.context_length {
            break StopReason::Context;
        }
        next = match ahead.take() {
            Some((following, built_at)) => Next::Pending(following, built_at),
            None if on_device => Next::Token(step_greedy(model, cache, &[tok])?),
            None => Next::Logits(step(model, cache, &[tok])?),
        };
    };
    if ahead.is_some() {
        // The step built ahead for a token that ended generation: its keys and values are
        // not part of the conversation.
        cache.truncate(cache.offset().saturating_sub(1));
    }
    stats.generation_secs = now() - t_first;
    Ok((out, reason, stats))
}
