"""Optimizers of ``mlx.optimizers`` and :func:`clip_grad_norm`.

An optimizer keeps a state tree parallel to the parameters (plus ``step`` and the
hyper-parameters that are arrays, e.g. ``learning_rate``); ``update(model, grads)`` applies
one step given a gradient tree. Hyper-parameters given as callables are schedules, called
with the step count before each update.
"""
from typing import Callable, List, Optional, Tuple, Union

import mlx.core as mx
from mlx.nn import Module
from mlx.utils import tree_flatten, tree_map, tree_merge, tree_reduce, tree_unflatten

__all__ = [
    "Optimizer", "MultiOptimizer", "SGD", "RMSprop", "Adagrad", "AdaDelta", "Adam", "AdamW",
    "Adamax", "Lion", "Adafactor", "Muon", "clip_grad_norm",
]


class Optimizer:
    """Base class: subclasses define ``init_single(parameter, state)`` (fill a parameter's
    state dict) and ``apply_single(gradient, parameter, state)`` (return the new parameter)."""

    def __init__(self, schedulers=None):
        self._initialized = False
        self._state = {"step": mx.array(0, mx.uint64)}
        self._schedulers = dict(schedulers or {})

    def update(self, model: Module, gradients: dict):
        """Apply ``gradients`` to ``model``'s parameters in place."""
        model.update(self.apply_gradients(gradients, model))

    def init(self, parameters: dict):
        """Create the state of every parameter of ``parameters`` that has none yet (the
        existing state is kept)."""

        def grow(params, state):
            # Give `state` the structure of `params`, with empty dicts for new leaves.
            if isinstance(params, (list, tuple)):
                state = list(state)
                for i in range(len(state)):
                    state[i] = grow(params[i], state[i])
                if len(state) != len(params):
                    state.extend(tree_map(lambda _: {}, params[len(state):]))
                return type(params)(state)
            if isinstance(params, dict):
                for k, v in params.items():
                    state[k] = grow(v, state[k]) if k in state else tree_map(lambda _: {}, v)
                return state
            return state

        grow(parameters, self._state)
        tree_map(lambda p, s: s or self.init_single(p, s), parameters, self._state)
        self._initialized = True

    def init_single(self, parameter: mx.array, state: dict):
        raise NotImplementedError()

    def apply_gradients(self, gradients: dict, parameters: dict):
        """The updated parameters (a tree like ``gradients``), advancing the step."""
        if not self._initialized:
            self.init(gradients)
        for name, schedule in self._schedulers.items():
            self.state[name] = schedule(self.step)
        self.state["step"] = self.step + 1
        return tree_map(self.apply_single, gradients, parameters, self.state)

    def apply_single(self, gradient: mx.array, parameter: mx.array, state: dict):
        raise NotImplementedError()

    @property
    def state(self):
        """The optimizer's state tree (assigning one re-runs :meth:`init` at the next
        update)."""
        return self._state

    @state.setter
    def state(self, state: dict):
        self._initialized = False
        self._state = state

    @property
    def step(self):
        return self.state["step"]

    @property
    def learning_rate(self):
        return self.state["learning_rate"]

    @learning_rate.setter
    def learning_rate(self, learning_rate: Union[float, mx.array]):
        self.state["learning_rate"] = mx.array(learning_rate)

    def _maybe_schedule(self, name: str, param: Union[float, Callable[[mx.array], mx.array]]):
        """Store hyper-parameter ``name`` in the state; a callable is a schedule."""
        if callable(param):
            self._schedulers[name] = param
            value = param(self.step)
        else:
            value = mx.array(param)
        self.state[name] = value


