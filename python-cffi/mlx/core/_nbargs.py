"""MLX's argument conversion rules (nanobind's), for Python functions that must accept and
refuse exactly what MLX's bound C++ functions do.

nanobind tries each argument against the C++ parameter type; any mismatch is one TypeError
"<name>(): incompatible function arguments. The following argument types are supported: …"
naming the signature and the types passed. Each ``is_*`` / ``as_*`` here is one caster's rule
(``as_*`` returns the converted value, or ``_NO`` when the caster refuses)."""
import operator

NO = object()  # a caster's refusal

_INT32 = (-(1 << 31), (1 << 31) - 1)


def type_name(v):
    """The type name nanobind prints for an argument ("mlx.core.array" for ours)."""
    t = type(v)
    if t.__module__ == "builtins":
        return t.__name__
    # Our mlx.core classes live in private modules; MLX names them mlx.core.<name>.
    return f"mlx.core.{t.__qualname__}" if t.__module__.startswith("mlx.core") else f"{t.__module__}.{t.__qualname__}"


def incompatible(tag, signature, args, kwargs):
    """nanobind's TypeError for a call ``tag(*args, **kwargs)`` that matches ``signature``
    (the function's text as MLX's docstring's first line spells it)."""
    types = ", ".join(type_name(a) for a in args)
    if kwargs:
        types = (types + ", " if types else "") + "kwargs = { " + ", ".join(
            f"{k}: {type_name(v)}" for k, v in kwargs.items()) + " }"
    return TypeError(f"{tag}(): incompatible function arguments. The following argument types are supported:\n"
                     f"    1. {signature}\n\nInvoked with types: {types}")


def is_bool(v):
    """``bool``: True or False only (not an int, not numpy.bool_)."""
    return v is True or v is False


def as_int32(v):
    """``int``: an int or anything with ``__index__`` (numpy ints, bools), within int32; never
    a float."""
    if isinstance(v, float) or not hasattr(type(v), "__index__"):
        return NO
    i = operator.index(v)
    return i if _INT32[0] <= i <= _INT32[1] else NO


def as_float(v):
    """``float`` (an argument, converting): anything with ``__float__`` or ``__index__``, not a
    str."""
    t = type(v)
    if isinstance(v, (str, bytes)) or not (hasattr(t, "__float__") or hasattr(t, "__index__")):
        return NO
    try:
        return float(v)
    except (TypeError, ValueError, OverflowError):
        return NO


def as_list(v):
    """``std::vector`` / ``Sequence``: a sequence (list, tuple, an array …) that is not a str,
    bytes or mapping, as a list; a generator or a set is refused."""
    if isinstance(v, (str, bytes, bytearray, dict)) or not hasattr(type(v), "__getitem__"):
        return NO
    try:
        return list(v)
    except TypeError:
        return NO


def as_strs(v):
    """``Sequence[str]``."""
    items = as_list(v)
    if items is NO or not all(isinstance(s, str) for s in items):
        return NO
    return [str(s) for s in items]


def as_int32s(v):
    """``Sequence[int]`` (a shape)."""
    items = as_list(v)
    if items is NO:
        return NO
    out = [as_int32(i) for i in items]
    return NO if any(i is NO for i in out) else out


def as_int3(v):
    """``tuple[int, int, int]``: any sequence of three int32s."""
    items = as_int32s(v)
    return NO if items is NO or len(items) != 3 else tuple(items)


def is_stream_or_device(v):
    """``StreamOrDevice``: None, a stream, a device, a device type or its int value."""
    from ._device import Device, DeviceType, Stream, ThreadLocalStream

    if v is None or isinstance(v, (Stream, ThreadLocalStream, Device, DeviceType)):
        return True
    return not isinstance(v, bool) and isinstance(v, int) and v in (0, 1)
