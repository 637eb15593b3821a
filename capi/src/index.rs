//! `mlx_arm_index_basic` / `mlx_arm_index_basic_update`: a whole basic index (ints, slices,
//! `None`, one `...`) in one call, for bindings whose per-call cost is dominated by resolving
//! the index in the host language (the Python package's `a[i]`, `x[..., i:j, :] = u`).
//!
//! The index is a flat list of `int64_t`, one entry after another:
//! - `0, i`: an integer (drops the axis);
//! - `1`: `None` (a new axis of size 1);
//! - `2`: the ellipsis;
//! - `8 | flags, start, stop, step`: a slice; `flags` bit 0/1/2 says start/stop/step is given
//!   (a bound not given is 0 in the list and takes Python's default).
//!
//! The window is worked out as Python's `slice.indices` does, then the result is made by the
//! same ops as the general path: one `slice` (a no-op when the window is the whole array) and
//! one `reshape` (a no-op when the shapes agree); an update broadcasts by MLX's rule (leading
//! 1s dropped) and goes through one `slice_update`. An index that is out of range, not 32-bit,
//! or malformed is an error (the binding then takes its general path, which raises MLX's own
//! message).

use crate::arg;
use crate::error::status;
use crate::prelude::*;
use crate::types::{mlx_array, mlx_stream};
use core::ffi::c_int;
use mlx_arm_core::{ops, Array, Error, Result};

const OP: &str = "mlx_arm_index_basic";
const KIND_INT: i64 = 0;
const KIND_NEW_AXIS: i64 = 1;
const KIND_ELLIPSIS: i64 = 2;
const KIND_SLICE: i64 = 8;

/// One entry of the index.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Entry {
    Int(i64),
    NewAxis,
    Ellipsis,
    Slice(Option<i64>, Option<i64>, Option<i64>),
}

/// A basic index resolved against a shape: `slice`'s three lists, the window's shape, the
/// result's shape (ints dropped, new axes added) and, per entry in order, what it did.
#[derive(Debug, PartialEq)]
struct Window {
    start: Vec<isize>,
    stop: Vec<isize>,
    step: Vec<isize>,
    shape: Vec<isize>,
    out: Vec<isize>,
    kinds: Vec<Entry>,
}

fn bad(msg: &str) -> Error {
    Error::invalid(OP, msg)
}

fn parse(spec: &[i64]) -> Result<Vec<Entry>> {
    let i32_ok = |v: i64| i64::from(i32::MIN) <= v && v <= i64::from(i32::MAX);
    let mut out = Vec::with_capacity(spec.len());
    let mut k = 0;
    while k < spec.len() {
        let code = spec[k];
        match code {
            KIND_INT => {
                let v = *spec.get(k + 1).ok_or_else(|| bad("integer entry without its value"))?;
                if !i32_ok(v) {
                    return Err(bad("indices must be 32-bit integers"));
                }
                out.push(Entry::Int(v));
                k += 2;
            }
            KIND_NEW_AXIS => {
                out.push(Entry::NewAxis);
                k += 1;
            }
            KIND_ELLIPSIS => {
                out.push(Entry::Ellipsis);
                k += 1;
            }
            c if c & !7 == KIND_SLICE => {
                let v = spec.get(k + 1..k + 4).ok_or_else(|| bad("slice entry without its three values"))?;
                let given = |bit: i64, x: i64| -> Result<Option<i64>> {
                    if c & bit == 0 {
                        return Ok(None);
                    }
                    if !i32_ok(x) {
                        return Err(bad("slice indices must be 32-bit integers"));
                    }
                    Ok(Some(x))
                };
                let step = given(4, v[2])?;
                if step == Some(0) {
                    return Err(bad("slice step cannot be zero"));
                }
                out.push(Entry::Slice(given(1, v[0])?, given(2, v[1])?, step));
                k += 4;
            }
            _ => return Err(bad("unknown index entry code")),
        }
    }
    Ok(out)
}

