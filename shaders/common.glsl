// Shared by every compute shader: the element type T (float32, or float16 with -DF16) and
// how a strided view's element index is found from a row-major linear index.
#extension GL_EXT_shader_16bit_storage : enable
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : enable
#ifdef F16
#define T float16_t
#else
#define T float
#endif
#define MAXD 6

// Invocation index over a 2-D grid (x runs over 65535 groups at most).
uint linear_id(uint group_size) {
    return gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * group_size;
}
