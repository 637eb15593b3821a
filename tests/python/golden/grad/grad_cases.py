"""The transform cases shared by gen_grad.py (run with real MLX, writes grad.json) and
tests/python/test_grad.py (runs them with mlx-arm). Each case is a function of the module
``mx`` (and imports mlx.nn / mlx.optimizers itself) returning a pytree of arrays and plain
values; a case that raises records the exception type and message."""
import numpy as np

CASES = {}


def case(f):
    CASES[f.__name__] = f
    return f


def _x(mx, *shape, seed=0, lo=-1.0, hi=1.0):
    """Fixed inputs (numpy's generator, so both libraries see the same values)."""
    rng = np.random.default_rng(seed)
    return mx.array(rng.uniform(lo, hi, size=shape).astype(np.float32))


# --- grad / value_and_grad ---------------------------------------------------------------


@case
def grad_sin_sum(mx):
    return mx.grad(lambda x: mx.sin(x).sum())(_x(mx, 4))


@case
def value_and_grad_two_args(mx):
    f = lambda x, y: (x * y + mx.exp(x) / y).sum()  # noqa: E731
    return mx.value_and_grad(f, argnums=(0, 1))(_x(mx, 3), _x(mx, 3, seed=1, lo=1, hi=2))


@case
def argnums_second_only(mx):
    f = lambda x, y: (mx.log(y) * x).sum()  # noqa: E731
    return mx.grad(f, argnums=1)(_x(mx, 3), _x(mx, 3, seed=1, lo=1, hi=2))


@case
def argnums_unsorted(mx):
    f = lambda x, y, z: (x * 2 + y * y + z ** 3).sum()  # noqa: E731
    return mx.grad(f, argnums=(2, 0))(_x(mx, 2), _x(mx, 2, seed=1), _x(mx, 2, seed=2))


@case
def has_aux_tuple(mx):
    def f(x):
        return (x * x).sum(), {"double": x * 2, "n": 3, "name": "aux"}

    return mx.value_and_grad(f)(_x(mx, 3))


@case
def pytree_params(mx):
    def loss(p, x):
        h = mx.tanh(x @ p["w"] + p["b"][0])
        return (h * p["b"][1]).sum()

    params = {"w": _x(mx, 3, 2), "b": [_x(mx, 2, seed=1), _x(mx, 2, seed=2)]}
    return mx.value_and_grad(loss)(params, _x(mx, 4, 3, seed=3))


@case
def argnames_only(mx):
    f = lambda x, y=None: (x * y * y).sum()  # noqa: E731
    return mx.value_and_grad(f, argnames="y")(_x(mx, 3), y=_x(mx, 3, seed=1))


@case
def argnums_and_argnames(mx):
    f = lambda x, y=None, z=None: (x * y + z).sum()  # noqa: E731
    return mx.grad(f, argnums=0, argnames=["z"])(_x(mx, 3), y=_x(mx, 3, seed=1), z=_x(mx, 3, seed=2))


@case
def non_array_extra_arg(mx):
    f = lambda x, scale, label: (x * scale).sum() if label == "s" else x.sum()  # noqa: E731
    return mx.grad(f)(_x(mx, 3), 2.5, "s")


@case
def second_derivative(mx):
    return mx.grad(mx.grad(lambda x: x ** 3 + mx.sin(x)))(mx.array(0.7))


@case
def stop_gradient_case(mx):
    return mx.grad(lambda x: (x * mx.stop_gradient(x * x)).sum())(_x(mx, 3))


@case
def reductions_and_where(mx):
    def f(x):
        return mx.mean(x) + mx.var(x) + mx.max(x) + mx.logsumexp(x) + mx.where(x > 0, x, 0.1 * x).sum()

    return mx.value_and_grad(f)(_x(mx, 2, 3))


@case
def softmax_cross_entropy(mx):
    def f(w, x, y):
        logits = x @ w
        logp = logits - mx.logsumexp(logits, axis=-1, keepdims=True)
        return -mx.take_along_axis(logp, y[:, None], axis=-1).mean()

    return mx.value_and_grad(f)(_x(mx, 3, 4), _x(mx, 5, 3, seed=1), mx.array([0, 3, 1, 2, 3]))


@case
def indexing(mx):
    def f(x):
        return x[1:3].sum() + (x[mx.array([0, 0, 2])] * 2).sum() + x[..., None].max()

    return mx.grad(f)(_x(mx, 4))


@case
def reshape_transpose_broadcast(mx):
    def f(x, b):
        return (x.reshape(2, 3).T * b).sum()

    return mx.grad(f, argnums=(0, 1))(_x(mx, 6), _x(mx, 1, 2, seed=1))


@case
def float16_grad(mx):
    x = _x(mx, 3).astype(mx.float16)
    g = mx.grad(lambda x: (x * x).sum())(x)
    return [g, g.dtype == mx.float16]


@case
def grad_of_eval_inside(mx):
    def f(x):
        y = mx.exp(x)
        mx.eval(y)
        return (y * x).sum()

    return mx.grad(f)(_x(mx, 3))


# --- vjp / jvp ---------------------------------------------------------------------------


@case
def vjp_two_outputs(mx):
    f = lambda x, y: [x * y, mx.sin(x) + y]  # noqa: E731
    return mx.vjp(f, [_x(mx, 3), _x(mx, 3, seed=1)], [_x(mx, 3, seed=2), _x(mx, 3, seed=3)])


