"""``mlx.nn.Module``: a dict of parameters (arrays) and sub-modules, as in MLX.

Attributes holding arrays, dicts, lists or tuples are stored as dict items (so they are the
module's "state"); any other attribute is an ordinary Python attribute. Keys that begin with
an underscore are never parameters.
"""
from __future__ import annotations

import textwrap
from typing import Any, Callable, List, Optional, Tuple, Union

import mlx.core as mx
from mlx.utils import tree_flatten, tree_unflatten


def _is_container(v):
    return isinstance(v, (Module, dict, list))


def _walk(owner, key, value, keep, transform, stop):
    """The filtered, mapped view of ``value`` (stored under ``key`` in ``owner``).

    ``keep(module, key, value)`` decides which entries are visited, ``stop(module, key,
    value)`` which ones are leaves (``transform`` is applied to those). Entries of plain dicts
    and lists are judged with their dotted key inside the owning module; an entry of those
    that is filtered out becomes an empty dict.
    """
    if stop(owner, key, value):
        return transform(value)
    if isinstance(value, Module):
        return {
            k: _walk(value, k, v, keep, transform, stop)
            for k, v in value.items()
            if keep(value, k, v)
        }
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            sub = f"{key}.{k}"
            out[k] = _walk(owner, sub, v, keep, transform, stop) if keep(owner, sub, v) else {}
        return out
    if isinstance(value, list):
        out = []
        for i, v in enumerate(value):
            sub = f"{key}.{i}"
            out.append(_walk(owner, sub, v, keep, transform, stop) if keep(owner, sub, v) else {})
        return out
    raise RuntimeError("Unexpected leaf found while traversing the module")


