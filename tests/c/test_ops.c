/* Every op family through the C API, against values computed by real MLX (ops_golden.inc,
 * made by gen_ops_golden.py), plus the error cases MLX also rejects. */
#include "golden_support.h"

#include "ops_golden.inc"

int main(void) { return run_golden_cases("test_ops", golden_cases, golden_count); }
