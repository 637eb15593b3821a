#version 450
// Scaled dot-product attention split over the keys ("flash decoding"), for few query rows and
// long key sequences (a decode step): one workgroup per (query row, chunk of 256 keys) instead
// of one per row, so a row's keys are read by many workgroups at once. Two phases, one
// dispatch each (`phase`):
//  0. each workgroup scores its chunk (q·k, mask, causal as sdpa.comp, kept in shared memory),
//     takes the chunk's max m and the sum l of exp(x - m), and writes m, l and the
//     unnormalized Σ_j exp(x_j - m) v[j, :] to its slot of `scr` (dv + 2 floats);
//  1. one workgroup per row combines the chunks: with M the largest m,
//     out = Σ_c exp(m_c - M) acc_c / Σ_c exp(m_c - M) l_c.
// Operands, strides and push constants as sdpa.comp, plus `splits` (chunks per row) and
// `phase`. Accumulates in float32 (scores rounded to T as sdpa.comp rounds them).
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 0) readonly buffer Q { T q[]; };
layout(std430, set = 0, binding = 1) readonly buffer K { T k[]; };
layout(std430, set = 0, binding = 2) readonly buffer V { T v[]; };
layout(std430, set = 0, binding = 3) readonly buffer M { T msk[]; };
layout(std430, set = 0, binding = 4) buffer S { float scr[]; };
layout(std430, set = 0, binding = 5) writeonly buffer O { T o[]; };
layout(push_constant) uniform P {
    uint rows; uint row_base; uint hq; uint l_len; uint s_len; uint dk; uint dv; uint reps;
    float scale; uint causal; float lowest;
    int off_q; int qs_b; int qs_h; int qs_l;
    int off_k; int ks_b; int ks_h; int ks_s;
    int off_v; int vs_b; int vs_h; int vs_s;
    uint has_mask; int off_m; int ms_b; int ms_h; int ms_l; int ms_s;
    uint splits; uint phase;
} p;
const uint CHUNK = 256;
shared float qs[256];
shared float red[256];
shared float ps[CHUNK];

float rt(float x) { return float(T(x)); }
#define NEG_INF uintBitsToFloat(0xff800000u)

// Reduces `x` over the workgroup with max (op 0) or sum (op 1); every invocation gets it.
float group_reduce(float x, uint op) {
    uint t = gl_LocalInvocationID.x;
    red[t] = x;
    barrier();
    for (uint s = 128; s > 0; s >>= 1) {
        if (t < s) red[t] = op == 0 ? max(red[t], red[t + s]) : red[t] + red[t + s];
        barrier();
    }
    float r = red[0];
    barrier();
    return r;
}

// Phase 0: the partial result of chunk `c` of `row`.
void partial(uint row, uint c) {
    uint t = gl_LocalInvocationID.x;
    uint bh = row / p.l_len;
    int i = int(row % p.l_len);
    int bi = int(bh / p.hq);
    int h = int(bh % p.hq);
    int kvh = h / int(p.reps);
    int qb = p.off_q + bi * p.qs_b + h * p.qs_h + i * p.qs_l;
    int kb = p.off_k + bi * p.ks_b + kvh * p.ks_h;
    int vb = p.off_v + bi * p.vs_b + kvh * p.vs_h;
    int mb = p.off_m + bi * p.ms_b + h * p.ms_h + i * p.ms_l;
    float sc = rt(p.scale);
    for (uint d = t; d < p.dk; d += 256) qs[d] = rt(sc * float(q[qb + int(d)]));
    barrier();

    uint j0 = c * CHUNK;
    uint n = min(CHUNK, p.s_len - j0);
    int last = i + int(p.s_len) - int(p.l_len);  // causal: keys j <= last are seen
    float x = NEG_INF;
    if (t < n) {
        uint j = j0 + t;
        int kr = kb + int(j) * p.ks_s;
        float dot = 0.0;
        for (uint d = 0; d < p.dk; ++d) dot += qs[d] * float(k[kr + int(d)]);
        x = rt(dot);
        if (p.has_mask != 0) x = rt(x + float(msk[mb + int(j) * p.ms_s]));
        if (p.causal != 0 && int(j) > last) x = p.lowest;
    }
    float m = group_reduce(x, 0);
    // A chunk whose every score is -inf (an additive -inf mask) adds nothing.
    float e = (t < n && m != NEG_INF) ? exp(x - m) : 0.0;
    ps[t] = e;
    float l = group_reduce(e, 1);

    // Output features in chunks of `width` lanes; the 256 / width slices of the workgroup each
    // sum every slices-th key, then slice 0 adds the partial sums up.
    uint slot = ((row - p.row_base) * p.splits + c) * (p.dv + 2);
    uint width = p.dv <= 32 ? 32 : (p.dv <= 64 ? 64 : (p.dv <= 128 ? 128 : 256));
    uint slices = 256 / width;
    uint slice = t / width;
    for (uint d0 = 0; d0 < p.dv; d0 += width) {
        uint d = d0 + t % width;
        float acc = 0.0;
        if (d < p.dv) {
            for (uint j = slice; j < n; j += slices) acc += ps[j] * float(v[vb + int(j0 + j) * p.vs_s + int(d)]);
        }
        red[t] = acc;
        barrier();
        if (slice == 0 && d < p.dv) {
            float total_d = 0.0;
            for (uint s = 0; s < slices; ++s) total_d += red[t + s * width];
            scr[slot + 2 + d] = total_d;
        }
        barrier();
    }
    if (t == 0) {
        scr[slot] = m;
        scr[slot + 1] = l;
    }
}

// Phase 1: the chunks of `row` combined into its output.
void combine(uint row) {
    uint t = gl_LocalInvocationID.x;
    uint base = (row - p.row_base) * p.splits * (p.dv + 2);
    float mx = NEG_INF;
    for (uint c = 0; c < p.splits; ++c) mx = max(mx, scr[base + c * (p.dv + 2)]);
    float total = 0.0;
    for (uint c = 0; c < p.splits; ++c) {
        float m = scr[base + c * (p.dv + 2)];
        total += m == NEG_INF ? 0.0 : exp(m - mx) * scr[base + c * (p.dv + 2) + 1];
    }
    for (uint d = t; d < p.dv; d += 256) {
        float acc = 0.0;
        for (uint c = 0; c < p.splits; ++c) {
            float m = scr[base + c * (p.dv + 2)];
            if (m != NEG_INF) acc += exp(m - mx) * scr[base + c * (p.dv + 2) + 2 + d];
        }
        o[row * p.dv + d] = T(acc / total);
    }
}

void main() {
    uint g = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
    if (p.phase == 0) {
        uint row = p.row_base + g / p.splits;
        if (row >= p.rows) return;
        partial(row, g % p.splits);
    } else {
        uint row = p.row_base + g;
        if (row >= p.rows) return;
        combine(row);
    }
}
