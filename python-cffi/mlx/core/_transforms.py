"""``mx.grad``, ``mx.value_and_grad``, ``mx.vjp``, ``mx.jvp``, ``mx.vmap`` and ``mx.stop_gradient``
over the C API's closures and transforms (``closure.h``, ``transforms.h``; ``mlx_arm_vmap``).

A Python function becomes a C ``mlx_closure`` through one cffi callback (``_trampoline``)
whose payload is the Python state. The callback hands the function wrapped arrays and
stores its results in the C result vector; an exception raised by the function is kept and
the callback returns non-zero, so the C transform fails and the *original* exception is
re-raised here (MLX raises the function's own exception too).

Arguments and results are pytrees (lists, tuples and dicts, nested), as in MLX: the arrays
of every argument are primals; those of the differentiated arguments (``argnums``,
``argnames``) get gradients, returned in the shape of their argument.
"""
import functools
import threading

from ._array import _ARR_PTR, array, stream_handle, to_array, wrap
from ._ffi import check, error, ffi, lib

# --- pytrees (MLX's tree_visit: list, tuple and dict nodes; anything else is a leaf) --------


def _flatten(tree, out, strict):
    """Appends the arrays of ``tree`` to ``out``; with ``strict`` any other leaf is an error."""
    if isinstance(tree, (list, tuple)):
        for t in tree:
            _flatten(t, out, strict)
    elif isinstance(tree, dict):
        for t in tree.values():
            _flatten(t, out, strict)
    elif isinstance(tree, array):
        out.append(tree)
    elif strict:
        raise ValueError("[tree_flatten] The argument should contain only arrays")
    return out


# Stands for an array in a tree kept only for its structure (``_fill`` replaces it like one).
LEAF = object()


def _fill(tree, leaves, pos, placed=None):
    """``tree`` with its arrays replaced, in order, by ``leaves[pos[0]:]`` (pos advances).
    Tuples and plain dicts are rebuilt. With ``placed`` (the arguments of a differentiated
    call), lists and dict subclasses (an ``nn.Module``) are filled in place, as MLX does, so
    that the function and its caller see one object (what the function writes there stays);
    each ``(obj, key, new, old)`` goes to ``placed`` for ``_restore``."""
    if isinstance(tree, list):
        if placed is None:
            return [_fill(t, leaves, pos, placed) for t in tree]
        for i, v in enumerate(list(tree)):
            new = _fill(v, leaves, pos, placed)
            if new is not v:
                list.__setitem__(tree, i, new)
                placed.append((tree, i, new, v))
        return tree
    if isinstance(tree, tuple):
        items = [_fill(t, leaves, pos, placed) for t in tree]
        if hasattr(tree, "_fields"):
            return type(tree)(*items)  # namedtuples keep their type
        return tuple(items) if type(tree) is tuple else type(tree)(items)  # so do tuple subclasses
    if isinstance(tree, dict):
        if type(tree) is dict or placed is None:
            return {k: _fill(v, leaves, pos, placed) for k, v in tree.items()}
        for k, v in list(tree.items()):
            new = _fill(v, leaves, pos, placed)
            if new is not v:
                dict.__setitem__(tree, k, new)
                placed.append((tree, k, new, v))
        return tree
    if isinstance(tree, array) or tree is LEAF:
        pos[0] += 1
        return leaves[pos[0] - 1]
    return tree


def _restore(placed):
    """Puts the caller's values back where the function did not overwrite them (MLX)."""
    for obj, k, new, old in reversed(placed):
        if isinstance(obj, dict):
            if dict.get(obj, k) is new:
                dict.__setitem__(obj, k, old)
        elif k < len(obj) and list.__getitem__(obj, k) is new:
            list.__setitem__(obj, k, old)


def _type_name(o):
    t = type(o)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


# --- C vectors and closures -------------------------------------------------------------


class _Vec:
    """An owned C ``mlx_vector_array`` of ``arrays`` (freed with this object)."""

    def __init__(self, arrays=()):
        self.arrays = list(arrays)
        hs = ffi.new("mlx_array[]", [a._p[0] for a in self.arrays])
        self.p = ffi.new("mlx_vector_array*", lib.mlx_vector_array_new_data(hs, len(self.arrays)))
        # Bound now: a finalizer that looks a name up on lib can run inside cffi's own type
        # parsing (a garbage collection there) and deadlock on its lock.
        self._free = lib.mlx_vector_array_free

    def list(self):
        return _arrays_of(self.p[0])

    def __del__(self):
        self._free(self.p[0])


