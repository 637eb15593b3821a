"""Hand-written bindings where MLX's Python signature cannot map onto the C function by
parameter names (variadic operands, renamed parameters, one Python function over several C
variants). Each is installed only when the library exports the C functions it needs, so with
an older library the name keeps raising NotImplementedError."""
from ._array import _ARR_PTR, array, stream_handle, to_array, wrap
from ._ffi import check, exported, ffi, lib
from . import _cuda_kernel, _metal_kernel


def _res(cname, *args):
    p = ffi.new(_ARR_PTR)
    check(getattr(lib, cname)(p, *args))
    return wrap(p)


class _Vec:
    """A C ``mlx_vector_array`` of ``arrays``, freed with this object."""

    def __init__(self, arrays):
        self.arrays = [to_array(a) for a in arrays]
        hs = ffi.new("mlx_array[]", [a._p[0] for a in self.arrays])
        self.v = lib.mlx_vector_array_new_data(hs, len(self.arrays))

    def __del__(self):
        lib.mlx_vector_array_free(self.v)


def einsum(subscripts, *operands, stream=None):
    """Einstein summation over ``operands`` as ``subscripts`` says."""
    if not isinstance(subscripts, str):
        raise TypeError(f"einsum(): subscripts must be a str, got {type(subscripts).__name__}")
    vec = _Vec(operands)
    return _res("mlx_einsum", ffi.new("char[]", subscripts.encode()), vec.v, stream_handle(stream))


def rope(a, dims, *, traditional, base, scale, offset, freqs=None, stream=None):
    """Rotary positional encoding (``offset``: an int, or an array for a dynamic offset)."""
    a = to_array(a)
    b = ffi.new("mlx_optional_float*")
    if base is not None:
        b.has_value, b.value = True, float(base)
    keep = []
    fr = lib.mlx_array_new()
    if freqs is not None:
        f = to_array(freqs)
        keep.append(f)
        fr = f._p[0]
    if isinstance(offset, array):
        return _res("mlx_fast_rope_dynamic", a._p[0], int(dims), bool(traditional), b[0], float(scale), offset._p[0],
                    fr, stream_handle(stream))
    return _res("mlx_fast_rope", a._p[0], int(dims), bool(traditional), b[0], float(scale), int(offset), fr,
                stream_handle(stream))


def _vector_list(cname, *args):
    from ._binder import _vector_to_list

    v = ffi.new("mlx_vector_array*")
    check(getattr(lib, cname)(v, *args))
    return _vector_to_list(v[0])


def split(a, /, indices_or_sections, axis=0, *, stream=None):
    """``a`` split into equal parts (an int) or at the given indices (a sequence): a list."""
    a = to_array(a)
    if isinstance(indices_or_sections, int) and not isinstance(indices_or_sections, bool):
        return _vector_list("mlx_split", a._p[0], indices_or_sections, int(axis), stream_handle(stream))
    idx = [int(i) for i in indices_or_sections]
    return _vector_list("mlx_split_sections", a._p[0], ffi.new("int[]", idx), len(idx), int(axis),
                        stream_handle(stream))


def depends(inputs, dependencies):
    """``inputs`` (an array or a sequence of them) made to depend on ``dependencies``: an array
    for an array, else a list."""
    single = isinstance(inputs, array)
    ins = _Vec([inputs] if single else list(inputs))
    deps = _Vec([dependencies] if isinstance(dependencies, array) else list(dependencies))
    out = _vector_list("mlx_depends", ins.v, deps.v)
    return out[0] if single else out


def qqmm(x, w, scales=None, group_size=None, bits=None, mode="nvfp4", global_scale_x=None, global_scale_w=None, *,
         stream=None):
    """``x`` quantized on the fly times the quantized ``w`` (C's ``w_scales`` is MLX's ``scales``)."""
    keep = []

    def opt_arr(v):
        if v is None:
            return lib.mlx_array_new()
        a = to_array(v)
        keep.append(a)
        return a._p[0]

    def opt_int(v):
        o = ffi.new("mlx_optional_int*")
        if v is not None:
            o.has_value, o.value = True, int(v)
        return o[0]

    if not isinstance(mode, str):
        raise TypeError(f"mode must be a str, got {type(mode).__name__}")
    xa, wa = to_array(x), to_array(w)
    return _res("mlx_qqmm", xa._p[0], wa._p[0], opt_arr(scales), opt_int(group_size), opt_int(bits),
                ffi.new("char[]", mode.encode()), opt_arr(global_scale_x), opt_arr(global_scale_w),
                stream_handle(stream))


