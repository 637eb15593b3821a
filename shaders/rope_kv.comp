#version 450
// A decode step's rope of queries and keys plus its KV-cache write (keys and values into
// their windows), one dispatch: see rope.glsl.
#define KV
#include "rope.glsl"
