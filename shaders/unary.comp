#version 450
// out[view_o(i)] = f(a[view_a(i)]): one input of any strides, the output dense or a strided
// window of a larger buffer (slice_update). `op` selects f (codes in
// backends/vulkan/src/kernels.rs, UNARY table).
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 0) readonly buffer A { T a[]; };
layout(std430, set = 0, binding = 1) writeonly buffer O { T o[]; };
layout(push_constant) uniform P { uint n; uint ndim; uint off; uint op; uint shape[MAXD]; int st[MAXD]; uint out_off; int ost[MAXD]; } p;

float f(float x) {
    switch (p.op) {
    case 0: return x;
    case 1: return abs(x);
    case 2: return -x;
    case 3: return sign(x);
    case 4: return x * x;
    case 5: return sqrt(x);
    case 6: return inversesqrt(x);
    case 7: return 1.0 / x;
    case 8: return exp(x);
    case 9: return log(x);
    case 10: return sin(x);
    case 11: return cos(x);
    case 12: return tanh(x);
    case 13: return 1.0 / (1.0 + exp(-x));
    case 14: return floor(x);
    case 15: return ceil(x);
    }
    return x;
}

void main() {
    uint i = linear_id(256);
    if (i >= p.n) return;
    int idx = int(p.off);
    int oidx = int(p.out_off);
    uint r = i;
    for (int d = int(p.ndim) - 1; d >= 0; --d) {
        int c = int(r % p.shape[d]);
        idx += c * p.st[d];
        oidx += c * p.ost[d];
        r /= p.shape[d];
    }
    o[oidx] = T(f(float(a[idx])));
}
