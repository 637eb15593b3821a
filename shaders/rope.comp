#version 450
// mx.fast.rope: see rope.glsl.
#include "rope.glsl"
