//! Pre-tokenizers: the split patterns that cut text into words before BPE, written by hand as
//! small matchers (the `regex` crate needs std). Each [`Stage`] is one pattern; stages apply
//! in order, each one cutting every piece the previous stage left, and (like a regex split
//! that keeps both the matches and the text between them) nothing is ever dropped.

use alloc::vec::Vec;

use super::unicode::{class, is_punctuation, Class};

/// One split pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stage {
    /// GPT-2: `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`.
    Gpt2,
    /// Llama 3 (`digits` = 3) and Qwen2 (`digits` = 1):
    /// `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,digits}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`.
    Llama3 {
        /// The most digits one piece holds.
        digits: usize,
    },
    /// `\p{N}`: every digit alone (SmolLM/StarCoder; HF `Digits(individual_digits=true)`).
    EachDigit,
    /// `\p{N}+` (HF `Digits(individual_digits=false)`; llama.cpp's default BPE splitter).
    NumberRun,
    /// `[\p{P}\$\+<=>\^~\|]+` (llama.cpp's default BPE splitter).
    PunctRun,
    /// `[0-9][0-9][0-9]` (llama.cpp's default BPE splitter).
    Ascii3Digits,
}

/// Cuts `text` with `stages`; returns byte ranges covering all of `text` in order.
pub(crate) fn split(stages: &[Stage], text: &str) -> Vec<(usize, usize)> {
    let chars: Vec<char> = text.chars().collect();
    let mut offsets: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
    offsets.push(text.len());
    let mut pieces: Vec<(usize, usize)> = if chars.is_empty() { Vec::new() } else { alloc::vec![(0, chars.len())] };
    for &stage in stages {
        let mut next = Vec::with_capacity(pieces.len() * 2);
        for &(s, e) in &pieces {
            split_piece(stage, &chars[s..e], s, &mut next);
        }
        pieces = next;
    }
    pieces.into_iter().map(|(s, e)| (offsets[s], offsets[e])).collect()
}

/// Leftmost-first search for `stage` in `c`, keeping the gaps between matches as pieces.
fn split_piece(stage: Stage, c: &[char], base: usize, out: &mut Vec<(usize, usize)>) {
    let (mut i, mut gap) = (0, 0);
    while i < c.len() {
        match match_at(stage, c, i) {
            Some(len) if len > 0 => {
                if gap < i {
                    out.push((base + gap, base + i));
                }
                out.push((base + i, base + i + len));
                i += len;
                gap = i;
            }
            _ => i += 1,
        }
    }
    if gap < c.len() {
        out.push((base + gap, base + c.len()));
    }
}

fn run(c: &[char], from: usize, f: impl Fn(char) -> bool) -> usize {
    c[from..].iter().take_while(|&&ch| f(ch)).count()
}

fn is_cls(c: &[char], i: usize, k: Class) -> bool {
    c.get(i).is_some_and(|&ch| class(ch) == k)
}

/// The length of the English contraction (`'s`, `'t`, `'re`, `'ve`, `'m`, `'ll`, `'d`) at `i`.
fn contraction(c: &[char], i: usize, ignore_case: bool) -> Option<usize> {
    if c.get(i) != Some(&'\'') {
        return None;
    }
    let low = |k: usize| c.get(k).map(|&ch| if ignore_case { ch.to_ascii_lowercase() } else { ch });
    match (low(i + 1), low(i + 2)) {
        (Some('s' | 't' | 'm' | 'd'), _) => Some(2),
        (Some('r'), Some('e')) | (Some('v'), Some('e')) | (Some('l'), Some('l')) => Some(3),
        _ => None,
    }
}

/// The whitespace tail shared by the patterns: `\s+(?!\S)|\s+` at a whitespace char `i`:
/// a whitespace run followed by a non-space gives up its last char to the next word.
fn space_run(c: &[char], i: usize) -> usize {
    let k = i + run(c, i, |ch| class(ch) == Class::Space);
    if k == c.len() || k - i == 1 {
        k - i
    } else {
        k - i - 1
    }
}