@case
def vjp_single_array_output(mx):
    return mx.vjp(lambda x: mx.exp(x), [_x(mx, 2, 2)], [mx.ones((2, 2))])


@case
def jvp_tanh_square(mx):
    return mx.jvp(lambda x: mx.tanh(x) ** 2, [_x(mx, 4)], [_x(mx, 4, seed=1)])


@case
def jvp_two_inputs(mx):
    f = lambda a, b: [a @ b, (a * a).sum()]  # noqa: E731
    return mx.jvp(f, [_x(mx, 2, 3), _x(mx, 3, 2, seed=1)], [_x(mx, 2, 3, seed=2), _x(mx, 3, 2, seed=3)])


@case
def vjp_extra_cotangent_ignored(mx):
    return mx.vjp(lambda x: x * 2, [_x(mx, 2)], [_x(mx, 2), _x(mx, 2, seed=1)])


@case
def vjp_stop_gradient_output_takes_no_cotangent(mx):
    f = lambda x: [mx.stop_gradient(x * 3), x * x]  # noqa: E731
    return mx.vjp(f, [_x(mx, 2)], [_x(mx, 2, seed=1)])


# --- errors (type and message as MLX) ----------------------------------------------------


@case
def error_grad_tuple_output(mx):
    return mx.grad(lambda x: (x.sum(), x))(_x(mx, 2))


@case
def error_value_and_grad_list_output(mx):
    return mx.value_and_grad(lambda x: [x.sum()])(_x(mx, 2))


@case
def error_value_and_grad_empty_tuple(mx):
    return mx.value_and_grad(lambda x: ())(_x(mx, 2))


@case
def error_value_and_grad_first_not_array(mx):
    return mx.value_and_grad(lambda x: (1.0, x))(_x(mx, 2))


@case
def error_argnum_out_of_range(mx):
    return mx.grad(lambda x, y: x.sum(), argnums=2)(_x(mx, 2), _x(mx, 2))


@case
def error_negative_argnum(mx):
    return mx.grad(lambda x: x.sum(), argnums=-1)


@case
def error_duplicate_argnum(mx):
    return mx.grad(lambda x: x.sum(), argnums=[0, 0])


@case
def error_no_argument(mx):
    return mx.grad(lambda x: x.sum(), argnums=[])


@case
def error_missing_argname(mx):
    return mx.grad(lambda x, y=None: x.sum(), argnames="y")(_x(mx, 2))


@case
def error_non_array_grad_arg(mx):
    return mx.grad(lambda x: x * 2)(3.0)


@case
def error_exception_inside_function(mx):
    def f(x):
        raise KeyError("boom inside")

    return mx.grad(f)(_x(mx, 2))


@case
def error_vjp_too_few_cotangents(mx):
    return mx.vjp(lambda x, y: [x * 2, y], [_x(mx, 2), _x(mx, 2)], [_x(mx, 2)])


@case
def error_vjp_cotangent_shape(mx):
    return mx.vjp(lambda x: x * 2, [_x(mx, 2)], [_x(mx, 3)])


@case
def error_jvp_tangent_count(mx):
    return mx.jvp(lambda x, y: x * y, [_x(mx, 2), _x(mx, 2)], [_x(mx, 2)])


# --- vmap --------------------------------------------------------------------------------


@case
def vmap_elementwise(mx):
    return mx.vmap(lambda x, y: mx.exp(x) * y + 1)(_x(mx, 3, 4), _x(mx, 3, 4, seed=1))


@case
def vmap_unmapped_input(mx):
    return mx.vmap(lambda x, y: mx.maximum(x, y), in_axes=(0, None))(_x(mx, 3, 4), _x(mx, 4, seed=1))


@case
def vmap_axis_1_reductions(mx):
    f = lambda x: [x.sum(), mx.max(x, keepdims=True), mx.argmin(x), mx.cumsum(x), mx.softmax(x)]  # noqa: E731
    return mx.vmap(f, in_axes=1)(_x(mx, 4, 3))


@case
def vmap_matmul(mx):
    a, b = _x(mx, 5, 2, 3), _x(mx, 5, 3, 4, seed=1)
    return [mx.vmap(lambda a, b: a @ b)(a, b), mx.vmap(lambda a, b: a @ b, in_axes=(0, None))(a, b[0])]


@case
def vmap_shape_ops(mx):
    f = lambda x: [x.T.reshape(-1), x[1:, ::2], mx.broadcast_to(x[:1], (3, 4)), mx.expand_dims(x, 0)]  # noqa: E731
    return mx.vmap(f)(_x(mx, 5, 2, 4))


@case
def vmap_concatenate_where(mx):
    f = lambda x, y: mx.where(x > 0, mx.concatenate([x, y])[:3], y)  # noqa: E731
    return mx.vmap(f)(_x(mx, 4, 3), _x(mx, 4, 3, seed=1))


@case
def vmap_gather_batched_indices(mx):
    return mx.vmap(lambda x, i: x[i])(_x(mx, 3, 5), mx.array([4, 0, 2]))


@case
def vmap_gather_shared_indices(mx):
    return mx.vmap(lambda x: mx.take(x, mx.array([[0, 2], [1, 1]]), axis=1))(_x(mx, 3, 4, 5))


