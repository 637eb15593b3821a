"""``mlx.arm``: mlx-arm's own settings and platform report (no counterpart in Apple's MLX).

- ``platform_info()``: what the library reports (``mlx_arm_platform_info``: version, ABI,
  architecture, OS, cores, compiled backends) plus the CPU model and SIMD features the OS
  reports (``/proc/cpuinfo`` on Linux/Android), and the GPU fields (None while no GPU backend
  is compiled in).
- GGUF without conversion: ``load_gguf(file)`` gives every tensor as stored (GGML blocks in
  a uint8 array, with its type name and logical shape) and the metadata with its GGUF types;
  ``ggml_quantize``, ``ggml_dequantize`` and ``ggml_matmul`` work on such blocks (llama.cpp's
  formats: ``"q4_0"``, ``"q8_0"``, ``"q4_k"`` ...). ``mx.load`` keeps MLX's conversions.
- Language models: ``Model.load(path=None)`` (a ``.gguf`` file or model directory; the
  default model when None) with ``tokenize``, ``detokenize``, ``apply_chat_template`` and
  ``generate`` (streamed through a callback or an iterator); ``python -m mlx.arm.generate``
  is the command line (like ``python -m mlx_lm generate``).
- GPU settings (``set_opencl_platform``, ``enable_kernel_cache``, ``set_shared_memory_mode``)
  act on GPU backends; this build has none, so they raise RuntimeError saying so.
"""
import collections

from ..core._array import stream_handle, to_array
from ..core._extra import _res
from ..core._ffi import check, ffi, lib
from ._model import Model, default_model_path, model_dir  # noqa: F401

# SIMD features worth reporting, by the names Linux uses in /proc/cpuinfo.
_ARM_FEATURES = ("asimd", "asimddp", "i8mm", "sve", "sve2", "bf16", "fphp", "asimdhp")
_X86_FEATURES = ("sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512_bf16", "avx512_vnni")
# /proc/cpuinfo names -> the names used in mlx-arm's docs.
_RENAME = {"asimd": "neon", "asimddp": "dotprod"}


def _library_info():
    s = ffi.new("mlx_string*")
    check(lib.mlx_arm_platform_info(s))
    try:
        text = ffi.string(lib.mlx_string_data(s[0])).decode("utf-8", "replace")
    finally:
        lib.mlx_string_free(s[0])
    out = {}
    for line in text.splitlines():
        if "=" in line:
            k, v = line.split("=", 1)
            out[k.strip()] = v.strip()
    for k in ("abi", "pointer_width", "cpu_cores"):
        if k in out and out[k].isdigit():
            out[k] = int(out[k])
    if "backends" in out:
        out["backends"] = [b for b in out["backends"].split(",") if b]
    return out


