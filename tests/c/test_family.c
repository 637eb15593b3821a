/* random.h, fast.h, linalg.h and the later ops.h families (products, convolution,
 * quantization, joining/splitting, padding, diagonals, comparisons) through the C API, against
 * values computed by real MLX (family_golden.inc, made by gen_family_golden.py), plus error
 * cases: each must return non-zero and send one message to the error handler. */
#include "golden_support.h"

#include "family_golden.inc"

int main(void) { return run_golden_cases("test_family", golden_cases, golden_count); }
