//! GGUF v2/v3 (little-endian): magic, version, tensor and key/value counts, typed metadata
//! (every value type, arrays nested to [`MAX_ARRAY_DEPTH`]), tensor infos, then the aligned
//! data section. Tensors stay GGML blocks: a parse yields byte ranges, nothing is converted.
//!
//! Shapes are reported row-major (outermost first): GGUF stores `ne[0]` (innermost) first, so
//! the file's dimension list is reversed on read and on write, as MLX does.

use alloc::string::String;
use alloc::vec::Vec;

use super::cursor::Cursor;
use super::{align_up, check_disjoint, check_unique_names, TensorInfo, TensorType};
use crate::error::{Error, Result};
use crate::quant::GgmlType;

const OP: &str = "gguf";
/// The 4 magic bytes.
pub const MAGIC: &[u8; 4] = b"GGUF";
/// Alignment of the data section and of every tensor when `general.alignment` is absent.
pub const DEFAULT_ALIGNMENT: usize = 32;
/// The metadata key that overrides the alignment (must be a `u32` power of two).
pub const ALIGNMENT_KEY: &str = "general.alignment";
/// Most tensor dimensions accepted.
pub const MAX_DIMS: usize = 8;
/// Deepest nesting of metadata arrays accepted.
pub const MAX_ARRAY_DEPTH: usize = 16;

/// The GGUF metadata value type numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
#[allow(missing_docs)]
pub enum ValueType {
    U8 = 0,
    I8 = 1,
    U16 = 2,
    I16 = 3,
    U32 = 4,
    I32 = 5,
    F32 = 6,
    Bool = 7,
    String = 8,
    Array = 9,
    U64 = 10,
    I64 = 11,
    F64 = 12,
}

impl ValueType {
    fn from_u32(v: u32) -> Option<ValueType> {
        use ValueType::*;
        Some(match v {
            0 => U8,
            1 => I8,
            2 => U16,
            3 => I16,
            4 => U32,
            5 => I32,
            6 => F32,
            7 => Bool,
            8 => String,
            9 => Array,
            10 => U64,
            11 => I64,
            12 => F64,
            _ => return None,
        })
    }
    /// Fewest bytes one value of this type takes in a file (for bounding counts).
    fn min_bytes(self) -> usize {
        use ValueType::*;
        match self {
            U8 | I8 | Bool => 1,
            U16 | I16 => 2,
            U32 | I32 | F32 => 4,
            U64 | I64 | F64 | String => 8,
            Array => 12,
        }
    }
}

/// A metadata value.
#[derive(Clone, Debug, PartialEq)]
#[allow(missing_docs)]
pub enum Value {
    U8(u8),
    I8(i8),
    U16(u16),
    I16(i16),
    U32(u32),
    I32(i32),
    F32(f32),
    Bool(bool),
    String(String),
    Array(Array),
    U64(u64),
    I64(i64),
    F64(f64),
}

/// A metadata array: one element type, stored compactly.
#[derive(Clone, Debug, PartialEq)]
#[allow(missing_docs)]
pub enum Array {
    U8(Vec<u8>),
    I8(Vec<i8>),
    U16(Vec<u16>),
    I16(Vec<i16>),
    U32(Vec<u32>),
    I32(Vec<i32>),
    F32(Vec<f32>),
    Bool(Vec<bool>),
    String(Vec<String>),
    Array(Vec<Array>),
    U64(Vec<u64>),
    I64(Vec<i64>),
    F64(Vec<f64>),
}

impl Value {
    /// The value's GGUF type.
    pub fn value_type(&self) -> ValueType {
        match self {
            Value::U8(_) => ValueType::U8,
            Value::I8(_) => ValueType::I8,
            Value::U16(_) => ValueType::U16,
            Value::I16(_) => ValueType::I16,
            Value::U32(_) => ValueType::U32,
            Value::I32(_) => ValueType::I32,
            Value::F32(_) => ValueType::F32,
            Value::Bool(_) => ValueType::Bool,
            Value::String(_) => ValueType::String,
            Value::Array(_) => ValueType::Array,
            Value::U64(_) => ValueType::U64,
            Value::I64(_) => ValueType::I64,
            Value::F64(_) => ValueType::F64,
        }
    }
}

