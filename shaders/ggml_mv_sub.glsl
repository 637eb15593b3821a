// GGUF-block GEMV out = x @ Wᵀ for one row of x (a decode step) on GPUs: a subgroup computes
// OUTS outputs (specialization constant 1) and each of its invocations a quarter of a 32-weight
// chunk (8 weights, ggml_blocks.glsl's dequant_part), so a 576-wide row (18 chunks, 72 quarters)
// keeps 32 invocations busy for 2-3 steps, where ggml_mv.comp's LANES invocations walk whole
// chunks (K = 576: 18 of 32 lanes do one chunk each, the rest idle, then a barrier or a
// shared-memory tree). The 8 elements of x an invocation needs are loaded once and used for
// each of the subgroup's outputs; an output's sum is one subgroupAdd: no shared memory, no
// barrier. A workgroup of 128 invocations computes 4·OUTS outputs (4 subgroups of 32, or more
// subgroups looping when they are narrower; any subgroup size works). The host takes this
// variant for one-row GEMVs where compute shaders have subgroup arithmetic
// (backends/vulkan/src/subgroup.rs: MLX_ARM_VULKAN_GGML_MV, MLX_ARM_VULKAN_GGML_OUTS).
// Activations are read as T, products accumulate in float32, as in ggml_matmul.glsl.
// With FUSED_X (ggml_mv_sub_fx.comp) x is not read but computed: it is the output of a core
// FusedOp program of the SwiGLU's shape — r2 = f(g), r3 = h(g, r2), x = k(r3, u) with unary f
// and binary h, k given as elementwise.glsl codes (a layer's g·sigmoid(g)·u before its down
// projection) — over inputs g (a0) and u (a1), each step rounded to T as fused.comp rounds it,
// and the first workgroup also stores it (xo), so the program's output exists
// as if fused.comp had run. The workgroup's 128 invocations compute x once into shared memory
// (FX_MAX_K elements at most: the host folds no longer rows) and every subgroup reads it there:
// recomputed by each subgroup (vk26) it cost 17.7 µs a GEMV on an H200, more than the two
// dispatches it replaces. (fused.comp's general programs index registers dynamically, ~60 µs
// a GEMV: the host folds only this shape.)
#extension GL_EXT_control_flow_attributes : enable
#extension GL_KHR_shader_subgroup_arithmetic : enable
#include "common.glsl"
#include "elementwise.glsl"
layout(local_size_x = 128) in;
#ifdef FUSED_X
layout(std430, set = 0, binding = 0) readonly buffer A0 { T a0[]; };
layout(std430, set = 0, binding = 1) readonly buffer A1 { T a1[]; };
layout(std430, set = 0, binding = 2) readonly buffer W { uint w[]; };
layout(std430, set = 0, binding = 3) writeonly buffer O { T o[]; };
layout(std430, set = 0, binding = 4) writeonly buffer XO { T xo[]; };
#elif defined(NORM_X)
layout(std430, set = 0, binding = 0) readonly buffer A0 { T a0[]; };
layout(std430, set = 0, binding = 1) readonly buffer A1 { T a1[]; };
layout(std430, set = 0, binding = 2) readonly buffer G { T g[]; };
layout(std430, set = 0, binding = 3) readonly buffer W { uint w[]; };
layout(std430, set = 0, binding = 4) writeonly buffer O { T o[]; };
layout(std430, set = 0, binding = 5) writeonly buffer XO { T xo[]; };
layout(std430, set = 0, binding = 6) writeonly buffer SO { T so[]; };
#else
layout(std430, set = 0, binding = 0) readonly buffer X { T x[]; };
layout(std430, set = 0, binding = 1) readonly buffer W { uint w[]; };
layout(std430, set = 0, binding = 2) writeonly buffer O { T o[]; };
#endif
// As ggml_matmul.glsl's; m is 1 and n_cols the workgroups (4·OUTS outputs each). With
// FUSED_X: g's and u's offsets (off_x unused) and the three steps' codes.
layout(push_constant) uniform P {
    uint m; uint n; uint k; uint row_bytes; uint n_cols; uint off_x; uint off_w;
#ifdef FUSED_X
    uint off_g; uint off_u; uint f; uint h; uint kk;
#elif defined(NORM_X)
    uint off_a; uint off_y; uint off_n; uint n_step; float eps; uint add;
#endif
} p;
#ifdef FUSED_X
// The longest x folded (kernels.rs FX_MAX_K): 16 KiB of float32, Vulkan's least shared memory.
const uint FX_MAX_K = 4096;
shared float xs[FX_MAX_K];
float rt(float v) { return float(T(v)); }
float x_fused(uint i) {
    float g = float(a0[p.off_g + i]);
    float r2 = rt(unary_op(p.f, g));
    float r3 = rt(binary_op(p.h, g, r2));
    return rt(binary_op(p.kk, r3, float(a1[p.off_u + i])));
}
float x_at(uint i) { return xs[i]; }
#elif defined(NORM_X)
const uint FX_MAX_K = 4096;
shared float xs[FX_MAX_K];
// Two sums a subgroup (256 / the subgroup size at most, a subgroup of one included).
shared float part[256];
// Element i of the row normalized (norm.glsl's xin).
float xin(uint i) {
    if (p.add == 0) return float(a0[p.off_a + i]);
    return float(T(float(a0[p.off_a + i]) + float(a1[p.off_y + i])));
}
float x_at(uint i) { return xs[i]; }
#else
float x_at(uint i) { return float(x[p.off_x + i]); }
#endif
layout(constant_id = 1) const uint OUTS = 2;
#include "ggml_blocks.glsl"

