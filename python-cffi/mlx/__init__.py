"""mlx-arm's Python package: ``import mlx.core as mx`` over the mlx-arm C library (cffi).

Only ``mlx.core`` is provided so far; ``mlx.nn``, ``mlx.optimizers`` and ``mlx.utils`` are not.
"""
