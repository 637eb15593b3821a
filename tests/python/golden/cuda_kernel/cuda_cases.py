"""Calls of ``mx.fast.cuda_kernel`` / ``mx.fast.precompiled_cuda_kernel`` whose outcome (the
exception class and message, or the value) gen_cuda_kernel.py records under real MLX 0.32.4's
CPU wheel and tests/python/test_cuda_kernel.py compares with ours. Each case is
``f(mx, np, tmpdir)``; valid calls (MLX's "No CUDA back-end."), then each argument rule of MLX's
binding (nanobind's TypeError, the inputs' and scalars' ValueErrors, which comes first), then
the transforms and export."""
import enum
import os


def _ck(**kw):
    base = dict(name="myexp", input_names=["inp"], output_names=["out"], source="out[0] = inp[0];")
    base.update(kw)
    return lambda mx, np, d: mx.fast.cuda_kernel(**base)


def _pk(**kw):
    def f(mx, np, d):
        a = mx.array([1.0, 2.0])
        base = dict(name="k", compiled_source=b"\x7fELF", inputs=[a], output_shapes=[(2,)],
                    output_dtypes=[mx.float32], scalars=[1, 0.5, True], grid=(2, 1, 1), threadgroup=(2, 1, 1))
        base.update({k: (v(mx, np) if callable(v) else v) for k, v in kw.items()})
        return mx.fast.precompiled_cuda_kernel(**base)
    return f


class _MyInt(int):
    pass


class _E(enum.IntEnum):
    A = 1


def _pos(mx, np, d):
    return mx.fast.cuda_kernel("k", ["a"], ["o"], "s", "h", False, 16)


def _kernel_in(transform):
    def f(mx, np, d):
        def g(x):
            return mx.fast.precompiled_cuda_kernel(name="k", compiled_source=b"", inputs=[x], output_shapes=[x.shape],
                                                   output_dtypes=[x.dtype], scalars=[], grid=(1, 1, 1),
                                                   threadgroup=(1, 1, 1))[0]
        x = mx.ones((2, 2))
        if transform == "compile":
            return mx.compile(g)(x)
        if transform == "grad":
            return mx.grad(lambda x: g(x).sum())(x)
        if transform == "vmap":
            return mx.vmap(g)(x)
        if transform == "export":
            return mx.export_function(os.path.join(d, "k.mlxfn"), g, x)
        if transform == "export_cuda_kernel":
            return mx.export_function(os.path.join(d, "c.mlxfn"), lambda x: mx.fast.cuda_kernel("k", ["a"], ["o"], "s"), x)
        raise ValueError(transform)
    return f


