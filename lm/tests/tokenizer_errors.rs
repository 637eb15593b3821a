//! Hostile and malformed tokenizer files give errors, never panics; bad ids are errors;
//! the streaming decoder holds back split characters.

use mlx_arm_core::io::gguf::{Array, Value};
use mlx_arm_lm::tokenizer::Tokenizer;

fn s(x: &str) -> String {
    x.to_string()
}

fn bpe_meta() -> Vec<(String, Value)> {
    // A tiny byte-level vocabulary: the 256 byte characters, "ab", then one control token.
    let mut toks: Vec<String> = (0u8..=255).map(|b| byte_char(b).to_string()).collect();
    toks.push(s("ab"));
    toks.push(s("<|end|>"));
    let mut types = vec![1i32; 257];
    types.push(3);
    vec![
        (s("tokenizer.ggml.model"), Value::String(s("gpt2"))),
        (s("tokenizer.ggml.pre"), Value::String(s("gpt-2"))),
        (s("tokenizer.ggml.tokens"), Value::Array(Array::String(toks))),
        (s("tokenizer.ggml.token_type"), Value::Array(Array::I32(types))),
        (s("tokenizer.ggml.merges"), Value::Array(Array::String(vec![s("a b")]))),
        (s("tokenizer.ggml.eos_token_id"), Value::U32(257)),
    ]
}

/// GPT-2's byte → character table, written out independently for the test.
fn byte_char(b: u8) -> char {
    let printable = |x: u8| matches!(x, b'!'..=b'~' | 0xA1..=0xAC | 0xAE..=0xFF);
    if printable(b) {
        b as char
    } else {
        char::from_u32(256 + (0..b).filter(|&x| !printable(x)).count() as u32).unwrap()
    }
}

fn set(meta: &[(String, Value)], key: &str, v: Option<Value>) -> Vec<(String, Value)> {
    let mut m: Vec<_> = meta.iter().filter(|(k, _)| k != key).cloned().collect();
    if let Some(v) = v {
        m.push((s(key), v));
    }
    m
}

#[test]
fn small_gguf_vocab_works() {
    let t = Tokenizer::from_gguf(&bpe_meta()).unwrap();
    assert_eq!(t.vocab_size(), 258);
    let ids = t.encode("ab<|end|>", true).unwrap();
    assert_eq!(ids, [256, 257]);
    assert_eq!(t.encode("ab<|end|>", false).unwrap().len(), 1 + 7);
    assert_eq!(t.decode(&ids).unwrap(), "ab<|end|>");
    assert_eq!(t.decode_with(&ids, true).unwrap(), "ab");
    assert_eq!(t.eos_ids(), [257]);
    assert!(t.is_special(257) && !t.is_special(256) && !t.is_special(99999));
    assert_eq!(t.token_text(256).unwrap(), "ab");
    assert!(t.encode("", true).unwrap().is_empty());
}

#[test]
fn bad_ids_are_errors() {
    let t = Tokenizer::from_gguf(&bpe_meta()).unwrap();
    assert!(t.decode(&[258]).is_err());
    assert!(t.decode(&[u32::MAX]).is_err());
    assert!(t.token_text(1000).is_err());
    let e = t.stream_decoder(false).push(5000).unwrap_err();
    assert!(format!("{e}").contains("out of range"), "{e}");
}

#[test]
fn stream_decoder_holds_back_split_characters() {
    let t = Tokenizer::from_gguf(&bpe_meta()).unwrap();
    let ids = t.encode("é🦀x", false).unwrap(); // 2 + 4 + 1 byte tokens
    assert_eq!(ids.len(), 7);
    let mut d = t.stream_decoder(false);
    let out: Vec<String> = ids.iter().map(|&i| d.push(i).unwrap()).collect();
    assert_eq!(out, ["", "é", "", "", "", "🦀", "x"]);
    // A truncated character at the end of the stream becomes U+FFFD.
    let mut d = t.stream_decoder(false);
    assert_eq!(d.push(ids[2]).unwrap(), "");
    assert_eq!(d.finish(), "\u{FFFD}");
    // A stray continuation byte is replaced at once.
    assert_eq!(t.stream_decoder(false).push(ids[3]).unwrap(), "\u{FFFD}");
}