impl Array {
    /// The element type.
    pub fn elem_type(&self) -> ValueType {
        match self {
            Array::U8(_) => ValueType::U8,
            Array::I8(_) => ValueType::I8,
            Array::U16(_) => ValueType::U16,
            Array::I16(_) => ValueType::I16,
            Array::U32(_) => ValueType::U32,
            Array::I32(_) => ValueType::I32,
            Array::F32(_) => ValueType::F32,
            Array::Bool(_) => ValueType::Bool,
            Array::String(_) => ValueType::String,
            Array::Array(_) => ValueType::Array,
            Array::U64(_) => ValueType::U64,
            Array::I64(_) => ValueType::I64,
            Array::F64(_) => ValueType::F64,
        }
    }
    /// Number of elements.
    pub fn len(&self) -> usize {
        match self {
            Array::U8(v) => v.len(),
            Array::I8(v) => v.len(),
            Array::U16(v) => v.len(),
            Array::I16(v) => v.len(),
            Array::U32(v) => v.len(),
            Array::I32(v) => v.len(),
            Array::F32(v) => v.len(),
            Array::Bool(v) => v.len(),
            Array::String(v) => v.len(),
            Array::Array(v) => v.len(),
            Array::U64(v) => v.len(),
            Array::I64(v) => v.len(),
            Array::F64(v) => v.len(),
        }
    }
    /// No elements?
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A parsed GGUF buffer.
#[derive(Clone, Debug, PartialEq)]
pub struct Gguf {
    /// Format version (2 or 3).
    pub version: u32,
    /// Metadata in file order; keys are unique.
    pub metadata: Vec<(String, Value)>,
    /// Tensors in file order; data ranges are absolute offsets into the parsed buffer.
    pub tensors: Vec<TensorInfo>,
    /// The alignment in force.
    pub alignment: usize,
    /// Offset of the data section.
    pub data_start: usize,
}

impl Gguf {
    /// The metadata value under `key`.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.metadata.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}

fn read_string(c: &mut Cursor<'_>, what: &str) -> Result<String> {
    let n = c.u64(what)?;
    if n > c.remaining() as u64 {
        return Err(c.err(alloc::format!(
            "truncated: {what} length {n} at offset {} exceeds the {} bytes that remain",
            c.pos() - 8,
            c.remaining()
        )));
    }
    let at = c.pos();
    let b = c.bytes(n as usize, what)?;
    match core::str::from_utf8(b) {
        Ok(s) => Ok(String::from(s)),
        Err(_) => Err(c.err(alloc::format!("{what} at offset {at} is not valid UTF-8"))),
    }
}

fn bound_count(c: &Cursor<'_>, count: u64, min_bytes: usize, what: &str) -> Result<usize> {
    let cap = (c.remaining() / min_bytes) as u64;
    if count > cap {
        return Err(c.err(alloc::format!(
            "{what} {count} cannot fit in the {} bytes that remain (at offset {})",
            c.remaining(),
            c.pos()
        )));
    }
    Ok(count as usize)
}

fn read_value_type(c: &mut Cursor<'_>, what: &str) -> Result<ValueType> {
    let at = c.pos();
    let t = c.u32(what)?;
    ValueType::from_u32(t).ok_or_else(|| c.err(alloc::format!("unknown {what} {t} at offset {at}")))
}

macro_rules! read_nums {
    ($c:expr, $n:expr, $t:ty, $what:expr) => {{
        let sz = core::mem::size_of::<$t>();
        // $n was bounded by the remaining bytes, so this product cannot overflow.
        let b = $c.bytes($n * sz, $what)?;
        b.chunks_exact(sz)
            .map(|ch| {
                let mut a = [0u8; core::mem::size_of::<$t>()];
                a.copy_from_slice(ch);
                <$t>::from_le_bytes(a)
            })
            .collect::<Vec<$t>>()
    }};
}

fn read_bool(c: &mut Cursor<'_>) -> Result<bool> {
    let at = c.pos();
    match c.u8("bool value")? {
        0 => Ok(false),
        1 => Ok(true),
        v => Err(c.err(alloc::format!("bool value {v} at offset {at} is neither 0 nor 1"))),
    }
}

fn read_array(c: &mut Cursor<'_>, depth: usize) -> Result<Array> {
    if depth > MAX_ARRAY_DEPTH {
        return Err(c.err(alloc::format!("metadata arrays nested deeper than {MAX_ARRAY_DEPTH} levels")));
    }
    let et = read_value_type(c, "array element type")?;
    let count = c.u64("array length")?;
    let n = bound_count(c, count, et.min_bytes(), "array length")?;
    Ok(match et {
        ValueType::U8 => Array::U8(c.bytes(n, "u8 array")?.to_vec()),
        ValueType::I8 => Array::I8(read_nums!(c, n, i8, "i8 array")),
        ValueType::U16 => Array::U16(read_nums!(c, n, u16, "u16 array")),
        ValueType::I16 => Array::I16(read_nums!(c, n, i16, "i16 array")),
        ValueType::U32 => Array::U32(read_nums!(c, n, u32, "u32 array")),
        ValueType::I32 => Array::I32(read_nums!(c, n, i32, "i32 array")),
        ValueType::F32 => Array::F32(read_nums!(c, n, f32, "f32 array")),
        ValueType::U64 => Array::U64(read_nums!(c, n, u64, "u64 array")),
        ValueType::I64 => Array::I64(read_nums!(c, n, i64, "i64 array")),
        ValueType::F64 => Array::F64(read_nums!(c, n, f64, "f64 array")),
        ValueType::Bool => {
            let mut v = Vec::with_capacity(n);
            for _ in 0..n {
                v.push(read_bool(c)?);
            }
            Array::Bool(v)
        }
        ValueType::String => {
            let mut v = Vec::with_capacity(n);
            for _ in 0..n {
                v.push(read_string(c, "string array element")?);
            }
            Array::String(v)
        }
        ValueType::Array => {
            let mut v = Vec::with_capacity(n);
            for _ in 0..n {
                v.push(read_array(c, depth + 1)?);
            }
            Array::Array(v)
        }
    })
}

fn read_value(c: &mut Cursor<'_>, t: ValueType) -> Result<Value> {
    Ok(match t {
        ValueType::U8 => Value::U8(c.u8("u8 value")?),
        ValueType::I8 => Value::I8(c.u8("i8 value")? as i8),
        ValueType::U16 => Value::U16(c.u16("u16 value")?),
        ValueType::I16 => Value::I16(c.u16("i16 value")? as i16),
        ValueType::U32 => Value::U32(c.u32("u32 value")?),
        ValueType::I32 => Value::I32(c.u32("i32 value")? as i32),
        ValueType::F32 => Value::F32(f32::from_bits(c.u32("f32 value")?)),
        ValueType::Bool => Value::Bool(read_bool(c)?),
        ValueType::String => Value::String(read_string(c, "string value")?),
        ValueType::Array => Value::Array(read_array(c, 1)?),
        ValueType::U64 => Value::U64(c.u64("u64 value")?),
        ValueType::I64 => Value::I64(c.u64("i64 value")? as i64),
        ValueType::F64 => Value::F64(f64::from_bits(c.u64("f64 value")?)),
    })
}

/// Parses a GGUF buffer. Nothing is copied from the data section.
pub fn parse(buf: &[u8]) -> Result<Gguf> {
    let mut c = Cursor::new(OP, buf);
    let magic = c.array::<4>("magic")?;
    if &magic != MAGIC {
        return Err(c.err(alloc::format!("bad magic {magic:02x?}, expected \"GGUF\"")));
    }
    let version = c.u32("version")?;
    match version {
        2 | 3 => {}
        1 => return Err(Error::unsupported(OP, "GGUF version 1 (32-bit counts) is not supported")),
        v if v.swap_bytes() == 2 || v.swap_bytes() == 3 => {
            return Err(Error::unsupported(OP, "big-endian GGUF files are not supported"))
        }
        v => return Err(c.err(alloc::format!("unsupported GGUF version {v}"))),
    }
    let n_tensors = c.u64("tensor count")?;
    let n_kv = c.u64("metadata count")?;
    // A key/value takes at least 8 (key length) + 4 (type) + 1 bytes.
    let n_kv = bound_count(&c, n_kv, 13, "metadata count")?;
    let mut metadata: Vec<(String, Value)> = Vec::with_capacity(n_kv);
    for _ in 0..n_kv {
        let key = read_string(&mut c, "metadata key")?;
        let t = read_value_type(&mut c, "metadata value type")?;
        let v = read_value(&mut c, t)?;
        metadata.push((key, v));
    }
    let mut keys: Vec<&str> = metadata.iter().map(|(k, _)| k.as_str()).collect();
    keys.sort_unstable();
    if let Some(w) = keys.windows(2).find(|w| w[0] == w[1]) {
        return Err(c.err(alloc::format!("duplicate metadata key '{}'", w[0])));
    }
    let alignment = match metadata.iter().find(|(k, _)| k == ALIGNMENT_KEY) {
        None => DEFAULT_ALIGNMENT,
        Some((_, Value::U32(a))) if *a != 0 && a.is_power_of_two() => *a as usize,
        Some((_, Value::U32(a))) => return Err(c.err(alloc::format!("{ALIGNMENT_KEY} {a} is not a power of two"))),
        Some((_, v)) => {
            return Err(c.err(alloc::format!("{ALIGNMENT_KEY} has type {:?}, expected U32", v.value_type())))
        }
    };
    // A tensor info takes at least 8 (name length) + 4 (n_dims) + 4 (type) + 8 (offset) bytes.
    let n_tensors = bound_count(&c, n_tensors, 24, "tensor count")?;
    let mut raw: Vec<(String, GgmlType, Vec<usize>, u64)> = Vec::with_capacity(n_tensors);
    for _ in 0..n_tensors {
        let name = read_string(&mut c, "tensor name")?;
        let nd = c.u32("dimension count")?;
        if nd as usize > MAX_DIMS {
            return Err(c.err(alloc::format!("tensor '{name}' has {nd} dimensions, more than {MAX_DIMS}")));
        }
        let mut shape = Vec::with_capacity(nd as usize);
        for _ in 0..nd {
            let d = c.u64("dimension")?;
            if d > i64::MAX as u64 {
                return Err(c.err(alloc::format!("tensor '{name}' dimension {d} is negative as int64")));
            }
            shape.push(
                usize::try_from(d).map_err(|_| c.err(alloc::format!("tensor '{name}' dimension {d} does not fit in memory")))?,
            );
        }
        shape.reverse();
        let at = c.pos();
        let id = c.u32("tensor type")?;
        let ty = GgmlType::from_id(id)
            .ok_or_else(|| c.err(alloc::format!("tensor '{name}' has unknown GGML type {id} (at offset {at})")))?;
        let off = c.u64("tensor data offset")?;
        raw.push((name, ty, shape, off));
    }
    let data_start = align_up(c.pos(), alignment)
        .ok_or_else(|| c.err("data section offset overflows"))?;
    let mut tensors = Vec::with_capacity(raw.len());
    for (name, ty, shape, off) in raw {
        let tt = TensorType::Ggml(ty);
        let nbytes = tt.byte_len(OP, &shape).map_err(|e| c.err(alloc::format!("tensor '{name}': {}", e.msg)))?;
        // An empty tensor passes the size check whatever its row length; every reader of
        // rows (native load, conversion) needs the row size, so it must be computable too
        // (found by the `gguf` fuzz target: ne = [2^62, 0] of F32).
        let inner = shape.last().copied().unwrap_or(1);
        if ty.row_bytes(inner).is_none() {
            return Err(c.err(alloc::format!("tensor '{name}': row size of {inner} {} elements overflows", ty.name())));
        }
        if off % alignment as u64 != 0 {
            return Err(c.err(alloc::format!("tensor '{name}' data offset {off} is not a multiple of the alignment {alignment}")));
        }
        let start = usize::try_from(off).ok().and_then(|o| o.checked_add(data_start));
        let end = start.and_then(|s| s.checked_add(nbytes));
        let (Some(start), Some(end)) = (start, end) else {
            return Err(c.err(alloc::format!("tensor '{name}' data offset {off} overflows")));
        };
        if end > buf.len() {
            return Err(c.err(alloc::format!(
                "tensor '{name}' data [{start}, {end}) runs past the end of the {}-byte file",
                buf.len()
            )));
        }
        tensors.push(TensorInfo { name, ty: tt, shape, data: start..end });
    }
    check_unique_names(OP, &tensors)?;
    check_disjoint(OP, &tensors, data_start.min(buf.len())..buf.len())?;
    Ok(Gguf { version, metadata, tensors, alignment, data_start })
}

/// A tensor to write: GGML blocks (or plain elements for `F32`/`F16`/… types), row-major shape.
#[derive(Clone, Copy, Debug)]
pub struct WriteTensor<'a> {
    /// Name.
    pub name: &'a str,
    /// GGML type.
    pub ty: GgmlType,
    /// Row-major shape (outermost first); written reversed as GGUF's `ne`.
    pub shape: &'a [usize],
    /// The tensor's bytes exactly as stored.
    pub data: &'a [u8],
}

fn put_string(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as u64).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}

