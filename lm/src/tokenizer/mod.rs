//! Tokenizers: byte-level BPE (GPT-2, Llama 3, Qwen2, SmolLM), SentencePiece BPE with byte
//! fallback (Llama 2, TinyLlama, Mistral), loaded from GGUF metadata ([`Tokenizer::from_gguf`])
//! or a Hugging Face `tokenizer.json` ([`Tokenizer::from_hf_json`]). Encoding matches
//! llama.cpp's `llama_tokenize` for GGUF files and the `tokenizers` library for JSON files,
//! id for id (see `docs/TOKENIZERS.md` and the goldens in `lm/tests/data/tokenizer/`).

mod bpe;
mod gguf;
mod hf;
mod pretok;
mod unicode;

use alloc::string::String;
use alloc::vec::Vec;

use crate::{Error, Result};
use bpe::{Merges, Vocab};
use pretok::Stage;
use unicode::BYTE_LEVEL;

const OP: &str = "tokenizer";
/// The SentencePiece meta-symbol that stands for a space.
const METASPACE: char = '\u{2581}';

/// What a token is, as GGUF's `tokenizer.ggml.token_type` says (Hugging Face added tokens
/// map to `Control` when special, else `UserDefined`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenKind {
    /// An ordinary vocabulary entry.
    Normal,
    /// The unknown token.
    Unknown,
    /// A control token (`<s>`, `<|im_start|>`): matched in text only when parsing specials,
    /// skipped by decoding when asked to skip specials.
    Control,
    /// A user-defined token: always matched as a whole in text, decoded as its text.
    UserDefined,
    /// A placeholder never produced.
    Unused,
    /// A `<0xXX>` byte-fallback token.
    Byte,
}

/// How words become symbols and symbols become text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Model {
    /// GPT-2 byte-level BPE: bytes are mapped to printable characters, merged by rank.
    ByteLevel,
    /// llama.cpp's SentencePiece BPE: characters merged by token score, `<0xXX>` fallback.
    SentencePiece,
    /// Hugging Face BPE over metaspace text, merged by rank, with optional byte fallback.
    MetaspaceBpe,
}

/// Where the SentencePiece-style `▁` goes in front of a piece of text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Prefix {
    /// Never.
    Never,
    /// Before every piece of text that follows a special token or starts the input
    /// (llama.cpp's `add_space_prefix`, HF's `Prepend("▁")` normalizer).
    AfterSpecial,
    /// Only before the piece at offset 0 (HF `Metaspace(prepend_scheme="first")`).
    First,
    /// Before every piece, even one that already starts with a space (HF's `Prepend("▁")`
    /// normalizer, which runs on each piece between added tokens).
    Always,
}

/// How decoding removes the prefix space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Strip {
    /// Keep everything.
    Never,
    /// Drop one leading space of the output (llama.cpp; HF's `Strip(" ", 1, 0)` decoder).
    LeadingSpace,
    /// Drop every `▁` of the first token decoded (HF's `Metaspace` decoder does this).
    FirstTokenMetaspace,
}

/// A loaded tokenizer. Cheap to share by reference; encoding takes `&self`.
pub struct Tokenizer {
    model: Model,
    vocab: Vocab,
    kinds: Vec<TokenKind>,
    /// SentencePiece scores (empty for rank-merged models).
    scores: Vec<f32>,
    merges: Merges,
    /// The token of each byte: the byte-level character's token, or `<0xXX>`.
    byte_ids: [Option<u32>; 256],
    /// Split stages run on each piece of text before BPE (byte-level models).
    stages: Vec<Stage>,
    /// HF `ByteLevel(add_prefix_space=true)`: a space before text that lacks one.
    byte_level_prefix_space: bool,
    prefix: Prefix,
    /// HF `Metaspace(split=true)`: words start at each `▁`.
    metaspace_split: bool,
    /// Emit a word that is itself a token without merging (HF `ignore_merges`, Llama 3).
    ignore_merges: bool,
    /// HF `byte_fallback`.
    byte_fallback: bool,
    /// HF `fuse_unk`.
    fuse_unk: bool,
    unk: Option<u32>,
    bos: Option<u32>,
    eos: Option<u32>,
    eog: Vec<u32>,
    add_bos: bool,
    /// How decoding removes the space the encoder's `▁` prefix stands for.
    strip: Strip,
    /// Tokens matched whole in the text: always (user-defined) and when parsing specials.
    always_match: SpecialMatcher,
    special_match: SpecialMatcher,
    chat_template: Option<String>,
}