class MultiOptimizer(Optimizer):
    """Several optimizers over disjoint sets of parameters: the parameter with path ``k``
    and gradient ``g`` goes to the first optimizer whose filter ``filters[i](k, g)`` is true;
    the last optimizer takes the rest (so ``len(filters) == len(optimizers) - 1``)."""

    def __init__(self, optimizers, filters: list = []):
        super().__init__()
        self._state = {}
        if len(filters) != len(optimizers) - 1:
            raise ValueError(f"Given {len(filters)} filters but {len(optimizers) - 1} needed.")
        self.optimizers = optimizers
        self.filters = list(filters) + [lambda *args, **kwargs: True]

    def _split_dictionary(self, gradients: dict):
        if len(self.optimizers) == 1:
            return [gradients]
        parts = [[] for _ in self.optimizers]
        for k, g in tree_flatten(gradients):
            for i, keep in enumerate(self.filters):
                if keep(k, g):
                    parts[i].append((k, g))
                    break
        return [tree_unflatten(p) if p else {} for p in parts]

    def init(self, parameters: dict):
        for opt, part in zip(self.optimizers, self._split_dictionary(parameters)):
            opt.init(part)

    def apply_gradients(self, gradients: dict, parameters: dict):
        out = {}
        for opt, part in zip(self.optimizers, self._split_dictionary(gradients)):
            out = tree_merge(out, opt.apply_gradients(part, parameters))
        return out

    @property
    def state(self):
        return {"states": [o.state for o in self.optimizers]}

    @state.setter
    def state(self, state: dict):
        if "states" not in state or len(state["states"]) != len(self.optimizers):
            raise ValueError("Invalid state provided")
        for opt, s in zip(self.optimizers, state["states"]):
            opt.state = s

    @property
    def learning_rate(self):
        return self.optimizers[0].learning_rate

    @learning_rate.setter
    def learning_rate(self, learning_rate: Union[float, mx.array]):
        for opt in self.optimizers:
            opt.learning_rate = learning_rate


class SGD(Optimizer):
    """Stochastic gradient descent with optional momentum (and ``dampening``), Nesterov
    momentum and L2 ``weight_decay``."""

    def __init__(
        self,
        learning_rate: Union[float, Callable[[mx.array], mx.array]],
        momentum: float = 0.0,
        weight_decay: float = 0.0,
        dampening: float = 0.0,
        nesterov: bool = False,
    ):
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening.")
        super().__init__()
        self._maybe_schedule("learning_rate", learning_rate)
        self.momentum = momentum
        self.weight_decay = weight_decay
        self.dampening = dampening
        self.nesterov = nesterov

    def init_single(self, parameter: mx.array, state: dict):
        state["v"] = mx.zeros_like(parameter)

    def apply_single(self, gradient: mx.array, parameter: mx.array, state: dict):
        if self.weight_decay != 0:
            gradient = gradient + self.weight_decay * parameter
        lr = self.learning_rate.astype(gradient.dtype)
        if self.momentum <= 0:
            return parameter - lr * gradient
        v = self.momentum * state.get("v")
        if self.dampening > 0:
            v = v + (1 - self.dampening) * gradient
        else:
            v = v + gradient
        step = gradient + self.momentum * v if self.nesterov else v
        state["v"] = v
        return parameter - lr * step


class RMSprop(Optimizer):
    """RMSprop: divide by the root of a running mean (``alpha``) of squared gradients."""

    def __init__(self, learning_rate: Union[float, Callable[[mx.array], mx.array]], alpha: float = 0.99, eps: float = 1e-8):
        super().__init__()
        self._maybe_schedule("learning_rate", learning_rate)
        self.alpha = alpha
        self.eps = eps
        if self.alpha < 0.0:
            raise ValueError(f"RMSprop alpha should be >=0, {self.alpha} was provided instead")
        if self.eps <= 0.0:
            raise ValueError(f"RMSprop epsilon should be >0, {self.eps} was provided instead")

    def init_single(self, parameter: mx.array, state: dict):
        state["v"] = mx.zeros_like(parameter)

    def apply_single(self, gradient: mx.array, parameter: mx.array, state: dict):
        lr = self.learning_rate.astype(gradient.dtype)
        v = self.alpha * state["v"] + (1 - self.alpha) * mx.square(gradient)
        state["v"] = v
        return parameter - lr * gradient / (mx.sqrt(v) + self.eps)


class Adagrad(Optimizer):
    """Adagrad: divide by the root of the sum of all squared gradients so far."""

    def __init__(self, learning_rate: Union[float, Callable[[mx.array], mx.array]], eps: float = 1e-8):
        super().__init__()
        self._maybe_schedule("learning_rate", learning_rate)
        self.eps = eps
        if self.eps <= 0.0:
            raise ValueError(f"Adagrad epsilon should be >0, {self.eps} was provided instead")

    def init_single(self, parameter: mx.array, state: dict):
        state["v"] = mx.zeros_like(parameter)

    def apply_single(self, gradient: mx.array, parameter: mx.array, state: dict):
        lr = self.learning_rate.astype(gradient.dtype)
        v = state["v"] + mx.square(gradient)
        state["v"] = v
        return parameter - lr * gradient / (mx.sqrt(v) + self.eps)