def _arrays_of(v):
    """The arrays of the C vector ``v`` (new references; ``v`` is not freed)."""
    out = []
    for i in range(lib.mlx_vector_array_size(v)):
        p = ffi.new(_ARR_PTR)
        check(lib.mlx_vector_array_get(p, v, i))
        out.append(wrap(p))
    return out


@ffi.callback("int(*)(mlx_vector_array*, const mlx_vector_array, void*)")
def _trampoline(res, inputs, payload):
    state = ffi.from_handle(payload)
    try:
        outs = state.fn(_arrays_of(inputs))
        hs = ffi.new("mlx_array[]", [o._p[0] for o in outs])
        check(lib.mlx_vector_array_set_data(res, hs, len(outs)))
        return 0
    except BaseException as e:  # noqa: BLE001 — re-raised by the transform (``failed``)
        if state.exc is None:
            state.exc = e
        return 1


class _Closure:
    """A Python function of a list of arrays to a list of arrays, as a C ``mlx_closure``."""

    def __init__(self, fn):
        self.fn = fn
        self.exc = None
        self._self = ffi.new_handle(self)  # the payload; lives as long as this object
        self._free = lib.mlx_closure_free  # bound now, as _Vec's
        self.c = lib.mlx_closure_new_func_payload(_trampoline, self._self, ffi.NULL)
        if self.c.ctx == ffi.NULL:
            raise error()

    def failed(self):
        """The exception for a failed transform: the function's own, else the C error."""
        from ._custom import take_pending  # raised in a custom_function rule (_custom)

        pending = take_pending()
        if self.exc is None:
            self.exc = pending
        if self.exc is not None:
            lib.mlx_arm_clear_last_error()
            exc, self.exc = self.exc, None
            raise exc
        raise error()

    def __del__(self):
        self._free(self.c)


def _as_list_fn(fun, what):
    """``fun(*arrays)`` returning an array or a list/tuple of arrays, as a list of arrays."""

    def f(xs):
        out = fun(*xs)
        if isinstance(out, array):
            return [out]
        if isinstance(out, (list, tuple)) and all(isinstance(o, array) for o in out):
            return list(out)
        raise TypeError(f"[{what}] The function must return an array or a list of arrays, got {_type_name(out)}.")

    return f


def _array_list(xs, name, what):
    if isinstance(xs, array) or not isinstance(xs, (list, tuple)):
        raise TypeError(f"[{what}] {name} must be a list or tuple of arrays, got {_type_name(xs)}.")
    return [to_array(x) for x in xs]


def _pair_transform(cname, what, fun, primals, vectors):
    primals = _array_list(primals, "primals", what)
    vectors = _array_list(vectors, "cotangents" if what == "vjp" else "tangents", what)
    cl = _Closure(_as_list_fn(fun, what))
    p, v = _Vec(primals), _Vec(vectors)
    r0, r1 = _Vec(), _Vec()
    if getattr(lib, cname)(r0.p, r1.p, cl.c, p.p[0], v.p[0]):
        cl.failed()
    return r0.list(), r1.list()


def vjp(fun, primals, cotangents):
    """``(outputs, vjps)``: the outputs of ``fun(*primals)`` and the products of
    ``cotangents`` (one per output) with its Jacobian, one per primal (lists)."""
    return _pair_transform("mlx_vjp", "vjp", fun, primals, cotangents)


def jvp(fun, primals, tangents):
    """``(outputs, jvps)``: the outputs of ``fun(*primals)`` and the products of its
    Jacobian with ``tangents`` (one per primal), one per output (lists)."""
    return _pair_transform("mlx_jvp", "jvp", fun, primals, tangents)


# --- value_and_grad / grad ---------------------------------------------------------------


def _validate(argnums, argnames):
    """MLX's defaults: no argnums and no argnames means argument 0."""
    if isinstance(argnames, str):
        names = [argnames]
    else:
        names = list(argnames)
        if not all(isinstance(n, str) for n in names):
            raise TypeError("argnames must be a str or a sequence of str")
    if argnums is None:
        return ([0] if not names else []), names
    if isinstance(argnums, int) and not isinstance(argnums, bool):
        return [argnums], names
    nums = list(argnums)
    if not all(isinstance(n, int) and not isinstance(n, bool) for n in nums):
        raise TypeError("argnums must be an int or a sequence of int")
    return nums, names


