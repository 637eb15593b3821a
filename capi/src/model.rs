//! Language models on the C surface (`mlx_arm_model`, mlx_arm.h "Models"): loading a
//! Llama-family model from a GGUF file, a model directory or GGUF bytes in memory, its
//! tokenizer and chat template, and generation (text streamed through a callback, or ids).
//!
//! - Model handles are checked against a registry of live models, so a NULL, empty, freed or
//!   made-up handle is an error message and a non-zero status, never a wild read: a model is
//!   a heavyweight object (few exist), so the lookup costs nothing that matters.
//! - Every generation makes its own KV cache: calls are independent and two threads may
//!   generate with one model at once (the weights are immutable arrays).
//! - File loading and chat templates need an OS (the `std` feature); loading from bytes,
//!   tokenizing and generating work on bare metal too.

#![allow(non_camel_case_types)]

use crate::arg;
use crate::error::status;
use crate::handle;
use crate::prelude::*;
use crate::string::cstring;
use crate::sync::Mutex;
use crate::types::{mlx_string, mlx_vector_int};
use alloc::sync::Arc;
use core::ffi::{c_char, c_int, c_void};
use mlx_arm_core::{Error, Result};
use mlx_arm_lm::generate::{GenerateConfig, Stats, StopReason};
use mlx_arm_lm::model::Model;
use mlx_arm_lm::sample::SamplerConfig;
use mlx_arm_lm::tokenizer::Tokenizer;

/// `mlx_arm_model`: a loaded model (`ctx == NULL` is the empty handle).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct mlx_arm_model {
    /// The model's state, or null.
    pub ctx: *mut c_void,
}

/// What a model handle owns.
pub(crate) struct ModelCtx {
    pub(crate) model: Model,
    /// GGUF metadata (vocabulary, chat template) when the model came from GGUF.
    /// Its tokenizer, or why it has none (a firmware GGUF may carry no vocabulary: the
    /// model still generates ids).
    pub(crate) tokenizer: core::result::Result<Tokenizer, String>,
    /// Figures of the last generation (`mlx_arm_generate_stats`).
    last: Mutex<mlx_arm_generation_stats>,
}

// Live model contexts, by address. Shared (`Arc`) so that a generation running on one thread
// keeps the model alive if another thread frees the handle meanwhile.
static LIVE: Mutex<Vec<(usize, Arc<ModelCtx>)>> = Mutex::new(Vec::new());

const WHAT: &str = "mlx_arm_model";

fn register(ctx: ModelCtx) -> mlx_arm_model {
    let arc = Arc::new(ctx);
    let p = Arc::as_ptr(&arc) as *mut c_void;
    LIVE.lock().push((p as usize, arc));
    mlx_arm_model { ctx: p }
}

/// The live model behind `m`, or an error naming what is wrong with the handle.
fn lookup(m: mlx_arm_model) -> Result<Arc<ModelCtx>> {
    if m.ctx.is_null() {
        return Err(Error::invalid(WHAT, "expected a non-empty mlx_arm_model"));
    }
    LIVE.lock()
        .iter()
        .find(|(p, _)| *p == m.ctx as usize)
        .map(|(_, c)| c.clone())
        .ok_or_else(|| Error::invalid(WHAT, "the mlx_arm_model handle is not a live model (already freed?)"))
}

/// Stores a new model in `*res`, freeing the one `*res` held (as `handle::assign` replaces an
/// array): a model handle is not shared state that other copies could observe changing.
unsafe fn store(res: *mut mlx_arm_model, ctx: ModelCtx) -> Result<()> {
    if res.is_null() {
        return Err(Error::invalid(WHAT, "the result mlx_arm_model* is NULL"));
    }
    let old = (*res).ctx as usize;
    if old != 0 {
        LIVE.lock().retain(|(p, _)| *p != old);
    }
    *res = register(ctx);
    Ok(())
}

fn new_ctx(model: Model, tokenizer: Result<Tokenizer>) -> ModelCtx {
    let tokenizer = tokenizer.map_err(|e| e.to_string());
    ModelCtx { model, tokenizer, last: Mutex::new(mlx_arm_generation_stats::default()) }
}

/// `mlx_arm_model_new`: the empty model handle.
#[no_mangle]
pub extern "C" fn mlx_arm_model_new() -> mlx_arm_model {
    mlx_arm_model { ctx: core::ptr::null_mut() }
}

