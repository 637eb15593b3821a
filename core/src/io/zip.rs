//! A minimal ZIP reader and writer, enough for `.npz`: stored and deflate members, ZIP64
//! sizes/offsets on read, CRC-32 checked. Defences: member ranges must not overlap (the
//! overlapping-entry zip bomb), inflated output is capped by the declared size and a caller
//! limit, names that could escape a directory are refused, encryption and multi-disk archives
//! are refused.

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;
use core::ops::Range;

use super::cursor::Cursor;
use crate::error::{Error, Result};

const OP: &str = "zip";
const SIG_LOCAL: u32 = 0x0403_4b50;
const SIG_CENTRAL: u32 = 0x0201_4b50;
const SIG_EOCD: u32 = 0x0605_4b50;
const SIG_EOCD64: u32 = 0x0606_4b50;
const SIG_LOCATOR64: u32 = 0x0706_4b50;
const EOCD_LEN: usize = 22;
const CENTRAL_LEN: usize = 46;
const LOCAL_LEN: usize = 30;

/// Compression method of a member.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// Method 0: the bytes as they are.
    Stored,
    /// Method 8: raw deflate.
    Deflate,
}

/// One member of an archive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The member's name (validated: relative, no `..`, no backslashes or NUL).
    pub name: String,
    /// Compression method.
    pub method: Method,
    /// CRC-32 of the uncompressed bytes.
    pub crc32: u32,
    /// Byte range of the (compressed) data inside the archive.
    pub data: Range<usize>,
    /// Declared uncompressed size.
    pub size: usize,
}

fn ferr(msg: impl Into<String>) -> Error {
    Error::format(OP, msg)
}

/// CRC-32 (IEEE, reflected, as zip and zlib use) lookup table.
const CRC_TABLE: [u32; 256] = {
    let mut t = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 { 0xEDB8_8320 ^ (c >> 1) } else { c >> 1 };
            k += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
};

/// CRC-32 of `data`.
pub fn crc32(data: &[u8]) -> u32 {
    !data.iter().fold(!0u32, |c, &b| CRC_TABLE[((c ^ b as u32) & 0xff) as usize] ^ (c >> 8))
}

/// Refuses names that could escape a target directory or are otherwise not portable.
fn check_name(name: &str) -> Result<()> {
    let bad = name.is_empty()
        || name.starts_with('/')
        || name.contains('\\')
        || name.contains('\0')
        || name.as_bytes().get(1) == Some(&b':')
        || name.split('/').any(|c| c == "..");
    if bad {
        return Err(ferr(alloc::format!("unsafe member name {name:?} (absolute, drive, '..', backslash or NUL)")));
    }
    Ok(())
}

/// Locates the end-of-central-directory record, returning (its offset, entry count, central
/// directory size, central directory offset), ZIP64 records followed.
fn find_directory(buf: &[u8]) -> Result<(u64, u64, u64)> {
    if buf.len() < EOCD_LEN {
        return Err(ferr(alloc::format!("truncated: {} bytes is too short for a zip archive", buf.len())));
    }
    let lowest = buf.len().saturating_sub(EOCD_LEN + 0xFFFF);
    let mut pos = buf.len() - EOCD_LEN;
    let eocd = loop {
        if buf[pos..pos + 4] == SIG_EOCD.to_le_bytes() {
            let clen = u16::from_le_bytes([buf[pos + 20], buf[pos + 21]]) as usize;
            if pos + EOCD_LEN + clen == buf.len() {
                break pos;
            }
        }
        if pos == lowest {
            return Err(ferr("no end-of-central-directory record (not a zip archive, or truncated)"));
        }
        pos -= 1;
    };
    let mut c = Cursor::new(OP, buf);
    c.seek(eocd + 4, "end record")?;
    let disk = c.u16("disk number")?;
    let cd_disk = c.u16("directory disk")?;
    let n_here = c.u16("entry count on disk")?;
    let n = c.u16("entry count")?;
    let cd_size = c.u32("directory size")?;
    let cd_off = c.u32("directory offset")?;
    if disk != 0 || cd_disk != 0 || n_here != n {
        return Err(Error::unsupported(OP, "multi-disk archives are not supported"));
    }
    if n != 0xFFFF && cd_size != 0xFFFF_FFFF && cd_off != 0xFFFF_FFFF {
        return Ok((n as u64, cd_size as u64, cd_off as u64));
    }
    // ZIP64: a locator sits right before the end record.
    let loc = eocd.checked_sub(20).ok_or_else(|| ferr("ZIP64 sizes without a ZIP64 locator"))?;
    c.seek(loc, "ZIP64 locator")?;
    if c.u32("ZIP64 locator signature")? != SIG_LOCATOR64 {
        return Err(ferr("ZIP64 sizes without a ZIP64 locator"));
    }
    let _disk = c.u32("ZIP64 disk")?;
    let rec = c.u64_usize("ZIP64 end record offset")?;
    c.seek(rec, "ZIP64 end record")?;
    if c.u32("ZIP64 end record signature")? != SIG_EOCD64 {
        return Err(ferr("bad ZIP64 end record signature"));
    }
    c.bytes(8 + 2 + 2 + 4 + 4, "ZIP64 end record")?;
    let n_here = c.u64("ZIP64 entry count on disk")?;
    let n = c.u64("ZIP64 entry count")?;
    let cd_size = c.u64("ZIP64 directory size")?;
    let cd_off = c.u64("ZIP64 directory offset")?;
    if n_here != n {
        return Err(Error::unsupported(OP, "multi-disk archives are not supported"));
    }
    Ok((n, cd_size, cd_off))
}

