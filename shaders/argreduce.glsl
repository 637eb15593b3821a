// The order argmax / argmin pick by (argreduce.comp, argreduce_split.comp): whether (x, i) goes
// before (y, j) — a NaN first, then the extreme value (op 0: the largest, 1: the smallest),
// then the lower index. Expects the push-constant block `p` with `op`.
bool before(float x, uint i, float y, uint j) {
    bool xn = isnan(x), yn = isnan(y);
    if (xn || yn) return xn && (!yn || i < j);
    if (x == y) return i < j;
    return p.op == 0 ? x > y : x < y;
}