CASES = {
    # cuda_kernel: making the kernel object is the error; argument types first.
    "ck_valid": _ck(),
    "ck_positional_all": _pos,
    "ck_no_outputs": _ck(output_names=[]),
    "ck_tuple_names": _ck(input_names=("a", "b"), output_names=("o",)),
    "ck_numpy_str_names": lambda mx, np, d: mx.fast.cuda_kernel("k", np.array(["a"]), ["o"], "s"),
    "ck_negative_shared_memory": _ck(shared_memory=-1),
    "ck_numpy_int_shared_memory": lambda mx, np, d: mx.fast.cuda_kernel("k", ["a"], ["o"], "s", shared_memory=np.int64(4)),
    "ck_bool_shared_memory": _ck(shared_memory=True),
    "ck_float_shared_memory": _ck(shared_memory=1.0),
    "ck_big_shared_memory": _ck(shared_memory=2 ** 31),
    "ck_int_row_contiguous": _ck(ensure_row_contiguous=1),
    "ck_none_header": _ck(header=None),
    "ck_bytes_source": _ck(source=b"x"),
    "ck_str_names": _ck(input_names="inp"),
    "ck_generator_names": lambda mx, np, d: mx.fast.cuda_kernel("k", (n for n in ["a"]), ["o"], "s"),
    "ck_int_names": _ck(input_names=[1]),
    "ck_metal_only_keyword": _ck(atomic_outputs=True),
    "ck_no_arguments": lambda mx, np, d: mx.fast.cuda_kernel(),
    "ck_too_many_positional": lambda mx, np, d: mx.fast.cuda_kernel("k", ["a"], ["o"], "s", "h", True, 0, 1),
    "ck_name_twice": lambda mx, np, d: mx.fast.cuda_kernel("k", ["a"], ["o"], "s", name="k"),
    # precompiled_cuda_kernel: types (TypeError), then inputs, then scalars (ValueError), then the error.
    "pk_valid": _pk(),
    "pk_all_options": _pk(shared_memory=64, init_value=0.0, ensure_row_contiguous=True, stream=lambda mx, np: mx.cpu),
    "pk_gpu_stream": _pk(stream=lambda mx, np: mx.gpu),
    "pk_device_type_stream": _pk(stream=lambda mx, np: mx.DeviceType.cpu),
    "pk_empty": _pk(inputs=[], output_shapes=[], output_dtypes=[], scalars=[]),
    "pk_counts_disagree": _pk(output_shapes=[(2,), (3,)]),
    "pk_negative_dim": _pk(output_shapes=[(-2,)]),
    "pk_list_shapes": _pk(output_shapes=[[2, 1]], grid=[1, 1, 1]),
    "pk_numpy_grid": _pk(grid=lambda mx, np: np.array([1, 1, 1])),
    "pk_scalar_inputs": _pk(inputs=[1, 2.5, True, 1j]),
    "pk_numpy_input": _pk(inputs=lambda mx, np: [np.ones(3, np.float32)]),
    "pk_positional": lambda mx, np, d: mx.fast.precompiled_cuda_kernel("k", b"", [], [], [], [], (1, 1, 1), (1, 1, 1)),
    "pk_missing": lambda mx, np, d: mx.fast.precompiled_cuda_kernel(name="k"),
    "pk_str_source": _pk(compiled_source="x"),
    "pk_bytearray_source": _pk(compiled_source=bytearray(b"x")),
    "pk_grid_of_two": _pk(grid=(1, 1)),
    "pk_float_grid": _pk(grid=(1.0, 1, 1)),
    "pk_big_threadgroup": _pk(threadgroup=(2 ** 40, 1, 1)),
    "pk_int_shape": _pk(output_shapes=[2]),
    "pk_float_dim": _pk(output_shapes=[(2.0,)]),
    "pk_dtype_not_list": _pk(output_dtypes=lambda mx, np: mx.float32),
    "pk_numpy_dtype": _pk(output_dtypes=lambda mx, np: [np.float32]),
    "pk_none_input": _pk(inputs=[None]),
    "pk_str_inputs": _pk(inputs="ab"),
    "pk_str_scalars": _pk(scalars="ab"),
    "pk_float_shared_memory": _pk(shared_memory=1.5),
    "pk_str_init_value": _pk(init_value="a"),
    "pk_int_row_contiguous": _pk(ensure_row_contiguous=1),
    "pk_str_stream": _pk(stream="cpu"),
    "pk_bytes_name": _pk(name=b"k"),
    "pk_unknown_keyword": _pk(foo=1),
    "pk_list_input": _pk(inputs=[[1, 2]]),
    "pk_object_input": _pk(inputs=[object()]),
    "pk_numpy_str_input": _pk(inputs=lambda mx, np: [np.array(["x"])]),
    "pk_str_scalar": _pk(scalars=["s"]),
    "pk_none_scalar": _pk(scalars=[None]),
    "pk_array_scalar": _pk(scalars=lambda mx, np: [mx.array(1)]),
    "pk_int32_edges": _pk(scalars=[-2 ** 31, 2 ** 31 - 1]),
    "pk_int_beyond_int32": _pk(scalars=[2 ** 31]),
    "pk_float_not_float32": _pk(scalars=[0.1]),
    "pk_float_beyond_float32": _pk(scalars=[1e300]),
    "pk_float_specials": _pk(scalars=[float("inf"), float("nan"), -0.0]),
    "pk_numpy_float_scalar": _pk(scalars=lambda mx, np: [np.float64(1.0)]),
    "pk_numpy_int_scalar": _pk(scalars=lambda mx, np: [np.int64(1)]),
    "pk_int_subclass_scalar": _pk(scalars=[_MyInt(1)]),
    "pk_intenum_scalar": _pk(scalars=[_E.A]),
    "pk_bad_input_before_bad_scalar": _pk(inputs=["s"], scalars=["s"]),
    "pk_bad_grid_before_bad_scalar": _pk(grid=(1,), scalars=["s"]),
    # Transforms and export: the same error, nothing recorded.
    "in_compile": _kernel_in("compile"),
    "in_grad": _kernel_in("grad"),
    "in_vmap": _kernel_in("vmap"),
    "in_export": _kernel_in("export"),
    "cuda_kernel_in_export": _kernel_in("export_cuda_kernel"),
    "is_available": lambda mx, np, d: [mx.cuda.is_available(), hasattr(mx.fast, "cuda_kernel"),
                                       hasattr(mx.fast, "precompiled_cuda_kernel")],
}
