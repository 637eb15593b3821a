// GGUF block decoding shared by the shaders that read ggml blocks (ggml_matmul.glsl,
// ggml_dequant.comp). The including shader declares the blocks as `buffer W { uint w[]; }`
// first: blocks are read as words (they need not be 4-byte aligned but are always 2-byte
// aligned). TY, the GGUF type number, is specialization constant 0.
#define TY_Q4_0 2u
#define TY_Q4_1 3u
#define TY_Q8_0 8u
#define TY_Q4_K 12u
#define TY_Q6_K 14u
// The GGUF type number, fixed per pipeline so the other types' code is folded away (a
// runtime switch over five dequantizers made lavapipe several times slower).
layout(constant_id = 0) const uint TY = 2u;

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
// dequantize_row_q4_K / dequantize_row_q6_K: k_scale gives the chunk's factors (Q4_K: scale
// and min; Q6_K: the block's d), k_weight its weight l (0..31).
vec2 k_scale(uint sb, uint j) {
    if (TY == TY_Q4_K) {
        // d, dmin, 12 scale bytes, then 128 bytes: chunk pair j/2 shares 32 bytes (low
        // nibbles for the even chunk, high for the odd).
        return vec2(f16_at(sb) * float(scale_k4(sb + 4, j, false)), f16_at(sb + 2) * float(scale_k4(sb + 4, j, true)));
    }
    return vec2(f16_at(sb + 208), 0.0);
}
float k_weight(uint sb, uint j, uint l, vec2 dm) {
    if (TY == TY_Q4_K) {
        return dm.x * float((byte_at(sb + 16 + (j / 2) * 32 + l) >> ((j % 2) * 4)) & 15u) - dm.y;
    }
    // Q6_K: ql[128], qh[64], int8 scales[16], d. Chunk j is quarter r of half h.
    uint h = j / 4, r = j % 4;
    uint ql = sb + 64 * h + 32 * (r & 1u), qh = sb + 128 + 32 * h, sc = sb + 192 + 8 * h + 2 * r;
    int q = int(((byte_at(ql + l) >> ((r / 2) * 4)) & 15u) | (((byte_at(qh + l) >> (2 * r)) & 3u) << 4)) - 32;
    float s = float(int(byte_at(sc + l / 16) << 24) >> 24);
    return dm.x * s * float(q);
}
void dequant_k(uint sb, uint j, out float v[32]) {
    vec2 dm = k_scale(sb, j);
    [[unroll]] for (uint l = 0; l < 32; ++l) v[l] = k_weight(sb, j, l, dm);
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

// Quarter `part` (0..3) of chunk `b` of the row at byte `row`, for shaders that split a chunk
// over four invocations (ggml_mv_sub.comp): v[i] is the chunk's weight part_elem(part, i).
// Q4 blocks: byte j holds weights j and j + 16, so a quarter is bytes 4·part..4·part+3, weights
// 4·part.. and 16+4·part..; the other types: weights 8·part..8·part+7.
uint part_elem(uint part, uint i) {
    bool q4 = TY == TY_Q4_0 || TY == TY_Q4_1;
    return q4 ? (i < 4 ? 4 * part + i : 12 + 4 * part + i) : 8 * part + i;
}
void dequant_part(uint row, uint b, uint part, out float v[8]) {
    if (TY == TY_Q4_K || TY == TY_Q6_K) {
        uint sb = row + (b / 8) * (TY == TY_Q4_K ? 144u : 210u);
        vec2 dm = k_scale(sb, b % 8);
        [[unroll]] for (uint i = 0; i < 8; ++i) v[i] = k_weight(sb, b % 8, 8 * part + i, dm);
        return;
    }
    uint bb = row + b * (TY == TY_Q8_0 ? 34u : (TY == TY_Q4_1 ? 20u : 18u));
    float d = f16_at(bb);
    if (TY == TY_Q8_0) {
        [[unroll]] for (uint i = 0; i < 8; i += 2) {
            uint h = u16_at(bb + 2 + 8 * part + i);
            v[i] = d * float(int(h << 24) >> 24);
            v[i + 1] = d * float(int(h << 16) >> 24);
        }
        return;
    }
    bool q41 = TY == TY_Q4_1;
    float mn = q41 ? f16_at(bb + 2) : 0.0;
    float zero = q41 ? 0.0 : 8.0;
    uint qs = bb + (q41 ? 4u : 2u) + 4 * part;
    uint q = u16_at(qs) | (u16_at(qs + 2) << 16);
    [[unroll]] for (uint i = 0; i < 4; ++i) {
        uint by = (q >> (8 * i)) & 255u;
        v[i] = (float(by & 15u) - zero) * d + mn;
        v[i + 4] = (float(by >> 4) - zero) * d + mn;
    }
}