class AdaDelta(Optimizer):
    """AdaDelta: step sizes from running means (``rho``) of squared gradients and squared
    updates."""

    def __init__(self, learning_rate: Union[float, Callable[[mx.array], mx.array]], rho: float = 0.9, eps: float = 1e-6):
        super().__init__()
        self._maybe_schedule("learning_rate", learning_rate)
        self.rho = rho
        self.eps = eps
        if self.rho < 0.0:
            raise ValueError(f"AdaDelta rho should be >=0, {self.rho} was provided instead")
        if self.eps <= 0.0:
            raise ValueError(f"AdaDelta epsilon should be >0, {self.eps} was provided instead")

    def init_single(self, parameter: mx.array, state: dict):
        state["v"] = mx.zeros_like(parameter)
        state["u"] = mx.zeros_like(parameter)

    def apply_single(self, gradient: mx.array, parameter: mx.array, state: dict):
        lr = self.learning_rate.astype(gradient.dtype)
        rho, eps = self.rho, self.eps
        v = rho * state["v"] + (1 - rho) * mx.square(gradient)
        d = mx.sqrt(state["u"] + eps) / mx.sqrt(v + eps) * gradient
        u = rho * state["u"] + (1 - rho) * mx.square(d)
        state["v"] = v
        state["u"] = u
        return parameter - lr * d


class Adam(Optimizer):
    """Adam (first and second moment estimates with ``betas``); ``bias_correction``
    divides them by ``1 - beta ** step``."""

    def __init__(
        self,
        learning_rate: Union[float, Callable[[mx.array], mx.array]],
        betas: List[float] = [0.9, 0.999],
        eps: float = 1e-8,
        bias_correction: bool = False,
    ):
        super().__init__()
        for i, beta in enumerate(betas):
            if not 0.0 <= beta < 1.0:
                raise ValueError(
                    f"Adam beta{i + 1} should be in [0, 1), {beta} was provided instead"
                )
        if not 0.0 <= eps:
            raise ValueError(f"Adam epsilon should be >=0, {eps} was provided instead")
        self._maybe_schedule("learning_rate", learning_rate)
        self.betas = betas
        self.eps = eps
        self.bias_correction = bias_correction

    def init_single(self, parameter: mx.array, state: dict):
        state["m"] = mx.zeros_like(parameter)
        state["v"] = mx.zeros_like(parameter)

    def apply_single(self, gradient: mx.array, parameter: mx.array, state: dict):
        lr = self.learning_rate.astype(gradient.dtype)
        b1, b2 = self.betas
        m = b1 * state["m"] + (1 - b1) * gradient
        v = b2 * state["v"] + (1 - b2) * mx.square(gradient)
        state["m"] = m
        state["v"] = v
        if not self.bias_correction:
            return parameter - lr * m / (mx.sqrt(v) + self.eps)
        step = self.step
        c1 = (lr / (1 - b1**step)).astype(gradient.dtype)
        c2 = mx.rsqrt(1 - b2**step).astype(gradient.dtype)
        return parameter - (c1 * m) / (mx.sqrt(v) * c2 + self.eps)


class AdamW(Adam):
    """Adam with decoupled weight decay: the parameter is first scaled by
    ``1 - learning_rate * weight_decay``."""

    def __init__(
        self,
        learning_rate: Union[float, Callable[[mx.array], mx.array]],
        betas: List[float] = [0.9, 0.999],
        eps: float = 1e-8,
        weight_decay: float = 0.01,
        bias_correction: bool = False,
    ):
        super().__init__(learning_rate=learning_rate, betas=betas, eps=eps, bias_correction=bias_correction)
        self.weight_decay = weight_decay

    def apply_single(self, gradient: mx.array, parameter: mx.array, state: dict):
        lr = self.learning_rate.astype(gradient.dtype)
        return super().apply_single(gradient, parameter * (1 - lr * self.weight_decay), state)


class Adamax(Adam):
    """Adamax: Adam with the infinity norm (a running maximum of ``|g|``) instead of the
    second moment."""

    def __init__(
        self,
        learning_rate: Union[float, Callable[[mx.array], mx.array]],
        betas: List[float] = [0.9, 0.999],
        eps: float = 1e-8,
    ):
        super().__init__(learning_rate, betas, eps)

    def init_single(self, parameter: mx.array, state: dict):
        state["m"] = mx.zeros_like(parameter)
        state["v"] = mx.zeros_like(parameter)

    def apply_single(self, gradient: mx.array, parameter: mx.array, state: dict):
        lr = self.learning_rate.astype(gradient.dtype)
        b1, b2 = self.betas
        m = b1 * state["m"] + (1 - b1) * gradient
        v = mx.maximum(b2 * state["v"], mx.abs(gradient))
        state["m"] = m
        state["v"] = v
        return parameter - lr * m / (v + self.eps)


