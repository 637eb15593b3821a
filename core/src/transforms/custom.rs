//! `custom_function` and `checkpoint`: functions whose transforms are given by the user
//! (MLX's `CustomTransforms` primitive).
//!
//! Calling a [`CustomFunction`] runs the wrapped function, then records one
//! [`Primitive::Custom`] node whose inputs are the arguments followed by the function's
//! outputs under `stop_gradient`; evaluating the node just hands those outputs on. The
//! transforms therefore never look inside the function: they ask the node.
//!
//! - vjp: the user's rule `(primals, cotangents, outputs) → one cotangent per primal`, else the
//!   vjp of the wrapped function.
//! - jvp: this crate computes `jvp` by transposing the vjp (see [`super::jvp`]), so the vjp
//!   of a custom node is itself a node ([`Kind::Transpose`]) whose value is the vjp above and
//!   whose own vjp with respect to the cotangents is the jvp rule (the user's, else the jvp of
//!   the wrapped function). MLX semantics follow: a custom vjp does not change `jvp`, and a
//!   custom jvp does not change `grad`. Its vjp with respect to the primals (second
//!   derivatives) differentiates the vjp computation itself.
//! - vmap: the user's rule `(inputs, axes) → (outputs, output axes)`, else `vmap` of the
//!   wrapped function.
//!
//! [`checkpoint`] is a custom function whose vjp recomputes the forward pass from the inputs
//! (after the outputs exist, through `depends`), so the backward graph holds no intermediate
//! of the first forward pass.

use super::{jvp, vjp, vjp_argnums, vmap};
use crate::array::Array;
use crate::error::{Error, Result};
use crate::ops;
use crate::primitive::Primitive;
use alloc::format;
use alloc::sync::Arc;
use alloc::vec;
use alloc::vec::Vec;

/// The wrapped function: arrays to arrays.
pub type ArrayFn = Arc<dyn Fn(&[Array]) -> Result<Vec<Array>> + Send + Sync>;
/// A vjp rule: `(primals, cotangents, outputs)` to one cotangent per primal.
pub type VjpRule = Arc<dyn Fn(&[Array], &[Array], &[Array]) -> Result<Vec<Array>> + Send + Sync>;
/// A jvp rule: `(primals, tangents, argnums)` to one tangent per output; `tangents[i]` belongs
/// to `primals[argnums[i]]` (primals without a tangent are left out, as in MLX).
pub type JvpRule = Arc<dyn Fn(&[Array], &[Array], &[usize]) -> Result<Vec<Array>> + Send + Sync>;
/// A vmap rule: `(inputs, axes)` (axis -1: not mapped) to `(outputs, output axes)`.
pub type VmapRule = Arc<dyn Fn(&[Array], &[i32]) -> Result<(Vec<Array>, Vec<i32>)> + Send + Sync>;

const OP: &str = "custom_function";

/// A function with optional custom vjp, jvp and vmap rules (MLX's `custom_function`).
pub struct CustomFunction {
    fun: ArrayFn,
    vjp: Option<VjpRule>,
    jvp: Option<JvpRule>,
    vmap: Option<VmapRule>,
}

impl CustomFunction {
    /// `fun` with the given rules; a rule left out falls back to transforming `fun`.
    pub fn new(fun: ArrayFn, vjp: Option<VjpRule>, jvp: Option<JvpRule>, vmap: Option<VmapRule>) -> Arc<CustomFunction> {
        Arc::new(CustomFunction { fun, vjp, jvp, vmap })
    }

    /// Calls the function. With no rule at all this is `fun(args)` (as MLX); otherwise the
    /// outputs come out of one custom node, so the transforms use the rules.
    pub fn call(self: &Arc<Self>, args: &[Array]) -> Result<Vec<Array>> {
        let outputs = (self.fun)(args)?;
        if self.vjp.is_none() && self.jvp.is_none() && self.vmap.is_none() {
            return Ok(outputs);
        }
        if outputs.is_empty() {
            return Err(Error::invalid(OP, "[custom_function] The function must return at least one array."));
        }
        node(Kind::Forward, self.clone(), args.len(), args, &outputs)
    }

