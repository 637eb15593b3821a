//! NumPy `.npy` v1/v2/v3: magic, version, a Python-dict header
//! (`{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }`), then the raw elements.
//!
//! Only plain numeric dtypes are accepted (plus MLX's `'<V2'` for bfloat16); object arrays
//! (pickles) and structured dtypes are refused. Big-endian data is byte-swapped into an owned
//! copy; little-endian data is borrowed. The writer reproduces `np.save`'s bytes exactly.

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;
use core::ops::Range;

use super::{checked_numel, TensorInfo, TensorType};
use crate::dtype::DType;
use crate::error::{Error, Result};

const OP: &str = "npy";
/// The 6 magic bytes.
pub const MAGIC: &[u8; 6] = b"\x93NUMPY";
/// Largest header accepted (numpy itself refuses more than 10,000 bytes by default).
pub const MAX_HEADER: usize = 65_536;
/// numpy aligns the data start to this many bytes.
const ARRAY_ALIGN: usize = 64;

fn ferr(msg: impl Into<String>) -> Error {
    Error::format(OP, msg)
}

/// A parsed `.npy` header: what the data is and where it lies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NpyHeader {
    /// Format version (major, minor).
    pub version: (u8, u8),
    /// Element type.
    pub dtype: DType,
    /// Shape as written.
    pub shape: Vec<usize>,
    /// Elements stored column-major (the shape is still the logical one).
    pub fortran_order: bool,
    /// The data is big-endian (needs a byte swap before use).
    pub big_endian: bool,
    /// Byte range of the data inside the parsed buffer (bytes after it are ignored, so a
    /// flash region larger than the file can be passed).
    pub data: Range<usize>,
}

impl NpyHeader {
    /// A neutral record for this array, named `name`.
    pub fn tensor_info(&self, name: &str) -> TensorInfo {
        TensorInfo {
            name: String::from(name),
            ty: TensorType::Plain(self.dtype),
            shape: self.shape.clone(),
            data: self.data.clone(),
        }
    }
}

/// An array read from `.npy`: little-endian elements, borrowed unless a swap was needed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Npy<'a> {
    /// The header (its `big_endian` tells whether `data` was swapped).
    pub header: NpyHeader,
    /// Little-endian element bytes in the file's order (see `header.fortran_order`).
    pub data: Cow<'a, [u8]>,
}

/// Parses the header of a `.npy` buffer and checks that the data it describes is all there.
pub fn parse_header(buf: &[u8]) -> Result<NpyHeader> {
    let h = parse_layout(buf)?;
    if h.data.end > buf.len() {
        return Err(missing_data(&h, buf.len()));
    }
    Ok(h)
}

/// The defect of a header whose data runs past the end of a `len`-byte buffer.
pub fn missing_data(h: &NpyHeader, len: usize) -> Error {
    ferr(alloc::format!(
        "truncated: shape {:?} of {} needs {} data bytes but only {} remain",
        h.shape,
        h.dtype,
        h.data.len(),
        len.saturating_sub(h.data.start)
    ))
}

/// Parses the header of a `.npy` buffer without checking that the data is present (`data`
/// may run past the end of `buf`): for loaders that, like MLX's, read the data lazily.
pub fn parse_layout(buf: &[u8]) -> Result<NpyHeader> {
    if buf.len() < 8 {
        return Err(ferr(alloc::format!("truncated: {} bytes is too short for the magic and version", buf.len())));
    }
    if &buf[..6] != MAGIC {
        return Err(ferr("bad magic, expected \\x93NUMPY"));
    }
    let version = (buf[6], buf[7]);
    let (hlen, hstart) = match version.0 {
        1 => {
            let b = buf.get(8..10).ok_or_else(|| ferr("truncated: missing the header length"))?;
            (u16::from_le_bytes([b[0], b[1]]) as usize, 10)
        }
        2 | 3 => {
            let b = buf.get(8..12).ok_or_else(|| ferr("truncated: missing the header length"))?;
            (u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize, 12)
        }
        v => return Err(ferr(alloc::format!("unsupported .npy version {v}.{}", version.1))),
    };
    if hlen > MAX_HEADER {
        return Err(ferr(alloc::format!("header length {hlen} exceeds the {MAX_HEADER}-byte limit")));
    }
    let text = buf.get(hstart..hstart + hlen).ok_or_else(|| {
        ferr(alloc::format!("truncated: header of {hlen} bytes runs past the end of the {}-byte input", buf.len()))
    })?;
    // v1/v2 headers are latin-1 and v3 UTF-8; the accepted grammar is ASCII either way.
    if let Some(p) = text.iter().position(|&b| b >= 0x80) {
        return Err(ferr(alloc::format!("header holds a non-ASCII byte at {p}")));
    }
    let d = parse_dict(text)?;
    let data_start = hstart + hlen;
    let n = checked_numel(OP, &d.shape)?;
    let nbytes = n
        .checked_mul(d.dtype.size())
        .ok_or_else(|| ferr(alloc::format!("byte size of shape {:?} overflows", d.shape)))?;
    let end = data_start.checked_add(nbytes).ok_or_else(|| ferr("data end overflows"))?;
    Ok(NpyHeader {
        version,
        dtype: d.dtype,
        shape: d.shape,
        fortran_order: d.fortran_order,
        big_endian: d.big_endian,
        data: data_start..end,
    })
}

