#version 450
// ggml_matmul, one row of x per workgroup (decode GEMV): see ggml_matmul.glsl.
#define ROWS 1
#include "ggml_matmul.glsl"