#[test]
fn malformed_gguf_metadata_is_an_error() {
    let m = bpe_meta();
    let cases: Vec<(&str, Option<Value>)> = vec![
        ("tokenizer.ggml.model", None),
        ("tokenizer.ggml.model", Some(Value::String(s("bert")))),
        ("tokenizer.ggml.model", Some(Value::U32(3))),
        ("tokenizer.ggml.tokens", None),
        ("tokenizer.ggml.tokens", Some(Value::Array(Array::String(vec![])))),
        ("tokenizer.ggml.tokens", Some(Value::Array(Array::U8(vec![1, 2])))),
        ("tokenizer.ggml.token_type", Some(Value::Array(Array::I32(vec![1; 3])))),
        ("tokenizer.ggml.token_type", Some(Value::Array(Array::I32(vec![99; 258])))),
        ("tokenizer.ggml.token_type", Some(Value::Array(Array::F32(vec![1.0; 258])))),
        ("tokenizer.ggml.merges", None),
        ("tokenizer.ggml.merges", Some(Value::Array(Array::String(vec![s("ab")])))),
        ("tokenizer.ggml.merges", Some(Value::Array(Array::String(vec![s(" ")])))),
        ("tokenizer.ggml.merges", Some(Value::Bool(true))),
        ("tokenizer.ggml.pre", Some(Value::String(s("no-such-pre")))),
        ("tokenizer.ggml.eos_token_id", Some(Value::U32(258))),
        ("tokenizer.ggml.bos_token_id", Some(Value::String(s("1")))),
        ("tokenizer.ggml.scores", Some(Value::Array(Array::F32(vec![0.0; 2])))),
        ("tokenizer.ggml.add_bos_token", Some(Value::U8(1))),
    ];
    for (key, v) in cases {
        let desc = format!("{key} = {v:?}");
        let e = Tokenizer::from_gguf(&set(&m, key, v)).err().unwrap_or_else(|| panic!("{desc} was accepted"));
        assert!(format!("{e}").contains("tokenizer"), "{desc}: {e}");
    }
    // -1 as "no token" is accepted.
    assert!(Tokenizer::from_gguf(&set(&m, "tokenizer.ggml.bos_token_id", Some(Value::I32(-1)))).is_ok());
}

#[test]
fn spm_without_byte_tokens_or_unk_is_an_error_on_unknown_text() {
    let toks = vec![s("<s>"), s("\u{2581}a"), s("a"), s("\u{2581}")];
    let m = vec![
        (s("tokenizer.ggml.model"), Value::String(s("llama"))),
        (s("tokenizer.ggml.tokens"), Value::Array(Array::String(toks))),
        (s("tokenizer.ggml.scores"), Value::Array(Array::F32(vec![0.0, -1.0, -2.0, f32::NAN]))),
        (s("tokenizer.ggml.token_type"), Value::Array(Array::U8(vec![3, 1, 1, 1]))),
        (s("tokenizer.ggml.bos_token_id"), Value::U32(0)),
    ];
    let t = Tokenizer::from_gguf(&m).unwrap();
    assert_eq!(t.encode("a a", true).unwrap(), [0, 1, 1]);
    assert_eq!(t.decode(&[1, 1]).unwrap(), "a a");
    assert!(t.encode("b", false).is_err());
}

#[test]
fn malformed_tokenizer_json_is_an_error() {
    let ok = br#"{"model":{"type":"BPE","vocab":{"a":0,"b":1,"ab":2},"merges":["a b"]},
        "pre_tokenizer":{"type":"ByteLevel","add_prefix_space":false,"use_regex":true},"decoder":{"type":"ByteLevel"}}"#;
    assert!(Tokenizer::from_hf_json(ok, None).is_ok());
    let bad: &[&[u8]] = &[
        b"",
        b"{",
        b"[]",
        b"{\"model\":{\"type\":\"WordPiece\",\"vocab\":{}}}",
        br#"{"model":{"type":"BPE","vocab":{"a":0},"merges":["a"]}}"#,
        br#"{"model":{"type":"BPE","vocab":{"a":0},"merges":["a b"]}}"#,
        br#"{"model":{"type":"BPE","vocab":{"a":"x"},"merges":[]}}"#,
        br#"{"model":{"type":"BPE","vocab":{"a":4000000000},"merges":[]}}"#,
        br#"{"model":{"type":"BPE","vocab":{"a":0},"merges":[[1,2]]}}"#,
        br#"{"model":{"type":"BPE","vocab":{"a":0},"merges":[],"dropout":0.1}}"#,
        br#"{"model":{"type":"BPE","vocab":{"a":0},"merges":[]},"pre_tokenizer":{"type":"Split","pattern":{"Regex":"\\w+"},"behavior":"Isolated","invert":false}}"#,
        br#"{"model":{"type":"BPE","vocab":{"a":0},"merges":[]},"normalizer":{"type":"Lowercase"}}"#,
        br#"{"model":{"type":"BPE","vocab":{"a":0},"merges":[],"unk_token":"<unk>"}}"#,
        br#"{"model":{"type":"BPE","vocab":{"a":0},"merges":[]},"added_tokens":[{"id":-1,"content":"x"}]}"#,
        br#"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"#,
    ];
    for b in bad {
        let e = Tokenizer::from_hf_json(b, None).err().unwrap_or_else(|| panic!("accepted {}", String::from_utf8_lossy(b)));
        assert!(format!("{e}").contains("tokenizer"), "{e}");
    }
    assert!(Tokenizer::from_hf_json(ok, Some(b"{not json")).is_err());
}