fn put_array(out: &mut Vec<u8>, a: &Array) {
    out.extend_from_slice(&(a.elem_type() as u32).to_le_bytes());
    out.extend_from_slice(&(a.len() as u64).to_le_bytes());
    match a {
        Array::U8(v) => out.extend_from_slice(v),
        Array::I8(v) => v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        Array::U16(v) => v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        Array::I16(v) => v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        Array::U32(v) => v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        Array::I32(v) => v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        Array::F32(v) => v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        Array::U64(v) => v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        Array::I64(v) => v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        Array::F64(v) => v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        Array::Bool(v) => v.iter().for_each(|&x| out.push(x as u8)),
        Array::String(v) => v.iter().for_each(|s| put_string(out, s)),
        Array::Array(v) => v.iter().for_each(|x| put_array(out, x)),
    }
}

fn put_value(out: &mut Vec<u8>, v: &Value) {
    match v {
        Value::U8(x) => out.push(*x),
        Value::I8(x) => out.push(*x as u8),
        Value::U16(x) => out.extend_from_slice(&x.to_le_bytes()),
        Value::I16(x) => out.extend_from_slice(&x.to_le_bytes()),
        Value::U32(x) => out.extend_from_slice(&x.to_le_bytes()),
        Value::I32(x) => out.extend_from_slice(&x.to_le_bytes()),
        Value::F32(x) => out.extend_from_slice(&x.to_le_bytes()),
        Value::Bool(x) => out.push(*x as u8),
        Value::String(s) => put_string(out, s),
        Value::Array(a) => put_array(out, a),
        Value::U64(x) => out.extend_from_slice(&x.to_le_bytes()),
        Value::I64(x) => out.extend_from_slice(&x.to_le_bytes()),
        Value::F64(x) => out.extend_from_slice(&x.to_le_bytes()),
    }
}

