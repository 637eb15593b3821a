//! `mlx_arm_fast_cuda_kernel` / `mlx_arm_fast_precompiled_cuda_kernel`: MLX's
//! `fast::cuda_kernel` and `fast::precompiled_cuda_kernel`. There is no CUDA back-end, so —
//! exactly as MLX's CPU build — both fail with "[cuda_kernel] No CUDA back-end." (a runtime
//! error) and record nothing, inside an export trace too (`core/src/ops/fast/custom_kernel.rs`).
//! The arguments are still read (a bad pointer is its own error), in MLX's shapes.

use crate::arg;
use crate::error::status;
use crate::metal_kernel::{dims3, on_gpu, strings};
use crate::prelude::*;
use crate::types::{mlx_dtype, mlx_vector_array};
use core::ffi::{c_char, c_int};
use mlx_arm_core::error::{Error, Result};
use mlx_arm_core::ops::fast::custom_kernel::{cuda_kernel, precompiled_cuda_kernel, KernelSpec, PrecompiledCall, ScalarArg};

/// Makes a CUDA kernel object (MLX's `fast::cuda_kernel`): always the error above.
///
/// # Safety
/// Pointers valid for their counts (NULL only with a count of 0); strings NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn mlx_arm_fast_cuda_kernel(
    name: *const c_char,
    input_names: *const *const c_char,
    input_names_num: usize,
    output_names: *const *const c_char,
    output_names_num: usize,
    source: *const c_char,
    header: *const c_char,
    ensure_row_contiguous: bool,
    shared_memory: c_int,
) -> c_int {
    status("mlx_arm_fast_cuda_kernel", || {
        let spec = KernelSpec {
            name: String::from(arg::string(name, "name")?),
            input_names: strings(input_names, input_names_num, "input_names")?,
            output_names: strings(output_names, output_names_num, "output_names")?,
            source: String::from(arg::string(source, "source")?),
            header: String::from(arg::string(header, "header")?),
            ensure_row_contiguous,
            atomic_outputs: false,
            math_mode: 0,
        };
        match cuda_kernel(&spec, shared_memory)? {}
    })
}

/// Reads scalar argument `i`: kind 0 bool (`value != 0`), 1 int32, 2 float32.
fn scalar(kind: c_int, value: f64) -> Result<ScalarArg> {
    const OP: &str = "mlx_arm_fast_precompiled_cuda_kernel";
    match kind {
        0 => Ok(ScalarArg::Bool(value != 0.0)),
        1 if value == libm::trunc(value) && (i32::MIN as f64..=i32::MAX as f64).contains(&value) => Ok(ScalarArg::Int(value as i32)),
        1 => Err(Error::invalid(OP, format!("int scalar {value} is not an int32"))),
        2 => Ok(ScalarArg::Float(value as f32)),
        _ => Err(Error::invalid(OP, format!("scalar kind {kind} is not 0 (bool), 1 (int) or 2 (float)"))),
    }
}

/// Runs a precompiled (PTX or cubin) kernel (MLX's `fast::precompiled_cuda_kernel`): always
/// the error above. `output_shapes` holds every output's dims back to back, `output_ndims` how
/// many each (`output_shapes_num` shapes; `output_dtypes_num` dtypes — MLX checks neither the
/// dims nor the counts before its error). Scalar `i` is `scalar_values[i]` of kind
/// `scalar_kinds[i]` (0 bool, 1 int32, 2 float32). `device_type` is -1 when no stream was asked
/// for, else an `mlx_device_type`.
///
/// # Safety
/// Pointers valid for their counts (NULL only with a count of 0); `name` NUL-terminated;
/// handles empty or live.
#[no_mangle]
pub unsafe extern "C" fn mlx_arm_fast_precompiled_cuda_kernel(
    res: *mut mlx_vector_array,
    name: *const c_char,
    compiled_source: *const u8,
    compiled_source_len: usize,
    inputs: mlx_vector_array,
    output_shapes: *const c_int,
    output_ndims: *const usize,
    output_shapes_num: usize,
    output_dtypes: *const mlx_dtype,
    output_dtypes_num: usize,
    scalar_kinds: *const c_int,
    scalar_values: *const f64,
    scalars_num: usize,
    grid: *const c_int,
    threadgroup: *const c_int,
    shared_memory: c_int,
    has_init_value: bool,
    init_value: f32,
    ensure_row_contiguous: bool,
    device_type: c_int,
) -> c_int {
    const OP: &str = "mlx_arm_fast_precompiled_cuda_kernel";
    status(OP, || {
        let inputs = arg::vector_array(inputs)?;
        let ndims = arg::slice(output_ndims, output_shapes_num, "output_ndims")?;
        let total = ndims.iter().try_fold(0usize, |t, &n| t.checked_add(n)).ok_or_else(|| Error::invalid(OP, "output_ndims overflow"))?;
        let mut dims = arg::slice(output_shapes, total, "output_shapes")?;
        let mut shapes = Vec::with_capacity(ndims.len());
        for &n in ndims {
            let (shape, rest) = dims.split_at(n);
            shapes.push(shape.to_vec());
            dims = rest;
        }
        let dtypes = arg::slice(output_dtypes, output_dtypes_num, "output_dtypes")?.iter().map(|&d| arg::dtype(d)).collect::<Result<Vec<_>>>()?;
        let kinds = arg::slice(scalar_kinds, scalars_num, "scalar_kinds")?;
        let values = arg::slice(scalar_values, scalars_num, "scalar_values")?;
        let scalars = kinds.iter().zip(values).map(|(&k, &v)| scalar(k, v)).collect::<Result<Vec<_>>>()?;
        let call = PrecompiledCall {
            name: arg::string(name, "name")?,
            compiled_source: arg::slice(compiled_source, compiled_source_len, "compiled_source")?,
            inputs: &inputs,
            output_shapes: &shapes,
            output_dtypes: &dtypes,
            scalars: &scalars,
            grid: dims3(grid, "grid")?,
            threadgroup: dims3(threadgroup, "threadgroup")?,
            shared_memory,
            init_value: has_init_value.then_some(init_value),
            ensure_row_contiguous,
            on_gpu: on_gpu(device_type),
        };
        arg::set_vector_array(res, precompiled_cuda_kernel(&call)?)
    })
}
