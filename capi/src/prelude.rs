//! The `alloc` names that std's prelude would give, so that every module compiles the same
//! with and without the `std` feature (`use crate::prelude::*;`).

#[allow(unused_imports)]
pub(crate) use alloc::{
    borrow::ToOwned,
    boxed::Box,
    ffi::CString,
    format,
    string::{String, ToString},
    vec,
    vec::Vec,
};
