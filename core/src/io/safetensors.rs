//! safetensors: `u64` header length, a JSON header mapping names to
//! `{dtype, shape, data_offsets}` (plus an optional `__metadata__` string→string map), then the
//! data. Validation follows the reference implementation (offsets contiguous from 0, sizes
//! matching shapes), except that bytes after the last tensor are ignored as MLX does; dtypes follow MLX (`F8_*` read as `uint8`, the
//! non-standard `C64` as complex64), plus `F64`.

use alloc::string::String;
use alloc::vec::Vec;

use super::json::{self, Json};
use super::{TensorInfo, TensorType};
use crate::dtype::DType;
use crate::error::{Error, Result};

const OP: &str = "safetensors";

/// Largest header accepted (MLX's limit).
pub const MAX_HEADER: usize = 100_000_000;

/// A parsed safetensors buffer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Safetensors {
    /// Tensors in header order; data ranges are absolute offsets into the parsed buffer.
    pub tensors: Vec<TensorInfo>,
    /// The dtype string each tensor has in the file (`"F8_E4M3"` for a tensor read as uint8),
    /// parallel to `tensors`.
    pub file_dtypes: Vec<&'static str>,
    /// `__metadata__` entries in header order.
    pub metadata: Vec<(String, String)>,
    /// Offset of the data section (8 + header length).
    pub data_start: usize,
}

/// Maps a safetensors dtype string to (static name, MLX dtype it loads as).
fn dtype_from_str(s: &str) -> Option<(&'static str, DType)> {
    Some(match s {
        "BOOL" => ("BOOL", DType::Bool),
        "U8" => ("U8", DType::Uint8),
        "I8" => ("I8", DType::Int8),
        "U16" => ("U16", DType::Uint16),
        "I16" => ("I16", DType::Int16),
        "U32" => ("U32", DType::Uint32),
        "I32" => ("I32", DType::Int32),
        "U64" => ("U64", DType::Uint64),
        "I64" => ("I64", DType::Int64),
        "F16" => ("F16", DType::Float16),
        "BF16" => ("BF16", DType::Bfloat16),
        "F32" => ("F32", DType::Float32),
        "F64" => ("F64", DType::Float64),
        "C64" => ("C64", DType::Complex64),
        "F8_E4M3" => ("F8_E4M3", DType::Uint8),
        "F8_E8M0" => ("F8_E8M0", DType::Uint8),
        _ => return None,
    })
}

/// The safetensors dtype string for an MLX dtype.
pub fn dtype_to_str(d: DType) -> &'static str {
    match d {
        DType::Bool => "BOOL",
        DType::Uint8 => "U8",
        DType::Int8 => "I8",
        DType::Uint16 => "U16",
        DType::Int16 => "I16",
        DType::Uint32 => "U32",
        DType::Int32 => "I32",
        DType::Uint64 => "U64",
        DType::Int64 => "I64",
        DType::Float16 => "F16",
        DType::Bfloat16 => "BF16",
        DType::Float32 => "F32",
        DType::Float64 => "F64",
        DType::Complex64 => "C64",
    }
}

fn ferr(msg: impl Into<String>) -> Error {
    Error::format(OP, msg)
}

