//! A strict, bounded JSON parser (RFC 8259) for safetensors headers — small enough to audit,
//! no_std, with a nesting limit, rejection of duplicate keys, and no recursion deeper than
//! [`MAX_DEPTH`]. Also a minimal writer for strings.

use alloc::string::String;
use alloc::vec::Vec;

use crate::error::{Error, Result};

/// Deepest nesting of arrays/objects accepted (safetensors needs 3).
pub const MAX_DEPTH: usize = 16;

/// A parsed JSON value.
#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    /// `null`
    Null,
    /// `true` / `false`
    Bool(bool),
    /// A non-negative integer literal that fits `u64` (no sign, fraction or exponent).
    UInt(u64),
    /// Any other number (a larger integer too), kept as its validated source text.
    Number(String),
    /// A string, unescaped.
    Str(String),
    /// An array.
    Array(Vec<Json>),
    /// An object, in source order; keys are unique.
    Object(Vec<(String, Json)>),
}

/// Parses one JSON document occupying all of `text` (surrounding whitespace allowed);
/// errors are tagged with `op`.
pub fn parse(op: &'static str, text: &[u8]) -> Result<Json> {
    let mut p = Parser { s: text, i: 0, op };
    p.ws();
    let v = p.value(0)?;
    p.ws();
    if p.i != p.s.len() {
        return Err(p.err("trailing characters after the JSON value"));
    }
    Ok(v)
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
    op: &'static str,
}

