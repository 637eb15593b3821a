"""The error for an MLX name that mlx-arm does not provide yet."""


class NotProvidedError(AttributeError, NotImplementedError):
    """Raised by the modules' ``__getattr__`` for a name real MLX has and mlx-arm does not
    provide yet. It is an ``AttributeError``, so ``hasattr(mx, name)`` is False and
    ``getattr(mx, name, default)`` gives the default, and a ``NotImplementedError``, so code
    that catches that (the message names what is missing) still works."""
