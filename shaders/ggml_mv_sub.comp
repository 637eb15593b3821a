#version 450
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
#extension GL_EXT_control_flow_attributes : enable
#extension GL_KHR_shader_subgroup_arithmetic : enable
#include "common.glsl"
layout(local_size_x = 128) in;
layout(std430, set = 0, binding = 0) readonly buffer X { T x[]; };
layout(std430, set = 0, binding = 1) readonly buffer W { uint w[]; };
layout(std430, set = 0, binding = 2) writeonly buffer O { T o[]; };
// As ggml_matmul.glsl's; m is 1 and n_cols the workgroups (4·OUTS outputs each).
layout(push_constant) uniform P {
    uint m; uint n; uint k; uint row_bytes; uint n_cols; uint off_x; uint off_w;
} p;
layout(constant_id = 1) const uint OUTS = 2;
#include "ggml_blocks.glsl"

void main() {
    uint wid = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
    if (wid >= p.n_cols) return;
    uint parts = (p.k / 32) * 4;
    // The workgroup's 4·OUTS outputs, OUTS per subgroup, however many subgroups it has.
    for (uint s = gl_SubgroupID; s < 4; s += gl_NumSubgroups) {
        uint col0 = (wid * 4 + s) * OUTS;
        float acc[OUTS];
        [[unroll]] for (uint c = 0; c < OUTS; ++c) acc[c] = 0.0;
        for (uint q = gl_SubgroupInvocationID; q < parts; q += gl_SubgroupSize) {
            uint b = q / 4, part = q % 4;
            uint xb = p.off_x + b * 32;
            float xv[8];
            [[unroll]] for (uint i = 0; i < 8; ++i) xv[i] = float(x[xb + part_elem(part, i)]);
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
