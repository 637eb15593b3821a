//! [`Tokenizer::from_gguf`]: the `tokenizer.ggml.*` metadata llama.cpp writes.

use alloc::string::String;
use alloc::vec::Vec;

use mlx_arm_core::io::gguf::{Array, Value};

use super::bpe::{Merges, Vocab};
use super::pretok::Stage;
use super::{end_of_generation, Model, Prefix, SpecialMatcher, TokenKind, Tokenizer, BYTE_LEVEL, OP};
use crate::{Error, Result};

/// Vocabularies beyond this many tokens are refused (real ones stay under a million).
pub(crate) const MAX_TOKENS: usize = 1 << 24;

fn bad(msg: impl Into<String>) -> Error {
    Error::format(OP, msg)
}

/// The split stages llama.cpp uses for a `tokenizer.ggml.pre` name (the families this crate
/// supports; see docs/TOKENIZERS.md).
pub(crate) fn stages_for_pre(pre: &str) -> Option<Vec<Stage>> {
    use Stage::*;
    Some(match pre {
        "default" => alloc::vec![PunctRun, Gpt2, NumberRun, Ascii3Digits],
        "gpt-2" | "gpt2" | "phi-2" | "mpt" | "olmo" | "jais" | "roberta-bpe" => alloc::vec![Gpt2],
        "llama3" | "llama-v3" | "llama-bpe" | "falcon3" | "pixtral" | "dbrx" | "smaug-bpe" => {
            alloc::vec![Llama3 { digits: 3 }]
        }
        "qwen2" | "deepseek-r1-qwen" | "stablelm2" => alloc::vec![Llama3 { digits: 1 }],
        "smollm" | "starcoder" | "refact" | "command-r" | "codeshell" => alloc::vec![EachDigit, Gpt2],
        _ => return None,
    })
}

/// The metadata key of the vocabulary's token strings.
const VOCAB_KEY: &str = "tokenizer.ggml.tokens";

/// Why the vocabulary could not be read: the key is there with another type, or missing.
fn vocab_error(present: bool) -> Error {
    if present {
        bad("tokenizer.ggml.tokens is not an array of strings")
    } else {
        bad("the GGUF file has no tokenizer.ggml.tokens")
    }
}

impl Tokenizer {
    /// Reads a tokenizer from GGUF metadata (`tokenizer.ggml.model` `gpt2` or `llama`).
    pub fn from_gguf(metadata: &[(String, Value)]) -> Result<Tokenizer> {
        let tokens = match metadata.iter().find(|(k, _)| k == VOCAB_KEY) {
            Some((_, Value::Array(Array::String(t)))) => t.clone(),
            other => return Err(vocab_error(other.is_some())),
        };
        Self::from_gguf_parts(metadata, tokens)
    }

    /// [`Tokenizer::from_gguf`] consuming the metadata: the vocabulary's strings move into the
    /// tokenizer instead of being copied (a few MiB for a 50k-token vocabulary, which a caller
    /// that keeps no metadata need not hold twice).
    pub fn from_gguf_owned(mut metadata: Vec<(String, Value)>) -> Result<Tokenizer> {
        let tokens = match metadata.iter_mut().find(|(k, _)| k == VOCAB_KEY) {
            Some((_, Value::Array(Array::String(t)))) => core::mem::take(t),
            other => return Err(vocab_error(other.is_some())),
        };
        Self::from_gguf_parts(&metadata, tokens)
    }