@case
def vmap_out_axes(mx):
    f = lambda x: (x * 2, x.sum(axis=0))  # noqa: E731
    return mx.vmap(f, in_axes=0, out_axes=(1, 0))(_x(mx, 3, 4, 2))


@case
def vmap_pytree(mx):
    f = lambda d: {"s": d["a"] + d["b"], "p": [d["a"] * d["b"]]}  # noqa: E731
    return mx.vmap(f, in_axes={"a": 0, "b": None})({"a": _x(mx, 3, 2), "b": _x(mx, 2, seed=1)})


@case
def error_vmap_axes_not_a_prefix(mx):
    f = lambda d: d["a"]  # noqa: E731
    return mx.vmap(f, in_axes=({"a": 0, "b": None},))({"a": _x(mx, 3, 2), "b": _x(mx, 2, seed=1)})


@case
def vmap_output_not_mapped(mx):
    return mx.vmap(lambda x, y: (x + 1, y * 2), in_axes=(0, None))(_x(mx, 3), _x(mx, 2, seed=1))


@case
def vmap_of_grad(mx):
    return mx.vmap(mx.grad(lambda x: (x ** 3 + mx.sin(x)).sum()))(_x(mx, 4, 3))


@case
def grad_of_vmap(mx):
    return mx.grad(lambda x: mx.vmap(lambda r: (r * r * mx.exp(r)).sum())(x).sum())(_x(mx, 3, 2))


@case
def vmap_nested(mx):
    return mx.vmap(mx.vmap(lambda a, b: a * b + 1, in_axes=(0, None)), in_axes=(None, 0))(_x(mx, 3), _x(mx, 4, seed=1))


@case
def error_vmap_inconsistent_sizes(mx):
    return mx.vmap(lambda x, y: x + y)(_x(mx, 3), _x(mx, 4))


@case
def error_vmap_invalid_axis(mx):
    return mx.vmap(lambda x: x, in_axes=2)(_x(mx, 3, 2))


@case
def error_vmap_all_none(mx):
    return mx.vmap(lambda x: x, in_axes=(None,))(_x(mx, 3))


@case
def error_vmap_in_axes_none(mx):
    return mx.vmap(lambda x: x, in_axes=None)(_x(mx, 3))


@case
def error_vmap_non_array_arg(mx):
    return mx.vmap(lambda x, s: x * s)(_x(mx, 3), 2.0)


# --- mlx.nn / mlx.optimizers end to end --------------------------------------------------


@case
def nn_value_and_grad_mlp_training(mx):
    import mlx.nn as nn
    import mlx.optimizers as optim

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.l1 = nn.Linear(3, 8)
            self.l2 = nn.Linear(8, 2)

        def __call__(self, x):
            return self.l2(nn.relu(self.l1(x)))

    model = MLP()
    # Fixed weights (both libraries initialise randomly in their own way).
    model.update({
        "l1": {"weight": _x(mx, 8, 3, seed=10), "bias": _x(mx, 8, seed=11)},
        "l2": {"weight": _x(mx, 2, 8, seed=12), "bias": _x(mx, 2, seed=13)},
    })
    x = _x(mx, 16, 3, seed=14)
    y = mx.array(np.random.default_rng(15).integers(0, 2, size=16).astype(np.int32))

    def loss_fn(model, x, y):
        return nn.losses.cross_entropy(model(x), y, reduction="mean")

    step = nn.value_and_grad(model, loss_fn)
    opt = optim.Adam(learning_rate=0.05)
    losses = []
    for _ in range(20):
        loss, grads = step(model, x, y)
        opt.update(model, grads)
        mx.eval(model.parameters(), opt.state)
        losses.append(loss.item())
    return {"losses": losses, "final_l2_bias": model.l2.bias}


# --- custom_function / checkpoint ----------------------------------------------------------


def _custom_sin_mul(mx, vjp=False, jvp=False, vmap=False):
    """f(x, y) = sin(x)·y with optional rules that differ from its true derivative."""

    @mx.custom_function
    def f(x, y):
        return mx.sin(x) * y

    if vjp:
        @f.vjp
        def f_vjp(primals, cotangent, output):
            x, y = primals
            return cotangent * mx.cos(x) * y * 3, cotangent * output

    if jvp:
        @f.jvp
        def f_jvp(primals, tangents):
            x, y = primals
            dx, dy = tangents
            return dx * mx.cos(x) * y * 5 + dy * mx.sin(x)

    if vmap:
        @f.vmap
        def f_vmap(inputs, axes):
            x, y = inputs
            return mx.sin(x) * y + 100, axes[0]

    return f


@case
def custom_no_rules_grad_jvp_vmap(mx):
    f = _custom_sin_mul(mx)
    x, y = _x(mx, 3, seed=11), _x(mx, 3, seed=12)
    return (mx.grad(lambda a, b: f(a, b).sum(), argnums=(0, 1))(x, y),
            mx.jvp(f, [x, y], [mx.ones(3), mx.ones(3)]), mx.vmap(f)(x, y))


@case
def custom_vjp_rule_used_by_grad(mx):
    f = _custom_sin_mul(mx, vjp=True)
    x, y = _x(mx, 3, seed=13), _x(mx, 3, seed=14)
    return mx.value_and_grad(lambda a, b: (f(a, b) * mx.arange(3)).sum(), argnums=(0, 1))(x, y)


