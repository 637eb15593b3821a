#version 450
// argmax / argmin over one axis of a strided view, one workgroup per output element (as
// reduce.comp): the uint32 index of the first extreme value, or of the first NaN if any (the
// CPU's and MLX's rule). op: 0 argmax, 1 argmin.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 0) readonly buffer A { T a[]; };
layout(std430, set = 0, binding = 1) writeonly buffer O { uint o[]; };
layout(push_constant) uniform P {
    uint n; uint ndim; uint off; uint op; uint len; int step;
    uint shape[MAXD]; int st[MAXD];
} p;
shared float val[256];
shared uint idx[256];

#include "argreduce.glsl"

void main() {
    uint row = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
    if (row >= p.n) return;
    int base = int(p.off);
    uint r = row;
    for (int d = int(p.ndim) - 1; d >= 0; --d) {
        base += int(r % p.shape[d]) * p.st[d];
        r /= p.shape[d];
    }
    uint t = gl_LocalInvocationID.x;
    // Lanes past the row's end hold no candidate: index 0xffffffff loses every comparison
    // against a real element of the same value, and -inf / +inf never beats one.
    float best = uintBitsToFloat(p.op == 0 ? 0xff800000u : 0x7f800000u);
    uint bi = 0xffffffffu;
    for (uint k = t; k < p.len; k += 256) {
        float v = float(a[base + int(k) * p.step]);
        if (before(v, k, best, bi)) {
            best = v;
            bi = k;
        }
    }
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
    if (t == 0) o[row] = idx[0];
}
