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
