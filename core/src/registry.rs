//! The op registry: which `mlx.core` names this core implements, each bound to the Rust item
//! that implements it (so an entry cannot name something that does not exist). The unary and
//! binary families contribute their whole tables. `docs/OPS.md` is generated from this file by
//! the `ops_md` test; layers above (C, Python) add their own names there, never here.

use crate::ops::{binary::BinaryOp, unary::UnaryOp};

/// Where an `mlx.core` name stands in the core.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Implemented and tested.
    Done,
    /// Not implemented yet.
    NotYet,
    /// Will not be implemented (another vendor's API).
    NotApplicable,
}

macro_rules! core_api {
    ($( $name:literal => $item:path, )*) => {
        /// `(mlx name, Rust item)` for every implemented name outside the unary/binary tables.
        pub const CORE_API: &[(&str, &str)] = &[$(($name, stringify!($item))),*];

        /// Never called: naming each item here makes a stale registry entry a compile error.
        #[allow(dead_code, path_statements)]
        fn items_exist() {
            $( let _ = $item; )*
        }
    };
}

core_api! {
    // creation
    "mx.zeros" => crate::ops::zeros,
    "mx.ones" => crate::ops::ones,
    "mx.full" => crate::ops::full,
    "mx.zeros_like" => crate::ops::zeros_like,
    "mx.ones_like" => crate::ops::ones_like,
    "mx.full_like" => crate::ops::full_like,
    "mx.empty" => crate::ops::empty,
    "mx.empty_like" => crate::ops::empty_like,
    "mx.arange" => crate::ops::arange,
    "mx.linspace" => crate::ops::linspace,
    "mx.eye" => crate::ops::eye,
    "mx.identity" => crate::ops::identity,
    "mx.tri" => crate::ops::tri,
    "mx.meshgrid" => crate::ops::meshgrid,
    // casts, dtypes
    "mx.astype" => crate::ops::astype,
    "mx.view" => crate::ops::view,
    "mx.result_type" => crate::dtype::result_type,
    "mx.finfo" => crate::dtype::finfo,
    "mx.iinfo" => crate::dtype::iinfo,
    // elementwise composites and aliases
    "mx.where" => crate::ops::where_,
    "mx.clip" => crate::ops::clip,
    "mx.isclose" => crate::ops::isclose,
    "mx.allclose" => crate::ops::allclose,
    "mx.array_equal" => crate::ops::array_equal,
    "mx.divmod" => crate::ops::divmod,
    "mx.logical_xor" => crate::ops::logical_xor,
    "mx.positive" => crate::ops::positive,
    "mx.nan_to_num" => crate::ops::nan_to_num,
    "mx.round" => crate::ops::round_decimals,
    "mx.conj" => crate::ops::conjugate,
    "mx.pow" => crate::ops::power,
    "mx.acos" => crate::ops::arccos,
    "mx.acosh" => crate::ops::arccosh,
    "mx.asin" => crate::ops::arcsin,
    "mx.asinh" => crate::ops::arcsinh,
    "mx.atan" => crate::ops::arctan,
    "mx.atanh" => crate::ops::arctanh,
    "mx.atan2" => crate::ops::arctan2,
    "mx.bitwise_left_shift" => crate::ops::left_shift,
    "mx.bitwise_right_shift" => crate::ops::right_shift,
    // shape
    "mx.reshape" => crate::ops::reshape,
    "mx.flatten" => crate::ops::flatten,
    "mx.squeeze" => crate::ops::squeeze,
    "mx.expand_dims" => crate::ops::expand_dims,
    "mx.transpose" => crate::ops::transpose,
    "mx.permute_dims" => crate::ops::permute_dims,
    "mx.swapaxes" => crate::ops::swapaxes,
    "mx.moveaxis" => crate::ops::moveaxis,
    "mx.broadcast_to" => crate::ops::broadcast_to,
    "mx.broadcast_arrays" => crate::ops::broadcast_arrays,
    // MLX's signatures take the starts as an array (read at evaluation); the static forms
    // (`slice`, `slice_dynamic`, `slice_update`, `slice_update_dynamic`) serve indexing.
    "mx.slice" => crate::ops::slice_at,
    "mx.as_strided" => crate::ops::as_strided,
    "mx.contiguous" => crate::ops::contiguous,
    "mx.unflatten" => crate::ops::unflatten,
    "mx.concatenate" => crate::ops::concatenate,
    "mx.concat" => crate::ops::concat,
    "mx.stack" => crate::ops::stack,
    "mx.unstack" => crate::ops::unstack,
    "mx.split" => crate::ops::split,
    "mx.tile" => crate::ops::tile,
    "mx.repeat" => crate::ops::repeat,
    "mx.pad" => crate::ops::pad,
    "mx.roll" => crate::ops::roll,
    "mx.flip" => crate::ops::flip,
    "mx.atleast_1d" => crate::ops::atleast_1d,
    "mx.atleast_2d" => crate::ops::atleast_2d,
    "mx.atleast_3d" => crate::ops::atleast_3d,
    "mx.matrix_transpose" => crate::ops::matrix_transpose,
    "mx.diag" => crate::ops::diag,
    "mx.diagonal" => crate::ops::diagonal,
    "mx.tril" => crate::ops::tril,
    "mx.triu" => crate::ops::triu,
    "mx.slice_update" => crate::ops::slice_update_at,
    // indexing
    "mx.take" => crate::ops::take,
    "mx.take_along_axis" => crate::ops::take_along_axis,
    "mx.put_along_axis" => crate::ops::put_along_axis,
    "mx.ArrayAt.add" => crate::ops::at_add,
    "mx.ArrayAt.subtract" => crate::ops::at_subtract,
    "mx.ArrayAt.multiply" => crate::ops::at_multiply,
    "mx.ArrayAt.divide" => crate::ops::at_divide,
    "mx.ArrayAt.maximum" => crate::ops::at_maximum,
    "mx.ArrayAt.minimum" => crate::ops::at_minimum,
    "mx.array.__getitem__" => crate::ops::index,
    "mx.array.__setitem__" => crate::ops::index_update,
    // reductions
    "mx.sum" => crate::ops::sum,
    "mx.prod" => crate::ops::prod,
    "mx.max" => crate::ops::max,
    "mx.min" => crate::ops::min,
    "mx.all" => crate::ops::all,
    "mx.any" => crate::ops::any,
    "mx.minmax" => crate::ops::minmax,
    "mx.count_nonzero" => crate::ops::count_nonzero,
    "mx.mean" => crate::ops::mean,
    "mx.var" => crate::ops::var,
    "mx.std" => crate::ops::std,
    "mx.logsumexp" => crate::ops::logsumexp,
    "mx.softmax" => crate::ops::softmax,
    "mx.median" => crate::ops::median,
    "mx.argmax" => crate::ops::argmax,
    "mx.argmin" => crate::ops::argmin,
    "mx.cumsum" => crate::ops::cumsum,
    "mx.cumprod" => crate::ops::cumprod,
    "mx.cummax" => crate::ops::cummax,
    "mx.cummin" => crate::ops::cummin,
    "mx.logcumsumexp" => crate::ops::logcumsumexp,
    // sort and search
    "mx.sort" => crate::ops::sort,
    "mx.argsort" => crate::ops::argsort,
    "mx.partition" => crate::ops::partition,
    "mx.argpartition" => crate::ops::argpartition,
    "mx.topk" => crate::ops::topk,
    "mx.searchsorted" => crate::ops::searchsorted,
    // linear algebra and convolution
    "mx.matmul" => crate::ops::matmul,
    "mx.addmm" => crate::ops::addmm,
    "mx.outer" => crate::ops::outer,
    "mx.inner" => crate::ops::inner,
    "mx.tensordot" => crate::ops::tensordot,
    "mx.trace" => crate::ops::trace,
    "mx.kron" => crate::ops::kron,
    "mx.einsum" => crate::ops::linalg::einsum,
    "mx.conv1d" => crate::ops::linalg::conv1d,
    "mx.conv2d" => crate::ops::linalg::conv2d,
    "mx.conv_general" => crate::ops::linalg::conv_general,
    // Convolution family: 3-D and transposed convolution, 1-D convolve
    "mx.conv3d" => crate::ops::linalg::conv3d,
    "mx.conv_transpose1d" => crate::ops::linalg::conv_transpose1d,
    "mx.conv_transpose2d" => crate::ops::linalg::conv_transpose2d,
    "mx.conv_transpose3d" => crate::ops::linalg::conv_transpose3d,
    "mx.convolve" => crate::ops::linalg::convolve,
    "mx.linalg.norm" => crate::ops::linalg::norm,
    // linalg decompositions (area: linalg; kernels in cpu/decomp)
    "mx.linalg.inv" => crate::ops::linalg::inv,
    "mx.linalg.tri_inv" => crate::ops::linalg::tri_inv,
    "mx.linalg.cholesky" => crate::ops::linalg::cholesky,
    "mx.linalg.cholesky_inv" => crate::ops::linalg::cholesky_inv,
    "mx.linalg.qr" => crate::ops::linalg::qr,
    "mx.linalg.svd" => crate::ops::linalg::svd,
    "mx.linalg.eigh" => crate::ops::linalg::eigh,
    "mx.linalg.eigvalsh" => crate::ops::linalg::eigvalsh,
    "mx.linalg.eig" => crate::ops::linalg::eig,
    "mx.linalg.eigvals" => crate::ops::linalg::eigvals,
    "mx.linalg.lu" => crate::ops::linalg::lu,
    "mx.linalg.lu_factor" => crate::ops::linalg::lu_factor,
    "mx.linalg.solve" => crate::ops::linalg::solve,
    "mx.linalg.solve_triangular" => crate::ops::linalg::solve_triangular,
    "mx.linalg.pinv" => crate::ops::linalg::pinv,
    "mx.linalg.det" => crate::ops::linalg::det,
    "mx.linalg.slogdet" => crate::ops::linalg::slogdet,
    "mx.random.multivariate_normal" => crate::ops::random::multivariate_normal,
    // mx.fast (each with a *_fallback of ordinary ops)
    "mx.fast.rms_norm" => crate::ops::fast::rms_norm,
    "mx.fast.layer_norm" => crate::ops::fast::layer_norm,
    "mx.fast.rope" => crate::ops::fast::rope,
    "mx.fast.scaled_dot_product_attention" => crate::ops::fast::scaled_dot_product_attention,
    // (as MLX's CPU build: exported, never run — no Metal back-end; ops/fast/custom_kernel.rs)
    "mx.fast.metal_kernel" => crate::ops::fast::custom_kernel::metal_kernel,
    // (as MLX's CPU build: the error "No CUDA back-end." for any arguments; ops/fast/custom_kernel.rs)
    "mx.fast.cuda_kernel" => crate::ops::fast::custom_kernel::cuda_kernel,
    "mx.fast.precompiled_cuda_kernel" => crate::ops::fast::custom_kernel::precompiled_cuda_kernel,
    // mx.fft (area: fft; kernels in cpu/fft/)
    "mx.fft.fft" => crate::ops::fft::fft,
    "mx.fft.ifft" => crate::ops::fft::ifft,
    "mx.fft.fft2" => crate::ops::fft::fft2,
    "mx.fft.ifft2" => crate::ops::fft::ifft2,
    "mx.fft.fftn" => crate::ops::fft::fftn,
    "mx.fft.ifftn" => crate::ops::fft::ifftn,
    "mx.fft.rfft" => crate::ops::fft::rfft,
    "mx.fft.irfft" => crate::ops::fft::irfft,
    "mx.fft.rfft2" => crate::ops::fft::rfft2,
    "mx.fft.irfft2" => crate::ops::fft::irfft2,
    "mx.fft.rfftn" => crate::ops::fft::rfftn,
    "mx.fft.irfftn" => crate::ops::fft::irfftn,
    "mx.fft.fftshift" => crate::ops::fft::fftshift,
    "mx.fft.ifftshift" => crate::ops::fft::ifftshift,
    "mx.fft.fftfreq" => crate::ops::fft::fftfreq,
    "mx.fft.rfftfreq" => crate::ops::fft::rfftfreq,
    // mx.random
    "mx.random.key" => crate::ops::random::key,
    "mx.random.seed" => crate::ops::random::seed,
    "mx.random.split" => crate::ops::random::split,
    "mx.random.bits" => crate::ops::random::bits,
    "mx.random.normal" => crate::ops::random::normal,
    "mx.random.truncated_normal" => crate::ops::random::truncated_normal,
    "mx.random.gumbel" => crate::ops::random::gumbel,
    "mx.random.laplace" => crate::ops::random::laplace,
    "mx.random.randint" => crate::ops::random::randint,
    "mx.random.categorical" => crate::ops::random::categorical,
    "mx.random.permutation" => crate::ops::random::permutation,
    // quantization
    "mx.quantize" => crate::ops::quantize,
    "mx.dequantize" => crate::ops::dequantize,
    "mx.quantized_matmul" => crate::ops::quantized_matmul,
    "mx.gather_qmm" => crate::ops::gather_qmm,
    "mx.to_fp8" => crate::ops::to_fp8,
    "mx.from_fp8" => crate::ops::from_fp8,
    // fixes: gather_mm / qqmm (compositions, see ops/gather_mm.rs)
    "mx.gather_mm" => crate::ops::gather_mm,
    "mx.qqmm" => crate::ops::qqmm,
    "mx.gather_qqmm" => crate::ops::gather_qqmm,
    // More ops: unique, fast.cross_entropy, segmented_mm, block_masked_mm (compositions)
    "mx.unique" => crate::ops::unique,
    "mx.fast.cross_entropy" => crate::ops::cross_entropy::cross_entropy,
    "mx.fast.gated_delta_update" => crate::ops::gated_delta::gated_delta_update,
    "mx.segmented_mm" => crate::ops::segmented_mm,
    "mx.block_masked_mm" => crate::ops::block_masked_mm,
    // files (the std layer adds path-based wrappers that memory-map: crate::io::arrays)
    "mx.load" => crate::io::arrays::load_bytes,
    "mx.save" => crate::io::arrays::npy_bytes,
    "mx.savez" => crate::io::arrays::npz_bytes,
    "mx.savez_compressed" => crate::io::arrays::npz_bytes,
    "mx.save_safetensors" => crate::io::arrays::safetensors_bytes,
    "mx.save_gguf" => crate::io::arrays::gguf_bytes,
    // evaluation, devices, streams, memory
    "mx.eval" => crate::eval::eval,
    "mx.async_eval" => crate::eval::async_eval,
    "mx.cpu" => crate::device::Device::CPU,
    "mx.gpu" => crate::device::Device::GPU,
    "mx.DeviceType.cpu" => crate::device::DeviceType::Cpu,
    "mx.DeviceType.gpu" => crate::device::DeviceType::Gpu,
    "mx.default_device" => crate::device::default_device,
    "mx.set_default_device" => crate::device::set_default_device,
    "mx.default_stream" => crate::device::default_stream,
    "mx.set_default_stream" => crate::device::set_default_stream,
    "mx.new_stream" => crate::device::new_stream,
    "mx.synchronize" => crate::device::synchronize,
    "mx.get_active_memory" => crate::buffer::active_memory,
    "mx.get_array_buffer_size" => crate::array::array_buffer_size,
    "mx.get_peak_memory" => crate::buffer::peak_memory,
    "mx.reset_peak_memory" => crate::buffer::reset_peak_memory,
    "mx.get_memory_limit" => crate::buffer::memory_limit,
    "mx.set_memory_limit" => crate::buffer::set_memory_limit,
    "mx.get_cache_memory" => crate::buffer::cache_memory,
    "mx.set_cache_limit" => crate::buffer::set_cache_limit,
    "mx.clear_cache" => crate::buffer::clear_cache,
    // ops3: windows, differences, vector products, hadamard, graph dependencies
    "mx.hanning" => crate::ops::hanning,
    "mx.hamming" => crate::ops::hamming,
    "mx.blackman" => crate::ops::blackman,
    "mx.bartlett" => crate::ops::bartlett,
    "mx.diff" => crate::ops::diff,
    "mx.vecdot" => crate::ops::vecdot,
    "mx.linalg.cross" => crate::ops::cross,
    "mx.hadamard_transform" => crate::ops::hadamard_transform,
    "mx.depends" => crate::ops::depends,
    // transforms (core/src/transforms; per-primitive rules beside each op family)
    "mx.stop_gradient" => crate::ops::stop_gradient,
    "mx.vjp" => crate::transforms::vjp,
    "mx.jvp" => crate::transforms::jvp,
    "mx.value_and_grad" => crate::transforms::value_and_grad,
    "mx.grad" => crate::transforms::grad,
    "mx.vmap" => crate::transforms::vmap,
    "mx.custom_function" => crate::transforms::custom::CustomFunction::new,
    "mx.checkpoint" => crate::transforms::custom::checkpoint,
}

