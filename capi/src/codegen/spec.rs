//! The op table. Adding an op the core gained is one line here: `op(name, header, params, call)`
//! where `params` is `"name: kind, …"` (kinds in `super::param`) and `call` is the Rust
//! expression over the converted parameters (arrays are `Array`, `ints` are `Vec<isize>`,
//! `shape` is `Vec<usize>`, `dtype` is `DType`, `str` is `&str`, `count` is `usize`).
//! Names follow mlx-c's overload suffixes (`sum`, `sum_axis`, `sum_axes`).

use super::{Op, Out};
use mlx_arm_core::ops::{BinaryOp, UnaryOp};

/// Core unary/binary ops that mlx-c's `ops.h` lacks: exported as `mlx_arm_<name>`.
const NOT_IN_MLX_C: &[&str] = &["trunc"];

/// One table line as an [`Op`] that takes the trailing stream (every op but two in mlx-c).
pub(super) fn op(name: &str, header: &'static str, params: &str, out: Out, call: &str) -> Op {
    let params = params
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (n, k) = p.split_once(':').unwrap_or_else(|| panic!("bad parameter {p} of {name}"));
            (n.trim().to_string(), k.trim().to_string())
        })
        .collect();
    Op { name: name.into(), header, params, out, call: call.into(), stream: true }
}

fn c_name(name: &str) -> String {
    if NOT_IN_MLX_C.contains(&name) {
        format!("arm_{name}")
    } else {
        name.to_string()
    }
}

