//! docs/GRAD.md is generated from the per-primitive rule table (`transforms::rules::table`):
//! this test fails when the file is stale; `MLX_ARM_UPDATE_DOCS=1 cargo test -p mlx-arm-core
//! --test grad_md` rewrites it.

/// The jvp column: `transforms::jvp` transposes the vjp, so it follows the vjp rule.
fn jvp_of(vjp: &str) -> &'static str {
    if vjp.starts_with("yes") {
        "yes (the vjp transposed)"
    } else if vjp.starts_with("zero") {
        "zero"
    } else if vjp.contains("as MLX") {
        "no: as MLX"
    } else {
        "no"
    }
}

fn render() -> String {
    let mut s = String::from(
        "# Gradients (generated)\n\n\
         Generated from `core/src/transforms/rules.rs` by `core/tests/grad_md.rs`; do not edit.\n\n\
         `mlx_arm_core::transforms` provides `vjp`, `value_and_grad`, `grad` and `jvp`. The vjp rule of each\n\
         primitive lives beside its op (`core/src/ops/<family>/grad.rs`). `jvp` is computed by transposing the\n\
         vjp (the vjp is linear in its cotangents), so it exists wherever the rules on the path are themselves\n\
         differentiable (the same condition as a second derivative). A primitive marked `no` makes `vjp`/`grad`\n\
         fail with an error naming it — never a wrong or silently zero gradient: MLX's own error\n\
         (`[Primitive::vjp] Not implemented for SVD.`) where real MLX has no rule either (\"as MLX\"),\n\
         else an `Unsupported` error. Tests:\n\
         `core/tests/grad.rs` (central finite differences in float64) and `core/tests/grad_golden.rs`\n\
         (real MLX's gradients, `core/tests/data/grad/gen_grad.py`, `gen_grad_rules.py`). Complex inputs follow MLX's convention:\n\
         a holomorphic op sends back `g · conj(f'(z))` (the unary ops of the table but the rounding and\n\
         special functions, multiply, divide, power, prod); `abs`, `real` and `imag` send back the\n\
         gradients with respect to Re z and Im z as one complex number (others refuse complex inputs).\n\
         As in MLX, integer arrays are differentiated through add, subtract, multiply, negative, sum,\n\
         prod, max, min, cumsum and where (other rules give integer inputs no gradient), and a comparison's\n\
         `jvp` is a zero of the tangents' dtype. A cotangent asked of integer indices (gather, scatter,\n\
         gather_qmm, an index computed from a differentiated input) is MLX's `ValueError`: cut such\n\
         indices with `stop_gradient`, whose output depends on nothing for the transforms.\n\n\
         `vjp` follows MLX in pairing cotangents with outputs: in order, skipping outputs made by\n\
         `stop_gradient`; too few cotangents is an error, extra ones are ignored.\n\n\
         ## C and Python\n\n\
         - C (`include/mlx/c/closure.h`, `transforms.h`, as mlx-c): `mlx_closure` and the other closure\n\
           kinds (plain function or function + payload + destructor), `mlx_vjp`, `mlx_jvp`,\n\
           `mlx_value_and_grad` (argnums; negative ones count from the end; gradients in sorted order) and\n\
           `mlx_closure_value_and_grad_apply`; `mlx_stop_gradient` in `ops.h`. A closure whose C function\n\
           returns non-zero fails the transform with status 1 (`mlx_closure returned a non-zero value`).\n\
           Tests: `tests/c/test_transforms.c` (hand-computed derivatives, grad of grad through nested C\n\
           closures, payload lifetimes, errors inside closures).\n\
         - Python (`python-cffi/mlx/core/_transforms.py`): `mx.grad`, `mx.value_and_grad` (argnums, argnames,\n\
           nested list/tuple/dict arguments and `(loss, aux…)` outputs), `mx.vjp`, `mx.jvp`,\n\
           `mx.stop_gradient`, and `mlx.nn.value_and_grad` on top. An exception raised inside the\n\
           differentiated function comes out unchanged. Tests: `tests/python/test_grad.py` against real\n\
           MLX's results (`tests/python/golden/grad/gen_grad.py`), including a small MLP trained with\n\
           `nn.value_and_grad` and `optim.Adam`.\n\
         - `compile`: docs/COMPILE.md (grad/vjp/vmap of a compiled function replay its unfused trace).\n\
         - LoRA and QLoRA fine-tuning with the unmodified `mlx_lm.lora`: docs/LORA.md.\n\
         - Not yet: export.\n\n\
         ## custom_function and checkpoint\n\n\
         `transforms::custom` (C: `mlx_custom_function`, `mlx_custom_vjp`, `mlx_checkpoint`; Python:\n\
         `mx.custom_function` with `.vjp`, `.jvp`, `.vmap`, `mx.checkpoint`, `nn.utils.checkpoint`) as MLX:\n\
         calling the function runs it and records one custom node (inputs: the arguments, then the outputs\n\
         under `stop_gradient`). Each transform asks the node: vjp calls the vjp rule `(primals, cotangents,\n\
         outputs)`, jvp the jvp rule `(primals, tangents, argnums)`, vmap the vmap rule `(inputs, axes)`; a\n\
         rule left out falls back to that transform of the wrapped function, so a custom vjp leaves `jvp`\n\
         alone and the other way round. Because `jvp` here transposes the vjp, the vjp of a custom node is\n\
         itself a node whose vjp towards the cotangents is the jvp rule (and towards the primals\n\
         differentiates the vjp rule: second derivatives). Arrays the function captures are constants.\n\
         A rule returning the wrong number or shapes of arrays is an error naming the rule.\n\
         `checkpoint(fun)` is a custom vjp that runs `fun` again on the primals (after the outputs, through\n\
         `depends`), so the backward graph keeps none of the forward pass's intermediates. Tests:\n\
         `core/tests/custom.rs` (hand-computed), the unit test `checkpoint_drops_forward_intermediates`\n\
         (the intermediate is freed once the outputs are evaluated; without checkpoint it is kept),\n\
         `tests/c/test_custom.c`, `tests/python/test_grad.py` (real MLX's results, cases\n\
         `custom_*`, `checkpoint_*`).\n\n\
         ## vmap\n\n\
         `transforms::vmap(fun, inputs, in_axes, out_axes)` (C: `mlx_arm_vmap`, Python: `mx.vmap`) runs\n\
         `fun` once on tracers of one example's shape, then replays the recorded graph with each\n\
         primitive's batching rule (`core/src/transforms/vmap.rs`) on arrays whose mapped axis is first.\n\
         It composes with the autodiff transforms (vmap of grad, grad of vmap) and with itself. Tests:\n\
         `core/tests/vmap.rs` (each rule against the function applied to every example),\n\
         `tests/python/test_grad.py` (real MLX's results), `tests/c/test_transforms.c`. Its two halves are\n\
         `transforms::vmap_trace` (the tracers and the function's outputs on them) and\n\
         `transforms::vmap_replace` (the replay on the batched inputs), as MLX's `detail::vmap_trace` /\n\
         `vmap_replace`; C: `mlx_detail_vmap_trace` / `mlx_detail_vmap_replace` (`transforms_impl.h`,\n\
         test `tests/c/test_transforms_impl.c`).\n\n\
         The vmap column of the table below says which primitives batch.\n\n\
         ## Rules per primitive\n\n\
         vjp: the rule beside the op. jvp: the vjp transposed (see above), so it follows the vjp\n\
         column. vmap: the batching rule (`transforms::vmap_status`, beside the rules in\n\
         `core/src/transforms/vmap.rs`). \"as MLX\" / \"MLX's error\": real MLX 0.32 has no such rule\n\
         either and raises the same message.\n\n\
         | family | primitive | vjp | jvp | vmap |\n|---|---|---|---|---|\n",
    );
    for (family, name, status) in mlx_arm_core::transforms::rules::table() {
        let vmap = mlx_arm_core::transforms::vmap_status(family, name);
        s.push_str(&format!("| {family} | {name} | {status} | {} | {vmap} |\n", jvp_of(status)));
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