    /// The vjp rule, or the vjp of the wrapped function.
    fn vjp_of(&self, primals: &[Array], cotangents: &[Array], outputs: &[Array]) -> Result<Vec<Array>> {
        let vjps = match &self.vjp {
            Some(rule) => rule(primals, cotangents, outputs)?,
            None => vjp(&*self.fun, primals, cotangents)?.1,
        };
        check_like("vjp", &vjps, primals)?;
        Ok(vjps)
    }

    /// The jvp rule, or the jvp of the wrapped function. `tangents` has one entry per primal
    /// (`None`: no tangent).
    fn jvp_of(&self, primals: &[Array], tangents: &[Option<Array>], n_out: usize) -> Result<Vec<Array>> {
        let jvps = match &self.jvp {
            Some(rule) => {
                let argnums: Vec<usize> = (0..primals.len()).filter(|&i| tangents[i].is_some()).collect();
                let given: Vec<Array> = tangents.iter().flatten().cloned().collect();
                rule(primals, &given, &argnums)?
            }
            None => {
                let full: Vec<Array> = primals
                    .iter()
                    .zip(tangents)
                    .map(|(p, t)| t.clone().map_or_else(|| ops::zeros_like(p), Ok))
                    .collect::<Result<_>>()?;
                jvp(&*self.fun, primals, &full)?.1
            }
        };
        if jvps.len() != n_out {
            return Err(Error::invalid(
                OP,
                format!("[custom_function] The jvp rule returned {} arrays for {n_out} outputs.", jvps.len()),
            ));
        }
        Ok(jvps)
    }
}

/// The rules must return one array per primal, each of the primal's shape.
fn check_like(rule: &str, got: &[Array], like: &[Array]) -> Result<()> {
    if got.len() != like.len() {
        return Err(Error::invalid(
            OP,
            format!("[custom_function] The {rule} rule returned {} arrays for {} inputs.", got.len(), like.len()),
        ));
    }
    for (i, (g, p)) in got.iter().zip(like).enumerate() {
        if g.shape() != p.shape() {
            return Err(Error::invalid(
                OP,
                format!(
                    "[custom_function] The {rule} rule returned shape {} for input {i} of shape {}.",
                    crate::shape::fmt_shape(g.shape()),
                    crate::shape::fmt_shape(p.shape())
                ),
            ));
        }
    }
    Ok(())
}

/// What a custom node stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `fun(primals)`; inputs: primals, then the outputs.
    Forward,
    /// The vjp of a forward node; inputs: primals, cotangents, the forward outputs, then the
    /// vjps (one per primal).
    Transpose,
}

/// The payload of [`Primitive::Custom`]: the function and its rules, the node's kind and how
/// many leading inputs are primals. Two nodes are equal when they share the function (CSE may
/// merge them only then).
#[derive(Clone)]
pub struct CustomOp {
    fun: Arc<CustomFunction>,
    kind: Kind,
    n_primals: usize,
}

impl PartialEq for CustomOp {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.fun, &other.fun) && self.kind == other.kind && self.n_primals == other.n_primals
    }
}

impl Eq for CustomOp {}

impl core::hash::Hash for CustomOp {
    fn hash<H: core::hash::Hasher>(&self, state: &mut H) {
        (Arc::as_ptr(&self.fun) as *const u8 as usize).hash(state);
        self.kind.hash(state);
        self.n_primals.hash(state);
    }
}

impl core::fmt::Debug for CustomOp {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "CustomOp({:?}, {} primals)", self.kind, self.n_primals)
    }
}

