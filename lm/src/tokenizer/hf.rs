//! [`Tokenizer::from_hf_json`]: a Hugging Face `tokenizer.json` (model `BPE`) plus the
//! optional `tokenizer_config.json`.

use alloc::string::{String, ToString};
use alloc::vec::Vec;

use mlx_arm_core::io::json::{parse, Json};

use super::bpe::{Merges, Vocab};
use super::gguf::MAX_TOKENS;
use super::pretok::Stage;
use super::{end_of_generation, parse_byte_token, Model, Prefix, Strip, SpecialMatcher, TokenKind, Tokenizer, BYTE_LEVEL, OP};
use crate::{Error, Result};

/// The Split regexes of the model families supported (as their tokenizer.json files spell them).
const GPT2_PATTERN: &str = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+";
const LLAMA3_PATTERN: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
const QWEN2_PATTERN: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

fn bad(msg: impl Into<String>) -> Error {
    Error::format(OP, msg)
}
fn unsupported(msg: impl Into<String>) -> Error {
    Error::unsupported(OP, msg)
}

fn field<'a>(j: &'a Json, key: &str) -> Option<&'a Json> {
    match j {
        Json::Object(f) => f.iter().find(|(k, _)| k == key).map(|(_, v)| v),
        _ => None,
    }
}
fn non_null<'a>(j: &'a Json, key: &str) -> Option<&'a Json> {
    field(j, key).filter(|v| **v != Json::Null)
}
fn str_field<'a>(j: &'a Json, key: &str) -> Option<&'a str> {
    match field(j, key) {
        Some(Json::Str(s)) => Some(s),
        _ => None,
    }
}
fn bool_field(j: &Json, key: &str) -> Option<bool> {
    match field(j, key) {
        Some(Json::Bool(b)) => Some(*b),
        _ => None,
    }
}
fn type_of(j: &Json) -> &str {
    str_field(j, "type").unwrap_or("")
}
/// A token named in tokenizer_config.json: a string or an `AddedToken` object.
fn token_name(j: Option<&Json>) -> Option<&str> {
    match j? {
        Json::Str(s) => Some(s),
        o @ Json::Object(_) => str_field(o, "content"),
        _ => None,
    }
}

/// What the pipeline sections of tokenizer.json say, gathered before building.
#[derive(Default)]
struct Pipeline {
    byte_level: bool,
    byte_level_prefix_space: bool,
    stages: Vec<Stage>,
    prepend_metaspace: bool,
    replace_space: bool,
    metaspace: Option<(Prefix, bool)>,
}

impl Pipeline {
    fn normalizer(&mut self, n: &Json) -> Result<()> {
        match type_of(n) {
            "Sequence" => {
                let Some(Json::Array(list)) = field(n, "normalizers") else {
                    return Err(bad("a Sequence normalizer has no normalizers list"));
                };
                for x in list {
                    self.normalizer(x)?;
                }
            }
            "Prepend" if str_field(n, "prepend") == Some("\u{2581}") => self.prepend_metaspace = true,
            "Replace"
                if field(n, "pattern").and_then(|p| str_field(p, "String")) == Some(" ")
                    && str_field(n, "content") == Some("\u{2581}") =>
            {
                self.replace_space = true
            }
            // Qwen2 files ask for NFC; text that is already NFC (nearly all text) is unchanged
            // by it, and this crate does not carry the composition tables (docs/TOKENIZERS.md).
            "NFC" => {}
            t => return Err(unsupported(alloc::format!("normalizer {t:?}"))),
        }
        Ok(())
    }