/// Parses a safetensors buffer. Nothing is copied: data ranges point into `buf`.
pub fn parse(buf: &[u8]) -> Result<Safetensors> {
    let len_bytes: [u8; 8] = buf
        .get(..8)
        .and_then(|s| s.try_into().ok())
        .ok_or_else(|| ferr(alloc::format!("truncated: {} bytes is too short for the 8-byte header length", buf.len())))?;
    let n = u64::from_le_bytes(len_bytes);
    if n > MAX_HEADER as u64 {
        return Err(ferr(alloc::format!("header length {n} exceeds the {MAX_HEADER}-byte limit")));
    }
    let n = n as usize;
    let header = buf.get(8..8 + n).ok_or_else(|| {
        ferr(alloc::format!("truncated: header length {n} runs past the end of the {}-byte file", buf.len()))
    })?;
    if header.first() != Some(&b'{') {
        return Err(ferr("header does not start with '{'"));
    }
    if core::str::from_utf8(header).is_err() {
        return Err(ferr("header is not valid UTF-8"));
    }
    let data_start = 8 + n;
    let data_len = buf.len() - data_start;
    let Json::Object(entries) = json::parse(OP, header)? else {
        return Err(ferr("header is not a JSON object"));
    };
    let mut tensors = Vec::new();
    let mut file_dtypes = Vec::new();
    let mut metadata = Vec::new();
    let mut ranges: Vec<(usize, usize, usize)> = Vec::new(); // (begin, end, tensor index)
    for (name, v) in entries {
        if name == "__metadata__" {
            // MLX writes `"__metadata__":null` when a file has no metadata.
            if matches!(v, Json::Null) {
                continue;
            }
            let Json::Object(m) = v else {
                return Err(ferr("__metadata__ is not an object"));
            };
            for (k, mv) in m {
                match mv {
                    Json::Str(s) => metadata.push((k, s)),
                    _ => return Err(ferr(alloc::format!("__metadata__ value of '{k}' is not a string"))),
                }
            }
            continue;
        }
        let (fdt, dtype, shape, begin, end) = tensor_entry(&name, v)?;
        let nbytes = TensorType::Plain(dtype).byte_len(OP, &shape)?;
        if end < begin || end - begin != nbytes {
            return Err(ferr(alloc::format!(
                "tensor '{name}': data_offsets [{begin}, {end}] hold {} bytes but dtype {fdt} and shape {shape:?} need {nbytes}",
                end.wrapping_sub(begin) as i128
            )));
        }
        if end > data_len {
            return Err(ferr(alloc::format!(
                "tensor '{name}': data_offsets end {end} is past the {data_len}-byte data section"
            )));
        }
        ranges.push((begin, end, tensors.len()));
        tensors.push(TensorInfo {
            name,
            ty: TensorType::Plain(dtype),
            shape,
            data: data_start + begin..data_start + end,
        });
        file_dtypes.push(fdt);
    }
    // Reference rule: the tensors tile the data section from 0, without gaps or overlaps.
    ranges.sort_unstable();
    let mut expect = 0usize;
    for &(b, e, i) in &ranges {
        if b != expect {
            let what = if b < expect { "overlaps the previous tensor" } else { "leaves a gap after the previous tensor" };
            return Err(ferr(alloc::format!("tensor '{}': data_offsets start {b} {what} (expected {expect})", tensors[i].name)));
        }
        expect = e;
    }
    // Bytes after the last tensor are ignored, as real MLX 0.32.4 does (`end > data_len` was
    // refused above, so `expect <= data_len`).
    Ok(Safetensors { tensors, file_dtypes, metadata, data_start })
}

type Entry = (&'static str, DType, Vec<usize>, usize, usize);

fn tensor_entry(name: &str, v: Json) -> Result<Entry> {
    let Json::Object(fields) = v else {
        return Err(ferr(alloc::format!("entry '{name}' is not an object")));
    };
    let (mut dtype, mut shape, mut offsets) = (None, None, None);
    for (k, f) in fields {
        match k.as_str() {
            "dtype" => match f {
                Json::Str(s) => {
                    dtype = Some(dtype_from_str(&s).ok_or_else(|| {
                        ferr(alloc::format!("tensor '{name}': unknown or unsupported dtype '{s}'"))
                    })?)
                }
                _ => return Err(ferr(alloc::format!("tensor '{name}': dtype is not a string"))),
            },
            "shape" => shape = Some(uint_list(name, "shape", f)?),
            "data_offsets" => offsets = Some(uint_list(name, "data_offsets", f)?),
            other => return Err(ferr(alloc::format!("tensor '{name}': unexpected field '{other}'"))),
        }
    }
    let (fdt, dt) = dtype.ok_or_else(|| ferr(alloc::format!("tensor '{name}': missing dtype")))?;
    let shape = shape.ok_or_else(|| ferr(alloc::format!("tensor '{name}': missing shape")))?;
    let offsets = offsets.ok_or_else(|| ferr(alloc::format!("tensor '{name}': missing data_offsets")))?;
    let [b, e] = offsets[..] else {
        return Err(ferr(alloc::format!("tensor '{name}': data_offsets must have 2 entries, not {}", offsets.len())));
    };
    Ok((fdt, dt, shape, b, e))
}

fn uint_list(name: &str, field: &str, v: Json) -> Result<Vec<usize>> {
    let Json::Array(items) = v else {
        return Err(ferr(alloc::format!("tensor '{name}': {field} is not an array")));
    };
    items
        .into_iter()
        .map(|x| match x {
            Json::UInt(u) => usize::try_from(u)
                .map_err(|_| ferr(alloc::format!("tensor '{name}': {field} value {u} does not fit in memory"))),
            Json::Number(t) if t.bytes().all(|b| b.is_ascii_digit()) => {
                Err(ferr(alloc::format!("tensor '{name}': {field} value {t} does not fit in 64 bits")))
            }
            _ => Err(ferr(alloc::format!("tensor '{name}': {field} holds a value that is not a non-negative integer"))),
        })
        .collect()
}

/// A tensor to write.
#[derive(Clone, Copy, Debug)]
pub struct WriteTensor<'a> {
    /// Name (must not be `__metadata__`).
    pub name: &'a str,
    /// Element type.
    pub dtype: DType,
    /// Row-major shape.
    pub shape: &'a [usize],
    /// Little-endian, row-major element bytes.
    pub data: &'a [u8],
}

