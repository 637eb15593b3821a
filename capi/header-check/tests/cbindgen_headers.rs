//! The hand-written headers agree with the Rust signatures, type by type: cbindgen reads the
//! crate's `extern "C"` functions and writes their C prototypes; every function it sees must be
//! declared in `include/mlx/c/*.h` with the same return type and parameter types (names may
//! differ). Functions made by macros are invisible to cbindgen; `headers.rs` checks those by
//! name and `tests/c/run.sh` links every declaration.
//!
//! The generated headers (`ops.h`, `random.h`, ...) are checked too: they come from
//! `capi/src/codegen`, and this is an independent look at what the compiler will export.

use std::collections::BTreeMap;
use std::path::Path;

/// `name -> (return type, [parameter types])`, normalized.
type Protos = BTreeMap<String, (String, Vec<String>)>;

/// One C type, spelled one way: no parameter name, no top-level `const` on by-value handles,
/// `size_t` for `uintptr_t` (cbindgen's spelling of `usize`), single spaces, `*` attached.
fn norm_type(t: &str) -> String {
    let t = t.replace('*', " * ");
    let mut words: Vec<&str> = t.split_whitespace().collect();
    // A by-value parameter's `const` (mlx-c writes `const mlx_array a`) is not part of the ABI.
    if !words.contains(&"*") {
        words.retain(|w| *w != "const");
    }
    let t = words.join(" ").replace(" *", "*").replace("* ", "*");
    t.replace("uintptr_t", "size_t").replace("intptr_t", "ptrdiff_t")
}

/// The type part of a parameter declaration (`const mlx_array a` -> `mlx_array`).
fn param_type(p: &str) -> String {
    let p = p.trim();
    if p == "void" || p.is_empty() {
        return String::new();
    }
    if p.contains("(*") {
        // A function pointer `RET (*name)(ARGS)`: its return and parameter types.
        let open = p.find("(*").unwrap_or(0);
        let close = p[open..].find(')').map_or(p.len(), |c| open + c);
        let args = p[close + 1..].trim().trim_start_matches('(').trim_end_matches(')');
        return format!("{}(*)({})", norm_type(&p[..open]), split_params(args).join(", "));
    }
    let cut = p.rfind(|c: char| c == ' ' || c == '*').map_or(0, |i| i + 1);
    let (ty, name) = p.split_at(cut);
    if ty.trim().is_empty() || name.chars().any(|c| !(c.is_alphanumeric() || c == '_')) {
        return norm_type(p); // no name given
    }
    norm_type(ty)
}

/// Splits a parameter list at top-level commas (function pointers hold commas).
fn split_params(s: &str) -> Vec<String> {
    let (mut out, mut depth, mut cur) = (Vec::new(), 0, String::new());
    for c in s.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    out.push(cur);
    out.into_iter().map(|p| param_type(&p)).filter(|p| !p.is_empty()).collect()
}

/// Prototypes of `mlx_*` functions in C text (comments and preprocessor lines removed), with
/// function-pointer typedefs (`mlx_dtor`) spelled out so either spelling compares equal.
fn prototypes(text: &str) -> Protos {
    let mut protos = raw_prototypes(text);
    let aliases = fn_pointer_typedefs(text);
    for (_, params) in protos.values_mut() {
        for p in params.iter_mut() {
            if let Some(full) = aliases.get(p.as_str()) {
                *p = full.clone();
            }
        }
    }
    protos
}

/// `typedef RET (*NAME)(ARGS);` as `NAME -> RET(*)(ARGS)` (normalized).
fn fn_pointer_typedefs(text: &str) -> BTreeMap<String, String> {
    let flat = strip_comments(text).split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out = BTreeMap::new();
    for stmt in flat.split(';') {
        let stmt = stmt.rsplit(|c| c == '{' || c == '}').next().unwrap_or("");
        let Some(t) = stmt.trim().strip_prefix("typedef ") else { continue };
        let Some(open) = t.find("(*") else { continue };
        let Some(close) = t[open..].find(')').map(|c| open + c) else { continue };
        let name = t[open + 2..close].trim().to_string();
        out.insert(name, param_type(t));
    }
    out
}

