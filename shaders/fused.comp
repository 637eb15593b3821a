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

#include "fused_program.glsl"

void main() {
    uint i = linear_id(256);
    if (i >= p.n) return;
    o[i] = T(fused_at(i));
}
