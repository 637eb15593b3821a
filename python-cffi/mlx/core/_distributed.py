"""``mx.distributed`` for one process.

mlx-arm has no communication backend (MLX's ring, MPI, NCCL, JACCL), so — as real MLX does
when no backend can start — ``init()`` returns the singleton group (rank 0 of 1) and
``init(strict=True)`` raises. On that group the collectives are the identity and
point-to-point operations raise, with MLX's messages. ``is_available()`` is False: no backend
is compiled in (MLX's CPU wheel says True because it carries the ring backend, even though
initializing it fails without a host file).
"""
from ._array import to_array


class Group:
    """A group of processes; mlx-arm only ever makes the singleton group."""

    def rank(self):
        return 0

    def size(self):
        return 1

    def split(self, color, key=-1):
        raise RuntimeError("Cannot split the distributed group further.")


_WORLD = Group()


def is_available():
    """Whether a communication backend is compiled in: none is, in mlx-arm."""
    return False


def init(strict=False, backend="any", *, all_gather_factory=None):
    """The global group: the singleton group, or RuntimeError when ``strict``."""
    if not isinstance(backend, str):
        raise TypeError(f"init(): backend must be a str, got {type(backend).__name__}")
    if strict:
        raise RuntimeError("[distributed] Couldn't initialize any backend")
    return _WORLD


def _group(group):
    if group is not None and not isinstance(group, Group):
        raise TypeError(f"group must be an mlx.core.distributed.Group, got {type(group).__name__}")
    return group or _WORLD


def _collective(name):
    def f(x, *, group=None, stream=None):
        _group(group)
        return to_array(x)  # over one process every reduction/gather is the input itself

    f.__name__ = name
    f.__qualname__ = name
    f.__doc__ = f"``{name}`` over the group; the identity on mlx-arm's one-process group."
    return f


all_sum = _collective("all_sum")
all_max = _collective("all_max")
all_min = _collective("all_min")
all_gather = _collective("all_gather")
sum_scatter = _collective("sum_scatter")


def send(x, dst, *, group=None, stream=None):
    _group(group)
    raise ValueError("Cannot send to a singleton group")


def recv(shape, dtype, src, *, group=None, stream=None):
    _group(group)
    raise ValueError("Cannot recv from a singleton group")


def recv_like(x, src, *, group=None, stream=None):
    _group(group)
    raise ValueError("Cannot recv from a singleton group")


def install(module):
    """Fills the ``mx.distributed`` submodule."""
    for name in ("Group", "is_available", "init", "all_sum", "all_max", "all_min", "all_gather",
                 "sum_scatter", "send", "recv", "recv_like"):
        obj = globals()[name]
        obj.__module__ = "mlx.core.distributed"
        setattr(module, name, obj)
