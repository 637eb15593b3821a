#version 450
// ggml_matmul, one row of x per workgroup (decode GEMV), sums added with subgroup operations:
// see ggml_matmul.glsl.
#define ROWS 1
#define SUBGROUP
#include "ggml_matmul.glsl"
