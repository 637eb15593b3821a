//! The op-wrapper generator: one table ([`spec::table`]) drives both `include/mlx/c/ops.h`
//! and `capi/src/generated_ops.rs`, so the C declarations and the Rust shims cannot drift.
//! Unary and binary ops come straight from core's op tables (`UnaryOp::ALL`, `BinaryOp::ALL`).
//!
//! `cargo test -p mlx-arm-capi codegen` fails when the committed files are stale;
//! `MLX_ARM_BLESS=1 cargo test -p mlx-arm-capi codegen` rewrites them.

mod spec;
mod spec_ext;

use std::fmt::Write as _;
use std::path::PathBuf;

/// What an op returns through its first parameter.
#[derive(Clone, Copy, PartialEq)]
pub enum Out {
    /// `mlx_array* res`.
    Array,
    /// `mlx_vector_array* res`.
    Vector,
    /// `mlx_array* res_0, mlx_array* res_1` (the call gives a pair).
    Pair,
    /// No result parameter (the call gives `()`), e.g. `mlx_random_seed`.
    Nothing,
}

/// One C function: name without `mlx_`, header, `name: kind` parameters, output, Rust call.
pub struct Op {
    pub name: String,
    pub header: &'static str,
    pub params: Vec<(String, String)>,
    pub out: Out,
    pub call: String,
    /// Whether the function ends with `const mlx_stream s` (mlx-c's `random_key`/`seed` do not).
    pub stream: bool,
}

/// A parameter kind: its C text, Rust parameter text and conversion statement.
fn param(name: &str, kind: &str) -> (String, String, Option<String>) {
    let n = name;
    let (c, r, conv) = match kind {
        "array" => (format!("const mlx_array {n}"), format!("{n}: mlx_array"), Some(format!("let {n} = arg::array({n}, \"{n}\")?;"))),
        "array?" => (format!("const mlx_array {n} /* may be null */"), format!("{n}: mlx_array"), Some(format!("let {n} = arg::array_opt({n})?;"))),
        "vector_array" => (format!("const mlx_vector_array {n}"), format!("{n}: mlx_vector_array"), Some(format!("let {n} = arg::vector_array({n})?;"))),
        "ints?" => (
            format!("const int* {n} /* may be null */, size_t {n}_num"),
            format!("{n}: *const c_int, {n}_num: usize"),
            Some(format!("let {n} = arg::ints_opt({n}, {n}_num, \"{n}\")?;")),
        ),
        "ints" => (
            format!("const int* {n}, size_t {n}_num"),
            format!("{n}: *const c_int, {n}_num: usize"),
            Some(format!("let {n} = arg::ints({n}, {n}_num, \"{n}\")?;")),
        ),
        "shape" => (
            format!("const int* {n}, size_t {n}_num"),
            format!("{n}: *const c_int, {n}_num: usize"),
            Some(format!("let {n} = arg::shape({n}, {n}_num, \"{n}\")?;")),
        ),
        "int64s" => (
            format!("const int64_t* {n}, size_t {n}_num"),
            format!("{n}: *const i64, {n}_num: usize"),
            Some(format!("let {n} = arg::int64s({n}, {n}_num, \"{n}\")?;")),
        ),
        "int" => (format!("int {n}"), format!("{n}: c_int"), None),
        "count" => (format!("int {n}"), format!("{n}: c_int"), Some(format!("let {n} = arg::count({n}, \"{n}\")?;"))),
        "bool" => (format!("bool {n}"), format!("{n}: bool"), None),
        "float" => (format!("float {n}"), format!("{n}: f32"), None),
        "double" => (format!("double {n}"), format!("{n}: f64"), None),
        "size" => (format!("size_t {n}"), format!("{n}: usize"), None),
        "u64" => (format!("uint64_t {n}"), format!("{n}: u64"), None),
        "fft_norm" => (format!("mlx_fft_norm {n}"), format!("{n}: mlx_fft_norm"), Some(format!("let {n} = arg::fft_norm({n})?;"))),
        "dtype" => (format!("mlx_dtype {n}"), format!("{n}: mlx_dtype"), Some(format!("let {n} = arg::dtype({n})?;"))),
        "opt_int" => (format!("mlx_optional_int {n}"), format!("{n}: mlx_optional_int"), Some(format!("let {n} = arg::int_opt({n});"))),
        "opt_float" => (format!("mlx_optional_float {n}"), format!("{n}: mlx_optional_float"), Some(format!("let {n} = arg::float_opt({n});"))),
        "opt_dtype" => (format!("mlx_optional_dtype {n}"), format!("{n}: mlx_optional_dtype"), Some(format!("let {n} = arg::dtype_opt({n})?;"))),
        "str" => (format!("const char* {n}"), format!("{n}: *const c_char"), Some(format!("let {n} = arg::string({n}, \"{n}\")?;"))),
        other => panic!("unknown parameter kind {other}"),
    };
    (c, r, conv)
}