    fn pre_tokenizer(&mut self, p: &Json) -> Result<()> {
        match type_of(p) {
            "Sequence" => {
                let Some(Json::Array(list)) = field(p, "pretokenizers") else {
                    return Err(bad("a Sequence pre-tokenizer has no pretokenizers list"));
                };
                for x in list {
                    self.pre_tokenizer(x)?;
                }
            }
            "ByteLevel" => {
                self.byte_level = true;
                self.byte_level_prefix_space = bool_field(p, "add_prefix_space").unwrap_or(false);
                if bool_field(p, "use_regex").unwrap_or(true) {
                    self.stages.push(Stage::Gpt2);
                }
            }
            "Digits" => {
                self.stages.push(if bool_field(p, "individual_digits").unwrap_or(false) {
                    Stage::EachDigit
                } else {
                    Stage::NumberRun
                })
            }
            "Split" => {
                let pat = field(p, "pattern").and_then(|x| str_field(x, "Regex").or_else(|| str_field(x, "String")));
                let behavior = str_field(p, "behavior").unwrap_or("");
                if behavior != "Isolated" || bool_field(p, "invert").unwrap_or(false) {
                    return Err(unsupported(alloc::format!("Split pre-tokenizer with behavior {behavior:?}/invert")));
                }
                self.stages.push(match pat {
                    Some(GPT2_PATTERN) => Stage::Gpt2,
                    Some(LLAMA3_PATTERN) => Stage::Llama3 { digits: 3 },
                    Some(QWEN2_PATTERN) => Stage::Llama3 { digits: 1 },
                    other => return Err(unsupported(alloc::format!("Split pre-tokenizer pattern {other:?}"))),
                });
            }
            "Metaspace" => {
                if str_field(p, "replacement").is_some_and(|r| r != "\u{2581}") {
                    return Err(unsupported("Metaspace with a replacement other than U+2581"));
                }
                let prefix = match (str_field(p, "prepend_scheme"), bool_field(p, "add_prefix_space")) {
                    (Some("first"), _) => Prefix::First,
                    (Some("never"), _) | (None, Some(false)) => Prefix::Never,
                    (Some("always"), _) | (None, _) => Prefix::AfterSpecial,
                    (Some(s), _) => return Err(unsupported(alloc::format!("Metaspace prepend_scheme {s:?}"))),
                };
                self.metaspace = Some((prefix, bool_field(p, "split").unwrap_or(true)));
            }
            t => return Err(unsupported(alloc::format!("pre-tokenizer {t:?}"))),
        }
        Ok(())
    }
}

/// The token a TemplateProcessing post-processor puts first, if any (the BOS it adds).
fn post_processor_bos(p: &Json) -> Option<u32> {
    match type_of(p) {
        "Sequence" => match field(p, "processors") {
            Some(Json::Array(list)) => list.iter().find_map(post_processor_bos),
            _ => None,
        },
        "TemplateProcessing" => {
            let Some(Json::Array(single)) = field(p, "single") else { return None };
            let name = field(single.first()?, "SpecialToken").and_then(|s| str_field(s, "id"))?;
            match field(field(field(p, "special_tokens")?, name)?, "ids") {
                Some(Json::Array(ids)) => match ids.first() {
                    Some(Json::UInt(v)) => u32::try_from(*v).ok(),
                    _ => None,
                },
                _ => None,
            }
        }
        _ => None,
    }
}