/// Reads a `.npy` buffer; big-endian data is swapped into an owned copy.
pub fn read(buf: &[u8]) -> Result<Npy<'_>> {
    let header = parse_header(buf)?;
    let raw = &buf[header.data.clone()];
    let data = if header.big_endian { Cow::Owned(swap_to_le(header.dtype, raw)) } else { Cow::Borrowed(raw) };
    Ok(Npy { header, data })
}

/// Swaps big-endian elements of `dtype` to little-endian (complex halves swapped separately).
fn swap_to_le(dtype: DType, raw: &[u8]) -> Vec<u8> {
    let unit = if dtype == DType::Complex64 { 4 } else { dtype.size() };
    let mut v = raw.to_vec();
    if unit > 1 {
        v.chunks_exact_mut(unit).for_each(|c| c.reverse());
    }
    v
}

/// Reorders column-major element bytes into row-major order (for `fortran_order` arrays).
/// `data` must hold exactly `prod(shape) * elem_size` bytes.
pub fn fortran_to_c_order(shape: &[usize], elem_size: usize, data: &[u8]) -> Result<Vec<u8>> {
    let n = checked_numel(OP, shape)?;
    if n.checked_mul(elem_size) != Some(data.len()) {
        return Err(Error::invalid(OP, alloc::format!("{} bytes do not hold shape {shape:?} of {elem_size}-byte elements", data.len())));
    }
    let mut out = Vec::with_capacity(data.len());
    let nd = shape.len();
    let mut idx: Vec<usize> = alloc::vec![0; nd];
    for _ in 0..n {
        // Column-major offset of the row-major multi-index `idx`.
        let mut off = 0usize;
        let mut stride = 1usize;
        for k in 0..nd {
            off += idx[k] * stride;
            stride *= shape[k];
        }
        out.extend_from_slice(&data[off * elem_size..(off + 1) * elem_size]);
        for k in (0..nd).rev() {
            idx[k] += 1;
            if idx[k] < shape[k] {
                break;
            }
            idx[k] = 0;
        }
    }
    Ok(out)
}

struct Dict {
    dtype: DType,
    big_endian: bool,
    fortran_order: bool,
    shape: Vec<usize>,
}

