#version 450
// ggml_matmul, 8 rows of x per workgroup (prefill), sums added with subgroup operations:
// see ggml_matmul.glsl.
#define ROWS 8
#define SUBGROUP
#include "ggml_matmul.glsl"
