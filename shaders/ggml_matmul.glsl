// GGUF-block matmul out = x @ Wᵀ (core's ggml_matmul): W is N rows of `row_bytes` bytes, each
// row blocks of ggml's Q4_0, Q4_1, Q8_0 (32 weights), Q4_K or Q6_K (256 weights) layout, stored
// unchanged (bound as words; blocks need not be 4-byte aligned but are always 2-byte aligned).
// Work is split in chunks of 32 weights (a K-quant block holds 8). A workgroup computes
// 256 / LANES outputs (LANES invocations each, walking the chunks of one weight row; LANES is
// a specialization constant, 8 to 64: backends/vulkan/src/subgroup.rs) for up to ROWS rows of x
// (defined by the including shader): each block is dequantized once into registers and dotted
// with every row. ggml_mv.comp (ROWS 1) is the GEMV of a decode step; ggml_mm.comp (ROWS 8)
// reads the weight once per 8 rows for a prefill (CPU drivers run it slower per row: the
// kernels pick it for several rows only). Activations are
// read as T (not quantized to Q8 as ggml's CPU kernels do); products accumulate in float32.
// With SUBGROUP defined (ggml_mv_sg.comp, ggml_mm_sg.comp) the LANES partial sums of an output
// are added with subgroup operations instead of a tree in shared memory: the host picks these
// variants only where compute shaders have subgroup arithmetic and LANES is a whole number of
// subgroups, so an output's invocations are whole subgroups (one barrier at most, none when
// LANES is the subgroup size, against log2(LANES) for the tree).
#extension GL_EXT_control_flow_attributes : enable
#ifdef SUBGROUP
#extension GL_KHR_shader_subgroup_arithmetic : enable
#endif
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 0) readonly buffer X { T x[]; };
layout(std430, set = 0, binding = 1) readonly buffer W { uint w[]; };
layout(std430, set = 0, binding = 2) writeonly buffer O { T o[]; };
layout(push_constant) uniform P {
    uint m; uint n; uint k; uint row_bytes; uint n_cols; uint off_x; uint off_w;
} p;
layout(constant_id = 1) const uint LANES = 64;
shared float part[ROWS][256];
#include "ggml_blocks.glsl"

void main() {
    uint wid = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
    uint row_tiles = (p.m + ROWS - 1) / ROWS;
    if (wid >= row_tiles * p.n_cols) return;
#ifdef SUBGROUP
    // Invocations numbered subgroup by subgroup, whatever order the driver packs them in.
    uint t = gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID;
#else
    uint t = gl_LocalInvocationID.x;
#endif
    uint row0 = (wid / p.n_cols) * ROWS;
    uint rows = min(ROWS, p.m - row0);
    uint col = (wid % p.n_cols) * (256 / LANES) + t / LANES;
    uint lane = t % LANES;
    // Loops over ROWS and the 32 weights are unrolled so acc and v stay in registers (a
    // dynamically indexed array goes to memory on CPU drivers such as lavapipe).
    float acc[ROWS];
    [[unroll]] for (uint r = 0; r < ROWS; ++r) acc[r] = 0.0;
    if (col < p.n) {
        uint nb = p.k / 32;
        float v[32];
        for (uint b = lane; b < nb; b += LANES) {
            dequant_chunk(p.off_w + col * p.row_bytes, b, v);
            [[unroll]] for (uint r = 0; r < ROWS; ++r) {
                if (r < rows) {
                    uint xb = p.off_x + (row0 + r) * p.k + b * 32;
                    float s = 0.0;
                    [[unroll]] for (uint j = 0; j < 32; ++j) s += float(x[xb + j]) * v[j];
                    acc[r] += s;
                }
            }
        }
    }
#ifdef SUBGROUP
    // Each subgroup's sum; an output of several subgroups adds theirs through shared memory.
    [[unroll]] for (uint r = 0; r < ROWS; ++r) acc[r] = subgroupAdd(acc[r]);
    uint per_out = LANES / gl_SubgroupSize;
    if (per_out > 1) {
        if (gl_SubgroupInvocationID == 0) {
            [[unroll]] for (uint r = 0; r < ROWS; ++r) part[r][gl_SubgroupID] = acc[r];
        }
        barrier();
        if (lane == 0) {
            [[unroll]] for (uint r = 0; r < ROWS; ++r) {
                for (uint g = 1; g < per_out; ++g) acc[r] += part[r][gl_SubgroupID + g];
            }
        }
    }
    if (lane == 0 && col < p.n) {
        [[unroll]] for (uint r = 0; r < ROWS; ++r) {
            if (r < rows) o[(row0 + r) * p.n + col] = T(acc[r]);
        }
    }
}
#else
    [[unroll]] for (uint r = 0; r < ROWS; ++r) part[r][t] = acc[r];
    barrier();
    for (uint s = LANES / 2; s > 0; s >>= 1) {
        if (lane < s) {
            for (uint r = 0; r < rows; ++r) part[r][t] += part[r][t + s];
        }
        barrier();
    }
    if (lane == 0 && col < p.n) {
        for (uint r = 0; r < rows; ++r) o[(row0 + r) * p.n + col] = T(part[r][t]);
    }
}
#endif
