//! `export_function` / `import_function` / `exporter` (docs/EXPORT.md): a function of arrays
//! traced once per call signature, as `compile` traces it, and kept as bytes — its graph with
//! the constants it captured — so that it can be called later, in another process, without
//! the code that made it.
//!
//! A file holds one or more traces (an exporter adds one per call); calling the imported
//! function picks the trace whose signature matches the call: the number of positional
//! arguments, the keyword names, and each input's dtype and shape (only its number of axes
//! for traces exported with `shapeless`). Keyword arguments are passed to the traced function
//! after the positional ones, sorted by name.

mod format;
pub mod listing;
mod prim;
pub(crate) mod rebuild;
mod wire;

pub use format::{MAGIC, VERSION};

use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::transforms::compile::tape::Tape;
use crate::transforms::Fun;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::Write;

/// Number of export traces running (any thread; a counter, as traces nest). MLX's
/// `in_export_tracing`: `mx.fast.metal_kernel` can record its node only inside one.
static EXPORT_TRACES: core::sync::atomic::AtomicUsize = core::sync::atomic::AtomicUsize::new(0);

/// Whether an export trace (a file or the callback listing) is running.
pub(crate) fn export_tracing() -> bool {
    EXPORT_TRACES.load(core::sync::atomic::Ordering::Acquire) > 0
}

/// Holds [`EXPORT_TRACES`] up for one trace (released on every exit path).
struct ExportTraceGuard;

impl ExportTraceGuard {
    fn new() -> Self {
        EXPORT_TRACES.fetch_add(1, core::sync::atomic::Ordering::AcqRel);
        ExportTraceGuard
    }
}

impl Drop for ExportTraceGuard {
    fn drop(&mut self) {
        EXPORT_TRACES.fetch_sub(1, core::sync::atomic::Ordering::AcqRel);
    }
}

/// One traced call signature and its graph.
pub(crate) struct Trace {
    n_args: usize,
    /// Keyword names, sorted; their arrays follow the positional ones.
    kwarg_names: Vec<String>,
    shapeless: bool,
    input_dtypes: Vec<DType>,
    tape: Tape,
}

impl Trace {
    /// Traces `fun` on the positional `args` then the keyword arrays sorted by name, as every
    /// exported (or listed) function is traced.
    fn record(fun: Fun<'_>, args: &[Array], kwargs: &[(String, Array)], shapeless: bool) -> Result<Trace> {
        let kw = sorted_kwargs(kwargs, "export_function")?;
        let inputs: Vec<Array> = args.iter().cloned().chain(kw.iter().map(|(_, a)| a.clone())).collect();
        let tape = {
            let _export = ExportTraceGuard::new();
            crate::transforms::compile::record(fun, &inputs, shapeless)?
        };
        Ok(Trace {
            n_args: args.len(),
            kwarg_names: kw.into_iter().map(|(k, _)| k).collect(),
            shapeless,
            input_dtypes: inputs.iter().map(Array::dtype).collect(),
            tape,
        })
    }

    /// Whether a call with `args` and sorted `kwargs` fits this trace.
    fn matches(&self, args: &[Array], kwargs: &[(String, Array)]) -> bool {
        // As MLX's `FunctionTable::match`: the number of inputs in all, every keyword the
        // trace was made with given, then the positional arguments and the keywords (in name
        // order) against the traced inputs in order — so a function exported with one
        // positional argument is called with one keyword too (mlx-c's example-export.c).
        let names_given = self.kwarg_names.iter().all(|n| kwargs.iter().any(|(k, _)| k == n));
        let inputs = args.iter().chain(kwargs.iter().map(|(_, a)| a));
        args.len() + kwargs.len() == self.tape.input_shapes.len()
            && names_given
            && inputs.zip(self.tape.input_shapes.iter().zip(&self.input_dtypes)).all(|(a, (s, d))| {
                a.dtype() == *d && if self.shapeless { a.ndim() == s.len() } else { a.shape() == &s[..] }
            })
    }

    /// MLX's listing of a signature: positional inputs numbered from 1, keywords quoted.
    fn describe(out: &mut String, indent: &str, args: &[(&[usize], DType)], names: &[String]) {
        let n_args = args.len() - names.len();
        for (i, (shape, dtype)) in args.iter().enumerate() {
            let dims: Vec<String> = shape.iter().map(|d| format!("{d}")).collect();
            let label = if i < n_args { format!("{}", i + 1) } else { format!("\"{}\"", names[i - n_args]) };
            let _ = writeln!(out, "{indent}{label}: ({}) {}", dims.join(","), dtype.name());
        }
    }
}

/// Sorts keyword arguments by name, refusing a name given twice.
fn sorted_kwargs(kwargs: &[(String, Array)], op: &'static str) -> Result<Vec<(String, Array)>> {
    let mut kw = kwargs.to_vec();
    kw.sort_by(|a, b| a.0.cmp(&b.0));
    if let Some(w) = kw.windows(2).find(|w| w[0].0 == w[1].0) {
        return Err(Error::invalid(op, format!("The keyword argument '{}' is given twice.", w[0].0)));
    }
    Ok(kw)
}

