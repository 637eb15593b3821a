//! Weights kept in their file's format: GGUF blocks multiplied by `ggml_matmul`, MLX
//! affine-quantized triples by `quantized_matmul`, plain float matrices by `matmul`. A weight
//! is never dequantized whole: an embedding lookup takes the rows it needs and expands only
//! those.

use alloc::format;
use alloc::vec::Vec;

use mlx_arm_core::ops;
use mlx_arm_core::ops::quantized::QuantizedOp;
use mlx_arm_core::primitive::Primitive;
use mlx_arm_core::quant::GgmlType;
use mlx_arm_core::{Array, DType, Device, Error, Result};

/// A `(N, K)` weight matrix used as `x @ Wᵀ` (a projection) or row by row (an embedding).
#[derive(Clone, Debug)]
pub enum Weight {
    /// GGUF blocks: a uint8 `(N, row_bytes(K))` array viewed in place in the file.
    Ggml {
        /// The block bytes.
        blocks: Array,
        /// Block type.
        ty: GgmlType,
        /// Elements per row.
        k: usize,
    },
    /// A float `(N, K)` matrix.
    Dense(Array),
    /// MLX affine quantization (`mx.quantize` output): packed uint32 `(N, K·bits/32)`, scales
    /// and biases `(N, K/group_size)`.
    Affine {
        /// Packed weights.
        w: Array,
        /// Per-group scales.
        scales: Array,
        /// Per-group biases.
        biases: Array,
        /// Elements per group.
        group_size: i64,
        /// Bits per element.
        bits: i64,
    },
}

/// Whether the default device runs the primitive `query()` describes (with its input dtypes)
/// itself: always on the CPU; on another device when its backend has a kernel for it. The model
/// records a fused node (one kernel for several) only there: a fused node a GPU backend lacks
/// would run on the CPU, moving its inputs off the device. `query` is called only off the CPU,
/// so a decode step on the CPU builds nothing to ask.
pub(crate) fn device_runs(query: impl FnOnce() -> (Primitive, Vec<DType>)) -> bool {
    let dev = mlx_arm_core::device::default_device();
    dev == Device::CPU
        || mlx_arm_core::backend::for_device(dev).is_some_and(|b| {
            let (prim, dtypes) = query();
            b.supports(&prim, &dtypes)
        })
}

/// Whether the default device runs `ggml_matmul_many` of `x` (`dt`) by `blocks` (not empty)
/// itself.
fn many_runs(blocks: &[(&Array, GgmlType, usize)], dt: DType) -> bool {
    device_runs(|| {
        let k = blocks.first().map_or(0, |b| b.2);
        let prim = Primitive::Quantized(QuantizedOp::GgmlMatmulMany { tys: blocks.iter().map(|b| b.1).collect(), k });
        let mut dtypes = alloc::vec![dt];
        dtypes.extend(blocks.iter().map(|b| b.0.dtype()));
        (prim, dtypes)
    })
}

impl Weight {
    /// Output features `N`.
    pub fn rows(&self) -> usize {
        match self {
            Weight::Ggml { blocks, .. } => blocks.shape()[0],
            Weight::Dense(w) | Weight::Affine { w, .. } => w.shape()[0],
        }
    }

    /// Input features `K`.
    pub fn cols(&self) -> usize {
        match self {
            Weight::Ggml { k, .. } => *k,
            Weight::Dense(w) => w.shape()[1],
            Weight::Affine { w, bits, .. } => w.shape()[1] * 32 / (*bits).max(1) as usize,
        }
    }

    /// Checks the weight is `(rows, cols)`; `name` goes into the error.
    pub fn expect_shape(&self, name: &str, rows: usize, cols: usize) -> Result<()> {
        if self.rows() != rows || self.cols() != cols {
            return Err(Error::format(
                "load_model",
                format!("tensor '{name}' is {}x{} but the model needs {rows}x{cols}", self.rows(), self.cols()),
            ));
        }
        Ok(())
    }