@case
def custom_vjp_rule_jvp_and_vmap_unchanged(mx):
    f = _custom_sin_mul(mx, vjp=True)
    x, y = _x(mx, 3, seed=15), _x(mx, 3, seed=16)
    return mx.jvp(f, [x, y], [_x(mx, 3, seed=17), _x(mx, 3, seed=18)]), mx.vmap(f, in_axes=(0, None))(_x(mx, 2, 3), y)


@case
def custom_jvp_rule_used_by_jvp(mx):
    f = _custom_sin_mul(mx, jvp=True)
    x, y = _x(mx, 3, seed=19), _x(mx, 3, seed=20)
    outer = lambda a, b: mx.exp(f(a, b))  # noqa: E731 — the chain rule around the rule
    return (mx.jvp(outer, [x, y], [_x(mx, 3, seed=21), _x(mx, 3, seed=22)]),
            mx.grad(lambda a, b: f(a, b).sum())(x, y))


@case
def custom_vmap_rule_used_by_vmap(mx):
    f = _custom_sin_mul(mx, vmap=True)
    x, y = _x(mx, 4, 3, seed=23), _x(mx, 4, 3, seed=24)
    return mx.vmap(f)(x, y), f(x[0], y[0])


@case
def custom_all_rules_and_pytrees(mx):
    @mx.custom_function
    def g(params, scale):
        return {"out": params["a"] * params["b"] * scale, "aux": params["a"] + 1}

    @g.vjp
    def g_vjp(primals, cotangents, outputs):
        params, scale = primals
        return ({"a": cotangents["out"] * 2 + cotangents["aux"], "b": mx.zeros_like(params["b"])},
                (cotangents["out"] * outputs["out"]).sum().reshape(scale.shape))

    p = {"a": _x(mx, 3, seed=25), "b": _x(mx, 3, seed=26)}
    s = mx.array([1.5])
    loss = lambda q, t: (g(q, t)["out"].sum() + g(q, t)["aux"].sum())  # noqa: E731
    return mx.grad(loss, argnums=(0, 1))(p, s)


@case
def custom_grad_of_grad(mx):
    @mx.custom_function
    def cube(x):
        return x * x * x

    @cube.vjp
    def cube_vjp(x, c, out):
        return c * 3 * x * x

    d1 = mx.grad(lambda x: cube(x).sum())
    return mx.grad(lambda x: d1(x).sum())(_x(mx, 3, seed=27))


@case
def custom_captured_array_is_constant(mx):
    def g(x, y):
        @mx.custom_function
        def f(x):
            return x * y

        @f.vjp
        def f_vjp(x, dx, fx):
            return dx * 10

        return f(x)

    x, y = mx.array(2.0), mx.array(3.0)
    return g(x, y), mx.grad(g)(x, y), mx.grad(g, argnums=1)(x, y)


@case
def custom_vmap_of_grad(mx):
    f = _custom_sin_mul(mx, vjp=True)
    gx = mx.grad(lambda a, b: f(a, b).sum())
    return mx.vmap(gx)(_x(mx, 4, 3, seed=28), _x(mx, 4, 3, seed=29))


@case
def error_custom_vjp_raises(mx):
    @mx.custom_function
    def f(x):
        return x * 2

    @f.vjp
    def f_vjp(x, dx, fx):
        raise ValueError("Abort!")

    return mx.grad(lambda x: f(x).sum())(_x(mx, 2))


@case
def error_custom_vmap_not_a_pair(mx):
    @mx.custom_function
    def f(x):
        return x * 2

    @f.vmap
    def f_vmap(x, ax):
        return x * 2

    return mx.vmap(f)(_x(mx, 2, 3))


@case
def error_custom_jvp_with_kwargs(mx):
    @mx.custom_function
    def f(x, scale=1.0):
        return x * scale

    @f.jvp
    def f_jvp(x, dx):
        return dx

    return mx.jvp(lambda x: f(x, scale=mx.array(2.0)), [_x(mx, 2)], [_x(mx, 2)])


@case
def checkpoint_same_gradients(mx):
    def block(x, w):
        h = mx.tanh(x @ w)
        return mx.sin(h) * h

    ck = mx.checkpoint(block)
    x, w = _x(mx, 2, 3, seed=30), _x(mx, 3, 3, seed=31)
    loss = lambda f: (lambda a, b: f(f(a, b), b).sum())  # noqa: E731 — two applications
    return (mx.value_and_grad(loss(ck), argnums=(0, 1))(x, w),
            mx.value_and_grad(loss(block), argnums=(0, 1))(x, w))


@case
def checkpoint_pytree_kwargs_and_second_order(mx):
    ck = mx.checkpoint(lambda d, k=None: {"y": mx.exp(d["a"]) * d["b"] * k})
    a, b, k = _x(mx, 3, seed=32), _x(mx, 3, seed=33), mx.array(0.5)
    d1 = mx.grad(lambda a: ck({"a": a, "b": b}, k=k)["y"].sum())
    return d1(a), mx.grad(lambda a: d1(a).sum())(a)


@case
def checkpoint_nn_utils(mx):
    import mlx.nn as nn

    mx.random.seed(3)
    layer = nn.Linear(3, 2)
    layer.update({"weight": _x(mx, 2, 3, seed=34), "bias": _x(mx, 2, seed=35)})
    ck = nn.utils.checkpoint(layer)
    x = _x(mx, 4, 3, seed=36)
    plain = nn.value_and_grad(layer, lambda x: (layer(x) ** 2).sum())(x)
    checked = nn.value_and_grad(layer, lambda x: (ck(x) ** 2).sum())(x)
    return plain, checked


