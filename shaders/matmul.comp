#version 450
// C[b] = A[b] @ B[b], A: [M, K], B: [K, N] with any row/column strides (transposes are free),
// batch index b = b0 * nb1 + b1 with a stride per batch axis (broadcast batches: stride 0);
// dense output [batch, M, N]. 64x64 output tile per workgroup of 256
// invocations, each computing a 4x4 block; 16-deep K slices staged in shared memory.
// Accumulates in float32.
#include "common.glsl"
layout(local_size_x = 16, local_size_y = 16) in;
layout(std430, set = 0, binding = 0) readonly buffer A { T a[]; };
layout(std430, set = 0, binding = 1) readonly buffer B { T b[]; };
layout(std430, set = 0, binding = 2) writeonly buffer C { T c[]; };
layout(push_constant) uniform P {
    uint M; uint N; uint K; uint off_a; uint off_b;
    int a_rs; int a_cs; int b_rs; int b_cs;
    uint nb1; int a_bs0; int a_bs1; int b_bs0; int b_bs1;
} p;
const uint TM = 64;
const uint TN = 64;
const uint TK = 16;
shared float As[TK][TM];
shared float Bs[TK][TN];

void main() {
    uint batch = gl_WorkGroupID.z;
    uint tx = gl_LocalInvocationID.x;
    uint ty = gl_LocalInvocationID.y;
    uint tid = ty * 16 + tx;
    uint row0 = gl_WorkGroupID.y * TM;
    uint col0 = gl_WorkGroupID.x * TN;
    int b0 = int(batch / p.nb1);
    int b1 = int(batch % p.nb1);
    int abase = int(p.off_a) + b0 * p.a_bs0 + b1 * p.a_bs1;
    int bbase = int(p.off_b) + b0 * p.b_bs0 + b1 * p.b_bs1;
    float acc[4][4];
    for (int i = 0; i < 4; ++i) for (int j = 0; j < 4; ++j) acc[i][j] = 0.0;
    for (uint k0 = 0; k0 < p.K; k0 += TK) {
        // 1024 elements of each tile, 4 per invocation.
        for (uint e = tid; e < TK * TM; e += 256) {
            uint kk = e / TM, mm = e % TM;
            uint gr = row0 + mm, gk = k0 + kk;
            As[kk][mm] = (gr < p.M && gk < p.K) ? float(a[abase + int(gr) * p.a_rs + int(gk) * p.a_cs]) : 0.0;
            uint nn = e % TN;
            uint gc = col0 + nn;
            Bs[kk][nn] = (gc < p.N && gk < p.K) ? float(b[bbase + int(gk) * p.b_rs + int(gc) * p.b_cs]) : 0.0;
        }
        barrier();
        for (uint kk = 0; kk < TK; ++kk) {
            float av[4];
            float bv[4];
            for (int i = 0; i < 4; ++i) av[i] = As[kk][ty + 16 * i];
            for (int j = 0; j < 4; ++j) bv[j] = Bs[kk][tx + 16 * j];
            for (int i = 0; i < 4; ++i) for (int j = 0; j < 4; ++j) acc[i][j] += av[i] * bv[j];
        }
        barrier();
    }
    for (int i = 0; i < 4; ++i) {
        uint r = row0 + ty + 16 * i;
        if (r >= p.M) continue;
        for (int j = 0; j < 4; ++j) {
            uint cc = col0 + tx + 16 * j;
            if (cc < p.N) c[(batch * p.M + r) * p.N + cc] = T(acc[i][j]);
        }
    }
}
