#version 450
// The one-row GGUF GEMV with a subgroup per output or two: see ggml_mv_sub.glsl.
#include "ggml_mv_sub.glsl"