fn match_at(stage: Stage, c: &[char], i: usize) -> Option<usize> {
    let ch = c[i];
    match stage {
        Stage::EachDigit => (class(ch) == Class::Number).then_some(1),
        Stage::NumberRun => Some(run(c, i, |x| class(x) == Class::Number)),
        Stage::PunctRun => Some(run(c, i, |x| is_punctuation(x) || matches!(x, '$' | '+' | '<' | '=' | '>' | '^' | '~' | '|'))),
        Stage::Ascii3Digits => (c.len() - i >= 3 && c[i..i + 3].iter().all(char::is_ascii_digit)).then_some(3),
        Stage::Gpt2 => {
            if let Some(n) = contraction(c, i, false) {
                return Some(n);
            }
            // ` ?X+` for X in letters, numbers, others: the optional space joins the run after it.
            let j = if ch == ' ' && c.get(i + 1).is_some_and(|&x| class(x) != Class::Space) { i + 1 } else { i };
            let k = class(c[j]);
            if k == Class::Space {
                return Some(space_run(c, i));
            }
            Some(j - i + run(c, j, |x| class(x) == k))
        }
        Stage::Llama3 { digits } => {
            if let Some(n) = contraction(c, i, true) {
                return Some(n);
            }
            let k = class(ch);
            if k == Class::Letter {
                return Some(run(c, i, |x| class(x) == Class::Letter));
            }
            // `[^\r\n\p{L}\p{N}]?\p{L}+`: one non-letter, non-digit, non-newline char may lead a word.
            if k != Class::Number && ch != '\r' && ch != '\n' && is_cls(c, i + 1, Class::Letter) {
                return Some(1 + run(c, i + 1, |x| class(x) == Class::Letter));
            }
            if k == Class::Number {
                return Some(run(c, i, |x| class(x) == Class::Number).min(digits));
            }
            // ` ?[^\s\p{L}\p{N}]+[\r\n]*`
            let j = if ch == ' ' && is_cls(c, i + 1, Class::Other) { i + 1 } else { i };
            if class(c[j]) == Class::Other {
                let e = j + run(c, j, |x| class(x) == Class::Other);
                return Some(e - i + run(c, e, |x| x == '\r' || x == '\n'));
            }
            // Whitespace: `\s*[\r\n]+` ends at the run's last newline, if it has one.
            let k = i + run(c, i, |x| class(x) == Class::Space);
            if let Some(p) = (i..k).rev().find(|&p| c[p] == '\r' || c[p] == '\n') {
                return Some(p + 1 - i);
            }
            Some(space_run(c, i))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    fn words<'a>(stages: &[Stage], t: &'a str) -> Vec<&'a str> {
        split(stages, t).into_iter().map(|(s, e)| &t[s..e]).collect()
    }

    #[test]
    fn gpt2_pattern() {
        assert_eq!(words(&[Stage::Gpt2], "Hello world's  end!! 123\n"), ["Hello", " world", "'s", " ", " end", "!!", " 123", "\n"]);
        assert_eq!(words(&[Stage::Gpt2], "a   b"), ["a", "  ", " b"]);
        assert!(words(&[Stage::Gpt2], "").is_empty());
    }

    #[test]
    fn llama3_pattern() {
        let l3 = [Stage::Llama3 { digits: 3 }];
        assert_eq!(words(&l3, "I'M 12345 x\n\n  y"), ["I", "'M", " ", "123", "45", " x", "\n\n", " ", " y"]);
        assert_eq!(words(&l3, "(hello)"), ["(hello", ")"]);
    }

    #[test]
    fn pieces_cover_the_text() {
        let t = "Mixed: αβγ 12 \u{301}x \r\n\t ½ 中文!! ";
        for st in [&[Stage::Gpt2][..], &[Stage::Llama3 { digits: 1 }], &[Stage::PunctRun, Stage::Gpt2, Stage::NumberRun, Stage::Ascii3Digits]] {
            assert_eq!(words(st, t).concat(), t);
        }
    }
}
