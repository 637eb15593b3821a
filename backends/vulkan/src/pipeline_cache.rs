//! The on-disk pipeline cache: one `VkPipelineCache` per device, filled from a file under the
//! user cache directory at start and written back when new pipelines were built, so a second
//! process skips the driver's shader compilation (docs/GPU.md, "Pipeline cache on disk").
//!
//! The file is ours around the driver's blob: a header naming the device it came from (vendor
//! and device id, driver version, `pipelineCacheUUID`), the blob's length and a checksum, then
//! the blob, which must itself start with the header Vulkan defines
//! (`VkPipelineCacheHeaderVersionOne`) for the same device. Anything else — a truncated,
//! corrupt or foreign file — is ignored (the cache starts empty) and replaced at the next save:
//! a driver is never handed bytes that were not checked first. Saves write a temporary file in
//! the same directory and rename it over the old one, so a reader never sees half a file and
//! two processes saving at once leave one whole file. A directory that cannot be written costs
//! the cache, never an error to the caller.

use crate::context::vk_err;
use ash::vk;
use mlx_arm_core::Result;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// Environment variable: `off` (or `0`) disables the on-disk cache (pipelines are still shared
/// within the process); any other non-empty value is the directory to use instead of
/// `$XDG_CACHE_HOME/mlx-arm/vulkan` (or `~/.cache/mlx-arm/vulkan`).
pub const PIPELINE_CACHE_ENV: &str = "MLX_ARM_VULKAN_PIPELINE_CACHE";

/// Our file's first bytes.
const MAGIC: &[u8; 8] = b"MLXARMPC";
/// Our file format's version (bumped when the layout below changes).
const FORMAT: u32 = 1;
/// magic, format, vendor, device, driver version, UUID, blob length, blob checksum.
const HEADER_LEN: usize = 8 + 4 + 4 + 4 + 4 + 16 + 8 + 8;
/// `VkPipelineCacheHeaderVersionOne`: header size, header version, vendor, device, UUID.
const VK_HEADER_LEN: usize = 32;
/// The largest blob we read back (a process's few dozen pipelines take well under this).
const MAX_BLOB: u64 = 256 << 20;

/// What identifies a driver's cache blob: a blob from another device or driver is useless to
/// this one (and drivers are not required to reject it safely).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct DeviceKey {
    pub vendor: u32,
    pub device: u32,
    pub driver: u32,
    pub uuid: [u8; 16],
}

impl DeviceKey {
    pub fn of(props: &vk::PhysicalDeviceProperties) -> DeviceKey {
        DeviceKey { vendor: props.vendor_id, device: props.device_id, driver: props.driver_version, uuid: props.pipeline_cache_uuid }
    }

    /// The file's name: one file per device and driver, so two GPUs of a machine (or a driver
    /// update) do not overwrite each other's cache.
    fn file_name(&self) -> String {
        let uuid: String = self.uuid.iter().map(|b| format!("{b:02x}")).collect();
        format!("{:04x}-{:04x}-{:08x}-{uuid}.bin", self.vendor, self.device, self.driver)
    }
}

/// How the on-disk cache fared in this process (`mlx_arm_vulkan::pipeline_cache_stats`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PipelineCacheStats {
    /// The file used, or `None` when the disk cache is off (or no cache directory is known).
    pub path: Option<PathBuf>,
    /// Bytes of the driver's blob read from the file and handed to the driver at start (0: none).
    pub loaded_bytes: usize,
    /// Why a file that was there was ignored (truncated, corrupt, another device's…).
    pub rejected: Option<String>,
    /// Times the cache was written, and the blob's bytes the last time.
    pub saves: usize,
    pub saved_bytes: usize,
    /// Why the last save failed (the directory cannot be written…), if it did.
    pub save_error: Option<String>,
    /// Pipelines built in this process, and the nanoseconds `vkCreateComputePipelines` took
    /// for them in all (what the cache shortens).
    pub pipelines_built: usize,
    pub build_ns: u64,
}

