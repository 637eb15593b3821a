"""Dtypes, dtype categories, ``issubdtype``, ``finfo`` and ``iinfo`` as in mlx.core.

Codes are the C API's ``mlx_dtype`` values; sizes come from the library (``mlx_dtype_size``).
"""
import enum
import math
import struct

from ._ffi import lib


class DtypeCategory(enum.Enum):
    """Abstract dtype categories (the numpy-like hierarchy MLX uses)."""

    complexfloating = 0
    floating = 1
    inexact = 2
    signedinteger = 3
    unsignedinteger = 4
    integer = 5
    number = 6
    generic = 7

    def __repr__(self):
        return f"DtypeCategory.{self.name}"

    __str__ = __repr__


_PARENT = {
    DtypeCategory.complexfloating: DtypeCategory.inexact,
    DtypeCategory.floating: DtypeCategory.inexact,
    DtypeCategory.inexact: DtypeCategory.number,
    DtypeCategory.signedinteger: DtypeCategory.integer,
    DtypeCategory.unsignedinteger: DtypeCategory.integer,
    DtypeCategory.integer: DtypeCategory.number,
    DtypeCategory.number: DtypeCategory.generic,
    DtypeCategory.generic: None,
}


class Dtype:
    """An element type. Instances are singletons (``mx.float32`` …); compare with ``==``."""

    __slots__ = ("name", "code", "size", "category", "_fmt")

    def __init__(self, name, code, category, fmt):
        self.name, self.code, self.category, self._fmt = name, code, category, fmt
        self.size = int(lib.mlx_dtype_size(code))

    def __repr__(self):
        return f"mlx.core.{self.name}"

    __str__ = __repr__

    def __eq__(self, other):
        return isinstance(other, Dtype) and other.code == self.code

    def __hash__(self):
        return hash(("mlx.Dtype", self.code))

    def __reduce__(self):
        return (_by_name, (self.name,))


_C = DtypeCategory
# name, mlx_dtype code, leaf category, struct format (None: no native struct/numpy buffer format)
_TABLE = [
    ("bool_", 0, _C.generic, "?"),
    ("uint8", 1, _C.unsignedinteger, "B"),
    ("uint16", 2, _C.unsignedinteger, "H"),
    ("uint32", 3, _C.unsignedinteger, "I"),
    ("uint64", 4, _C.unsignedinteger, "Q"),
    ("int8", 5, _C.signedinteger, "b"),
    ("int16", 6, _C.signedinteger, "h"),
    ("int32", 7, _C.signedinteger, "i"),
    ("int64", 8, _C.signedinteger, "q"),
    ("float16", 9, _C.floating, "e"),
    ("float32", 10, _C.floating, "f"),
    ("float64", 11, _C.floating, "d"),
    ("bfloat16", 12, _C.floating, None),
    ("complex64", 13, _C.complexfloating, None),
]
DTYPES = [Dtype(n if n != "bool_" else "bool", c, cat, f) for n, c, cat, f in _TABLE]
BY_CODE = {d.code: d for d in DTYPES}
_NAMES = {("bool_" if d.name == "bool" else d.name): d for d in DTYPES}
globals().update(_NAMES)
bool_ = BY_CODE[0]
uint8, uint16, uint32, uint64 = (BY_CODE[i] for i in (1, 2, 3, 4))
int8, int16, int32, int64 = (BY_CODE[i] for i in (5, 6, 7, 8))
float16, float32, float64, bfloat16, complex64 = (BY_CODE[i] for i in (9, 10, 11, 12, 13))
NAMES = dict(_NAMES)


def _by_name(name):
    return NAMES["bool_" if name == "bool" else name]


def _ancestors(cat):
    while cat is not None:
        yield cat
        cat = _PARENT[cat]


def issubdtype(a, b):
    """Whether ``a`` (a Dtype or category) is ``b`` or lies under category ``b``."""
    for x in (a, b):
        if not isinstance(x, (Dtype, DtypeCategory)):
            raise TypeError(f"issubdtype(): expected Dtype or DtypeCategory, got {type(x).__name__}")
    if isinstance(b, Dtype):
        return isinstance(a, Dtype) and a == b
    cat = a.category if isinstance(a, Dtype) else a
    if isinstance(a, Dtype) and a == bool_:
        return b == _C.generic
    return b in _ancestors(cat)


def is_integer(d):
    return d.category in (_C.signedinteger, _C.unsignedinteger)


def is_floating(d):
    return d.category == _C.floating


def is_inexact(d):
    return d.category in (_C.floating, _C.complexfloating)


class finfo:
    """Machine limits of a floating (or complex) dtype: ``min``, ``max``, ``eps``, ``dtype``."""

    # (min exponent bits, mantissa bits) -> computed exactly below
    _BITS = {"float16": (5, 10), "bfloat16": (8, 7), "float32": (8, 23), "float64": (11, 52)}

    def __init__(self, dtype):
        if not isinstance(dtype, Dtype):
            raise TypeError(f"finfo(): expected a Dtype, got {type(dtype).__name__}")
        if not is_inexact(dtype):
            raise ValueError(f"[finfo] dtype {dtype.name} is not inexact.")
        base = "float32" if dtype == complex64 else dtype.name
        ebits, mbits = self._BITS[base]
        emax = 2 ** (ebits - 1) - 1
        self.dtype = float32 if dtype == complex64 else dtype  # as MLX: a complex64's parts are float32
        self.bits = 8 * self.dtype.size
        self.max = float((2 - 2.0 ** -mbits) * 2.0 ** emax)
        self.min = -self.max
        self.eps = float(2.0 ** -mbits)
        self.resolution = None
        self.tiny = float(2.0 ** (1 - emax))
        self.smallest_normal = self.tiny

    def __repr__(self):
        return f"finfo(min={_g(self.min)}, max={_g(self.max)}, dtype={self.dtype.name})"


