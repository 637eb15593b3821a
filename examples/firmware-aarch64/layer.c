/* The layer's building blocks (see layer.h). Every step is an mlx op on arrays; each function
 * frees its temporaries on every path and returns the first failing op's status. */
#include "layer.h"

#include "mlx/c/ops.h"

#define TRY(call)      \
  do {                 \
    rc = (call);       \
    if (rc != 0) goto done; \
  } while (0)

/* Bytes per GGUF block: an f16 scale plus 32 int8 values (Q8_0) or 32 nibbles (Q4_0). */
#define Q8_0_BYTES 34
#define Q4_0_BYTES 18

/* Splits raw [rows, nb, bytes] blocks into the f16 scale as float32 [rows, nb, 1] and the
 * payload bytes [rows, nb, bytes - 2] (uint8, contiguous so it can be reinterpreted). */
static int split_blocks(mlx_array* scale, mlx_array* payload, const unsigned char* blocks,
                        int rows, int nb, int bytes, mlx_stream s) {
  int rc = 0;
  int shape[3] = {rows, nb, bytes};
  int start_d[3] = {0, 0, 0}, stop_d[3] = {rows, nb, 2};
  int start_q[3] = {0, 0, 2}, stop_q[3] = {rows, nb, bytes};
  int one[3] = {1, 1, 1};
  mlx_array raw = mlx_array_new_data(blocks, shape, 3, MLX_UINT8);
  mlx_array d = mlx_array_new();
  if (raw.ctx == 0) return 1;
  TRY(mlx_slice(&d, raw, start_d, 3, stop_d, 3, one, 3, s));
  TRY(mlx_contiguous(&d, d, false, s));
  TRY(mlx_view(&d, d, MLX_FLOAT16, s)); /* two bytes -> one f16: [rows, nb, 1] */
  TRY(mlx_astype(scale, d, MLX_FLOAT32, s));
  TRY(mlx_slice(payload, raw, start_q, 3, stop_q, 3, one, 3, s));
  TRY(mlx_contiguous(payload, *payload, false, s));
done:
  mlx_array_free(d);
  mlx_array_free(raw);
  return rc;
}

int dequant_q8_0(mlx_array* w, const unsigned char* blocks, int rows, int cols, mlx_stream s) {
  int rc = 0, nb = cols / 32;
  int out_shape[2] = {rows, cols};
  mlx_array d = mlx_array_new(), q = mlx_array_new();
  TRY(split_blocks(&d, &q, blocks, rows, nb, Q8_0_BYTES, s));
  TRY(mlx_view(&q, q, MLX_INT8, s));  /* [rows, nb, 32] signed values */
  TRY(mlx_astype(&q, q, MLX_FLOAT32, s));
  TRY(mlx_multiply(&q, q, d, s));
  TRY(mlx_reshape(w, q, out_shape, 2, s));
done:
  mlx_array_free(q);
  mlx_array_free(d);
  return rc;
}

int dequant_q4_0(mlx_array* w, const unsigned char* blocks, int rows, int cols, mlx_stream s) {
  int rc = 0, nb = cols / 32;
  int out_shape[2] = {rows, cols};
  int pair_shape[4] = {rows, nb, 1, 16};
  int shift_shape[2] = {2, 1};
  int scale_shape[4] = {rows, nb, 1, 1};
  /* Value j of a block is the low nibble of byte j (j < 16), else the high nibble of byte
   * j - 16: shifting [.., 1, 16] bytes by [[0], [4]] lays them out as [.., 2, 16] = 32 values. */
  const uint8_t shifts[2] = {0, 4};
  mlx_array d = mlx_array_new(), q = mlx_array_new();
  mlx_array sh = mlx_array_new_data(shifts, shift_shape, 2, MLX_UINT8);
  mlx_array mask = mlx_array_new_int(0xF), eight = mlx_array_new_float(8.0f);
  TRY(split_blocks(&d, &q, blocks, rows, nb, Q4_0_BYTES, s));
  TRY(mlx_reshape(&q, q, pair_shape, 4, s));
  TRY(mlx_right_shift(&q, q, sh, s));
  TRY(mlx_bitwise_and(&q, q, mask, s));
  TRY(mlx_astype(&q, q, MLX_FLOAT32, s));
  TRY(mlx_subtract(&q, q, eight, s)); /* stored as value + 8 */
  TRY(mlx_reshape(&d, d, scale_shape, 4, s));
  TRY(mlx_multiply(&q, q, d, s));
  TRY(mlx_reshape(w, q, out_shape, 2, s));
done:
  mlx_array_free(eight);
  mlx_array_free(mask);
  mlx_array_free(sh);
  mlx_array_free(q);
  mlx_array_free(d);
  return rc;
}

int linear(mlx_array* y, mlx_array x, mlx_array w, mlx_stream s) {
  int rc = 0;
  mlx_array t = mlx_array_new();
  TRY(mlx_expand_dims(&t, x, 1, s));  /* [B, 1, K] against [M, K] -> [B, M, K] */
  TRY(mlx_multiply(&t, t, w, s));
  TRY(mlx_sum_axis(y, t, -1, false, s));
done:
  mlx_array_free(t);
  return rc;
}

int rms_norm(mlx_array* r, mlx_array y, mlx_array g, float eps, mlx_stream s) {
  int rc = 0;
  mlx_array t = mlx_array_new(), e = mlx_array_new_float(eps);
  TRY(mlx_square(&t, y, s));
  TRY(mlx_mean_axis(&t, t, -1, true, s));
  TRY(mlx_add(&t, t, e, s));
  TRY(mlx_rsqrt(&t, t, s));
  TRY(mlx_multiply(&t, y, t, s));
  TRY(mlx_multiply(r, t, g, s));
done:
  mlx_array_free(e);
  mlx_array_free(t);
  return rc;
}