class Lion(Optimizer):
    """Lion: step by the sign of an interpolation (``betas[0]``) of momentum and gradient;
    the momentum is updated with ``betas[1]``."""

    def __init__(
        self,
        learning_rate: Union[float, Callable[[mx.array], mx.array]],
        betas: List[float] = [0.9, 0.99],
        weight_decay: float = 0.0,
    ):
        super().__init__()
        for i, beta in enumerate(betas):
            if not 0.0 <= beta < 1.0:
                raise ValueError(
                    f"Lion beta{i + 1} should be in [0, 1), {beta} was provided instead"
                )
        self._maybe_schedule("learning_rate", learning_rate)
        self.betas = betas
        self.weight_decay = weight_decay

    def init_single(self, parameter: mx.array, state: dict):
        state["m"] = mx.zeros_like(parameter)

    def apply_single(self, gradient: mx.array, parameter: mx.array, state: dict):
        lr = self.learning_rate.astype(gradient.dtype)
        b1, b2 = self.betas
        m = state["m"]
        direction = b1 * m + (1 - b1) * gradient
        state["m"] = b2 * m + (1 - b2) * gradient
        if self.weight_decay > 0:
            parameter = (1 - lr * self.weight_decay) * parameter
        return parameter - lr * mx.sign(direction)


class Adafactor(Optimizer):
    """Adafactor: factored (row / column) second-moment estimates for matrices, relative
    step sizes and update clipping. ``learning_rate`` is only used with
    ``relative_step=False``."""

    def __init__(
        self,
        learning_rate: Union[float, Callable[[mx.array], mx.array], None] = None,
        eps: Tuple[float, float] = (1e-30, 1e-3),
        clip_threshold: float = 1.0,
        decay_rate: float = -0.8,
        beta_1: Optional[float] = None,
        weight_decay: float = 0.0,
        scale_parameter: bool = True,
        relative_step: bool = True,
        warmup_init: bool = False,
    ):
        super().__init__()
        if learning_rate is not None:
            self._maybe_schedule("learning_rate", learning_rate)
        self.eps = eps
        self.clip_threshold = clip_threshold
        self.decay_rate = decay_rate
        self.beta_1 = beta_1
        self.weight_decay = weight_decay
        self.scale_parameter = scale_parameter
        self.relative_step = relative_step
        self.warmup_init = warmup_init

    def init_single(self, parameter: mx.array, state: dict):
        if parameter.ndim >= 2:
            shape, dtype = parameter.shape, parameter.dtype
            state["exp_avg_sq_row"] = mx.zeros(shape[:-1], dtype=dtype)
            state["exp_avg_sq_col"] = mx.zeros(shape[:-2] + shape[-1:], dtype=dtype)
        else:
            state["exp_avg_sq"] = mx.zeros_like(parameter)
        if self.beta_1 is not None:
            state["exp_avg"] = mx.zeros_like(parameter)

    def _compute_rms(self, inputs):
        return mx.sqrt(mx.mean(mx.square(inputs)))

    def _compute_learning_rate(self, step, parameter_rms):
        if self.relative_step:
            floor = 1e-6 * step if self.warmup_init else 1e-2
            rate = mx.minimum(floor, mx.rsqrt(step))
        else:
            rate = self.learning_rate
        rate = rate.astype(parameter_rms.dtype)
        scale = mx.maximum(self.eps[1], parameter_rms) if self.scale_parameter else 1.0
        return scale * rate

    def _approximate_exp_moving_avg(self, exp_avg_sq_row, exp_avg_sq_col):
        r = mx.rsqrt(exp_avg_sq_row / mx.mean(exp_avg_sq_row, axis=-1, keepdims=True))
        c = mx.rsqrt(exp_avg_sq_col)
        return mx.expand_dims(r, axis=-1) * mx.expand_dims(c, axis=-2)

    def apply_single(self, gradient: mx.array, parameter: mx.array, state: dict):
        step = self.step
        p_rms = self._compute_rms(parameter)
        lr = self._compute_learning_rate(step, p_rms)
        beta_2 = 1.0 - (step**self.decay_rate).astype(p_rms.dtype)
        sq = mx.square(gradient) + self.eps[0]
        if gradient.ndim >= 2:
            row = beta_2 * state["exp_avg_sq_row"] + (1 - beta_2) * mx.mean(sq, axis=-1)
            col = beta_2 * state["exp_avg_sq_col"] + (1 - beta_2) * mx.mean(sq, axis=-2)
            state["exp_avg_sq_row"] = row
            state["exp_avg_sq_col"] = col
            upd = self._approximate_exp_moving_avg(row, col) * gradient
        else:
            avg = beta_2 * state["exp_avg_sq"] + (1 - beta_2) * sq
            state["exp_avg_sq"] = avg
            upd = mx.rsqrt(avg) * gradient
        upd = upd / mx.maximum(1.0, self._compute_rms(upd) / self.clip_threshold)
        upd = lr * upd
        if self.beta_1 is not None:
            avg1 = self.beta_1 * state["exp_avg"] + (1 - self.beta_1) * upd
            state["exp_avg"] = avg1
            upd = avg1
        if self.weight_decay != 0:
            parameter = parameter + parameter * (-self.weight_decay * lr)
        return parameter - upd


