//! docs/OPS.md is generated from the op registry (core/src/registry.rs) over real MLX 0.32's
//! name list (docs/mlx_api_names.txt, from `dir(mlx.core)`). This test fails when the committed
//! file is stale; `MLX_ARM_UPDATE_DOCS=1 cargo test -p mlx-arm-core --test ops_md` rewrites it.

use mlx_arm_core::registry::{status, Status};

fn render() -> String {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let names = std::fs::read_to_string(format!("{root}/docs/mlx_api_names.txt")).unwrap();
    // Names only the Python layer provides are that layer's fact (python-cffi/provided_names.txt);
    // the core's registry knows nothing above it.
    let py = std::fs::read_to_string(format!("{root}/python-cffi/provided_names.txt")).unwrap();
    let py: Vec<&str> = py.lines().filter(|l| !l.is_empty() && !l.starts_with('#')).collect();
    let rows: Vec<(String, Status, &str)> = names.lines().filter(|l| !l.is_empty()).map(|n| {
        match status(n) {
            (Status::Done, note) => (n.to_string(), Status::Done, note),
            _ if py.contains(&n) => (n.to_string(), Status::Done, "Python layer (python-cffi)"),
            (s, note) => (n.to_string(), s, note),
        }
    }).collect();
    let count = |s: Status| rows.iter().filter(|r| r.1 == s).count();
    let mut out = String::new();
    out.push_str("# mlx.core coverage\n\n");
    out.push_str("Generated from `core/src/registry.rs` and `python-cffi/provided_names.txt` by `MLX_ARM_UPDATE_DOCS=1 cargo test -p mlx-arm-core --test ops_md`;\n");
    out.push_str("do not edit by hand. Names: real MLX 0.32.4's public API (`docs/mlx_api_names.txt`).\n");
    out.push_str("Status is the Rust core's; the C and Python surfaces track their own in docs/C-API.md and docs/COMPAT.md.\n\n");
    out.push_str(&format!(
        "**{} names: {} done, {} not yet, {} not applicable.**\n\n",
        rows.len(), count(Status::Done), count(Status::NotYet), count(Status::NotApplicable)
    ));
    out.push_str("| name | status | implemented by / note |\n|---|---|---|\n");
    for (n, s, note) in &rows {
        let s = match s { Status::Done => "done", Status::NotYet => "not yet", Status::NotApplicable => "n/a" };
        out.push_str(&format!("| `{n}` | {s} | {note} |\n"));
    }
    out
}

#[test]
fn ops_md_is_generated_from_the_registry() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/OPS.md");
    let want = render();
    if std::env::var_os("MLX_ARM_UPDATE_DOCS").is_some() {
        std::fs::write(path, &want).unwrap();
    }
    let have = std::fs::read_to_string(path).unwrap_or_default();
    assert!(have == want, "docs/OPS.md is stale: run MLX_ARM_UPDATE_DOCS=1 cargo test -p mlx-arm-core --test ops_md");
}