/// Parses numpy's header dict literal: exactly the keys `descr`, `fortran_order`, `shape`.
fn parse_dict(s: &[u8]) -> Result<Dict> {
    let mut p = Lit { s, i: 0 };
    p.ws();
    p.expect(b'{')?;
    let (mut descr, mut fortran, mut shape) = (None, None, None);
    loop {
        p.ws();
        if p.eat(b'}') {
            break;
        }
        let key = p.string()?;
        p.ws();
        p.expect(b':')?;
        p.ws();
        match key {
            "descr" => {
                if descr.is_some() {
                    return Err(ferr("duplicate key 'descr'"));
                }
                if p.peek() == Some(b'[') {
                    return Err(Error::unsupported(OP, "structured dtypes (a list descr) are not supported"));
                }
                descr = Some(p.string()?);
            }
            "fortran_order" => {
                if fortran.is_some() {
                    return Err(ferr("duplicate key 'fortran_order'"));
                }
                fortran = Some(p.boolean()?);
            }
            "shape" => {
                if shape.is_some() {
                    return Err(ferr("duplicate key 'shape'"));
                }
                shape = Some(p.tuple()?);
            }
            k => return Err(ferr(alloc::format!("unexpected header key '{k}'"))),
        }
        p.ws();
        if p.eat(b',') {
            continue;
        }
        p.ws();
        p.expect(b'}')?;
        break;
    }
    p.ws();
    if p.i != s.len() {
        return Err(ferr("trailing characters after the header dict"));
    }
    let descr = descr.ok_or_else(|| ferr("header lacks 'descr'"))?;
    let fortran_order = fortran.ok_or_else(|| ferr("header lacks 'fortran_order'"))?;
    let shape = shape.ok_or_else(|| ferr("header lacks 'shape'"))?;
    let (dtype, big_endian) = parse_descr(descr)?;
    Ok(Dict { dtype, big_endian, fortran_order, shape })
}

/// Maps a descr string (`'<f4'`, `'|b1'`, `'<V2'` …) to (dtype, big-endian?).
fn parse_descr(d: &str) -> Result<(DType, bool)> {
    let b = d.as_bytes();
    if b.is_empty() {
        return Err(ferr("empty descr"));
    }
    let (order, rest) = match b[0] {
        c @ (b'<' | b'>' | b'|' | b'=') => (c, &d[1..]),
        _ => (b'|', d),
    };
    if rest.starts_with('O') {
        return Err(Error::unsupported(OP, "object arrays (pickled data) are refused"));
    }
    let dtype = match rest {
        "b1" => DType::Bool,
        "u1" => DType::Uint8,
        "u2" => DType::Uint16,
        "u4" => DType::Uint32,
        "u8" => DType::Uint64,
        "i1" => DType::Int8,
        "i2" => DType::Int16,
        "i4" => DType::Int32,
        "i8" => DType::Int64,
        "f2" => DType::Float16,
        "f4" => DType::Float32,
        "f8" => DType::Float64,
        "c8" => DType::Complex64,
        "V2" => DType::Bfloat16,
        _ => return Err(Error::unsupported(OP, alloc::format!("unsupported dtype descr '{d}'"))),
    };
    let big = match order {
        b'>' => dtype.size() > 1,
        b'=' => return Err(ferr(alloc::format!("descr '{d}' has native byte order, which a file cannot state"))),
        _ => false,
    };
    Ok((dtype, big))
}

/// The tiny Python-literal reader behind [`parse_dict`].
struct Lit<'a> {
    s: &'a [u8],
    i: usize,
}

impl<'a> Lit<'a> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.i += 1;
        }
    }
    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn expect(&mut self, c: u8) -> Result<()> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(ferr(alloc::format!("malformed header: expected '{}' at byte {}", c as char, self.i)))
        }
    }
    fn string(&mut self) -> Result<&'a str> {
        let q = match self.peek() {
            Some(q @ (b'\'' | b'"')) => q,
            _ => return Err(ferr(alloc::format!("malformed header: expected a string at byte {}", self.i))),
        };
        self.i += 1;
        let start = self.i;
        while let Some(c) = self.peek() {
            if c == q {
                let s = &self.s[start..self.i];
                self.i += 1;
                // The header was checked to be ASCII.
                return core::str::from_utf8(s).map_err(|_| ferr("malformed header string"));
            }
            if c == b'\\' || c < 0x20 {
                return Err(ferr(alloc::format!("malformed header: escape or control character in a string at byte {}", self.i)));
            }
            self.i += 1;
        }
        Err(ferr("malformed header: unterminated string"))
    }
    fn boolean(&mut self) -> Result<bool> {
        if self.s[self.i..].starts_with(b"True") {
            self.i += 4;
            Ok(true)
        } else if self.s[self.i..].starts_with(b"False") {
            self.i += 5;
            Ok(false)
        } else {
            Err(ferr(alloc::format!("malformed header: fortran_order is not True/False at byte {}", self.i)))
        }
    }
    fn tuple(&mut self) -> Result<Vec<usize>> {
        self.expect(b'(')?;
        let mut v = Vec::new();
        loop {
            self.ws();
            if self.eat(b')') {
                return Ok(v);
            }
            let start = self.i;
            let mut x: usize = 0;
            while let Some(c @ b'0'..=b'9') = self.peek() {
                x = x
                    .checked_mul(10)
                    .and_then(|x| x.checked_add((c - b'0') as usize))
                    .ok_or_else(|| ferr("shape dimension does not fit in memory"))?;
                self.i += 1;
            }
            if self.i == start {
                return Err(ferr(alloc::format!("malformed header: expected a non-negative integer in shape at byte {}", self.i)));
            }
            self.eat(b'L'); // Python 2 long suffix
            if v.len() >= 64 {
                return Err(ferr("shape has more than 64 dimensions"));
            }
            v.push(x);
            self.ws();
            if self.eat(b',') {
                continue;
            }
            self.ws();
            if v.len() == 1 && self.peek() == Some(b')') {
                // `(3)` is an int in Python, not a tuple.
                return Err(ferr("malformed header: 1-element shape without a trailing comma"));
            }
            self.expect(b')')?;
            return Ok(v);
        }
    }
}

