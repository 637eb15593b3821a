//! Quantization modes, their defaults, and MLX's argument checks with its exact messages
//! (`quantization_params_from_mode`, `quantize`, `affine_quantize`, `fp_quantize`,
//! `validate_mode_with_type`, `dequantize`, `quantized_matmul` in MLX's `ops.cpp`).

use alloc::format;
use alloc::string::String;

use crate::dtype::{promote_types, DType};
use crate::error::{Error, Result};

/// One of MLX's quantization modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum QuantMode {
    /// `w ≈ scale * q + bias` per group, `q` unsigned with 1–6 or 8 bits.
    Affine,
    /// OCP MX FP4 (E2M1 elements, E8M0 scale per 32).
    Mxfp4,
    /// OCP MX FP8 (E4M3 elements, E8M0 scale per 32).
    Mxfp8,
    /// NVIDIA FP4 (E2M1 elements, E4M3 scale per 16, optional f32 global scale).
    Nvfp4,
}

impl QuantMode {
    /// Parses MLX's mode name; `op` tags the error (`[quantize] Invalid quantization mode 'x'.`).
    pub fn parse(name: &str, op: &'static str) -> Result<Self> {
        match name {
            "affine" => Ok(QuantMode::Affine),
            "mxfp4" => Ok(QuantMode::Mxfp4),
            "mxfp8" => Ok(QuantMode::Mxfp8),
            "nvfp4" => Ok(QuantMode::Nvfp4),
            _ => Err(Error::invalid(op, format!("Invalid quantization mode '{name}'."))),
        }
    }
    /// MLX's name for the mode.
    pub const fn name(self) -> &'static str {
        match self {
            QuantMode::Affine => "affine",
            QuantMode::Mxfp4 => "mxfp4",
            QuantMode::Mxfp8 => "mxfp8",
            QuantMode::Nvfp4 => "nvfp4",
        }
    }
    /// Default group size (affine 64, nvfp4 16, mx 32).
    pub const fn default_group_size(self) -> i64 {
        match self {
            QuantMode::Affine => 64,
            QuantMode::Nvfp4 => 16,
            QuantMode::Mxfp4 | QuantMode::Mxfp8 => 32,
        }
    }
    /// Default bits (mxfp8 8, otherwise 4).
    pub const fn default_bits(self) -> i64 {
        match self {
            QuantMode::Mxfp8 => 8,
            _ => 4,
        }
    }
    /// Whether the mode stores `uint8` scales and no biases.
    pub const fn is_fp(self) -> bool {
        !matches!(self, QuantMode::Affine)
    }
    /// The dtype `dequantize` returns when none is requested: the scales' dtype for affine,
    /// `bfloat16` for the fp modes.
    pub const fn default_dequantize_dtype(self, scales: DType) -> DType {
        match self {
            QuantMode::Affine => scales,
            _ => DType::Bfloat16,
        }
    }
}

/// Validated parameters: every kernel in this module takes these.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QuantParams {
    /// The mode.
    pub mode: QuantMode,
    /// Elements per scale (32/64/128 for affine, 32 mx, 16 nvfp4).
    pub group_size: usize,
    /// Bits per element (1–6 or 8 for affine, 4 or 8 for fp modes).
    pub bits: u32,
}

impl QuantParams {
    /// Checks `group_size`/`bits` for `mode` with MLX's messages (tagged `op`).
    pub fn new(op: &'static str, mode: QuantMode, group_size: i64, bits: i64) -> Result<Self> {
        if mode == QuantMode::Affine {
            if !matches!(group_size, 32 | 64 | 128) {
                return Err(Error::invalid(op, format!(
                    "The requested group size {group_size} is not supported. The supported group sizes are 32, 64, and 128.")));
            }
            if !(1..=8).contains(&bits) || bits == 7 {
                return Err(Error::invalid(op, format!(
                    "The requested number of bits {bits} is not supported. The supported bits are 1, 2, 3, 4, 5, 6 and 8.")));
            }
        } else {
            let (gs, b) = (mode.default_group_size(), mode.default_bits());
            if group_size != gs {
                return Err(Error::invalid(op, format!(
                    "{} quantization requires group size {gs} but got {group_size}.", mode.name())));
            }
            if bits != b {
                return Err(Error::invalid(op, format!(
                    "{} quantization requires bits to be {b} but got {bits}.", mode.name())));
            }
        }
        // Both are small positive constants here.
        Ok(QuantParams { mode, group_size: group_size as usize, bits: bits as u32 })
    }