/// C text without comments, preprocessor lines (and their `\\` continuations) or line comments.
fn strip_comments(text: &str) -> String {
    let mut clean = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("/*") {
        clean.push_str(&rest[..i]);
        rest = rest[i..].find("*/").map_or("", |j| &rest[i + j + 2..]);
    }
    clean.push_str(rest);
    // Drop preprocessor lines (with their `\` continuations) and line comments.
    let (mut kept, mut in_directive) = (Vec::new(), false);
    for l in clean.lines() {
        let t = l.trim_start();
        if in_directive || t.starts_with('#') {
            in_directive = l.trim_end().ends_with('\\');
            continue;
        }
        if !t.starts_with("//") {
            kept.push(l);
        }
    }
    kept.join("\n")
}

fn raw_prototypes(text: &str) -> Protos {
    let clean = strip_comments(text);
    let mut out = Protos::new();
    for stmt in clean.split(';') {
        let s = stmt.split_whitespace().collect::<Vec<_>>().join(" ");
        // What follows the last brace (`extern "C" {`, a struct body, a function body).
        let s = s.rsplit(|c| c == '{' || c == '}').next().unwrap_or("").trim().to_string();
        // Typedefs, static helpers and `extern` declarations of symbols the crate imports
        // (cbindgen lists the firmware hooks of bare_metal.rs that way).
        if s.starts_with("typedef") || s.starts_with("static") || s.starts_with("extern ") {
            continue;
        }
        let Some(open) = s.find('(') else { continue };
        let head = s[..open].trim();
        let cut = head.rfind(|c: char| c == ' ' || c == '*').map_or(0, |i| i + 1);
        let name = &head[cut..];
        // A call inside a function body has no return type before the name.
        if !name.starts_with("mlx_") || !s.ends_with(')') || head[..cut].trim().is_empty() {
            continue;
        }
        let ret = norm_type(&head[..cut]);
        out.insert(name.to_string(), (ret, split_params(&s[open + 1..s.len() - 1])));
    }
    out
}

#[test]
fn hand_written_and_generated_headers_match_the_rust_signatures() {
    // This crate sits in capi/: its parent is the crate cbindgen reads.
    let crate_dir = &Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    // Typedef style (`mlx_array`, not `struct mlx_array`), as mlx-c's headers spell handles.
    let config = cbindgen::Config { language: cbindgen::Language::C, style: cbindgen::Style::Type, ..Default::default() };
    let bindings = cbindgen::Builder::new()
        .with_crate(crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen parses the crate");
    let mut generated = Vec::new();
    bindings.write(&mut generated);
    let text = String::from_utf8(generated).unwrap();
    if let Some(path) = std::env::var_os("MLX_ARM_CBINDGEN_OUT") {
        std::fs::write(path, &text).unwrap(); // to read what cbindgen saw
    }
    let rust = prototypes(&text);
    assert!(rust.len() > 150, "cbindgen saw only {} functions", rust.len());

    // All headers as one text, so a typedef from one header expands in another.
    let mut all = String::new();
    for e in std::fs::read_dir(crate_dir.join("../include/mlx/c")).unwrap() {
        all.push_str(&std::fs::read_to_string(e.unwrap().path()).unwrap());
        all.push('\n');
    }
    let declared = prototypes(&all);
    let mut problems = Vec::new();
    for (name, (ret, params)) in &rust {
        match declared.get(name) {
            None => problems.push(format!("{name}: exported but not declared")),
            Some((dret, dparams)) if dret != ret || dparams != params => {
                problems.push(format!("{name}:\n  rust:   {ret} ({})\n  header: {dret} ({})", params.join(", "), dparams.join(", ")))
            }
            Some(_) => {}
        }
    }
    assert!(problems.is_empty(), "{} header/Rust disagreements:\n{}", problems.len(), problems.join("\n"));
}

#[test]
fn normalizer_spots_a_wrong_type() {
    let a = prototypes("int mlx_f(mlx_array* res, const mlx_array a, size_t n);");
    let b = prototypes("int mlx_f(mlx_array *res, mlx_array x, uintptr_t count);");
    let c = prototypes("int mlx_f(mlx_array* res, mlx_array a, int n);");
    assert_eq!(a, b);
    assert_ne!(a, c);
    let f = prototypes("mlx_io_reader mlx_io_reader_new(void* desc, void (*read)(void*, char* data, size_t n));");
    assert_eq!(f["mlx_io_reader_new"].1, vec!["void*".to_string(), "void(*)(void*, char*, size_t)".to_string()]);
}