/// Options of [`Tokenizer::encode_with`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EncodeOptions {
    /// Put the BOS token first when the tokenizer's file asks for it.
    pub add_bos: bool,
    /// Match control tokens written in the text (`<|im_start|>`) as single tokens.
    pub parse_special: bool,
}

impl Tokenizer {
    /// Encodes `text`. With `add_special`, a BOS is added if the file asks for one and special
    /// tokens written in the text are matched as single tokens (llama.cpp's
    /// `llama_tokenize(..., add_special, parse_special = add_special)`).
    pub fn encode(&self, text: &str, add_special: bool) -> Result<Vec<u32>> {
        self.encode_with(text, EncodeOptions { add_bos: add_special, parse_special: add_special })
    }

    /// Encodes a prompt with special tokens parsed and BOS added unless the text already starts
    /// with the BOS token's text — mlx-lm's rule, for chat templates that write `bos_token`
    /// themselves (Gemma's), which would otherwise give two BOS tokens.
    pub fn encode_prompt(&self, text: &str) -> Result<Vec<u32>> {
        let starts_with_bos = match self.bos {
            Some(b) => self.token_text(b).is_ok_and(|t| !t.is_empty() && text.starts_with(t)),
            None => false,
        };
        self.encode_with(text, EncodeOptions { add_bos: !starts_with_bos, parse_special: true })
    }

    /// Encodes `text` with BOS and special-token parsing chosen separately.
    pub fn encode_with(&self, text: &str, opts: EncodeOptions) -> Result<Vec<u32>> {
        let mut out = Vec::with_capacity(text.len() / 3 + 2);
        if opts.add_bos && self.add_bos {
            if let Some(b) = self.bos {
                out.push(b);
            }
        }
        let matcher = if opts.parse_special { &self.special_match } else { &self.always_match };
        let mut after_special = true;
        let mut start = 0;
        let mut i = 0;
        let bytes = text.as_bytes();
        while i < bytes.len() {
            if let Some((id, len)) = matcher.longest_at(&self.vocab, text, i) {
                if start < i {
                    self.encode_piece(&text[start..i], start, after_special, &mut out)?;
                }
                out.push(id);
                after_special = true;
                i += len;
                start = i;
            } else {
                i += 1;
                while i < bytes.len() && !text.is_char_boundary(i) {
                    i += 1;
                }
            }
        }
        if start < bytes.len() {
            self.encode_piece(&text[start..], start, after_special, &mut out)?;
        }
        Ok(out)
    }