    /// The tokenizer of `metadata` whose `tokenizer.ggml.tokens` are `tokens`.
    fn from_gguf_parts(metadata: &[(String, Value)], tokens: Vec<String>) -> Result<Tokenizer> {
        let get = |key: &str| metadata.iter().find(|(k, _)| k == key).map(|(_, v)| v);
        let get_str = |key: &str| -> Result<Option<&str>> {
            match get(key) {
                None => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.as_str())),
                Some(_) => Err(bad(alloc::format!("{key} is not a string"))),
            }
        };
        let get_id = |key: &str| -> Result<Option<u32>> {
            match get(key).map(int_of) {
                None => Ok(None),
                Some(Some(v)) if v >= 0 && v < u32::MAX as i64 => Ok(Some(v as u32)),
                // llama.cpp writes -1 (as a wrapped u32 or i32) for "no such token".
                Some(Some(-1)) | Some(Some(0xFFFF_FFFF)) => Ok(None),
                Some(_) => Err(bad(alloc::format!("{key} is not a token id"))),
            }
        };
        let get_bool = |key: &str| -> Result<Option<bool>> {
            match get(key) {
                None => Ok(None),
                Some(Value::Bool(b)) => Ok(Some(*b)),
                Some(_) => Err(bad(alloc::format!("{key} is not a boolean"))),
            }
        };

        let model_name = get_str("tokenizer.ggml.model")?.ok_or_else(|| bad("the GGUF file has no tokenizer.ggml.model"))?;
        let model = match model_name {
            "gpt2" => Model::ByteLevel,
            "llama" => Model::SentencePiece,
            other => {
                return Err(Error::unsupported(
                    OP,
                    alloc::format!("tokenizer.ggml.model {other:?} (supported: gpt2, llama)"),
                ))
            }
        };
        let n = tokens.len();
        if n == 0 || n > MAX_TOKENS {
            return Err(bad(alloc::format!("tokenizer.ggml.tokens has {n} tokens")));
        }
        let kinds: Vec<TokenKind> = match get("tokenizer.ggml.token_type") {
            None => alloc::vec![TokenKind::Normal; n],
            Some(Value::Array(a)) => {
                let t = int_array(a).ok_or_else(|| bad("tokenizer.ggml.token_type is not an integer array"))?;
                if t.len() != n {
                    return Err(bad(alloc::format!("tokenizer.ggml.token_type has {} entries for {n} tokens", t.len())));
                }
                t.iter()
                    .map(|&v| match v {
                        // 0 is llama.cpp's "undefined", treated as normal like llama.cpp does.
                        0 | 1 => Ok(TokenKind::Normal),
                        2 => Ok(TokenKind::Unknown),
                        3 => Ok(TokenKind::Control),
                        4 => Ok(TokenKind::UserDefined),
                        5 => Ok(TokenKind::Unused),
                        6 => Ok(TokenKind::Byte),
                        _ => Err(bad(alloc::format!("tokenizer.ggml.token_type has unknown type {v}"))),
                    })
                    .collect::<Result<_>>()?
            }
            Some(_) => return Err(bad("tokenizer.ggml.token_type is not an array")),
        };
        let scores: Vec<f32> = match get("tokenizer.ggml.scores") {
            None => Vec::new(),
            Some(Value::Array(Array::F32(s))) if s.len() == n => s.clone(),
            Some(_) => return Err(bad(alloc::format!("tokenizer.ggml.scores is not an array of {n} f32"))),
        };
        let vocab = Vocab::new(tokens).ok_or_else(|| bad("the vocabulary's texts hold 4 GiB or more"))?;

        let mut byte_ids = [None; 256];
        let mut stages = Vec::new();
        let mut merges = Merges::new(Vec::new());
        let mut ignore_merges = false;
        match model {
            Model::ByteLevel => {
                for (b, slot) in byte_ids.iter_mut().enumerate() {
                    let mut buf = [0u8; 4];
                    *slot = vocab.id(BYTE_LEVEL.char_of(b as u8).encode_utf8(&mut buf));
                }
                let pre = get_str("tokenizer.ggml.pre")?.unwrap_or("default");
                stages = super::gguf::stages_for_pre(pre).ok_or_else(|| {
                    Error::unsupported(OP, alloc::format!("pre-tokenizer {pre:?} (see docs/TOKENIZERS.md for the supported names)"))
                })?;
                ignore_merges = stages == [Stage::Llama3 { digits: 3 }];
                let lines = match get("tokenizer.ggml.merges") {
                    Some(Value::Array(Array::String(m))) => m,
                    Some(_) => return Err(bad("tokenizer.ggml.merges is not an array of strings")),
                    None => return Err(bad("a gpt2 tokenizer needs tokenizer.ggml.merges")),
                };
                let mut rules = Vec::with_capacity(lines.len());
                let mut joined = String::new();
                for (i, line) in lines.iter().enumerate() {
                    // "left right"; the left part is never empty, so search from byte 1.
                    let sp = line.as_bytes().iter().skip(1).position(|&b| b == b' ').map(|p| p + 1);
                    let Some(sp) = sp else {
                        return Err(bad(alloc::format!("merge {i} ({line:?}) is not two tokens separated by a space")));
                    };
                    let (l, r) = (&line[..sp], &line[sp + 1..]);
                    joined.clear();
                    joined.push_str(l);
                    joined.push_str(r);
                    // A rule naming tokens the vocabulary lacks can never apply; skip it.
                    if let (Some(a), Some(b), Some(m)) = (vocab.id(l), vocab.id(r), vocab.id(&joined)) {
                        rules.push((a, b, m));
                    }
                }
                merges = Merges::new(rules);
            }
            _ => {
                for (b, slot) in byte_ids.iter_mut().enumerate() {
                    // `<0xXX>`, else (as llama.cpp falls back) the byte itself as a token.
                    *slot = vocab.id(&alloc::format!("<0x{b:02X}>")).or_else(|| {
                        if b < 0x80 {
                            let s = [b as u8];
                            core::str::from_utf8(&s).ok().and_then(|s| vocab.id(s))
                        } else {
                            None
                        }
                    });
                }
            }
        }

        let check = |id: Option<u32>, what: &str| -> Result<Option<u32>> {
            match id {
                Some(i) if i as usize >= n => Err(bad(alloc::format!("{what} {i} is out of range for {n} tokens"))),
                x => Ok(x),
            }
        };
        let bos = check(get_id("tokenizer.ggml.bos_token_id")?, "bos_token_id")?;
        let eos = check(get_id("tokenizer.ggml.eos_token_id")?, "eos_token_id")?;
        let eot = check(get_id("tokenizer.ggml.eot_token_id")?, "eot_token_id")?;
        let eom = check(get_id("tokenizer.ggml.eom_token_id")?, "eom_token_id")?;
        let unk = check(get_id("tokenizer.ggml.unknown_token_id")?, "unknown_token_id")?
            .or_else(|| kinds.iter().position(|&k| k == TokenKind::Unknown).map(|i| i as u32));
        // llama.cpp's defaults: SentencePiece vocabularies add BOS and a space prefix.
        let spm = model == Model::SentencePiece;
        let add_bos = get_bool("tokenizer.ggml.add_bos_token")?.unwrap_or(spm);
        let add_space_prefix = get_bool("tokenizer.ggml.add_space_prefix")?.unwrap_or(spm);
        let chat_template = get_str("tokenizer.chat_template")?.map(String::from);

        let eog = end_of_generation(&vocab, &kinds, &[eos, eot, eom]);
        let always_match =
            SpecialMatcher::new(&vocab, (0..n as u32).filter(|&i| kinds[i as usize] == TokenKind::UserDefined));
        let special_match = SpecialMatcher::new(
            &vocab,
            (0..n as u32).filter(|&i| {
                matches!(kinds[i as usize], TokenKind::UserDefined | TokenKind::Control | TokenKind::Unknown)
            }),
        );
        Ok(Tokenizer {
            model,
            vocab,
            kinds,
            scores,
            merges,
            byte_ids,
            stages,
            byte_level_prefix_space: false,
            prefix: if spm && add_space_prefix { Prefix::AfterSpecial } else { Prefix::Never },
            metaspace_split: false,
            ignore_merges,
            byte_fallback: spm,
            fuse_unk: false,
            unk,
            bos,
            eos,
            eog,
            add_bos,
            strip: if spm && add_space_prefix { super::Strip::LeadingSpace } else { super::Strip::Never },
            always_match,
            special_match,
            chat_template,
        })
    }
}

fn int_of(v: &Value) -> Option<i64> {
    Some(match *v {
        Value::U8(x) => x as i64,
        Value::I8(x) => x as i64,
        Value::U16(x) => x as i64,
        Value::I16(x) => x as i64,
        Value::U32(x) => x as i64,
        Value::I32(x) => x as i64,
        Value::U64(x) => i64::try_from(x).ok()?,
        Value::I64(x) => x,
        _ => return None,
    })
}

fn int_array(a: &Array) -> Option<Vec<i64>> {
    Some(match a {
        Array::U8(v) => v.iter().map(|&x| x as i64).collect(),
        Array::I8(v) => v.iter().map(|&x| x as i64).collect(),
        Array::U16(v) => v.iter().map(|&x| x as i64).collect(),
        Array::I16(v) => v.iter().map(|&x| x as i64).collect(),
        Array::U32(v) => v.iter().map(|&x| x as i64).collect(),
        Array::I32(v) => v.iter().map(|&x| x as i64).collect(),
        Array::I64(v) => v.clone(),
        Array::U64(v) => v.iter().map(|&x| x.min(i64::MAX as u64) as i64).collect(),
        _ => return None,
    })
}
