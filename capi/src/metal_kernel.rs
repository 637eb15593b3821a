//! `mlx_arm_fast_metal_kernel`: `mx.fast.metal_kernel(...)(...)` in one call (MLX's
//! `CustomKernel`, `core/src/ops/fast/custom_kernel.rs`). There is no Metal back-end: outside
//! an export trace the call is the error MLX's CPU build gives ("No Metal back-end."), inside
//! one the kernel is recorded for the file.

use crate::arg;
use crate::error::status;
use crate::handle;
use crate::prelude::*;
use mlx_arm_core::DType;
use mlx_arm_core::error::{Error, Result};
use crate::string::cstring;
use crate::types::{mlx_dtype, mlx_string, mlx_vector_array};
use core::ffi::{c_char, c_int};
use mlx_arm_core::ops::fast::custom_kernel::{check_counts, metal_kernel, KernelCall, KernelSpec, TemplateArg};

const OP: &str = "mlx_arm_fast_metal_kernel";

// The argument readers below are shared with the CUDA kernels (`cuda_kernel.rs`).

/// `n` NUL-terminated strings.
pub(crate) unsafe fn strings(p: *const *const c_char, n: usize, name: &'static str) -> Result<Vec<String>> {
    arg::slice(p, n, name)?.iter().map(|&s| arg::string(s, name).map(String::from)).collect()
}

/// Three ints (a grid or threadgroup size).
pub(crate) unsafe fn dims3(p: *const c_int, name: &'static str) -> Result<[i32; 3]> {
    let v = arg::slice(p, 3, name)?;
    Ok([v[0], v[1], v[2]])
}

/// The outputs' shapes and dtypes: `output_ndims[i]` dims of output `i` back to back in
/// `output_shapes`, one dtype each (`outputs_num` of both).
pub(crate) unsafe fn outputs(
    op: &'static str,
    output_shapes: *const c_int,
    output_ndims: *const usize,
    output_dtypes: *const mlx_dtype,
    outputs_num: usize,
) -> Result<Vec<(Vec<usize>, DType)>> {
    let ndims = arg::slice(output_ndims, outputs_num, "output_ndims")?;
    let total = ndims.iter().try_fold(0usize, |t, &n| t.checked_add(n)).ok_or_else(|| Error::invalid(op, "output_ndims overflow"))?;
    let all_dims = arg::shape(output_shapes, total, "output_shapes")?;
    let dtypes = arg::slice(output_dtypes, outputs_num, "output_dtypes")?;
    let mut outputs = Vec::with_capacity(outputs_num);
    let mut at = 0;
    for (&n, &d) in ndims.iter().zip(dtypes) {
        outputs.push((all_dims[at..at + n].to_vec(), arg::dtype(d)?));
        at += n;
    }
    Ok(outputs)
}

/// The device a call asked for: `None` for -1 (no stream given), else whether it is the GPU.
pub(crate) fn on_gpu(device_type: c_int) -> Option<bool> {
    match device_type {
        -1 => None,
        t => Some(arg::device_type(t as _).is_ok_and(|t| t == mlx_arm_core::device::DeviceType::Gpu)),
    }
}

/// Runs (records) a Metal kernel. `input_names`/`output_names` name the kernel's buffers;
/// `math_mode` is MLX's (0 safe, 1 relaxed, 2 fast). `output_shapes` holds every output's
/// dims back to back, `output_ndims` how many each (`outputs_num` shapes and `output_dtypes_num`
/// dtypes, each checked against the output names). Template argument `i` is
/// `template_names[i]` of kind `template_kinds[i]` (0 int, 1 bool, 2 dtype — the value an
/// `mlx_dtype`). `device_type` is -1 when no stream was asked for, else an `mlx_device_type`.
/// `source_out`, when not NULL, receives the generated Metal source (for `verbose`).
///
/// # Safety
/// Pointers must be valid for their counts (NULL only with a count of 0); strings
/// NUL-terminated; handles empty or live.
#[no_mangle]
pub unsafe extern "C" fn mlx_arm_fast_metal_kernel(
    res: *mut mlx_vector_array,
    source_out: *mut mlx_string,
    name: *const c_char,
    input_names: *const *const c_char,
    input_names_num: usize,
    output_names: *const *const c_char,
    output_names_num: usize,
    source: *const c_char,
    header: *const c_char,
    ensure_row_contiguous: bool,
    atomic_outputs: bool,
    math_mode: c_int,
    inputs: mlx_vector_array,
    output_shapes: *const c_int,
    output_ndims: *const usize,
    output_dtypes: *const mlx_dtype,
    output_dtypes_num: usize,
    outputs_num: usize,
    grid: *const c_int,
    threadgroup: *const c_int,
    template_names: *const *const c_char,
    template_kinds: *const c_int,
    template_values: *const c_int,
    template_num: usize,
    has_init_value: bool,
    init_value: f32,
    device_type: c_int,
) -> c_int {
    status(OP, || {
        let spec = KernelSpec {
            name: String::from(arg::string(name, "name")?),
            input_names: strings(input_names, input_names_num, "input_names")?,
            output_names: strings(output_names, output_names_num, "output_names")?,
            source: String::from(arg::string(source, "source")?),
            header: String::from(arg::string(header, "header")?),
            ensure_row_contiguous,
            atomic_outputs,
            math_mode: u8::try_from(math_mode).map_err(|_| Error::invalid(OP, format!("math_mode {math_mode} is not 0, 1 or 2")))?,
        };
        let inputs = arg::vector_array(inputs)?;
        check_counts(&spec, inputs.len(), outputs_num, output_dtypes_num)?;
        let outputs = outputs(OP, output_shapes, output_ndims, output_dtypes, outputs_num)?;
        let names = strings(template_names, template_num, "template_names")?;
        let kinds = arg::slice(template_kinds, template_num, "template_kinds")?;
        let values = arg::slice(template_values, template_num, "template_values")?;
        let mut template = Vec::with_capacity(template_num);
        for ((n, &k), &v) in names.into_iter().zip(kinds).zip(values) {
            let a = match k {
                0 => TemplateArg::Int(v),
                1 => TemplateArg::Bool(v != 0),
                2 => TemplateArg::Dtype(arg::dtype(v as mlx_dtype)?),
                _ => return Err(Error::invalid(OP, format!("template kind {k} is not 0 (int), 1 (bool) or 2 (dtype)"))),
            };
            template.push((n, a));
        }
        let call = KernelCall {
            inputs: &inputs,
            outputs: &outputs,
            grid: dims3(grid, "grid")?,
            threadgroup: dims3(threadgroup, "threadgroup")?,
            template: &template,
            init_value: has_init_value.then_some(init_value),
            on_gpu: on_gpu(device_type),
        };
        let (arrays, text) = metal_kernel(&spec, &call)?;
        if !source_out.is_null() {
            handle::assign(source_out, cstring(&text))?;
        }
        arg::set_vector_array(res, arrays)
    })
}