/// Implemented names whose Rust item is generic (`impl Into<…>` parameters), which the
/// existence check in [`CORE_API`] cannot name without picking types; listed by path instead.
pub const GENERIC_API: &[(&str, &str)] = &[
    ("mx.random.uniform", "crate::ops::random::uniform"),
    ("mx.random.bernoulli", "crate::ops::random::bernoulli"),
];



/// The status of one `mlx.core` name and a note (the implementing Rust item, or why not).
pub fn status(name: &str) -> (Status, &'static str) {
    if let Some((_, item)) = CORE_API.iter().chain(GENERIC_API).find(|(n, _)| *n == name) {
        return (Status::Done, item);
    }
    if let Some(op) = name.strip_prefix("mx.") {
        if UnaryOp::ALL.iter().any(|u| u.name() == op) {
            return (Status::Done, "crate::ops::unary (table)");
        }
        if BinaryOp::ALL.iter().any(|b| b.name() == op) {
            return (Status::Done, "crate::ops::binary (table)");
        }
    }
    if name.starts_with("mx.metal") {
        return (Status::NotApplicable, "Apple Metal only");
    }
    if name.starts_with("mx.cuda") {
        return (Status::NotApplicable, "NVIDIA CUDA only");
    }
    if let Some(member) = name.strip_prefix("mx.array.") {
        // Array methods that are ops forward to the op of the same name.
        let op_name = alloc::format!("mx.{member}");
        if !member.starts_with("__") && status(&op_name).0 == Status::Done {
            return (Status::Done, "method form of the op");
        }
        return (Status::NotYet, "array method or protocol");
    }
    (Status::NotYet, "")
}