/// Every generated op.
pub fn table() -> Vec<Op> {
    use Out::{Array as A, Vector as V};
    let mut t = Vec::new();
    for u in UnaryOp::ALL {
        if u.name() == "round" {
            continue; // mlx-c's round takes `decimals`, below.
        }
        t.push(op(&c_name(u.name()), "ops", "a: array", A, &format!("ops::unary(UnaryOp::{u:?}, &a)")));
    }
    for b in BinaryOp::ALL {
        t.push(op(&c_name(b.name()), "ops", "a: array, b: array", A, &format!("ops::binary(BinaryOp::{b:?}, &a, &b)")));
    }
    let lines: &[(&str, &str, Out, &str)] = &[
        // elementwise extras
        ("round", "a: array, decimals: int", A, "compose::round(&a, decimals)"),
        ("where", "condition: array, x: array, y: array", A, "ops::where_(&condition, &x, &y)"),
        ("astype", "a: array, dtype: dtype", A, "ops::astype(&a, dtype)"),
        ("view", "a: array, dtype: dtype", A, "ops::view(&a, dtype)"),
        // creation
        ("zeros", "shape: shape, dtype: dtype", A, "ops::zeros(&shape, dtype)"),
        ("ones", "shape: shape, dtype: dtype", A, "ops::ones(&shape, dtype)"),
        ("full", "shape: shape, vals: array, dtype: dtype", A, "compose::full(&shape, &vals, dtype)"),
        ("zeros_like", "a: array", A, "ops::zeros_like(&a)"),
        ("ones_like", "a: array", A, "ops::ones_like(&a)"),
        ("full_like", "a: array, vals: array, dtype: dtype", A, "compose::full_like(&a, &vals, dtype)"),
        ("arange", "start: double, stop: double, step: double, dtype: dtype", A, "ops::arange(start, stop, step, dtype)"),
        ("linspace", "start: double, stop: double, num: int, dtype: dtype", A, "ops::linspace(start, stop, num as i64, dtype)"),
        ("eye", "n: count, m: count, k: int, dtype: dtype", A, "ops::eye(n, Some(m), k as i64, dtype)"),
        ("identity", "n: count, dtype: dtype", A, "ops::identity(n, dtype)"),
        ("tri", "n: count, m: count, k: int, dtype: dtype", A, "ops::tri(n, Some(m), k as i64, dtype)"),
        ("meshgrid", "arrays: vector_array, sparse: bool, indexing: str", V, "ops::meshgrid(&arrays, sparse, indexing)"),
        // shape and views
        ("reshape", "a: array, shape: ints", A, "ops::reshape(&a, &shape)"),
        ("transpose_axes", "a: array, axes: ints", A, "ops::transpose(&a, Some(&axes))"),
        ("transpose", "a: array", A, "ops::transpose(&a, None)"),
        ("swapaxes", "a: array, axis1: int, axis2: int", A, "ops::swapaxes(&a, axis1 as isize, axis2 as isize)"),
        ("moveaxis", "a: array, source: int, destination: int", A, "ops::moveaxis(&a, source as isize, destination as isize)"),
        ("broadcast_to", "a: array, shape: shape", A, "ops::broadcast_to(&a, &shape)"),
        ("broadcast_arrays", "inputs: vector_array", V, "ops::broadcast_arrays(&inputs)"),
        ("expand_dims_axes", "a: array, axes: ints", A, "ops::expand_dims(&a, &axes)"),
        ("expand_dims", "a: array, axis: int", A, "ops::expand_dims(&a, &[axis as isize])"),
        ("squeeze_axes", "a: array, axes: ints", A, "ops::squeeze(&a, Some(&axes))"),
        ("squeeze_axis", "a: array, axis: int", A, "ops::squeeze(&a, Some(&[axis as isize]))"),
        ("squeeze", "a: array", A, "ops::squeeze(&a, None)"),
        ("flatten", "a: array, start_axis: int, end_axis: int", A, "ops::flatten(&a, start_axis as isize, end_axis as isize)"),
        ("slice", "a: array, start: ints, stop: ints, strides: ints", A, "ops::slice(&a, &start, &stop, &strides)"),
        ("as_strided", "a: array, shape: shape, strides: int64s, offset: size", A, "ops::as_strided(&a, &shape, &strides, offset)"),
        ("contiguous", "a: array, allow_col_major: bool", A, "{ let _ = allow_col_major; ops::contiguous(&a) }"),
        ("stop_gradient", "a: array", A, "ops::stop_gradient(&a)"),
        ("copy", "a: array", A, "ops::contiguous(&a)"),
        ("number_of_elements", "a: array, axes: ints, inverted: bool, dtype: dtype", A, "ops::mlxc_ops::number_of_elements(&a, &axes, inverted, dtype)"),
        // reductions (mlx-c overloads: all axes, one axis, listed axes)
        ("sum", "a: array, keepdims: bool", A, "ops::sum(&a, None, keepdims)"),
        ("sum_axis", "a: array, axis: int, keepdims: bool", A, "ops::sum(&a, Some(&[axis as isize]), keepdims)"),
        ("sum_axes", "a: array, axes: ints, keepdims: bool", A, "ops::sum(&a, Some(&axes), keepdims)"),
        ("prod", "a: array, keepdims: bool", A, "ops::prod(&a, None, keepdims)"),
        ("prod_axis", "a: array, axis: int, keepdims: bool", A, "ops::prod(&a, Some(&[axis as isize]), keepdims)"),
        ("prod_axes", "a: array, axes: ints, keepdims: bool", A, "ops::prod(&a, Some(&axes), keepdims)"),
        ("max", "a: array, keepdims: bool", A, "ops::max(&a, None, keepdims)"),
        ("max_axis", "a: array, axis: int, keepdims: bool", A, "ops::max(&a, Some(&[axis as isize]), keepdims)"),
        ("max_axes", "a: array, axes: ints, keepdims: bool", A, "ops::max(&a, Some(&axes), keepdims)"),
        ("min", "a: array, keepdims: bool", A, "ops::min(&a, None, keepdims)"),
        ("min_axis", "a: array, axis: int, keepdims: bool", A, "ops::min(&a, Some(&[axis as isize]), keepdims)"),
        ("min_axes", "a: array, axes: ints, keepdims: bool", A, "ops::min(&a, Some(&axes), keepdims)"),
        ("all", "a: array, keepdims: bool", A, "ops::all(&a, None, keepdims)"),
        ("all_axis", "a: array, axis: int, keepdims: bool", A, "ops::all(&a, Some(&[axis as isize]), keepdims)"),
        ("all_axes", "a: array, axes: ints, keepdims: bool", A, "ops::all(&a, Some(&axes), keepdims)"),
        ("any", "a: array, keepdims: bool", A, "ops::any(&a, None, keepdims)"),
        ("any_axis", "a: array, axis: int, keepdims: bool", A, "ops::any(&a, Some(&[axis as isize]), keepdims)"),
        ("any_axes", "a: array, axes: ints, keepdims: bool", A, "ops::any(&a, Some(&axes), keepdims)"),
        ("mean", "a: array, keepdims: bool", A, "ops::mean(&a, None, keepdims)"),
        ("mean_axis", "a: array, axis: int, keepdims: bool", A, "ops::mean(&a, Some(&[axis as isize]), keepdims)"),
        ("mean_axes", "a: array, axes: ints, keepdims: bool", A, "ops::mean(&a, Some(&axes), keepdims)"),
        ("logsumexp", "a: array, keepdims: bool", A, "ops::logsumexp(&a, None, keepdims)"),
        ("logsumexp_axis", "a: array, axis: int, keepdims: bool", A, "ops::logsumexp(&a, Some(&[axis as isize]), keepdims)"),
        ("logsumexp_axes", "a: array, axes: ints, keepdims: bool", A, "ops::logsumexp(&a, Some(&axes), keepdims)"),
        ("var", "a: array, keepdims: bool, ddof: int", A, "ops::var(&a, None, keepdims, ddof as i64)"),
        ("var_axis", "a: array, axis: int, keepdims: bool, ddof: int", A, "ops::var(&a, Some(&[axis as isize]), keepdims, ddof as i64)"),
        ("var_axes", "a: array, axes: ints, keepdims: bool, ddof: int", A, "ops::var(&a, Some(&axes), keepdims, ddof as i64)"),
        ("std", "a: array, keepdims: bool, ddof: int", A, "ops::std(&a, None, keepdims, ddof as i64)"),
        ("std_axis", "a: array, axis: int, keepdims: bool, ddof: int", A, "ops::std(&a, Some(&[axis as isize]), keepdims, ddof as i64)"),
        ("std_axes", "a: array, axes: ints, keepdims: bool, ddof: int", A, "ops::std(&a, Some(&axes), keepdims, ddof as i64)"),
        ("median", "a: array, axes: ints, keepdims: bool", A, "ops::median(&a, Some(&axes), keepdims)"),
        ("softmax", "a: array, precise: bool", A, "ops::softmax(&a, None, precise)"),
        ("softmax_axis", "a: array, axis: int, precise: bool", A, "ops::softmax(&a, Some(&[axis as isize]), precise)"),
        ("softmax_axes", "a: array, axes: ints, precise: bool", A, "ops::softmax(&a, Some(&axes), precise)"),
        ("argmax", "a: array, keepdims: bool", A, "ops::argmax(&a, None, keepdims)"),
        ("argmax_axis", "a: array, axis: int, keepdims: bool", A, "ops::argmax(&a, Some(axis as isize), keepdims)"),
        ("argmin", "a: array, keepdims: bool", A, "ops::argmin(&a, None, keepdims)"),
        ("argmin_axis", "a: array, axis: int, keepdims: bool", A, "ops::argmin(&a, Some(axis as isize), keepdims)"),
        // scans
        ("cumsum", "a: array, axis: int, reverse: bool, inclusive: bool", A, "ops::cumsum(&a, Some(axis as isize), reverse, inclusive, None)"),
        ("cumprod", "a: array, axis: int, reverse: bool, inclusive: bool", A, "ops::cumprod(&a, Some(axis as isize), reverse, inclusive, None)"),
        ("cummax", "a: array, axis: int, reverse: bool, inclusive: bool", A, "ops::cummax(&a, Some(axis as isize), reverse, inclusive)"),
        ("cummin", "a: array, axis: int, reverse: bool, inclusive: bool", A, "ops::cummin(&a, Some(axis as isize), reverse, inclusive)"),
        ("logcumsumexp", "a: array, axis: int, reverse: bool, inclusive: bool", A, "ops::logcumsumexp(&a, Some(axis as isize), reverse, inclusive)"),
        // sorting
        ("sort", "a: array", A, "ops::sort(&a, None)"),
        ("sort_axis", "a: array, axis: int", A, "ops::sort(&a, Some(axis as isize))"),
        ("argsort", "a: array", A, "ops::argsort(&a, None)"),
        ("argsort_axis", "a: array, axis: int", A, "ops::argsort(&a, Some(axis as isize))"),
        ("partition", "a: array, kth: int", A, "ops::partition(&a, kth as isize, None)"),
        ("partition_axis", "a: array, kth: int, axis: int", A, "ops::partition(&a, kth as isize, Some(axis as isize))"),
        ("argpartition", "a: array, kth: int", A, "ops::argpartition(&a, kth as isize, None)"),
        ("argpartition_axis", "a: array, kth: int, axis: int", A, "ops::argpartition(&a, kth as isize, Some(axis as isize))"),
        ("topk", "a: array, k: int", A, "ops::topk(&a, k as isize, None)"),
        ("topk_axis", "a: array, k: int, axis: int", A, "ops::topk(&a, k as isize, Some(axis as isize))"),
        // indexing
        ("take", "a: array, indices: array", A, "ops::take(&a, &indices, None)"),
        ("take_axis", "a: array, indices: array, axis: int", A, "ops::take(&a, &indices, Some(axis as isize))"),
        ("take_along_axis", "a: array, indices: array, axis: int", A, "ops::take_along_axis(&a, &indices, Some(axis as isize))"),
        ("put_along_axis", "a: array, indices: array, values: array, axis: int", A, "ops::put_along_axis(&a, &indices, &values, Some(axis as isize))"),
        ("scatter_add_axis", "a: array, indices: array, values: array, axis: int", A, "ops::index::scatter_add_along_axis(&a, &indices, &values, axis as isize)"),
        ("masked_scatter", "a: array, mask: array, src: array", A, "ops::mlxc_ops::masked_scatter(&a, &mask, &src)"),
        ("gather", "a: array, indices: vector_array, axes: ints, slice_sizes: shape", A, "ops::gather(&a, &indices, &axes, &slice_sizes)"),
        ("gather_single", "a: array, indices: array, axis: int, slice_sizes: shape", A, "ops::gather(&a, &[indices], &[axis as isize], &slice_sizes)"),
        ("scatter", "a: array, indices: vector_array, updates: array, axes: ints", A, "ops::scatter(&a, &indices, &updates, &axes)"),
        ("scatter_single", "a: array, indices: array, updates: array, axis: int", A, "ops::scatter(&a, &[indices], &updates, &[axis as isize])"),
        ("scatter_add", "a: array, indices: vector_array, updates: array, axes: ints", A, "ops::scatter_add(&a, &indices, &updates, &axes)"),
        ("scatter_add_single", "a: array, indices: array, updates: array, axis: int", A, "ops::scatter_add(&a, &[indices], &updates, &[axis as isize])"),
        ("scatter_prod", "a: array, indices: vector_array, updates: array, axes: ints", A, "ops::scatter_prod(&a, &indices, &updates, &axes)"),
        ("scatter_prod_single", "a: array, indices: array, updates: array, axis: int", A, "ops::scatter_prod(&a, &[indices], &updates, &[axis as isize])"),
        ("scatter_max", "a: array, indices: vector_array, updates: array, axes: ints", A, "ops::scatter_max(&a, &indices, &updates, &axes)"),
        ("scatter_max_single", "a: array, indices: array, updates: array, axis: int", A, "ops::scatter_max(&a, &[indices], &updates, &[axis as isize])"),
        ("scatter_min", "a: array, indices: vector_array, updates: array, axes: ints", A, "ops::scatter_min(&a, &indices, &updates, &axes)"),
        ("scatter_min_single", "a: array, indices: array, updates: array, axis: int", A, "ops::scatter_min(&a, &[indices], &updates, &[axis as isize])"),
        ("slice_dynamic", "a: array, start: array, axes: ints, slice_size: shape", A, "ops::slice_dynamic(&a, &compose::index_values(&start, \"slice_dynamic\")?, &axes, &slice_size)"),
        ("slice_update", "src: array, update: array, start: ints, stop: ints, strides: ints", A, "ops::slice_update(&src, &update, &start, &stop, &strides)"),
        ("slice_update_add", "src: array, update: array, start: ints, stop: ints, strides: ints", A, "ops::mlxc_ops::slice_update_reduce(&src, &update, &start, &stop, &strides, ops::mlxc_ops::SliceReduce::Add)"),
        ("slice_update_max", "src: array, update: array, start: ints, stop: ints, strides: ints", A, "ops::mlxc_ops::slice_update_reduce(&src, &update, &start, &stop, &strides, ops::mlxc_ops::SliceReduce::Max)"),
        ("slice_update_min", "src: array, update: array, start: ints, stop: ints, strides: ints", A, "ops::mlxc_ops::slice_update_reduce(&src, &update, &start, &stop, &strides, ops::mlxc_ops::SliceReduce::Min)"),
        ("slice_update_prod", "src: array, update: array, start: ints, stop: ints, strides: ints", A, "ops::mlxc_ops::slice_update_reduce(&src, &update, &start, &stop, &strides, ops::mlxc_ops::SliceReduce::Prod)"),
        ("slice_update_dynamic", "src: array, update: array, start: array, axes: ints", A, "ops::slice_update_dynamic(&src, &update, &compose::index_values(&start, \"slice_update_dynamic\")?, &axes)"),
        // comparison composites
        ("isclose", "a: array, b: array, rtol: double, atol: double, equal_nan: bool", A, "ops::isclose(&a, &b, rtol, atol, equal_nan)"),
        ("allclose", "a: array, b: array, rtol: double, atol: double, equal_nan: bool", A, "ops::allclose(&a, &b, rtol, atol, equal_nan)"),
        ("array_equal", "a: array, b: array, equal_nan: bool", A, "ops::array_equal(&a, &b, equal_nan)"),
        ("clip", "a: array, a_min: array?, a_max: array?", A, "ops::clip(&a, a_min.as_ref(), a_max.as_ref())"),
        ("nan_to_num", "a: array, nan: float, posinf: opt_float, neginf: opt_float", A, "ops::nan_to_num(&a, f64::from(nan), posinf.map(f64::from), neginf.map(f64::from))"),
        ("divmod", "a: array, b: array", V, "ops::divmod(&a, &b)"),
        // joining, splitting, tiling
        ("concatenate", "arrays: vector_array", A, "ops::concatenate(&arrays, None)"),
        ("concatenate_axis", "arrays: vector_array, axis: int", A, "ops::concatenate(&arrays, Some(axis as isize))"),
        ("stack", "arrays: vector_array", A, "ops::stack(&arrays, 0)"),
        ("stack_axis", "arrays: vector_array, axis: int", A, "ops::stack(&arrays, axis as isize)"),
        ("split", "a: array, num_splits: count, axis: int", V, "ops::split(&a, ops::SplitSpec::Sections(num_splits), axis as isize)"),
        ("split_sections", "a: array, indices: ints, axis: int", V, "ops::split(&a, ops::SplitSpec::Indices(&indices), axis as isize)"),
        ("tile", "arr: array, reps: shape", A, "ops::tile(&arr, &reps)"),
        ("repeat", "arr: array, repeats: int", A, "ops::repeat(&arr, repeats as isize, None)"),
        ("repeat_axis", "arr: array, repeats: int, axis: int", A, "ops::repeat(&arr, repeats as isize, Some(axis as isize))"),
        ("roll", "a: array, shift: ints", A, "ops::roll(&a, &shift, None)"),
        ("roll_axis", "a: array, shift: ints, axis: int", A, "ops::roll_summed(&a, &shift, axis as isize)"),
        ("roll_axes", "a: array, shift: ints, axes: ints", A, "ops::roll(&a, &shift, Some(&axes))"),
        ("pad", "a: array, axes: ints, low_pad_size: shape, high_pad_size: shape, pad_value: array, mode: str", A, "compose::pad(&a, &axes, &low_pad_size, &high_pad_size, &pad_value, mode)"),
        ("pad_symmetric", "a: array, pad_width: count, pad_value: array, mode: str", A, "compose::pad_symmetric(&a, pad_width, &pad_value, mode)"),
        ("unflatten", "a: array, axis: int, shape: ints", A, "ops::unflatten(&a, axis as isize, &shape)"),
        ("atleast_1d", "a: array", A, "ops::atleast_1d(&a)"),
        ("atleast_2d", "a: array", A, "ops::atleast_2d(&a)"),
        ("atleast_3d", "a: array", A, "ops::atleast_3d(&a)"),
        // diagonals and triangles
        ("diag", "a: array, k: int", A, "ops::diag(&a, k as isize)"),
        ("diagonal", "a: array, offset: int, axis1: int, axis2: int", A, "ops::diagonal(&a, offset as isize, axis1 as isize, axis2 as isize)"),
        ("trace", "a: array, offset: int, axis1: int, axis2: int, dtype: dtype", A, "ops::trace(&a, offset as isize, axis1 as isize, axis2 as isize, Some(dtype))"),
        ("tril", "x: array, k: int", A, "ops::tril(&x, k as isize)"),
        ("triu", "x: array, k: int", A, "ops::triu(&x, k as isize)"),
        // products
        ("matmul", "a: array, b: array", A, "ops::matmul(&a, &b)"),
        ("addmm", "c: array, a: array, b: array, alpha: float, beta: float", A, "ops::addmm(&c, &a, &b, alpha, beta)"),
        ("inner", "a: array, b: array", A, "ops::inner(&a, &b)"),
        ("outer", "a: array, b: array", A, "ops::outer(&a, &b)"),
        ("kron", "a: array, b: array", A, "ops::kron(&a, &b)"),
        ("tensordot", "a: array, b: array, axes_a: ints, axes_b: ints", A, "ops::tensordot_axes(&a, &b, &axes_a, &axes_b)"),
        ("tensordot_axis", "a: array, b: array, axis: int", A, "ops::tensordot(&a, &b, axis as isize)"),
        ("einsum", "subscripts: str, operands: vector_array", A, "ops::einsum(subscripts, &operands)"),
        // convolution (MLX layout: input [N, spatial..., C_in], weight [C_out, spatial..., C_in/groups])
        ("conv1d", "input: array, weight: array, stride: int, padding: int, dilation: int, groups: int", A, "ops::conv1d(&input, &weight, stride as isize, padding as isize, dilation as isize, groups as isize)"),
        ("conv2d", "input: array, weight: array, stride_0: int, stride_1: int, padding_0: int, padding_1: int, dilation_0: int, dilation_1: int, groups: int", A, "ops::conv2d(&input, &weight, (stride_0 as isize, stride_1 as isize), (padding_0 as isize, padding_1 as isize), (dilation_0 as isize, dilation_1 as isize), groups as isize)"),
        ("conv3d", "input: array, weight: array, stride_0: int, stride_1: int, stride_2: int, padding_0: int, padding_1: int, padding_2: int, dilation_0: int, dilation_1: int, dilation_2: int, groups: int", A, "ops::conv_general(&input, &weight, &[stride_0 as isize, stride_1 as isize, stride_2 as isize], &[padding_0 as isize, padding_1 as isize, padding_2 as isize], &[padding_0 as isize, padding_1 as isize, padding_2 as isize], &[dilation_0 as isize, dilation_1 as isize, dilation_2 as isize], &[1, 1, 1], groups as isize, false)"),
        ("conv_general", "input: array, weight: array, stride: ints, padding_lo: ints, padding_hi: ints, kernel_dilation: ints, input_dilation: ints, groups: int, flip: bool", A, "ops::conv_general(&input, &weight, &stride, &padding_lo, &padding_hi, &kernel_dilation, &input_dilation, groups as isize, flip)"),
        // Convolution family: transposed convolutions (mlx-c names and order); convolve, which mlx-c lacks,
        // as the extension mlx_arm_convolve with MLX's parameter names.
        ("conv_transpose1d", "input: array, weight: array, stride: int, padding: int, dilation: int, output_padding: int, groups: int", A, "ops::conv_transpose1d(&input, &weight, stride as isize, padding as isize, dilation as isize, output_padding as isize, groups as isize)"),
        ("conv_transpose2d", "input: array, weight: array, stride_0: int, stride_1: int, padding_0: int, padding_1: int, dilation_0: int, dilation_1: int, output_padding_0: int, output_padding_1: int, groups: int", A, "ops::conv_transpose2d(&input, &weight, (stride_0 as isize, stride_1 as isize), (padding_0 as isize, padding_1 as isize), (dilation_0 as isize, dilation_1 as isize), (output_padding_0 as isize, output_padding_1 as isize), groups as isize)"),
        ("conv_transpose3d", "input: array, weight: array, stride_0: int, stride_1: int, stride_2: int, padding_0: int, padding_1: int, padding_2: int, dilation_0: int, dilation_1: int, dilation_2: int, output_padding_0: int, output_padding_1: int, output_padding_2: int, groups: int", A, "ops::conv_transpose3d(&input, &weight, (stride_0 as isize, stride_1 as isize, stride_2 as isize), (padding_0 as isize, padding_1 as isize, padding_2 as isize), (dilation_0 as isize, dilation_1 as isize, dilation_2 as isize), (output_padding_0 as isize, output_padding_1 as isize, output_padding_2 as isize), groups as isize)"),
        ("arm_convolve", "a: array, v: array, mode: str", A, "ops::convolve(&a, &v, mode)"),
        // quantization
        ("quantize", "w: array, group_size: opt_int, bits: opt_int, mode: str, global_scale: array?", V, "ops::quantize(&w, group_size.map(i64::from), bits.map(i64::from), mode, global_scale.as_ref())"),
        ("dequantize", "w: array, scales: array, biases: array?, group_size: opt_int, bits: opt_int, mode: str, global_scale: array?, dtype: opt_dtype", A, "ops::dequantize(&w, &scales, biases.as_ref(), group_size.map(i64::from), bits.map(i64::from), mode, global_scale.as_ref(), dtype)"),
        ("quantized_matmul", "x: array, w: array, scales: array, biases: array?, transpose: bool, group_size: opt_int, bits: opt_int, mode: str", A, "ops::quantized_matmul(&x, &w, &scales, biases.as_ref(), transpose, group_size.map(i64::from), bits.map(i64::from), mode)"),
        ("gather_qmm", "x: array, w: array, scales: array, biases: array?, lhs_indices: array?, rhs_indices: array?, transpose: bool, group_size: opt_int, bits: opt_int, mode: str, sorted_indices: bool", A, "ops::gather_qmm(&x, &w, &scales, biases.as_ref(), lhs_indices.as_ref(), rhs_indices.as_ref(), transpose, group_size.map(i64::from), bits.map(i64::from), mode, sorted_indices)"),
        // fixes: gather_mm / qqmm
        ("gather_mm", "a: array, b: array, lhs_indices: array?, rhs_indices: array?, sorted_indices: bool", A, "ops::gather_mm(&a, &b, lhs_indices.as_ref(), rhs_indices.as_ref(), sorted_indices)"),
        ("qqmm", "x: array, w: array, w_scales: array?, group_size: opt_int, bits: opt_int, mode: str, global_scale_x: array?, global_scale_w: array?", A, "ops::qqmm(&x, &w, w_scales.as_ref(), group_size.map(i64::from), bits.map(i64::from), mode, global_scale_x.as_ref(), global_scale_w.as_ref())"),
        ("to_fp8", "x: array", A, "ops::to_fp8(&x)"),
        ("from_fp8", "x: array, dtype: dtype", A, "ops::from_fp8(&x, dtype)"),
        // GGUF blocks (extensions: mlx-c has no block types). `ggml_type` is ggml's name ("q4_0").
        ("arm_ggml_quantize", "w: array, ggml_type: str", A, "ops::ggml_quantize(&w, compose::ggml_type(ggml_type)?)"),
        ("arm_ggml_dequantize", "w_blocks: array, ggml_type: str, k: count", A, "ops::ggml_dequantize(&w_blocks, compose::ggml_type(ggml_type)?, k)"),
        ("arm_ggml_matmul", "x: array, w_blocks: array, ggml_type: str, k: count", A, "ops::ggml_matmul(&x, &w_blocks, compose::ggml_type(ggml_type)?, k)"),
        // ops3: windows, differences, products, hadamard (mlx-c names); MLX 0.32 ops that
        // mlx-c 0.31 lacks are extensions `mlx_arm_<name>` with MLX's parameter names.
        ("hanning", "M: int", A, "ops::hanning(i64::from(M))"),
        ("hamming", "M: int", A, "ops::hamming(i64::from(M))"),
        ("blackman", "M: int", A, "ops::blackman(i64::from(M))"),
        ("bartlett", "M: int", A, "ops::bartlett(i64::from(M))"),
        ("hadamard_transform", "a: array, scale: opt_float", A, "ops::hadamard_transform(&a, scale)"),
        ("arm_logical_xor", "a: array, b: array", A, "ops::logical_xor(&a, &b)"),
        ("arm_flip", "a: array", A, "ops::flip(&a, None)"),
        ("arm_flip_axes", "a: array, axes: ints", A, "ops::flip(&a, Some(&axes))"),
        ("arm_unstack", "x: array, axis: int", V, "ops::unstack(&x, axis as isize)"),
        ("arm_count_nonzero", "a: array, keepdims: bool", A, "ops::count_nonzero(&a, None, keepdims)"),
        ("arm_count_nonzero_axes", "a: array, axes: ints, keepdims: bool", A, "ops::count_nonzero(&a, Some(&axes), keepdims)"),
        ("arm_searchsorted", "sorted_sequence: array, values: array, side: str", A, "ops::searchsorted(&sorted_sequence, &values, side)"),
        ("arm_diff", "a: array, n: int, axis: int", A, "ops::diff(&a, i64::from(n), axis as isize)"),
        ("arm_vecdot", "a: array, b: array, axis: int", A, "ops::vecdot(&a, &b, axis as isize)"),
        // More ops: MLX 0.32 ops mlx-c 0.31 lacks (extensions `mlx_arm_<name>`, MLX's parameter names).
        ("arm_unique", "a: array, size: int, return_index: bool, return_inverse: bool, return_counts: bool, fill_value: array?", V, "ops::unique(&a, i64::from(size), return_index, return_inverse, return_counts, fill_value.as_ref())"),
        ("segmented_mm", "a: array, b: array, segments: array", A, "ops::segmented_mm(&a, &b, &segments)"),
        // MLX 0.32.4's gather_qqmm (not in mlx-c 0.31: extension, MLX's parameter names).
        ("arm_gather_qqmm", "x: array, w: array, scales: array?, lhs_indices: array?, rhs_indices: array?, group_size: opt_int, bits: opt_int, mode: str, global_scale_x: array?, global_scale_w: array?, sorted_indices: bool", A, "ops::gather_qqmm(&x, &w, scales.as_ref(), lhs_indices.as_ref(), rhs_indices.as_ref(), group_size.map(i64::from), bits.map(i64::from), mode, global_scale_x.as_ref(), global_scale_w.as_ref(), sorted_indices)"),
        ("block_masked_mm", "a: array, b: array, block_size: int, mask_out: array?, mask_lhs: array?, mask_rhs: array?", A, "ops::block_masked_mm(&a, &b, i64::from(block_size), mask_out.as_ref(), mask_lhs.as_ref(), mask_rhs.as_ref())"),
    ];
    for (name, params, out, call) in lines {
        t.push(op(name, "ops", params, *out, call));
    }
    // mlx-c's depends takes no stream.
    let mut dep = op("depends", "ops", "inputs: vector_array, dependencies: vector_array", V, "ops::depends(&inputs, &dependencies)");
    dep.stream = false;
    t.push(dep);
    t
}