# --- rules added for upstream test_autograd / test_vmap (issue 19) -------------------------


@case
def grad_sort_partition_cummax(mx):
    x = mx.array([[3.0, 1.0, 2.0, 5.0, 4.0], [2.0, 2.0, 0.0, 1.0, 2.0]])
    w = _x(mx, 2, 5, seed=40)
    fs = [lambda a: mx.sort(a, axis=1), lambda a: mx.sort(a, axis=0), lambda a: mx.topk(a, 2, axis=1),
          lambda a: mx.cummax(a, axis=1), lambda a: mx.cummin(a, axis=1, reverse=True),
          lambda a: mx.cummax(a, axis=0, inclusive=False)[1:]]
    return [mx.grad(lambda a, f=f: (f(a) * w[: f(a).shape[0], : f(a).shape[1]]).sum())(x) for f in fs]


@case
def vjp_scatter_max_min_ties(mx):
    def fun(src, updates):
        return src.at[mx.array([1, 3, 3])].maximum(updates), src.at[mx.array([0, 0, 2])].minimum(updates)

    cot = [mx.array([4.0, 5.0, 6.0, 7.0]), mx.array([1.0, 2.0, 3.0, 4.0])]
    return mx.vjp(fun, [mx.array([1.0, 2.0, 3.0, 4.0]), mx.array([5.0, 4.0, 4.0])], cot)


@case
def grad_integer_inputs(mx):
    x = (mx.array([1, 2, 3]), mx.array([4, 5, 6]))
    return mx.grad(lambda t: (t[0] + 10).sum() + (t[1] * 10).sum())(x)


@case
def jvp_integer_reductions_and_comparisons(mx):
    a, t = mx.arange(4), mx.array([3, 2, 1, 0])
    outs = [mx.jvp(f, (a,), (t,))[1][0] for f in (mx.sum, mx.prod)]  # min/max: not yet (docs/COMPAT.md)
    x = mx.array([1.0, -2.0, 3.0])
    return outs + [mx.jvp(lambda x: mx.greater(x, 0.0), [x], [mx.ones_like(x)])[1][0]]


@case
def grad_list_argument_written_in_place(mx):
    arrs = [mx.array(1.0), mx.array(2.0), mx.array(3.0)]

    def fun(arrs):
        arrs[1] = arrs[0] * arrs[2]
        return arrs[1]

    g = mx.grad(fun)(arrs)
    return g, arrs[0], arrs[2]


@case
def vmap_sort_family(mx):
    x = _x(mx, 3, 4, 5, seed=41)
    f = lambda a: [mx.sort(a, axis=0), mx.argsort(a, axis=-1), mx.sort(mx.partition(a, 2, axis=1), axis=1)]  # noqa: E731
    return mx.vmap(f, in_axes=1)(x)


@case
def vmap_scatter_family(mx):
    a, u = _x(mx, 3, 4, 5, seed=42), _x(mx, 3, 2, 5, seed=43)
    idx = mx.array([[3, 1], [0, 0], [2, 2]])
    return [mx.vmap(lambda a, i, u: a.at[i].add(u))(a, idx, u),
            mx.vmap(lambda a, u: a.at[mx.array([3, 1])].maximum(u), in_axes=(0, None))(a, u[0]),
            mx.vmap(lambda a, i, v: mx.put_along_axis(a, i, v, axis=0))(a, mx.array([[[1, 0, 3, 2, 0]]] * 3), u[:, :1])]


@case
def vmap_masked_assignment(mx):
    def fn(x, m, src):
        x[m] = src
        return x

    a = mx.array([[10, 20, 30, 40], [50, 60, 70, 80]])
    m = mx.array([[False, True, True, True], [True, False, True, True]])
    return [mx.vmap(fn)(a, m, mx.array([[1, 2, 3], [4, 5, 6]])),
            mx.vmap(fn, in_axes=(0, 0, None))(a, m, mx.array([9, 8, 7, 6])),
            mx.vmap(fn, in_axes=(0, 0, None))(a, m, mx.array(1))]


@case
def vmap_inv_svd(mx):
    m = _x(mx, 3, 4, 4, seed=44) * 0.2 + mx.eye(4)
    return [mx.vmap(mx.linalg.inv)(m), mx.vmap(lambda a: mx.linalg.svd(a, compute_uv=False))(m)]


# --- transforms3: cumprod, conv, fft, rope, searchsorted, gather_qmm, index errors ---------


@case
def grad_cumprod_with_zeros(mx):
    # Every (reverse, inclusive) form, on rows without, with one and with two zeros.
    x = mx.array([[2.0, 1.0, 2.0, 2.0, 3.0], [2.0, 0.0, 2.0, 2.0, 3.0], [2.0, 0.0, 2.0, 0.0, 3.0]])
    w = _x(mx, 3, 5, seed=50)
    return [mx.grad(lambda a, r=r, i=i: (mx.cumprod(a, axis=1, reverse=r, inclusive=i) * w).sum())(x)
            for r in (False, True) for i in (True, False)]


