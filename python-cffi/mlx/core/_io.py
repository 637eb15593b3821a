"""``mx.load``, ``mx.save``, ``mx.savez``, ``mx.savez_compressed``, ``mx.save_safetensors``
and ``mx.save_gguf`` over the C library's io.h and its ``mlx_arm_`` extensions (mlx_arm.h).

Python dicts go to C as ``mlx_map_string_to_array`` / ``mlx_map_string_to_string`` handles
and back. Files are named by ``str`` or ``os.PathLike``; a Python file object (MLX accepts
those too) goes through a temporary file, since the C library reads and writes paths: its
bytes are copied to a temporary file before loading, or copied into it after saving."""
import contextlib
import os
import shutil
import tempfile

from ._array import _ARR_PTR, array, stream_handle, to_array, wrap
from ._ffi import check, ffi, lib

_FORMATS = ("npy", "npz", "safetensors", "gguf")


def _path(file, fn):
    if isinstance(file, (str, os.PathLike)):
        return os.fspath(file)
    raise TypeError(f"[{fn}] file must be a str, an os.PathLike or a file object, got {type(file).__name__}")


def _is_fileobj(file, mode):
    return not isinstance(file, (str, os.PathLike)) and hasattr(file, mode)


@contextlib.contextmanager
def _written_to(file, suffix):
    """A path to save to; when ``file`` is a writable file object, the bytes written there are
    copied into it afterwards."""
    if not _is_fileobj(file, "write"):
        yield file
        return
    with tempfile.TemporaryDirectory() as d:
        tmp = os.path.join(d, "f" + suffix)
        yield tmp
        with open(tmp, "rb") as src:
            shutil.copyfileobj(src, file)


def _cstr(s):
    return ffi.new("char[]", s.encode("utf-8"))


class _ArrayMap:
    """A C string→array map built from ``{name: array}`` (freed with this object)."""

    def __init__(self, d=None):
        self.m = lib.mlx_map_string_to_array_new()
        self.keep = []
        for k, v in (d or {}).items():
            if not isinstance(k, str):
                raise TypeError(f"array names must be str, got {type(k).__name__}")
            a = v if isinstance(v, array) else to_array(v)
            self.keep.append(a)
            check(lib.mlx_map_string_to_array_insert(self.m, _cstr(k), a._p[0]))

    def __del__(self):
        lib.mlx_map_string_to_array_free(self.m)


class _StringMap:
    def __init__(self, d=None):
        self.m = lib.mlx_map_string_to_string_new()
        for k, v in (d or {}).items():
            check(lib.mlx_map_string_to_string_insert(self.m, _cstr(k), _cstr(v)))

    def __del__(self):
        lib.mlx_map_string_to_string_free(self.m)


def _array_dict(m):
    """``{name: array}`` of a C map (which this frees)."""
    try:
        keys = []
        it = lib.mlx_map_string_to_array_iterator_new(m)
        try:
            k = ffi.new("char**")
            v = ffi.new("mlx_array*")
            v[0] = lib.mlx_array_new()
            while True:
                rc = lib.mlx_map_string_to_array_iterator_next(k, v, it)
                if rc == 2:
                    break
                check(rc)
                keys.append(ffi.string(k[0]).decode("utf-8"))
            lib.mlx_array_free(v[0])
        finally:
            lib.mlx_map_string_to_array_iterator_free(it)
        out = {}
        for key in keys:
            p = ffi.new(_ARR_PTR)
            check(lib.mlx_map_string_to_array_get(p, m, _cstr(key)))
            out[key] = wrap(p)
        return out
    finally:
        lib.mlx_map_string_to_array_free(m)


def _string_dict(m):
    """``{key: str}`` of a C string map (which this frees)."""
    try:
        out = {}
        it = lib.mlx_map_string_to_string_iterator_new(m)
        try:
            k, v = ffi.new("char**"), ffi.new("char**")
            while True:
                rc = lib.mlx_map_string_to_string_iterator_next(k, v, it)
                if rc == 2:
                    break
                check(rc)
                out[ffi.string(k[0]).decode("utf-8")] = ffi.string(v[0]).decode("utf-8")
        finally:
            lib.mlx_map_string_to_string_iterator_free(it)
        return out
    finally:
        lib.mlx_map_string_to_string_free(m)


