#version 450
// ggml_mv_sub.glsl with x the rms_norm of one row (after a residual add, or not), computed
// once a workgroup into shared memory as norm_sg.comp computes it; the first workgroup stores
// the norm and the sum (a decode step's add + rms_norm folded into the next GEMV).
#define NORM_X
#include "ggml_mv_sub.glsl"
