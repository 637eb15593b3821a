#version 450
// out[i] = f(a[view_a(i)], b[view_b(i)]): broadcast/strided inputs, dense output. `op` (elementwise.glsl)
// codes in backends/vulkan/src/kernels.rs (BINARY table).
#include "common.glsl"
#include "elementwise.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 0) readonly buffer A { T a[]; };
layout(std430, set = 0, binding = 1) readonly buffer B { T b[]; };
layout(std430, set = 0, binding = 2) writeonly buffer O { T o[]; };
layout(push_constant) uniform P {
    uint n; uint ndim; uint off_a; uint off_b; uint op;
    uint shape[MAXD]; int sa[MAXD]; int sb[MAXD];
} p;

void main() {
    uint i = linear_id(256);
    if (i >= p.n) return;
    int ia = int(p.off_a);
    int ib = int(p.off_b);
    uint r = i;
    for (int d = int(p.ndim) - 1; d >= 0; --d) {
        int q = int(r % p.shape[d]);
        ia += q * p.sa[d];
        ib += q * p.sb[d];
        r /= p.shape[d];
    }
    o[i] = T(binary_op(p.op, float(a[ia]), float(b[ib])));
}
