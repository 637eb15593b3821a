//! `mx.fast.metal_kernel`: a user's Metal kernel as one graph node (MLX's `CustomKernel`);
//! `mx.fast.cuda_kernel` / `precompiled_cuda_kernel`: MLX's CUDA kernels, refused (below).
//!
//! mlx-arm has no Metal back-end, so the node can never run here. It exists so that a function
//! calling such a kernel can be *exported* on a machine without Metal, as MLX's CPU build
//! allows (the file is then run where Metal is): outside an export trace the call is MLX's
//! `RuntimeError` "No Metal back-end", inside one a stream that is not the GPU's is MLX's
//! `ValueError`, and evaluating the node (which only an export trace could build) is the
//! same `RuntimeError`. Importing such a file is refused (MLX's `ValueError`: its CPU build
//! cannot make the GPU stream the node is recorded on). The kernel's name and Metal source are generated as MLX generates
//! them (the signature from the inputs' dtypes and sizes, the template instantiation), so the
//! exported node holds what a Metal back-end would compile.

use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops::fast::FastOp;
use crate::primitive::Primitive;
use alloc::format;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;

const OP: &str = "metal_kernel";

/// Inputs with fewer elements are passed in Metal's `constant` address space (MLX's rule).
const MAX_CONSTANT_ARRAY_SIZE: usize = 8;

/// The recorded kernel: MLX's `CustomKernel` state.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CustomKernel {
    /// `custom_kernel_<name>` plus the template and dtype suffixes.
    pub name: String,
    /// The whole Metal source (header, generated signature, body, template instantiation).
    pub source: String,
    /// Threads of the grid.
    pub grid: [i32; 3],
    /// Threads of a threadgroup.
    pub threadgroup: [i32; 3],
    /// Per input: whether the body reads its `_shape`, `_strides`, `_ndim`.
    pub shape_infos: Vec<[bool; 3]>,
    /// Copy the inputs to row-contiguous order first.
    pub ensure_row_contiguous: bool,
    /// The value outputs are filled with first (f32 bits), if any.
    pub init_value: Option<u32>,
    /// MLX's `MathMode`: 0 safe, 1 relaxed, 2 fast.
    pub math_mode: u8,
}

/// A template argument of the kernel.
#[derive(Clone, Copy, Debug)]
pub enum TemplateArg {
    /// `int N`.
    Int(i32),
    /// `bool B`.
    Bool(bool),
    /// `typename T`.
    Dtype(DType),
}

/// What `mx.fast.metal_kernel(...)` was made with.
#[derive(Clone, Debug)]
pub struct KernelSpec {
    /// The user's kernel name.
    pub name: String,
    /// Names of the inputs in the generated signature.
    pub input_names: Vec<String>,
    /// Names of the outputs.
    pub output_names: Vec<String>,
    /// The kernel body.
    pub source: String,
    /// Source placed before the kernel.
    pub header: String,
    /// See [`CustomKernel::ensure_row_contiguous`].
    pub ensure_row_contiguous: bool,
    /// Outputs declared `device atomic<T>*`.
    pub atomic_outputs: bool,
    /// See [`CustomKernel::math_mode`].
    pub math_mode: u8,
}

/// One call of the kernel.
#[derive(Clone, Debug)]
pub struct KernelCall<'a> {
    /// The arrays passed to the kernel, in `input_names` order.
    pub inputs: &'a [Array],
    /// Per output: shape and dtype.
    pub outputs: &'a [(Vec<usize>, DType)],
    /// Grid and threadgroup sizes in threads.
    pub grid: [i32; 3],
    /// See [`CustomKernel::threadgroup`].
    pub threadgroup: [i32; 3],
    /// Template arguments, in order.
    pub template: &'a [(String, TemplateArg)],
    /// See [`CustomKernel::init_value`].
    pub init_value: Option<f32>,
    /// The device asked for: `None` (unspecified), `Some(true)` the GPU, `Some(false)` another.
    pub on_gpu: Option<bool>,
}

/// Checks what `mx.fast.metal_kernel` checks when the kernel object is made.
pub fn check_spec(spec: &KernelSpec) -> Result<()> {
    if spec.output_names.is_empty() {
        return Err(Error::invalid(OP, "Must specify at least one output."));
    }
    if spec.math_mode > 2 {
        return Err(Error::invalid(OP, "Expected math_mode to be 'safe', 'relaxed', or 'fast'."));
    }
    Ok(())
}

