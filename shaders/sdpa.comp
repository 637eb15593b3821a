#version 450
// Scaled dot-product attention, one workgroup per query row (b, h, i): no mask, causal
// (bottom-right aligned) or an additive mask (strided over [B, Hq, L, S], broadcasts with
// stride 0), grouped-query heads (kv head = h / reps). Three phases over the
// row's S keys: scores (q·k, into the row's `scr` slice), softmax (each invocation owns the
// keys it scored), then out[d] = Σ_j p_j v[j, d]. Operands are strided over (batch, head,
// position) with a contiguous last axis. Accumulates in float32, rounds to T where
// cpu/fast.rs rounds.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 0) readonly buffer Q { T q[]; };
layout(std430, set = 0, binding = 1) readonly buffer K { T k[]; };
layout(std430, set = 0, binding = 2) readonly buffer V { T v[]; };
layout(std430, set = 0, binding = 3) readonly buffer M { T msk[]; };
layout(std430, set = 0, binding = 4) coherent buffer S { float scr[]; };
layout(std430, set = 0, binding = 5) writeonly buffer O { T o[]; };
layout(push_constant) uniform P {
    uint rows; uint row_base; uint hq; uint l_len; uint s_len; uint dk; uint dv; uint reps;
    float scale; uint causal; float lowest;
    int off_q; int qs_b; int qs_h; int qs_l;
    int off_k; int ks_b; int ks_h; int ks_s;
    int off_v; int vs_b; int vs_h; int vs_s;
    uint has_mask; int off_m; int ms_b; int ms_h; int ms_l; int ms_s;
} p;
shared float qs[256];
shared float red[256];

float rt(float x) { return float(T(x)); }

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

void main() {
    uint local_row = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
    uint row = p.row_base + local_row;
    if (row >= p.rows) return;
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
    uint sb = local_row * p.s_len;
    float sc = rt(p.scale);
    for (uint d = t; d < p.dk; d += 256) qs[d] = rt(sc * float(q[qb + int(d)]));
    barrier();

    int last = i + int(p.s_len) - int(p.l_len);  // causal: keys j <= last are seen
    float mx = uintBitsToFloat(0xff800000u);
    for (uint j = t; j < p.s_len; j += 256) {
        int kr = kb + int(j) * p.ks_s;
        float dot = 0.0;
        for (uint d = 0; d < p.dk; ++d) dot += qs[d] * float(k[kr + int(d)]);
        float x = rt(dot);
        if (p.has_mask != 0) x = rt(x + float(msk[mb + int(j) * p.ms_s]));
        if (p.causal != 0 && int(j) > last) x = p.lowest;
        scr[sb + j] = x;
        mx = max(mx, x);
    }
    mx = group_reduce(mx, 0);
    float total = 0.0;
    for (uint j = t; j < p.s_len; j += 256) {
        float e = exp(scr[sb + j] - mx);
        scr[sb + j] = e;
        total += e;
    }
    total = group_reduce(total, 1);
    for (uint j = t; j < p.s_len; j += 256) scr[sb + j] = rt(scr[sb + j] / total);
    memoryBarrierBuffer();
    barrier();

    // Output features in chunks of `width` lanes; the 256 / width slices of the workgroup each
    // sum every slices-th key, then slice 0 adds the partial sums up.
    uint width = p.dv <= 32 ? 32 : (p.dv <= 64 ? 64 : (p.dv <= 128 ? 128 : 256));
    uint slices = 256 / width;
    uint slice = t / width;
    for (uint d0 = 0; d0 < p.dv; d0 += width) {
        uint d = d0 + t % width;
        float acc = 0.0;
        if (d < p.dv) {
            for (uint j = slice; j < p.s_len; j += slices) acc += scr[sb + j] * float(v[vb + int(j) * p.vs_s + int(d)]);
        }
        red[t] = acc;
        barrier();
        if (slice == 0 && d < p.dv) {
            float total_d = 0.0;
            for (uint k = 0; k < slices; ++k) total_d += red[t + k * width];
            o[row * p.dv + d] = T(total_d);
        }
        barrier();
    }
}
