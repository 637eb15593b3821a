// The element functions of unary.comp, binary.comp and fused.comp, by op code (the codes of
// backends/vulkan/src/kernels.rs's unary_code / binary_code), computed in float32.
float unary_op(uint op, float x) {
    switch (op) {
    case 0: return x;
    case 1: return abs(x);
    case 2: return -x;
    case 3: return sign(x);
    case 4: return x * x;
    case 5: return sqrt(x);
    case 6: return inversesqrt(x);
    case 7: return 1.0 / x;
    case 8: return exp(x);
    case 9: return log(x);
    case 10: return sin(x);
    case 11: return cos(x);
    case 12: return tanh(x);
    case 13: return 1.0 / (1.0 + exp(-x));
    case 14: return floor(x);
    case 15: return ceil(x);
    }
    return x;
}

float binary_op(uint op, float x, float y) {
    switch (op) {
    case 0: return x + y;
    case 1: return x - y;
    case 2: return x * y;
    case 3: return x / y;
    case 4: return (isnan(x) || isnan(y)) ? x + y : max(x, y);
    case 5: return (isnan(x) || isnan(y)) ? x + y : min(x, y);
    }
    return 0.0;
}
