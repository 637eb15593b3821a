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
fn shared_inputs_run_before_every_reader_whichever_path_reaches_them_first() {
    // A Fibonacci ladder: f_i = f_{i-1} + f_{i-2}, so every node is an input of the next two
    // and is reached first through the long path and again through the short one; a tape that
    // placed a node where it was first seen rather than after all its inputs would read an
    // unevaluated array. Several roots at once share the whole ladder; values are exact in f64.
    let mut f = vec![Array::from_slice(&[0.0f64, 1.0], &[2]).unwrap(), Array::from_slice(&[1.0f64, 1.0], &[2]).unwrap()];
    for i in 2..80 {
        let next = ops::add(&f[i - 1], &f[i - 2]).unwrap();
        f.push(next);
    }
    // A diamond on top: the root reads f_79 directly and through a product.
    let top = ops::add(&f[79], &ops::multiply(&f[79], &f[40]).unwrap()).unwrap();
    let roots = [f[30].clone(), top.clone(), f[10].clone(), f[79].clone()];
    mlx_arm_core::eval::eval(&roots).unwrap();
    let (mut a, mut b) = ([0.0f64, 1.0], [1.0f64, 1.0]);
    let mut want = vec![a, b];
    for _ in 2..80 {
        (a, b) = (b, [a[0] + b[0], a[1] + b[1]]);
        want.push(b);
    }
    for i in [10, 30, 40, 79] {
        assert_eq!(f[i].to_vec::<f64>().unwrap(), want[i], "f_{i}");
    }
    let t: Vec<f64> = (0..2).map(|j| want[79][j] + want[79][j] * want[40][j]).collect();
    assert_eq!(top.to_vec::<f64>().unwrap(), t);
    // Evaluating an evaluated graph again is a no-op that keeps the values.
    mlx_arm_core::eval::eval(&roots).unwrap();
    assert_eq!(f[79].to_vec::<f64>().unwrap(), want[79]);
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

#[test]
fn background_evaluation_feeds_later_graphs_and_reports_failures() {
    use mlx_arm_core::eval::eval_in_background;
    // Step n+1 built on step n's arrays while step n runs: each step doubles and adds one,
    // submitted as soon as it is built; reading the last waits for its tape only.
    let mut x = Array::from_slice(&[1.0f32, 2.0, 3.0], &[3]).unwrap();
    let mut steps = Vec::new();
    for _ in 0..50 {
        x = ops::add(&ops::multiply(&x, &Array::scalar(2.0f32).unwrap()).unwrap(), &Array::scalar(1.0f32).unwrap()).unwrap();
        eval_in_background(std::slice::from_ref(&x)).unwrap();
        steps.push(x.clone());
    }
    // x_{n+1} = 2·x_n + 1 from x_0 = v: x_n = 2^n·(v + 1) − 1; at n = 10, exact in f32.
    assert_eq!(steps[9].to_vec::<f32>().unwrap(), vec![2047.0, 3071.0, 4095.0]);
    // A graph mixing a background-evaluated array with new ops, evaluated synchronously.
    let y = ops::subtract(&steps[9], &Array::scalar(1.0f32).unwrap()).unwrap();
    assert_eq!(y.to_vec::<f32>().unwrap(), vec![2046.0, 3070.0, 4094.0]);
    assert_eq!(steps[49].to_vec::<f32>().unwrap()[0], 2.0f32.powi(50) * 2.0 - 1.0);
    // A failure in the background (an allocation that can never succeed) reaches the reader,
    // and arrays computed from it, as it would from `eval`.
    let huge = ops::contiguous(&ops::broadcast_to(&Array::scalar(1.0f64).unwrap(), &[1 << 45]).unwrap()).unwrap();
    let z = ops::add(&huge, &huge).unwrap();
    eval_in_background(std::slice::from_ref(&z)).unwrap();
    let w = ops::sum(&z, None, false).unwrap();
    assert_eq!(w.eval().unwrap_err().kind, ErrorKind::OutOfMemory);
    assert_eq!(z.eval().unwrap_err().kind, ErrorKind::OutOfMemory);
}

#[test]
fn views_broadcast_along_the_last_axis_read_as_rows() {
    // A per-row value against rows (softmax's `x - max`), from a dense column, from a strided
    // column (every other element of a transposed matrix) and with more than two axes.
    let x: Vec<f32> = (0..24).map(|i| i as f32).collect();
    let a = Array::from_slice(&x, &[2, 3, 4]).unwrap();
    let col = ops::max(&a, Some(&[-1]), true).unwrap(); // (2, 3, 1): 3, 7, 11, 15, 19, 23
    let d = ops::subtract(&a, &col).unwrap().to_vec::<f32>().unwrap();
    let want: Vec<f32> = (0..24).map(|i| (i % 4) as f32 - 3.0).collect();
    assert_eq!(d, want);
    let t = ops::transpose(&Array::from_slice(&x, &[4, 6]).unwrap(), None).unwrap(); // (6, 4)
    let every_other = ops::slice(&t, &[0, 0], &[6, 1], &[2, 1]).unwrap(); // (3, 1): rows 0, 2, 4 of column 0
    let b = ops::broadcast_to(&every_other, &[3, 5]).unwrap();
    let got = ops::add(&b, &Array::scalar(0.5f32).unwrap()).unwrap().to_vec::<f32>().unwrap();
    let want: Vec<f32> = [0.0f32, 2.0, 4.0].iter().flat_map(|&v| [v + 0.5; 5]).collect();
    assert_eq!(got, want);
}
