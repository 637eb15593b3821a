//! The bytes of one primitive in an exported function: a family tag, then the op's parameters.
//! Encoder and decoder match every variant (no wildcard arm), so a new op or parameter is a
//! compile error here until it is given a wire form or explicitly refused. Elementwise ops are
//! written by MLX name (stable when the op tables are reordered); other families by tag.

use super::wire::Writer;
use crate::error::{Error, Result};
use crate::io::cursor::Cursor;
use crate::ops::binary::BinaryOp;
use crate::ops::cast::CastOp;
use crate::ops::creation::CreationOp;
use crate::ops::fast::custom_kernel::CustomKernel;
use crate::ops::fast::FastOp;
use crate::ops::index::{IndexOp, ScatterMode};
use crate::ops::linalg::{ConvParams, LinalgOp};
use crate::ops::quantized::QuantizedOp;
use crate::quant::mlx::QuantMode;
use crate::quant::GgmlType;
use crate::ops::reduce::{ReduceKind, ReduceOp, ScanKind};
use crate::ops::shape::ShapeOp;
use crate::ops::sort::SortOp;
use crate::ops::unary::UnaryOp;
use crate::primitive::{Primitive, F64};
use alloc::format;
use alloc::vec::Vec;

/// The error for an op that has no wire form yet (raised when exporting, never a wrong file).
fn not_exportable(prim: &Primitive) -> Error {
    Error::unsupported(
        "export_function",
        format!("Exporting a function that uses the primitive '{}' is not supported yet.", prim.name()),
    )
}

/// Appends `prim` to `w`, or says it cannot be exported.
pub(super) fn encode(w: &mut Writer, prim: &Primitive) -> Result<()> {
    match prim {
        Primitive::Unary(op) => {
            w.u8(1);
            w.str(op.name());
        }
        Primitive::Binary(op) => {
            w.u8(2);
            w.str(op.name());
        }
        Primitive::Select => w.u8(3),
        Primitive::Cast(op) => {
            w.u8(4);
            w.u8(match op {
                CastOp::AsType => 0,
                CastOp::View => 1,
            });
        }
        Primitive::Reduce(op) => {
            w.u8(5);
            match op {
                ReduceOp::Reduce { kind, axes } => {
                    w.u8(0);
                    w.u8(*kind as u8);
                    w.usizes(axes);
                }
                ReduceOp::ArgReduce { max, axis } => {
                    w.u8(1);
                    w.bool(*max);
                    w.usize(*axis);
                }
                ReduceOp::Scan { kind, axis, reverse, inclusive } => {
                    w.u8(2);
                    w.u8(*kind as u8);
                    w.usize(*axis);
                    w.bool(*reverse);
                    w.bool(*inclusive);
                }
            }
        }
        Primitive::Shape(op) => {
            w.u8(6);
            encode_shape(w, prim, op)?;
        }
        Primitive::Index(op) => {
            w.u8(7);
            match op {
                IndexOp::Gather { axes, slice_sizes } => {
                    w.u8(0);
                    w.usizes(axes);
                    w.usizes(slice_sizes);
                }
                IndexOp::Scatter { axes, mode } => {
                    w.u8(1);
                    w.usizes(axes);
                    w.u8(*mode as u8);
                }
            }
        }
        Primitive::Sort(op) => {
            w.u8(8);
            match op {
                SortOp::Sort { axis } => {
                    w.u8(0);
                    w.usize(*axis);
                }
                SortOp::ArgSort { axis } => {
                    w.u8(1);
                    w.usize(*axis);
                }
                SortOp::Partition { kth, axis } => {
                    w.u8(2);
                    w.usize(*kth);
                    w.usize(*axis);
                }
                SortOp::ArgPartition { kth, axis } => {
                    w.u8(3);
                    w.usize(*kth);
                    w.usize(*axis);
                }
                SortOp::SearchSorted { right } => {
                    w.u8(4);
                    w.bool(*right);
                }
            }
        }
        Primitive::Linalg(op) => {
            w.u8(9);
            match op {
                LinalgOp::Matmul => w.u8(0),
                LinalgOp::AddMM { alpha, beta } => {
                    w.u8(1);
                    w.u64(alpha.0);
                    w.u64(beta.0);
                }
                LinalgOp::Conv(p) => {
                    w.u8(2);
                    for v in [&p.stride, &p.pad_lo, &p.pad_hi, &p.kernel_dilation, &p.input_dilation] {
                        w.usizes(v);
                    }
                    w.usize(p.groups);
                    w.bool(p.flip);
                }
                LinalgOp::SingularValues
                | LinalgOp::Inverse { .. }
                | LinalgOp::Cholesky { .. }
                | LinalgOp::Qr
                | LinalgOp::Svd
                | LinalgOp::Eigh { .. }
                | LinalgOp::Eig { .. }
                | LinalgOp::Lu => return Err(not_exportable(prim)),
            }
        }
        Primitive::Creation(CreationOp::Arange { start, step }) => {
            w.u8(10);
            w.u64(start.0);
            w.u64(step.0);
        }
        // The CPU's fused softmax (`mx.softmax` over the last axis of float32 rows).
        Primitive::Fast(FastOp::Softmax) => w.u8(11),
        Primitive::Quantized(op) => {
            w.u8(12);
            encode_quantized(w, op);
        }
        Primitive::Fast(FastOp::MetalKernel(k)) => {
            w.u8(13);
            encode_metal_kernel(w, k);
        }
        Primitive::Random(_)
        | Primitive::Fast(_)
        | Primitive::Fft(_)
        | Primitive::Custom(_)
        | Primitive::Fused(_)
        | Primitive::FusedReduce(_) => return Err(not_exportable(prim)),
    }
    Ok(())
}

