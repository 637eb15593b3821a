"""Tensor-parallel linear layers and sharding helpers (MLX 0.32's ``mlx.nn.layers.distributed``).

Written for mlx-arm over ``mx.distributed``. mlx-arm runs one process (its ``mx.distributed``
only makes the singleton group), so every layer here computes what the unsharded layer does;
the code still splits and reduces by the group's rank and size, so it reads as the general
case. ``fully_shard`` returns the module unchanged on that group, as MLX's does on one process;
``FullyShardedModule`` made directly gathers and reduce-scatters through the identity collectives.
"""
import math
from typing import Callable, Optional, Union

import mlx.core as mx
from mlx.nn.layers.base import Module
from mlx.nn.layers.linear import Linear
from mlx.nn.layers.quantized import QuantizedLinear, _defaults_for_mode
from mlx.utils import tree_flatten, tree_map_with_path, tree_unflatten


def sum_gradients(group):
    """Identity forward, gradient summed over ``group`` backward. Over one process that is the
    identity both ways."""
    if group.size() == 1:
        return lambda x: x
    raise NotImplementedError("sum_gradients over several processes: mx.distributed has only the one-process group in mlx-arm")


def _split(weight, segments, axis):
    """``mx.split`` that also takes fractions of the axis (``[0.25, 0.5]``) as split points."""
    if isinstance(segments, int) or isinstance(segments[0], int):
        return mx.split(weight, segments, axis=axis)
    n = weight.shape[axis]
    return mx.split(weight, [int(f * n) for f in segments], axis=axis)


def _rank_part(weight, axis, segments, group):
    """This rank's part of ``weight``: each of its ``segments`` split ``group.size()`` ways."""
    n, r = group.size(), group.rank()
    parts = [_split(seg, n, axis)[r] for seg in _split(weight, segments, axis)]
    return mx.contiguous(mx.concatenate(parts, axis=axis))


def _predicate(sharding, segments):
    if callable(sharding):
        return sharding
    _check_sharding(sharding)
    if sharding == "all-to-sharded":
        # Output features are split: the weight's rows (and the bias).
        return lambda path, w: (-1, segments) if path.endswith("bias") else (max(w.ndim - 2, 0), segments)
    # Input features are split: the weight's columns; the bias stays whole.
    return lambda path, w: None if path.endswith("bias") else (-1, segments)


def _check_sharding(sharding):
    if sharding not in ("all-to-sharded", "sharded-to-all"):
        raise ValueError(
            f"Sharding type sharding={sharding!r} not supported, "
            "choose one of 'all-to-sharded' or 'sharded-to-all'"
        )


def _sharded_parameters(parameters, predicate, group):
    def shard(path, w):
        if not isinstance(w, mx.array):
            return w
        s = predicate(path, w)
        if s is None:
            return w
        if isinstance(s, int):
            axis, segs = s, 1
        elif isinstance(s, tuple):
            axis, segs = s
        else:
            raise ValueError("The sharding function should return int or tuple[int, list]")
        return _rank_part(w, axis, segs, group)

    return tree_map_with_path(shard, parameters)


def shard_inplace(module: Module, sharding: Union[str, Callable], *, segments: Union[int, list] = 1,
                  group: Optional["mx.distributed.Group"] = None):
    """Replace ``module``'s parameters by this rank's shards (the module's code is unchanged,
    so it must do its own communication)."""
    group = group or mx.distributed.init()
    module.update(_sharded_parameters(module.parameters(), _predicate(sharding, segments), group))


def shard_linear(module: Module, sharding: str, *, segments: Union[int, list] = 1,
                 group: Optional["mx.distributed.Group"] = None):
    """A sharded copy of a ``Linear`` / ``QuantizedLinear``: ``"all-to-sharded"`` (outputs
    split across ranks) or ``"sharded-to-all"`` (inputs split, outputs summed)."""
    _check_sharding(sharding)
    table = {
        ("all-to-sharded", True): QuantizedAllToShardedLinear.from_quantized_linear,
        ("all-to-sharded", False): AllToShardedLinear.from_linear,
        ("sharded-to-all", True): QuantizedShardedToAllLinear.from_quantized_linear,
        ("sharded-to-all", False): ShardedToAllLinear.from_linear,
    }
    return table[(sharding, isinstance(module, QuantizedLinear))](module, segments=segments, group=group)


