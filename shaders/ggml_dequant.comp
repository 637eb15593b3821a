#version 450
// ggml_dequantize (core's op): n rows of GGUF blocks (`row_bytes` each, from byte off_w) to
// float32, as ggml's dequantize_row_* does. One invocation per chunk of 32 weights. The model
// runs it on the embedding rows a decode step gathers, so the lookup stays on the GPU.
#extension GL_EXT_control_flow_attributes : enable
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 0) readonly buffer W { uint w[]; };
layout(std430, set = 0, binding = 1) writeonly buffer O { float o[]; };
layout(push_constant) uniform P {
    uint chunks; uint k; uint row_bytes; uint off_w;
} p;
#include "ggml_blocks.glsl"

void main() {
    uint c = linear_id(256);
    if (c >= p.chunks) return;
    uint per_row = p.k / 32;
    uint row = c / per_row, b = c % per_row;
    float v[32];
    dequant_chunk(p.off_w + row * p.row_bytes, b, v);
    uint base = row * p.k + b * 32;
    [[unroll]] for (uint l = 0; l < 32; ++l) o[base + l] = v[l];
}