/// A Metal kernel: its name and source, grid and threadgroup, the per-input shape flags,
/// then the flags and values MLX's `CustomKernel` holds.
fn encode_metal_kernel(w: &mut Writer, k: &CustomKernel) {
    w.str(&k.name);
    w.str(&k.source);
    k.grid.iter().chain(&k.threadgroup).for_each(|&v| w.i64(i64::from(v)));
    w.count(k.shape_infos.len());
    k.shape_infos.iter().flatten().for_each(|&b| w.bool(b));
    w.bool(k.ensure_row_contiguous);
    w.bool(k.init_value.is_some());
    w.u32(k.init_value.unwrap_or(0));
    w.u8(k.math_mode);
}

fn decode_metal_kernel(c: &mut Cursor) -> Result<CustomKernel> {
    let name = read_str(c)?;
    let source = read_str(c)?;
    let mut dims = [0i32; 6];
    for d in &mut dims {
        let v = c.u64("grid size")? as i64;
        *d = i32::try_from(v).map_err(|_| c.err(format!("grid size {v} is out of range")))?;
    }
    let n = c.u32("input count")? as usize;
    if n > c.remaining() / 3 {
        return Err(c.err(format!("{n} inputs' shape flags are longer than the {} bytes left", c.remaining())));
    }
    let shape_infos = (0..n).map(|_| Ok([read_bool(c)?, read_bool(c)?, read_bool(c)?])).collect::<Result<Vec<_>>>()?;
    let ensure_row_contiguous = read_bool(c)?;
    let has_init = read_bool(c)?;
    let init = c.u32("init value")?;
    let math_mode = c.u8("math mode")?;
    if math_mode > 2 {
        return Err(c.err(format!("unknown math mode {math_mode}")));
    }
    Ok(CustomKernel {
        name,
        source,
        grid: [dims[0], dims[1], dims[2]],
        threadgroup: [dims[3], dims[4], dims[5]],
        shape_infos,
        ensure_row_contiguous,
        init_value: has_init.then_some(init),
        math_mode,
    })
}

