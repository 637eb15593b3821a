#version 450
// argmax / argmin of few long rows (greedy decoding's 49152 logits) over many workgroups, in
// two dispatches: stage 0, a workgroup per (output row, chunk of `chunk` elements of its
// axis), writes the chunk's best (value as float bits, index) to `part`; stage 1, a
// workgroup per output row, picks the best of the row's `chunks` candidates. The order is
// argreduce.comp's (argreduce.glsl: first NaN, else the first extreme value), so the result
// is the one-workgroup kernel's. Push constants as argreduce.comp's, then stage, chunk, chunks.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 0) readonly buffer A { T a[]; };
layout(std430, set = 0, binding = 1) buffer Part { uvec2 part[]; };
layout(std430, set = 0, binding = 2) writeonly buffer O { uint o[]; };
layout(push_constant) uniform P {
    uint n; uint ndim; uint off; uint op; uint len; int step;
    uint shape[MAXD]; int st[MAXD];
    uint stage; uint chunk; uint chunks;
} p;
shared float val[256];
shared uint idx[256];

#include "argreduce.glsl"

// The workgroup's best of the candidates each invocation holds, in val[0] / idx[0].
void reduce_workgroup(uint t, float best, uint bi) {
    val[t] = best;
    idx[t] = bi;
    barrier();
    for (uint s = 128; s > 0; s >>= 1) {
        if (t < s && before(val[t + s], idx[t + s], val[t], idx[t])) {
            val[t] = val[t + s];
            idx[t] = idx[t + s];
        }
        barrier();
    }
}

void main() {
    uint g = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
    uint t = gl_LocalInvocationID.x;
    // Lanes without a candidate: index 0xffffffff loses every comparison against a real
    // element of the same value, and -inf / +inf never beats one.
    float best = uintBitsToFloat(p.op == 0 ? 0xff800000u : 0x7f800000u);
    uint bi = 0xffffffffu;
    if (p.stage == 0) {
        uint row = g / p.chunks, c = g % p.chunks;
        if (row >= p.n) return;
        int base = int(p.off);
        uint r = row;
        for (int d = int(p.ndim) - 1; d >= 0; --d) {
            base += int(r % p.shape[d]) * p.st[d];
            r /= p.shape[d];
        }
        uint end = min(p.len, (c + 1) * p.chunk);
        for (uint k = c * p.chunk + t; k < end; k += 256) {
            float v = float(a[base + int(k) * p.step]);
            if (before(v, k, best, bi)) {
                best = v;
                bi = k;
            }
        }
        reduce_workgroup(t, best, bi);
        if (t == 0) part[g] = uvec2(floatBitsToUint(val[0]), idx[0]);
    } else {
        uint row = g;
        if (row >= p.n) return;
        for (uint c = t; c < p.chunks; c += 256) {
            uvec2 q = part[row * p.chunks + c];
            float v = uintBitsToFloat(q.x);
            if (before(v, q.y, best, bi)) {
                best = v;
                bi = q.y;
            }
        }
        reduce_workgroup(t, best, bi);
        if (t == 0) o[row] = idx[0];
    }
}