impl Tokenizer {
    /// Reads a Hugging Face `tokenizer.json` (a `BPE` model: byte-level as GPT-2, Llama 3,
    /// Qwen2 and SmolLM ship it, or metaspace with byte fallback as Llama 2, TinyLlama and
    /// Mistral do) and, when given, `tokenizer_config.json` for BOS/EOS and the chat template.
    pub fn from_hf_json(tokenizer_json: &[u8], tokenizer_config_json: Option<&[u8]>) -> Result<Tokenizer> {
        let root = parse(OP, tokenizer_json)?;
        let config = tokenizer_config_json.map(|c| parse(OP, c)).transpose()?;
        let model = field(&root, "model").ok_or_else(|| bad("tokenizer.json has no model"))?;
        match str_field(model, "type") {
            Some("BPE") | None if field(model, "merges").is_some() => {}
            t => return Err(unsupported(alloc::format!("tokenizer model {t:?} (only BPE is supported)"))),
        }
        for key in ["continuing_subword_prefix", "end_of_word_suffix"] {
            if str_field(model, key).is_some_and(|s| !s.is_empty()) {
                return Err(unsupported(alloc::format!("BPE {key}")));
            }
        }
        if non_null(model, "dropout").is_some() {
            return Err(unsupported("BPE dropout (a training-time option)"));
        }

        // Token texts by id: the model's vocabulary, then the added tokens.
        let Some(Json::Object(vocab_entries)) = field(model, "vocab") else {
            return Err(bad("the BPE model has no vocab object"));
        };
        let added: &[Json] = match field(&root, "added_tokens") {
            Some(Json::Array(a)) => a,
            None | Some(Json::Null) => &[],
            Some(_) => return Err(bad("added_tokens is not an array")),
        };
        let id_of = |v: &Json, what: &str| -> Result<usize> {
            match v {
                Json::UInt(i) if (*i as usize) < MAX_TOKENS && *i <= u32::MAX as u64 => Ok(*i as usize),
                _ => Err(bad(alloc::format!("{what} has an invalid id"))),
            }
        };
        let mut entries: Vec<(usize, &str, Option<bool>)> = Vec::with_capacity(vocab_entries.len() + added.len());
        for (text, id) in vocab_entries {
            entries.push((id_of(id, "a vocab entry")?, text, None));
        }
        for a in added {
            let id = id_of(field(a, "id").unwrap_or(&Json::Null), "an added token")?;
            let content = str_field(a, "content").ok_or_else(|| bad("an added token has no content"))?;
            entries.push((id, content, Some(bool_field(a, "special").unwrap_or(false))));
        }
        let n = entries.iter().map(|e| e.0 + 1).max().unwrap_or(0);
        // Ids are dense in real files; refuse a sparse one that would allocate far more slots
        // than it has entries.
        if n == 0 || n > 2 * entries.len() + 1024 {
            return Err(bad(alloc::format!("the vocabulary's ids run to {n} for {} entries", entries.len())));
        }
        let mut texts = alloc::vec![String::new(); n];
        let mut kinds = alloc::vec![TokenKind::Unused; n];
        let byte_fallback = bool_field(model, "byte_fallback").unwrap_or(false);
        for &(id, text, special) in &entries {
            texts[id] = text.to_string();
            kinds[id] = match special {
                Some(true) => TokenKind::Control,
                Some(false) => TokenKind::UserDefined,
                None if byte_fallback && parse_byte_token(text).is_some() => TokenKind::Byte,
                None => TokenKind::Normal,
            };
        }
        let vocab = Vocab::new(texts).ok_or_else(|| bad("the vocabulary's texts hold 4 GiB or more"))?;
        let unk = match str_field(model, "unk_token") {
            Some(u) => Some(vocab.id(u).ok_or_else(|| bad(alloc::format!("unk_token {u:?} is not in the vocabulary")))?),
            None => None,
        };
        if let Some(u) = unk {
            if kinds[u as usize] == TokenKind::Normal {
                kinds[u as usize] = TokenKind::Unknown;
            }
        }

        let merges = match field(model, "merges") {
            Some(Json::Array(list)) => {
                let mut rules = Vec::with_capacity(list.len());
                let mut joined = String::new();
                for (i, m) in list.iter().enumerate() {
                    // Two spellings: "left right" (older files) or ["left", "right"].
                    let (l, r) = match m {
                        Json::Str(s) => match s.split_once(' ') {
                            Some(p) => p,
                            None => return Err(bad(alloc::format!("merge {i} ({s:?}) is not two tokens"))),
                        },
                        Json::Array(p) => match p.as_slice() {
                            [Json::Str(a), Json::Str(b)] => (a.as_str(), b.as_str()),
                            _ => return Err(bad(alloc::format!("merge {i} is not a pair of strings"))),
                        },
                        _ => return Err(bad(alloc::format!("merge {i} is not a string or pair"))),
                    };
                    joined.clear();
                    joined.push_str(l);
                    joined.push_str(r);
                    let look = |t: &str| {
                        vocab.id(t).ok_or_else(|| bad(alloc::format!("merge {i} names {t:?}, which is not in the vocabulary")))
                    };
                    rules.push((look(l)?, look(r)?, look(&joined)?));
                }
                Merges::new(rules)
            }
            _ => return Err(bad("the BPE model's merges is not an array")),
        };

        let mut pipe = Pipeline::default();
        if let Some(nrm) = non_null(&root, "normalizer") {
            pipe.normalizer(nrm)?;
        }
        if let Some(p) = non_null(&root, "pre_tokenizer") {
            pipe.pre_tokenizer(p)?;
        }
        let decoder = non_null(&root, "decoder");
        if decoder.is_some_and(|d| type_of(d) == "ByteLevel") {
            pipe.byte_level = true;
        }
        let model_kind = if pipe.byte_level { Model::ByteLevel } else { Model::MetaspaceBpe };
        let (prefix, metaspace_split) = match (pipe.metaspace, pipe.prepend_metaspace) {
            (Some(m), _) => m,
            (None, true) => (Prefix::Always, false),
            (None, false) => (Prefix::Never, false),
        };
        if model_kind == Model::MetaspaceBpe && pipe.metaspace.is_none() && !pipe.replace_space && pipe.stages.is_empty() {
            // Plain BPE over raw text with no way to mark spaces is not a layout we know.
            if !byte_fallback {
                return Err(unsupported("a BPE tokenizer that is neither byte-level nor metaspace"));
            }
        }
        if model_kind == Model::MetaspaceBpe && !pipe.stages.is_empty() {
            return Err(unsupported("split pre-tokenizers on a metaspace (non byte-level) BPE"));
        }
        let strip = decoder.map(decoder_strips).unwrap_or(Strip::Never);

        let mut byte_ids = [None; 256];
        for (b, slot) in byte_ids.iter_mut().enumerate() {
            *slot = if model_kind == Model::ByteLevel {
                let mut buf = [0u8; 4];
                vocab.id(BYTE_LEVEL.char_of(b as u8).encode_utf8(&mut buf))
            } else {
                vocab.id(&alloc::format!("<0x{b:02X}>"))
            };
        }

        // BOS/EOS: the post-processor's leading token is the BOS `encode` adds; the config
        // names BOS/EOS and may ask for BOS itself.
        let post_bos = non_null(&root, "post_processor").and_then(post_processor_bos).filter(|&b| (b as usize) < n);
        let cfg = config.as_ref();
        let named = |key: &str| cfg.and_then(|c| token_name(field(c, key))).and_then(|t| vocab.id(t));
        let bos = post_bos.or_else(|| named("bos_token"));
        let eos = named("eos_token");
        let add_bos = post_bos.is_some() || cfg.and_then(|c| bool_field(c, "add_bos_token")).unwrap_or(false);
        let chat_template = cfg.and_then(|c| match field(c, "chat_template") {
            Some(Json::Str(s)) => Some(s.clone()),
            // A list of named templates: take "default", else the first.
            Some(Json::Array(list)) => list
                .iter()
                .find(|t| str_field(t, "name") == Some("default"))
                .or(list.first())
                .and_then(|t| str_field(t, "template"))
                .map(String::from),
            _ => None,
        });

        let eog = end_of_generation(&vocab, &kinds, &[eos]);
        let always_match =
            SpecialMatcher::new(&vocab, (0..n as u32).filter(|&i| kinds[i as usize] == TokenKind::UserDefined));
        let special_match = SpecialMatcher::new(
            &vocab,
            (0..n as u32).filter(|&i| matches!(kinds[i as usize], TokenKind::UserDefined | TokenKind::Control)),
        );
        Ok(Tokenizer {
            model: model_kind,
            vocab,
            kinds,
            scores: Vec::new(),
            merges,
            byte_ids,
            stages: pipe.stages,
            byte_level_prefix_space: pipe.byte_level_prefix_space,
            prefix,
            metaspace_split,
            ignore_merges: bool_field(model, "ignore_merges").unwrap_or(false),
            byte_fallback,
            fuse_unk: bool_field(model, "fuse_unk").unwrap_or(false),
            unk,
            bos,
            eos,
            eog,
            add_bos,
            strip,
            always_match,
            special_match,
            chat_template,
        })
    }
}

/// How the decoder removes the space the encoder's `▁` prefix became: a `Strip` of one
/// leading space, or a `Metaspace` decoder that prepends (and then drops every `▁` of the
/// first token).
fn decoder_strips(d: &Json) -> Strip {
    match type_of(d) {
        "Sequence" => match field(d, "decoders") {
            Some(Json::Array(list)) => list.iter().map(decoder_strips).find(|&s| s != Strip::Never).unwrap_or(Strip::Never),
            _ => Strip::Never,
        },
        "Strip" if matches!(field(d, "start"), Some(Json::UInt(s)) if *s >= 1) => Strip::LeadingSpace,
        "Metaspace" => {
            let prepends = match (str_field(d, "prepend_scheme"), bool_field(d, "add_prefix_space")) {
                (Some(s), _) => s != "never",
                (None, a) => a.unwrap_or(true),
            };
            if prepends {
                Strip::FirstTokenMetaspace
            } else {
                Strip::Never
            }
        }
        _ => Strip::Never,
    }
}