impl CustomOp {
    /// The op's name in messages and profiles.
    pub fn name(&self) -> &'static str {
        match self.kind {
            Kind::Forward => "custom_function",
            Kind::Transpose => "custom_function_vjp",
        }
    }

    /// The node's outputs are its last `n_out` inputs: how many those are.
    pub(crate) fn passthrough(&self, n_inputs: usize) -> core::ops::Range<usize> {
        let n_out = match self.kind {
            Kind::Forward => n_inputs - self.n_primals,
            Kind::Transpose => self.n_primals,
        };
        n_inputs - n_out..n_inputs
    }

    /// The vjp of the node (see the module comment).
    pub(crate) fn vjp(
        &self,
        inputs: &[Array],
        outputs: &[Option<Array>],
        cotangents: &[Option<Array>],
        needs: &[bool],
    ) -> Result<Vec<Option<Array>>> {
        let np = self.n_primals;
        let mut grads: Vec<Option<Array>> = vec![None; inputs.len()];
        match self.kind {
            Kind::Forward => {
                if !needs[..np].iter().any(|&b| b) {
                    return Ok(grads);
                }
                let primals = &inputs[..np];
                let sg_outs = &inputs[np..];
                // Outputs gone from the graph have the same values as the forwarded inputs.
                let outs: Vec<Array> = outputs.iter().zip(sg_outs).map(|(o, s)| o.clone().unwrap_or_else(|| s.clone())).collect();
                let cots = filled(cotangents, &outs)?;
                let vjps = self.fun.vjp_of(primals, &cots, &outs)?;
                let mut t_inputs = primals.to_vec();
                t_inputs.extend(cots);
                t_inputs.extend(outs);
                let t = node(Kind::Transpose, self.fun.clone(), np, &t_inputs, &vjps)?;
                for (i, g) in t.into_iter().enumerate() {
                    if needs[i] {
                        grads[i] = Some(g);
                    }
                }
            }
            Kind::Transpose => {
                // inputs: primals (np), cotangents (n_out), outputs (n_out), vjps (np).
                let n_out = (inputs.len() - 2 * np) / 2;
                let primals = &inputs[..np];
                let (c_range, o_end) = (np..np + n_out, np + 2 * n_out);
                // Towards the cotangents: the jvp with these cotangents as tangents.
                if needs[c_range.clone()].iter().any(|&b| b) {
                    let jvps = self.fun.jvp_of(primals, cotangents, n_out)?;
                    for (i, g) in c_range.clone().zip(jvps) {
                        if needs[i] {
                            grads[i] = Some(g);
                        }
                    }
                }
                // Towards the primals and outputs: differentiate the vjp computation.
                let argnums: Vec<usize> = (0..o_end).filter(|&i| needs[i] && !c_range.contains(&i)).collect();
                if !argnums.is_empty() {
                    let fun = self.fun.clone();
                    let f = move |xs: &[Array]| fun.vjp_of(&xs[..np], &xs[np..np + n_out], &xs[np + n_out..np + 2 * n_out]);
                    let ts = filled(cotangents, &inputs[o_end..])?;
                    let g = vjp_argnums(&f, &inputs[..o_end], &argnums, &ts)?;
                    for (i, g) in argnums.into_iter().zip(g) {
                        grads[i] = Some(g);
                    }
                }
            }
        }
        Ok(grads)
    }

    /// The batched outputs (mapped axis first, of size `n`) of the node; `b[i]` is input `i`
    /// batched along axis 0, `None` where it is not mapped.
    pub(crate) fn vmap(&self, inputs: &[Array], b: &[Option<Array>], n: usize) -> Result<Vec<Array>> {
        let np = self.n_primals;
        let n_args = match self.kind {
            Kind::Forward => np,
            Kind::Transpose => inputs.len() - np,
        };
        let args: Vec<Array> = (0..n_args).map(|i| b[i].clone().unwrap_or_else(|| inputs[i].clone())).collect();
        let axes: Vec<i32> = (0..n_args).map(|i| if b[i].is_some() { 0 } else { -1 }).collect();
        match (self.kind, &self.fun.vmap) {
            (Kind::Forward, Some(rule)) => {
                let (outs, out_axes) = rule(&args, &axes)?;
                let want = inputs.len() - np;
                if outs.len() != want || out_axes.len() != want {
                    return Err(Error::invalid(
                        OP,
                        format!("[custom_function] The vmap rule returned {} arrays and {} axes for {want} outputs.", outs.len(), out_axes.len()),
                    ));
                }
                outs.iter().zip(out_axes).map(|(o, ax)| to_front(o, ax, n)).collect()
            }
            (Kind::Forward, None) => vmap(&*self.fun.fun, &args, &axes, &[]),
            (Kind::Transpose, _) => {
                let fun = self.fun.clone();
                let n_out = (n_args - np) / 2;
                let f = move |xs: &[Array]| fun.vjp_of(&xs[..np], &xs[np..np + n_out], &xs[np + n_out..]);
                vmap(&f, &args, &axes, &[])
            }
        }
    }
}