    /// Encodes a piece of plain text (no special tokens in it) starting at byte `offset`.
    fn encode_piece(&self, piece: &str, offset: usize, after_special: bool, out: &mut Vec<u32>) -> Result<()> {
        match self.model {
            Model::ByteLevel => {
                let owned;
                let piece = if self.byte_level_prefix_space && !piece.starts_with(' ') {
                    owned = alloc::format!(" {piece}");
                    owned.as_str()
                } else {
                    piece
                };
                let mut syms = Vec::new();
                let mut word = String::new();
                for (s, e) in pretok::split(&self.stages, piece) {
                    let w = &piece.as_bytes()[s..e];
                    if self.ignore_merges {
                        word.clear();
                        word.extend(w.iter().map(|&b| BYTE_LEVEL.char_of(b)));
                        if let Some(id) = self.vocab.id(&word) {
                            out.push(id);
                            continue;
                        }
                    }
                    syms.clear();
                    // A byte whose character the vocabulary lacks becomes `unk`, or is dropped
                    // when there is none (what the `tokenizers` library does).
                    syms.extend(w.iter().filter_map(|&b| self.byte_ids[b as usize].or(self.unk)));
                    bpe::merge_by_rank(&self.merges, &syms, out);
                }
                Ok(())
            }
            Model::SentencePiece => {
                let mut t = String::with_capacity(piece.len() + 3);
                if self.prefix == Prefix::AfterSpecial && after_special {
                    t.push(METASPACE);
                }
                t.extend(piece.chars().map(|c| if c == ' ' { METASPACE } else { c }));
                bpe::merge_by_score(&self.vocab, &self.scores, &self.byte_ids, self.unk, &t, out).map_err(|b| {
                    Error::format(OP, alloc::format!("byte 0x{b:02X} has no <0x{b:02X}> token and there is no unknown token"))
                })
            }
            Model::MetaspaceBpe => {
                let mut t = String::with_capacity(piece.len() + 3);
                // Metaspace's prefix is not doubled on text that starts with a space.
                let prefix = match self.prefix {
                    Prefix::Never => false,
                    Prefix::Always => true,
                    Prefix::AfterSpecial => !piece.starts_with([' ', METASPACE]),
                    Prefix::First => offset == 0 && !piece.starts_with([' ', METASPACE]),
                };
                if prefix {
                    t.push(METASPACE);
                }
                t.extend(piece.chars().map(|c| if c == ' ' { METASPACE } else { c }));
                let mut start = 0;
                let mut syms = Vec::new();
                for (i, c) in t.char_indices().chain(core::iter::once((t.len(), METASPACE))) {
                    if c == METASPACE && i > start && (self.metaspace_split || i == t.len()) {
                        self.encode_metaspace_word(&t[start..i], &mut syms, out);
                        start = i;
                    }
                }
                Ok(())
            }
        }
    }

    fn encode_metaspace_word(&self, word: &str, syms: &mut Vec<u32>, out: &mut Vec<u32>) {
        if self.ignore_merges {
            if let Some(id) = self.vocab.id(word) {
                out.push(id);
                return;
            }
        }
        syms.clear();
        let mut buf = [0u8; 4];
        for c in word.chars() {
            let s = c.encode_utf8(&mut buf);
            if let Some(id) = self.vocab.id(s) {
                syms.push(id);
                continue;
            }
            let bytes: Option<Vec<u32>> =
                if self.byte_fallback { s.bytes().map(|b| self.byte_ids[b as usize]).collect() } else { None };
            match (bytes, self.unk) {
                (Some(b), _) => syms.extend(b),
                (None, Some(u)) => {
                    // `fuse_unk`: a run of unknown characters is one unknown token.
                    if !(self.fuse_unk && syms.last() == Some(&u)) {
                        syms.push(u);
                    }
                }
                (None, None) => {}
            }
        }
        bpe::merge_by_rank(&self.merges, syms, out);
    }

    /// Decodes `ids` to text, keeping special tokens (lossy UTF-8: a broken byte sequence
    /// becomes U+FFFD).
    pub fn decode(&self, ids: &[u32]) -> Result<String> {
        self.decode_with(ids, false)
    }

    /// Decodes `ids`, dropping control tokens when `skip_special`.
    pub fn decode_with(&self, ids: &[u32], skip_special: bool) -> Result<String> {
        let mut bytes = Vec::with_capacity(ids.len() * 4);
        let mut first = true;
        for &id in ids {
            first &= !self.piece_bytes(id, skip_special, first, &mut bytes)?;
        }
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// Appends the bytes token `id` decodes to (`first`: no token was decoded before it);
    /// returns whether the token counted as decoded (it was not skipped).
    fn piece_bytes(&self, id: u32, skip_special: bool, first: bool, out: &mut Vec<u8>) -> Result<bool> {
        let kind = self.kind(id)?;
        let text = self.vocab.text(id);
        let start = out.len();
        match kind {
            TokenKind::Control if skip_special => return Ok(false),
            TokenKind::Control | TokenKind::UserDefined | TokenKind::Unknown | TokenKind::Unused => {
                out.extend_from_slice(text.as_bytes())
            }
            TokenKind::Byte if self.model != Model::ByteLevel => match parse_byte_token(text) {
                Some(b) => out.push(b),
                None => out.extend_from_slice(text.as_bytes()),
            },
            TokenKind::Normal | TokenKind::Byte => match self.model {
                Model::ByteLevel => {
                    let mut buf = [0u8; 4];
                    for c in text.chars() {
                        match BYTE_LEVEL.byte_of(c) {
                            Some(b) => out.push(b),
                            None => out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes()),
                        }
                    }
                }
                _ => {
                    let mut buf = [0u8; 4];
                    let drop_meta = first && self.strip == Strip::FirstTokenMetaspace;
                    for c in text.chars() {
                        if c == METASPACE && drop_meta {
                            continue;
                        }
                        let c = if c == METASPACE { ' ' } else { c };
                        out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                    }
                }
            },
        }
        if first && self.strip == Strip::LeadingSpace && out.get(start) == Some(&b' ') {
            out.remove(start);
        }
        Ok(true)
    }

