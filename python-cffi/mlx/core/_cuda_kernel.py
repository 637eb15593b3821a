"""``mx.fast.cuda_kernel`` and ``mx.fast.precompiled_cuda_kernel`` as MLX's CPU-only build has
them: there is no CUDA back-end in mlx-arm (``mx.cuda.is_available()`` is False), so — exactly
as real MLX 0.32.4's CPU wheel — both raise ``RuntimeError("[cuda_kernel] No CUDA
back-end.")``, everywhere (inside ``mx.compile``, ``mx.grad``, ``mx.vmap`` and
``mx.export_function`` too: MLX records no node for them). Before that, the arguments are
checked as MLX's binding checks them (nanobind's TypeError for a wrong type; for
``precompiled_cuda_kernel`` then each input's conversion to an array and each scalar's type,
MLX's ValueErrors). The error itself comes from the library (``mlx_arm_fast_cuda_kernel``,
core ``ops/fast/custom_kernel.rs``)."""
from . import _nbargs as nb
from ._array import array, to_array
from ._dtypes import Dtype
from ._ffi import check, ffi, lib
from ._metal_kernel import _c_outputs, _device_type, _strings

# MLX's signatures, as its docstrings' first lines spell them (nanobind's TypeError names them).
_CUDA_SIG = ("cuda_kernel(name: str, input_names: collections.abc.Sequence[str], output_names: "
             "collections.abc.Sequence[str], source: str, header: str = '', ensure_row_contiguous: bool = True, "
             "shared_memory: int = 0) -> object")
_PRE_SIG = ("precompiled_cuda_kernel(*, name: str, compiled_source: bytes, inputs: collections.abc.Sequence[bool | "
            "int | float | mlx.core.array | ndarray[writable=False] | complex | mlx.core.ArrayLike], output_shapes: "
            "collections.abc.Sequence[tuple[int, ...]], output_dtypes: collections.abc.Sequence[mlx.core.Dtype], "
            "scalars: collections.abc.Sequence[object], grid: tuple[int, int, int], threadgroup: tuple[int, int, int], "
            "shared_memory: int = 0, init_value: float | None = None, ensure_row_contiguous: bool = False, stream: "
            "mlx.core.Stream | mlx.core.ThreadLocalStream | mlx.core.Device | mlx.core.DeviceType | None = None) -> "
            "list[mlx.core.array]")
_CUDA_PARAMS = ("name", "input_names", "output_names", "source", "header", "ensure_row_contiguous", "shared_memory")
_PRE_REQUIRED = ("name", "compiled_source", "inputs", "output_shapes", "output_dtypes", "scalars", "grid",
                 "threadgroup")
_PRE_DEFAULTS = {"shared_memory": 0, "init_value": None, "ensure_row_contiguous": False, "stream": None}


def cuda_kernel(*args, **kwargs):
    """A jit-compiled custom CUDA kernel from a source string. mlx-arm has no CUDA back-end:
    as MLX's CPU build, making one is ``RuntimeError("[cuda_kernel] No CUDA back-end.")``."""
    bad = nb.incompatible("cuda_kernel", _CUDA_SIG, args, kwargs)
    if len(args) > len(_CUDA_PARAMS) or any(k not in _CUDA_PARAMS for k in kwargs):
        raise bad
    a = dict(zip(_CUDA_PARAMS, args))
    for k, v in kwargs.items():
        if k in a:
            raise bad
        a[k] = v
    a.setdefault("header", "")
    a.setdefault("ensure_row_contiguous", True)
    a.setdefault("shared_memory", 0)
    if len(a) != len(_CUDA_PARAMS):
        raise bad
    inputs, outputs = nb.as_strs(a["input_names"]), nb.as_strs(a["output_names"])
    shared = nb.as_int32(a["shared_memory"])
    if (not all(isinstance(a[k], str) for k in ("name", "source", "header")) or inputs is nb.NO or outputs is nb.NO
            or not nb.is_bool(a["ensure_row_contiguous"]) or shared is nb.NO):
        raise bad
    in_keep, in_names = _strings(inputs)
    out_keep, out_names = _strings(outputs)
    check(lib.mlx_arm_fast_cuda_kernel(a["name"].encode(), in_names, len(in_keep), out_names, len(out_keep),
                                       a["source"].encode(), a["header"].encode(), a["ensure_row_contiguous"], shared))
    raise AssertionError("mlx_arm_fast_cuda_kernel returned without its error")  # never: no CUDA back-end


