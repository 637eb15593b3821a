//! The global compile mode (its own test binary: the mode is process-wide, so it must not
//! race the other compile tests). Disabled calls the function every time; NoFuse and
//! NoSimplify replay without fused nodes; every mode gives the same values.

use mlx_arm_core::ops;
use mlx_arm_core::transforms::compile::{compile, compile_mode, disable_compile, enable_compile, fused_steps, set_compile_mode, CompileMode};
use mlx_arm_core::{Array, Result};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

#[test]
fn modes() {
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = calls.clone();
    let f = move |x: &[Array]| -> Result<Vec<Array>> {
        seen.fetch_add(1, Ordering::SeqCst);
        Ok(vec![ops::exp(&ops::add(&ops::multiply(&x[0], &x[0])?, &x[0])?)?])
    };
    let c = compile(Arc::new(f), false);
    let x = Array::from_slice(&[0.5f32, -1.0, 2.0, 0.0], &[4]).unwrap();
    let want: Vec<f32> = [0.5f32, -1.0, 2.0, 0.0].iter().map(|&v| (v * v + v).exp()).collect();
    let run = |c: &mlx_arm_core::transforms::compile::Compiled| {
        let y = c.call(&[x.clone()]).unwrap().remove(0);
        let steps = fused_steps(&y);
        (y.to_vec::<f32>().unwrap(), steps)
    };

    assert_eq!(compile_mode(), CompileMode::Enabled);
    assert_eq!(run(&c), (want.clone(), Some(3)));
    disable_compile();
    assert_eq!(run(&c), (want.clone(), None));
    assert_eq!(run(&c), (want.clone(), None));
    assert_eq!(calls.load(Ordering::SeqCst), 3, "disabled: the function runs on every call");
    set_compile_mode(CompileMode::NoFuse);
    assert_eq!(run(&c), (want.clone(), None));
    set_compile_mode(CompileMode::NoSimplify);
    assert_eq!(run(&c), (want.clone(), None));
    enable_compile();
    assert_eq!(run(&c), (want, Some(3)));
    assert_eq!((c.traces(), calls.load(Ordering::SeqCst)), (1, 3), "one trace served every enabled mode");
}
