//! `array::array_buffer_size` (MLX's `get_array_buffer_size`), hand-computed cases: each
//! buffer counted once however many arrays view it; an unevaluated array is an error.

use mlx_arm_core::array::array_buffer_size;
use mlx_arm_core::{ops, Array};

#[test]
fn distinct_buffers_are_counted_once() {
    let a = Array::from_slice(&[1f32, 2., 3., 4., 5., 6.], &[2, 3]).unwrap();
    let b = Array::from_slice(&[1i32, 2], &[2]).unwrap();
    a.eval().unwrap();
    b.eval().unwrap();
    // A transpose is a view of a's buffer: 24 bytes once, plus b's 8.
    let t = ops::transpose(&a, None).unwrap();
    t.eval().unwrap();
    assert_eq!(array_buffer_size(&[a.clone(), t.clone(), b.clone()]).unwrap(), 24 + 8);
    assert_eq!(array_buffer_size(&[t]).unwrap(), 24);
    assert_eq!(array_buffer_size(&[]).unwrap(), 0);
}

#[test]
fn an_unevaluated_array_is_an_error() {
    let a = Array::from_slice(&[1f32, 2.], &[2]).unwrap();
    let lazy = ops::add(&a, &a).unwrap();
    let err = array_buffer_size(&[lazy.clone()]).unwrap_err();
    assert!(err.to_string().contains("Arrays must be evaluated before querying buffer size."), "{err}");
    // Nothing was evaluated by the query.
    assert!(!lazy.is_available());
}
