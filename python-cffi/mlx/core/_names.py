"""Real MLX 0.32's public names (``docs/mlx_api_names.txt``, the project's one list of them).

An installed package carries a copy (``_mlx_api_names.txt``, put there by setup.py); a source
checkout reads the repository's file. Used to tell "a real MLX name mlx-arm does not provide
yet" (NotImplementedError naming it) from a misspelling (AttributeError)."""
import os

_HERE = os.path.dirname(os.path.abspath(__file__))


def _load():
    for path in (os.path.join(_HERE, "_mlx_api_names.txt"),
                 os.path.join(_HERE, "..", "..", "..", "docs", "mlx_api_names.txt")):
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                return {line.strip() for line in f if line.strip()}
    return set()


MLX_NAMES = _load()


def is_mlx_name(qualified):
    """Whether ``qualified`` (``"mx.savez"``, ``"mx.random.key"`` …) is a name of real MLX."""
    return qualified in MLX_NAMES