fn c_prototype(op: &Op) -> String {
    let mut ps: Vec<String> = match op.out {
        Out::Array => vec!["mlx_array* res".into()],
        Out::Vector => vec!["mlx_vector_array* res".into()],
        Out::Pair => vec!["mlx_array* res_0".into(), "mlx_array* res_1".into()],
        Out::Nothing => vec![],
    };
    ps.extend(op.params.iter().map(|(n, k)| param(n, k).0));
    if op.stream {
        ps.push("const mlx_stream s".into());
    }
    format!("int mlx_{}({});", op.name, ps.join(", "))
}

fn core_fn(op: &Op) -> String {
    let s = op.call.as_str();
    let start = s.find("ops::").map(|i| i + 5).or_else(|| s.find("compose::").map(|i| i + 9)).unwrap_or(0);
    let s = &s[start..];
    let start = s.find("random::").map(|i| i + 8).unwrap_or(0);
    s[start..].split('(').next().unwrap_or("").to_string()
}

fn rust_fn(op: &Op) -> String {
    let mut ps: Vec<String> = match op.out {
        Out::Array => vec!["res: *mut mlx_array".into()],
        Out::Vector => vec!["res: *mut mlx_vector_array".into()],
        Out::Pair => vec!["res_0: *mut mlx_array".into(), "res_1: *mut mlx_array".into()],
        Out::Nothing => vec![],
    };
    ps.extend(op.params.iter().map(|(n, k)| param(n, k).1));
    if op.stream {
        ps.push("s: mlx_stream".into());
    }
    let mut body = String::new();
    for (n, k) in &op.params {
        if let Some(conv) = param(n, k).2 {
            let _ = writeln!(body, "        {conv}");
        }
    }
    if op.stream {
        let _ = writeln!(body, "        arg::stream(s)?;");
    }
    let _ = match op.out {
        Out::Array => writeln!(body, "        arg::set_array(res, {}?)", op.call),
        Out::Vector => writeln!(body, "        arg::set_vector_array(res, {}?)", op.call),
        Out::Pair => writeln!(body, "        let (r0, r1) = {}?;\n        arg::set_pair(res_0, res_1, r0, r1)", op.call),
        Out::Nothing => writeln!(body, "        {}", op.call),
    };
    format!(
        "/// `mlx_{name}`: wraps `{core}`.\n///\n/// # Safety\n/// Handles must be empty or live; pointers must hold their counts.\n#[no_mangle]\npub unsafe extern \"C\" fn mlx_{name}({params}) -> c_int {{\n    status(\"mlx_{name}\", || {{\n{body}    }})\n}}\n",
        name = op.name,
        core = core_fn(op),
        params = ps.join(", "),
    )
}

const BANNER: &str = "This file is generated by capi/src/codegen (MLX_ARM_BLESS=1 cargo test -p mlx-arm-capi codegen). Do not edit.";

/// Where the C function's documentation points: the Python name of the MLX function.
fn doc_target(op: &Op) -> String {
    match op.name.strip_prefix(op.header).and_then(|n| n.strip_prefix('_')) {
        Some(rest) => format!("mlx.core.{}.{rest}", op.header),
        None => format!("mlx.core.{}", core_fn(op)),
    }
}

