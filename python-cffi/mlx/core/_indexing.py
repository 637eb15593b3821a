"""Indexing of ``mlx.core.array``: ``a[idx]``, ``a[idx] = v`` and ``a.at[idx].add(v)`` …

Two paths, both built from C ops only:
- basic indexing (ints, slices, ``None``, ``...``) and a single integer-array index is a
  strided slice, a ``take`` along one axis and a reshape — no copy of the data is needed;
- everything else (several integer arrays, and every assignment) goes through *positions*:
  an integer array shaped like the result of ``a[idx]`` holding, for each element, its linear
  offset in ``a``. Reading is then ``take(a, positions)``, assignment is a scatter into the
  flattened array, and ``.at[idx].add`` … are ``scatter_add`` … (duplicates accumulate).
  The positions follow numpy's rules, which MLX shares: the broadcast shape of the array
  indices goes where they stand when they are adjacent, in front otherwise.

(An index made only of Python ints, slices, ``None`` and ``...`` takes the fast path in
``_basic_index`` first: one ``mlx_slice`` / ``mlx_slice_update``.)

Boolean masks are accepted by assignment only (as real MLX: reading with a mask raises
ValueError); the mask's ``True`` positions are found on the host.
"""
from . import _dtypes as D
from ._array import _ARR_PTR, _INTS, _Ctx, _newp, array, rebind, to_array, wrap
from ._ffi import check, ffi, lib



def _c(cfn, *args):
    p = _newp(_ARR_PTR)
    check(cfn(p, *args))
    return wrap(p)


def _reshape(a, shape):
    shape = [int(s) for s in shape]
    return _c(lib.mlx_reshape, a._p[0], _newp(_INTS, shape), len(shape), _Ctx.stream)


def _broadcast(a, shape):
    shape = [int(s) for s in shape]
    return _c(lib.mlx_broadcast_to, a._p[0], ffi.new("int[]", shape), len(shape), _Ctx.stream)


def _astype(a, dtype):
    return a if a.dtype == dtype else _c(lib.mlx_astype, a._p[0], dtype.code, _Ctx.stream)


def _binop(cfn, a, b):
    return _c(cfn, a._p[0], b._p[0], _Ctx.stream)


def _arange(start, stop, step, dtype):
    return _c(lib.mlx_arange, float(start), float(stop), float(step), dtype.code, _Ctx.stream)


def expand_index(idx, ndim):
    """``idx`` as a list without Ellipsis (expanded to full slices); checks the index count."""
    if not isinstance(idx, tuple):
        idx = (idx,)
    consumed = sum(1 for i in idx if i is not None and i is not Ellipsis)
    n_ell = sum(1 for i in idx if i is Ellipsis)
    if n_ell > 1:
        raise ValueError("An index can only have a single ellipsis (...)")
    if consumed > ndim:
        if ndim == 0:  # MLX's wording and type for a 0-d array
            raise ValueError("too many indices for array: array is 0-dimensional")
        raise ValueError(f"Too many indices for array with {ndim} dimensions.")
    out = []
    for i in idx:
        _check_32bit(i)
        if i is Ellipsis:
            out.extend([slice(None)] * (ndim - consumed))
        else:
            out.append(i)
    if not n_ell:
        out.extend([slice(None)] * (ndim - consumed))
    return out


_I32 = (-(2 ** 31), 2 ** 31 - 1)


def _check_32bit(i):
    """MLX indexes with 32-bit integers: larger ints and slice bounds are a ValueError."""
    if isinstance(i, slice):
        for v in (i.start, i.stop, i.step):
            if v is not None and is_int(v) and not _I32[0] <= int(v) <= _I32[1]:
                raise ValueError("Slice indices must be 32-bit integers.")
    elif is_int(i) and not _I32[0] <= int(i) <= _I32[1]:
        raise ValueError("Indices must be 32-bit integers.")


def is_int(i):
    if isinstance(i, bool):
        return False
    if isinstance(i, int):
        return True
    m = type(i).__module__
    return (m == "numpy" or m.startswith("numpy.")) and hasattr(i, "__index__") and getattr(i, "ndim", 0) == 0


