#version 450
// Affine-quantized matmul out = x @ dequantize(w)ᵀ (mx.quantized_matmul, transpose=True) as a
// GEMV per row of x: a workgroup computes 4 outputs of one row, 64 invocations per output
// walking the packed words of that weight row. w is uint32 [n, wpr], each row an LSB-first
// stream of `bits`-wide codes (bits divides 32, so a word never straddles a group); scales and
// biases are [n, k / group_size]. Each weight is dequantized as mx.dequantize does in T
// (scale * q rounded, plus bias rounded); products accumulate in float32.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 0) readonly buffer X { T x[]; };
layout(std430, set = 0, binding = 1) readonly buffer W { uint w[]; };
layout(std430, set = 0, binding = 2) readonly buffer Sc { T sc[]; };
layout(std430, set = 0, binding = 3) readonly buffer Bi { T bi[]; };
layout(std430, set = 0, binding = 4) writeonly buffer O { T o[]; };
layout(push_constant) uniform P {
    uint m; uint n; uint k; uint bits; uint group_size; uint wpr; uint gpr; uint n_blocks;
    uint off_x; uint off_w; uint off_s; uint off_b;
} p;
shared float part[256];

float rt(float v) { return float(T(v)); }

void main() {
    uint wid = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
    if (wid >= p.m * p.n_blocks) return;
    uint t = gl_LocalInvocationID.x;
    uint row = wid / p.n_blocks;
    uint col = (wid % p.n_blocks) * 4 + t / 64;
    uint lane = t % 64;
    uint per_word = 32 / p.bits;
    uint mask = (1u << p.bits) - 1u;
    float acc = 0.0;
    if (col < p.n) {
        uint xb = p.off_x + row * p.k;
        for (uint wi = lane; wi < p.wpr; wi += 64) {
            uint e0 = wi * per_word;
            uint g = col * p.gpr + e0 / p.group_size;
            float s = float(sc[p.off_s + g]);
            float b = float(bi[p.off_b + g]);
            uint word = w[p.off_w + col * p.wpr + wi];
            for (uint e = 0; e < per_word; ++e) {
                float q = float((word >> (e * p.bits)) & mask);
                acc += float(x[xb + e0 + e]) * rt(rt(s * q) + b);
            }
        }
    }
    part[t] = acc;
    barrier();
    for (uint s = 32; s > 0; s >>= 1) {
        if (lane < s) part[t] += part[t + s];
        barrier();
    }
    if (lane == 0 && col < p.n) o[row * p.n + col] = T(part[t]);
}