/// A quantized op: a tag, then its parameters (modes by MLX name, GGUF types by ggml id).
fn encode_quantized(w: &mut Writer, op: &QuantizedOp) {
    let params = |w: &mut Writer, mode: &QuantMode, group_size: usize, bits: u32| {
        w.str(mode.name());
        w.usize(group_size);
        w.u32(bits);
    };
    match op {
        QuantizedOp::Quantize { mode, group_size, bits } => {
            w.u8(0);
            params(w, mode, *group_size, *bits);
        }
        QuantizedOp::Dequantize { mode, group_size, bits } => {
            w.u8(1);
            params(w, mode, *group_size, *bits);
        }
        QuantizedOp::QuantizedMatmul { mode, group_size, bits, transpose } => {
            w.u8(2);
            params(w, mode, *group_size, *bits);
            w.bool(*transpose);
        }
        QuantizedOp::GatherQmm { mode, group_size, bits, transpose } => {
            w.u8(3);
            params(w, mode, *group_size, *bits);
            w.bool(*transpose);
        }
        QuantizedOp::ToFp8 => w.u8(4),
        QuantizedOp::FromFp8 => w.u8(5),
        QuantizedOp::GgmlMatmul { ty, k } => {
            w.u8(6);
            w.u32(ty.id());
            w.usize(*k);
        }
        QuantizedOp::GgmlMatmulMany { tys, k } => {
            w.u8(7);
            w.count(tys.len());
            tys.iter().for_each(|t| w.u32(t.id()));
            w.usize(*k);
        }
        QuantizedOp::GgmlDequantize { ty, k } => {
            w.u8(8);
            w.u32(ty.id());
            w.usize(*k);
        }
        QuantizedOp::GgmlQuantize { ty } => {
            w.u8(9);
            w.u32(ty.id());
        }
    }
}

fn encode_shape(w: &mut Writer, prim: &Primitive, op: &ShapeOp) -> Result<()> {
    match op {
        ShapeOp::Reshape => w.u8(0),
        ShapeOp::Transpose(perm) => {
            w.u8(1);
            w.usizes(perm);
        }
        ShapeOp::Broadcast => w.u8(2),
        ShapeOp::Slice { start, step } => {
            w.u8(3);
            w.isizes(start);
            w.isizes(step);
        }
        ShapeOp::AsStrided { strides, offset } => {
            w.u8(4);
            w.isizes(strides);
            w.usize(*offset);
        }
        ShapeOp::Copy => w.u8(5),
        ShapeOp::Concatenate(axis) => {
            w.u8(6);
            w.usize(*axis);
        }
        ShapeOp::Diagonal { offset, axis1, axis2 } => {
            w.u8(7);
            w.i64(*offset as i64);
            w.usize(*axis1);
            w.usize(*axis2);
        }
        ShapeOp::StopGradient => w.u8(8),
        ShapeOp::BroadcastAxes(ignore) => {
            w.u8(9);
            w.isizes(ignore);
        }
        ShapeOp::SliceUpdate { .. } | ShapeOp::DynamicSlice { .. } | ShapeOp::DynamicSliceUpdate { .. } | ShapeOp::Depends(_) => {
            return Err(not_exportable(prim))
        }
    }
    Ok(())
}