/// Python's `slice(b, e, st)` over `n` elements as `slice`'s three values, canonical: an empty
/// range is `0:0:1`, and a stop before the first element (negative step) is `-n - 1` (a plain
/// -1 would count from the end). The range itself is `ops::slice_extent`'s, the op's own rule.
fn python_slice(b: Option<i64>, e: Option<i64>, st: Option<i64>, n: usize) -> (isize, isize, isize, usize) {
    let (st, n) = (st.unwrap_or(1) as isize, n as isize);
    // Python's defaults: the whole axis in the step's direction.
    let (b, e) = if st > 0 { (b.map_or(0, |v| v as isize), e.map_or(n, |v| v as isize)) } else { (b.map_or(n - 1, |v| v as isize), e.map_or(-n - 1, |v| v as isize)) };
    let (first, len) = ops::slice_extent(b, e, st, n);
    if len == 0 {
        return (0, 0, 1, 0);
    }
    let stop = first + len as isize * st;
    (first, if stop < 0 { -n - 1 } else { stop }, st, len)
}

fn window(shape: &[usize], entries: Vec<Entry>) -> Result<Window> {
    let ndim = shape.len();
    let consumed = entries.iter().filter(|e| matches!(e, Entry::Int(_) | Entry::Slice(..))).count();
    let ells = entries.iter().filter(|e| **e == Entry::Ellipsis).count();
    if ells > 1 || consumed > ndim {
        return Err(bad("too many indices for the array"));
    }
    let mut w = Window { start: vec![], stop: vec![], step: vec![], shape: vec![], out: vec![], kinds: vec![] };
    let keep = |w: &mut Window, axis: usize| {
        let n = shape[axis] as isize;
        w.start.push(0);
        w.stop.push(n);
        w.step.push(1);
        w.shape.push(n);
        w.out.push(n);
        w.kinds.push(Entry::Slice(None, None, None));
    };
    let mut axis = 0;
    for e in entries {
        match e {
            Entry::Int(i) => {
                let n = shape[axis] as i64;
                if !(-n <= i && i < n) {
                    return Err(Error::index(OP, "index out of range"));
                }
                let i = if i < 0 { i + n } else { i } as isize;
                w.start.push(i);
                w.stop.push(i + 1);
                w.step.push(1);
                w.shape.push(1);
                w.kinds.push(e);
                axis += 1;
            }
            Entry::Slice(b, e_, st) => {
                let (b, e_, st, len) = python_slice(b, e_, st, shape[axis]);
                w.shape.push(len as isize);
                w.out.push(len as isize);
                w.start.push(b);
                w.stop.push(e_);
                w.step.push(st);
                w.kinds.push(e);
                axis += 1;
            }
            Entry::NewAxis => {
                w.out.push(1);
                w.kinds.push(e);
            }
            Entry::Ellipsis => {
                for _ in 0..ndim - consumed {
                    keep(&mut w, axis);
                    axis += 1;
                }
            }
        }
    }
    while axis < ndim {
        keep(&mut w, axis);
        axis += 1;
    }
    Ok(w)
}

/// The shape to give an update of shape `v` so that it broadcasts onto the window (MLX's
/// rule: leading 1s beyond `a[idx]`'s rank are dropped, then it must broadcast to it).
fn update_shape(w: &Window, v: &[usize]) -> Result<Vec<isize>> {
    let mut vs: Vec<isize> = v.iter().map(|&d| d as isize).collect();
    if vs == w.out && w.out == w.shape {
        return Ok(vs);
    }
    let lead = vs.len().saturating_sub(w.out.len());
    if vs[..lead].iter().any(|&d| d != 1) {
        return Err(bad("the update does not broadcast onto the window"));
    }
    vs.drain(..lead);
    let mut padded = vec![1; w.out.len() - vs.len()];
    padded.extend(vs);
    if padded.iter().zip(&w.out).any(|(&d, &o)| d != o && d != 1) {
        return Err(bad("the update does not broadcast onto the window"));
    }
    let mut ws = Vec::with_capacity(w.shape.len());
    let mut j = 0;
    for k in &w.kinds {
        match k {
            Entry::Int(_) => ws.push(1),
            Entry::NewAxis => j += 1, // a size-1 axis of a[idx] that the window lacks
            _ => {
                ws.push(padded[j]);
                j += 1;
            }
        }
    }
    Ok(ws)
}

unsafe fn resolve(a: &Array, index: *const i64, index_num: usize) -> Result<Window> {
    window(a.shape(), parse(arg::slice(index, index_num, "index")?)?)
}

