"""``mx.einsum_path``: the contraction order MLX's einsum would pick (a greedy search as in
numpy / opt_einsum: at each step the pair whose contraction removes the most elements, ties
to the cheaper one; outer products only when nothing else is left) and MLX's summary text.

Only shapes are read, so this lives in Python; it follows MLX 0.32's rules and messages
(mlx/einsum.cpp) so that paths, FLOP counts and errors are MLX's."""
import string

_FN = "einsum_path"


def _err(msg):
    return ValueError(f"[{_FN}] {msg}")


def _parse(subscripts):
    s = subscripts.replace(" ", "")
    if "->" in s:
        lhs, rhs = s.split("->", 1)
    else:
        lhs, counts, rhs = s, {}, ""
        for c in s:
            if c == ",":
                continue
            if c == "." and not rhs:
                rhs += "..."
                continue
            counts[c] = counts.get(c, 0) + 1
        rhs = "".join(sorted(rhs + "".join(c for c, n in counts.items() if n == 1)))
    ins = lhs.split(",")
    if ins and ins[-1] == "":  # getline drops a trailing empty token
        ins.pop()
    return ins, rhs


def _expand(sub, ndim, remaining, state, idx):
    have, before, after, i = False, 0, 0, 0
    while i < len(sub):
        c = sub[i]
        if not c.isalpha():
            if i + 2 >= len(sub) or sub[i:i + 3] != "...":
                raise _err(f"Subscripts must be letters, but got '{c}'.")
            if have:
                raise _err(f"Only one ellipsis per subscript is allowed but found more in '{sub}'.")
            have, i = True, i + 3
            continue
        if have:
            after += 1
        else:
            before += 1
        i += 1
    if not have:
        return sub
    if ndim is not None:
        n = ndim - before - after
        if n < 0:
            raise _err(f"Operand {idx} has insufficient dimensions for subscript '{sub}'. The ellipsis requires at "
                       f"least {before + after} dimensions but the operand has {ndim} dimensions.")
        state[0] = max(state[0], n)
    else:
        n = state[0]
    fill = remaining[len(remaining) - n:] if n else ""
    return sub[:before] + fill + sub[before + 3:]


def _size(term, dims):
    out = 1
    for c in term:
        out *= dims[c]
    return out


def _flops(term, inner, num_terms, dims):
    return _size(term, dims) * (max(1, num_terms - 1) + (1 if inner else 0))


def _cost_and_scaling(inputs, output, dims):
    con = set().union(*inputs)
    return _flops(con, bool(con - output), len(inputs), dims), len(con)


def _greedy(inputs, output, dims, cost_limit, memory_limit):
    pairs = [(i, j) for i in range(len(inputs)) for j in range(i + 1, len(inputs))]
    path, cands, path_cost, scaling = [], [], 0, 0
    for _ in range(len(inputs) - 1):
        def add(p1, p2):
            con = inputs[p1] | inputs[p2]
            new = set()
            for i, t in enumerate(inputs):
                if i not in (p1, p2):
                    new |= t & con
            new |= output & con
            new_size = _size(new, dims)
            if new_size > memory_limit:
                return
            removed = _size(inputs[p1], dims) + _size(inputs[p2], dims) - new_size
            cost = _flops(con, len(con) > len(new), 2, dims)
            if path_cost + cost > cost_limit:
                return
            cands.append([removed, cost, new, len(con), p1, p2])

        for p1, p2 in pairs:
            if inputs[p1] & inputs[p2]:  # outer products are left for later
                add(p1, p2)
        if not cands:
            for p1, p2 in pairs:
                add(p1, p2)
        if not cands:
            cost, sc = _cost_and_scaling(inputs, output, dims)
            path.append(tuple(range(len(inputs))))
            path_cost += cost
            scaling = max(scaling, sc)
            break
        best = cands[0]
        for c in cands[1:]:
            if c[0] > best[0] or (c[0] == best[0] and c[1] < best[1]):
                best = c
        removed, cost, new, ndims, x, y = best
        scaling = max(scaling, ndims)
        path.append((x, y))
        del inputs[y]
        del inputs[x]
        inputs.append(new)
        kept = []
        for c in cands:
            if c[4] in (x, y) or c[5] in (x, y):
                continue
            c[4] -= (c[4] > x) + (c[4] > y)
            c[5] -= (c[5] > x) + (c[5] > y)
            kept.append(c)
        pairs = [(i, len(inputs) - 1) for i in range(len(inputs) - 1)]
        path_cost += cost
        cands = kept
    return path, path_cost, scaling


def einsum_path(subscripts, *operands):
    """``(path, text)``: the contraction order as a list of position tuples, and MLX's summary
    (naive and optimized scaling and FLOP counts)."""
    if not isinstance(subscripts, str):
        raise TypeError(f"einsum_path(): subscripts must be a str, got {type(subscripts).__name__}")
    if not operands:
        raise _err("At least one operand is required.")
    from ._array import to_array

    shapes = [tuple(o.shape if hasattr(o, "shape") else to_array(o).shape) for o in operands]
    ins, out = _parse(subscripts)
    if len(ins) != len(operands):
        raise _err(f"Number of operands, {len(operands)}, does not match number of input subscripts, {len(ins)}")
    used = set(subscripts)
    remaining = "".join(c for c in string.ascii_lowercase + string.ascii_uppercase if c not in used)
    state = [0]
    ins = [_expand(s, len(shp), remaining, state, i) for i, (s, shp) in enumerate(zip(ins, shapes))]
    out = _expand(out, None, remaining, state, -1)
    if len(set(out)) != len(out):
        raise _err("Repeat indices not allowed in output.")
    dims = {}
    for i, (s, shp) in enumerate(zip(ins, shapes)):
        if len(s) != len(shp):
            raise _err(f"Invalid number of subscripts {len(s)} for input {i} with {len(shp)} dimensions.")
        local = {}
        for c, d in zip(s, shp):
            if local.setdefault(c, d) != d:
                raise _err(f"Dimensions of repeated subscripts do not have the same size ({local[c]} != {d}).")
        for j, (c, d) in enumerate(zip(s, shp)):
            have = dims.setdefault(c, d)
            if d != 1 and have != 1 and have != d:
                shape = "(" + ",".join(str(x) for x in shp) + ")"
                raise _err(f"Cannot broadcast dimension {j} of input {i} with shape {shape} to size {have}.")
            dims[c] = max(have, d)
    max_size = max([_size(out, dims)] + [_size(s, dims) for s in ins])
    sets, oset = [set(s) for s in ins], set(out)
    naive_cost, naive_scaling = _cost_and_scaling(sets, oset, dims)
    if len(sets) <= 2:
        path, opt_cost, opt_scaling = [tuple(range(len(sets)))], naive_cost, naive_scaling
    else:
        path, opt_cost, opt_scaling = _greedy(sets, oset, dims, naive_cost, max_size)
    text = (f"  Complete contraction:  {subscripts}\n"
            f"         Naive scaling:  {naive_scaling}\n"
            f"     Optimized scaling:  {opt_scaling}\n"
            f"      Naive FLOP count:  {naive_cost}\n"
            f"  Optimized FLOP count:  {opt_cost}\n")
    return path, text