    /// `uint32` words per row of `k` elements, if `k` is a whole number of groups.
    pub fn words_per_row(&self, op: &'static str, k: usize) -> Result<usize> {
        if self.group_size == 0 || k % self.group_size != 0 {
            return Err(Error::invalid(op, format!(
                "The last dimension {k} is not divisible by the quantization group size {}.", self.group_size)));
        }
        // k*bits is a multiple of 32 because group_size*bits is (group >= 16, bits 4/8 for
        // group 16; group >= 32 otherwise).
        let bits_total = k.checked_mul(self.bits as usize).ok_or_else(|| Error::invalid(op, "Row too long."))?;
        if bits_total % 32 != 0 {
            return Err(Error::invalid(op, format!("{k} elements of {} bits do not fill whole uint32 words.", self.bits)));
        }
        Ok(bits_total / 32)
    }

    /// Scales (and biases) per row of `k` elements.
    pub fn groups_per_row(&self, op: &'static str, k: usize) -> Result<usize> {
        self.words_per_row(op, k)?;
        Ok(k / self.group_size)
    }
}

/// MLX's shape printing: `(4,48)`.
pub(crate) fn shape_str(shape: &[usize]) -> String {
    let mut s = String::from("(");
    for (i, d) in shape.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        s.push_str(&format!("{d}"));
    }
    s.push(')');
    s
}

/// The checks of `mx.quantize(w, group_size, bits, mode, global_scale)`, in MLX's order.
/// `global_scale` is the (dtype, shape) of the optional global-scale array.
pub fn validate_quantize(
    mode: &str,
    w_dtype: DType,
    w_shape: &[usize],
    group_size: Option<i64>,
    bits: Option<i64>,
    global_scale: Option<(DType, &[usize])>,
) -> Result<QuantParams> {
    const OP: &str = "quantize";
    let qmode = QuantMode::parse(mode, OP)?;
    let gs = group_size.unwrap_or(qmode.default_group_size());
    let b = bits.unwrap_or(qmode.default_bits());
    if !w_dtype.is_float() {
        return Err(Error::invalid(OP, format!(
            "Only real floating types can be quantized but w has type {w_dtype}.")));
    }
    if w_shape.len() < 2 {
        return Err(Error::invalid(OP, format!(
            "The matrix to be quantized must have at least 2 dimension but it has only {}.", w_shape.len())));
    }
    let k = w_shape[w_shape.len() - 1];
    // MLX divides by the group size here (undefined for 0); the mode check reports it instead.
    if gs > 0 && (k as u64) % (gs as u64) != 0 {
        return Err(Error::invalid(OP, format!(
            "The last dimension of the matrix needs to be divisible by the quantization group size {gs}. However the provided  matrix has shape {}",
            shape_str(w_shape))));
    }
    validate_global_scale(OP, qmode, global_scale)?;
    QuantParams::new(OP, qmode, gs, b)
}

fn validate_global_scale(op: &'static str, mode: QuantMode, gs: Option<(DType, &[usize])>) -> Result<()> {
    if let Some((dt, shape)) = gs {
        if mode != QuantMode::Nvfp4 {
            return Err(Error::invalid(op, "Global scale is only supported for 'nvfp4' quantization mode."));
        }
        if shape.iter().product::<usize>() != 1 {
            return Err(Error::invalid(op, format!("Global scale must be a scalar but got shape {}.", shape_str(shape))));
        }
        if dt != DType::Float32 {
            return Err(Error::invalid(op, format!("Global scale must have dtype float32 but got {dt}.")));
        }
    }
    Ok(())
}