# More ops: unique (one array or a tuple, an optional scalar-or-array fill), get_array_buffer_size
# and device_info (Python-level in MLX too).
def unique(a, /, size, return_index=False, return_inverse=False, return_counts=False, fill_value=None, *,
           stream=None):
    """The sorted unique elements of the flattened ``a`` in an output of the static length
    ``size`` (padded with ``fill_value``); a tuple with index / inverse / counts when asked."""
    if not isinstance(size, int) or isinstance(size, bool):
        raise TypeError(f"unique(): size must be an int, got {type(size).__name__}")
    a = to_array(a)
    keep = []
    fill = lib.mlx_array_new()
    if fill_value is not None:
        f = fill_value if isinstance(fill_value, array) else to_array(fill_value)
        keep.append(f)
        fill = f._p[0]
    outs = _vector_list("mlx_arm_unique", a._p[0], size, bool(return_index), bool(return_inverse),
                        bool(return_counts), fill, stream_handle(stream))
    return tuple(outs) if (return_index or return_inverse or return_counts) else outs[0]




def get_array_buffer_size(*args):
    """Bytes of the buffers backing the (evaluated) arrays in ``args`` (arrays or trees of
    them), each buffer counted once."""
    from ._device import array_leaves

    vec = _Vec(array_leaves(list(args), []))
    r = ffi.new("size_t*")
    check(lib.mlx_arm_get_array_buffer_size(r, vec.v))
    return int(r[0])


def _cpu_name(arch):
    """The CPU brand string, as MLX's CPU device reports it: /proc/cpuinfo's first
    ``model name`` on Linux, else the architecture."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name") and ": " in line:
                    return line.split(": ", 1)[1].rstrip("\n")
    except OSError:
        pass
    return arch


def device_info(d=None):
    """Properties of device ``d`` (default: the default device) with MLX's keys: for the CPU
    ``device_name`` (the brand string) and ``architecture``; ``{}`` for a device that is not
    available (MLX's answer for a GPU it lacks); a GPU backend's own name otherwise."""
    from ._device import Device, DeviceType, default_device, is_available

    if d is None:
        d = default_device()
    elif isinstance(d, int) and not isinstance(d, DeviceType):
        d = DeviceType(d)  # MLX's nanobind enum takes its integer value too
    if isinstance(d, DeviceType):
        d = Device(d)
    if not isinstance(d, Device):
        raise TypeError(f"device_info(): d must be None, a Device or a DeviceType, got {type(d).__name__}")
    if not is_available(d):
        return {}
    h = d._c()
    info = ffi.new("mlx_device_info*", lib.mlx_device_info_new())
    try:
        check(lib.mlx_device_info_get(info, h[0]))
        s = ffi.new("const char**")

        def get(key):
            k = ffi.new("char[]", key.encode())
            return ffi.string(s[0]).decode() if lib.mlx_device_info_get_string(s, info[0], k) == 0 else None

        arch = get("architecture") or ""
        if d.type == DeviceType.cpu:
            return {"architecture": arch, "device_name": _cpu_name(arch)}
        return {"architecture": arch, "device_name": get("device_name") or ""}
    finally:
        lib.mlx_device_info_free(info[0])


# (module attribute path, function, C functions needed)
_TABLE = [
    ("einsum", einsum, ["mlx_einsum"]),
    ("split", split, ["mlx_split", "mlx_split_sections"]),
    ("fast.rope", rope, ["mlx_fast_rope", "mlx_fast_rope_dynamic"]),
    ("fast.metal_kernel", _metal_kernel.metal_kernel, ["mlx_arm_fast_metal_kernel"]),
    ("fast.cuda_kernel", _cuda_kernel.cuda_kernel, ["mlx_arm_fast_cuda_kernel"]),
    ("fast.precompiled_cuda_kernel", _cuda_kernel.precompiled_cuda_kernel, ["mlx_arm_fast_precompiled_cuda_kernel"]),
    ("depends", depends, ["mlx_depends"]),
    ("qqmm", qqmm, ["mlx_qqmm"]),
    ("unique", unique, ["mlx_arm_unique"]),
    ("get_array_buffer_size", get_array_buffer_size, ["mlx_arm_get_array_buffer_size"]),
    ("device_info", device_info, ["mlx_device_info_get"]),
]



def install(namespace):
    """Sets each function (``namespace``: mlx.core's globals) whose C functions exist."""
    from . import _einsum_path, _fft, _io, _nn, _shape_ops

    namespace["einsum_path"] = _einsum_path.einsum_path  # shapes only: no C function needed

    for path, f, needs in _TABLE + _nn.TABLE + _io.TABLE + _shape_ops.TABLE + _fft.TABLE:
        if all(exported(c) for c in needs):
            f._op = tuple(needs)  # marks a C binding: its status is the C API's (test_registry_names)
            if "." in path:
                mod, attr = path.split(".", 1)
                f.__module__ = f"mlx.core.{mod}"
                setattr(namespace[mod], attr, f)
            else:
                f.__module__ = "mlx.core"
                namespace[path] = f