/// Checks a call's numbers of inputs, output shapes and output dtypes against the kernel's
/// names (MLX's messages, in its order).
pub fn check_counts(spec: &KernelSpec, inputs: usize, output_shapes: usize, output_dtypes: usize) -> Result<()> {
    for (actual, expected, what) in [
        (inputs, spec.input_names.len(), "inputs"),
        (output_shapes, spec.output_names.len(), "output_shapes"),
        (output_dtypes, spec.output_names.len(), "output_dtypes"),
    ] {
        if actual != expected {
            return Err(Error::invalid(OP, format!("Expected `{what}` to have size {expected} but got size {actual}.\n")));
        }
    }
    Ok(())
}

/// MLX's Metal type name of `d`.
fn type_string(d: DType) -> &'static str {
    match d {
        DType::Float32 => "float",
        DType::Float16 => "float16_t",
        DType::Bfloat16 => "bfloat16_t",
        DType::Float64 => "double",
        DType::Complex64 => "complex64_t",
        DType::Bool => "bool",
        DType::Int8 => "int8_t",
        DType::Int16 => "int16_t",
        DType::Int32 => "int32_t",
        DType::Int64 => "int64_t",
        DType::Uint8 => "uint8_t",
        DType::Uint16 => "uint16_t",
        DType::Uint32 => "uint32_t",
        DType::Uint64 => "uint64_t",
    }
}

/// Metal's thread attributes: declared in the signature when the body names them.
const ATTRIBUTES: [(&str, &str); 20] = [
    ("dispatch_quadgroups_per_threadgroup", "uint"),
    ("dispatch_simdgroups_per_threadgroup", "uint"),
    ("dispatch_threads_per_threadgroup", "uint3"),
    ("grid_origin", "uint3"),
    ("grid_size", "uint3"),
    ("quadgroup_index_in_threadgroup", "uint"),
    ("quadgroups_per_threadgroup", "uint"),
    ("simdgroup_index_in_threadgroup", "uint"),
    ("simdgroups_per_threadgroup", "uint"),
    ("thread_execution_width", "uint"),
    ("thread_index_in_quadgroup", "uint"),
    ("thread_index_in_simdgroup", "uint"),
    ("thread_index_in_threadgroup", "uint"),
    ("thread_position_in_grid", "uint3"),
    ("thread_position_in_threadgroup", "uint3"),
    ("threadgroup_position_in_grid", "uint3"),
    ("threadgroups_per_grid", "uint3"),
    ("threads_per_grid", "uint3"),
    ("threads_per_simdgroup", "uint"),
    ("threads_per_threadgroup", "uint3"),
];

/// `<float, 3, 1>` for the template arguments.
fn template_def(template: &[(String, TemplateArg)]) -> String {
    let parts: Vec<String> = template
        .iter()
        .map(|(_, a)| match a {
            TemplateArg::Int(v) => format!("{v}"),
            TemplateArg::Bool(b) => format!("{}", *b as u8),
            TemplateArg::Dtype(d) => String::from(type_string(*d)),
        })
        .collect();
    format!("<{}>", parts.join(", "))
}

/// The kernel's name: MLX's, so that one name always maps to one generated source.
fn kernel_name(spec: &KernelSpec, call: &KernelCall<'_>) -> String {
    let mut name = format!("custom_kernel_{}", spec.name);
    if !call.template.is_empty() {
        // `<float, -3, 1>` → `_float__3_1` (a name Metal accepts).
        let mut hash = template_def(call.template).replace(", ", "_").replace(['<', '>', '-'], "_");
        hash.pop();
        name.push('_');
        name.push_str(&hash);
    }
    for a in call.inputs {
        name.push('_');
        name.push_str(type_string(a.dtype()));
        if a.ndim() == 0 {
            name.push('s');
        } else if a.size() < MAX_CONSTANT_ARRAY_SIZE {
            name.push('c');
        }
    }
    for (_, d) in call.outputs {
        name.push('_');
        name.push_str(type_string(*d));
    }
    name
}