def is_array_index(i):
    if isinstance(i, (array, list)):
        return True
    m = type(i).__module__
    return (m == "numpy" or m.startswith("numpy.")) and getattr(i, "ndim", 0) > 0


def _index_array(i, n):
    """An integer index array with negative entries wrapped (``i + n`` where ``i < 0``)."""
    ind = to_array(i)
    if ind.dtype == D.bool_:
        raise ValueError("boolean indices are not yet supported")
    if not D.is_integer(ind.dtype):
        raise ValueError("Cannot index mlx array using the given type.")
    if D.issubdtype(ind.dtype, D.DtypeCategory.signedinteger):
        zero = _astype(to_array(0), ind.dtype)
        neg = _binop(lib.mlx_less, ind, zero)
        wrapped = _binop(lib.mlx_add, ind, _astype(to_array(n), ind.dtype))
        ind = _c(lib.mlx_where, neg._p[0], wrapped._p[0], ind._p[0], _Ctx.stream)
    return ind


def _check_items(items):
    for i in items:
        if isinstance(i, bool) or (isinstance(i, array) and i.dtype == D.bool_):
            raise ValueError("boolean indices are not yet supported")
        if not (i is None or isinstance(i, slice) or is_int(i) or is_array_index(i)):
            raise ValueError("Cannot index mlx array using the given type.")


def _slice_bounds(sl, n):
    b, e, s = sl.indices(n)
    return b, e, s, len(range(b, e, s))


def positions(shape, items):
    """The int array of linear offsets (into ``shape``, row-major) that ``a[items]`` selects,
    shaped like ``a[items]`` (``items``: the output of ``expand_index``)."""
    _check_items(items)
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= n
    strides.reverse()
    pdt = D.int32 if acc < 2 ** 31 else D.int64
    # numpy's rule: once an integer array is present, plain ints are advanced indices too
    # (0-d ones) — they count for adjacency.
    has_arr = any(is_array_index(i) for i in items)
    adv_slots = [k for k, i in enumerate(items) if is_array_index(i) or (has_arr and is_int(i))]
    adjacent = bool(adv_slots) and adv_slots == list(range(adv_slots[0], adv_slots[-1] + 1))
    # Broadcast the advanced indices (numpy rule) and find their block's shape.
    adv, axis = {}, 0
    for k, i in enumerate(items):
        if i is None:
            continue
        if k in adv_slots:
            if is_int(i) and not -shape[axis] <= int(i) < shape[axis]:
                raise IndexError(f"index {int(i)} is out of bounds for axis {axis} with size {shape[axis]}")
            adv[k] = (_index_array(i, shape[axis]), axis)
        axis += 1
    adv_shape = ()
    if adv:
        hs = [a.shape for a, _ in adv.values()]
        nd = max(len(h) for h in hs)
        out = []
        for j in range(nd):
            dims = {h[j - nd + len(h)] for h in hs if j - nd + len(h) >= 0} - {1}
            if len(dims) > 1:
                raise ValueError(f"Cannot broadcast index arrays of shapes {' '.join(str(h) for h in hs)}.")
            out.append(dims.pop() if dims else 1)
        adv_shape = tuple(out)
    # Result layout: a list of (kind, size) per output axis.
    out_axes, parts, axis, adv_at = [], [], 0, None
    if adv and not adjacent:
        adv_at = 0
        out_axes.extend(adv_shape)
    for k, i in enumerate(items):
        if i is None:
            out_axes.append(1)
            continue
        n = shape[axis]
        if k in adv:
            if adjacent and adv_at is None:
                adv_at = len(out_axes)
                out_axes.extend(adv_shape)
            parts.append(("adv", adv[k][0], strides[axis]))
        elif isinstance(i, slice):
            b, e, s, ln = _slice_bounds(i, n)
            parts.append(("slice", (b, s, ln, len(out_axes)), strides[axis]))
            out_axes.append(ln)
        else:
            v = int(i)
            if not -n <= v < n:
                raise IndexError(f"index {v} is out of bounds for axis {axis} with size {n}")
            parts.append(("int", v % n, strides[axis]))
        axis += 1
    rank = len(out_axes)
    pos = to_array(0, pdt)
    const = 0
    for kind, val, stride in parts:
        if kind == "int":
            const += val * stride
        elif kind == "slice":
            b, s, ln, at = val
            if ln and stride:
                r = _arange(b * stride, b * stride + ln * s * stride, s * stride, pdt)
            else:
                # An array with a size-0 axis has stride 0 on the others: every position is 0
                # (and arange cannot step by 0).
                r = _binop(lib.mlx_multiply, _arange(0, ln, 1, pdt), to_array(0, pdt))
            sh = [1] * rank
            sh[at] = ln
            pos = _binop(lib.mlx_add, pos, _reshape(r, sh))
        else:
            ind = _astype(val, pdt)
            ind = _binop(lib.mlx_multiply, ind, to_array(stride, pdt)) if stride != 1 else ind
            sh = [1] * rank
            lead = len(adv_shape) - ind.ndim
            for j, d in enumerate(ind.shape):
                sh[adv_at + lead + j] = d
            pos = _binop(lib.mlx_add, pos, _reshape(ind, sh) if rank else ind)
    if const:
        pos = _binop(lib.mlx_add, pos, to_array(const, pdt))
    return _broadcast(pos, out_axes) if tuple(pos.shape) != tuple(out_axes) else pos