def _sanitize(argnums, argnames, tag):
    if not argnums and not argnames:
        raise ValueError(f"{tag} Gradient wrt no argument requested")
    argnums = sorted(argnums)
    if argnums:
        if argnums[0] < 0:
            raise ValueError(f"{tag} Can't compute the gradient of negative argument index {argnums[0]}")
        for a, b in zip(argnums, argnums[1:]):
            if a == b:
                raise ValueError(f"{tag} Duplicate argument index {argnums[0]} is not allowed.")
    return argnums


def _check_output(out, tag, scalar_only):
    if isinstance(out, array):
        return
    if scalar_only:
        raise ValueError(f"{tag} The return value of the function whose gradient we want to compute should be a "
                         f"scalar array; but {_type_name(out)} was returned.")
    if not isinstance(out, tuple):
        raise ValueError(f"{tag} The return value of the function whose gradient we want to compute should be either a "
                         "scalar array or a tuple with the first value being a scalar array (Union[array, tuple[array, "
                         f"Any, ...]]); but {_type_name(out)} was returned.")
    if len(out) == 0:
        raise ValueError(f"{tag} The return value of the function whose gradient we want to compute should be either a "
                         "scalar array or a non-empty tuple. The first value should be a scalar array and the rest can "
                         "be anything. Instead, we got an empty tuple.")
    if not isinstance(out[0], array):
        raise ValueError(f"{tag} The return value of the function whose gradient we want to compute should be either a "
                         "scalar array or a tuple with the first value being a scalar array (Union[array, tuple[array, "
                         f"Any, ...]]); but it was a tuple with the first value being of type {_type_name(out[0])} .")


def _value_and_grad_call(fun, argnums, argnames, tag, scalar_only, args, kwargs):
    if argnums and argnums[-1] >= len(args):
        raise ValueError(f"{tag} Can't compute the gradient of argument index {argnums[-1]} because the function is "
                         f"called with only {len(args)} positional arguments.")
    for key in argnames:
        if key not in kwargs:
            have = "".join(f"{k}," for k in kwargs)
            raise ValueError(f"{tag} Can't compute the gradient of keyword argument '{key}' because the function is "
                             f"called with the following keyword arguments {{{have}}}")
    # Every array of every argument is a primal; those of the differentiated ones get gradients.
    arrays, grad_idx, counts = [], [], [0]
    wanted = set(argnums)
    for i, a in enumerate(args):
        start = len(arrays)
        _flatten(a, arrays, i in wanted)
        if i in wanted:
            grad_idx.extend(range(start, len(arrays)))
            counts.append(len(arrays) - start)
    kw_grad_keys = []
    for k, v in kwargs.items():
        start = len(arrays)
        _flatten(v, arrays, k in argnames)
        if k in argnames:
            grad_idx.extend(range(start, len(arrays)))
            counts.append(len(arrays) - start)
            kw_grad_keys.append(k)

    out_box = []

    def traced(xs):
        pos, placed = [0], []
        new_args = _fill(args, xs, pos, placed)
        new_kwargs = _fill(kwargs, xs, pos, placed)
        try:
            out = fun(*new_args, **new_kwargs)
        finally:
            _restore(placed)
        _check_output(out, tag, scalar_only)
        out_box[:] = [out]
        return _flatten(out, [], False)

    cl = _Closure(traced)
    vg = ffi.new("mlx_closure_value_and_grad*", lib.mlx_closure_value_and_grad_new())
    try:
        nums = ffi.new("int[]", grad_idx)
        if lib.mlx_value_and_grad(vg, cl.c, nums, len(grad_idx)):
            cl.failed()
        inputs, vals, grads = _Vec(arrays), _Vec(), _Vec()
        if lib.mlx_closure_value_and_grad_apply(vals.p, grads.p, vg[0], inputs.p[0]):
            cl.failed()
    finally:
        lib.mlx_closure_value_and_grad_free(vg[0])
    values, gradients = vals.list(), grads.list()

    # Gradients back in the shape of their arguments (MLX: one argnum → its tree; several →
    # a tuple; argnames → (positional, {name: tree})).
    offsets = [0]
    for c in counts[1:]:
        offsets.append(offsets[-1] + c)
    trees = []
    for j, src in enumerate([args[i] for i in argnums] + [kwargs[k] for k in kw_grad_keys]):
        trees.append(_fill(src, gradients[offsets[j]:offsets[j + 1]], [0]))
    pos_trees = trees[:len(argnums)]
    if len(argnums) == 1:
        positional = pos_trees[0]
    elif len(argnums) > 1:
        positional = tuple(pos_trees)
    else:
        positional = None
    if argnames:
        grads_out = (positional, dict(zip(kw_grad_keys, trees[len(argnums):])))
    else:
        grads_out = positional
    return _fill(out_box[0], values, [0]), grads_out