void main() {
    uint wid = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
    if (wid >= p.n_cols) return;
    uint parts = (p.k / 32) * 4;
#ifdef FUSED_X
    // x once a workgroup (the early return above is the whole workgroup's: no barrier skipped).
    for (uint i = gl_LocalInvocationID.x; i < p.k; i += 128) {
        float v = x_fused(i);
        xs[i] = v;
        if (wid == 0) xo[i] = T(v);
    }
    barrier();
#elif defined(NORM_X)
    {
        uint t = gl_LocalInvocationID.x;
        float inv_d = 1.0 / float(p.k);
        float mu = 0.0;
        float acc0 = 0.0;
        for (uint i = t; i < p.k; i += 256) {
            float v = xin(i) - mu;
            acc0 += v * v;
        }
        float acc1 = 0.0;
        for (uint i = t + 128; i < p.k; i += 256) {
            float v = xin(i) - mu;
            acc1 += v * v;
        }
        float s0 = subgroupAdd(acc0);
        float s1 = subgroupAdd(acc1);
        if (subgroupElect()) {
            part[gl_SubgroupID] = s0;
            part[gl_SubgroupID + gl_NumSubgroups] = s1;
        }
        barrier();
        float total = 0.0;
        for (uint i = 0; i < 2 * gl_NumSubgroups; ++i) total += part[i];
        float scale = inversesqrt(total * inv_d + p.eps);
        for (uint i = t; i < p.k; i += 128) {
            float xv = xin(i);
            float r = float(T((xv - mu) * scale)) * float(g[p.off_n + i * p.n_step]);
            xs[i] = float(T(r));
            if (wid == 0) {
                xo[i] = T(r);
                if (p.add != 0) so[i] = T(xv);
            }
        }
        barrier();
    }
#endif
    // The workgroup's 4·OUTS outputs, OUTS per subgroup, however many subgroups it has.
    for (uint s = gl_SubgroupID; s < 4; s += gl_NumSubgroups) {
        uint col0 = (wid * 4 + s) * OUTS;
        float acc[OUTS];
        [[unroll]] for (uint c = 0; c < OUTS; ++c) acc[c] = 0.0;
        for (uint q = gl_SubgroupInvocationID; q < parts; q += gl_SubgroupSize) {
            uint b = q / 4, part = q % 4;
            uint xb = b * 32;
            float xv[8];
            [[unroll]] for (uint i = 0; i < 8; ++i) xv[i] = x_at(xb + part_elem(part, i));
            [[unroll]] for (uint c = 0; c < OUTS; ++c) {
                // Past the last output: the last one again (not stored), so every lane runs.
                uint col = min(col0 + c, p.n - 1);
                float v[8];
                dequant_part(p.off_w + col * p.row_bytes, b, part, v);
                float d = 0.0;
                [[unroll]] for (uint i = 0; i < 8; ++i) d += xv[i] * v[i];
                acc[c] += d;
            }
        }
        [[unroll]] for (uint c = 0; c < OUTS; ++c) {
            float t = subgroupAdd(acc[c]);
            if (gl_SubgroupInvocationID == 0 && col0 + c < p.n) o[col0 + c] = T(t);
        }
    }
}
