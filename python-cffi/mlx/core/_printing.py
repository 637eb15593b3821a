"""Printing options (``mx.set_printoptions``, ``mx.printoptions``) as in mlx.core.

The library prints arrays as real MLX does at its default precision; other precisions are not
implemented, so asking for one raises NotImplementedError rather than printing differently."""
import contextlib


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
    if precision != -1:
        raise NotImplementedError("mlx.core.set_printoptions(precision != -1) is not implemented yet in mlx-arm")
    _current.precision = precision


@contextlib.contextmanager
def printoptions(precision=-1):
    saved = _current.precision
    set_printoptions(precision)
    try:
        yield
    finally:
        _current.precision = saved