def value_and_grad(fun, argnums=None, argnames=[]):  # noqa: B006 — MLX's signature
    """A function returning ``(fun(*args, **kwargs), gradients)``; the gradients of the
    scalar output (or of the first element of a returned tuple; the rest are returned as
    they are) with respect to the arguments ``argnums`` (default 0) and ``argnames``."""
    nums, names = _validate(argnums, argnames)
    nums = _sanitize(nums, names, "[value_and_grad]")

    @functools.wraps(fun)
    def wrapped(*args, **kwargs):
        return _value_and_grad_call(fun, nums, names, "[value_and_grad]", False, args, kwargs)

    return wrapped


def grad(fun, argnums=None, argnames=[]):  # noqa: B006 — MLX's signature
    """A function returning the gradients of the scalar ``fun`` with respect to the arguments
    ``argnums`` (default 0) and ``argnames``, in their shape."""
    nums, names = _validate(argnums, argnames)
    nums = _sanitize(nums, names, "[grad]")

    @functools.wraps(fun)
    def wrapped(*args, **kwargs):
        return _value_and_grad_call(fun, nums, names, "[grad]", True, args, kwargs)[1]

    return wrapped


# --- vmap --------------------------------------------------------------------------------


_NOT_PREFIX = "[tree_map] Additional input tree is not a valid prefix of the first tree."


def _axes_tree(tree, axes, output):
    """The flat vectorization axis of every array of ``tree`` (-1: not mapped), with ``axes``
    a prefix tree of ints / None (MLX's ``axes_to_flat_tree``)."""
    flat, saw_tuple = [], [False]

    def axis_of(x, ax):
        if isinstance(ax, bool) or not isinstance(ax, int):
            raise ValueError("[vmap] axis must be int or None.")
        if ax < 0:
            ax += x.ndim + output
        if ax < 0 or ax >= x.ndim + output:
            where = " output " if output else " "
            raise IndexError(f"[vmap] Invalid{where}vectorization axis {ax} for array with shape "
                             f"({','.join(str(d) for d in x.shape)})")
        return ax

    def visit(t, ax):
        if isinstance(t, (list, tuple)):
            if isinstance(ax, (list, tuple)):
                if len(ax) != len(t):
                    raise ValueError(_NOT_PREFIX)
                for x, a in zip(t, ax):
                    visit(x, a)
            elif isinstance(ax, dict):
                raise ValueError(_NOT_PREFIX)
            else:
                for x in t:
                    visit(x, ax)
        elif isinstance(t, dict):
            if isinstance(ax, dict):
                for k, x in t.items():
                    if k not in ax:
                        raise ValueError(_NOT_PREFIX)
                    visit(x, ax[k])
            elif isinstance(ax, (list, tuple)):
                raise ValueError(_NOT_PREFIX)
            else:
                for x in t.values():
                    visit(x, ax)
        elif isinstance(t, array):
            if ax is None:
                flat.append(-1)
            elif isinstance(ax, tuple):
                saw_tuple[0] = True
                if len(ax) == 1 and ax[0] is None:
                    flat.append(-1)
                elif len(ax) == 1:
                    flat.append(axis_of(t, ax[0]))
                else:
                    raise ValueError("[vmap] axis must be int or None.")
            else:
                flat.append(axis_of(t, ax))
        else:
            raise ValueError("[vmap] The arguments should contain only arrays")

    visit(tree, axes)
    if saw_tuple[0] and not isinstance(tree, array):
        raise ValueError("[vmap] axis must be int or None.")
    return flat


_vmap_depth = threading.local()