/// Types a generated header declares before its functions (mlx-c's names and values).
fn header_types(header: &str) -> &'static str {
    match header {
        "fft" => "/** Where the 1/n factor goes (mlx-c's `mlx_fft_norm`). */\ntypedef enum mlx_fft_norm_ {\n  MLX_FFT_NORM_BACKWARD,\n  MLX_FFT_NORM_ORTHO,\n  MLX_FFT_NORM_FORWARD\n} mlx_fft_norm;\n\n",
        _ => "",
    }
}

fn header_text(header: &str, ops: &[&Op]) -> String {
    let guard = format!("MLX_ARM_C_{}_H", header.to_uppercase());
    let mut h = format!(
        "/* {BANNER} */\n\n#ifndef {guard}\n#define {guard}\n\n#include <stdbool.h>\n#include <stddef.h>\n#include <stdint.h>\n\n#include \"mlx/c/array.h\"\n#include \"mlx/c/optional.h\"\n#include \"mlx/c/stream.h\"\n#include \"mlx/c/vector.h\"\n\n#ifdef __cplusplus\nextern \"C\" {{\n#endif\n\n/**\n * \\defgroup {header} {header} operations (mlx-c compatible)\n * Each returns 0 on success; on failure it returns non-zero after sending a message\n * to the error handler, and leaves `*res` unchanged.\n */\n/**@{{*/\n\n"
    );
    h.push_str(header_types(header));
    for op in ops {
        let _ = writeln!(h, "/** `mlx_{}`: see {}. */", op.name, doc_target(op));
        let _ = writeln!(h, "{}", c_prototype(op));
    }
    h.push_str("\n/**@}*/\n\n#ifdef __cplusplus\n}\n#endif\n\n#endif\n");
    h
}

fn rust_text(ops: &[Op]) -> String {
    let mut r = format!(
        "//! Op wrappers. {BANNER}\n#![allow(unused_imports, non_snake_case)] // mlx-c parameter names such as `M`\n\nuse crate::arg;\nuse crate::compose;\nuse crate::error::status;\nuse crate::types::*;\nuse core::ffi::{{c_char, c_int}};\nuse mlx_arm_core::ops::{{self, BinaryOp, UnaryOp}};\nuse mlx_arm_core::ops::random::Param;\n\n"
    );
    for op in ops {
        r.push_str(&rust_fn(op));
        r.push('\n');
    }
    r
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every generated file and its expected contents.
pub fn outputs() -> Vec<(PathBuf, String)> {
    let mut ops = spec::table();
    ops.extend(spec_ext::table());
    let mut headers: Vec<&'static str> = ops.iter().map(|o| o.header).collect();
    headers.sort_unstable();
    headers.dedup();
    let mut files = vec![(root().join("src/generated_ops.rs"), rust_text(&ops))];
    for h in headers {
        let mine: Vec<&Op> = ops.iter().filter(|o| o.header == h).collect();
        files.push((root().join(format!("../include/mlx/c/{h}.h")), header_text(h, &mine)));
    }
    files
}

#[test]
fn codegen_files_are_fresh() {
    let bless = std::env::var_os("MLX_ARM_BLESS").is_some();
    let mut stale = Vec::new();
    for (path, text) in outputs() {
        let now = std::fs::read_to_string(&path).unwrap_or_default();
        if now != text {
            if bless {
                if let Some(dir) = path.parent() {
                    std::fs::create_dir_all(dir).unwrap();
                }
                std::fs::write(&path, text).unwrap();
            } else {
                stale.push(path.display().to_string());
            }
        }
    }
    assert!(stale.is_empty(), "stale generated files (run MLX_ARM_BLESS=1 cargo test -p mlx-arm-capi codegen): {stale:?}");
}

#[test]
fn codegen_names_are_unique() {
    let mut ops = spec::table();
    ops.extend(spec_ext::table());
    let mut names: Vec<&str> = ops.iter().map(|o| o.name.as_str()).collect();
    names.sort_unstable();
    let n = names.len();
    names.dedup();
    assert_eq!(n, names.len(), "duplicate op names in the table");
}