def _format_of(path, format):
    if format is None:
        ext = os.path.splitext(path)[1]
        if not ext:
            raise ValueError(f"[load] Could not infer file format from extension of {path}")
        format = ext[1:]
    if format not in _FORMATS:
        raise ValueError(f"[load] Invalid format {format}")
    return format


def load(file, /, format=None, return_metadata=False, *, stream=None):
    """An array (.npy) or a ``{name: array}`` dict (.npz, .safetensors, .gguf); with
    ``return_metadata`` (safetensors, gguf) a ``(arrays, metadata)`` tuple."""
    if _is_fileobj(file, "read"):
        if format is None:
            format = _format_of(str(getattr(file, "name", "")), None)
        with tempfile.TemporaryDirectory() as d:
            tmp = os.path.join(d, "f." + format)
            with open(tmp, "wb") as dst:
                shutil.copyfileobj(file, dst)
            return load(tmp, format, return_metadata, stream=stream)  # a mapping outlives the unlinked file (POSIX)
    path = _path(file, "load")
    fmt = _format_of(path, format)
    s = stream_handle(stream)
    if not os.path.isfile(path):  # MLX raises RuntimeError for a file it cannot open
        raise RuntimeError(f"[load] Failed to open file {path}")
    if return_metadata and fmt in ("npy", "npz"):
        raise ValueError("[load] metadata not supported for format " + fmt)
    if return_metadata and fmt == "gguf":
        return _load_gguf(path, s)
    if return_metadata and fmt == "safetensors":
        a = ffi.new("mlx_map_string_to_array*")
        m = ffi.new("mlx_map_string_to_string*")
        check(lib.mlx_load_safetensors(a, m, _cstr(path), s))
        return _array_dict(a[0]), _string_dict(m[0])
    res = ffi.new("mlx_map_string_to_array*")
    check(lib.mlx_arm_load(res, _cstr(path), _cstr(fmt), s))
    arrays = _array_dict(res[0])
    if fmt == "npy":
        return arrays[""]
    return arrays


def _string_list(v):
    """``[str]`` of a C string vector (which this frees)."""
    try:
        out, p = [], ffi.new("char**")
        for i in range(lib.mlx_vector_string_size(v)):
            check(lib.mlx_vector_string_get(p, v, i))
            out.append(ffi.string(p[0]).decode("utf-8"))
        return out
    finally:
        lib.mlx_vector_string_free(v)


def _vector_string(fn, *args):
    """The C string vector that ``fn(&vec, *args)`` returns, as ``[str]``."""
    v = ffi.new("mlx_vector_string*")
    v[0] = lib.mlx_vector_string_new()
    try:
        check(fn(v, *args))
    except BaseException:
        lib.mlx_vector_string_free(v[0])
        raise
    return _string_list(v[0])


def _gguf_value(g, key):
    """One metadata value of a GGUF object: an array, a str or a list of str."""
    k = _cstr(key)
    flag = ffi.new("bool*")
    check(lib.mlx_io_gguf_has_metadata_array(flag, g, k))
    if flag[0]:
        p = ffi.new(_ARR_PTR)
        check(lib.mlx_io_gguf_get_metadata_array(p, g, k))
        return wrap(p)
    check(lib.mlx_io_gguf_has_metadata_string(flag, g, k))
    if flag[0]:
        st = ffi.new("mlx_string*")
        st[0] = lib.mlx_string_new()
        try:
            check(lib.mlx_io_gguf_get_metadata_string(st, g, k))
            return ffi.string(lib.mlx_string_data(st[0])).decode("utf-8")
        finally:
            lib.mlx_string_free(st[0])
    return _vector_string(lib.mlx_io_gguf_get_metadata_vector_string, g, k)


def _gguf_metadata(g):
    """``{key: array | str | [str]}`` of a GGUF object's metadata."""
    return {key: _gguf_value(g, key) for key in _vector_string(lib.mlx_arm_io_gguf_get_metadata_keys, g)}


