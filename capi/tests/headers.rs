//! The hand-written headers and the library agree: every exported `extern "C"` function is
//! declared in `include/mlx/c/*.h` and every declared function is exported (the C tests then
//! check that each declaration links), and the version macros match the crate version.

use std::collections::BTreeSet;
use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Handle type names that stand in the macro tables beside the functions they make.
const HANDLE_TYPES: &[&str] =
    &["mlx_vector_array", "mlx_vector_int", "mlx_vector_string", "mlx_vector_vector_array", "mlx_io_reader", "mlx_io_writer", "mlx_io_gguf"];

fn exported() -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut files = vec![];
    for e in std::fs::read_dir(root().join("src")).unwrap() {
        files.push(e.unwrap().path());
    }
    for f in files.into_iter().filter(|p| p.extension().is_some_and(|e| e == "rs")) {
        let text = std::fs::read_to_string(&f).unwrap();
        // `#[no_mangle]` on the line before `... extern "C" fn name(` (callbacks passed to C
        // by pointer are not exported and carry no #[no_mangle]).
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let Some(at) = line.find("extern \"C\" fn ") else { continue };
            if i == 0 || !lines[i - 1].contains("#[no_mangle]") {
                continue;
            }
            let name: String = line[at + 14..].chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            if !name.is_empty() {
                names.insert(name);
            }
        }
        // Macro-made functions: identifiers in invocation tables that start with mlx_.
        for line in text.lines() {
            let t = line.trim_start();
            if t.starts_with("mlx_") || t.starts_with("_mlx_") {
                for tok in t.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
                    let closure_fn = tok.starts_with("mlx_closure_") && (tok.ends_with("_new") || tok.ends_with("_free") || tok.ends_with("_set"));
                    if closure_fn || (tok.starts_with("mlx_array_") || tok.starts_with("mlx_vector_") || tok.starts_with("mlx_io_")) && !tok.ends_with("_t") && !HANDLE_TYPES.contains(&tok) {
                        names.insert(tok.to_string());
                    }
                }
            }
        }
    }
    names
}

fn declared() -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for e in std::fs::read_dir(root().join("../include/mlx/c")).unwrap() {
        let text = std::fs::read_to_string(e.unwrap().path()).unwrap();
        // A prototype: `<type> name(` at the start of a line (after the return type).
        for line in text.lines() {
            if line.starts_with(' ') || line.starts_with('#') || line.starts_with('/') || line.starts_with('*') || line.contains("typedef") || line.contains("static inline") {
                continue;
            }
            if let Some(p) = line.find('(') {
                let head = &line[..p];
                let name = head.rsplit(|c: char| c == ' ' || c == '*').next().unwrap_or("");
                if name.starts_with("mlx_") || name.starts_with("_mlx_") {
                    names.insert(name.to_string());
                }
            }
        }
    }
    names
}

#[test]
fn every_export_is_declared_and_every_declaration_exported() {
    let (e, d) = (exported(), declared());
    let undeclared: Vec<_> = e.difference(&d).collect();
    let missing: Vec<_> = d.difference(&e).collect();
    assert!(undeclared.is_empty(), "exported but not in include/mlx/c: {undeclared:?}");
    assert!(missing.is_empty(), "declared but not exported: {missing:?}");
    assert!(d.len() > 300, "only {} declarations found", d.len());
}

#[test]
fn version_macros_match_the_crate() {
    let h = std::fs::read_to_string(root().join("../include/mlx/c/mlx_arm.h")).unwrap();
    for (k, v) in [
        ("MLX_ARM_VERSION_MAJOR", env!("CARGO_PKG_VERSION_MAJOR")),
        ("MLX_ARM_VERSION_MINOR", env!("CARGO_PKG_VERSION_MINOR")),
        ("MLX_ARM_VERSION_PATCH", env!("CARGO_PKG_VERSION_PATCH")),
        ("MLX_ARM_VERSION_STRING", &format!("\"{}\"", env!("CARGO_PKG_VERSION"))),
        ("MLX_ARM_ABI_VERSION", &mlx_arm::arm_abi().to_string()),
    ] {
        assert!(h.contains(&format!("#define {k} {v}\n")), "{k} should be {v}");
    }
}