def _uniform(k, shape):
    return mx.random.uniform(low=-k, high=k, shape=shape)


def _check_divisible(dims, n, what):
    if dims % n != 0:
        raise ValueError(f"Cannot shard the {what} of size {dims} across {n} devices.")


def _linear_from_linear(cls, linear: Module, kind: str, segments, group):
    """A `cls` layer holding this rank's `kind` shard of a plain Linear's parameters."""
    group = group or mx.distributed.init()
    out_dims, in_dims = linear.weight.shape
    layer = cls(in_dims, out_dims, "bias" in linear, group)
    layer.update(_sharded_parameters(linear.parameters(), _predicate(kind, segments), group))
    return layer


class AllToShardedLinear(Module):
    """A linear layer whose output features are split across the group: each rank takes the
    whole input and computes its slice of the output."""

    def __init__(self, input_dims: int, output_dims: int, bias: bool = True,
                 group: Optional["mx.distributed.Group"] = None):
        super().__init__()
        self.group = group or mx.distributed.init()
        n = self.group.size()
        _check_divisible(output_dims, n, "output")
        k = math.sqrt(1.0 / input_dims)
        self.weight = _uniform(k, (output_dims // n, input_dims))
        if bias:
            self.bias = _uniform(k, (output_dims // n,))

    def _extra_repr(self) -> str:
        out_dims, in_dims = self.weight.shape
        return f"input_dims={in_dims}, output_dims={out_dims * self.group.size()}, bias={'bias' in self}"

    def __call__(self, x: mx.array) -> mx.array:
        x = sum_gradients(self.group)(x)
        if "bias" in self:
            return mx.addmm(self["bias"], x, self["weight"].T)
        return x @ self["weight"].T

    @classmethod
    def from_linear(cls, linear: Module, *, segments: Union[int, list] = 1,
                    group: Optional["mx.distributed.Group"] = None):
        return _linear_from_linear(cls, linear, "all-to-sharded", segments, group)


class ShardedToAllLinear(Module):
    """A linear layer whose input features are split across the group: each rank multiplies
    its slice and the partial products are summed over the group."""

    def __init__(self, input_dims: int, output_dims: int, bias: bool = True,
                 group: Optional["mx.distributed.Group"] = None):
        super().__init__()
        self.group = group or mx.distributed.init()
        n = self.group.size()
        _check_divisible(input_dims, n, "input")
        k = math.sqrt(1.0 / input_dims)
        self.weight = _uniform(k, (output_dims, input_dims // n))
        if bias:
            self.bias = _uniform(k, (output_dims,))

    def _extra_repr(self) -> str:
        out_dims, in_dims = self.weight.shape
        return f"input_dims={in_dims * self.group.size()}, output_dims={out_dims}, bias={'bias' in self}"

    def __call__(self, x: mx.array) -> mx.array:
        y = mx.distributed.all_sum(x @ self["weight"].T, group=self.group)
        return y + self["bias"] if "bias" in self else y

    @classmethod
    def from_linear(cls, linear: Module, *, segments: Union[int, list] = 1,
                    group: Optional["mx.distributed.Group"] = None):
        return _linear_from_linear(cls, linear, "sharded-to-all", segments, group)


class _QuantizedSharded(Module):
    """Shared by the two quantized forms: quantized weight, frozen like QuantizedLinear."""

    def _init_quantized(self, out_dims, in_dims, bias, group_size, bits, mode, bias_dims):
        self.group_size, self.bits = _defaults_for_mode(mode, group_size, bits)
        self.mode = mode
        k = math.sqrt(1.0 / in_dims)
        q = mx.quantize(_uniform(k, (out_dims, in_dims)), self.group_size, self.bits, mode=mode)
        self.weight, self.scales = q[0], q[1]
        if len(q) > 2 and q[2] is not None:
            self.biases = q[2]
        if bias:
            self.bias = mx.zeros((bias_dims,))
        self.freeze()

    def unfreeze(self, *args, **kwargs):
        super().unfreeze(*args, **kwargs)
        self.freeze(recurse=False)

    def _qmm(self, x):
        return mx.quantized_matmul(x, self["weight"], scales=self["scales"], biases=self.get("biases"),
                                   transpose=True, group_size=self.group_size, bits=self.bits, mode=self.mode)

    def _extra_repr(self) -> str:
        out_dims, packed = self.weight.shape
        in_dims = packed * 32 // self.bits
        n = self.group.size()
        if isinstance(self, QuantizedAllToShardedLinear):
            out_dims *= n
        else:
            in_dims *= n
        return (f"input_dims={in_dims}, output_dims={out_dims}, bias={'bias' in self}, "
                f"group_size={self.group_size}, bits={self.bits}, mode={self.mode}")

    @classmethod
    def from_quantized_linear(cls, ql: Module, *, segments: Union[int, list] = 1,
                              group: Optional["mx.distributed.Group"] = None):
        group = group or mx.distributed.init()
        out_dims, packed = ql.weight.shape
        in_dims = packed * 32 // ql.bits
        layer = cls(in_dims, out_dims, "bias" in ql, ql.group_size, ql.bits, ql.mode, group)
        sharding = "all-to-sharded" if cls is QuantizedAllToShardedLinear else "sharded-to-all"
        layer.update(_sharded_parameters(ql.parameters(), _predicate(sharding, segments), group))
        return layer


class QuantizedAllToShardedLinear(_QuantizedSharded):
    """:class:`AllToShardedLinear` with a quantized weight."""

    def __init__(self, input_dims: int, output_dims: int, bias: bool = True, group_size: int = None,
                 bits: int = None, mode: str = "affine", group: Optional["mx.distributed.Group"] = None):
        super().__init__()
        self.group = group or mx.distributed.init()
        n = self.group.size()
        _check_divisible(output_dims, n, "output")
        self._init_quantized(output_dims // n, input_dims, bias, group_size, bits, mode, output_dims // n)

    def __call__(self, x: mx.array) -> mx.array:
        y = self._qmm(sum_gradients(self.group)(x))
        return y + self["bias"] if "bias" in self else y


class QuantizedShardedToAllLinear(_QuantizedSharded):
    """:class:`ShardedToAllLinear` with a quantized weight."""

    def __init__(self, input_dims: int, output_dims: int, bias: bool = True, group_size: int = None,
                 bits: int = None, mode: str = "affine", group: Optional["mx.distributed.Group"] = None):
        super().__init__()
        self.group = group or mx.distributed.init()
        n = self.group.size()
        _check_divisible(input_dims, n, "input")
        self._init_quantized(output_dims, input_dims // n, bias, group_size, bits, mode, output_dims)

    def __call__(self, x: mx.array) -> mx.array:
        y = mx.distributed.all_sum(self._qmm(x), group=self.group)
        return y + self["bias"] if "bias" in self else y


# ----- fully sharded data parallelism (MLX 0.32's fully_shard / FullyShardedModule) ---------------

def _gather_with_sharded_grads(group, full_shapes, shard_sizes, compute_dtype):
    """A custom function: the list of this rank's row-shards → the list of full parameters
    (optionally cast to ``compute_dtype``); backward, each full gradient is summed across the
    group, divided by its size, and this rank's rows are returned in the shard's dtype."""
    n = group.size()
    cuts, at = [], 0
    for s in shard_sizes[:-1]:
        at += s
        cuts.append(at)
    shard_shapes = [(shape[0] // n,) + tuple(shape[1:]) for shape in full_shapes]

    def cast(x, dtype):
        return x if dtype is None or x.dtype == dtype else x.astype(dtype)

    @mx.custom_function
    def gather(shards):
        # One collective for all parameters: rank r's flattened shards are row r of `full`.
        row = mx.concatenate([cast(s.reshape(1, -1), compute_dtype) for s in shards], axis=1)
        full = mx.distributed.all_gather(row, group=group)
        return [p.reshape(shape) for p, shape in zip(mx.split(full, cuts, axis=1), full_shapes)]

    @gather.vjp
    def gather_vjp(shards, cotangents, outputs):
        rows = mx.concatenate([c.reshape(n, -1) for c in cotangents], axis=1)
        mine = mx.distributed.sum_scatter(rows, group=group) / n
        return [cast(p.reshape(shape), s.dtype)
                for p, shape, s in zip(mx.split(mine, cuts, axis=1), shard_shapes, shards)]

    return gather


def _shardable(module, key, value):
    # A wrapped sub-module shards its own parameters.
    return not isinstance(value, FullyShardedModule) and Module.valid_parameter_filter(module, key, value)


class FullyShardedModule(Module):
    """``module`` with every parameter split along axis 0 across ``group``: each rank keeps
    only its rows; a call gathers the full parameters (cast to ``compute_dtype`` when given),
    runs ``module`` and puts the shards back, and the gradients flowing to the shards are the
    group's mean, reduce-scattered. Make one with :func:`fully_shard`. Over mlx-arm's
    one-process group each shard is the whole parameter and the collectives are the identity."""

    def __init__(self, module: Module, group: Optional["mx.distributed.Group"] = None,
                 compute_dtype: Optional["mx.Dtype"] = None):
        super().__init__()
        group = group or mx.distributed.init()
        n = group.size()
        params = module.filter_and_map(_shardable)
        flat = tree_flatten(params)
        for path, a in flat:
            if a.ndim == 0:
                raise ValueError(f"Cannot shard parameter '{path}' because it is a scalar.")
            if a.shape[0] % n != 0:
                raise ValueError(f"Cannot shard parameter '{path}' with shape {a.shape} "
                                 f"across {n} devices: axis 0 must be divisible by {n}.")
        # Plain attributes (not parameters): kept out of the module's dict.
        object.__setattr__(self, "_paths", [p for p, _ in flat])
        full_shapes = [a.shape for _, a in flat]
        module.update(_sharded_parameters(params, lambda path, w: 0, group))
        self.module = module
        self._gather_fn = _gather_with_sharded_grads(group, full_shapes, [a.size // n for _, a in flat],
                                                     compute_dtype)

    def _extra_repr(self) -> str:
        return f"num_sharded_params={len(self._paths)}"

    def _gathered_call(self, fn, *args, **kwargs):
        shards = self.module.filter_and_map(_shardable)
        fulls = self._gather_fn([a for _, a in tree_flatten(shards)])
        self.module.update(tree_unflatten(list(zip(self._paths, fulls))))
        try:
            return fn(*args, **kwargs)
        finally:
            self.module.update(shards)

    def __call__(self, *args, **kwargs):
        return self._gathered_call(self.module, *args, **kwargs)

    def as_linear(self, *args, **kwargs):
        return self._gathered_call(self.module.as_linear, *args, **kwargs)


def fully_shard(module: Module, *, group: Optional["mx.distributed.Group"] = None,
                compute_dtype: Optional["mx.Dtype"] = None) -> Module:
    """``module`` wrapped in a :class:`FullyShardedModule` over ``group`` (the global group by
    default). As in MLX, the module comes back unchanged when the group has one process (always
    the case in mlx-arm), when it is already wrapped, or when it has no parameter to shard."""
    group = group or mx.distributed.init()
    if group.size() == 1 or isinstance(module, FullyShardedModule):
        return module
    wrapped = FullyShardedModule(module, group=group, compute_dtype=compute_dtype)
    return wrapped if wrapped._paths else module