/// The device's pipeline cache and where it lives on disk.
pub(crate) struct DiskCache {
    pub cache: vk::PipelineCache,
    key: DeviceKey,
    /// A pipeline was built since the last load or save (tested on every host wait, so an
    /// atomic rather than the state's lock).
    dirty: AtomicBool,
    state: Mutex<State>,
}

struct State {
    stats: PipelineCacheStats,
    /// The checksum and length of the blob on disk (ours), to skip rewriting the same bytes.
    on_disk: Option<(u64, usize)>,
}

/// The cache directory: the override in [`PIPELINE_CACHE_ENV`], else the user cache dir; `None`
/// when disabled or when neither `XDG_CACHE_HOME` nor `HOME` is set.
fn cache_dir() -> Option<PathBuf> {
    match std::env::var_os(PIPELINE_CACHE_ENV) {
        Some(v) if v == "off" || v == "0" => return None,
        Some(v) if !v.is_empty() => return Some(PathBuf::from(v)),
        _ => {}
    }
    let base = match std::env::var_os("XDG_CACHE_HOME") {
        Some(x) if !x.is_empty() && Path::new(&x).is_absolute() => PathBuf::from(x),
        _ => PathBuf::from(std::env::var_os("HOME").filter(|h| !h.is_empty())?).join(".cache"),
    };
    Some(base.join("mlx-arm").join("vulkan"))
}

/// FNV-1a over `bytes`: catches a torn or bit-flipped blob (not an adversary).
fn checksum(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3))
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from(u32_at(b, at)) | (u64::from(u32_at(b, at + 4)) << 32)
}

/// Our file around the driver's `blob` for `key`.
pub(crate) fn encode(key: &DeviceKey, blob: &[u8]) -> Vec<u8> {
    let mut f = Vec::with_capacity(HEADER_LEN + blob.len());
    f.extend_from_slice(MAGIC);
    for w in [FORMAT, key.vendor, key.device, key.driver] {
        f.extend_from_slice(&w.to_le_bytes());
    }
    f.extend_from_slice(&key.uuid);
    f.extend_from_slice(&(blob.len() as u64).to_le_bytes());
    f.extend_from_slice(&checksum(blob).to_le_bytes());
    f.extend_from_slice(blob);
    f
}

/// The driver's blob inside `file`, if the file is whole, ours, for `key`, and the blob carries
/// Vulkan's header for the same device; else why not.
pub(crate) fn decode<'a>(key: &DeviceKey, file: &'a [u8]) -> std::result::Result<&'a [u8], String> {
    if file.len() < HEADER_LEN || &file[..8] != MAGIC {
        return Err(format!("not an mlx-arm pipeline cache ({} bytes)", file.len()));
    }
    if u32_at(file, 8) != FORMAT {
        return Err(format!("format {} (this build reads {FORMAT})", u32_at(file, 8)));
    }
    let ours = DeviceKey {
        vendor: u32_at(file, 12),
        device: u32_at(file, 16),
        driver: u32_at(file, 20),
        uuid: file[24..40].try_into().map_err(|_| "short header".to_string())?,
    };
    if ours != *key {
        return Err("written for another device or driver".into());
    }
    let len = u64_at(file, 40);
    let blob = &file[HEADER_LEN..];
    if len != blob.len() as u64 {
        return Err(format!("truncated or padded: {} blob bytes, the header says {len}", blob.len()));
    }
    if checksum(blob) != u64_at(file, 48) {
        return Err("checksum mismatch (corrupt)".into());
    }
    // Vulkan's own header, which the driver wrote: checked too, so a blob another driver
    // version made under the same UUID (or a bug of ours) never reaches the driver.
    if blob.len() < VK_HEADER_LEN {
        return Err("the driver's blob is shorter than Vulkan's header".into());
    }
    let size = u32_at(blob, 0) as usize;
    let version = u32_at(blob, 4);
    let (vendor, device) = (u32_at(blob, 8), u32_at(blob, 12));
    if size < VK_HEADER_LEN || size > blob.len() || version != vk::PipelineCacheHeaderVersion::ONE.as_raw() as u32 {
        return Err(format!("bad Vulkan cache header (size {size}, version {version})"));
    }
    if vendor != key.vendor || device != key.device || blob[16..32] != key.uuid {
        return Err("the driver's blob names another device".into());
    }
    Ok(blob)
}

