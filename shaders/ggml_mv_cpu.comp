#version 450
// GGUF-block GEMV out = x @ Wᵀ for CPU drivers (lavapipe: llvmpipe runs a subgroup of 8
// invocations as one AVX2 vector, a workgroup's vectors one after another on one thread, and
// loads storage buffers lane by lane: each load of a vector is 8 bounds-checked scalar loads).
// ggml_mv.comp splits a weight row over LANES invocations and adds their sums across the
// workgroup (a barrier: a coroutine switch per vector, or subgroup shuffles), leaves lanes idle
// on short rows (K = 576: 18 chunks for 64 lanes), and has every invocation load each element
// of x for itself: 32 vector loads of x per chunk of 32 weights, most of its time. Here one
// invocation computes one whole output (no cross-invocation sums, every lane busy), and a
// subgroup loads a chunk of x once, 8 elements per vector load, handing each element to every
// lane with subgroupBroadcast (an extract and a splat): 4 vector loads of x per chunk. Q4_0,
// Q4_1 and Q8_0 blocks are read as the 5, 5 (6 unaligned) and 9 words they span, not a word
// per 16-bit value, and each chunk's dot product factors out its scale (d·Σ q·x, − 8·d·Σ x for
// Q4_0, + m·Σ x for Q4_1). Q4_K and Q6_K dequantize through ggml_blocks.glsl. Lanes past the
// last output compute the last one again (not stored), so the loop and its broadcasts run
// with every lane active. The host takes this variant on CPU devices whose subgroups are at
// least 8 wide with broadcasts (backends/vulkan/src/subgroup.rs): a GPU wants ggml_mv.comp.
#extension GL_EXT_control_flow_attributes : enable
#extension GL_KHR_shader_subgroup_ballot : enable
#include "common.glsl"
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) readonly buffer X { T x[]; };
layout(std430, set = 0, binding = 1) readonly buffer W { uint w[]; };
layout(std430, set = 0, binding = 2) writeonly buffer O { T o[]; };
// As ggml_matmul.glsl's, with n_cols the groups of 64 outputs per row of x.
layout(push_constant) uniform P {
    uint m; uint n; uint k; uint row_bytes; uint n_cols; uint off_x; uint off_w;
} p;
#include "ggml_blocks.glsl"

// The low (`hi` false) or high half of word `v`, as a float16 bit pattern to float.
float half_of(uint v, bool hi) { return unpackHalf2x16(hi ? v >> 16 : v).x; }

// xv[8c .. 8c + 7] = lanes 0..7's xs[c] (subgroupBroadcast takes constant lanes).
#define BC1(c, l) xv[8 * c + l] = subgroupBroadcast(xs[c], l)
#define BC(c) BC1(c, 0); BC1(c, 1); BC1(c, 2); BC1(c, 3); BC1(c, 4); BC1(c, 5); BC1(c, 6); BC1(c, 7)
#define XJ(j) xv[j]

// Σ x·weight over chunk `b` (32 weights) of the row at byte `rb`; xv: the chunk of x.
float chunk_dot(uint rb, uint b, float xv[32]) {
    if (TY == TY_Q4_K || TY == TY_Q6_K) {
        float v[32];
        dequant_chunk(rb, b, v);
        float s = 0.0;
        [[unroll]] for (uint j = 0; j < 32; ++j) s += XJ(j) * v[j];
        return s;
    }
    uint bytes = TY == TY_Q8_0 ? 34u : (TY == TY_Q4_1 ? 20u : 18u);
    uint bb = rb + b * bytes;
    uint a0 = bb >> 2;
    // Blocks start on even bytes: `odd` when one starts in the middle of a word.
    bool odd = (bb & 2u) != 0u;
    uint a[10];
    [[unroll]] for (uint i = 0; i < 10; ++i) a[i] = 0u;
    uint words = TY == TY_Q8_0 ? 9u : 5u;
    [[unroll]] for (uint i = 0; i < 9; ++i) {
        if (i < words) a[i] = w[a0 + i];
    }
    // Q4_1's 20 bytes span a sixth word when unaligned (every block of a row alike).
    if (TY == TY_Q4_1 && odd) a[5] = w[a0 + 5];
    float d = half_of(a[0], odd);
    if (TY == TY_Q8_0) {
        // Quants from byte 2 on: word i of them is a[i + 1] when the block is unaligned.
        float s = 0.0;
        [[unroll]] for (uint i = 0; i < 8; ++i) {
            uint q = odd ? a[i + 1] : (a[i] >> 16) | (a[i + 1] << 16);
            [[unroll]] for (uint t = 0; t < 4; ++t) {
                s += float(int(q << (24 - 8 * t)) >> 24) * XJ(4 * i + t);
            }
        }
        return d * s;
    }
    // Q4: byte j of the quants holds element j (low nibble) and element j + 16 (high).
    bool q41 = TY == TY_Q4_1;
    float s = 0.0, sx = 0.0;
    [[unroll]] for (uint i = 0; i < 4; ++i) {
        uint q = q41 ? (odd ? (a[i + 1] >> 16) | (a[i + 2] << 16) : a[i + 1])
                     : (odd ? a[i + 1] : (a[i] >> 16) | (a[i + 1] << 16));
        [[unroll]] for (uint t = 0; t < 4; ++t) {
            float lo = XJ(4 * i + t), hi = XJ(16 + 4 * i + t);
            s += float((q >> (8 * t)) & 15u) * lo + float((q >> (8 * t + 4)) & 15u) * hi;
            sx += lo + hi;
        }
    }
    if (q41) {
        float mn = odd ? half_of(a[1], false) : half_of(a[0], true);
        return d * s + mn * sx;
    }
    return d * (s - 8.0 * sx);
}

void main() {
    // Groups past the last (a 2-D grid's tail) redo the last group's outputs, not stored.
    uint wid = min(gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x, p.m * p.n_cols - 1);
    uint row = wid / p.n_cols;
    uint col = (wid % p.n_cols) * 64 + gl_LocalInvocationID.x;
    uint rb = p.off_w + min(col, p.n - 1) * p.row_bytes;
    uint xb = p.off_x + row * p.k;
    float acc = 0.0;
    uint sub = gl_SubgroupInvocationID & 7u;
    for (uint b = 0; b < p.k / 32; ++b) {
        float xs[4];
        [[unroll]] for (uint c = 0; c < 4; ++c) xs[c] = float(x[xb + b * 32 + 8 * c + sub]);
        float xv[32];
        BC(0); BC(1); BC(2); BC(3);
        acc += chunk_dot(rb, b, xv);
    }
    uint id = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
    if (col < p.n && id < p.m * p.n_cols) o[row * p.n + col] = T(acc);
}