class Module(dict):
    """The base class of layers and models.

    A module is a ``dict``: its arrays and sub-modules (and lists / dicts of them) are its
    items and are reachable as attributes. :meth:`parameters`, :meth:`update`,
    :meth:`freeze`, :meth:`train` … work on the whole tree of sub-modules.
    """

    __call__: Callable

    def __init__(self):
        self._no_grad = set()
        self._training = True

    # ----- attributes ---------------------------------------------------------------------
    @property
    def training(self):
        """``True`` in training mode (see :meth:`train` / :meth:`eval`)."""
        return self._training

    @property
    def state(self):
        """The module itself (its dict of parameters and sub-modules)."""
        return self

    def __getattr__(self, key: str):
        value = self.get(key, None)
        if value is not None:
            return value
        # The normal lookup has already failed: let object raise its AttributeError.
        return object.__getattribute__(self, key)

    def __setattr__(self, key: str, val: Any):
        if isinstance(val, (mx.array, dict, list, tuple)):
            if key not in self and hasattr(self, key):
                delattr(self, key)
            self[key] = val
        else:
            object.__setattr__(self, key, val)
            self.pop(key, None)

    def __delattr__(self, name):
        if self.get(name, None) is not None:
            del self[name]
        else:
            object.__delattr__(self, name)

    # ----- printing -----------------------------------------------------------------------
    def _extra_repr(self) -> str:
        return ""

    def __repr__(self):
        children = tree_flatten(self.children(), is_leaf=self.is_module)
        text = f"{type(self).__name__}({self._extra_repr()}"
        for name, child in children:
            text += "\n" + textwrap.indent(f"({name}): {child!r}", "  ")
        if children:
            text += "\n"
        return text + ")"

    # ----- filters ------------------------------------------------------------------------
    @staticmethod
    def is_module(value):
        return isinstance(value, Module)

    @staticmethod
    def valid_child_filter(module, key, value):
        return isinstance(value, (dict, list))

    @staticmethod
    def valid_parameter_filter(module, key, value):
        return isinstance(value, (dict, list, mx.array)) and not key.startswith("_")

    @staticmethod
    def trainable_parameter_filter(module, key, value):
        return Module.valid_parameter_filter(module, key, value) and key not in module._no_grad

    def filter_and_map(
        self,
        filter_fn: Callable[["Module", str, Any], bool],
        map_fn: Optional[Callable] = None,
        is_leaf_fn: Optional[Callable[["Module", str, Any], bool]] = None,
    ):
        """A tree of the entries that ``filter_fn`` keeps, with ``map_fn`` applied to leaves.

        ``is_leaf_fn(module, key, value)`` decides where the recursion stops (by default at
        anything that is not a module, dict or list).
        """
        transform = map_fn if map_fn is not None else (lambda x: x)
        stop = is_leaf_fn if is_leaf_fn is not None else (lambda m, k, v: not _is_container(v))
        return {
            k: _walk(self, k, v, filter_fn, transform, stop)
            for k, v in self.items()
            if filter_fn(self, k, v)
        }

    def parameters(self):
        """All arrays of the module tree, as nested dicts and lists."""
        return self.filter_and_map(self.valid_parameter_filter)

    def trainable_parameters(self):
        """The parameters that are not frozen."""
        return self.filter_and_map(self.trainable_parameter_filter)

    def children(self):
        """The direct sub-modules (inside dicts and lists too)."""
        return self.filter_and_map(
            self.valid_child_filter, is_leaf_fn=lambda m, k, v: isinstance(v, Module)
        )

    def leaf_modules(self):
        """The sub-modules that have no sub-modules of their own."""

        def is_leaf_module(m, k, v):
            return isinstance(v, Module) and not tree_flatten(v.children())

        return self.filter_and_map(self.valid_child_filter, is_leaf_fn=is_leaf_module)

    # ----- updating -----------------------------------------------------------------------
    def update(self, parameters: dict, strict: bool = True) -> "Module":
        """Replace parameters with the arrays of ``parameters`` (a tree like
        :meth:`parameters`). With ``strict``, unknown names and non-array values raise
        ValueError."""

        def put(dst, key, new):
            cur = dst[key]
            if isinstance(cur, mx.array):
                if strict and not isinstance(new, mx.array):
                    raise ValueError(f"Received invalid type: {type(new).__name__}.")
                dst[key] = new
            else:
                merge(cur, new)

        def merge(dst, src):
            if isinstance(src, dict):
                for k in src:
                    if k in dst:
                        put(dst, k, src[k])
                    elif strict:
                        raise ValueError(f'Module does not have parameter named "{k}".')
            elif isinstance(src, list):
                for i in range(len(src)):
                    if i >= len(dst):
                        if strict:
                            raise ValueError(
                                f"List index {i} is out of bounds for destination of length {len(dst)}."
                            )
                        continue
                    put(dst, i, src[i])
            elif strict:
                raise ValueError(f"Received invalid type: {type(src).__name__}.")

        merge(self, parameters)
        return self

    def update_modules(self, modules: dict, strict: bool = True) -> "Module":
        """Replace sub-modules with the modules of ``modules`` (a tree like
        :meth:`children`)."""

        def put(dst, key, new):
            cur = dst[key]
            if isinstance(cur, Module) and isinstance(new, Module):
                dst[key] = new
            elif isinstance(cur, (dict, list)):
                merge(cur, new)
            elif strict and new != {}:
                raise ValueError(f"Received invalid type: {type(new).__name__}.")

        def merge(dst, src):
            if isinstance(src, dict):
                for k in src:
                    if k in dst:
                        put(dst, k, src[k])
                    elif strict:
                        raise ValueError(f'Module does not have sub-module named "{k}".')
            elif isinstance(src, list):
                for i in range(len(src)):
                    if i >= len(dst):
                        if strict:
                            raise ValueError(
                                f"List index {i} is out of bounds for destination of length {len(dst)}."
                            )
                        continue
                    put(dst, i, src[i])
            elif strict:
                raise ValueError(f"Received invalid type: {type(src).__name__}.")

        merge(self, modules)
        return self

    def apply(
        self,
        map_fn: Callable[[mx.array], mx.array],
        filter_fn: Optional[Callable[["Module", str, Any], bool]] = None,
    ) -> "Module":
        """Replace every parameter (chosen by ``filter_fn``) ``p`` by ``map_fn(p)``."""
        keep = filter_fn if filter_fn is not None else Module.valid_parameter_filter
        self.update(self.filter_and_map(keep, map_fn))
        return self

    def apply_to_modules(self, apply_fn: Callable[[str, "Module"], Any]) -> "Module":
        """Call ``apply_fn(path, module)`` on this module and every sub-module."""
        pending = [("", self)]
        while pending:
            path, module = pending.pop()
            apply_fn(path, module)
            prefix = f".{path}" if path else ""
            pending.extend(tree_flatten(module.children(), prefix=prefix, is_leaf=self.is_module))
        return self

    def modules(self):
        """This module and all sub-modules, in :meth:`apply_to_modules` order."""
        found = []
        self.apply_to_modules(lambda _, m: found.append(m))
        return found

    def named_modules(self):
        """``(path, module)`` for this module and all sub-modules."""
        found = []
        self.apply_to_modules(lambda k, m: found.append((k, m)))
        return found

    # ----- freezing -----------------------------------------------------------------------
    def _validate_keys(self, keys, strict):
        keys = keys if isinstance(keys, list) else [keys]
        if strict:
            for k in keys:
                if k not in self:
                    raise KeyError(f"Module doesn't contain member {k}.")
        return keys

    def _validate_keys_recursive(self, keys):
        keys = keys if isinstance(keys, list) else [keys]
        all_modules = self.modules()
        for k in keys:
            if not any(k in m for m in all_modules):
                raise KeyError(f"Module doesn't contain member {k}.")

    def freeze(
        self,
        *,
        recurse: bool = True,
        keys: Optional[Union[str, List[str]]] = None,
        strict: bool = False,
    ) -> "Module":
        """Exclude parameters from :meth:`trainable_parameters` (all, or those named in
        ``keys``), in this module and, with ``recurse``, in every sub-module."""

        def own_parameter_names(m):
            local = m.filter_and_map(
                lambda mm, k, v: not isinstance(v, Module) and mm.valid_parameter_filter(mm, k, v)
            )
            return [k for k, _ in tree_flatten(local)]

        def freeze_one(_, m, strict_here):
            names = keys if keys is not None else own_parameter_names(m)
            m._no_grad.update(m._validate_keys(names, strict_here))

        if recurse:
            strict_here = strict
            if strict and keys is not None:
                self._validate_keys_recursive(keys)
                strict_here = False
            self.apply_to_modules(lambda p, m: freeze_one(p, m, strict_here))
        else:
            freeze_one("", self, strict)
        return self

    def unfreeze(
        self,
        *,
        recurse: bool = True,
        keys: Optional[Union[str, List[str]]] = None,
        strict: bool = False,
    ) -> "Module":
        """Undo :meth:`freeze` (for all parameters, or those named in ``keys``)."""

        def unfreeze_one(_, m, strict_here):
            if keys is None:
                m._no_grad.clear()
            else:
                m._no_grad.difference_update(m._validate_keys(keys, strict_here))

        if recurse:
            strict_here = strict
            if strict and keys is not None:
                self._validate_keys_recursive(keys)
                strict_here = False
            self.apply_to_modules(lambda p, m: unfreeze_one(p, m, strict_here))
        else:
            unfreeze_one("", self, strict)
        return self

    # ----- modes and dtypes ---------------------------------------------------------------
    def _set_training_mode(self, mode: bool) -> None:
        self._training = mode

    def train(self, mode: bool = True) -> "Module":
        """Set training mode (``mode=False``: evaluation mode) on the whole module tree."""
        self.apply_to_modules(lambda _, m: m._set_training_mode(mode))
        return self

    def eval(self) -> "Module":
        """Set evaluation mode (``train(False)``)."""
        return self.train(False)

    def set_dtype(
        self,
        dtype: mx.Dtype,
        predicate: Optional[Callable[[mx.Dtype], bool]] = lambda x: mx.issubdtype(x, mx.floating),
    ):
        """Cast the parameters whose dtype satisfies ``predicate`` (default: floating point)
        to ``dtype``; ``predicate=None`` casts all."""
        check = predicate if predicate is not None else (lambda _: True)
        self.apply(lambda x: x.astype(dtype) if check(x.dtype) else x)

    # ----- files --------------------------------------------------------------------------
    def load_weights(
        self,
        file_or_weights: Union[str, List[Tuple[str, mx.array]]],
        strict: bool = True,
    ) -> "Module":
        """Set the parameters from a ``.npz`` / ``.safetensors`` file or a list of
        ``(dotted name, array)`` pairs. With ``strict`` the names and shapes must match the
        model's exactly (ValueError otherwise)."""
        weights = file_or_weights
        if isinstance(weights, str):
            weights = list(mx.load(weights).items())
        if strict:
            given = dict(weights)
            current = tree_flatten(self.parameters(), destination={})
            extra = given.keys() - current.keys()
            if extra:
                raise ValueError(
                    f"Received {len(extra)} parameters not in model: \n" + ",\n".join(sorted(extra)) + "."
                )
            missing = current.keys() - given.keys()
            if missing:
                raise ValueError(
                    f"Missing {len(missing)} parameters: \n" + ",\n".join(sorted(missing)) + "."
                )
            for name, old in current.items():
                new = given[name]
                if not isinstance(new, mx.array):
                    raise ValueError(
                        f"Expected mx.array but received {type(new)} for parameter {name}"
                    )
                if new.shape != old.shape:
                    raise ValueError(
                        f"Expected shape {old.shape} but received shape {new.shape} for parameter {name}"
                    )
        if len(weights) != 0:
            self.update(tree_unflatten(weights), strict=False)
        return self

    def save_weights(self, file: str):
        """Save the parameters to ``file`` (``.npz`` or ``.safetensors``)."""
        flat = tree_flatten(self.parameters(), destination={})
        if file.endswith(".npz"):
            mx.savez(file, **flat)
        elif file.endswith(".safetensors"):
            mx.save_safetensors(file, flat)
        else:
            raise ValueError(
                f"Unsupported file extension for {file}. Use '.npz' or '.safetensors'."
            )
