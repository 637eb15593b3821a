// GGUF-block matmul out = x @ Wᵀ (core's ggml_matmul): W is N rows of `row_bytes` bytes, each
// row blocks of ggml's Q4_0, Q4_1, Q8_0 (32 weights), Q4_K or Q6_K (256 weights) layout, stored
// unchanged (bound as words; blocks need not be 4-byte aligned but are always 2-byte aligned).
// Work is split in chunks of 32 weights (a K-quant block holds 8). A workgroup computes 4
// outputs (64 invocations each, walking the blocks of one weight row) for up to ROWS rows of x
// (defined by the including shader): each block is dequantized once into registers and dotted
// with every row. ggml_mv.comp (ROWS 1) is the GEMV of a decode step; ggml_mm.comp (ROWS 8)
// reads the weight once per 8 rows for a prefill (CPU drivers run it slower per row: the
// kernels pick it for several rows only). Activations are
// read as T (not quantized to Q8 as ggml's CPU kernels do); products accumulate in float32.
#extension GL_EXT_control_flow_attributes : enable
#include "common.glsl"
#define TY_Q4_0 2u
#define TY_Q4_1 3u
#define TY_Q8_0 8u
#define TY_Q4_K 12u
#define TY_Q6_K 14u
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 0) readonly buffer X { T x[]; };
layout(std430, set = 0, binding = 1) readonly buffer W { uint w[]; };
layout(std430, set = 0, binding = 2) writeonly buffer O { T o[]; };
// The GGUF type number, fixed per pipeline so the other types' code is folded away (a
// runtime switch over five dequantizers made lavapipe several times slower).
layout(constant_id = 0) const uint TY = 2u;
layout(push_constant) uniform P {
    uint m; uint n; uint k; uint row_bytes; uint n_cols; uint off_x; uint off_w;
} p;
shared float part[ROWS][256];

// The 16-bit little-endian value at byte `b` (even) of W.
uint u16_at(uint b) { return (w[b >> 2] >> ((b & 2u) * 8u)) & 0xffffu; }
float f16_at(uint b) { return unpackHalf2x16(u16_at(b)).x; }

// The 32 weights of the block at byte `bb`, dequantized as ggml's dequantize_row_* does.
uint byte_at(uint b) { return (w[b >> 2] >> ((b & 3u) * 8u)) & 255u; }

// Q4_K's 6-bit scale (or, with `mins`, min) of sub-block j (ggml's get_scale_min_k4); `sc` is
// the byte address of the 12 packed bytes.
uint scale_k4(uint sc, uint j, bool mins) {
    uint o = mins ? 4u : 0u;
    if (j < 4) return byte_at(sc + j + o) & 63u;
    uint lo = mins ? (byte_at(sc + j + 4) >> 4) : (byte_at(sc + j + 4) & 15u);
    return lo | ((byte_at(sc + j - 4 + o) >> 6) << 4);
}

// Chunk j (0..7, 32 weights) of the 256-weight K-quant block at byte `sb`, as ggml's
// dequantize_row_q4_K / dequantize_row_q6_K.
void dequant_k(uint sb, uint j, out float v[32]) {
    if (TY == TY_Q4_K) {
        // d, dmin, 12 scale bytes, then 128 bytes: chunk pair j/2 shares 32 bytes (low
        // nibbles for the even chunk, high for the odd).
        float d = f16_at(sb) * float(scale_k4(sb + 4, j, false));
        float m = f16_at(sb + 2) * float(scale_k4(sb + 4, j, true));
        uint q = sb + 16 + (j / 2) * 32;
        uint sh = (j % 2) * 4;
        [[unroll]] for (uint l = 0; l < 32; ++l) v[l] = d * float((byte_at(q + l) >> sh) & 15u) - m;
        return;
    }
    // Q6_K: ql[128], qh[64], int8 scales[16], d. Chunk j is quarter r of half h.
    float d = f16_at(sb + 208);
    uint h = j / 4, r = j % 4;
    uint ql = sb + 64 * h + 32 * (r & 1u), qh = sb + 128 + 32 * h, sc = sb + 192 + 8 * h + 2 * r;
    uint sh = (r / 2) * 4;
    [[unroll]] for (uint l = 0; l < 32; ++l) {
        int q = int(((byte_at(ql + l) >> sh) & 15u) | (((byte_at(qh + l) >> (2 * r)) & 3u) << 4)) - 32;
        float s = float(int(byte_at(sc + l / 16) << 24) >> 24);
        v[l] = d * s * float(q);
    }
}

void dequant(uint bb, out float v[32]) {
    float d = f16_at(bb);
    if (TY == TY_Q8_0) {
        [[unroll]] for (uint j = 0; j < 32; j += 2) {
            uint h = u16_at(bb + 2 + j);
            v[j] = d * float(int(h << 24) >> 24);
            v[j + 1] = d * float(int(h << 16) >> 24);
        }
        return;
    }
    // Q4: byte j holds element j (low nibble) and element j + 16 (high nibble).
    bool q41 = TY == TY_Q4_1;
    float mn = q41 ? f16_at(bb + 2) : 0.0;
    float zero = q41 ? 0.0 : 8.0;
    uint qs = bb + (q41 ? 4u : 2u);
    [[unroll]] for (uint j = 0; j < 16; j += 2) {
        uint h = u16_at(qs + j);
        v[j] = (float(h & 15u) - zero) * d + mn;
        v[j + 16] = (float((h >> 4) & 15u) - zero) * d + mn;
        v[j + 1] = (float((h >> 8) & 15u) - zero) * d + mn;
        v[j + 17] = (float(h >> 12) - zero) * d + mn;
    }
}

// The 32 weights of chunk `b` of the row at byte `row`.
void dequant_chunk(uint row, uint b, out float v[32]) {
    if (TY == TY_Q4_K || TY == TY_Q6_K) {
        dequant_k(row + (b / 8) * (TY == TY_Q4_K ? 144u : 210u), b % 8, v);
    } else {
        dequant(row + b * (TY == TY_Q8_0 ? 34u : (TY == TY_Q4_1 ? 20u : 18u)), v);
    }
}

void main() {
    uint wid = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
    uint row_tiles = (p.m + ROWS - 1) / ROWS;
    if (wid >= row_tiles * p.n_cols) return;
    uint t = gl_LocalInvocationID.x;
    uint row0 = (wid / p.n_cols) * ROWS;
    uint rows = min(ROWS, p.m - row0);
    uint col = (wid % p.n_cols) * 4 + t / 64;
    uint lane = t % 64;
    // Loops over ROWS and the 32 weights are unrolled so acc and v stay in registers (a
    // dynamically indexed array goes to memory on CPU drivers such as lavapipe).
    float acc[ROWS];
    [[unroll]] for (uint r = 0; r < ROWS; ++r) acc[r] = 0.0;
    if (col < p.n) {
        uint nb = p.k / 32;
        float v[32];
        for (uint b = lane; b < nb; b += 64) {
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
    [[unroll]] for (uint r = 0; r < ROWS; ++r) part[r][t] = acc[r];
    barrier();
    for (uint s = 32; s > 0; s >>= 1) {
        if (lane < s) {
            for (uint r = 0; r < rows; ++r) part[r][t] += part[r][t + s];
        }
        barrier();
    }
    if (lane == 0 && col < p.n) {
        for (uint r = 0; r < rows; ++r) o[(row0 + r) * p.n + col] = T(part[r][t]);
    }
}