/// `mlx_arm_index_basic`: `a[index]` for a basic index (see the module's text for the form).
///
/// # Safety
/// Handles must be empty or live; `index` must hold `index_num` values.
#[no_mangle]
pub unsafe extern "C" fn mlx_arm_index_basic(res: *mut mlx_array, a: mlx_array, index: *const i64, index_num: usize, s: mlx_stream) -> c_int {
    status(OP, || {
        let a = arg::array(a, "a")?;
        let w = resolve(&a, index, index_num)?;
        arg::stream(s)?;
        let view = ops::slice(&a, &w.start, &w.stop, &w.step)?;
        arg::set_array(res, ops::reshape(&view, &w.out)?)
    })
}

/// `mlx_arm_index_basic_update`: `src` with `src[index]` set from `update` (broadcast, cast to
/// `src`'s dtype); `src` itself when the window is empty.
///
/// # Safety
/// Handles must be empty or live; `index` must hold `index_num` values.
#[no_mangle]
pub unsafe extern "C" fn mlx_arm_index_basic_update(
    res: *mut mlx_array,
    src: mlx_array,
    update: mlx_array,
    index: *const i64,
    index_num: usize,
    s: mlx_stream,
) -> c_int {
    status("mlx_arm_index_basic_update", || {
        let src = arg::array(src, "src")?;
        let update = arg::array(update, "update")?;
        let w = resolve(&src, index, index_num)?;
        let ws = update_shape(&w, update.shape())?;
        arg::stream(s)?;
        if w.shape.contains(&0) {
            return arg::set_array(res, src);
        }
        let v = ops::reshape(&update, &ws)?;
        arg::set_array(res, ops::slice_update(&src, &v, &w.start, &w.stop, &w.step)?)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn win(shape: &[usize], spec: &[i64]) -> Result<Window> {
        window(shape, parse(spec)?)
    }

    #[test]
    fn slices_follow_python_indices() {
        // x[..., 3:4, :] on (1, 2, 16, 4)
        let w = win(&[1, 2, 16, 4], &[2, 8 | 3, 3, 4, 0, 8, 0, 0, 0]).unwrap();
        assert_eq!((w.start, w.stop, w.step), (vec![0, 0, 3, 0], vec![1, 2, 4, 4], vec![1, 1, 1, 1]));
        assert_eq!(w.out, vec![1, 2, 1, 4]);
        // a[::-1] on (5,): start 4, stop "before the first" (-6), step -1
        let w = win(&[5], &[8 | 4, 0, 0, -1]).unwrap();
        assert_eq!((w.start, w.stop, w.step, w.out), (vec![4], vec![-6], vec![-1], vec![5]));
        // a[7:2] is empty: 0, 0, 1
        let w = win(&[5], &[8 | 3, 7, 2, 0]).unwrap();
        assert_eq!((w.start, w.stop, w.step, w.out), (vec![0], vec![0], vec![1], vec![0]));
        // a[-2, None] on (3, 2): row 1, a new axis, the last axis kept
        let w = win(&[3, 2], &[0, -2, 1]).unwrap();
        assert_eq!((w.start, w.stop, w.out), (vec![1, 0], vec![2, 2], vec![1, 2]));
    }

    #[test]
    fn bad_indices_are_errors() {
        assert!(win(&[3], &[0, 3]).is_err()); // out of range
        assert!(win(&[3], &[0, 0, 0, 0]).is_err()); // too many
        assert!(win(&[3], &[2, 2]).is_err()); // two ellipses
        assert!(win(&[3], &[8 | 4, 0, 0, 0]).is_err()); // step 0
        assert!(win(&[3], &[0, 1 << 40]).is_err()); // not 32-bit
        assert!(win(&[3], &[8 | 1, 0]).is_err()); // truncated
        assert!(win(&[3], &[5]).is_err()); // unknown code
    }

    #[test]
    fn update_shapes_broadcast_as_mlx() {
        let w = win(&[1, 2, 16, 4], &[2, 8 | 3, 3, 4, 0, 8, 0, 0, 0]).unwrap();
        assert_eq!(update_shape(&w, &[1, 2, 1, 4]).unwrap(), vec![1, 2, 1, 4]);
        assert_eq!(update_shape(&w, &[4]).unwrap(), vec![1, 1, 1, 4]);
        assert!(update_shape(&w, &[2, 1, 2, 1, 4]).is_err());
        let w = win(&[3, 2], &[0, 1]).unwrap(); // a[1] = v: the window is (1, 2)
        assert_eq!(update_shape(&w, &[1, 2]).unwrap(), vec![1, 2]);
        assert!(update_shape(&w, &[3]).is_err());
    }
}