fn array_depth(a: &Array) -> usize {
    match a {
        Array::Array(v) => 1 + v.iter().map(array_depth).max().unwrap_or(0),
        _ => 1,
    }
}

/// Serializes a GGUF v3 file. The alignment is `general.alignment` when given (a `u32` power
/// of two), else 32; every tensor starts aligned and is zero-padded, as gguf-py writes.
pub fn write(metadata: &[(&str, Value)], tensors: &[WriteTensor<'_>]) -> Result<Vec<u8>> {
    const W: &str = "save_gguf";
    let mut alignment = DEFAULT_ALIGNMENT;
    for (i, (k, v)) in metadata.iter().enumerate() {
        if metadata[..i].iter().any(|(k2, _)| k2 == k) {
            return Err(Error::invalid(W, alloc::format!("duplicate metadata key '{k}'")));
        }
        if let Value::Array(a) = v {
            if array_depth(a) > MAX_ARRAY_DEPTH {
                return Err(Error::invalid(W, alloc::format!("metadata '{k}': arrays nested deeper than {MAX_ARRAY_DEPTH}")));
            }
        }
        if *k == ALIGNMENT_KEY {
            match v {
                Value::U32(a) if *a != 0 && a.is_power_of_two() => alignment = *a as usize,
                _ => return Err(Error::invalid(W, alloc::format!("{ALIGNMENT_KEY} must be a u32 power of two"))),
            }
        }
    }
    let mut sizes = Vec::with_capacity(tensors.len());
    for (i, t) in tensors.iter().enumerate() {
        if tensors[..i].iter().any(|t2| t2.name == t.name) {
            return Err(Error::invalid(W, alloc::format!("duplicate tensor name '{}'", t.name)));
        }
        if t.shape.len() > MAX_DIMS {
            return Err(Error::invalid(W, alloc::format!("tensor '{}' has more than {MAX_DIMS} dimensions", t.name)));
        }
        let n = TensorType::Ggml(t.ty).byte_len(W, t.shape).map_err(|e| Error::invalid(W, e.msg))?;
        if n != t.data.len() {
            return Err(Error::invalid(
                W,
                alloc::format!("tensor '{}': {} data bytes, {n} expected for shape {:?} of {}", t.name, t.data.len(), t.shape, t.ty.name()),
            ));
        }
        sizes.push(n);
    }
    let mut out = Vec::new();
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&3u32.to_le_bytes());
    out.extend_from_slice(&(tensors.len() as u64).to_le_bytes());
    out.extend_from_slice(&(metadata.len() as u64).to_le_bytes());
    for (k, v) in metadata {
        put_string(&mut out, k);
        out.extend_from_slice(&(v.value_type() as u32).to_le_bytes());
        put_value(&mut out, v);
    }
    let mut offset = 0usize;
    for (t, &n) in tensors.iter().zip(&sizes) {
        put_string(&mut out, t.name);
        out.extend_from_slice(&(t.shape.len() as u32).to_le_bytes());
        for &d in t.shape.iter().rev() {
            out.extend_from_slice(&(d as u64).to_le_bytes());
        }
        out.extend_from_slice(&t.ty.id().to_le_bytes());
        out.extend_from_slice(&(offset as u64).to_le_bytes());
        offset = offset
            .checked_add(n)
            .and_then(|o| align_up(o, alignment))
            .ok_or_else(|| Error::invalid(W, "total size overflows"))?;
    }
    let start = align_up(out.len(), alignment).ok_or_else(|| Error::invalid(W, "total size overflows"))?;
    out.resize(start, 0);
    for t in tensors {
        out.extend_from_slice(t.data);
        let end = align_up(out.len(), alignment).ok_or_else(|| Error::invalid(W, "total size overflows"))?;
        out.resize(end, 0);
    }
    Ok(out)
}