@case
def grad_conv_general(mx):
    x, w = _x(mx, 2, 7, 6, 4, seed=51), _x(mx, 6, 3, 2, 2, seed=52)

    # No input dilation: real MLX 0.32.4's weight cotangent then has the wrong shape
    # ((6, 2, 2, 2) for a (6, 3, 2, 2) weight); core/tests/grad.rs checks that case against
    # finite differences.
    def f(x, w):
        return mx.conv_general(x, w, stride=(2, 1), padding=([1, 0], [0, 2]), kernel_dilation=(1, 2),
                               groups=2, flip=True)

    return mx.vjp(f, [x, w], [_x(mx, *f(x, w).shape, seed=53)])


@case
def grad_conv1d_and_second_order(mx):
    x, w = _x(mx, 2, 9, 3, seed=54), _x(mx, 4, 3, 3, seed=55)
    g = mx.grad(lambda x, w: (mx.conv1d(x, w, stride=2, padding=1) ** 2).sum(), argnums=(0, 1))(x, w)
    gg = mx.grad(lambda x: (mx.grad(lambda x: (mx.conv1d(x, w) ** 2).sum())(x) ** 2).sum())(x)
    return g, gg


@case
def vmap_conv(mx):
    x, w = _x(mx, 3, 2, 6, 4, seed=56), _x(mx, 3, 4, 3, 2, seed=57)
    gconv = lambda x, w: mx.conv1d(x, w, stride=2, groups=2)  # noqa: E731
    # Only the weight mapped with groups > 1: real MLX 0.32.4 disagrees with its own
    # per-example results (off by up to 2.5 here), so that case is checked per example in
    # core/tests/vmap.rs and here with groups = 1.
    conv = lambda x, w: mx.conv1d(x, w, stride=2)  # noqa: E731
    w1 = _x(mx, 3, 4, 3, 4, seed=58)
    return [mx.vmap(gconv, in_axes=(0, None))(x, w[0]), mx.vmap(conv, in_axes=(None, 0))(x[0], w1),
            mx.vmap(gconv)(x, w), mx.vmap(gconv, in_axes=(2, 3))(mx.moveaxis(x, 0, 2), mx.moveaxis(w, 0, 3))]


@case
def fft_vjp_jvp_vmap(mx):
    x = _x(mx, 3, 6, seed=58)
    z = x + 1j * _x(mx, 3, 6, seed=59)
    zr = (x + 1j * _x(mx, 3, 6, seed=60))[:, :4]
    parts = lambda a: [mx.real(a), mx.imag(a)]  # noqa: E731
    out = []
    for f, a in [(lambda a: mx.fft.rfft(a, norm="ortho"), x), (lambda a: mx.fft.fft2(a), z),
                 (lambda a: mx.fft.irfft(a, n=6), zr), (lambda a: mx.fft.irfftn(a, axes=(0, 1)), zr),
                 (lambda a: mx.fft.ifft(a, axis=0, norm="forward"), z)]:
        y = f(a)
        cot = mx.ones_like(y) * (1.5 + 0.5j) if y.dtype == mx.complex64 else mx.arange(y.size).reshape(y.shape) / 7
        out += parts(mx.vjp(f, [a], [cot])[1][0]) + parts(mx.jvp(f, [a], [a * 0.5 + 1])[1][0])
        out += parts(mx.vmap(f, in_axes=1, out_axes=1)(mx.stack([a, a * 2], axis=1)))
    return out


@case
def vmap_rope_and_norms(mx):
    x = _x(mx, 2, 2, 3, 8, seed=61)
    w = _x(mx, 8, seed=62)
    return [mx.vmap(lambda a: mx.fast.rope(a, 8, traditional=False, base=10000.0, scale=1.0, offset=2))(x),
            mx.vmap(lambda a: mx.fast.rope(a, 4, traditional=True, base=100.0, scale=0.5, offset=mx.array([1, 3])))(x),
            mx.vmap(lambda a, w: mx.fast.rms_norm(a, w, 1e-5), in_axes=(0, None))(x, w),
            mx.vmap(lambda a, w: mx.fast.layer_norm(a, w, None, 1e-5))(x, mx.stack([w, w * 2]))]


@case
def vmap_searchsorted_values(mx):
    return mx.vmap(lambda v: mx.searchsorted(mx.arange(8, dtype=mx.float32), v, side="right"))(
        mx.array([[0.5, 3.0, 9.0], [3.0, -1.0, 7.0]]))


@case
def error_vmap_searchsorted_sequence(mx):
    return mx.vmap(lambda s: mx.searchsorted(s, mx.array([1.0])))(mx.zeros((3, 4)))


@case
def grad_gather_qmm(mx):
    w, s, b = mx.quantize(_x(mx, 3, 16, 64, seed=63), group_size=32, bits=4)
    x = _x(mx, 2, 1, 64, seed=64)
    lhs, rhs = mx.array([1, 0, 1], mx.uint32), mx.array([2, 0, 2], mx.uint32)
    cot = _x(mx, 3, 1, 16, seed=65)
    f = lambda x, s, b: mx.gather_qmm(x, w, s, b, lhs_indices=lhs, rhs_indices=rhs, group_size=32, bits=4)  # noqa: E731
    return mx.vjp(f, [x, s, b], [cot])


@case
def error_gather_qmm_vjp_fp_scales(mx):
    w, s = mx.quantize(_x(mx, 32, 64, seed=66), mode="mxfp4")
    x = _x(mx, 2, 64, seed=67)
    return mx.grad(lambda s: mx.gather_qmm(x, w, s, rhs_indices=mx.array(0), mode="mxfp4").sum())(s)