    fn kind(&self, id: u32) -> Result<TokenKind> {
        self.kinds.get(id as usize).copied().ok_or_else(|| {
            Error::invalid(OP, alloc::format!("token id {id} is out of range for a vocabulary of {}", self.kinds.len()))
        })
    }

    /// A streaming decoder for printing tokens as they are generated.
    pub fn stream_decoder(&self, skip_special: bool) -> StreamDecoder<'_> {
        StreamDecoder { tok: self, skip_special, pending: Vec::new(), started: false }
    }

    /// The BOS token, if any.
    pub fn bos_id(&self) -> Option<u32> {
        self.bos
    }
    /// The EOS token the file names, if any.
    pub fn eos_id(&self) -> Option<u32> {
        self.eos
    }
    /// The tokens that end generation: EOS, EOT, EOM and the usual end-of-turn controls.
    pub fn eos_ids(&self) -> &[u32] {
        &self.eog
    }
    /// Whether `id` is a control token (false for ids out of range).
    pub fn is_special(&self, id: u32) -> bool {
        matches!(self.kinds.get(id as usize), Some(TokenKind::Control))
    }
    /// The kind of token `id`.
    pub fn token_kind(&self, id: u32) -> Result<TokenKind> {
        self.kind(id)
    }
    /// The number of tokens.
    pub fn vocab_size(&self) -> usize {
        self.vocab.len()
    }
    /// The Jinja chat template the file carries.
    pub fn chat_template(&self) -> Option<&str> {
        self.chat_template.as_deref()
    }
    /// This tokenizer with `template` as its chat template (a directory's `chat_template.jinja`).
    pub fn with_chat_template(mut self, template: String) -> Tokenizer {
        self.chat_template = Some(template);
        self
    }
    /// A token's text as stored in the vocabulary (`Ġhello`, `▁hello`, `<0x0A>`).
    pub fn token_text(&self, id: u32) -> Result<&str> {
        self.kind(id)?;
        Ok(self.vocab.text(id))
    }
    /// The id of a token by its stored text.
    pub fn token_id(&self, text: &str) -> Option<u32> {
        self.vocab.id(text)
    }
    /// Whether the file asks for a BOS token in front of prompts.
    pub fn add_bos(&self) -> bool {
        self.add_bos && self.bos.is_some()
    }
}

/// Decodes ids one at a time, returning only complete UTF-8 text: a character split over
/// several byte tokens is held back until its last byte arrives.
pub struct StreamDecoder<'a> {
    tok: &'a Tokenizer,
    skip_special: bool,
    pending: Vec<u8>,
    started: bool,
}

