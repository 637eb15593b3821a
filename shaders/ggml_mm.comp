#version 450
// ggml_matmul, 8 rows of x per workgroup (prefill): see ggml_matmul.glsl.
#define ROWS 8
#include "ggml_matmul.glsl"
