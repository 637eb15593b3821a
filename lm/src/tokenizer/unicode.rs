//! The character classes the pre-tokenizer patterns use (`\p{L}`, `\p{N}`, `\p{P}`, `\s`) and
//! GPT-2's byte-to-character table of byte-level BPE.

use unicode_general_category::{get_general_category, GeneralCategory as G};

/// The coarse class of a character as the split patterns see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Class {
    /// `\p{L}`: any letter category (Lu, Ll, Lt, Lm, Lo).
    Letter,
    /// `\p{N}`: any number category (Nd, Nl, No).
    Number,
    /// `\s`: Unicode White_Space (what Rust's `char::is_whitespace` tests; both Oniguruma's
    /// `\s` and llama.cpp's whitespace flag use that property).
    Space,
    /// Anything else: punctuation, symbols, marks, controls, unassigned.
    Other,
}

pub(crate) fn class(c: char) -> Class {
    // ASCII first: most text is mostly ASCII and the category table is a binary search.
    if c.is_ascii() {
        return if c.is_ascii_alphabetic() {
            Class::Letter
        } else if c.is_ascii_digit() {
            Class::Number
        } else if c.is_ascii_whitespace() || c == '\x0b' {
            // `is_ascii_whitespace` leaves out the vertical tab, which White_Space includes.
            Class::Space
        } else {
            Class::Other
        };
    }
    if c.is_whitespace() {
        return Class::Space;
    }
    match get_general_category(c) {
        G::UppercaseLetter | G::LowercaseLetter | G::TitlecaseLetter | G::ModifierLetter | G::OtherLetter => {
            Class::Letter
        }
        G::DecimalNumber | G::LetterNumber | G::OtherNumber => Class::Number,
        _ => Class::Other,
    }
}

/// `\p{P}`: the punctuation categories (Pc, Pd, Ps, Pe, Pi, Pf, Po).
pub(crate) fn is_punctuation(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_punctuation() && !matches!(c, '$' | '+' | '<' | '=' | '>' | '^' | '`' | '|' | '~');
    }
    matches!(
        get_general_category(c),
        G::ConnectorPunctuation
            | G::DashPunctuation
            | G::OpenPunctuation
            | G::ClosePunctuation
            | G::InitialPunctuation
            | G::FinalPunctuation
            | G::OtherPunctuation
    )
}

/// Whether byte `b` stands for itself in GPT-2's byte-to-character table: the printable
/// Latin-1 characters `!`..`~`, `¡`..`¬` and `®`..`ÿ`. The other 68 bytes (controls, space,
/// DEL, the C1 block, NBSP and the soft hyphen) are moved to U+0100.. in byte order, so that
/// every byte becomes a visible, non-space character and BPE vocabularies stay printable.
fn byte_is_printable(b: u8) -> bool {
    matches!(b, b'!'..=b'~' | 0xA1..=0xAC | 0xAE..=0xFF)
}

/// The byte-level tables: byte → character and back.
pub(crate) struct ByteLevel {
    to_char: [char; 256],
}

impl ByteLevel {
    pub(crate) const fn new() -> ByteLevel {
        let mut to_char = ['\0'; 256];
        let mut next = 0u32;
        let mut b = 0usize;
        while b < 256 {
            let printable = matches!(b as u8, b'!'..=b'~' | 0xA1..=0xAC | 0xAE..=0xFF);
            to_char[b] = if printable {
                // SAFETY-free: every byte value is a valid scalar value.
                b as u8 as char
            } else {
                let c = 256 + next;
                next += 1;
                match char::from_u32(c) {
                    Some(ch) => ch,
                    None => '\0', // unreachable: 256..324 are all scalar values
                }
            };
            b += 1;
        }
        ByteLevel { to_char }
    }

    pub(crate) fn char_of(&self, b: u8) -> char {
        self.to_char[b as usize]
    }

    /// The byte a byte-level character stands for, or None for characters outside the table.
    pub(crate) fn byte_of(&self, c: char) -> Option<u8> {
        let u = c as u32;
        if u < 256 {
            let b = u as u8;
            return if byte_is_printable(b) { Some(b) } else { None };
        }
        if (256..256 + 68).contains(&u) {
            // The n-th non-printable byte, in byte order.
            let n = (u - 256) as usize;
            return (0u8..=255).filter(|&b| !byte_is_printable(b)).nth(n);
        }
        None
    }
}

pub(crate) static BYTE_LEVEL: ByteLevel = ByteLevel::new();

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_level_table_is_a_bijection() {
        for b in 0..=255u8 {
            let c = BYTE_LEVEL.char_of(b);
            assert_eq!(BYTE_LEVEL.byte_of(c), Some(b));
            assert!(!c.is_whitespace() && !c.is_control(), "byte {b} maps to {c:?}");
        }
        assert_eq!(BYTE_LEVEL.char_of(b' '), 'Ġ');
        assert_eq!(BYTE_LEVEL.char_of(b'\n'), 'Ċ');
        assert_eq!(BYTE_LEVEL.byte_of('中'), None);
    }

    #[test]
    fn classes() {
        assert_eq!(class('é'), Class::Letter);
        assert_eq!(class('中'), Class::Letter);
        assert_eq!(class('½'), Class::Number);
        assert_eq!(class('٣'), Class::Number);
        assert_eq!(class('\u{3000}'), Class::Space);
        assert_eq!(class('\u{a0}'), Class::Space);
        assert_eq!(class('\u{301}'), Class::Other);
        assert!(is_punctuation('!') && !is_punctuation('$') && is_punctuation('。'));
    }
}
