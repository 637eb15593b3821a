#version 450
// Row i of the output = row ids[i] of the table (take along axis 0 with the indices on the
// device: a decode step's embedding lookup of the token the step before chose), copied as
// 32-bit words (rows of whole words). Negative indices count from the end, as on the CPU; an
// index out of range reads the nearest row (a shader cannot raise the CPU's error).
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 0) readonly buffer Tb { uint t[]; };
layout(std430, set = 0, binding = 1) readonly buffer Ib { int ids[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Ob { uint o[]; };
layout(push_constant) uniform P { uint n; uint row_words; uint rows; uint off_t; uint off_i; } p;

void main() {
    uint i = linear_id(256);
    if (i >= p.n) return;
    uint r = i / p.row_words;
    int id = ids[p.off_i + r];
    if (id < 0) id += int(p.rows);
    uint row = uint(clamp(id, 0, int(p.rows) - 1));
    o[i] = t[p.off_t + row * p.row_words + i % p.row_words];
}