/// `mlx_arm_model_free`: releases the model (the empty handle is allowed; a handle that is
/// not live — freed twice, never loaded — is an error).
#[no_mangle]
pub extern "C" fn mlx_arm_model_free(model: mlx_arm_model) -> c_int {
    status("mlx_arm_model_free", || {
        if model.ctx.is_null() {
            return Ok(());
        }
        let mut live = LIVE.lock();
        let before = live.len();
        live.retain(|(p, _)| *p != model.ctx as usize);
        if live.len() == before {
            return Err(Error::invalid(WHAT, "the mlx_arm_model handle is not a live model (already freed?)"));
        }
        Ok(())
    })
}

/// `mlx_arm_model_load`: a `.gguf` file or a model directory (`config.json` +
/// `*.safetensors`). Weights keep the file's format; they are read into huge-page memory where
/// the kernel offers it and they take at most half the available memory, and memory-mapped
/// otherwise (`WeightMemory::Auto`, as the CLI without `--mmap`).
///
/// # Safety
/// `res` points to a handle; `path` is NULL or NUL-terminated.
#[cfg(feature = "std")]
#[no_mangle]
pub unsafe extern "C" fn mlx_arm_model_load(res: *mut mlx_arm_model, path: *const core::ffi::c_char) -> c_int {
    status("mlx_arm_model_load", || {
        if res.is_null() {
            return Err(Error::invalid(WHAT, "the result mlx_arm_model* is NULL"));
        }
        let path = arg::string(path, "path")?;
        use mlx_arm_lm::load::files::{load_model_with, WeightMemory};
        let loaded = load_model_with(std::path::Path::new(path), WeightMemory::Auto, &mut |_, _| {})?;
        let tokenizer = match &loaded.origin {
            mlx_arm_lm::load::files::Origin::Gguf { metadata, .. } => Tokenizer::from_gguf(metadata),
            mlx_arm_lm::load::files::Origin::Dir(dir) => mlx_arm_lm::load::files::dir_tokenizer(dir),
        };
        store(res, new_ctx(loaded.model, tokenizer))
    })
}

/// `mlx_arm_model_load_gguf_bytes`: a model from a GGUF image in memory (flash on firmware),
/// viewed in place: the bytes must stay valid and unchanged until the model is freed.
///
/// # Safety
/// `res` points to a handle; `data` holds `size` readable bytes that outlive the model.
#[no_mangle]
pub unsafe extern "C" fn mlx_arm_model_load_gguf_bytes(res: *mut mlx_arm_model, data: *const c_void, size: usize) -> c_int {
    status("mlx_arm_model_load_gguf_bytes", || {
        if res.is_null() {
            return Err(Error::invalid(WHAT, "the result mlx_arm_model* is NULL"));
        }
        if data.is_null() || size == 0 {
            return Err(Error::invalid("mlx_arm_model_load_gguf_bytes", "data is NULL or size is 0"));
        }
        // The caller promises the bytes outlive the model (documented in the header), which
        // is what lets the weights be viewed in place instead of copied.
        let bytes: &'static [u8] = arg::slice(data as *const u8, size, "data")?;
        let g = mlx_arm_core::io::arrays::load_gguf_native_bytes(bytes)?;
        let model = mlx_arm_lm::load::gguf::model_from_gguf(&g)?;
        store(res, new_ctx(model, Tokenizer::from_gguf(&g.metadata)))
    })
}

/// `mlx_arm_model_info`: `key=value` lines describing the model.
///
/// # Safety
/// `res` points to a handle.
#[no_mangle]
pub unsafe extern "C" fn mlx_arm_model_info(res: *mut mlx_string, model: mlx_arm_model) -> c_int {
    status("mlx_arm_model_info", || {
        let m = lookup(model)?;
        let c = &m.model.config;
        let text = format!(
            "arch={}\nlayers={}\nhidden={}\nffn={}\nheads={}\nkv_heads={}\nhead_dim={}\nvocab={}\ncontext={}\nrope_theta={}\ntied_embeddings={}\n",
            c.arch.gguf_name(),
            c.n_layers,
            c.hidden,
            c.ffn,
            c.n_heads,
            c.n_kv_heads,
            c.head_dim,
            c.vocab_size,
            c.context_length,
            c.rope_theta,
            c.tie_embeddings as u8,
        );
        handle::assign(res, cstring(&text))
    })
}

