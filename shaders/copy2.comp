#version 450
// Two strided copies in one dispatch: job j copies its input view (up to 4 axes after
// merging) into a window of its output given by output strides. A layer's two KV-cache
// writes (keys, values) are one dispatch this way (backends/vulkan/src/defer.rs); unary.comp
// takes 6 axes, but two jobs of 6 would not fit the 128 bytes of push constants.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 0) readonly buffer A { T a[]; };
layout(std430, set = 0, binding = 1) readonly buffer A2 { T a2[]; };
layout(std430, set = 0, binding = 2) writeonly buffer O { T o[]; };
layout(std430, set = 0, binding = 3) writeonly buffer O2 { T o2[]; };
// Per job: n, ndim, input offset, output offset, shape[4], input strides[4], output strides[4].
struct Job { uint n; uint ndim; uint off; uint out_off; uint shape[4]; int st[4]; int ost[4]; };
layout(push_constant) uniform P { Job j[2]; } p;

void main() {
    uint i = linear_id(256);
    uint k = i < p.j[0].n ? 0 : 1;
    if (k == 1) i -= p.j[0].n;
    if (i >= p.j[k].n) return;
    int idx = int(p.j[k].off);
    int oidx = int(p.j[k].out_off);
    uint r = i;
    for (int d = int(p.j[k].ndim) - 1; d >= 0; --d) {
        int c = int(r % p.j[k].shape[d]);
        idx += c * p.j[k].st[d];
        oidx += c * p.j[k].ost[d];
        r /= p.j[k].shape[d];
    }
    if (k == 0) o[oidx] = a[idx]; else o2[oidx] = a2[idx];
}