/// MLX's `validate_mode_with_type`: the mode and the result dtype of a dequantize/qmm.
fn mode_with_type(
    op: &'static str,
    mode: &str,
    scales: DType,
    biases: Option<DType>,
    out: Option<DType>,
) -> Result<(QuantMode, DType)> {
    let qmode = QuantMode::parse(mode, op)?;
    if let Some(o) = out {
        if !o.is_float() {
            return Err(Error::invalid(op, format!("Only real floating types are supported but output dtype == {o}.")));
        }
    }
    if qmode == QuantMode::Affine {
        let Some(b) = biases else {
            return Err(Error::invalid(op, "Biases must be provided for affine quantization."));
        };
        let dt = promote_types(scales, b);
        if !dt.is_float() {
            return Err(Error::invalid(op, format!(
                "Only real floating types are supported but scales.dtype() == {scales} and biases.dtype() == {b}.")));
        }
        return Ok((qmode, out.unwrap_or(dt)));
    }
    if scales != DType::Uint8 {
        return Err(Error::invalid(op, format!("Scale type must be uint8 but received type {scales}.")));
    }
    if biases.is_some() {
        return Err(Error::invalid(op, format!("Biases must be null for quantization mode '{mode}'.")));
    }
    Ok((qmode, out.unwrap_or(DType::Bfloat16)))
}

/// A (dtype, shape) pair describing an array argument.
pub type ArgDesc<'a> = (DType, &'a [usize]);

/// The checks of `mx.dequantize(w, scales, biases, group_size, bits, mode, global_scale,
/// dtype)` in MLX's order. Returns the parameters and the output dtype.
#[allow(clippy::too_many_arguments)]
pub fn validate_dequantize(
    mode: &str,
    w: ArgDesc<'_>,
    scales: ArgDesc<'_>,
    biases: Option<ArgDesc<'_>>,
    group_size: Option<i64>,
    bits: Option<i64>,
    global_scale: Option<ArgDesc<'_>>,
    dtype: Option<DType>,
) -> Result<(QuantParams, DType)> {
    const OP: &str = "dequantize";
    let (qmode, out) = mode_with_type(OP, mode, scales.0, biases.map(|b| b.0), dtype)?;
    let gs = group_size.unwrap_or(qmode.default_group_size());
    let b = bits.unwrap_or(qmode.default_bits());
    if b <= 0 {
        return Err(Error::invalid(OP, format!("Invalid value for bits: {b}")));
    }
    if gs <= 0 {
        return Err(Error::invalid(OP, format!("Invalid value for group_size: {gs}")));
    }
    if w.0 != DType::Uint32 {
        return Err(Error::invalid(OP, "The matrix should be given as a uint32"));
    }
    if w.1.len() < 2 {
        return Err(Error::invalid(OP, format!(
            "The matrix to be dequantized must have at least 2 dimension but it has only {}.", w.1.len())));
    }
    validate_global_scale(OP, qmode, global_scale)?;
    let same_batch = |a: &[usize]| a.len() == w.1.len() && a[..a.len() - 1] == w.1[..w.1.len() - 1];
    let out_size = (w.1[w.1.len() - 1] as u64) * 32 / (b as u64);
    let s_last = scales.1.last().copied().unwrap_or(0) as u64;
    if qmode == QuantMode::Affine {
        let bsh = biases.map(|x| x.1).unwrap_or(&[]);
        if !same_batch(scales.1) || !same_batch(bsh) {
            return Err(Error::invalid(OP, "Shape of scales and biases does not match the matrix"));
        }
        if Some(out_size) != s_last.checked_mul(gs as u64) {
            return Err(Error::invalid(OP, format!(
                "Shape of scales and biases does not match the matrix given the quantization parameters. Provided matrix of shape {} and scales/biases of shape {} with group_size={gs} and bits={b}.",
                shape_str(w.1), shape_str(scales.1))));
        }
        // The affine fallback accepts any bits; the kernels need 1..=8.
        if b > 8 || b == 7 {
            return Err(Error::invalid(OP, format!("Invalid value for bits: {b}")));
        }
        return Ok((QuantParams { mode: qmode, group_size: gs as usize, bits: b as u32 }, out));
    }
    let p = QuantParams::new(OP, qmode, gs, b)?;
    if !same_batch(scales.1) {
        return Err(Error::invalid(OP, "Shape of scales does not match the matrix"));
    }
    if Some(out_size) != s_last.checked_mul(gs as u64) {
        return Err(Error::invalid(OP, format!(
            "Shape of scales does not match the matrix given the quantization parameters. Provided matrix of shape {} and scales of shape {}.",
            shape_str(w.1), shape_str(scales.1))));
    }
    Ok((p, out))
}

