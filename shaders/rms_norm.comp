#version 450
// One workgroup per row of a dense [rows, dim] input: x * rsqrt(mean(x^2) + eps) * w.
// `w_step` is 1 for a weight vector, 0 for a scalar weight. Accumulates in float32.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 0) readonly buffer X { T x[]; };
layout(std430, set = 0, binding = 1) readonly buffer W { T w[]; };
layout(std430, set = 0, binding = 2) writeonly buffer O { T o[]; };
layout(push_constant) uniform P { uint rows; uint dim; uint off_x; uint off_w; uint w_step; float eps; } p;
shared float part[256];

void main() {
    uint row = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
    if (row >= p.rows) return;
    uint t = gl_LocalInvocationID.x;
    uint base = p.off_x + row * p.dim;
    float acc = 0.0;
    for (uint k = t; k < p.dim; k += 256) {
        float v = float(x[base + k]);
        acc += v * v;
    }
    part[t] = acc;
    barrier();
    for (uint s = 128; s > 0; s >>= 1) {
        if (t < s) part[t] += part[t + s];
        barrier();
    }
    float scale = inversesqrt(part[0] / float(p.dim) + p.eps);
    for (uint k = t; k < p.dim; k += 256) {
        o[row * p.dim + k] = T(float(x[base + k]) * scale * float(w[p.off_w + k * p.w_step]));
    }
}
