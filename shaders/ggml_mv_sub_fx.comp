#version 450
// ggml_mv_sub.glsl with x computed by a FusedOp program (the SwiGLU folded into the down
// projection) and stored by the first subgroup.
#define FUSED_X
#include "ggml_mv_sub.glsl"