def vmapping():
    """Whether this thread is tracing a function under ``vmap`` (its arrays then stand for
    one example: their values must not steer the graph)."""
    return getattr(_vmap_depth, "n", 0) > 0


def vmap(fun, in_axes=0, out_axes=0):
    """``fun`` vectorized over axis ``in_axes`` of its array arguments (a prefix tree of the
    arguments; None: not mapped); the mapped axis of the outputs goes to ``out_axes``."""
    from . import moveaxis

    if in_axes is None:  # MLX 0.32 refuses it in the signature (a TypeError)
        raise TypeError("vmap(): incompatible function arguments: in_axes must be an int, a tuple, a list or a dict")

    @functools.wraps(fun)
    def wrapped(*args):
        inputs = _flatten(args, [], True)
        flat_in = _axes_tree(args[0] if len(args) == 1 else args, in_axes, False)
        out_box = []

        def traced(xs):
            _vmap_depth.n = getattr(_vmap_depth, "n", 0) + 1
            try:
                out = fun(*_fill(args, xs, [0]))
            finally:
                _vmap_depth.n -= 1
            out_box[:] = [out]
            return _flatten(out, [], True)

        cl = _Closure(traced)
        vin, res = _Vec(inputs), _Vec()
        # Every output gets the mapped axis first; out_axes (resolved against the traced
        # outputs, as MLX does) then moves it.
        if lib.mlx_arm_vmap(res.p, cl.c, vin.p[0], ffi.new("int[]", flat_in), len(flat_in), ffi.NULL, 0):
            cl.failed()
        outs = res.list()
        flat_out = _axes_tree(out_box[0], out_axes, True)
        outs = [o if ax == 0 else moveaxis(o, 0, ax) for o, ax in zip(outs, flat_out)]
        return _fill(out_box[0], outs, [0])

    return wrapped


def stop_gradient(a, /, *, stream=None):
    """``a`` unchanged, but the transforms treat it as a constant (no gradient flows back)."""
    a = to_array(a)
    p = ffi.new(_ARR_PTR)
    check(lib.mlx_stop_gradient(p, a._p[0], stream_handle(stream)))
    return wrap(p)


def _has(cname):
    """Whether the library exports ``cname`` (``exported`` misses declarations whose
    function-pointer parameters span lines, as closure.h's do)."""
    try:
        getattr(lib, cname)
        return True
    except AttributeError:
        return False


def install(g):
    """Adds the transforms to ``mlx.core`` when the library exports what they need."""
    if not all(_has(n) for n in ("mlx_closure_new_func_payload", "mlx_vjp", "mlx_jvp", "mlx_value_and_grad",
                                     "mlx_closure_value_and_grad_apply")):
        return
    g.update(vjp=vjp, jvp=jvp, value_and_grad=value_and_grad, grad=grad)
    if _has("mlx_arm_vmap"):
        g["vmap"] = vmap
    if _has("mlx_stop_gradient"):
        g["stop_gradient"] = stop_gradient
    if _has("mlx_arm_export_to_dot_string"):
        g["export_to_dot"] = export_to_dot


# --- export_to_dot ---------------------------------------------------------------------


def export_to_dot(file, *args, **kwargs):
    """Writes the graph computing the arrays of ``args`` and ``kwargs`` (trees of arrays) to
    ``file`` (a path, or an object with ``write``) as Graphviz dot text. The keyword names
    name their arrays; other arrays are named A, B, ... (as MLX's ``export_to_dot``)."""
    arrays = _flatten([args, kwargs], [], True)
    namer = lib.mlx_node_namer_new()
    st = ffi.new("mlx_string*")
    st[0] = lib.mlx_string_new()
    try:
        for k, v in kwargs.items():
            if isinstance(v, array):
                check(lib.mlx_node_namer_set_name(namer, v._p[0], str(k).encode("utf-8")))
        vec = _Vec(arrays)
        check(lib.mlx_arm_export_to_dot_string(st, namer, vec.p[0]))
        text = ffi.string(lib.mlx_string_data(st[0])).decode("utf-8")
    finally:
        lib.mlx_string_free(st[0])
        lib.mlx_node_namer_free(namer)
    if isinstance(file, str):
        with open(file, "w") as f:
            f.write(text)
    elif hasattr(file, "write"):
        file.write(text)
    else:
        raise ValueError("export_to_dot accepts file-like objects or strings to be used as filenames")