class Muon(Optimizer):
    """Muon: SGD momentum whose update of each matrix (or flattened higher-rank array) is
    orthogonalized by ``ns_steps`` Newton-Schulz iterations; vectors get plain momentum."""

    def __init__(
        self,
        learning_rate: Union[float, Callable[[mx.array], mx.array]],
        momentum: float = 0.95,
        weight_decay: float = 0.01,
        nesterov: bool = True,
        ns_steps: int = 5,
    ):
        super().__init__()
        self._maybe_schedule("learning_rate", learning_rate)
        self.momentum = momentum
        self.weight_decay = weight_decay
        self.nesterov = nesterov
        self.ns_steps = ns_steps

    def init_single(self, parameter: mx.array, state: dict):
        state["v"] = mx.zeros_like(parameter)

    def _zeropower_via_newtonschulz5(self, X, steps: int):
        assert X.ndim == 2, f"Expected a 2D array for Newton-Schulz iteration, got shape {X.shape} instead."
        # Quintic iteration coefficients (a, b, c): X <- a X + (b A + c A^2) X, A = X X^T.
        a, b, c = 3.4445, -4.7750, 2.0315
        tall = X.shape[-2] > X.shape[-1]
        if tall:
            X = X.T
        X = X / (mx.linalg.norm(X, keepdims=True) + 1e-7)
        for _ in range(steps):
            A = X @ X.T
            B = mx.addmm(b * A, A, A, beta=1.0, alpha=c)
            X = mx.addmm(a * X, B, X, beta=1.0, alpha=1.0)
        return X.T if tall else X

    def apply_single(self, gradient: mx.array, parameter: mx.array, state: dict):
        if self.weight_decay != 0:
            gradient = gradient + self.weight_decay * parameter
        v = self.momentum * state["v"] + (1 - self.momentum) * gradient
        state["v"] = v
        upd = gradient * (1 - self.momentum) + v * self.momentum if self.nesterov else v
        lr = self.learning_rate.astype(gradient.dtype)
        if upd.ndim >= 2:
            shape = upd.shape
            if upd.ndim > 2:
                upd = mx.reshape(upd, (shape[0], -1))
            upd = self._zeropower_via_newtonschulz5(upd, steps=self.ns_steps)
            if len(shape) > 2:
                upd = mx.reshape(upd, shape)
            lr = lr * max(1, upd.shape[-2] / upd.shape[-1]) ** 0.5
        return parameter - lr * upd


def clip_grad_norm(grads, max_norm):
    """Scale the gradient tree so that its global L2 norm is at most ``max_norm``; returns
    ``(clipped gradients, norm before clipping)``."""
    if max_norm < 0:
        raise ValueError(f"max_norm should be >=0, {max_norm} was provided instead")

    def sq(g):
        if g.dtype == mx.float16:
            g = g.astype(mx.float32)
        return g.square().sum()

    total = mx.sqrt(tree_reduce(lambda acc, g: acc + sq(g), grads, 0.0))
    factor = mx.minimum(max_norm / (total + 1e-6), 1.0)

    def scale(g):
        if mx.issubdtype(g.dtype, mx.floating):
            return (g * factor).astype(g.dtype)
        return g * factor

    return tree_map(scale, grads), total
