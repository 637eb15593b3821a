#version 450
// rms_norm and layer_norm: see norm.glsl.
#include "norm.glsl"
