//! docs/GRAD.md is generated from the per-primitive rule table (`transforms::rules::table`):
//! this test fails when the file is stale; `MLX_ARM_UPDATE_DOCS=1 cargo test -p mlx-arm-core
//! --test grad_md` rewrites it.

fn render() -> String {
    let mut s = String::from(
        "# Gradients (generated)\n\n\
         Generated from `core/src/transforms/rules.rs` by `core/tests/grad_md.rs`; do not edit.\n\n\
         `mlx_arm_core::transforms` provides `vjp`, `value_and_grad`, `grad` and `jvp`. The vjp rule of each\n\
         primitive lives beside its op (`core/src/ops/<family>/grad.rs`). `jvp` is computed by transposing the\n\
         vjp (the vjp is linear in its cotangents), so it exists wherever the rules on the path are themselves\n\
         differentiable (the same condition as a second derivative). A primitive marked `no` makes `vjp`/`grad`\n\
         fail with an `Unsupported` error naming it — never a wrong or silently zero gradient. Tests:\n\
         `core/tests/grad.rs` (central finite differences in float64) and `core/tests/grad_golden.rs`\n\
         (real MLX's gradients, `core/tests/data/grad/gen_grad.py`). Complex inputs have rules only for\n\
         add, subtract, negative and conjugate (others refuse them).\n\n\
         | family | primitive | vjp |\n|---|---|---|\n",
    );
    for (family, name, status) in mlx_arm_core::transforms::rules::table() {
        s.push_str(&format!("| {family} | {name} | {status} |\n"));
    }
    s
}

#[test]
fn grad_md_is_current() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/GRAD.md");
    let want = render();
    if std::env::var_os("MLX_ARM_UPDATE_DOCS").is_some() {
        std::fs::write(path, &want).unwrap();
    }
    let have = std::fs::read_to_string(path).unwrap_or_default();
    assert!(have == want, "docs/GRAD.md is stale: run MLX_ARM_UPDATE_DOCS=1 cargo test -p mlx-arm-core --test grad_md");
}
