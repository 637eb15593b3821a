//! `mx.convolve(a, v, mode)`: the discrete (flipped-kernel) convolution of two 1-D arrays,
//! built as MLX 0.32's Python binding builds it — the longer array is the signal, the shorter
//! one, reversed, the kernel of a `conv1d` over `[1, n, 1]`; `"same"` with an even kernel pads
//! the signal asymmetrically (`k/2` before, `k/2 − 1` after).

use super::conv::conv1d;
use crate::array::Array;
use crate::error::{Error, Result};
use crate::ops::{flip, pad, reshape, PadMode};

/// `mx.convolve(a, v, mode="full"|"same"|"valid")`. Non-1-D or empty inputs and an unknown
/// mode are ValueErrors; non-float inputs fail in `conv1d` with MLX's message.
pub fn convolve(a: &Array, v: &Array, mode: &str) -> Result<Array> {
    const OP: &str = "convolve";
    if a.ndim() != 1 || v.ndim() != 1 {
        return Err(Error::invalid(OP, "Inputs must be 1D."));
    }
    if a.size() == 0 || v.size() == 0 {
        return Err(Error::invalid(OP, "Inputs cannot be empty."));
    }
    let (signal, kernel) = if a.size() < v.size() { (v, a) } else { (a, v) };
    let k = kernel.size();
    let mut x = reshape(signal, &[1, -1, 1])?;
    let w = reshape(&flip(kernel, None)?, &[1, -1, 1])?;
    let padding = match mode {
        "full" => k - 1,
        "valid" => 0,
        "same" if k % 2 == 1 => k / 2,
        "same" => {
            let (l, r) = (k / 2, (k / 2).saturating_sub(1));
            x = pad(&x, &[(0, 0), (l, r), (0, 0)], PadMode::Constant, &Array::scalar(0i32)?)?;
            0
        }
        _ => return Err(Error::invalid(OP, "Invalid mode.")),
    };
    let out = conv1d(&x, &w, 1, padding as isize, 1, 1)?;
    reshape(&out, &[-1])
}
