//! NumPy `.npz`: a zip archive of `.npy` members (`np.savez` stores them, `np.savez_compressed`
//! deflates them). Keys are member names without the `.npy` suffix, as `np.load` shows them.

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;
use core::ops::Range;

use super::npy::{self, NpyHeader};
use super::zip;
use crate::dtype::DType;
use crate::error::{Error, Result};

const OP: &str = "npz";

/// One array of an archive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NpzArray<'a> {
    /// The key (member name without `.npy`).
    pub name: String,
    /// The member's `.npy` header; its `data` range is relative to the member's bytes.
    pub header: NpyHeader,
    /// Little-endian element bytes, borrowed from the archive when the member is stored and
    /// little-endian, owned otherwise.
    pub data: Cow<'a, [u8]>,
    /// Where `data` lies inside the archive when it is borrowed from it.
    pub source: Option<Range<usize>>,
}

/// Reads every array of an `.npz` buffer. `limit` caps the total uncompressed size of all
/// members (each member is also capped by its declared size).
pub fn read(buf: &[u8], limit: usize) -> Result<Vec<NpzArray<'_>>> {
    let entries = zip::entries(buf)?;
    let mut out = Vec::with_capacity(entries.len());
    let mut budget = limit;
    for e in &entries {
        let name = e.name.strip_suffix(".npy").ok_or_else(|| {
            Error::format(OP, alloc::format!("member '{}' is not a .npy file", e.name))
        })?;
        let bytes = zip::read(buf, e, budget)?;
        budget -= e.size; // zip::read refused sizes above the budget.
        let header = npy::parse_header(&bytes).map_err(|err| {
            Error::format(OP, alloc::format!("member '{}': {}", e.name, err.msg))
        })?;
        let range = header.data.clone();
        let (data, source) = match bytes {
            Cow::Borrowed(b) if !header.big_endian => {
                let abs = e.data.start + range.start..e.data.start + range.end;
                (Cow::Borrowed(&b[range]), Some(abs))
            }
            Cow::Borrowed(b) => (npy::read(b)?.data.into_owned().into(), None),
            Cow::Owned(v) => {
                let d = if header.big_endian {
                    npy::read(&v)?.data.into_owned()
                } else {
                    let mut v = v;
                    v.truncate(range.end);
                    v.drain(..range.start);
                    v
                };
                (Cow::Owned(d), None)
            }
        };
        out.push(NpzArray { name: String::from(name), header, data, source });
    }
    Ok(out)
}

/// An array to write.
#[derive(Clone, Copy, Debug)]
pub struct WriteArray<'a> {
    /// Key (the member becomes `<name>.npy`).
    pub name: &'a str,
    /// Element type.
    pub dtype: DType,
    /// Row-major shape.
    pub shape: &'a [usize],
    /// Little-endian row-major element bytes.
    pub data: &'a [u8],
}

/// Serializes arrays as `.npz` — stored like `np.savez`, or deflated like
/// `np.savez_compressed` when `compress`.
pub fn write(arrays: &[WriteArray<'_>], compress: bool) -> Result<Vec<u8>> {
    let mut z = zip::Writer::new();
    for (i, a) in arrays.iter().enumerate() {
        if arrays[..i].iter().any(|b| b.name == a.name) {
            return Err(Error::invalid("savez", alloc::format!("duplicate array name '{}'", a.name)));
        }
        let member = npy::write(a.dtype, a.shape, false, a.data)?;
        let mut name = String::from(a.name);
        name.push_str(".npy");
        z.add(&name, &member, compress)?;
    }
    z.finish()
}