def _flat(a):
    return _reshape(a, [a.size])


def getitem_general(a, items):
    """``a[items]`` through positions (several integer arrays)."""
    pos = positions(a.shape, items)
    flat = _flat(a)  # named: a temporary's handle would be freed before the call
    if pos.size == 0:
        # Nothing is read: an empty result of the index's shape, also when `a` itself is empty
        # (where take would refuse every position).
        return _reshape(_c(lib.mlx_astype, flat._p[0], a.dtype.code, _Ctx.stream)[0:0], list(pos.shape))
    return _c(lib.mlx_take, flat._p[0], pos._p[0], _Ctx.stream)


def _mask_to_items(a, mask_obj):
    """A boolean mask index as integer-array items (its True positions), as MLX checks it."""
    m = to_array(mask_obj)
    if m.ndim == 0:
        return None if bool(m.item()) else False
    shape = a.shape
    if m.ndim > len(shape) or tuple(shape[:m.ndim]) != tuple(m.shape):
        raise ValueError(f"boolean index of shape {m.shape} does not match the array's shape {shape}.")
    flat = m.tolist()
    coords = [[] for _ in range(m.ndim)]

    def walk(v, prefix):
        if isinstance(v, list):
            for j, x in enumerate(v):
                walk(x, prefix + [j])
        elif v:
            for d, c in enumerate(prefix):
                coords[d].append(c)

    walk(flat, [])
    return [array(c, D.int32) for c in coords]


def _is_mask(i):
    if isinstance(i, bool):
        return True
    if isinstance(i, array):
        return i.dtype == D.bool_
    if isinstance(i, list):
        return bool(i) and all(isinstance(x, bool) for x in _leaves(i))
    m = type(i).__module__
    return (m == "numpy" or m.startswith("numpy.")) and getattr(getattr(i, "dtype", None), "kind", "") == "b"


def _leaves(v):
    for x in v:
        if isinstance(x, list):
            yield from _leaves(x)
        else:
            yield x


def _update_items(a, idx):
    """``idx`` of an assignment as items for ``positions``; None means "nothing selected"."""
    if _is_mask(idx) and not isinstance(idx, tuple):
        items = _mask_to_items(a, idx)
        if items is False:
            return None
        if items is None:
            return expand_index((), a.ndim)
        if items and items[0].size == 0:
            return None
        return expand_index(tuple(items), a.ndim)
    if isinstance(idx, tuple) and any(_is_mask(i) for i in idx):
        raise ValueError("boolean masks are only supported as the whole index in mlx-arm")
    return expand_index(idx, a.ndim)


def _updates_for(a, pos, value):
    """``value`` cast to ``a``'s dtype and broadcast to ``pos``'s shape (leading 1s dropped)."""
    v = to_array(value) if isinstance(value, array) else _weak(value, a.dtype)
    v = _astype(v, a.dtype)
    sh = list(v.shape)
    while len(sh) > pos.ndim and sh[0] == 1:
        sh.pop(0)
    if len(sh) != v.ndim:
        v = _reshape(v, sh)
    if len(sh) > pos.ndim:
        raise ValueError(f"Cannot broadcast array of shape {tuple(v.shape)} into shape {tuple(pos.shape)}.")
    return _broadcast(v, pos.shape)