@case
def error_vjp_towards_gather_indices(mx):
    return mx.vjp(lambda x, i: mx.take(x, i), [mx.array([1.0, 2.0, 3.0]), mx.array([2, 0])], [mx.ones((2,))])


@case
def error_vjp_towards_scatter_indices(mx):
    f = lambda x, i, u: x.at[i].add(u)  # noqa: E731
    return mx.vjp(f, [mx.array([1.0, 2.0, 3.0]), mx.array([2, 0]), mx.array([5.0, 6.0])], [mx.ones((3,))])


@case
def grad_through_stopped_indices(mx):
    def f(w):
        idx = mx.stop_gradient(mx.argsort(w)[:2])
        return (mx.take(w, idx) * mx.array([2.0, 3.0])).sum()

    hvp = mx.grad(lambda a: (mx.grad(lambda b: (mx.sort(b) ** 2 * mx.arange(4)).sum())(a) * 0.5).sum())
    return mx.grad(f)(mx.array([4.0, 3.0, 2.0, 1.0])), hvp(mx.array([3.0, 1.0, 2.0, 5.0]))


@case
def error_async_eval_of_a_tracer(mx):
    def fun(x):
        y = x + 1.0
        mx.async_eval(y)
        return mx.exp(y).sum()

    return mx.grad(fun)(mx.array([1.0, 2.0]))


@case
def async_eval_of_a_constant_inside_grad(mx):
    c = mx.array(2.0) * 3

    def fun(x):
        mx.async_eval(c)
        return (x * c).sum()

    return mx.grad(fun)(mx.array([1.0, 2.0])), c


@case
def integer_where_vjp_and_extremes_jvp(mx):
    c = mx.array([True, False, True])
    v = mx.vjp(lambda x, y: mx.where(c, x, y), [mx.array([1, 2, 3]), mx.array([4, 5, 6])], [mx.array([7, 8, 9])])
    a, t = mx.arange(4), mx.array([3, 2, 1, 0])
    return v, [mx.jvp(f, (a,), (t,))[1][0] for f in (mx.min, mx.max)]


# --- shapeless compile of broadcasting matmuls (MLX's BroadcastAxes) ------------------------
# Each returns the outputs and the number of traces after each call: a shapeless trace of a
# matmul whose batch axes broadcast serves every shape of the same ranks.


def _traced_calls(mx, fun, calls, shapeless=True):
    # Real MLX traces the first compiled function of a process once more on its second call
    # (whatever the shapes: its cache entry's stream differs then); a compiled call first
    # keeps that out of the counts.
    mx.eval(mx.compile(lambda a: a + 1)(mx.array(1.0)))
    count = [0]

    def counted(*a):
        count[0] += 1
        return fun(*a)

    c = mx.compile(counted, shapeless=shapeless)
    outs, traces = [], []
    for args in calls:
        outs.append(c(*args))
        traces.append(count[0])
    return outs, traces


@case
def shapeless_compile_vmap_matmul_mapped_both(mx):
    f = mx.vmap(lambda x, y: mx.matmul(x, y), in_axes=(0, 1))
    calls = [(_x(mx, 2, 3, 1, 4, 5), _x(mx, 1, 2, 5, 6, seed=1)), (_x(mx, 3, 2, 1, 4, 5, seed=2), _x(mx, 2, 3, 5, 6, seed=3)),
             (_x(mx, 4, 1, 2, 3, 2, seed=4), _x(mx, 2, 4, 2, 3, seed=5))]
    return _traced_calls(mx, f, calls)


@case
def shapeless_compile_vmap_matmul_unmapped_operand(mx):
    f = mx.vmap(lambda x, y: mx.matmul(x, y), in_axes=(0, None))
    calls = [(_x(mx, 2, 3, 1, 4, 5), _x(mx, 1, 2, 5, 6, seed=1)), (_x(mx, 2, 3, 1, 7, 2, seed=2), _x(mx, 1, 2, 2, 3, seed=3)),
             (_x(mx, 3, 1, 4, 2, 2, seed=4), _x(mx, 5, 1, 2, 3, seed=5))]
    return _traced_calls(mx, f, calls)


@case
def shapeless_compile_broadcast_matmul(mx):
    f = lambda x, y: mx.matmul(x, y) * 2  # noqa: E731
    calls = [(_x(mx, 2, 1, 3, 4), _x(mx, 5, 4, 2, seed=1)), (_x(mx, 1, 3, 2, 4, seed=2), _x(mx, 3, 4, 3, seed=3)),
             (_x(mx, 4, 2, 3, 4, seed=4), _x(mx, 1, 4, 1, seed=5))]
    return _traced_calls(mx, f, calls)


@case
def shapeless_compile_grad_of_broadcast_matmul(mx):
    # One trace for both shapes, as MLX (values and trace counts).
    g = mx.grad(lambda x, y: (mx.matmul(x, y) ** 2).sum(), argnums=(0, 1))
    calls = [(_x(mx, 2, 1, 3, 4), _x(mx, 5, 4, 2, seed=1)), (_x(mx, 3, 1, 2, 3, seed=2), _x(mx, 4, 3, 1, seed=3))]
    return _traced_calls(mx, g, calls)


