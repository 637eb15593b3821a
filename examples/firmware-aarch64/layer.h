/* A small quantized model layer built only from the public mlx-c style API:
 *   h = x @ W1.T  (W1 in GGUF Q8_0 blocks)
 *   y = h @ W2.T  (W2 in GGUF Q4_0 blocks)
 *   r = rms_norm(y, g, eps)
 *   p = softmax(r, axis=-1)
 * The weights stay in their raw GGUF bytes; dequantization is part of the lazy graph. */
#ifndef FW_LAYER_H
#define FW_LAYER_H

#include "mlx/c/array.h"
#include "mlx/c/stream.h"

/* Dequantizes `rows` rows of `cols` values stored as GGUF Q8_0 / Q4_0 blocks (32 values per
 * block, `cols` a multiple of 32) into a float32 [rows, cols] array. */
int dequant_q8_0(mlx_array* w, const unsigned char* blocks, int rows, int cols, mlx_stream s);
int dequant_q4_0(mlx_array* w, const unsigned char* blocks, int rows, int cols, mlx_stream s);

/* x [B, K] times w [M, K] transposed: [B, M]. */
int linear(mlx_array* y, mlx_array x, mlx_array w, mlx_stream s);

/* y * rsqrt(mean(y^2, -1) + eps) * g, as mlx.core.fast.rms_norm. */
int rms_norm(mlx_array* r, mlx_array y, mlx_array g, float eps, mlx_stream s);

#endif
