#version 450
// One workgroup per output element: reduces `len` elements `step` apart (one axis of a strided
// view) with a shared-memory tree. Accumulates in float32. op: 0 sum, 1 max, 2 min, 3 prod.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 0) readonly buffer A { T a[]; };
layout(std430, set = 0, binding = 1) writeonly buffer O { T o[]; };
layout(push_constant) uniform P {
    uint n; uint ndim; uint off; uint op; uint len; int step;
    uint shape[MAXD]; int st[MAXD];
} p;
shared float part[256];

float identity() {
    if (p.op == 0) return 0.0;
    if (p.op == 1) return uintBitsToFloat(0xff800000u);
    if (p.op == 2) return uintBitsToFloat(0x7f800000u);
    return 1.0;
}

float combine(float x, float y) {
    if (p.op == 0) return x + y;
    if (p.op == 3) return x * y;
    if (isnan(x) || isnan(y)) return x + y;
    return p.op == 1 ? max(x, y) : min(x, y);
}

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
    float acc = identity();
    for (uint k = t; k < p.len; k += 256) {
        acc = combine(acc, float(a[base + int(k) * p.step]));
    }
    part[t] = acc;
    barrier();
    for (uint s = 128; s > 0; s >>= 1) {
        if (t < s) part[t] = combine(part[t], part[t + s]);
        barrier();
    }
    if (t == 0) o[row] = T(part[0]);
}
