"""mlx-arm's Python package: ``import mlx.core as mx`` over the mlx-arm C library (cffi).

``mlx.core`` binds the C library; ``mlx.nn``, ``mlx.optimizers`` and ``mlx.utils`` are pure Python over it.
"""