/// Reads one primitive written by [`encode`].
pub(super) fn decode(c: &mut Cursor) -> Result<Primitive> {
    let family = c.u8("primitive family")?;
    Ok(match family {
        1 => {
            let name = read_str(c)?;
            Primitive::Unary(*UnaryOp::ALL.iter().find(|o| o.name() == name).ok_or_else(|| c.err(format!("unknown unary op '{name}'")))?)
        }
        2 => {
            let name = read_str(c)?;
            Primitive::Binary(*BinaryOp::ALL.iter().find(|o| o.name() == name).ok_or_else(|| c.err(format!("unknown binary op '{name}'")))?)
        }
        3 => Primitive::Select,
        4 => Primitive::Cast(match c.u8("cast op")? {
            0 => CastOp::AsType,
            1 => CastOp::View,
            t => return Err(c.err(format!("unknown cast op tag {t}"))),
        }),
        5 => Primitive::Reduce(match c.u8("reduce op")? {
            0 => ReduceOp::Reduce { kind: reduce_kind(c)?, axes: read_usizes(c)? },
            1 => ReduceOp::ArgReduce { max: read_bool(c)?, axis: c.u64_usize("axis")? },
            2 => ReduceOp::Scan { kind: scan_kind(c)?, axis: c.u64_usize("axis")?, reverse: read_bool(c)?, inclusive: read_bool(c)? },
            t => return Err(c.err(format!("unknown reduce op tag {t}"))),
        }),
        6 => Primitive::Shape(decode_shape(c)?),
        7 => Primitive::Index(match c.u8("index op")? {
            0 => IndexOp::Gather { axes: read_usizes(c)?, slice_sizes: read_usizes(c)? },
            1 => IndexOp::Scatter { axes: read_usizes(c)?, mode: scatter_mode(c)? },
            t => return Err(c.err(format!("unknown index op tag {t}"))),
        }),
        8 => Primitive::Sort(match c.u8("sort op")? {
            0 => SortOp::Sort { axis: c.u64_usize("axis")? },
            1 => SortOp::ArgSort { axis: c.u64_usize("axis")? },
            2 => SortOp::Partition { kth: c.u64_usize("kth")?, axis: c.u64_usize("axis")? },
            3 => SortOp::ArgPartition { kth: c.u64_usize("kth")?, axis: c.u64_usize("axis")? },
            4 => SortOp::SearchSorted { right: read_bool(c)? },
            t => return Err(c.err(format!("unknown sort op tag {t}"))),
        }),
        9 => Primitive::Linalg(match c.u8("linalg op")? {
            0 => LinalgOp::Matmul,
            1 => LinalgOp::AddMM { alpha: F64(c.u64("alpha")?), beta: F64(c.u64("beta")?) },
            2 => LinalgOp::Conv(ConvParams {
                stride: read_usizes(c)?,
                pad_lo: read_usizes(c)?,
                pad_hi: read_usizes(c)?,
                kernel_dilation: read_usizes(c)?,
                input_dilation: read_usizes(c)?,
                groups: c.u64_usize("groups")?,
                flip: read_bool(c)?,
            }),
            t => return Err(c.err(format!("unknown linalg op tag {t}"))),
        }),
        10 => Primitive::Creation(CreationOp::Arange { start: F64(c.u64("start")?), step: F64(c.u64("step")?) }),
        11 => Primitive::Fast(FastOp::Softmax),
        12 => Primitive::Quantized(decode_quantized(c)?),
        13 => Primitive::Fast(FastOp::MetalKernel(alloc::sync::Arc::new(decode_metal_kernel(c)?))),
        t => return Err(c.err(format!("unknown primitive family tag {t}"))),
    })
}

fn decode_quantized(c: &mut Cursor) -> Result<QuantizedOp> {
    let params = |c: &mut Cursor| -> Result<(QuantMode, usize, u32)> {
        let name = read_str(c)?;
        let mode = QuantMode::parse(&name, "import_function").map_err(|_| c.err(format!("unknown quantization mode '{name}'")))?;
        Ok((mode, c.u64_usize("group size")?, c.u32("bits")?))
    };
    let ggml = |c: &mut Cursor| -> Result<GgmlType> {
        let id = c.u32("GGML type")?;
        GgmlType::from_id(id).ok_or_else(|| c.err(format!("unknown GGML type {id}")))
    };
    Ok(match c.u8("quantized op")? {
        0 => {
            let (mode, group_size, bits) = params(c)?;
            QuantizedOp::Quantize { mode, group_size, bits }
        }
        1 => {
            let (mode, group_size, bits) = params(c)?;
            QuantizedOp::Dequantize { mode, group_size, bits }
        }
        2 => {
            let (mode, group_size, bits) = params(c)?;
            QuantizedOp::QuantizedMatmul { mode, group_size, bits, transpose: read_bool(c)? }
        }
        3 => {
            let (mode, group_size, bits) = params(c)?;
            QuantizedOp::GatherQmm { mode, group_size, bits, transpose: read_bool(c)? }
        }
        4 => QuantizedOp::ToFp8,
        5 => QuantizedOp::FromFp8,
        6 => QuantizedOp::GgmlMatmul { ty: ggml(c)?, k: c.u64_usize("k")? },
        7 => {
            let n = c.u32("type count")? as usize;
            if n > c.remaining() / 4 {
                return Err(c.err(format!("a list of {n} GGML types is longer than the {} bytes left", c.remaining())));
            }
            let tys = (0..n).map(|_| ggml(c)).collect::<Result<Vec<_>>>()?;
            QuantizedOp::GgmlMatmulMany { tys, k: c.u64_usize("k")? }
        }
        8 => QuantizedOp::GgmlDequantize { ty: ggml(c)?, k: c.u64_usize("k")? },
        9 => QuantizedOp::GgmlQuantize { ty: ggml(c)? },
        t => return Err(c.err(format!("unknown quantized op tag {t}"))),
    })
}

