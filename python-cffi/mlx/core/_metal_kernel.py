"""``mx.fast.metal_kernel``: MLX's custom Metal kernel object, as MLX's CPU-only build has it.

There is no Metal back-end in mlx-arm (``mx.metal.is_available()`` is False), so — exactly as
real MLX 0.32.4's CPU wheel — calling the kernel is ``RuntimeError("[metal_kernel] No Metal
back-end.")``, except inside ``mx.export_function`` / ``mx.exporter``, where the call records
MLX's ``CustomKernel`` node (with the Metal source MLX generates) so that the function can be
exported here and run where Metal is. The node itself lives in the library
(``mlx_arm_fast_metal_kernel``, core ``ops/fast/custom_kernel.rs``); this module parses
MLX's Python arguments."""
from ._array import array, to_array
from ._dtypes import Dtype
from ._ffi import check, ffi, lib

_MATH_MODES = {"safe": 0, "relaxed": 1, "fast": 2}
_CALL_SIG = ("def __call__(self, *, inputs: list[scalar | array], output_shapes: list[Sequence[int]], "
             "output_dtypes: list[Dtype], grid: tuple[int, int, int], threadgroup: tuple[int, int, int], "
             "template: list[tuple[str, bool | int | Dtype]] | None = None, init_value: float | None = None, "
             "verbose: bool = false, stream: StreamOrDevice = None)")


def _math_mode(compile_options):
    """MLX's ``compile_options`` (None or a dict with ``math_mode``) as its enum value."""
    if compile_options is None:
        return 0
    if not isinstance(compile_options, dict):
        raise ValueError("[metal_kernel] Expected `compile_options` to be a dict.")
    mode = 0
    for key, value in compile_options.items():
        if key != "math_mode":
            raise ValueError(f"[metal_kernel] Unknown compile option `{key}`.")
        if value not in _MATH_MODES:
            raise ValueError("[metal_kernel] Expected math_mode to be 'safe', 'relaxed', or 'fast'.")
        mode = _MATH_MODES[value]
    return mode


def _device_type(stream):
    """-1 for no stream, else the mlx_device_type the stream or device names (shared with
    ``_cuda_kernel``)."""
    from ._device import Device, DeviceType, Stream, ThreadLocalStream

    if stream is None:
        return -1
    if isinstance(stream, DeviceType):
        return stream.value
    if isinstance(stream, int) and not isinstance(stream, bool) and stream in (0, 1):
        return stream  # a DeviceType's value, which MLX's enum accepts
    if isinstance(stream, Device):
        return stream.type.value
    if isinstance(stream, (Stream, ThreadLocalStream)):
        return stream.device.type.value
    raise TypeError(f"__call__(): incompatible function arguments. The following argument types are supported:\n"
                    f"    1. {_CALL_SIG}\n")


def _strings(values):
    """``char*[]`` of ``values`` and what keeps its strings alive (shared with ``_cuda_kernel``)."""
    keep = [ffi.new("char[]", str(v).encode()) for v in values]
    return keep, ffi.new("char*[]", keep)


def _c_outputs(shapes, dtypes):
    """The outputs' C arguments ``(output_shapes, output_ndims, output_dtypes)``: every shape's
    dims back to back, the dims of each, a dtype each (shared with ``_cuda_kernel``)."""
    return (ffi.new("int[]", [d for s in shapes for d in s] or [0]), ffi.new("size_t[]", [len(s) for s in shapes]),
            ffi.new("mlx_dtype[]", [d.code for d in dtypes] or [0]))


class _MetalKernel:
    """The callable ``mx.fast.metal_kernel`` returns (keyword arguments only, as MLX's)."""

    def __init__(self, name, input_names, output_names, source, header, ensure_row_contiguous, atomic_outputs,
                 math_mode):
        self._name, self._source, self._header = str(name), str(source), str(header)
        self._input_names, self._output_names = [str(n) for n in input_names], [str(n) for n in output_names]
        self._ensure_row_contiguous, self._atomic_outputs = bool(ensure_row_contiguous), bool(atomic_outputs)
        self._math_mode = math_mode

    def __call__(self, *, inputs, output_shapes, output_dtypes, grid, threadgroup, template=None, init_value=None,
                 verbose=False, stream=None):
        from ._binder import _vector_to_list
        from ._extra import _Vec

        arrays = [a if isinstance(a, array) else to_array(a) for a in inputs]
        names = []
        kinds = []
        values = []
        for tname, value in template or []:
            if isinstance(value, bool):
                kinds.append(1), values.append(int(value))
            elif isinstance(value, int):
                kinds.append(0), values.append(value)
            elif isinstance(value, Dtype):
                kinds.append(2), values.append(value.code)
            else:
                raise ValueError("[metal_kernel] Invalid template argument. Must be `mlx.core.Dtype`, `int` or `bool`.")
            names.append(tname)
        shapes = [tuple(int(d) for d in s) for s in output_shapes]
        dtypes = list(output_dtypes)
        if not all(isinstance(d, Dtype) for d in dtypes):
            raise TypeError(f"__call__(): incompatible function arguments. The following argument types are supported:\n"
                            f"    1. {_CALL_SIG}\n")
        c_shapes = _c_outputs(shapes, dtypes)
        grid, threadgroup = tuple(int(v) for v in grid), tuple(int(v) for v in threadgroup)
        if len(grid) != 3 or len(threadgroup) != 3:
            raise TypeError(f"__call__(): incompatible function arguments. The following argument types are supported:\n"
                            f"    1. {_CALL_SIG}\n")
        vec = _Vec(arrays)
        in_keep, in_names = _strings(self._input_names)
        out_keep, out_names = _strings(self._output_names)
        t_keep, t_names = _strings(names)
        res = ffi.new("mlx_vector_array*")
        res[0] = lib.mlx_vector_array_new()
        src = ffi.new("mlx_string*")
        src[0] = lib.mlx_string_new()
        done = False
        try:
            check(lib.mlx_arm_fast_metal_kernel(
                res, src if verbose else ffi.NULL, self._name.encode(),
                in_names, len(in_keep), out_names, len(out_keep), self._source.encode(), self._header.encode(),
                self._ensure_row_contiguous, self._atomic_outputs, self._math_mode, vec.v,
                *c_shapes, len(dtypes), len(shapes),
                ffi.new("int[3]", grid), ffi.new("int[3]", threadgroup),
                t_names, ffi.new("int[]", kinds), ffi.new("int[]", values), len(names),
                init_value is not None, float(init_value or 0.0), _device_type(stream)))
            if verbose:
                text = ffi.string(lib.mlx_string_data(src[0])).decode()
                print(f"Generated source code for `{self._name}`:\n```\n{text}\n```")
            done = True
            return _vector_to_list(res[0])  # frees the vector
        finally:
            lib.mlx_string_free(src[0])
            if not done:
                lib.mlx_vector_array_free(res[0])


def metal_kernel(name, input_names, output_names, source, header="", ensure_row_contiguous=True,
                 atomic_outputs=False, compile_options=None):
    """A custom Metal kernel from a source string. mlx-arm has no Metal back-end: the kernel can
    be exported (``mx.export_function``) but calling it is MLX's ``RuntimeError``."""
    math_mode = _math_mode(compile_options)
    if len(output_names) == 0:
        raise ValueError("[metal_kernel] Must specify at least one output.")
    return _MetalKernel(name, input_names, output_names, source, header, ensure_row_contiguous, atomic_outputs,
                        math_mode)