/// Writes `bytes` to `path` through a temporary file in the same directory and a rename.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let dir = path.parent().ok_or_else(|| std::io::Error::other("no parent directory"))?;
    std::fs::create_dir_all(dir)?;
    let name = path.file_name().ok_or_else(|| std::io::Error::other("no file name"))?.to_string_lossy();
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Reads `path` if it is there and no larger than any cache we write.
fn read_file(path: &Path) -> std::io::Result<Option<Vec<u8>>> {
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
        Ok(m) if m.len() > MAX_BLOB + HEADER_LEN as u64 => Err(std::io::Error::other(format!("{} bytes, too large", m.len()))),
        Ok(_) => std::fs::read(path).map(Some),
    }
}

impl DiskCache {
    /// The cache of `device` (properties `props`), with what the file holds for it.
    pub fn open(device: &ash::Device, props: &vk::PhysicalDeviceProperties) -> Result<DiskCache> {
        let key = DeviceKey::of(props);
        let path = cache_dir().map(|d| d.join(key.file_name()));
        let mut stats = PipelineCacheStats { path: path.clone(), ..Default::default() };
        let mut on_disk = None;
        let file = match path.as_deref().map(read_file) {
            Some(Ok(f)) => f,
            Some(Err(e)) => {
                stats.rejected = Some(format!("unreadable: {e}"));
                None
            }
            None => None,
        };
        let blob = file.as_deref().and_then(|f| match decode(&key, f) {
            Ok(b) => Some(b),
            Err(why) => {
                stats.rejected = Some(why);
                None
            }
        });
        let mut cache = None;
        if let Some(b) = blob {
            let ci = vk::PipelineCacheCreateInfo::default().initial_data(b);
            // SAFETY: a live device; the data was checked against this device above.
            match unsafe { device.create_pipeline_cache(&ci, None) } {
                Ok(c) => {
                    stats.loaded_bytes = b.len();
                    on_disk = Some((checksum(b), b.len()));
                    cache = Some(c);
                }
                Err(r) => stats.rejected = Some(format!("the driver refused it ({r:?})")),
            }
        }
        let cache = match cache {
            Some(c) => c,
            // SAFETY: a live device; an empty cache.
            None => unsafe { device.create_pipeline_cache(&vk::PipelineCacheCreateInfo::default(), None) }
                .map_err(|r| vk_err("vulkan", "vkCreatePipelineCache", r))?,
        };
        Ok(DiskCache { cache, key, dirty: AtomicBool::new(false), state: Mutex::new(State { stats, on_disk }) })
    }

    /// Counts a pipeline built in `ns` nanoseconds (the cache now holds something to save).
    pub fn built(&self, ns: u64) {
        let mut s = crate::lock(&self.state);
        s.stats.pipelines_built += 1;
        s.stats.build_ns += ns;
        self.dirty.store(true, Ordering::Release);
    }

    /// Writes the cache to its file if pipelines were built since it was read or last written
    /// and the driver's blob changed. Failures are recorded in the stats, not returned: the
    /// cache only saves time.
    pub fn save(&self, device: &ash::Device) {
        if !self.dirty.swap(false, Ordering::AcqRel) {
            return;
        }
        let mut s = crate::lock(&self.state);
        let Some(path) = s.stats.path.clone() else { return };
        // SAFETY: a live cache of this device (internally synchronized: created without the
        // externally-synchronized flag).
        let blob = match unsafe { device.get_pipeline_cache_data(self.cache) } {
            Ok(b) => b,
            Err(r) => {
                s.stats.save_error = Some(format!("vkGetPipelineCacheData failed ({r:?})"));
                return;
            }
        };
        let sum = (checksum(&blob), blob.len());
        if s.on_disk == Some(sum) {
            return;
        }
        match write_atomic(&path, &encode(&self.key, &blob)) {
            Ok(()) => {
                s.stats.saves += 1;
                s.stats.saved_bytes = blob.len();
                s.stats.save_error = None;
                s.on_disk = Some(sum);
            }
            Err(e) => s.stats.save_error = Some(e.to_string()),
        }
    }

