#version 450
// A fused elementwise program (core's FusedOp, e.g. the SwiGLU g·sigmoid(g)·u of a decode
// step) in one pass: up to 4 inputs, each dense in the output's shape or a single element,
// and up to MAX_STEPS unary/binary steps over registers (inputs first, then one per step;
// the last step's is the result). Every step's value is rounded to T, as the unfused kernels
// store it, so the result equals theirs. Step word: op code (bits 0-7), binary (bit 8),
// first argument register (bits 16-23), second (bits 24-31).
#include "common.glsl"
#include "elementwise.glsl"
#define MAX_IN 4
#define MAX_STEPS 12
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 0) readonly buffer A0 { T a0[]; };
layout(std430, set = 0, binding = 1) readonly buffer A1 { T a1[]; };
layout(std430, set = 0, binding = 2) readonly buffer A2 { T a2[]; };
layout(std430, set = 0, binding = 3) readonly buffer A3 { T a3[]; };
layout(std430, set = 0, binding = 4) writeonly buffer O { T o[]; };
layout(push_constant) uniform P {
    uint n; uint n_in; uint n_steps; uint single; uint off[MAX_IN]; uint step[MAX_STEPS];
} p;

void main() {
    uint i = linear_id(256);
    if (i >= p.n) return;
    float r[MAX_IN + MAX_STEPS];
    // An input of one element (bit k of `single`) is read at its offset for every i.
    uint e[MAX_IN];
    for (uint k = 0; k < MAX_IN; ++k) e[k] = p.off[k] + (((p.single >> k) & 1u) != 0u ? 0u : i);
    r[0] = float(a0[e[0]]);
    if (p.n_in > 1) r[1] = float(a1[e[1]]);
    if (p.n_in > 2) r[2] = float(a2[e[2]]);
    if (p.n_in > 3) r[3] = float(a3[e[3]]);
    uint last = 0;
    for (uint s = 0; s < p.n_steps; ++s) {
        uint w = p.step[s];
        uint code = w & 0xffu;
        float x = r[(w >> 16) & 0xffu];
        float v = ((w >> 8) & 1u) != 0u ? binary_op(code, x, r[w >> 24]) : unary_op(code, x);
        last = p.n_in + s;
        r[last] = float(T(v));
    }
    o[i] = T(r[last]);
}
