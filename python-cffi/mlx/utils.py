"""Helpers for nested Python containers ("trees") of arrays, as in MLX's ``mlx.utils``.

A tree is any nesting of ``list``, ``tuple`` (named tuples included) and ``dict``; everything
else is a leaf. Paths name a leaf by joining the keys / indices on the way down with dots
(``"layers.0.weight"``).
"""
from collections import defaultdict
from itertools import zip_longest
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

__all__ = [
    "tree_map",
    "tree_map_with_path",
    "tree_flatten",
    "tree_unflatten",
    "tree_reduce",
    "tree_merge",
]


def _rebuild(like, items):
    """A sequence of the same type as ``like`` holding ``items`` (named tuples included)."""
    if isinstance(like, tuple) and hasattr(like, "_fields"):
        return type(like)(*items)
    return type(like)(items)


def tree_map(fn: Callable, tree: Any, *rest: Any, is_leaf: Optional[Callable] = None) -> Any:
    """Return a tree of the same structure as ``tree`` whose leaves are ``fn(leaf, *others)``.

    ``rest`` are further trees with (at least) the structure of ``tree``; their matching
    nodes are passed to ``fn`` after the leaf of ``tree``. ``is_leaf(node)`` may declare a
    container a leaf.
    """
    if is_leaf is not None and is_leaf(tree):
        return fn(tree, *rest)
    if isinstance(tree, (list, tuple)):
        return _rebuild(
            tree,
            [
                tree_map(fn, node, *[other[i] for other in rest], is_leaf=is_leaf)
                for i, node in enumerate(tree)
            ],
        )
    if isinstance(tree, dict):
        out = {}
        for key, node in tree.items():
            out[key] = tree_map(fn, node, *[other[key] for other in rest], is_leaf=is_leaf)
        return out
    return fn(tree, *rest)


def tree_map_with_path(
    fn: Callable,
    tree: Any,
    *rest: Any,
    is_leaf: Optional[Callable] = None,
    path: Optional[Any] = None,
) -> Any:
    """Like :func:`tree_map`, but ``fn`` receives the leaf's dotted path first.

    ``path`` is the prefix of the paths (``None``: none; the root leaf then gets ``None``).
    """
    if is_leaf is not None and is_leaf(tree):
        return fn(path, tree, *rest)

    def sub(key):
        return f"{path}.{key}" if path else f"{key}"

    if isinstance(tree, (list, tuple)):
        return _rebuild(
            tree,
            [
                tree_map_with_path(
                    fn, node, *[other[i] for other in rest], is_leaf=is_leaf, path=sub(i)
                )
                for i, node in enumerate(tree)
            ],
        )
    if isinstance(tree, dict):
        out = {}
        for key, node in tree.items():
            out[key] = tree_map_with_path(
                fn, node, *[other[key] for other in rest], is_leaf=is_leaf, path=sub(key)
            )
        return out
    return fn(path, tree, *rest)


def tree_flatten(
    tree: Any,
    prefix: str = "",
    is_leaf: Optional[Callable] = None,
    destination: Optional[Union[List[Tuple[str, Any]], Dict[str, Any]]] = None,
) -> Union[List[Tuple[str, Any]], Dict[str, Any]]:
    """The leaves of ``tree`` as ``(dotted path, leaf)`` pairs, in traversal order.

    ``prefix`` is prepended to every path; its first character is dropped (so ``".a"`` gives
    paths ``"a.…"``). ``destination`` may be a list (pairs appended, the default) or a dict
    (``path -> leaf`` inserted); it is also the return value.
    """
    if destination is None:
        destination = []
    if isinstance(destination, list):
        add = destination.append
    elif isinstance(destination, dict):
        def add(pair):
            destination[pair[0]] = pair[1]
    else:
        raise ValueError("Destination should be either a list or a dictionary or None")

    def walk(node, key):
        if is_leaf is not None and is_leaf(node):
            add((key[1:], node))
        elif isinstance(node, (list, tuple)):
            for i, child in enumerate(node):
                walk(child, f"{key}.{i}")
        elif isinstance(node, dict):
            for k, child in node.items():
                walk(child, f"{key}.{k}")
        else:
            add((key[1:], node))

    walk(tree, prefix)
    return destination


def tree_unflatten(tree: Union[List[Tuple[str, Any]], Dict[str, Any]]) -> Any:
    """Rebuild a tree from ``(dotted path, leaf)`` pairs (a list, or a dict ``path -> leaf``).

    A level whose keys are all integers becomes a list (missing indices are filled with
    empty dicts); any other level becomes a dict.
    """
    pairs = list(tree.items()) if isinstance(tree, dict) else list(tree)
    if len(pairs) == 1 and pairs[0][0] == "":
        return pairs[0][1]

    groups = defaultdict(list)
    for key, value in pairs:
        head, _, tail = key.partition(".")
        groups[head].append((tail, value))

    indices = {}
    for head in groups:
        try:
            indices[int(head)] = head
        except ValueError:
            indices = None
            break
    if indices is not None and len(indices) == len(groups):
        out = []
        for i in sorted(indices):
            while len(out) < i:
                out.append({})
            out.append(tree_unflatten(groups[indices[i]]))
        return out
    return {head: tree_unflatten(children) for head, children in groups.items()}


def tree_reduce(fn: Callable, tree: Any, initializer: Any = None, is_leaf: Optional[Callable] = None) -> Any:
    """Fold ``fn(accumulator, leaf)`` over the leaves of ``tree``.

    Without ``initializer`` the first leaf starts the accumulation.
    """
    if is_leaf is not None and is_leaf(tree):
        return tree if initializer is None else fn(initializer, tree)
    if isinstance(tree, (list, tuple)):
        acc = initializer
        for child in tree:
            acc = tree_reduce(fn, child, acc, is_leaf)
        return acc
    if isinstance(tree, dict):
        acc = initializer
        for child in tree.values():
            acc = tree_reduce(fn, child, acc, is_leaf)
        return acc
    return tree if initializer is None else fn(initializer, tree)


def _is_empty_container(x):
    return isinstance(x, (dict, list, tuple)) and len(x) == 0


def tree_merge(tree_a: Any, tree_b: Any, merge_fn: Optional[Callable] = None) -> Any:
    """Merge two trees into one holding the leaves of both (a recursive ``dict.update``).

    Empty containers and ``None`` count as absent subtrees. Where both trees have a leaf at
    the same place, ``merge_fn(a, b)`` decides (without one, ValueError).
    """
    if _is_empty_container(tree_a) and _is_empty_container(tree_b):
        if type(tree_a) is not type(tree_b):
            raise ValueError(
                f"Cannot merge {type(tree_a).__name__} with {type(tree_b).__name__}"
            )
        return type(tree_a)()
    a = None if _is_empty_container(tree_a) else tree_a
    b = None if _is_empty_container(tree_b) else tree_b
    if a is None and b is not None:
        return b
    if b is None and a is not None:
        return a
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return _rebuild(a, [tree_merge(x, y, merge_fn) for x, y in zip_longest(a, b)])
    if isinstance(a, dict) and isinstance(b, dict):
        # Keys of a, then those only in b (MLX iterates a set here, so its order varies).
        keys = list(a) + [k for k in b if k not in a]
        return {k: tree_merge(a.get(k), b.get(k), merge_fn) for k in keys}
    if merge_fn is None:
        raise ValueError(
            "Trees contain elements at the same locations but no merge function was provided"
        )
    return merge_fn(a, b)