/// `mlx_arm_generate_config`: settings of one generation (`mlx_arm_generate_config_default()`
/// gives greedy decoding of up to 256 tokens).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct mlx_arm_generate_config {
    /// Most tokens to generate (>= 0).
    pub max_tokens: c_int,
    /// Softmax temperature; 0 is greedy.
    pub temperature: f32,
    /// Keep the k most likely tokens (0: all).
    pub top_k: c_int,
    /// Nucleus threshold in (0, 1] (1: off).
    pub top_p: f32,
    /// Drop tokens below min_p times the most likely one (0: off).
    pub min_p: f32,
    /// Repetition penalty (1: off).
    pub repetition_penalty: f32,
    /// How many recent tokens the penalty looks at.
    pub repetition_context: c_int,
    /// Seed of the sampler's random stream.
    pub seed: u64,
}

/// `mlx_arm_generate_config_default`.
#[no_mangle]
pub extern "C" fn mlx_arm_generate_config_default() -> mlx_arm_generate_config {
    let g = GenerateConfig::default();
    let s = g.sampler;
    mlx_arm_generate_config {
        max_tokens: g.max_tokens as c_int,
        temperature: s.temperature,
        top_k: s.top_k as c_int,
        top_p: s.top_p,
        min_p: s.min_p,
        repetition_penalty: s.repetition_penalty,
        repetition_context: s.repetition_context as c_int,
        seed: s.seed,
    }
}

/// The Rust settings of a C config (NULL: the defaults), validated; the tokenizer's
/// end-of-generation ids stop generation.
unsafe fn config(m: &ModelCtx, cfg: *const mlx_arm_generate_config) -> Result<GenerateConfig> {
    let c = if cfg.is_null() { mlx_arm_generate_config_default() } else { *cfg };
    let g = GenerateConfig {
        max_tokens: arg::count(c.max_tokens, "max_tokens")?,
        sampler: SamplerConfig {
            temperature: c.temperature,
            top_k: arg::count(c.top_k, "top_k")?,
            top_p: c.top_p,
            min_p: c.min_p,
            repetition_penalty: c.repetition_penalty,
            repetition_context: arg::count(c.repetition_context, "repetition_context")?,
            seed: c.seed,
        },
        stop_ids: m.tokenizer.as_ref().map(|t| t.eos_ids().to_vec()).unwrap_or_default(),
        ..Default::default()
    };
    g.sampler.validate()?;
    Ok(g)
}

/// `mlx_arm_generation_stats`: figures of a model's last generation.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct mlx_arm_generation_stats {
    /// Prompt tokens run.
    pub prompt_tokens: usize,
    /// Tokens generated (a stop token included).
    pub generation_tokens: usize,
    /// Prompt tokens per second (0 without a clock).
    pub prompt_tps: f64,
    /// Generated tokens per second after the first (0 without a clock).
    pub generation_tps: f64,
    /// Seconds to the first generated token.
    pub prompt_seconds: f64,
    /// Seconds from the first generated token to the last.
    pub generation_seconds: f64,
    /// Why it ended: 0 a stop token, 1 max_tokens, 2 the callback, 3 the context is full.
    pub stop_reason: c_int,
}

fn stats_of(s: &Stats, r: StopReason) -> mlx_arm_generation_stats {
    mlx_arm_generation_stats {
        prompt_tokens: s.prompt_tokens,
        generation_tokens: s.generated_tokens,
        prompt_tps: s.prompt_tps(),
        generation_tps: s.generation_tps(),
        prompt_seconds: s.prompt_secs,
        generation_seconds: s.generation_secs,
        stop_reason: match r {
            StopReason::Stop => 0,
            StopReason::Length => 1,
            StopReason::Callback => 2,
            StopReason::Context => 3,
        },
    }
}

/// `mlx_arm_generate_stats`: the figures of the model's last finished generation (zeros
/// before the first).
///
/// # Safety
/// `res` writable.
#[no_mangle]
pub unsafe extern "C" fn mlx_arm_generate_stats(res: *mut mlx_arm_generation_stats, model: mlx_arm_model) -> c_int {
    status("mlx_arm_generate_stats", || {
        let m = lookup(model)?;
        let s = *m.last.lock();
        arg::out(res, s, "res")
    })
}

/// Seconds since an arbitrary start, for tokens-per-second figures. Firmware has no clock the
/// library knows of, so there the figures are 0 (counts are still right).
#[cfg(feature = "std")]
fn clock() -> impl Fn() -> f64 {
    let start = std::time::Instant::now();
    move || start.elapsed().as_secs_f64()
}
#[cfg(not(feature = "std"))]
fn clock() -> impl Fn() -> f64 {
    || 0.0
}