def _load_gguf(path, s):
    """``(arrays, metadata)`` of a GGUF file through mlx-c's GGUF object, as MLX loads it."""
    g = ffi.new("mlx_io_gguf*")
    g[0] = lib.mlx_io_gguf_new()
    try:
        check(lib.mlx_load_gguf(g, _cstr(path), s))
        arrays = {}
        for key in _vector_string(lib.mlx_io_gguf_get_keys, g[0]):
            p = ffi.new(_ARR_PTR)
            check(lib.mlx_io_gguf_get_array(p, g[0], _cstr(key)))
            arrays[key] = wrap(p)
        return arrays, _gguf_metadata(g[0])
    finally:
        lib.mlx_io_gguf_free(g[0])


def save(file, arr):
    """``arr`` as a .npy file (".npy" appended when missing)."""
    a = to_array(arr)
    with _written_to(file, ".npy") as f:
        check(lib.mlx_save(_cstr(_path(f, "save")), a._p[0]))


def _savez(file, args, kwargs, compressed, fn):
    with _written_to(file, ".npz") as f:
        _savez_path(_path(f, fn), args, kwargs, compressed, fn)


def _savez_path(path, args, kwargs, compressed, fn):
    if not path.endswith(".npz"):
        path += ".npz"
    named = {}
    for i, a in enumerate(args):
        named[f"arr_{i}"] = a
    for k, a in kwargs.items():
        if k in named:
            raise ValueError(f"[{fn}] Cannot use un-named variables and keyword {k}")
        named[k] = a
    m = _ArrayMap(named)
    check(lib.mlx_arm_savez(_cstr(path), m.m, compressed))


def savez(file, *args, **kwargs):
    """Arrays into a .npz file (positional ones named arr_0, arr_1 …)."""
    _savez(file, args, kwargs, False, "savez")


def savez_compressed(file, *args, **kwargs):
    """As ``savez``, deflate-compressed."""
    _savez(file, args, kwargs, True, "savez_compressed")


def save_safetensors(file, arrays, metadata=None):
    """``{name: array}`` (and string metadata) as a .safetensors file."""
    m = _ArrayMap(arrays)
    md = _StringMap(metadata)
    with _written_to(file, ".safetensors") as f:
        path = _path(f, "save_safetensors")
        if not path.endswith(".safetensors"):
            path += ".safetensors"
        check(lib.mlx_save_safetensors(_cstr(path), m.m, md.m))


def save_gguf(file, arrays, metadata=None):
    """``{name: array}`` as a .gguf file; metadata values are arrays, str or lists of str."""
    g = lib.mlx_io_gguf_new()
    keep = []
    try:
        for k, v in arrays.items():
            if not isinstance(k, str):
                raise TypeError(f"array names must be str, got {type(k).__name__}")
            a = v if isinstance(v, array) else to_array(v)
            keep.append(a)
            check(lib.mlx_io_gguf_set_array(g, _cstr(k), a._p[0]))
        for k, v in (metadata or {}).items():
            if isinstance(v, str):
                check(lib.mlx_io_gguf_set_metadata_string(g, _cstr(k), _cstr(v)))
            elif isinstance(v, array):
                check(lib.mlx_io_gguf_set_metadata_array(g, _cstr(k), v._p[0]))
            elif isinstance(v, (list, tuple)) and all(isinstance(x, str) for x in v):
                strs = [_cstr(x) for x in v]
                vec = lib.mlx_vector_string_new_data(ffi.new("char*[]", strs), len(strs))
                try:
                    check(lib.mlx_io_gguf_set_metadata_vector_string(g, _cstr(k), vec))
                finally:
                    lib.mlx_vector_string_free(vec)
            else:
                raise ValueError(f"[save_gguf] Metadata values must be str, array or list of str; got {type(v).__name__}")
        with _written_to(file, ".gguf") as f:
            path = _path(f, "save_gguf")
            if not path.endswith(".gguf"):
                path += ".gguf"
            check(lib.mlx_save_gguf(_cstr(path), g))
    finally:
        lib.mlx_io_gguf_free(g)


TABLE = [
    ("load", load, ["mlx_arm_load", "mlx_load_safetensors", "mlx_load_gguf"]),
    ("save", save, ["mlx_save"]),
    ("savez", savez, ["mlx_arm_savez"]),
    ("savez_compressed", savez_compressed, ["mlx_arm_savez"]),
    ("save_safetensors", save_safetensors, ["mlx_save_safetensors"]),
    ("save_gguf", save_gguf, ["mlx_save_gguf"]),
]
