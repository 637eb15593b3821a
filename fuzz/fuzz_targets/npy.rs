//! `.npy` (v1/v2/v3): magic, header dict, dtype/shape/order; then read (byte swap), Fortran →
//! C reordering, `mx.load`-style loading of the array, and a write → parse round trip.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mlx_arm_core::io::{arrays, checked_numel, npy};
use mlx_arm_fuzz::{buffer, expected_elements, init, materialize};

fuzz_target!(|data: &[u8]| {
    init();
    let Ok(h) = npy::parse_header(data) else { return };
    assert!(h.data.start <= h.data.end && h.data.end <= data.len());
    let n = checked_numel("fuzz", &h.shape).expect("accepted shape overflows");
    assert_eq!(h.data.len(), n * h.dtype.size());

    let r = npy::read(data).expect("header parsed, read must succeed");
    assert_eq!(r.header, h);
    assert_eq!(r.data.len(), h.data.len());
    let c_order = if h.fortran_order {
        npy::fortran_to_c_order(&h.shape, h.dtype.size(), &r.data).expect("reordering accepted data")
    } else {
        r.data.to_vec()
    };
    assert_eq!(c_order.len(), r.data.len());

    // What a user does next: load it and read every element in logical (row-major) order.
    let l = arrays::load_npy_buffer(buffer(data)).expect("parse accepted the file, load must too");
    assert_eq!(l.arrays.len(), 1);
    let a = &l.arrays[0].1;
    assert_eq!((a.shape(), a.dtype()), (&h.shape[..], h.dtype));
    assert_eq!(materialize(a), expected_elements(h.dtype, &c_order));

    // Our writer's output parses back to the same array.
    let out = npy::write(h.dtype, &h.shape, false, &c_order).expect("re-writing accepted data");
    let back = npy::read(&out).expect("our own .npy must parse");
    assert_eq!((back.header.dtype, &back.header.shape, back.header.fortran_order), (h.dtype, &h.shape, false));
    assert_eq!(&back.data[..], &c_order[..]);
});