def _g(x):
    return f"{x:g}"


class iinfo:
    """Limits of an integer dtype: ``min``, ``max``, ``dtype``."""

    def __init__(self, dtype):
        if not isinstance(dtype, Dtype):
            raise TypeError(f"iinfo(): expected a Dtype, got {type(dtype).__name__}")
        if not is_integer(dtype):
            raise ValueError(f"[iinfo] dtype {dtype.name} is not integral.")
        bits = 8 * dtype.size
        if dtype.category == _C.unsignedinteger:
            self.min, self.max = 0, 2 ** bits - 1
        else:
            self.min, self.max = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
        self.dtype = dtype

    def __repr__(self):
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype.name})"


def fmt(d):
    """The struct format letter of ``d`` (None for bfloat16/complex64)."""
    return d._fmt


# MLX's promotion lattice, as in real MLX (mlx/dtype.cpp): the result of combining two dtypes.
_ORDER = [bool_, uint8, uint16, uint32, uint64, int8, int16, int32, int64, float16, float32, float64, bfloat16, complex64]


def _promote_table():
    b, u8, u16, u32, u64, i8, i16, i32, i64, f16, f32, f64, bf, c64 = _ORDER
    rows = [
        # b    u8   u16  u32  u64  i8   i16  i32  i64  f16  f32  f64  bf16 c64
        [b, u8, u16, u32, u64, i8, i16, i32, i64, f16, f32, f64, bf, c64],
        [u8, u8, u16, u32, u64, i16, i16, i32, i64, f16, f32, f64, bf, c64],
        [u16, u16, u16, u32, u64, i32, i32, i32, i64, f16, f32, f64, bf, c64],
        [u32, u32, u32, u32, u64, i64, i64, i64, i64, f16, f32, f64, bf, c64],
        [u64, u64, u64, u64, u64, f32, f32, f32, f32, f16, f32, f64, bf, c64],
        [i8, i16, i32, i64, f32, i8, i16, i32, i64, f16, f32, f64, bf, c64],
        [i16, i16, i32, i64, f32, i16, i16, i32, i64, f16, f32, f64, bf, c64],
        [i32, i32, i32, i64, f32, i32, i32, i32, i64, f16, f32, f64, bf, c64],
        [i64, i64, i64, i64, f32, i64, i64, i64, i64, f16, f32, f64, bf, c64],
        [f16, f16, f16, f16, f16, f16, f16, f16, f16, f16, f32, f64, f32, c64],
        [f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f64, f32, c64],
        [f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, c64],
        [bf, bf, bf, bf, bf, bf, bf, bf, bf, f32, f32, f64, bf, c64],
        [c64] * 14,
    ]
    return {(x.code, y.code): rows[i][j] for i, x in enumerate(_ORDER) for j, y in enumerate(_ORDER)}


_PROMOTE = _promote_table()


def promote_types(a, b):
    """The dtype two arrays of dtypes ``a`` and ``b`` combine to."""
    return _PROMOTE[(a.code, b.code)]


def pack_float(fmt, value):
    """``struct.pack(fmt, value)`` for one float, where a value beyond the format's range becomes
    ±inf as a C cast makes it (struct raises OverflowError; MLX stores inf: ``a_f16[0] = 1e6``)."""
    try:
        return struct.pack(fmt, value)
    except OverflowError:
        return struct.pack(fmt, math.copysign(math.inf, value))


def pack_scalar(d, value):
    """``value`` as the bytes of one element of dtype ``d`` (bool/int/float formats only)."""
    return struct.pack(d._fmt, value)


_KIND_TEST = {
    "bool": lambda d: d == bool_,
    "signed integer": lambda d: d.category == _C.signedinteger,
    "unsigned integer": lambda d: d.category == _C.unsignedinteger,
    "integral": is_integer,
    "real floating": is_floating,
    "complex floating": lambda d: d.category == _C.complexfloating,
    "numeric": lambda d: d != bool_,
}


def isdtype(dtype, kind):
    """Whether ``dtype`` is ``kind`` (a Dtype, a kind string, or a tuple of them)."""
    if not isinstance(dtype, Dtype):
        raise TypeError(f"isdtype(): expected a Dtype, got {type(dtype).__name__}")
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if isinstance(k, Dtype):
            if k == dtype:
                return True
        elif isinstance(k, str):
            if k not in _KIND_TEST:
                raise ValueError(f"[isdtype] Unknown data type kind: '{k}'.")
            if _KIND_TEST[k](dtype):
                return True
        else:
            raise TypeError(f"isdtype(): kind must be a Dtype, str or tuple, got {type(k).__name__}")
    return False