def _weak(value, dtype):
    from ._array import weak_scalar

    w = weak_scalar(value, dtype)
    return w if w is not None else to_array(value)


def scatter_update(a, idx, value, cfn=None):
    """A new array: ``a`` with the positions of ``idx`` set from ``value`` by ``cfn``
    (``mlx_scatter_single`` by default; ``mlx_scatter_add_single`` … for ``.at``)."""
    items = _update_items(a, idx)
    if items is None:
        return a
    pos = positions(a.shape, items)
    if pos.size == 0:
        return a
    upd = _updates_for(a, pos, value)
    n = pos.size
    flat_pos = _reshape(pos, [n])
    flat_upd = _reshape(upd, [n, 1])
    flat = _flat(a)  # named: a temporary's handle would be freed before the call
    out = _c(cfn or lib.mlx_scatter_single, flat._p[0], flat_pos._p[0], flat_upd._p[0], 0, _Ctx.stream)
    return _reshape(out, a.shape)


def _masked_assign_in_graph(a, mask, value):
    """``a[mask] = value`` built from graph ops only, for ``vmap``: there the mask is one
    example's stand-in, so its values must not be read. The k-th selected position takes
    element k of the flattened ``value`` (a 0-d value fills every one), as MLX's masked
    scatter. (MLX raises when ``value`` has fewer elements than the mask selects; under
    ``vmap`` that cannot be checked, and the last element repeats.)"""
    from . import cumsum, minimum, reshape, take, where

    v = to_array(value) if isinstance(value, array) else _weak(value, a.dtype)
    v = _astype(v, a.dtype)
    if v.ndim == 0:
        return where(mask, v, a)
    k = cumsum(_astype(reshape(mask, [-1]), D.int32)) - 1
    k = minimum(where(k < 0, 0, k), v.size - 1)
    return where(mask, reshape(take(reshape(v, [-1]), k), list(a.shape)), a)


def setitem(self, idx, value):
    from ._transforms import vmapping

    whole_mask = isinstance(idx, array) and idx.dtype == D.bool_ and idx.shape == self.shape
    # More values than selected positions: MLX takes the first ones, in order.
    longer = whole_mask and isinstance(value, array) and value.ndim == 1 and value.size > idx.sum().item()
    if whole_mask and (longer or vmapping()):
        r = _masked_assign_in_graph(self, idx, value)  # named: a temporary's handle would be freed
        rebind(self, r)
        return
    r = scatter_update(self, idx, value)
    if r is not self:
        rebind(self, r)


class ArrayAt:
    """``a.at``: ``a.at[idx].add(v)`` … return new arrays; repeated indices accumulate."""

    __slots__ = ("_a", "_idx")

    def __init__(self, a, idx=None):
        self._a, self._idx = a, idx

    def __getitem__(self, idx):
        return ArrayAt(self._a, (idx,))

    def _apply(self, cfn, v):
        if self._idx is None:
            raise ValueError("Must give indices to array.at (e.g. `x.at[0].add(4)`).")
        return scatter_update(self._a, self._idx[0], v, cfn)

    def add(self, value):
        return self._apply(lib.mlx_scatter_add_single, value)

    def subtract(self, value):
        return self._apply(lib.mlx_scatter_add_single, -_updates_like(self._a, value))

    def multiply(self, value):
        return self._apply(lib.mlx_scatter_prod_single, value)

    def divide(self, value):
        v = _updates_like(self._a, value)
        one = _astype(to_array(1), v.dtype)
        return self._apply(lib.mlx_scatter_prod_single, _binop(lib.mlx_divide, one, v))

    def maximum(self, value):
        return self._apply(lib.mlx_scatter_max_single, value)

    def minimum(self, value):
        return self._apply(lib.mlx_scatter_min_single, value)


def _updates_like(a, value):
    return value if isinstance(value, array) else _weak(value, a.dtype)
