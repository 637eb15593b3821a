#version 450
// out[view_o(i)] = f(a[view_a(i)]): one input of any strides, the output dense or a strided
// window of a larger buffer (slice_update). `op` selects the function (elementwise.glsl; codes in
// backends/vulkan/src/kernels.rs, UNARY table).
#include "common.glsl"
#include "elementwise.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 0) readonly buffer A { T a[]; };
layout(std430, set = 0, binding = 1) writeonly buffer O { T o[]; };
layout(push_constant) uniform P { uint n; uint ndim; uint off; uint op; uint shape[MAXD]; int st[MAXD]; uint out_off; int ost[MAXD]; } p;

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
    o[oidx] = T(unary_op(p.op, float(a[idx])));
}
