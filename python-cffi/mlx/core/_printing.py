"""Printing options (``mx.set_printoptions``, ``mx.printoptions``) as in mlx.core.

The library does the printing (``mlx_array_tostring``); the precision is its process-wide
setting (``mlx_arm_set_print_precision``): -1 prints as MLX does by default, ``p >= 0``
fixed-point with ``p`` digits after the point, as MLX does."""
import contextlib

from ._ffi import check, lib


class PrintOptions:
    """The current printing options (``precision``: -1 means MLX's default)."""

    def __init__(self, precision=-1):
        self.precision = precision

    def __repr__(self):
        return f"PrintOptions(precision={self.precision})"


_current = PrintOptions()


def get_printoptions():
    return PrintOptions(_current.precision)


def set_printoptions(precision=-1):
    precision = int(precision)
    check(lib.mlx_arm_set_print_precision(precision))
    _current.precision = precision


@contextlib.contextmanager
def printoptions(precision=-1):
    saved = _current.precision
    set_printoptions(precision)
    try:
        yield
    finally:
        set_printoptions(saved)