/// Runs one generation over ids and records its figures in the model.
fn run(
    m: &ModelCtx,
    ids: &[u32],
    cfg: &GenerateConfig,
    on_token: &mut dyn FnMut(u32) -> bool,
) -> Result<Vec<u32>> {
    let mut cache = m.model.new_cache();
    let now = clock();
    let (out, reason, stats) = mlx_arm_lm::generate::generate(&m.model, &mut cache, ids, cfg, &now, on_token)?;
    *m.last.lock() = stats_of(&stats, reason);
    Ok(out)
}

/// `mlx_arm_generate_ids`: generates after the token ids `prompt` (no tokenizer involved; stop
/// tokens are the tokenizer's end-of-generation ids when the model has a vocabulary). `*res`
/// receives the generated ids.
///
/// # Safety
/// `res` points to a handle; `prompt` holds `n` ints; `cfg` is NULL or valid.
#[no_mangle]
pub unsafe extern "C" fn mlx_arm_generate_ids(
    res: *mut mlx_vector_int,
    model: mlx_arm_model,
    prompt: *const c_int,
    n: usize,
    cfg: *const mlx_arm_generate_config,
) -> c_int {
    status("mlx_arm_generate_ids", || {
        if res.is_null() {
            return Err(Error::invalid("mlx_vector_int", "the result mlx_vector_int* is NULL"));
        }
        let m = lookup(model)?;
        let ids = ids_arg(prompt, n, "prompt")?;
        let cfg = config(&m, cfg)?;
        let out = run(&m, &ids, &cfg, &mut |_| true)?;
        handle::assign(res, out.into_iter().map(|t| t as c_int).collect())
    })
}

// ---- Text: the tokenizer, chat templates and streamed generation ----

/// The model's tokenizer, or why there is none.
fn tokenizer(m: &ModelCtx) -> Result<&Tokenizer> {
    m.tokenizer.as_ref().map_err(|e| Error::invalid(WHAT, format!("the model has no usable tokenizer: {e}")))
}

/// Ids as `u32`, negative ones an error (the tokenizer checks the vocabulary bound).
unsafe fn ids_arg(p: *const c_int, n: usize, name: &'static str) -> Result<Vec<u32>> {
    arg::slice(p, n, name)?
        .iter()
        .map(|&t| u32::try_from(t).map_err(|_| Error::invalid(name, format!("token id {t} is negative"))))
        .collect()
}

/// `mlx_arm_model_tokenize`: the ids of `text` (`add_special`: the tokenizer's BOS rule).
///
/// # Safety
/// `res` points to a handle; `text` is NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn mlx_arm_model_tokenize(res: *mut mlx_vector_int, model: mlx_arm_model, text: *const c_char, add_special: bool) -> c_int {
    status("mlx_arm_model_tokenize", || {
        let m = lookup(model)?;
        let text = arg::string(text, "text")?;
        let ids = tokenizer(&m)?.encode(text, add_special)?;
        handle::assign(res, ids.into_iter().map(|t| t as c_int).collect())
    })
}

/// `mlx_arm_model_detokenize`: the text of `ids`.
///
/// # Safety
/// `res` points to a handle; `ids` holds `ids_num` ints.
#[no_mangle]
pub unsafe extern "C" fn mlx_arm_model_detokenize(res: *mut mlx_string, model: mlx_arm_model, ids: *const c_int, ids_num: usize) -> c_int {
    status("mlx_arm_model_detokenize", || {
        let m = lookup(model)?;
        let ids = ids_arg(ids, ids_num, "ids")?;
        let text = tokenizer(&m)?.decode(&ids)?;
        handle::assign(res, cstring(&text))
    })
}

/// The prompt text for `messages`: the chat template's rendering with the assistant's turn
/// opened, or the last message's text when the model has no template (as the CLI does).
#[cfg(feature = "std")]
fn render_chat(tok: &Tokenizer, messages: &[mlx_arm_lm::chat::Message], add_generation_prompt: bool) -> Result<String> {
    match tok.chat_template() {
        Some(t) => {
            let bos = tok.bos_id().map(|id| tok.token_text(id)).transpose()?.unwrap_or_default();
            let eos = tok.eos_ids().first().map(|&id| tok.token_text(id)).transpose()?.unwrap_or_default();
            mlx_arm_lm::chat::render(t, messages, add_generation_prompt, &bos, &eos)
        }
        None => Ok(messages.last().map(|m| m.content.clone()).unwrap_or_default()),
    }
}