/// The full Metal source MLX generates for this call.
fn kernel_source(spec: &KernelSpec, call: &KernelCall<'_>, name: &str, shape_infos: &[[bool; 3]]) -> String {
    let mut s = spec.header.clone();
    if !call.template.is_empty() {
        let params: Vec<String> = call
            .template
            .iter()
            .map(|(n, a)| {
                let t = match a {
                    TemplateArg::Int(_) => "int",
                    TemplateArg::Bool(_) => "bool",
                    TemplateArg::Dtype(_) => "typename",
                };
                format!("{t} {n}")
            })
            .collect();
        s.push_str(&format!("template <{}>\n", params.join(", ")));
    }
    s.push_str(&format!("[[kernel]] void {name}(\n"));
    let mut params: Vec<String> = Vec::new();
    let mut index = 0;
    let mut buffer = |text: String, params: &mut Vec<String>| {
        params.push(format!("{text} [[buffer({index})]]"));
        index += 1;
    };
    for ((n, a), info) in spec.input_names.iter().zip(call.inputs).zip(shape_infos) {
        let location = if a.size() < MAX_CONSTANT_ARRAY_SIZE { "constant" } else { "device" };
        let by = if a.ndim() == 0 { "&" } else { "*" };
        buffer(format!("  const {location} {}{by} {n}", type_string(a.dtype())), &mut params);
        if a.ndim() > 0 {
            if info[0] {
                buffer(format!("  const constant int* {n}_shape"), &mut params);
            }
            if info[1] {
                buffer(format!("  const constant int64_t* {n}_strides"), &mut params);
            }
            if info[2] {
                buffer(format!("  const constant int& {n}_ndim"), &mut params);
            }
        }
    }
    for (n, (_, d)) in spec.output_names.iter().zip(call.outputs) {
        let t = if spec.atomic_outputs { format!("atomic<{}>", type_string(*d)) } else { String::from(type_string(*d)) };
        buffer(format!("  device {t}* {n}"), &mut params);
    }
    for (attr, ty) in ATTRIBUTES {
        if spec.source.contains(attr) {
            params.push(format!("  {ty} {attr} [[{attr}]]"));
        }
    }
    s.push_str(&params.join(",\n"));
    s.push_str(") {\n");
    s.push_str(&spec.source);
    s.push_str("\n}\n");
    if !call.template.is_empty() {
        let def = format!("{name}{}", template_def(call.template));
        s.push_str(&format!("\ntemplate [[host_name(\"{name}\")]] [[kernel]] decltype({def}) {def};\n"));
    }
    s
}

/// Whether an export trace is running (MLX's `in_export_tracing`): only there can the node be
/// recorded without a Metal back-end.
fn export_tracing() -> bool {
    crate::transforms::export::export_tracing()
}

fn no_metal() -> Error {
    Error::runtime(OP, "No Metal back-end.")
}

/// The kernel applied to `call.inputs`: its outputs, one node (see the module's text), and
/// the generated source (for `verbose`).
pub fn metal_kernel(spec: &KernelSpec, call: &KernelCall<'_>) -> Result<(Vec<Array>, String)> {
    check_spec(spec)?;
    check_counts(spec, call.inputs.len(), call.outputs.len(), call.outputs.len())?;
    if !export_tracing() {
        return Err(no_metal());
    }
    if call.on_gpu == Some(false) {
        return Err(Error::invalid(OP, "Only supports the GPU."));
    }
    let shape_infos: Vec<[bool; 3]> = spec
        .input_names
        .iter()
        .map(|n| ["_shape", "_strides", "_ndim"].map(|suffix| spec.source.contains(&format!("{n}{suffix}"))))
        .collect();
    let name = kernel_name(spec, call);
    let source = kernel_source(spec, call, &name, &shape_infos);
    let kernel = CustomKernel {
        name,
        source: source.clone(),
        grid: call.grid,
        threadgroup: call.threadgroup,
        shape_infos,
        ensure_row_contiguous: spec.ensure_row_contiguous,
        init_value: call.init_value.map(f32::to_bits),
        math_mode: spec.math_mode,
    };
    Ok((record(kernel, call.inputs.to_vec(), call.outputs.to_vec())?, source))
}