/// The functions of one export file: traces added by [`ExportedFunction::add`], or read by
/// [`ExportedFunction::from_bytes`].
#[derive(Default)]
pub struct ExportedFunction {
    traces: Vec<Trace>,
    /// A string kept with the file (MLX's `metadata=`, e.g. a JSON model configuration).
    metadata: String,
}

impl core::fmt::Debug for ExportedFunction {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "ExportedFunction {{ traces: {} }}", self.traces.len())
    }
}

impl ExportedFunction {
    /// No traces yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// No traces yet; the file will keep `metadata`.
    pub fn with_metadata(metadata: &str) -> Self {
        ExportedFunction { traces: Vec::new(), metadata: String::from(metadata) }
    }

    /// The string stored with the function (empty when none was given).
    pub fn metadata(&self) -> &str {
        &self.metadata
    }

    /// How many call signatures the file holds.
    pub fn len(&self) -> usize {
        self.traces.len()
    }

    /// Whether no signature has been traced.
    pub fn is_empty(&self) -> bool {
        self.traces.is_empty()
    }

    /// Traces `fun` on `args` and `kwargs` and keeps the trace. `fun` receives the
    /// positional arrays, then the keyword arrays sorted by name. A primitive with no file
    /// form yet is an error here (nothing is kept), never a wrong file.
    pub fn add(&mut self, fun: Fun<'_>, args: &[Array], kwargs: &[(String, Array)], shapeless: bool) -> Result<()> {
        const OP: &str = "export_function";
        if self.traces.first().is_some_and(|t| t.shapeless != shapeless) {
            return Err(Error::invalid(OP, "Every function of one file must be exported with the same shapeless setting."));
        }
        let trace = Trace::record(fun, args, kwargs, shapeless)?;
        // An op without a file form is reported now, before the trace is kept.
        for n in &trace.tape.nodes {
            prim::encode(&mut wire::Writer::default(), &n.prim)?;
        }
        self.traces.push(trace);
        Ok(())
    }

    /// The file's bytes (evaluates the captured constants).
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        format::write(&self.traces, &self.metadata)
    }

    /// Reads a file written by [`ExportedFunction::to_bytes`]; any defect is an error.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let (traces, metadata) = format::read(bytes)?;
        for n in traces.iter().flat_map(|t| &t.tape.nodes) {
            if let crate::primitive::Primitive::Fast(crate::ops::fast::FastOp::MetalKernel(k)) = &n.prim {
                return Err(crate::ops::fast::custom_kernel::refuse_import(k));
            }
        }
        Ok(ExportedFunction { traces, metadata })
    }

    /// Calls the function: the outputs of the trace whose signature fits `args` and `kwargs`.
    pub fn call(&self, args: &[Array], kwargs: &[(String, Array)]) -> Result<Vec<Array>> {
        const OP: &str = "import_function::call";
        let kw = sorted_kwargs(kwargs, OP)?;
        let Some(t) = self.traces.iter().find(|t| t.matches(args, &kw)) else {
            return Err(Error::invalid(OP, self.no_match(args, &kw)));
        };
        let inputs: Vec<Array> = args.iter().cloned().chain(kw.into_iter().map(|(_, a)| a)).collect();
        rebuild::replay(&t.tape, &inputs)
    }

    /// Zero-filled arrays fitting trace `i`'s signature (positional, then keyword), for
    /// tests and fuzzing.
    pub fn example_inputs(&self, i: usize) -> Option<Result<(Vec<Array>, Vec<(String, Array)>)>> {
        let t = self.traces.get(i)?;
        let zeros = |k: usize| crate::ops::zeros(&t.tape.input_shapes[k], t.input_dtypes[k]);
        let make = || -> Result<(Vec<Array>, Vec<(String, Array)>)> {
            let args = (0..t.n_args).map(zeros).collect::<Result<Vec<_>>>()?;
            let kw = t.kwarg_names.iter().enumerate().map(|(j, k)| Ok((k.clone(), zeros(t.n_args + j)?))).collect::<Result<Vec<_>>>()?;
            Ok((args, kw))
        };
        Some(make())
    }

    /// MLX's message for a call that fits no trace: every signature, then the call's.
    fn no_match(&self, args: &[Array], kw: &[(String, Array)]) -> String {
        let mut m = String::from("No imported function found which matches the given positional and keyword arguments. Possible functions include:\n");
        for (i, t) in self.traces.iter().enumerate() {
            let _ = writeln!(m, " {}. Function with {} positional inputs and {} keyword inputs:", i + 1, t.n_args, t.kwarg_names.len());
            let sig: Vec<(&[usize], DType)> = t.tape.input_shapes.iter().map(|s| &s[..]).zip(t.input_dtypes.iter().copied()).collect();
            Trace::describe(&mut m, "   ", &sig, &t.kwarg_names);
        }
        let _ = writeln!(m, "\nCalled with {} positional inputs and {} keyword inputs:", args.len(), kw.len());
        let sig: Vec<(&[usize], DType)> = args.iter().chain(kw.iter().map(|(_, a)| a)).map(|a| (a.shape(), a.dtype())).collect();
        let names: Vec<String> = kw.iter().map(|(k, _)| k.clone()).collect();
        Trace::describe(&mut m, "  ", &sig, &names);
        m
    }
}