    pub fn stats(&self) -> PipelineCacheStats {
        crate::lock(&self.state).stats.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> DeviceKey {
        DeviceKey { vendor: 0x10de, device: 0x2335, driver: 0x9130_0000, uuid: *b"0123456789abcdef" }
    }

    /// A blob as a driver writes it: Vulkan's header for `k`, then payload.
    fn blob(k: &DeviceKey, payload: &[u8]) -> Vec<u8> {
        let mut b = Vec::new();
        for w in [32u32, 1, k.vendor, k.device] {
            b.extend_from_slice(&w.to_le_bytes());
        }
        b.extend_from_slice(&k.uuid);
        b.extend_from_slice(payload);
        b
    }

    #[test]
    fn round_trip_returns_the_blob() {
        let b = blob(&key(), b"compiled pipelines");
        let f = encode(&key(), &b);
        assert_eq!(f.len(), HEADER_LEN + b.len());
        assert_eq!(decode(&key(), &f), Ok(&b[..]));
    }

    #[test]
    fn truncated_padded_and_corrupt_files_are_refused() {
        let b = blob(&key(), &[7u8; 100]);
        let f = encode(&key(), &b);
        for cut in [0, 7, HEADER_LEN - 1, HEADER_LEN, HEADER_LEN + 31, f.len() - 1] {
            assert!(decode(&key(), &f[..cut]).is_err(), "cut at {cut}");
        }
        let mut padded = f.clone();
        padded.push(0);
        assert!(decode(&key(), &padded).unwrap_err().contains("truncated or padded"));
        let mut flipped = f.clone();
        *flipped.last_mut().unwrap() ^= 1;
        assert!(decode(&key(), &flipped).unwrap_err().contains("checksum"));
        let mut magic = f.clone();
        magic[0] = b'X';
        assert!(decode(&key(), &magic).unwrap_err().contains("not an mlx-arm"));
        let mut format = f;
        format[8] = 9;
        assert!(decode(&key(), &format).unwrap_err().contains("format 9"));
    }

    #[test]
    fn foreign_files_and_blobs_are_refused() {
        let b = blob(&key(), b"x");
        for other in [
            DeviceKey { vendor: 0x1002, ..key() },
            DeviceKey { device: 1, ..key() },
            DeviceKey { driver: 1, ..key() },
            DeviceKey { uuid: [0; 16], ..key() },
        ] {
            // Our header names another device or driver.
            assert!(decode(&other, &encode(&key(), &b)).unwrap_err().contains("another device or driver"));
            // Our header right, the driver's blob from another device (or its header damaged).
            let foreign = blob(&other, b"x");
            if other.driver == key().driver {
                assert!(decode(&key(), &encode(&key(), &foreign)).unwrap_err().contains("names another device"));
            }
        }
        let mut bad_version = b.clone();
        bad_version[4] = 2;
        assert!(decode(&key(), &encode(&key(), &bad_version)).unwrap_err().contains("bad Vulkan cache header"));
        let mut bad_size = b.clone();
        bad_size[0] = 200;
        assert!(decode(&key(), &encode(&key(), &bad_size)).unwrap_err().contains("bad Vulkan cache header"));
        assert!(decode(&key(), &encode(&key(), &b[..20])).unwrap_err().contains("shorter than Vulkan's header"));
    }

    #[test]
    fn atomic_write_replaces_and_leaves_no_temporary() {
        let dir = std::env::temp_dir().join(format!("mlx-arm-pc-unit-{}", std::process::id()));
        let path = dir.join("sub").join("c.bin");
        write_atomic(&path, b"first").unwrap();
        write_atomic(&path, b"second").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"second");
        let names: Vec<_> = std::fs::read_dir(path.parent().unwrap()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, vec![std::ffi::OsString::from("c.bin")]);
        // A directory that cannot be made (its parent is a file) is an error, not a panic.
        let blocked = dir.join("sub").join("c.bin").join("inner").join("d.bin");
        assert!(write_atomic(&blocked, b"x").is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_file_name_names_the_device_and_driver() {
        assert_eq!(key().file_name(), "10de-2335-91300000-30313233343536373839616263646566.bin");
    }
}
