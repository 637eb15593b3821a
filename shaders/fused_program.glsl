// core's FusedOp program (fused.comp's push constants n_in, single, off, step; inputs a0..a3)
// at element i: every step's value rounded to T, as the unfused kernels store it. Shared by
// fused.comp and ggml_mv_sub_fx.comp (which computes its x this way).
float fused_at(uint i) {
    float r[MAX_IN + MAX_STEPS];
    // An input of one element (bit k of `single`) is read at its offset for every i.
    uint e[MAX_IN];
    for (uint k = 0; k < MAX_IN; ++k) e[k] = p.off[k] + (((p.single >> k) & 1u) != 0u ? 0u : i);
    r[0] = float(a0[e[0]]);
    if (p.n_in > 1) r[1] = float(a1[e[1]]);
    if (p.n_in > 2) r[2] = float(a2[e[2]]);
    if (p.n_in > 3) r[3] = float(a3[e[3]]);
    uint last = 0;
    for (uint s = 0; s < p.n_steps; ++s) {
        uint w = p.step[s];
        uint code = w & 0xffu;
        float x = r[(w >> 16) & 0xffu];
        float v = ((w >> 8) & 1u) != 0u ? binary_op(code, x, r[w >> 24]) : unary_op(code, x);
        last = p.n_in + s;
        r[last] = float(T(v));
    }
    return r[last];
}