def _scalar(v):
    """MLX's scalar argument rule: exactly a bool, an int that fits int32, or a float that
    float32 holds exactly (nanobind's casters without conversion); ``(kind, value)``."""
    t = type(v)
    if t is bool:
        return 0, float(v)
    if t is int and nb.as_int32(v) is not nb.NO:
        return 1, float(v)
    if t is float and (v != v or float(ffi.cast("float", v)) == v):
        return 2, v
    raise ValueError(f"[precompiled_cuda_kernel] Invalid scalar argument type. Received {t.__name__} but must be "
                     "one of bool, int or float")


def _input(v):
    """One of ``inputs`` as an array, as MLX converts them (a list or any other object that is
    not a number, an array or a numeric buffer is MLX's ValueError)."""
    if isinstance(v, array):
        return v
    numeric = getattr(getattr(v, "dtype", None), "kind", None) in ("b", "i", "u", "f", "c")
    if isinstance(v, (bool, int, float, complex)) or hasattr(v, "__mlx_array__") or (numeric and hasattr(v, "__array__")):
        return to_array(v)
    raise ValueError(f"Invalid type {type(v).__name__} received in array initialization.")


def precompiled_cuda_kernel(*args, **kwargs):
    """Runs a precompiled (PTX or cubin) CUDA kernel. mlx-arm has no CUDA back-end: as MLX's CPU
    build, this is ``RuntimeError("[cuda_kernel] No CUDA back-end.")`` once the arguments pass
    MLX's checks."""
    bad = nb.incompatible("precompiled_cuda_kernel", _PRE_SIG, args, kwargs)
    if args or any(k not in _PRE_REQUIRED and k not in _PRE_DEFAULTS for k in kwargs):
        raise bad
    if any(k not in kwargs for k in _PRE_REQUIRED):
        raise bad
    a = dict(_PRE_DEFAULTS, **kwargs)
    inputs = nb.as_list(a["inputs"])
    shapes = nb.as_list(a["output_shapes"])
    shapes = nb.NO if shapes is nb.NO else [nb.as_int32s(s) for s in shapes]
    dtypes = nb.as_list(a["output_dtypes"])
    scalars = nb.as_list(a["scalars"])
    grid, threadgroup = nb.as_int3(a["grid"]), nb.as_int3(a["threadgroup"])
    shared = nb.as_int32(a["shared_memory"])
    init = None if a["init_value"] is None else nb.as_float(a["init_value"])
    if (not isinstance(a["name"], str) or not isinstance(a["compiled_source"], bytes) or inputs is nb.NO
            or any(v is None for v in inputs) or shapes is nb.NO or any(s is nb.NO for s in shapes)
            or dtypes is nb.NO or not all(isinstance(d, Dtype) for d in dtypes) or scalars is nb.NO
            or grid is nb.NO or threadgroup is nb.NO or shared is nb.NO or init is nb.NO
            or not nb.is_bool(a["ensure_row_contiguous"]) or not nb.is_stream_or_device(a["stream"])):
        raise bad
    from ._extra import _Vec

    vec = _Vec([_input(v) for v in inputs])  # MLX converts the inputs first, then the scalars
    kinds, values = zip(*[_scalar(v) for v in scalars]) if scalars else ((), ())
    src = a["compiled_source"]
    c_shapes = _c_outputs(shapes, dtypes)
    res = ffi.new("mlx_vector_array*")
    res[0] = lib.mlx_vector_array_new()
    try:
        check(lib.mlx_arm_fast_precompiled_cuda_kernel(
            res, a["name"].encode(), src, len(src), vec.v, c_shapes[0], c_shapes[1], len(shapes), c_shapes[2],
            len(dtypes),
            ffi.new("int[]", list(kinds) or [0]), ffi.new("double[]", list(values) or [0.0]), len(kinds),
            ffi.new("int[3]", grid), ffi.new("int[3]", threadgroup), shared, init is not None, init or 0.0,
            a["ensure_row_contiguous"], _device_type(a["stream"])))
    finally:
        lib.mlx_vector_array_free(res[0])
    raise AssertionError("mlx_arm_fast_precompiled_cuda_kernel returned without its error")  # never