/// Reads the ZIP64 extended-information extra field, replacing the 32-bit fields that are
/// saturated (`0xFFFFFFFF`) in the order the format defines.
fn apply_zip64(extra: &[u8], usize_: &mut u64, csize: &mut u64, off: &mut u64) -> Result<()> {
    let mut c = Cursor::new(OP, extra);
    while c.remaining() >= 4 {
        let id = c.u16("extra field id")?;
        let len = c.u16("extra field length")? as usize;
        let body = c.bytes(len, "extra field")?;
        if id != 0x0001 {
            continue;
        }
        let mut b = Cursor::new(OP, body);
        if *usize_ == 0xFFFF_FFFF {
            *usize_ = b.u64("ZIP64 uncompressed size")?;
        }
        if *csize == 0xFFFF_FFFF {
            *csize = b.u64("ZIP64 compressed size")?;
        }
        if *off == 0xFFFF_FFFF {
            *off = b.u64("ZIP64 local header offset")?;
        }
        return Ok(());
    }
    if *usize_ == 0xFFFF_FFFF || *csize == 0xFFFF_FFFF || *off == 0xFFFF_FFFF {
        return Err(ferr("saturated 32-bit size or offset without a ZIP64 extra field"));
    }
    Ok(())
}

/// Lists the members of a zip archive held in `buf`, validating every header.
pub fn entries(buf: &[u8]) -> Result<Vec<Entry>> {
    let (n, cd_size, cd_off) = find_directory(buf)?;
    let cd_end = cd_off.checked_add(cd_size).ok_or_else(|| ferr("central directory range overflows"))?;
    if cd_end > buf.len() as u64 {
        return Err(ferr(alloc::format!("central directory [{cd_off}, {cd_end}) runs past the end of the {}-byte archive", buf.len())));
    }
    let (cd_off, cd_end) = (cd_off as usize, cd_end as usize);
    if n > (cd_size / CENTRAL_LEN as u64) {
        return Err(ferr(alloc::format!("{n} entries cannot fit in a {cd_size}-byte central directory")));
    }
    let mut c = Cursor::new(OP, &buf[..cd_end]);
    c.seek(cd_off, "central directory")?;
    let mut out: Vec<Entry> = Vec::with_capacity(n as usize);
    let mut spans: Vec<(usize, usize)> = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let at = c.pos();
        if c.u32("central header signature")? != SIG_CENTRAL {
            return Err(ferr(alloc::format!("bad central directory header signature at offset {at}")));
        }
        c.bytes(4, "central header versions")?;
        let flags = c.u16("flags")?;
        let method = c.u16("compression method")?;
        c.bytes(4, "modification time")?;
        let crc = c.u32("crc-32")?;
        let mut csize = c.u32("compressed size")? as u64;
        let mut usize_ = c.u32("uncompressed size")? as u64;
        let name_len = c.u16("name length")? as usize;
        let extra_len = c.u16("extra length")? as usize;
        let comment_len = c.u16("comment length")? as usize;
        let disk = c.u16("start disk")?;
        c.bytes(6, "attributes")?;
        let mut off = c.u32("local header offset")? as u64;
        let name_b = c.bytes(name_len, "member name")?;
        let extra = c.bytes(extra_len, "extra field")?;
        c.bytes(comment_len, "member comment")?;
        let name = core::str::from_utf8(name_b)
            .map_err(|_| ferr(alloc::format!("member name at offset {at} is not valid UTF-8")))?;
        check_name(name)?;
        if flags & 1 != 0 {
            return Err(Error::unsupported(OP, alloc::format!("member '{name}' is encrypted")));
        }
        if disk != 0 && disk != 0xFFFF {
            return Err(Error::unsupported(OP, "multi-disk archives are not supported"));
        }
        let method = match method {
            0 => Method::Stored,
            8 => Method::Deflate,
            m => return Err(Error::unsupported(OP, alloc::format!("member '{name}' uses compression method {m}"))),
        };
        apply_zip64(extra, &mut usize_, &mut csize, &mut off)?;
        // The local header repeats the name; its own extra field may differ in length.
        let mut l = Cursor::new(OP, buf);
        let off_us = usize::try_from(off).map_err(|_| ferr("local header offset does not fit in memory"))?;
        l.seek(off_us, "local header")?;
        if l.u32("local header signature")? != SIG_LOCAL {
            return Err(ferr(alloc::format!("bad local header signature for member '{name}' at offset {off}")));
        }
        l.bytes(LOCAL_LEN - 4 - 4, "local header")?;
        let lname_len = l.u16("local name length")? as usize;
        let lextra_len = l.u16("local extra length")? as usize;
        if l.bytes(lname_len, "local name")? != name_b {
            return Err(ferr(alloc::format!("local header name differs from the central directory for '{name}'")));
        }
        l.bytes(lextra_len, "local extra field")?;
        let start = l.pos();
        let end = (start as u64).checked_add(csize).filter(|&e| e <= cd_off as u64).ok_or_else(|| {
            ferr(alloc::format!("data of member '{name}' ({csize} bytes at {start}) runs into the central directory or past the end"))
        })? as usize;
        let size = usize::try_from(usize_).map_err(|_| ferr(alloc::format!("member '{name}' size {usize_} does not fit in memory")))?;
        if method == Method::Stored && csize != usize_ {
            return Err(ferr(alloc::format!("stored member '{name}' has compressed size {csize} != size {usize_}")));
        }
        spans.push((off_us, end));
        out.push(Entry { name: String::from(name), method, crc32: crc, data: start..end, size });
    }
    // Members may not share bytes (defeats overlapping-entry bombs).
    spans.sort_unstable();
    for w in spans.windows(2) {
        if w[1].0 < w[0].1 {
            return Err(ferr(alloc::format!("member data ranges overlap at offset {}", w[1].0)));
        }
    }
    let mut names: Vec<&str> = out.iter().map(|e| e.name.as_str()).collect();
    names.sort_unstable();
    if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
        return Err(ferr(alloc::format!("duplicate member name '{}'", w[0])));
    }
    Ok(out)
}