/// Serializes tensors and string metadata into a safetensors buffer. Tensors are laid out by
/// decreasing element size, then name (so every tensor is aligned to its element size; the
/// header is padded with spaces to a multiple of 8 as the reference writer does).
pub fn write(tensors: &[WriteTensor<'_>], metadata: &[(&str, &str)]) -> Result<Vec<u8>> {
    const W: &str = "save_safetensors";
    let mut order: Vec<usize> = (0..tensors.len()).collect();
    order.sort_by(|&a, &b| {
        let (ta, tb) = (&tensors[a], &tensors[b]);
        tb.dtype.size().cmp(&ta.dtype.size()).then(ta.name.cmp(tb.name))
    });
    for w in order.windows(2) {
        if tensors[w[0]].name == tensors[w[1]].name {
            return Err(Error::invalid(W, alloc::format!("duplicate tensor name '{}'", tensors[w[0]].name)));
        }
    }
    let mut h = String::from("{");
    if !metadata.is_empty() {
        h.push_str("\"__metadata__\":{");
        for (i, (k, v)) in metadata.iter().enumerate() {
            if metadata[..i].iter().any(|(k2, _)| k2 == k) {
                return Err(Error::invalid(W, alloc::format!("duplicate metadata key '{k}'")));
            }
            if i > 0 {
                h.push(',');
            }
            json::write_string(&mut h, k);
            h.push(':');
            json::write_string(&mut h, v);
        }
        h.push('}');
    }
    let mut offset = 0usize;
    for (n, &i) in order.iter().enumerate() {
        let t = &tensors[i];
        if t.name == "__metadata__" {
            return Err(Error::invalid(W, "a tensor cannot be named '__metadata__'"));
        }
        let nbytes = TensorType::Plain(t.dtype).byte_len(W, t.shape)?;
        if nbytes != t.data.len() {
            return Err(Error::invalid(
                W,
                alloc::format!("tensor '{}': {} data bytes for shape {:?} of {} ({nbytes} expected)", t.name, t.data.len(), t.shape, t.dtype),
            ));
        }
        if n > 0 || !metadata.is_empty() {
            h.push(',');
        }
        json::write_string(&mut h, t.name);
        h.push_str(":{\"dtype\":\"");
        h.push_str(dtype_to_str(t.dtype));
        h.push_str("\",\"shape\":[");
        for (j, d) in t.shape.iter().enumerate() {
            if j > 0 {
                h.push(',');
            }
            h.push_str(&alloc::format!("{d}"));
        }
        let end = offset.checked_add(nbytes).ok_or_else(|| Error::invalid(W, "total size overflows"))?;
        h.push_str(&alloc::format!("],\"data_offsets\":[{offset},{end}]}}"));
        offset = end;
    }
    h.push('}');
    while h.len() % 8 != 0 {
        h.push(' ');
    }
    if h.len() > MAX_HEADER {
        return Err(Error::invalid(W, alloc::format!("header of {} bytes exceeds the {MAX_HEADER}-byte limit", h.len())));
    }
    let total = (8 + h.len()).checked_add(offset).ok_or_else(|| Error::invalid(W, "total size overflows"))?;
    let mut out = Vec::new();
    out.try_reserve_exact(total).map_err(|_| Error::out_of_memory(W, total))?;
    out.extend_from_slice(&(h.len() as u64).to_le_bytes());
    out.extend_from_slice(h.as_bytes());
    for &i in &order {
        out.extend_from_slice(tensors[i].data);
    }
    Ok(out)
}