# Shapeless traces real MLX reuses on new shapes of the same rank (one trace for three shapes):
# reductions without keepdims, `** 2`, the gradient of a sum, zeros_like, softmax's gradient,
# argmax/argmin with no axis and a whole flatten (a reshape asked as -1). Not here: `full(x.shape)`
# and `arange(x.shape[-1])`, which real MLX serves from its first trace with the first shape's
# constants (wrong values on the other shapes; shapeless_sweep.py shows it): mlx-arm traces again.
_SHAPELESS_SWEEP = {
    "sum": lambda mx: lambda x: x.sum(),
    "sum0": lambda mx: lambda x: x.sum(0),
    "max1": lambda mx: lambda x: x.max(1),
    "prod": lambda mx: lambda x: x.prod(),
    "mean": lambda mx: lambda x: x.mean(),
    "var0": lambda mx: lambda x: mx.var(x, 0),
    "std": lambda mx: lambda x: mx.std(x),
    "logsumexp": lambda mx: lambda x: mx.logsumexp(x, -1),
    "argmax": lambda mx: lambda x: mx.argmax(x, -1),
    "argmax_all": lambda mx: lambda x: mx.argmax(x),
    "argmin_all_keepdims": lambda mx: lambda x: mx.argmin(x, keepdims=True),
    "flatten": lambda mx: lambda x: x.flatten() * 2,
    "square_pow": lambda mx: lambda x: x ** 2,
    "sum_square_pow": lambda mx: lambda x: (x ** 2).sum(),
    "zeros_like": lambda mx: lambda x: mx.zeros_like(x) + x,
    "ones_like": lambda mx: lambda x: mx.ones_like(x) * x,
    "grad_sum_square_pow": lambda mx: mx.grad(lambda z: (z ** 2).sum()),
    "grad_mean": lambda mx: mx.grad(lambda z: z.mean()),
    "value_and_grad_sum_square": lambda mx: mx.value_and_grad(lambda z: (z ** 2).sum()),
    "grad_softmax": lambda mx: mx.grad(lambda z: (mx.softmax(z, -1) * z).sum()),
}


def _sweep_case(name):
    def run(mx):
        calls = [(_x(mx, 2, 3, seed=7),), (_x(mx, 4, 5, seed=8),), (_x(mx, 3, 7, seed=9),)]
        return _traced_calls(mx, _SHAPELESS_SWEEP[name](mx), calls)
    run.__name__ = "shapeless_trace_counts_" + name
    return case(run)


for _name in _SHAPELESS_SWEEP:
    _sweep_case(_name)


@case
def shapeless_trace_counts_grad_sum_matmul(mx):
    g = mx.grad(lambda x, y: (x @ y).sum(), argnums=(0, 1))
    calls = [(_x(mx, 2, 3), _x(mx, 3, 4, seed=1)), (_x(mx, 4, 5, seed=2), _x(mx, 5, 2, seed=3)),
             (_x(mx, 3, 7, seed=4), _x(mx, 7, 6, seed=5))]
    return _traced_calls(mx, g, calls)


@case
def shapeless_trace_counts_grad_sum_broadcast_matmul(mx):
    g = mx.grad(lambda x, y: mx.matmul(x, y).sum(), argnums=(0, 1))
    calls = [(_x(mx, 2, 1, 3, 4), _x(mx, 5, 4, 2, seed=1)), (_x(mx, 3, 1, 2, 3, seed=2), _x(mx, 4, 3, 1, seed=3)),
             (_x(mx, 2, 1, 2, 5, seed=4), _x(mx, 3, 5, 4, seed=5))]
    return _traced_calls(mx, g, calls)


@case
def vmap_of_grad_of_broadcast_matmul_in_shapeless_compile(mx):
    # One call: real MLX refuses the same trace on a second shape ("[broadcast_shapes] ...").
    g = mx.vmap(mx.grad(lambda x, y: mx.matmul(x, y).sum()), in_axes=(0, None))
    return _traced_calls(mx, g, [(_x(mx, 3, 2, 1, 3, 4), _x(mx, 5, 4, 2, seed=1))])


@case
def compile_export_to_dot_fused_labels(mx):
    # export_to_dot labels a fused node as MLX names its Compiled primitive (upstream
    # test_shared_broadcast). Not here: a lone elementwise op with a broadcast operand, which
    # MLX fuses with its Broadcast node (`CompiledBroadcastMultiply`) and mlx-arm leaves unfused.
    import re
    from io import StringIO

    def labels(fun, *args):
        out = mx.compile(fun)(*args)
        outs = out if isinstance(out, tuple) else (out,)
        s = StringIO()
        mx.export_to_dot(s, *outs)
        return [sorted(x for x in re.findall(r'label ?="([^"]+)"', s.getvalue()) if x.startswith("Compiled")), list(outs)]

    def shared(x, y, z):
        yy = mx.broadcast_to(y, z.shape)
        return (x + yy * z), yy.sum()

    x, y, z = _x(mx, 2, 3), _x(mx, 3, seed=1), _x(mx, seed=2)
    mx.eval(x, y, z)
    return [labels(shared, x, z, x), labels(lambda x, y: mx.exp(x * 2.0) + y, x, y),
            labels(lambda x, y, z: mx.maximum(x - y, z) * x, x, y, z), labels(lambda x: mx.sqrt(mx.abs(x)) - 1, x)]
