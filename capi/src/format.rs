//! MLX's printed form of an array (`operator<<(std::ostream&, array)` in MLX's `utils.cpp`):
//! `array([[1, 2],\n       [3, 4]], dtype=int32)`. Floats print like C++ streams at their
//! default precision (`%g`, 6 significant digits); axes longer than 6 show their first and
//! last 3 entries around `...`; bools print `true`/`false` (the C++ default, not Python's).

use crate::error::status;
use crate::prelude::*;
use core::ffi::c_int;
use core::sync::atomic::{AtomicI32, Ordering};
use mlx_arm_core::{Array, Error, Result, Value};

/// Digits after the point for floating-point elements, or -1 for MLX's default `%g` style
/// (MLX's process-wide `set_printoptions(precision=...)`).
static PRECISION: AtomicI32 = AtomicI32::new(-1);

/// `mlx_arm_set_print_precision(precision)`: how later `mlx_array_tostring` calls print
/// floating-point elements: -1 restores MLX's default; `p >= 0` prints fixed-point with `p`
/// digits after the point (C++'s `std::fixed << std::setprecision(p)`, as MLX does).
#[no_mangle]
pub extern "C" fn mlx_arm_set_print_precision(precision: c_int) -> c_int {
    status("mlx_arm_set_print_precision", || {
        if precision < -1 {
            return Err(Error::invalid("set_printoptions", format!("precision must be -1 or non-negative, got {precision}")));
        }
        PRECISION.store(precision, Ordering::Relaxed);
        Ok(())
    })
}

/// A floating-point element at the current precision.
fn fmt_float(v: f64) -> String {
    let p = PRECISION.load(Ordering::Relaxed);
    if p < 0 || !v.is_finite() {
        return fmt_g(v);
    }
    format!("{v:.prec$}", prec = p as usize)
}

/// `%g` with 6 significant digits, as `std::ostream << double` prints.
pub fn fmt_g(v: f64) -> String {
    if v.is_nan() {
        return if v.is_sign_negative() { "-nan".into() } else { "nan".into() };
    }
    if v.is_infinite() {
        return if v < 0.0 { "-inf".into() } else { "inf".into() };
    }
    if v == 0.0 {
        return if v.is_sign_negative() { "-0".into() } else { "0".into() };
    }
    const P: i32 = 6;
    // The exponent after rounding to P significant digits decides the style.
    let sci = format!("{:.*e}", (P - 1) as usize, v);
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if exp < -4 || exp >= P {
        let mant = strip_zeros(mant);
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mant}e{sign}{:02}", exp.abs())
    } else {
        let decimals = (P - 1 - exp).max(0) as usize;
        strip_zeros(&format!("{v:.decimals$}")).to_string()
    }
}

fn strip_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

fn fmt_value(v: Value) -> String {
    match v {
        Value::Bool(b) => if b { "true" } else { "false" }.into(),
        Value::U(u) => u.to_string(),
        Value::I(i) => i.to_string(),
        Value::F(f) => fmt_float(f),
        Value::C(re, im) => {
            let re = fmt_float(re as f64);
            if im >= 0.0 || im.is_nan() {
                format!("{re}+{}j", fmt_float(im as f64))
            } else {
                format!("{re}-{}j", fmt_float(-im as f64))
            }
        }
    }
}

/// Every element as text, row-major (f16/bf16/f32 widen exactly to f64 first).
fn elements(a: &Array) -> Result<Vec<String>> {
    use mlx_arm_core::Element;
    fn all<T: Element>(a: &Array) -> Result<Vec<String>> {
        Ok(a.to_vec::<T>()?.into_iter().map(|x| fmt_value(x.to_value())).collect())
    }
    mlx_arm_core::dispatch_all!(a.dtype(), T => all::<T>(a))
}

fn sub(out: &mut String, items: &[String], shape: &[usize], strides: &[usize], base: usize, dim: usize) {
    const EDGE: usize = 3;
    let n = shape[dim];
    let last = dim + 1 == shape.len();
    let prefix = if last { String::new() } else { " ".repeat(7 + dim) };
    let postfix = if last { ", " } else { ",\n" };
    out.push('[');
    let mut i = 0;
    while i < n {
        if i > 0 {
            out.push_str(&prefix);
        }
        if i == EDGE && n > 2 * EDGE {
            out.push_str("...");
            i = n - EDGE - 1;
        } else if last {
            out.push_str(&items[base + i * strides[dim]]);
        } else {
            sub(out, items, shape, strides, base + i * strides[dim], dim + 1);
        }
        if i != n - 1 {
            out.push_str(postfix);
        }
        i += 1;
    }
    out.push(']');
}

/// The printed form of `a` (evaluates it).
pub fn array_to_string(a: &Array) -> Result<String> {
    let items = elements(a)?;
    let mut out = String::from("array(");
    if a.ndim() == 0 {
        out.push_str(items.first().map_or("", |s| s.as_str()));
    } else {
        let strides: Vec<usize> = mlx_arm_core::shape::row_major_strides(a.shape()).iter().map(|&s| s as usize).collect();
        sub(&mut out, &items, a.shape(), &strides, 0, 0);
    }
    out.push_str(", dtype=");
    out.push_str(a.dtype().name());
    out.push(')');
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::fmt_g;

    #[test]
    fn g_format_matches_printf() {
        // Expected strings are C's printf("%g") output (glibc), hand-checked.
        for (v, s) in [
            (0.5, "0.5"),
            (1.0, "1"),
            (1e10, "1e+10"),
            (1e-7, "1e-07"),
            (3.14159265, "3.14159"),
            (123456.0, "123456"),
            (1234567.0, "1.23457e+06"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (-0.0, "-0"),
            (999999.5, "1e+06"),
            (100.25, "100.25"),
            (1e100, "1e+100"),
        ] {
            assert_eq!(fmt_g(v), s, "{v}");
        }
    }
}
