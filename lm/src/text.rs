//! Generation with text in and out: the tokenizer turns the prompt into ids, the ids
//! generated are decoded as they come (only whole UTF-8 characters are passed on), and stop
//! strings end generation with the text before them. Text that might be the start of a stop
//! string is held back until it is known not to be one, so a stop string never reaches the
//! caller.

use alloc::string::String;
use alloc::vec::Vec;

use mlx_arm_core::Result;

use crate::generate::{generate, GenerateConfig, Stats, StopReason};
use crate::kv_cache::KvCache;
use crate::model::Model;
use crate::tokenizer::Tokenizer;

/// What a text generation produced.
#[derive(Clone, Debug)]
pub struct TextOutput {
    /// The generated text (up to, not including, a stop string).
    pub text: String,
    /// The generated ids.
    pub ids: Vec<u32>,
    /// Why it ended.
    pub reason: StopReason,
    /// Timing figures.
    pub stats: Stats,
}

/// Generates from already-tokenized `prompt`; `on_text` receives the text as it is
/// produced and returns false to stop. The tokenizer's end-of-generation ids are added to
/// `cfg.stop_ids`.
#[allow(clippy::too_many_arguments)]
pub fn generate_text(
    model: &Model,
    tokenizer: &Tokenizer,
    cache: &mut KvCache,
    prompt: &[u32],
    cfg: &GenerateConfig,
    stop_strings: &[String],
    now: &dyn Fn() -> f64,
    on_text: &mut dyn FnMut(&str) -> bool,
) -> Result<TextOutput> {
    let mut cfg = cfg.clone();
    for &id in tokenizer.eos_ids() {
        if !cfg.stop_ids.contains(&id) {
            cfg.stop_ids.push(id);
        }
    }
    let stops: Vec<&str> = stop_strings.iter().map(|s| s.as_str()).filter(|s| !s.is_empty()).collect();
    let mut decoder = tokenizer.stream_decoder(false);
    let mut text = String::new();
    // Bytes of `text` already handed to the caller.
    let mut shown = 0usize;
    let mut stopped_by_string = false;
    let mut err = None;
    let (ids, reason, stats) = generate(model, cache, prompt, &cfg, now, &mut |id| {
        match decoder.push(id) {
            Ok(piece) => text.push_str(&piece),
            Err(e) => {
                err = Some(e);
                return false;
            }
        }
        if let Some(at) = first_stop(&text, &stops) {
            text.truncate(at);
            stopped_by_string = true;
        }
        let safe = if stopped_by_string { text.len() } else { safe_prefix(&text, &stops) };
        if safe > shown {
            let keep_going = on_text(&text[shown..safe]);
            shown = safe;
            if !keep_going {
                return false;
            }
        }
        !stopped_by_string
    })?;
    if let Some(e) = err {
        return Err(e);
    }
    if !stopped_by_string {
        text.push_str(&decoder.finish());
        if text.len() > shown {
            on_text(&text[shown..]);
        }
    }
    let reason = if stopped_by_string { StopReason::Stop } else { reason };
    Ok(TextOutput { text, ids, reason, stats })
}

/// Byte offset of the earliest stop string in `text`.
fn first_stop(text: &str, stops: &[&str]) -> Option<usize> {
    stops.iter().filter_map(|s| text.find(s)).min()
}

/// How much of `text` can be shown: all but a tail that is a proper prefix of a stop string
/// (on a character boundary).
fn safe_prefix(text: &str, stops: &[&str]) -> usize {
    let mut safe = text.len();
    for s in stops {
        for k in (1..s.len()).rev() {
            if k <= text.len() && text.is_char_boundary(text.len() - k) && s.is_char_boundary(k) && text.ends_with(&s[..k]) {
                safe = safe.min(text.len() - k);
                break;
            }
        }
    }
    safe
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn held_back_tail_is_a_stop_prefix_only() {
        assert_eq!(safe_prefix("hello wor", &["world!"]), 6);
        assert_eq!(safe_prefix("hello", &["xyz"]), 5);
        assert_eq!(safe_prefix("ab<|im", &["<|im_end|>"]), 2);
        assert_eq!(first_stop("a<|im_end|>b", &["<|im_end|>", "b"]), Some(1));
        assert_eq!(safe_prefix("é", &["éa"]), 0);
    }
}
