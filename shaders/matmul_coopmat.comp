#version 450
// variants: f16
// C[b] = A[b] @ B[b] in float16 on tensor cores (VK_NV_cooperative_matrix): float16 inputs,
// float32 accumulation, float16 output. Same push constants as matmul.comp; the host picks this
// shader only where its layout rules hold (kernels.rs, `coopmat_layout`):
// - each operand is row-major (column stride 1) or column-major (row stride 1), its other
//   stride, its offset and its batch strides multiples of 8 elements, and its contiguous extent
//   a multiple of 8 (so every 16-byte chunk is wholly inside or outside the matrix);
// - the subgroup has 32 invocations (8 subgroups per workgroup).
// A 128x128 output tile per workgroup of 8 subgroups (2 x 4, each 64x32); 32-deep K slices are
// staged in shared memory as 16-byte chunks in the operand's own layout (the cooperative load
// takes row- or column-major), double-buffered: the next slice's global reads are issued before
// the current slice's multiply-adds and stored after them, one barrier per slice. Tails in M, N
// and K read as zeros; the result goes out through shared memory with bounds checks.
// The fragment shape (lM x lN x lK) is a specialization constant: what the driver reports.
// Measured on an H200 at 4096^3 (docs/BENCHMARKS.md): this tiling beat 128x256 / 256x128 tiles
// (8 subgroups of 64x64 or 128x32, 16-deep slices), 4 subgroups of 64x64, and 64x128 tiles.
#extension GL_EXT_shader_16bit_storage : enable
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : enable
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_KHR_shader_subgroup_basic : enable
#extension GL_NV_cooperative_matrix : enable
#extension GL_EXT_control_flow_attributes : enable
layout(constant_id = 0) const uint lM = 16;
layout(constant_id = 1) const uint lN = 8;
layout(constant_id = 2) const uint lK = 16;
// Operand layouts, fixed per pipeline (a branch per load costs a quarter of the speed): A
// row-major (K contiguous) or column-major (M contiguous); B row-major (N contiguous) or
// column-major (K contiguous).
layout(constant_id = 3) const bool a_rm = true;
layout(constant_id = 4) const bool b_rm = true;
layout(std430, set = 0, binding = 0) readonly buffer A { uvec4 a[]; };
layout(std430, set = 0, binding = 1) readonly buffer B { uvec4 b[]; };
layout(std430, set = 0, binding = 2) writeonly buffer C { float16_t c[]; };
layout(std430, set = 0, binding = 2) writeonly buffer C4 { uvec4 c4[]; };
layout(push_constant) uniform P {
    uint M; uint N; uint K; uint off_a; uint off_b;
    int a_rs; int a_cs; int b_rs; int b_cs;
    uint nb1; int a_bs0; int a_bs1; int b_bs0; int b_bs1;
} p;

// Tile sizes (kernels.rs's COOP_TILE_M/N must match); -D overrides them for experiments.
#ifndef TILE_M
#define TILE_M 128
#define TILE_N 128
#define SUB_M 64
#define SUB_N 32
#endif
// One subgroup of 32 invocations per SUB_M x SUB_N block of the tile.
#define THREADS (TILE_M / SUB_M * TILE_N / SUB_N * 32)
layout(local_size_x = THREADS) in;
const uint BM = TILE_M;
const uint BN = TILE_N;
#ifndef TILE_K
#define TILE_K 32
#endif
const uint BK = TILE_K;
const uint WM = SUB_M;  // one subgroup's rows
const uint WN = SUB_N;  // one subgroup's columns
const uint FM = WM / lM;
const uint FN = WN / lN;
// Shared rows are padded by one chunk (8 halves) so a column of fragments spreads over banks.
// A slice of A is BM rows x BK (row-major) or BK rows x BM (column-major), B likewise with BN:
// each slice takes the larger of its two padded layouts, in 16-byte chunks.
const uint ROWK = BK / 8 + 1;   // chunks per padded row of a K-contiguous slice
const uint ROWAM = BM / 8 + 1;  // ... of an M-contiguous slice of A
const uint ROWBN = BN / 8 + 1;  // ... of an N-contiguous slice of B
const uint SLICE_A = (BM * ROWK > BK * ROWAM) ? BM * ROWK : BK * ROWAM;
const uint SLICE_B = (BN * ROWK > BK * ROWBN) ? BN * ROWK : BK * ROWBN;
const uint STAGE = SLICE_A + SLICE_B;
// Two stages; the output tile (BM x (BN + 8) halves) reuses the space, in bands of rows (each a
// whole number of subgroup blocks) where it is larger.
const uint OUTROW = BN / 8 + 1;
const uint BAND = (BM * OUTROW <= 2 * STAGE) ? BM : (BM / 2 * OUTROW <= 2 * STAGE) ? BM / 2 : WM;
const uint SMEM = (2 * STAGE > BAND * OUTROW) ? 2 * STAGE : BAND * OUTROW;
shared uvec4 sm[SMEM];