def _cpuinfo():
    """CPU model and SIMD features from /proc/cpuinfo (None/[] where the OS has no such file)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return None, []
    model, flags = None, set()
    for line in text.splitlines():
        if ":" not in line:
            continue
        k, v = (x.strip() for x in line.split(":", 1))
        if k in ("model name", "Hardware", "cpu model") and model is None:
            model = v
        elif k in ("flags", "Features"):
            flags.update(v.split())
    known = _ARM_FEATURES + _X86_FEATURES
    return model, [_RENAME.get(f, f) for f in known if f in flags]


def platform_info():
    """A dict describing the library build and this machine (see the module doc)."""
    info = _library_info()
    model, feats = _cpuinfo()
    info["cpu_model"] = model
    info["cpu_features"] = feats
    gpu = [b for b in info.get("backends", []) if b != "cpu"]
    info["gpu_name"] = None
    info["vulkan_version"] = "available" if "vulkan" in gpu else None
    info["opencl_version"] = "available" if "opencl" in gpu else None
    return info


def _no_gpu(what):
    backends = _library_info().get("backends", [])
    gpu = [b for b in backends if b != "cpu"]
    return RuntimeError(f"mlx.arm.{what}: no GPU backend in this build of mlx-arm "
                        f"(backends: {', '.join(backends) or 'cpu'}); the setting has nothing to act on"
                        + ("" if not gpu else f" (found {', '.join(gpu)}, which has no such setting yet)"))


def set_opencl_platform(platform):
    """Chooses the OpenCL platform (by index or name) for the OpenCL backend."""
    if not isinstance(platform, (int, str)):
        raise TypeError(f"set_opencl_platform(): expected an int or str, got {type(platform).__name__}")
    raise _no_gpu("set_opencl_platform")


def enable_kernel_cache(path=None):
    """Caches compiled GPU kernels in ``path`` (a directory)."""
    raise _no_gpu("enable_kernel_cache")


_SHARED_MODES = ("dma-buf", "gralloc", "host")


def set_shared_memory_mode(mode):
    """How buffers are shared between CPU and GPU: "dma-buf", "gralloc" or "host"."""
    if mode not in _SHARED_MODES:
        raise ValueError(f"set_shared_memory_mode(): mode must be one of {', '.join(_SHARED_MODES)}, got {mode!r}")
    raise _no_gpu("set_shared_memory_mode")


GgufTensor = collections.namedtuple("GgufTensor", ["blocks", "type", "shape"])
GgufTensor.__doc__ = """A GGUF tensor as stored: ``blocks`` a uint8 array ``(rows, row_bytes)`` viewing the
file's GGML blocks, ``type`` the GGML type name, ``shape`` the logical shape in elements."""


def load_gguf(file, *, stream=None):
    """``(tensors, metadata)`` of a GGUF file with no conversion: ``tensors[name]`` is a
    :class:`GgufTensor` (a Q4_0 model stays 4.5 bits per weight); ``metadata`` holds numbers
    and numeric lists as arrays in their GGUF types (float64 stays float64), strings as str and
    lists of strings as lists."""
    from ..core import _io

    path = _io._path(file, "load_gguf")
    maps = [ffi.new("mlx_map_string_to_array*"), ffi.new("mlx_map_string_to_string*"),
            ffi.new("mlx_map_string_to_array*")]
    md = ffi.new("mlx_io_gguf*")
    md[0] = lib.mlx_io_gguf_new()
    try:
        check(lib.mlx_arm_load_gguf(*maps, md, _io._cstr(path), stream_handle(stream)))
        blocks, types = _io._array_dict(maps[0][0]), _io._string_dict(maps[1][0])
        shapes = _io._array_dict(maps[2][0])
        metadata = _io._gguf_metadata(md[0])
    finally:
        lib.mlx_io_gguf_free(md[0])
    tensors = {k: GgufTensor(blocks[k], types[k], tuple(shapes[k].tolist())) for k in blocks}
    return tensors, metadata


def ggml_quantize(w, ggml_type, *, stream=None):
    """A float matrix ``(N, K)`` as GGML blocks of ``ggml_type``: uint8 ``(N, row_bytes)``,
    bit-exact with ggml's reference quantizer."""
    return _res("mlx_arm_ggml_quantize", to_array(w)._p[0], ggml_type.encode(), stream_handle(stream))


def ggml_dequantize(blocks, ggml_type, k, *, stream=None):
    """GGML blocks ``(N, row_bytes)`` of ``ggml_type`` back to float32 ``(N, k)``."""
    return _res("mlx_arm_ggml_dequantize", to_array(blocks)._p[0], ggml_type.encode(), int(k), stream_handle(stream))


def ggml_matmul(x, blocks, ggml_type, k, *, stream=None):
    """``x @ W.T`` for ``W`` held as GGML blocks ``(N, row_bytes)`` of ``ggml_type`` with ``k``
    columns, without expanding ``W`` (llama.cpp's layout for a linear layer)."""
    return _res("mlx_arm_ggml_matmul", to_array(x)._p[0], to_array(blocks)._p[0], ggml_type.encode(), int(k), stream_handle(stream))