/// The uncompressed bytes of `entry` (borrowed when stored). Refuses members whose declared
/// size exceeds `limit`, inflates at most the declared size, and checks the CRC-32.
pub fn read<'a>(buf: &'a [u8], entry: &Entry, limit: usize) -> Result<Cow<'a, [u8]>> {
    if entry.size > limit {
        return Err(ferr(alloc::format!("member '{}' declares {} bytes, more than the {limit}-byte limit", entry.name, entry.size)));
    }
    let raw = buf
        .get(entry.data.clone())
        .ok_or_else(|| ferr(alloc::format!("data of member '{}' lies outside the archive", entry.name)))?;
    let data: Cow<'a, [u8]> = match entry.method {
        Method::Stored => Cow::Borrowed(raw),
        Method::Deflate => {
            let cap = entry.size.saturating_add(1);
            let v = miniz_oxide::inflate::decompress_to_vec_with_limit(raw, cap).map_err(|e| {
                ferr(alloc::format!("member '{}': deflate stream is corrupt or larger than declared ({:?})", entry.name, e.status))
            })?;
            if v.len() != entry.size {
                return Err(ferr(alloc::format!(
                    "member '{}' inflates to {} bytes but declares {}",
                    entry.name,
                    v.len(),
                    entry.size
                )));
            }
            Cow::Owned(v)
        }
    };
    let crc = crc32(&data);
    if crc != entry.crc32 {
        return Err(ferr(alloc::format!("member '{}' fails its CRC-32 check ({crc:08x} != {:08x})", entry.name, entry.crc32)));
    }
    Ok(data)
}