// Chunk `e` of a slice of operand `buf`, or zeros outside the matrix. The slice's chunks run
// over the contiguous (inner) axis fastest, `per` to a slice row. `base`: element offset of the
// batch's matrix; `so`: the outer axis's stride (the inner one's is 1); outer0/inner0: the
// slice's origin; nouter/ninner: the matrix's extents.
#define READ_CHUNK(name, buf)                                                                        \
    uvec4 name(uint e, int base, int so, uint outer0, uint inner0, uint nouter, uint ninner, uint per) { \
        uint o = outer0 + e / per;                                                                   \
        uint i = inner0 + (e % per) * 8;                                                             \
        if (o >= nouter || i >= ninner) return uvec4(0);                                             \
        return buf[(base + int(o) * so + int(i)) >> 3];                                              \
    }
READ_CHUNK(read_a, a)
READ_CHUNK(read_b, b)

void main() {
    uint tid = gl_LocalInvocationID.x;
    uint sg = gl_SubgroupID;
    uint batch = gl_WorkGroupID.z;
    uint row0 = gl_WorkGroupID.y * BM;
    uint col0 = gl_WorkGroupID.x * BN;
    int b0 = int(batch / p.nb1);
    int b1 = int(batch % p.nb1);
    int abase = int(p.off_a) + b0 * p.a_bs0 + b1 * p.a_bs1;
    int bbase = int(p.off_b) + b0 * p.b_bs0 + b1 * p.b_bs1;

    // Per slice: (outer, inner) extents in the slice and chunks per slice row.
    uint a_per = a_rm ? BK / 8 : BM / 8;
    uint a_pad = a_rm ? ROWK : ROWAM;
    uint b_per = b_rm ? BN / 8 : BK / 8;
    uint b_pad = b_rm ? ROWBN : ROWK;
    int a_so = a_rm ? p.a_rs : p.a_cs;
    int b_so = b_rm ? p.b_rs : p.b_cs;
    const uint CHA = BM * BK / 8 / THREADS;  // chunks of A per invocation per slice
    const uint CHB = BN * BK / 8 / THREADS;

    uint wm = (sg / (BN / WN)) * WM;  // the subgroup's tile inside the workgroup's
    uint wn = (sg % (BN / WN)) * WN;

    fcoopmatNV<32, gl_ScopeSubgroup, lM, lN> acc[FM][FN];
    [[unroll]] for (uint i = 0; i < FM; ++i)
        [[unroll]] for (uint j = 0; j < FN; ++j) acc[i][j] = fcoopmatNV<32, gl_ScopeSubgroup, lM, lN>(0.0);

    uvec4 ra[CHA];
    uvec4 rb[CHB];
    // Fetch slice at k0 into registers.
#define FETCH(k0)                                                                                    \
    [[unroll]] for (uint q = 0; q < CHA; ++q) {                                                      \
        uint e = tid + q * THREADS;                                                                    \
        ra[q] = a_rm ? read_a(e, abase, a_so, row0, k0, p.M, p.K, a_per)                             \
                     : read_a(e, abase, a_so, k0, row0, p.K, p.M, a_per);                            \
    }                                                                                                \
    [[unroll]] for (uint q = 0; q < CHB; ++q) {                                                      \
        uint e = tid + q * THREADS;                                                                    \
        rb[q] = b_rm ? read_b(e, bbase, b_so, k0, col0, p.K, p.N, b_per)                             \
                     : read_b(e, bbase, b_so, col0, k0, p.N, p.K, b_per);                            \
    }
    // Store the registers into shared stage `s`.
#define STASH(s)                                                                                     \
    [[unroll]] for (uint q = 0; q < CHA; ++q) {                                                      \
        uint e = tid + q * THREADS;                                                                    \
        sm[(s) * STAGE + (e / a_per) * a_pad + e % a_per] = ra[q];                                   \
    }                                                                                                \
    [[unroll]] for (uint q = 0; q < CHB; ++q) {                                                      \
        uint e = tid + q * THREADS;                                                                    \
        sm[(s) * STAGE + SLICE_A + (e / b_per) * b_pad + e % b_per] = rb[q];                         \
    }

    uint nk = (p.K + BK - 1) / BK;
    FETCH(0)
    STASH(0)
    barrier();
    for (uint kt = 0; kt < nk; ++kt) {
        uint cur = kt & 1;
        if (kt + 1 < nk) {
            FETCH((kt + 1) * BK)
        }
        uint abuf = cur * STAGE;
        uint bbuf = abuf + SLICE_A;
        [[unroll]] for (uint kk = 0; kk < BK; kk += lK) {
            fcoopmatNV<16, gl_ScopeSubgroup, lM, lK> fa[FM];
            fcoopmatNV<16, gl_ScopeSubgroup, lK, lN> fb[FN];
            // Element offsets and strides in 16-byte chunks (8 halves); lM, lN, lK are
            // multiples of 8.
            [[unroll]] for (uint i = 0; i < FM; ++i) {
                uint m = wm + i * lM;
                if (a_rm)
                    coopMatLoadNV(fa[i], sm, abuf + m * ROWK + kk / 8, ROWK, false);
                else
                    coopMatLoadNV(fa[i], sm, abuf + kk * ROWAM + m / 8, ROWAM, true);
            }
            [[unroll]] for (uint j = 0; j < FN; ++j) {
                uint n = wn + j * lN;
                if (b_rm)
                    coopMatLoadNV(fb[j], sm, bbuf + kk * ROWBN + n / 8, ROWBN, false);
                else
                    coopMatLoadNV(fb[j], sm, bbuf + n * ROWK + kk / 8, ROWK, true);
            }
            [[unroll]] for (uint i = 0; i < FM; ++i)
                [[unroll]] for (uint j = 0; j < FN; ++j) acc[i][j] = coopMatMulAddNV(fa[i], fb[j], acc[i][j]);
        }
        if (kt + 1 < nk) {
            STASH(cur ^ 1)
        }
        barrier();
    }

    // The tile as float16 through shared memory (bands of BAND rows of OUTROW chunks), then out.
    uint cbase = batch * p.M * p.N;
    bool vec = p.N % 8 == 0;
    [[unroll]] for (uint band = 0; band < BM; band += BAND) {
        if (band > 0) barrier();  // the last band's copy-out is done with the space
        if (wm >= band && wm < band + BAND) {
            [[unroll]] for (uint i = 0; i < FM; ++i)
                [[unroll]] for (uint j = 0; j < FN; ++j) {
                    fcoopmatNV<16, gl_ScopeSubgroup, lM, lN> h = fcoopmatNV<16, gl_ScopeSubgroup, lM, lN>(acc[i][j]);
                    coopMatStoreNV(h, sm, (wm - band + i * lM) * OUTROW + (wn + j * lN) / 8, OUTROW, false);
                }
        }
        barrier();
        for (uint e = tid; e < BAND * BN / 8; e += THREADS) {
            uint r = row0 + band + e / (BN / 8);
            uint cc = col0 + (e % (BN / 8)) * 8;
            if (r >= p.M || cc >= p.N) continue;
            uvec4 v = sm[(e / (BN / 8)) * OUTROW + e % (BN / 8)];
            uint at = cbase + r * p.N + cc;
            if (vec) {
                c4[at >> 3] = v;
            } else {
                f16vec2 h[4] = f16vec2[4](unpackFloat2x16(v.x), unpackFloat2x16(v.y), unpackFloat2x16(v.z), unpackFloat2x16(v.w));
                for (uint t = 0; t < 8 && cc + t < p.N; ++t) c[at + t] = h[t / 2][t % 2];
            }
        }
    }
}
