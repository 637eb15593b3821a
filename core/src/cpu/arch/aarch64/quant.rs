//! aarch64 kernels for the GGUF dot products (placeholder, filled below).
use crate::cpu::isa::Isa;
use crate::quant::GgmlType;
pub(crate) fn dot_for(_ty: GgmlType, _level: Isa) -> Option<super::super::QuantDotFn> { None }
pub(crate) fn quantize_for(_ty: GgmlType, _level: Isa) -> Option<super::super::QuantizeFn> { None }