/// The node of `kernel` over `inputs` (also what an imported file's node is rebuilt with):
/// refused outside an export trace, as every call is.
pub(crate) fn record(kernel: CustomKernel, inputs: Vec<Array>, outputs: Vec<(Vec<usize>, DType)>) -> Result<Vec<Array>> {
    if !export_tracing() {
        return Err(no_metal());
    }
    Ok(Array::from_op_multi(Primitive::Fast(FastOp::MetalKernel(Arc::new(kernel))), inputs, outputs))
}

/// Reading a file that holds a kernel: its node belongs on the GPU, and MLX's CPU build refuses
/// the file when it makes the GPU stream the node needs (its error, when there is no GPU
/// device here either). With a GPU device (a Vulkan back-end) the refusal names the kernel.
pub(crate) fn refuse_import(k: &CustomKernel) -> Error {
    let gpu = crate::device::Device { kind: crate::device::DeviceType::Gpu, index: 0 };
    if crate::backend::has_device(gpu) {
        Error::invalid("import_function", format!("The file holds the Metal kernel '{}'; mlx-arm has no Metal back-end.", k.name))
    } else {
        Error::invalid("new_stream", "Cannot make gpu stream without gpu backend.")
    }
}

/// Evaluating the node: there is no Metal back-end to run it on.
pub(crate) fn eval_refused() -> Error {
    no_metal()
}

// MLX's CUDA kernels. MLX's build without CUDA (its CPU wheel) has both functions throw
// "[cuda_kernel] No CUDA back-end." before looking at any argument, and records no node: unlike
// `metal_kernel` there is nothing an export trace could hold (MLX's `export_function` fails
// the same way), so these are that error and nothing else. Their arguments are MLX's, so that
// a caller's code reads as it would against MLX.

/// A scalar argument of [`precompiled_cuda_kernel`] (MLX's `ScalarArg`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ScalarArg {
    /// `bool`.
    Bool(bool),
    /// `int32_t`.
    Int(i32),
    /// `float`.
    Float(f32),
}

fn no_cuda() -> Error {
    Error::runtime("cuda_kernel", "No CUDA back-end.")
}

/// MLX's `fast::cuda_kernel`: makes the kernel object from `spec` (its `atomic_outputs` and
/// `math_mode` are Metal's and unused) and `shared_memory` bytes. There is no CUDA back-end,
/// so this is MLX's `RuntimeError` "No CUDA back-end." whatever the arguments (as MLX's CPU
/// build, which checks none of them).
pub fn cuda_kernel(spec: &KernelSpec, shared_memory: i32) -> Result<core::convert::Infallible> {
    let _ = (spec, shared_memory);
    Err(no_cuda())
}

/// One call of [`precompiled_cuda_kernel`]: MLX's arguments, unchecked as MLX leaves them
/// (shapes are its `int32` dims; the two output lists need not have the same length).
#[derive(Clone, Debug)]
pub struct PrecompiledCall<'a> {
    /// The kernel's name in `compiled_source`.
    pub name: &'a str,
    /// PTX or cubin bytes.
    pub compiled_source: &'a [u8],
    /// The arrays passed to the kernel.
    pub inputs: &'a [Array],
    /// Per output: its shape.
    pub output_shapes: &'a [Vec<i32>],
    /// Per output: its dtype.
    pub output_dtypes: &'a [DType],
    /// Scalars passed after the arrays.
    pub scalars: &'a [ScalarArg],
    /// Grid and threadgroup sizes in threads.
    pub grid: [i32; 3],
    /// See [`PrecompiledCall::grid`].
    pub threadgroup: [i32; 3],
    /// Dynamic shared memory in bytes.
    pub shared_memory: i32,
    /// The value outputs are filled with first, if any.
    pub init_value: Option<f32>,
    /// Copy the inputs to row-contiguous order first.
    pub ensure_row_contiguous: bool,
    /// The device asked for, as [`KernelCall::on_gpu`].
    pub on_gpu: Option<bool>,
}

/// MLX's `fast::precompiled_cuda_kernel`: runs the PTX or cubin kernel of `call`. No CUDA
/// back-end: MLX's `RuntimeError`, as [`cuda_kernel`].
pub fn precompiled_cuda_kernel(call: &PrecompiledCall<'_>) -> Result<Vec<Array>> {
    let _ = call;
    Err(no_cuda())
}
