//! The file format of exported functions (docs/EXPORT.md): a magic and version, the
//! constants every trace captured (each written once, with its data), then each
//! trace — its call signature (positional count, keyword names, input shapes and dtypes,
//! shapeless flag), the indices of its constants, its nodes (primitive, input
//! references, output shapes and dtypes) in topological order, and its outputs.
//!
//! Reading checks everything a hostile file could get wrong — lengths against the bytes
//! left, tags, dtype codes, shape sizes, constant data lengths, references to values not yet
//! defined — and answers a format error, never a panic. Files written by Apple's MLX start
//! with their version string instead of our magic: they are recognized and refused by name.

use super::prim::{self, read_bool, read_str, read_usizes};
use super::wire::Writer;
use super::Trace;
use crate::array::Array;
use crate::backend::OutMeta;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::io::cursor::Cursor;
use crate::shape::checked_size;
use crate::transforms::compile::tape::{Ref, TNode, Tape};
use crate::transforms::node_key;
use alloc::collections::BTreeMap;
use alloc::format;
use alloc::vec::Vec;

/// The first bytes of every file we write.
pub const MAGIC: &[u8; 8] = b"MLXARMFN";
/// The format version this build writes (version 2 added the metadata string; version 1
/// files, which have none, are still read).
pub const VERSION: u32 = 2;
const OP: &str = "import_function";

/// The bytes of a file holding `traces`. Constants are written once however many traces
/// captured them (an exporter's traces usually share the model's weights).
pub(super) fn write(traces: &[Trace], metadata: &str) -> Result<Vec<u8>> {
    let mut pool: Vec<&Array> = Vec::new();
    let mut index: BTreeMap<usize, usize> = BTreeMap::new();
    let locals: Vec<Vec<usize>> = traces
        .iter()
        .map(|t| {
            t.tape.consts.iter().map(|c| *index.entry(node_key(c)).or_insert_with(|| {
                pool.push(c);
                pool.len() - 1
            })).collect()
        })
        .collect();
    let mut w = Writer::default();
    w.buf.extend_from_slice(MAGIC);
    w.u32(VERSION);
    w.str(metadata);
    w.count(pool.len());
    for c in pool {
        write_meta(&mut w, c.shape(), c.dtype());
        let data = c.to_bytes()?;
        w.usize(data.len());
        w.buf.extend_from_slice(&data);
    }
    w.count(traces.len());
    for (t, local) in traces.iter().zip(&locals) {
        write_trace(&mut w, t, local)?;
    }
    Ok(w.buf)
}

fn write_meta(w: &mut Writer, shape: &[usize], dtype: DType) {
    w.u8(dtype.code());
    w.usizes(shape);
}

fn write_ref(w: &mut Writer, r: Ref) {
    match r {
        Ref::Input(i) => {
            w.u8(0);
            w.count(i);
        }
        Ref::Const(i) => {
            w.u8(1);
            w.count(i);
        }
        Ref::Node(k, j) => {
            w.u8(2);
            w.count(k);
            w.count(j);
        }
    }
}

fn write_trace(w: &mut Writer, t: &Trace, consts: &[usize]) -> Result<()> {
    let tape = &t.tape;
    w.bool(t.shapeless);
    w.count(t.n_args);
    w.count(t.kwarg_names.len());
    t.kwarg_names.iter().for_each(|k| w.str(k));
    w.count(tape.n_inputs);
    for (shape, dtype) in tape.input_shapes.iter().zip(&t.input_dtypes) {
        write_meta(w, shape, *dtype);
    }
    w.count(consts.len());
    consts.iter().for_each(|&i| w.count(i));
    w.count(tape.nodes.len());
    for n in &tape.nodes {
        prim::encode(w, &n.prim)?;
        w.count(n.inputs.len());
        n.inputs.iter().for_each(|&r| write_ref(w, r));
        w.count(n.metas.len());
        n.metas.iter().for_each(|(s, d)| write_meta(w, s, *d));
    }
    w.count(tape.outputs.len());
    tape.outputs.iter().for_each(|&r| write_ref(w, r));
    Ok(())
}

/// The version string an Apple MLX `.mlxfn` file starts with (a `u64` length, then ASCII
/// digits and dots), if `bytes` is one.
fn apple_version(bytes: &[u8]) -> Option<&str> {
    let len = u64::from_le_bytes(bytes.get(..8)?.try_into().ok()?) as usize;
    let v = bytes.get(8..8usize.checked_add(len)?)?;
    let plausible = (1..=32).contains(&len) && v.iter().all(|b| b.is_ascii_digit() || *b == b'.');
    if plausible {
        core::str::from_utf8(v).ok()
    } else {
        None
    }
}

