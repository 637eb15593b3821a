//! The lazy graph: evaluation, views, donation, deep graphs and memory release.

use mlx_arm_core::{buffer, ops, Array, DType, ErrorKind};

#[test]
fn ops_are_lazy_and_eval_materializes() {
    let a = Array::from_slice(&[1.0f32, 2.0, 3.0], &[3]).unwrap();
    let b = ops::multiply(&a, &a).unwrap();
    assert!(!b.is_available());
    b.eval().unwrap();
    assert!(b.is_available());
    assert_eq!(b.to_vec::<f32>().unwrap(), [1.0, 4.0, 9.0]);
}

#[test]
fn deep_chain_of_100k_adds_evaluates_and_drops_without_overflow() {
    // Run on a thread with a small stack, as an embedded target would have.
    std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(|| {
            let one = Array::scalar(1.0f32).unwrap();
            let mut x = Array::from_slice(&[0.0f32; 4], &[4]).unwrap();
            for _ in 0..100_000 {
                x = ops::add(&x, &one).unwrap();
            }
            assert_eq!(x.to_vec::<f32>().unwrap(), [100_000.0; 4]);
            // A second, never-evaluated chain must also drop iteratively.
            let mut y = Array::scalar(0i32).unwrap();
            for _ in 0..100_000 {
                y = ops::negative(&y).unwrap();
            }
            drop(y);
        })
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn evaluating_in_a_loop_does_not_grow_memory() {
    let w = Array::from_slice(&vec![0.5f32; 4096], &[64, 64]).unwrap();
    let step = || {
        let x = ops::exp(&ops::add(&w, &Array::scalar(1.0f32).unwrap()).unwrap()).unwrap();
        let s = ops::sum(&x, None, false).unwrap();
        s.eval().unwrap();
    };
    step();
    let before = buffer::active_memory();
    for _ in 0..200 {
        step();
    }
    // Other tests allocate concurrently; allow slack but no per-iteration growth.
    assert!(buffer::active_memory() <= before + (1 << 20), "{} -> {}", before, buffer::active_memory());
}

#[test]
fn views_share_buffers_and_read_strided() {
    let a = Array::from_slice(&(0..6).collect::<Vec<i32>>(), &[2, 3]).unwrap();
    let t = ops::transpose(&a, None).unwrap();
    assert_eq!(t.shape(), &[3, 2]);
    assert_eq!(t.to_vec::<i32>().unwrap(), [0, 3, 1, 4, 2, 5]);
    let s = ops::slice(&a, &[0, 2], &[2, -4], &[1, -1]).unwrap();
    assert_eq!(s.to_vec::<i32>().unwrap(), [2, 1, 0, 5, 4, 3]);
    let b = ops::broadcast_to(&Array::from_slice(&[1i32, 2], &[2, 1]).unwrap(), &[2, 3]).unwrap();
    assert_eq!(b.to_vec::<i32>().unwrap(), [1, 1, 1, 2, 2, 2]);
    assert!(Array::ptr_eq_data(&a, &t));
}

#[test]
fn errors_are_tagged_and_nothing_panics() {
    let a = Array::from_slice(&[1.0f32; 6], &[2, 3]).unwrap();
    let e = ops::reshape(&a, &[4]).unwrap_err();
    assert_eq!(e.to_string(), "[reshape] Cannot reshape array of size 6 into shape (4).");
    assert_eq!(e.kind, ErrorKind::InvalidArgument);
    assert!(ops::add(&a, &Array::from_slice(&[1.0f32; 4], &[4]).unwrap()).is_err());
    assert!(ops::transpose(&a, Some(&[0, 5])).is_err());
    assert!(ops::sum(&a, Some(&[2]), false).is_err());
    // An allocation that can never be satisfied is an error, not an abort.
    let e = ops::contiguous(&ops::broadcast_to(&Array::scalar(1u8).unwrap(), &[1 << 40, 1 << 20]).unwrap())
        .unwrap()
        .eval()
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::OutOfMemory);
    // A kernel that must copy a huge broadcast input (here into `add`) fails the same way:
    // the copy is allocated fallibly before the output (on bare metal this used to panic).
    let huge = ops::broadcast_to(&Array::scalar(1.0f32).unwrap(), &[1 << 30, 1 << 20]).unwrap();
    let e = ops::add(&huge, &Array::scalar(1.0f32).unwrap()).unwrap().eval().unwrap_err();
    assert_eq!(e.kind, ErrorKind::OutOfMemory);
    assert!(ops::zeros(&[usize::MAX, 4], DType::Float32).is_err());
}

#[test]
fn failed_evaluation_is_sticky_not_a_panic() {
    let big = ops::contiguous(&ops::broadcast_to(&Array::scalar(1.0f64).unwrap(), &[1 << 45]).unwrap()).unwrap();
    let y = ops::add(&big, &big).unwrap();
    assert!(y.eval().is_err());
    assert!(y.eval().is_err());
}