impl StreamDecoder<'_> {
    /// Adds one token; returns the text that is now complete (possibly empty).
    pub fn push(&mut self, id: u32) -> Result<String> {
        self.started |= self.tok.piece_bytes(id, self.skip_special, !self.started, &mut self.pending)?;
        let mut out = String::new();
        loop {
            match core::str::from_utf8(&self.pending) {
                Ok(s) => {
                    out.push_str(s);
                    self.pending.clear();
                    break;
                }
                Err(e) => {
                    let good = e.valid_up_to();
                    // Checked by from_utf8 just above, so this cannot fail.
                    out.push_str(core::str::from_utf8(&self.pending[..good]).unwrap_or_default());
                    match e.error_len() {
                        // An incomplete character at the end: wait for more bytes.
                        None => {
                            self.pending.drain(..good);
                            break;
                        }
                        Some(n) => {
                            out.push(char::REPLACEMENT_CHARACTER);
                            self.pending.drain(..good + n);
                        }
                    }
                }
            }
        }
        Ok(out)
    }

    /// Ends the stream: any incomplete character left becomes U+FFFD.
    pub fn finish(&mut self) -> String {
        let s = String::from_utf8_lossy(&self.pending).into_owned();
        self.pending.clear();
        s
    }
}

/// `<0xXX>` → the byte.
fn parse_byte_token(t: &str) -> Option<u8> {
    let h = t.strip_prefix("<0x")?.strip_suffix('>')?;
    if h.len() != 2 {
        return None;
    }
    u8::from_str_radix(h, 16).ok()
}

/// Whole-token matching of special/added tokens in text: leftmost, longest. For each first
/// byte, the distinct token lengths (longest first); a candidate is then one binary search in
/// the vocabulary, so a file with many special tokens does not slow encoding much.
#[derive(Default)]
struct SpecialMatcher {
    /// Sorted (first byte, length) pairs, length descending within a byte.
    lens: Vec<(u8, Reverse<usize>)>,
    /// The matchable ids, sorted by text (to check that a slice is one of them).
    ids: Vec<u32>,
}

use core::cmp::Reverse;

impl SpecialMatcher {
    fn new(vocab: &Vocab, ids: impl Iterator<Item = u32>) -> SpecialMatcher {
        let mut ids: Vec<u32> = ids.filter(|&id| !vocab.text(id).is_empty()).collect();
        ids.sort_by(|&a, &b| vocab.text(a).cmp(vocab.text(b)).then(a.cmp(&b)));
        let mut lens: Vec<(u8, Reverse<usize>)> =
            ids.iter().map(|&id| (vocab.text(id).as_bytes()[0], Reverse(vocab.text(id).len()))).collect();
        lens.sort_unstable();
        lens.dedup();
        SpecialMatcher { lens, ids }
    }

    fn find(&self, vocab: &Vocab, s: &str) -> Option<u32> {
        // Like the vocabulary: with duplicate texts the largest id wins.
        let p = self.ids.partition_point(|&id| vocab.text(id) <= s);
        let id = *self.ids.get(p.checked_sub(1)?)?;
        (vocab.text(id) == s).then_some(id)
    }

    fn longest_at(&self, vocab: &Vocab, text: &str, i: usize) -> Option<(u32, usize)> {
        if self.ids.is_empty() {
            return None;
        }
        let b = text.as_bytes()[i];
        let from = self.lens.partition_point(|&(x, _)| x < b);
        for &(x, Reverse(len)) in &self.lens[from..] {
            if x != b {
                break;
            }
            if let Some(s) = text.get(i..i + len) {
                if let Some(id) = self.find(vocab, s) {
                    return Some((id, len));
                }
            }
        }
        None
    }
}

/// The end-of-generation set: the EOS/EOT/EOM ids plus the control tokens chat models end
/// turns with, deduplicated.
fn end_of_generation(vocab: &Vocab, kinds: &[TokenKind], ids: &[Option<u32>]) -> Vec<u32> {
    let mut eog: Vec<u32> = ids.iter().flatten().copied().collect();
    for name in ["<|eot_id|>", "<|eom_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>"] {
        if let Some(id) = vocab.id(name) {
            if kinds[id as usize] == TokenKind::Control {
                eog.push(id);
            }
        }
    }
    eog.sort_unstable();
    eog.dedup();
    eog
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_tokens_parse() {
        assert_eq!(parse_byte_token("<0x0A>"), Some(10));
        assert_eq!(parse_byte_token("<0xff>"), Some(255));
        assert_eq!(parse_byte_token("<0x100>"), None);
        assert_eq!(parse_byte_token("<0xZZ>"), None);
    }
}