/// Output `o` of a vmap rule with its mapped axis `ax` (-1: not mapped) moved to the front.
fn to_front(o: &Array, ax: i32, n: usize) -> Result<Array> {
    if ax < 0 {
        let mut shape = vec![n];
        shape.extend_from_slice(o.shape());
        return ops::broadcast_to(&ops::expand_dims(o, &[0])?, &shape);
    }
    if ax as usize >= o.ndim() {
        return Err(Error::invalid(
            OP,
            format!("[custom_function] The vmap rule gave axis {ax} for an output with {} dimensions.", o.ndim()),
        ));
    }
    ops::moveaxis(o, ax as isize, 0)
}

/// Cotangents with zeros where an output receives none.
fn filled(cots: &[Option<Array>], like: &[Array]) -> Result<Vec<Array>> {
    cots.iter().zip(like).map(|(c, o)| c.clone().map_or_else(|| ops::zeros_like(o), Ok)).collect()
}

/// Records a custom node over `inputs` whose outputs carry `values` (stopped, so nothing
/// differentiates through them but the node's rules).
fn node(kind: Kind, fun: Arc<CustomFunction>, n_primals: usize, inputs: &[Array], values: &[Array]) -> Result<Vec<Array>> {
    let mut all = inputs.to_vec();
    let mut metas = Vec::with_capacity(values.len());
    for v in values {
        all.push(ops::stop_gradient(v)?);
        metas.push((v.shape().to_vec(), v.dtype()));
    }
    let op = CustomOp { fun, kind, n_primals };
    Ok(Array::from_op_multi(Primitive::Custom(op), all, metas))
}

/// MLX's `custom_vjp(fun, vjp)`: `fun` with a custom vjp rule only.
pub fn custom_vjp(fun: ArrayFn, rule: VjpRule) -> Arc<CustomFunction> {
    CustomFunction::new(fun, Some(rule), None, None)
}

/// MLX's `checkpoint(fun)`: the same outputs, but the vjp runs `fun` again on the primals
/// (ordered after the outputs with `depends`) instead of keeping the first run's
/// intermediates.
pub fn checkpoint(fun: ArrayFn) -> Arc<CustomFunction> {
    let f = fun.clone();
    let rule: VjpRule = Arc::new(move |primals: &[Array], cotangents: &[Array], outputs: &[Array]| {
        let again = ops::depends(primals, outputs)?;
        Ok(vjp(&*f, &again, cotangents)?.1)
    });
    custom_vjp(fun, rule)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::sync::Weak;
    use spin::Mutex;

    /// After the forward outputs are evaluated, the (unevaluated) gradient of a checkpointed
    /// function no longer holds the forward pass's intermediate; the plain function's does.
    #[test]
    fn checkpoint_drops_forward_intermediates() {
        for checkpointed in [false, true] {
            let seen: Arc<Mutex<Vec<Weak<crate::array::Node>>>> = Arc::new(Mutex::new(Vec::new()));
            let s = seen.clone();
            let fun: ArrayFn = Arc::new(move |x: &[Array]| {
                let h = ops::exp(&x[0])?; // the intermediate; its vjp needs it
                s.lock().push(Arc::downgrade(&h.node));
                Ok(vec![ops::sin(&h)?])
            });
            let call: ArrayFn = if checkpointed {
                let ck = checkpoint(fun);
                Arc::new(move |x: &[Array]| ck.call(x))
            } else {
                fun
            };
            let x = Array::from_slice(&[0.5f32, 1.5], &[2]).unwrap();
            let c = Array::from_slice(&[1.0f32, 1.0], &[2]).unwrap();
            let (outs, grads) = vjp(&*call, &[x], &[c]).unwrap();
            crate::eval(&outs).unwrap();
            drop(outs);
            let first = seen.lock()[0].clone();
            assert_eq!(first.upgrade().is_some(), !checkpointed, "checkpointed: {checkpointed}");
            // Either way the gradient is cos(e^x)·e^x.
            let g = grads[0].to_vec::<f32>().unwrap();
            for (gi, xi) in g.iter().zip([0.5f32, 1.5]) {
                assert!((gi - xi.exp().cos() * xi.exp()).abs() < 1e-5);
            }
        }
    }
}