    /// `x @ Wᵀ` for `x` of shape `(..., K)`: the result is `(..., N)` in `x`'s dtype.
    pub fn project(&self, x: &Array) -> Result<Array> {
        match self {
            Weight::Ggml { blocks, ty, k } => ops::ggml_matmul(x, blocks, *ty, *k),
            // Half-precision weights multiply half-precision activations (as mlx-lm runs
            // them) rather than being promoted to f32 — a copy of the whole matrix — per call.
            Weight::Dense(w) if w.dtype() != x.dtype() => {
                let y = ops::matmul(&ops::astype(x, w.dtype())?, &ops::transpose(w, None)?)?;
                ops::astype(&y, x.dtype())
            }
            Weight::Dense(w) => ops::matmul(x, &ops::transpose(w, None)?),
            Weight::Affine { w, scales, biases, group_size, bits } => ops::quantized_matmul(
                x,
                w,
                scales,
                Some(biases),
                true,
                Some(*group_size),
                Some(*bits),
                "affine",
            ),
        }
    }

    /// `x @ Wᵀ` for each of `weights` (all `K` columns), as [`Weight::project`] of each. On
    /// the CPU, GGUF weights go through one `ggml_matmul_many`: one pass of the thread pool
    /// for all of them (a decode step's Q/K/V and gate/up projections are each a few
    /// microseconds of work per thread, which the pool's wake-up would otherwise double).
    pub fn project_all(weights: &[&Weight], x: &Array) -> Result<Vec<Array>> {
        let blocks: Option<Vec<(&Array, GgmlType, usize)>> = weights
            .iter()
            .map(|w| match w {
                Weight::Ggml { blocks, ty, k } => Some((blocks, *ty, *k)),
                _ => None,
            })
            .collect();
        match blocks {
            Some(b) if b.len() > 1 && b.iter().all(|&(_, _, k)| k == b[0].2) && many_runs(&b, x.dtype()) => {
                let pairs: Vec<(&Array, GgmlType)> = b.iter().map(|&(w, ty, _)| (w, ty)).collect();
                ops::ggml_matmul_many(x, &pairs, b[0].2)
            }
            _ => weights.iter().map(|w| w.project(x)).collect(),
        }
    }

    /// Rows `ids` (an integer array of any shape) expanded to `dtype`: shape `ids.shape + (K,)`.
    pub fn lookup(&self, ids: &Array, dtype: DType) -> Result<Array> {
        let flat = ops::reshape(ids, &[-1])?;
        let rows = match self {
            Weight::Ggml { blocks, ty, k } => {
                let picked = ops::take(blocks, &flat, Some(0))?;
                ops::ggml_dequantize(&picked, *ty, *k)?
            }
            Weight::Dense(w) => ops::take(w, &flat, Some(0))?,
            Weight::Affine { w, scales, biases, group_size, bits } => ops::dequantize(
                &ops::take(w, &flat, Some(0))?,
                &ops::take(scales, &flat, Some(0))?,
                Some(&ops::take(biases, &flat, Some(0))?),
                Some(*group_size),
                Some(*bits),
                "affine",
                None,
                Some(dtype),
            )?,
        };
        let mut shape: Vec<isize> = ids.shape().iter().map(|&d| d as isize).collect();
        shape.push(self.cols() as isize);
        let rows = if rows.dtype() == dtype { rows } else { ops::astype(&rows, dtype)? };
        ops::reshape(&rows, &shape)
    }
}

/// A 1-D float vector (norm weights, biases) as `dtype`.
pub fn vector(a: &Array, len: usize, name: &str, dtype: DType) -> Result<Array> {
    if a.size() != len {
        return Err(Error::format(
            "load_model",
            format!("tensor '{name}' has {} elements but the model needs {len}", a.size()),
        ));
    }
    let v = ops::reshape(a, &[len as isize])?;
    if v.dtype() == dtype {
        Ok(v)
    } else {
        ops::astype(&v, dtype)
    }
}

/// Reinterprets GGUF bytes of a plain float tensor (F32/F16/BF16) as a float array of
/// `shape` — a view, no copy.
pub fn plain_from_blocks(blocks: &Array, ty: GgmlType, shape: &[usize], name: &str) -> Result<Array> {
    let dtype = match ty {
        GgmlType::F32 => DType::Float32,
        GgmlType::F16 => DType::Float16,
        GgmlType::BF16 => DType::Bfloat16,
        other => {
            return Err(Error::format(
                "load_model",
                format!("tensor '{name}' must be F32, F16 or BF16 but is {}", other.name()),
            ))
        }
    };
    let flat = ops::reshape(blocks, &[-1])?;
    let v = ops::view(&flat, dtype)?;
    let shape: Vec<isize> = shape.iter().map(|&d| d as isize).collect();
    if v.size() != shape.iter().product::<isize>() as usize {
        return Err(Error::format("load_model", format!("tensor '{name}' has the wrong number of bytes")));
    }
    ops::reshape(&v, &shape)
}
