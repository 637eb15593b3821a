#version 450
// ggml_mv_sub.glsl with x computed by a FusedOp program (the SwiGLU folded into the down
// projection), computed once a workgroup into shared memory and stored by the first workgroup.
#define FUSED_X
#include "ggml_mv_sub.glsl"