impl Parser<'_> {
    fn err(&self, what: &str) -> Error {
        Error::format(self.op, alloc::format!("invalid JSON header at byte {}: {what}", self.i))
    }
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.i += 1;
        }
    }
    fn expect(&mut self, c: u8) -> Result<()> {
        if self.peek() == Some(c) {
            self.i += 1;
            Ok(())
        } else {
            Err(self.err(&alloc::format!("expected '{}'", c as char)))
        }
    }
    fn literal(&mut self, word: &[u8], v: Json) -> Result<Json> {
        if self.s[self.i..].starts_with(word) {
            self.i += word.len();
            Ok(v)
        } else {
            Err(self.err("unknown literal"))
        }
    }
    fn value(&mut self, depth: usize) -> Result<Json> {
        match self.peek() {
            None => Err(self.err("unexpected end of input")),
            Some(b'{') => self.object(depth + 1),
            Some(b'[') => self.array(depth + 1),
            Some(b'"') => Ok(Json::Str(self.string()?)),
            Some(b't') => self.literal(b"true", Json::Bool(true)),
            Some(b'f') => self.literal(b"false", Json::Bool(false)),
            Some(b'n') => self.literal(b"null", Json::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => Err(self.err("unexpected character")),
        }
    }
    fn check_depth(&self, depth: usize) -> Result<()> {
        if depth > MAX_DEPTH {
            Err(self.err(&alloc::format!("nesting deeper than {MAX_DEPTH} levels")))
        } else {
            Ok(())
        }
    }
    fn array(&mut self, depth: usize) -> Result<Json> {
        self.check_depth(depth)?;
        self.i += 1;
        let mut items = Vec::new();
        self.ws();
        if self.peek() == Some(b']') {
            self.i += 1;
            return Ok(Json::Array(items));
        }
        loop {
            self.ws();
            items.push(self.value(depth)?);
            self.ws();
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b']') => {
                    self.i += 1;
                    return Ok(Json::Array(items));
                }
                _ => return Err(self.err("expected ',' or ']' in array")),
            }
        }
    }
    fn object(&mut self, depth: usize) -> Result<Json> {
        self.check_depth(depth)?;
        self.i += 1;
        let mut items: Vec<(String, Json)> = Vec::new();
        self.ws();
        if self.peek() == Some(b'}') {
            self.i += 1;
            return Ok(Json::Object(items));
        }
        loop {
            self.ws();
            if self.peek() != Some(b'"') {
                return Err(self.err("expected a string key"));
            }
            let k = self.string()?;
            self.ws();
            self.expect(b':')?;
            self.ws();
            let v = self.value(depth)?;
            items.push((k, v));
            self.ws();
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b'}') => {
                    self.i += 1;
                    break;
                }
                _ => return Err(self.err("expected ',' or '}' in object")),
            }
        }
        // Duplicate keys: sort references, compare neighbours (O(n log n) even for hostile input).
        let mut keys: Vec<&str> = items.iter().map(|(k, _)| k.as_str()).collect();
        keys.sort_unstable();
        if let Some(w) = keys.windows(2).find(|w| w[0] == w[1]) {
            return Err(Error::format(self.op, alloc::format!("invalid JSON header: duplicate key \"{}\"", w[0])));
        }
        Ok(Json::Object(items))
    }
    fn hex4(&mut self) -> Result<u32> {
        let mut v = 0u32;
        for _ in 0..4 {
            let d = match self.peek() {
                Some(c @ b'0'..=b'9') => c - b'0',
                Some(c @ b'a'..=b'f') => c - b'a' + 10,
                Some(c @ b'A'..=b'F') => c - b'A' + 10,
                _ => return Err(self.err("bad \\u escape")),
            };
            v = v * 16 + d as u32;
            self.i += 1;
        }
        Ok(v)
    }
    fn string(&mut self) -> Result<String> {
        self.i += 1; // opening quote
        let mut out: Vec<u8> = Vec::new();
        loop {
            let c = self.peek().ok_or_else(|| self.err("unterminated string"))?;
            match c {
                b'"' => {
                    self.i += 1;
                    break;
                }
                b'\\' => {
                    self.i += 1;
                    let e = self.peek().ok_or_else(|| self.err("unterminated escape"))?;
                    self.i += 1;
                    let ch = match e {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let hi = self.hex4()?;
                            let cp = if (0xD800..0xDC00).contains(&hi) {
                                if !self.s[self.i..].starts_with(b"\\u") {
                                    return Err(self.err("lone high surrogate"));
                                }
                                self.i += 2;
                                let lo = self.hex4()?;
                                if !(0xDC00..0xE000).contains(&lo) {
                                    return Err(self.err("bad low surrogate"));
                                }
                                0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                            } else if (0xDC00..0xE000).contains(&hi) {
                                return Err(self.err("lone low surrogate"));
                            } else {
                                hi
                            };
                            char::from_u32(cp).ok_or_else(|| self.err("bad code point"))?
                        }
                        _ => return Err(self.err("unknown escape")),
                    };
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                }
                0..=0x1f => return Err(self.err("control character in string")),
                _ => {
                    out.push(c);
                    self.i += 1;
                }
            }
        }
        String::from_utf8(out).map_err(|_| self.err("string is not valid UTF-8"))
    }
    fn digits(&mut self) -> usize {
        let start = self.i;
        while let Some(b'0'..=b'9') = self.peek() {
            self.i += 1;
        }
        self.i - start
    }
    fn number(&mut self) -> Result<Json> {
        let start = self.i;
        let neg = self.peek() == Some(b'-');
        if neg {
            self.i += 1;
        }
        let int_start = self.i;
        let n = self.digits();
        if n == 0 {
            return Err(self.err("number without digits"));
        }
        if n > 1 && self.s[int_start] == b'0' {
            return Err(self.err("number with a leading zero"));
        }
        let mut plain = !neg;
        if self.peek() == Some(b'.') {
            self.i += 1;
            plain = false;
            if self.digits() == 0 {
                return Err(self.err("no digits after the decimal point"));
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.i += 1;
            plain = false;
            if let Some(b'+' | b'-') = self.peek() {
                self.i += 1;
            }
            if self.digits() == 0 {
                return Err(self.err("no digits in the exponent"));
            }
        }
        let text = &self.s[start..self.i];
        if plain {
            let v = text.iter().try_fold(0u64, |v, &d| v.checked_mul(10)?.checked_add((d - b'0') as u64));
            // Larger integers are valid JSON (Hugging Face configs write `model_max_length`
            // as 10^30): kept as text, so a reader that needs an index says it is not one.
            if let Some(v) = v {
                return Ok(Json::UInt(v));
            }
        }
        // All bytes here are ASCII digits/signs/'.'/'e'.
        Ok(Json::Number(text.iter().map(|&b| b as char).collect()))
    }
}

/// Appends `s` as a JSON string literal (quotes and escapes) to `out`.
pub fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                out.push_str(&alloc::format!("\\u{:04x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strictness() {
        assert!(parse("t", br#"{"a": [1, 2, {"b": "\u00e9\ud83d\ude00"}]}"#).is_ok());
        for bad in [
            &br#"{"a":1,}"#[..],
            br#"{"a":01}"#,
            br#"{"a":1,"a":2}"#,
            br#"{"a":"\ud800"}"#,
            br#"{"a":"x"} x"#,
            br#"[1.]"#,
            b"\"\x01\"",
            b"[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]",
        ] {
            assert!(parse("t", bad).is_err(), "{:?}", core::str::from_utf8(bad));
        }
        assert_eq!(parse("t", b" 18446744073709551615 ").unwrap(), Json::UInt(u64::MAX));
        assert_eq!(parse("t", b"18446744073709551616").unwrap(), Json::Number("18446744073709551616".into()));
        assert_eq!(parse("t", b"-1.5e3").unwrap(), Json::Number("-1.5e3".into()));
    }
}
