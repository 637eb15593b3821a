// Normalizations of the last axis, one workgroup per row of a dense [rows, dim] input:
//   layer = 0 (rms_norm):   x * rsqrt(mean(x^2) + eps) * w
//   layer = 1 (layer_norm): (x - mean) * rsqrt(var + eps) * w + b
// `w_step` / `b_step` are 1 for a per-feature vector, 0 for a scalar. Accumulates in float32;
// intermediates are rounded to T where the CPU kernel (cpu/fast.rs) rounds them. With SUBGROUP
// defined (norm_sg.comp; the host picks it where compute shaders have subgroup arithmetic) a
// workgroup sum adds within subgroups first: two barriers instead of nine.
// With `add` = 1 the input is the sum x + y (rounded to T, as binary.comp's add rounds it),
// written to `s` as well: a residual add and the norm that follows it in one dispatch (a
// decode step's `x = x + f(x); h = rms_norm(x)`, fused by backends/vulkan/src/defer.rs).
#include "common.glsl"
#ifdef SUBGROUP
#extension GL_KHR_shader_subgroup_arithmetic : enable
#endif
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 0) readonly buffer X { T x[]; };
layout(std430, set = 0, binding = 1) readonly buffer W { T w[]; };
layout(std430, set = 0, binding = 2) readonly buffer B { T b[]; };
layout(std430, set = 0, binding = 3) readonly buffer Y { T y[]; };
layout(std430, set = 0, binding = 4) writeonly buffer O { T o[]; };
layout(std430, set = 0, binding = 5) writeonly buffer S { T s[]; };
layout(push_constant) uniform P {
    uint rows; uint dim; uint off_x; uint off_w; uint w_step; float eps;
    uint layer; uint off_b; uint b_step; uint add; uint off_y;
} p;
shared float part[256];

// Sum of `v` over the workgroup (every invocation gets it).
#ifdef SUBGROUP
float group_sum(float v) {
    float s = subgroupAdd(v);
    if (subgroupElect()) part[gl_SubgroupID] = s;
    barrier();
    // Every invocation adds the subgroups' sums in the same order: one total for all.
    float total = 0.0;
    for (uint i = 0; i < gl_NumSubgroups; ++i) total += part[i];
    barrier();
    return total;
}
#else
float group_sum(float v) {
    uint t = gl_LocalInvocationID.x;
    part[t] = v;
    barrier();
    for (uint s = 128; s > 0; s >>= 1) {
        if (t < s) part[t] += part[t + s];
        barrier();
    }
    float total = part[0];
    barrier();
    return total;
}
#endif

// Element k of the input row starting at `base` (x's index; y's row starts at `ybase`).
float xin(uint base, uint ybase, uint k) {
    if (p.add == 0) return float(x[base + k]);
    return float(T(float(x[base + k]) + float(y[ybase + k])));
}

void main() {
    uint row = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
    if (row >= p.rows) return;
    uint t = gl_LocalInvocationID.x;
    uint base = p.off_x + row * p.dim;
    uint ybase = p.off_y + row * p.dim;
    float inv_d = 1.0 / float(p.dim);
    float mu = 0.0;
    if (p.layer != 0) {
        float acc = 0.0;
        for (uint k = t; k < p.dim; k += 256) acc += xin(base, ybase, k);
        mu = group_sum(acc) * inv_d;
    }
    float acc = 0.0;
    for (uint k = t; k < p.dim; k += 256) {
        float v = xin(base, ybase, k) - mu;
        acc += v * v;
    }
    float scale = inversesqrt(group_sum(acc) * inv_d + p.eps);
    for (uint k = t; k < p.dim; k += 256) {
        float xv = xin(base, ybase, k);
        if (p.add != 0) s[row * p.dim + k] = T(xv);
        float r = float(T((xv - mu) * scale)) * float(w[p.off_w + k * p.w_step]);
        if (p.layer != 0) r = float(T(r)) + float(b[p.off_b + k * p.b_step]);
        o[row * p.dim + k] = T(r);
    }
}