/// The descr numpy/MLX write for `dtype`.
pub fn descr(dtype: DType) -> &'static str {
    match dtype {
        DType::Bool => "|b1",
        DType::Uint8 => "|u1",
        DType::Int8 => "|i1",
        DType::Uint16 => "<u2",
        DType::Uint32 => "<u4",
        DType::Uint64 => "<u8",
        DType::Int16 => "<i2",
        DType::Int32 => "<i4",
        DType::Int64 => "<i8",
        DType::Float16 => "<f2",
        DType::Float32 => "<f4",
        DType::Float64 => "<f8",
        DType::Complex64 => "<c8",
        DType::Bfloat16 => "<V2",
    }
}

/// Serializes an array as `.npy`, byte-identical to `np.save` (version 1.0 unless the header
/// needs 2.0; data aligned to 64 bytes). `data` holds little-endian elements in row-major
/// order, or column-major when `fortran_order`.
pub fn write(dtype: DType, shape: &[usize], fortran_order: bool, data: &[u8]) -> Result<Vec<u8>> {
    const W: &str = "save";
    let nbytes = TensorType::Plain(dtype).byte_len(W, shape)?;
    if nbytes != data.len() {
        return Err(Error::invalid(W, alloc::format!("{} data bytes for shape {shape:?} of {dtype} ({nbytes} expected)", data.len())));
    }
    let mut h = String::from("{'descr': '");
    h.push_str(descr(dtype));
    h.push_str("', 'fortran_order': ");
    h.push_str(if fortran_order { "True" } else { "False" });
    h.push_str(", 'shape': (");
    for (i, d) in shape.iter().enumerate() {
        if i > 0 {
            h.push_str(", ");
        }
        h.push_str(&alloc::format!("{d}"));
    }
    if shape.len() == 1 {
        h.push(',');
    }
    h.push_str("), }");
    // numpy (>= 1.23) leaves room for the growth axis to reach 21 digits.
    if let Some(&g) = if fortran_order { shape.last() } else { shape.first() } {
        let digits = alloc::format!("{g}").len();
        for _ in digits..21 {
            h.push(' ');
        }
    }
    // numpy: pad with spaces so magic + version + length + header + '\n' is a multiple of 64
    // (a whole 64 spaces when it already is).
    let (ver, len_size) = if h.len() + 1 + 64 < 65_536 { (1u8, 2usize) } else { (2u8, 4usize) };
    let pad = ARRAY_ALIGN - ((MAGIC.len() + 2 + len_size + h.len() + 1) % ARRAY_ALIGN);
    for _ in 0..pad {
        h.push(' ');
    }
    h.push('\n');
    let mut out = Vec::with_capacity(MAGIC.len() + 2 + len_size + h.len() + data.len());
    out.extend_from_slice(MAGIC);
    out.push(ver);
    out.push(0);
    if ver == 1 {
        out.extend_from_slice(&(h.len() as u16).to_le_bytes());
    } else {
        out.extend_from_slice(&(h.len() as u32).to_le_bytes());
    }
    out.extend_from_slice(h.as_bytes());
    out.extend_from_slice(data);
    Ok(out)
}