/// The checks of `mx.quantized_matmul(x, w, scales, biases, transpose, group_size, bits,
/// mode)` for 2-D-or-more `w` and `x`. Returns the parameters, the output dtype, and the
/// expanded `(inner K, outer N)` of the weight.
#[allow(clippy::too_many_arguments)]
pub fn validate_quantized_matmul(
    mode: &str,
    x: ArgDesc<'_>,
    w: ArgDesc<'_>,
    scales: ArgDesc<'_>,
    biases: Option<ArgDesc<'_>>,
    transpose: bool,
    group_size: Option<i64>,
    bits: Option<i64>,
) -> Result<(QuantParams, DType, usize, usize)> {
    const OP: &str = "quantized_matmul";
    let (qmode, dt) = mode_with_type(OP, mode, scales.0, biases.map(|b| b.0), None)?;
    let gs = group_size.unwrap_or(qmode.default_group_size());
    let b = bits.unwrap_or(qmode.default_bits());
    if w.0 != DType::Uint32 {
        return Err(Error::invalid(OP, format!("The weight matrix should be uint32 but received {}", w.0)));
    }
    if let Some(bi) = biases {
        if bi.1 != scales.1 {
            return Err(Error::invalid(OP, format!(
                "Scales and biases should have the same shape. Received scales with shape {} and biases with {}",
                shape_str(scales.1), shape_str(bi.1))));
        }
    }
    if w.1.len() < 2 || scales.1.len() < 2 || x.1.is_empty() {
        return Err(Error::invalid(OP, "Inputs must have at least 2 dimensions (x at least 1)."));
    }
    if w.1.len() != scales.1.len() || w.1[..w.1.len() - 2] != scales.1[..scales.1.len() - 2] {
        return Err(Error::invalid(OP, format!(
            "Weight and scales should have the same batch shape. Received weight with shape {}, scales with {}.",
            shape_str(w.1), shape_str(scales.1))));
    }
    if b <= 0 || gs <= 0 {
        return Err(Error::invalid(OP, format!("Invalid group_size={gs} or bits={b}.")));
    }
    let wl = w.1[w.1.len() - 1] as u64;
    let sl = scales.1[scales.1.len() - 1] as u64;
    if wl * 32 / (b as u64) != sl * (gs as u64) {
        return Err(Error::invalid(OP, format!(
            "The shapes of the weight and scales are incompatible based on bits and group_size. w.shape() == {} and scales.shape() == {} with group_size={gs} and bits={b}",
            shape_str(w.1), shape_str(scales.1))));
    }
    let expanded = (wl * 32 / (b as u64)) as usize;
    let rows = w.1[w.1.len() - 2];
    let (inner, outer) = if transpose { (expanded, rows) } else { (rows, expanded) };
    let xk = x.1[x.1.len() - 1];
    if inner != xk {
        return Err(Error::invalid(OP, format!(
            "Last dimension of first input with shape (..., {xk}) does not match the expanded quantized matrix ({inner}, {outer}) computed from shape {} with group_size={gs}, bits={b} and transpose={transpose}",
            shape_str(w.1))));
    }
    let out = if qmode == QuantMode::Affine { promote_types(x.0, dt) } else { x.0 };
    if !out.is_float() {
        return Err(Error::invalid(OP, format!("Only real floating types are supported but x.dtype() == {}.", x.0)));
    }
    // MLX only finds unsupported affine bits/group sizes when the kernel runs; we report
    // them here with `quantize`'s wording.
    let p = QuantParams::new(OP, qmode, gs, b)?;
    Ok((p, out, inner, outer))
}
