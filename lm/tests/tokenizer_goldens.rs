//! Tokenizers against real oracles: llama.cpp's `llama-tokenize` for GGUF vocabularies and the
//! Hugging Face `tokenizers` library for tokenizer.json files. The expected ids and decodes
//! in `data/tokenizer/goldens.json` were written by `data/tokenizer/gen_tokenizer_goldens.py`.

use std::path::PathBuf;

use mlx_arm_core::io::gguf;
use mlx_arm_core::io::gguf::Value;
use mlx_arm_core::io::json::{parse, Json};
use mlx_arm_lm::tokenizer::{EncodeOptions, Tokenizer};

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/tokenizer").join(name)
}

fn field<'a>(j: &'a Json, key: &str) -> &'a Json {
    match j {
        Json::Object(f) => f.iter().find(|(k, _)| k == key).map(|(_, v)| v).unwrap_or(&Json::Null),
        _ => &Json::Null,
    }
}
fn arr(j: &Json) -> &[Json] {
    match j {
        Json::Array(a) => a,
        _ => panic!("expected an array, got {j:?}"),
    }
}
fn text(j: &Json) -> &str {
    match j {
        Json::Str(s) => s,
        _ => panic!("expected a string, got {j:?}"),
    }
}
fn ids(j: &Json) -> Vec<u32> {
    arr(j).iter().map(|v| if let Json::UInt(u) = v { *u as u32 } else { panic!("bad id {v:?}") }).collect()
}
fn flag(j: &Json) -> bool {
    matches!(j, Json::Bool(true))
}

fn goldens() -> Json {
    // The goldens file nests 6 deep, well inside the strict parser's limit.
    parse("goldens", &std::fs::read(data("goldens.json")).unwrap()).unwrap()
}

fn gguf_metadata(path: &std::path::Path) -> Vec<(String, Value)> {
    gguf::parse(&std::fs::read(path).unwrap()).unwrap().metadata
}

fn with(meta: &[(String, Value)], key: &str, v: Value) -> Vec<(String, Value)> {
    let mut m: Vec<(String, Value)> = meta.iter().filter(|(k, _)| k != key).cloned().collect();
    m.push((key.to_string(), v));
    m
}

/// Checks every case of one golden list; returns the number checked.
fn check_cases(tok: &Tokenizer, texts: &[Json], cases: &[Json], what: &str, round_trip: bool) -> usize {
    let mut failures = Vec::new();
    for c in cases {
        let idx = if let Json::UInt(i) = field(c, "text") { *i as usize } else { panic!() };
        let t = text(&texts[idx]);
        let opts = EncodeOptions { add_bos: flag(field(c, "add_bos")), parse_special: flag(field(c, "parse_special")) };
        let want = ids(field(c, "ids"));
        let got = tok.encode_with(t, opts).unwrap();
        if got != want {
            failures.push(format!("{what}: text {idx} {t:?} {opts:?}\n  want {want:?}\n  got  {got:?}"));
            continue;
        }
        if let Json::Str(d) = field(c, "decode") {
            assert_eq!(tok.decode(&want).unwrap(), *d, "{what}: decode of text {idx}");
            assert_eq!(tok.decode_with(&want, true).unwrap(), text(field(c, "decode_skip")), "{what}: decode_with skip, text {idx}");
        } else if round_trip && !opts.add_bos {
            assert_eq!(tok.decode(&want).unwrap(), t, "{what}: round trip of text {idx}");
        }
        // Streaming gives the same text as decoding at once.
        let mut s = tok.stream_decoder(false);
        let mut streamed = String::new();
        for &id in &want {
            streamed.push_str(&s.push(id).unwrap());
        }
        streamed.push_str(&s.finish());
        assert_eq!(streamed, tok.decode(&want).unwrap(), "{what}: stream decode of text {idx}");
    }
    assert!(failures.is_empty(), "{} of {} cases differ:\n{}", failures.len(), cases.len(), failures.join("\n"));
    cases.len()
}

#[test]
fn gguf_vocabularies_match_llama_cpp() {
    let g = goldens();
    let texts = arr(field(&g, "texts"));
    let mut n = 0;
    for set in arr(field(&g, "gguf")) {
        let file = text(field(set, "file"));
        let mut meta = gguf_metadata(&data(file));
        if let Json::Str(pre) = field(set, "pre") {
            meta = with(&meta, "tokenizer.ggml.pre", Value::String(pre.clone()));
        }
        meta = with(&meta, "tokenizer.ggml.add_bos_token", Value::Bool(flag(field(set, "add_bos_token"))));
        let tok = Tokenizer::from_gguf(&meta).unwrap();
        let what = format!("{file} pre={:?}", field(set, "pre"));
        n += check_cases(&tok, texts, arr(field(set, "cases")), &what, true);
    }
    assert!(n > 300);
}

#[test]
fn hf_tokenizer_json_matches_tokenizers_library() {
    let g = goldens();
    let texts = arr(field(&g, "texts"));
    for set in arr(field(&g, "hf")) {
        let file = text(field(set, "file"));
        let cfg = std::fs::read(data(text(field(set, "config")))).unwrap();
        let tok = Tokenizer::from_hf_json(&std::fs::read(data(file)).unwrap(), Some(&cfg)).unwrap();
        assert!(tok.chat_template().is_some());
        check_cases(&tok, texts, arr(field(set, "cases")), file, false);
    }
}

fn model_dir() -> PathBuf {
    match std::env::var_os("MLX_ARM_MODEL_DIR") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/mlx-arm/models"),
    }
}

#[test]
fn smollm2_gguf_matches_llama_cpp() {
    let path = model_dir().join("SmolLM2-135M-Instruct.Q4_1.gguf");
    if !path.exists() {
        eprintln!("\n*** SKIPPED smollm2_gguf_matches_llama_cpp: {} is absent (scripts/setup.sh installs it) ***\n", path.display());
        return;
    }
    let meta = gguf_metadata(&path);
    let tok = Tokenizer::from_gguf(&meta).unwrap();
    assert_eq!(tok.vocab_size(), 49152);
    assert_eq!(tok.bos_id(), Some(1));
    assert!(tok.eos_ids().contains(&2));
    assert!(tok.chat_template().unwrap().contains("<|im_start|>"));
    assert!(tok.is_special(1) && !tok.is_special(300));
    let g = goldens();
    let n = check_cases(&tok, arr(field(&g, "texts")), arr(field(&g, "smollm_gguf")), "SmolLM2 GGUF", true);
    assert!(n > 50);

    // Speed: 10 KB of mixed text in a few ms (release) — generous bound for debug builds.
    let mut big = String::new();
    for t in arr(field(&g, "texts")) {
        big.push_str(text(t));
    }
    while big.len() < 10_000 {
        big.push_str("The quick brown fox jumps over the lazy dog; fn main() { println!(\"{}\", 12345); } ");
    }
    let t0 = std::time::Instant::now();
    let ids = tok.encode(&big, false).unwrap();
    let dt = t0.elapsed();
    assert_eq!(tok.decode(&ids).unwrap(), big);
    eprintln!("SmolLM2: encoded {} bytes into {} tokens in {:?}", big.len(), ids.len(), dt);
    assert!(dt.as_millis() < 500, "encoding 10 KB took {dt:?}");
}