/// The traces and the metadata string of a file written by [`write`].
pub(super) fn read(bytes: &[u8]) -> Result<(Vec<Trace>, alloc::string::String)> {
    if let Some(v) = apple_version(bytes) {
        return Err(Error::unsupported(
            OP,
            format!(
                "This file was written by Apple's MLX {v}; mlx-arm reads only functions it exported itself (its own format, docs/EXPORT.md)."
            ),
        ));
    }
    let mut c = Cursor::new(OP, bytes);
    if c.bytes(MAGIC.len(), "magic").ok() != Some(&MAGIC[..]) {
        return Err(c.err("not an exported function file (bad magic)"));
    }
    let version = c.u32("version")?;
    if version != VERSION && version != 1 {
        return Err(c.err(format!("format version {version} is not supported (this build reads versions 1 to {VERSION})")));
    }
    let metadata = if version >= 2 { read_str(&mut c)? } else { alloc::string::String::new() };
    let n_consts = count(&mut c, "constant count", 13)?;
    let mut pool = Vec::with_capacity(n_consts);
    for _ in 0..n_consts {
        let (shape, dtype) = read_meta(&mut c)?;
        let len = c.u64_usize("constant length")?;
        let data = c.bytes(len, "constant data")?;
        pool.push(Array::from_bytes(data, &shape, dtype).map_err(|e| c.err(format!("constant: {}", e.msg)))?);
    }
    let n = count(&mut c, "trace count", 1)?;
    let traces = (0..n).map(|_| read_trace(&mut c, &pool)).collect::<Result<Vec<_>>>()?;
    if c.remaining() != 0 {
        return Err(c.err(format!("{} unexpected bytes after the last trace", c.remaining())));
    }
    if traces.is_empty() {
        return Err(c.err("the file holds no function"));
    }
    Ok((traces, metadata))
}

/// A `u32` count of items that take at least `min_bytes` each: larger than the bytes left
/// means a corrupt file (checked before anything is allocated).
fn count(c: &mut Cursor, what: &str, min_bytes: usize) -> Result<usize> {
    let n = c.u32(what)? as usize;
    if n > c.remaining() / min_bytes {
        return Err(c.err(format!("{what} {n} is larger than the {} bytes left allow", c.remaining())));
    }
    Ok(n)
}

fn read_meta(c: &mut Cursor) -> Result<OutMeta> {
    let code = c.u8("dtype")?;
    let dtype = DType::from_code(u32::from(code)).ok_or_else(|| c.err(format!("unknown dtype code {code}")))?;
    let shape = read_usizes(c)?;
    checked_size(&shape, OP)?;
    Ok((shape, dtype))
}

/// A reference, checked to name an input, a constant, or an output of an earlier node.
fn read_ref(c: &mut Cursor, n_inputs: usize, n_consts: usize, nodes: &[TNode]) -> Result<Ref> {
    let r = match c.u8("reference kind")? {
        0 => Ref::Input(c.u32("input index")? as usize),
        1 => Ref::Const(c.u32("constant index")? as usize),
        2 => Ref::Node(c.u32("node index")? as usize, c.u32("output index")? as usize),
        t => return Err(c.err(format!("unknown reference kind {t}"))),
    };
    let ok = match r {
        Ref::Input(i) => i < n_inputs,
        Ref::Const(i) => i < n_consts,
        Ref::Node(k, j) => nodes.get(k).is_some_and(|n| j < n.metas.len()),
    };
    if !ok {
        return Err(c.err(format!("reference {r:?} names no earlier value")));
    }
    Ok(r)
}

fn read_trace(c: &mut Cursor, pool: &[Array]) -> Result<Trace> {
    let shapeless = read_bool(c)?;
    let n_args = c.u32("positional count")? as usize;
    let n_kw = count(c, "keyword count", 4)?;
    let kwarg_names = (0..n_kw).map(|_| read_str(c)).collect::<Result<Vec<_>>>()?;
    let n_inputs = count(c, "input count", 5)?;
    if n_args.checked_add(n_kw) != Some(n_inputs) {
        return Err(c.err(format!("{n_args} positional and {n_kw} keyword inputs do not make {n_inputs} inputs")));
    }
    let metas = (0..n_inputs).map(|_| read_meta(c)).collect::<Result<Vec<_>>>()?;
    let (input_shapes, input_dtypes) = metas.into_iter().unzip();
    let n_consts = count(c, "trace constant count", 4)?;
    let consts = (0..n_consts)
        .map(|_| {
            let i = c.u32("constant index")? as usize;
            pool.get(i).cloned().ok_or_else(|| c.err(format!("constant index {i} is past the {} constants", pool.len())))
        })
        .collect::<Result<Vec<_>>>()?;
    let n_nodes = count(c, "node count", 10)?;
    let mut nodes: Vec<TNode> = Vec::with_capacity(n_nodes);
    for _ in 0..n_nodes {
        let p = prim::decode(c)?;
        let n_in = count(c, "node input count", 5)?;
        let inputs = (0..n_in).map(|_| read_ref(c, n_inputs, n_consts, &nodes)).collect::<Result<Vec<_>>>()?;
        let n_out = count(c, "node output count", 5)?;
        if n_out == 0 {
            return Err(c.err(format!("node '{}' has no outputs", p.name())));
        }
        let metas = (0..n_out).map(|_| read_meta(c)).collect::<Result<Vec<_>>>()?;
        nodes.push(TNode { prim: p, inputs, metas, reshape_to: None });
    }
    let n_out = count(c, "output count", 5)?;
    let outputs = (0..n_out).map(|_| read_ref(c, n_inputs, n_consts, &nodes)).collect::<Result<Vec<_>>>()?;
    let tape = Tape { n_inputs, consts, nodes, outputs, input_shapes, shaped_consts: false };
    Ok(Trace { n_args, kwarg_names, shapeless, input_dtypes, tape })
}