fn decode_shape(c: &mut Cursor) -> Result<ShapeOp> {
    Ok(match c.u8("shape op")? {
        0 => ShapeOp::Reshape,
        1 => ShapeOp::Transpose(read_usizes(c)?),
        2 => ShapeOp::Broadcast,
        3 => ShapeOp::Slice { start: read_isizes(c)?, step: read_isizes(c)? },
        4 => ShapeOp::AsStrided { strides: read_isizes(c)?, offset: c.u64_usize("offset")? },
        5 => ShapeOp::Copy,
        6 => ShapeOp::Concatenate(c.u64_usize("axis")?),
        7 => ShapeOp::Diagonal { offset: read_isize(c)?, axis1: c.u64_usize("axis1")?, axis2: c.u64_usize("axis2")? },
        8 => ShapeOp::StopGradient,
        9 => ShapeOp::BroadcastAxes(read_isizes(c)?),
        t => return Err(c.err(format!("unknown shape op tag {t}"))),
    })
}

fn reduce_kind(c: &mut Cursor) -> Result<ReduceKind> {
    const ALL: [ReduceKind; 6] = [ReduceKind::Sum, ReduceKind::Prod, ReduceKind::Max, ReduceKind::Min, ReduceKind::All, ReduceKind::Any];
    let t = c.u8("reduce kind")?;
    ALL.iter().copied().find(|k| *k as u8 == t).ok_or_else(|| c.err(format!("unknown reduce kind {t}")))
}

fn scan_kind(c: &mut Cursor) -> Result<ScanKind> {
    const ALL: [ScanKind; 5] = [ScanKind::Sum, ScanKind::Prod, ScanKind::Max, ScanKind::Min, ScanKind::LogAddExp];
    let t = c.u8("scan kind")?;
    ALL.iter().copied().find(|k| *k as u8 == t).ok_or_else(|| c.err(format!("unknown scan kind {t}")))
}

fn scatter_mode(c: &mut Cursor) -> Result<ScatterMode> {
    const ALL: [ScatterMode; 5] = [ScatterMode::Set, ScatterMode::Add, ScatterMode::Prod, ScatterMode::Max, ScatterMode::Min];
    let t = c.u8("scatter mode")?;
    ALL.iter().copied().find(|k| *k as u8 == t).ok_or_else(|| c.err(format!("unknown scatter mode {t}")))
}

/// A length-prefixed UTF-8 string.
pub(super) fn read_str(c: &mut Cursor) -> Result<alloc::string::String> {
    let n = c.u32("string length")? as usize;
    let b = c.bytes(n, "string")?;
    core::str::from_utf8(b).map(alloc::string::String::from).map_err(|_| c.err("a string is not UTF-8"))
}

pub(super) fn read_bool(c: &mut Cursor) -> Result<bool> {
    match c.u8("flag")? {
        0 => Ok(false),
        1 => Ok(true),
        v => Err(c.err(format!("flag byte {v} is neither 0 nor 1"))),
    }
}

fn read_isize(c: &mut Cursor) -> Result<isize> {
    let v = c.u64("integer")? as i64;
    isize::try_from(v).map_err(|_| c.err(format!("integer {v} does not fit this target")))
}

/// A count-prefixed list; the count is checked against the bytes left (8 per entry) before
/// anything is allocated.
fn read_list<T>(c: &mut Cursor, mut one: impl FnMut(&mut Cursor) -> Result<T>) -> Result<Vec<T>> {
    let n = c.u32("list length")? as usize;
    if n > c.remaining() / 8 {
        return Err(c.err(format!("a list of {n} integers is longer than the {} bytes left", c.remaining())));
    }
    (0..n).map(|_| one(c)).collect()
}

pub(super) fn read_usizes(c: &mut Cursor) -> Result<Vec<usize>> {
    read_list(c, |c| c.u64_usize("integer"))
}

fn read_isizes(c: &mut Cursor) -> Result<Vec<isize>> {
    read_list(c, read_isize)
}