/// `mlx_arm_model_apply_chat_template`: renders `num` messages (`roles[i]`, `contents[i]`)
/// with the model's chat template.
///
/// # Safety
/// `res` points to a handle; `roles` and `contents` hold `num` NUL-terminated strings.
#[cfg(feature = "std")]
#[no_mangle]
pub unsafe extern "C" fn mlx_arm_model_apply_chat_template(
    res: *mut mlx_string,
    model: mlx_arm_model,
    roles: *const *const c_char,
    contents: *const *const c_char,
    num: usize,
    add_generation_prompt: bool,
) -> c_int {
    status("mlx_arm_model_apply_chat_template", || {
        let m = lookup(model)?;
        let tok = tokenizer(&m)?;
        let roles = arg::slice(roles, num, "roles")?;
        let contents = arg::slice(contents, num, "contents")?;
        let mut messages = Vec::with_capacity(num);
        for (&r, &c) in roles.iter().zip(contents) {
            messages.push(mlx_arm_lm::chat::Message::new(arg::string(r, "role")?, arg::string(c, "content")?));
        }
        if tok.chat_template().is_none() {
            return Err(Error::invalid("mlx_arm_model_apply_chat_template", "the model has no chat template"));
        }
        handle::assign(res, cstring(&render_chat(tok, &messages, add_generation_prompt)?))
    })
}

/// `bool callback(const char* piece, int token, void* user)`: false stops the generation.
pub type mlx_arm_generate_callback = Option<unsafe extern "C" fn(piece: *const c_char, token: c_int, user: *mut c_void) -> bool>;

/// `mlx_arm_generate`: generates a reply to `prompt` (with the model's chat template applied
/// as one user message when `apply_chat_template`; otherwise the text is continued), calling
/// `callback` (may be NULL) with each token and the text it completes. `*res` receives the
/// whole generated text.
///
/// # Safety
/// `res` points to a handle; `prompt` is NULL or NUL-terminated; `cfg` is NULL or valid;
/// `callback` is NULL or a function that does not unwind.
#[no_mangle]
pub unsafe extern "C" fn mlx_arm_generate(
    res: *mut mlx_string,
    model: mlx_arm_model,
    prompt: *const c_char,
    apply_chat_template: bool,
    cfg: *const mlx_arm_generate_config,
    callback: mlx_arm_generate_callback,
    user: *mut c_void,
) -> c_int {
    status("mlx_arm_generate", || {
        if res.is_null() {
            return Err(Error::invalid("mlx_string", "the result mlx_string* is NULL"));
        }
        let m = lookup(model)?;
        let tok = tokenizer(&m)?;
        let prompt = arg::string(prompt, "prompt")?;
        let cfg = config(&m, cfg)?;
        let text = if apply_chat_template { chat_prompt(tok, prompt)? } else { String::from(prompt) };
        let ids = tok.encode_prompt(&text)?;
        let mut decoder = tok.stream_decoder(false);
        let mut out = String::new();
        let mut err = None;
        let mut send = |piece: &str, id: c_int| -> bool {
            out.push_str(piece);
            match callback {
                Some(f) => {
                    let c = cstring(piece);
                    f(c.as_ptr(), id, user)
                }
                None => true,
            }
        };
        run(&m, &ids, &cfg, &mut |id| match decoder.push(id) {
            Ok(piece) => send(&piece, id as c_int),
            Err(e) => {
                err = Some(e);
                false
            }
        })?;
        if let Some(e) = err {
            return Err(e);
        }
        let rest = decoder.finish();
        if !rest.is_empty() {
            send(&rest, -1);
        }
        handle::assign(res, cstring(&out))
    })
}

#[cfg(feature = "std")]
fn chat_prompt(tok: &Tokenizer, prompt: &str) -> Result<String> {
    render_chat(tok, &[mlx_arm_lm::chat::Message::new("user", prompt)], true)
}
#[cfg(not(feature = "std"))]
fn chat_prompt(_tok: &Tokenizer, _prompt: &str) -> Result<String> {
    Err(Error::unsupported("mlx_arm_generate", "chat templates need the hosted (std) build; pass apply_chat_template = false"))
}