/// Builds a zip archive in memory (no ZIP64: every size and offset must stay below 4 GiB).
#[derive(Debug, Default)]
pub struct Writer {
    out: Vec<u8>,
    central: Vec<u8>,
    count: usize,
}

impl Writer {
    /// An empty archive.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends a member, deflated (level 6, like zlib's default) when `compress`.
    pub fn add(&mut self, name: &str, data: &[u8], compress: bool) -> Result<()> {
        const W: &str = "zip";
        check_name(name).map_err(|e| Error::invalid(W, e.msg))?;
        if name.len() > 0xFFFF {
            return Err(Error::invalid(W, "member name longer than 65535 bytes"));
        }
        if self.count >= 0xFFFE {
            return Err(Error::unsupported(W, "more than 65534 members needs ZIP64"));
        }
        let deflated;
        let (method, body): (u16, &[u8]) = if compress {
            deflated = miniz_oxide::deflate::compress_to_vec(data, 6);
            (8, &deflated)
        } else {
            (0, data)
        };
        let offset = self.out.len();
        let limit = 0xFFFF_FFFEusize;
        if data.len() > limit || body.len() > limit || offset > limit {
            return Err(Error::unsupported(W, "members or archives over 4 GiB need ZIP64"));
        }
        let crc = crc32(data);
        let flags: u16 = if name.is_ascii() { 0 } else { 1 << 11 };
        let dos_time: u16 = 0;
        let dos_date: u16 = (1 << 5) | 1; // 1980-01-01
        let common = |v: &mut Vec<u8>| {
            v.extend_from_slice(&20u16.to_le_bytes()); // version needed
            v.extend_from_slice(&flags.to_le_bytes());
            v.extend_from_slice(&method.to_le_bytes());
            v.extend_from_slice(&dos_time.to_le_bytes());
            v.extend_from_slice(&dos_date.to_le_bytes());
            v.extend_from_slice(&crc.to_le_bytes());
            v.extend_from_slice(&(body.len() as u32).to_le_bytes());
            v.extend_from_slice(&(data.len() as u32).to_le_bytes());
            v.extend_from_slice(&(name.len() as u16).to_le_bytes());
            v.extend_from_slice(&0u16.to_le_bytes()); // extra length
        };
        self.out.extend_from_slice(&SIG_LOCAL.to_le_bytes());
        common(&mut self.out);
        self.out.extend_from_slice(name.as_bytes());
        self.out.extend_from_slice(body);

        self.central.extend_from_slice(&SIG_CENTRAL.to_le_bytes());
        self.central.extend_from_slice(&20u16.to_le_bytes()); // version made by
        common(&mut self.central);
        self.central.extend_from_slice(&[0u8; 6]); // comment len, disk, internal attrs
        self.central.extend_from_slice(&(0o100644u32 << 16).to_le_bytes()); // rw-r--r--
        self.central.extend_from_slice(&(offset as u32).to_le_bytes());
        self.central.extend_from_slice(name.as_bytes());
        self.count += 1;
        Ok(())
    }

    /// Appends the central directory and end record, returning the archive.
    pub fn finish(mut self) -> Result<Vec<u8>> {
        let cd_off = self.out.len();
        if cd_off > 0xFFFF_FFFE || self.central.len() > 0xFFFF_FFFE {
            return Err(Error::unsupported("zip", "archives over 4 GiB need ZIP64"));
        }
        self.out.extend_from_slice(&self.central);
        self.out.extend_from_slice(&SIG_EOCD.to_le_bytes());
        self.out.extend_from_slice(&[0u8; 4]); // disk numbers
        self.out.extend_from_slice(&(self.count as u16).to_le_bytes());
        self.out.extend_from_slice(&(self.count as u16).to_le_bytes());
        self.out.extend_from_slice(&(self.central.len() as u32).to_le_bytes());
        self.out.extend_from_slice(&(cd_off as u32).to_le_bytes());
        self.out.extend_from_slice(&0u16.to_le_bytes()); // comment length
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc_known_value() {
        // The CRC-32 check value from the zlib/ISO-HDLC catalogue.
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    }
}
