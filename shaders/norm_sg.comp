#version 450
// rms_norm and layer_norm, workgroup sums with subgroup arithmetic: see norm.glsl.
#define SUBGROUP
#include "norm.glsl"
