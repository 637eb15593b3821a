//! [`Array`]: a cheap refcounted handle to a node of the lazy graph. A node is either
//! pending (a primitive plus its inputs, shared by sibling outputs) or ready (a view into a
//! buffer: byte offset + element strides). Evaluating a node drops its primitive and inputs,
//! so the graph and its intermediates are freed as soon as nothing needs them.

use crate::buffer::Buffer;
use crate::device::Stream;
use crate::dtype::DType;
use crate::element::{Element, Value};
use crate::error::{Error, Result};
use crate::primitive::Primitive;
use crate::shape::{checked_size, row_major_strides};
use alloc::borrow::Cow;
use alloc::sync::{Arc, Weak};
use alloc::vec::Vec;
use core::mem;

/// A materialized array's memory: a buffer, where the first element sits, and how to step.
#[derive(Clone)]
pub struct Data {
    /// The shared buffer (views of one buffer share it).
    pub buf: Arc<Buffer>,
    /// Byte offset of element `[0, 0, …]`.
    pub offset: usize,
    /// Step per axis, in elements (may be 0 for broadcast axes, negative never).
    pub strides: Vec<isize>,
}

impl Data {
    /// A fresh buffer for `shape` elements of `dtype`, row-major.
    pub fn alloc(shape: &[usize], dtype: DType, op: &'static str) -> Result<Data> {
        let n = checked_size(shape, op)?;
        let bytes = n
            .checked_mul(dtype.size())
            .ok_or_else(|| Error::out_of_memory(op, usize::MAX))?;
        Ok(Data { buf: Buffer::new(bytes, op)?, offset: 0, strides: row_major_strides(shape) })
    }

    /// Like [`Data::alloc`] for kernels that write every element before anything reads it:
    /// a reused block is not zeroed first.
    pub fn alloc_for_overwrite(shape: &[usize], dtype: DType, op: &'static str) -> Result<Data> {
        let n = checked_size(shape, op)?;
        let bytes = n
            .checked_mul(dtype.size())
            .ok_or_else(|| Error::out_of_memory(op, usize::MAX))?;
        Ok(Data { buf: Buffer::new_for_overwrite(bytes, op)?, offset: 0, strides: row_major_strides(shape) })
    }

    /// True when the elements are stored densely in row-major order (size-1 axes ignored).
    pub fn is_row_contiguous(&self, shape: &[usize]) -> bool {
        let mut expected = 1isize;
        for (&d, &s) in shape.iter().zip(&self.strides).rev() {
            if d != 1 && s != expected {
                return false;
            }
            expected *= d as isize;
        }
        true
    }

    /// Calls `f` with the element offset (relative to the first element) of each element of
    /// `shape`, in row-major order. Iterative: no recursion on the number of axes.
    pub fn for_each_offset(&self, shape: &[usize], mut f: impl FnMut(isize)) {
        for_each_strided(shape, &self.strides, &mut f)
    }

    /// The elements in row-major order: borrowed when dense and aligned, copied otherwise.
    ///
    /// The copy (a broadcast or transposed view) is allocated fallibly: a view too large to
    /// materialize is an out-of-memory error, not an abort — on bare metal an infallible
    /// allocation failure would end in the firmware's panic hook.
    /// The caller guarantees `T` is the element type of this data's dtype.
    pub fn read<T: Element>(&self, shape: &[usize]) -> Result<Cow<'_, [T]>> {
        let n: usize = shape.iter().product();
        if n == 0 {
            return Ok(Cow::Owned(Vec::new()));
        }
        let base = unsafe { self.buf.as_ptr().add(self.offset) };
        let aligned = (base as usize) % mem::align_of::<T>() == 0;
        if aligned && self.is_row_contiguous(shape) {
            // SAFETY: n elements of T lie in the buffer from base (checked when the view was made).
            return Ok(Cow::Borrowed(unsafe { core::slice::from_raw_parts(base as *const T, n) }));
        }
        let mut out: Vec<T> = Vec::new();
        out.try_reserve_exact(n).map_err(|_| Error::out_of_memory("read", n.saturating_mul(mem::size_of::<T>())))?;
        // SAFETY: every offset of the view lies inside the buffer (checked when the view was
        // made); `out` has room for the view's n elements of T (reserved above).
        let k = unsafe { copy_view_dense(shape, &self.strides, base, mem::size_of::<T>(), out.as_mut_ptr() as *mut u8) };
        debug_assert_eq!(k, n);
        // SAFETY: the copy wrote the view's n elements exactly once, in row-major order.
        unsafe { out.set_len(n) };
        Ok(Cow::Owned(out))
    }

    /// Mutable access to a fresh or donated buffer (dense, offset 0, uniquely held).
    ///
    /// # Safety
    /// Nobody else may read or write the buffer while the slice lives, and `T` must match
    /// the dtype the buffer was allocated for.
    // The buffer is shared memory behind a raw pointer; uniqueness is the caller's promise above.
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn slice_mut<T: Element>(&self, n: usize) -> &mut [T] {
        core::slice::from_raw_parts_mut(self.buf.as_mut_ptr().add(self.offset) as *mut T, n)
    }
}

/// Copies the strided view (`shape`, `strides` in elements of `sz` bytes from `src`) into the
/// dense `dst` in row-major order and returns the elements written: whole runs of consecutive
/// elements at a time (a KV-cache window, a row slice), and a view broadcast along its last axis
/// (a per-row value against rows, softmax's `x - max`) row by row, each source element filling
/// its row — element by element that was a one-element copy per element, ~15x slower than the
/// arithmetic reading it. The one copy walker of `Data::read` and the `contiguous` kernel.
///
/// # Safety
/// Every offset the view reaches lies inside `src`'s buffer; `dst` has room for the view.
pub(crate) unsafe fn copy_view_dense(shape: &[usize], strides: &[isize], src: *const u8, sz: usize, dst: *mut u8) -> usize {
    let mut k = 0usize;
    let nd = shape.len();
    if let (Some(&0), Some(&inner)) = (strides.last(), shape.last()) {
        if inner > 1 {
            let row = inner * sz;
            for_each_run(&shape[..nd - 1], &strides[..nd - 1], &mut |off, len| {
                for j in 0..len as isize {
                    // SAFETY: (caller) the element lies inside `src`; row k lies inside `dst`.
                    unsafe {
                        let d = core::slice::from_raw_parts_mut(dst.add(k * sz), row);
                        fill_elements(d, core::slice::from_raw_parts(src.offset((off + j) * sz as isize), sz));
                    }
                    k += inner;
                }
            });
            return k;
        }
    }
    for_each_run(shape, strides, &mut |off, len| {
        // SAFETY: (caller) the run lies inside `src` and elements k..k + len inside `dst`;
        // byte copies need no alignment.
        unsafe { core::ptr::copy_nonoverlapping(src.offset(off * sz as isize), dst.add(k * sz), len * sz) };
        k += len;
    });
    k
}

/// Fills `dst` (a whole number of elements) with copies of `elem`: zeros with one memset (a
/// fresh KV cache is megabytes of them), anything else by doubling the filled prefix, so the
/// copies are long `memcpy`s rather than one call per element.
pub(crate) fn fill_elements(dst: &mut [u8], elem: &[u8]) {
    if elem.iter().all(|&b| b == 0) {
        dst.fill(0);
        return;
    }
    let Some(first) = dst.get_mut(..elem.len()) else { return };
    first.copy_from_slice(elem);
    let mut filled = elem.len();
    while filled < dst.len() {
        let n = filled.min(dst.len() - filled);
        dst.copy_within(..n, filled);
        filled += n;
    }
}

/// Bytes of the buffers behind evaluated `arrays`, each buffer counted once however many arrays
/// view it (MLX's `get_array_buffer_size`). An unevaluated array is MLX's error; nothing is
/// evaluated.
pub fn array_buffer_size(arrays: &[Array]) -> Result<usize> {
    let mut seen = alloc::collections::BTreeSet::new();
    let mut total = 0usize;
    for a in arrays {
        if !a.is_available() {
            return Err(Error::invalid("get_array_buffer_size", "Arrays must be evaluated before querying buffer size."));
        }
        let buf = a.data()?.buf;
        if seen.insert(Arc::as_ptr(&buf) as *const u8 as usize) {
            total = total.saturating_add(buf.len());
        }
    }
    Ok(total)
}

/// Calls `f(offset, len)` for runs of `len` consecutive elements (element offset of the run's
/// first) that together cover a strided view in row-major order. Axes that continue each other
/// in memory are merged first, so a dense view is one run and a window of a larger buffer (a
/// slice of a KV cache) is one run per outer index.
pub fn for_each_run(shape: &[usize], strides: &[isize], f: &mut impl FnMut(isize, usize)) {
    if shape.iter().any(|&d| d == 0) {
        return;
    }
    // Merge from the innermost axis outwards; size-1 axes drop out.
    let mut dims: Vec<(usize, isize)> = Vec::with_capacity(shape.len());
    for (&d, &s) in shape.iter().zip(strides).rev() {
        if d == 1 {
            continue;
        }
        match dims.last_mut() {
            Some((id, is)) if *is * *id as isize == s => *id *= d,
            _ => dims.push((d, s)),
        }
    }
    dims.reverse();
    let (run, outer) = match dims.last() {
        Some(&(d, 1)) => (d, &dims[..dims.len() - 1]),
        _ => (1, &dims[..]),
    };
    let oshape: Vec<usize> = outer.iter().map(|&(d, _)| d).collect();
    let ostrides: Vec<isize> = outer.iter().map(|&(_, s)| s).collect();
    for_each_strided(&oshape, &ostrides, &mut |off| f(off, run));
}

/// Iterates element offsets of a strided view in row-major order.
pub fn for_each_strided(shape: &[usize], strides: &[isize], f: &mut impl FnMut(isize)) {
    if shape.iter().any(|&d| d == 0) {
        return;
    }
    let nd = shape.len();
    if nd == 0 {
        f(0);
        return;
    }
    let (inner_n, inner_s) = (shape[nd - 1], strides[nd - 1]);
    let mut idx = alloc::vec![0usize; nd];
    let mut base = 0isize;
    loop {
        let mut off = base;
        for _ in 0..inner_n {
            f(off);
            off += inner_s;
        }
        // Advance the outer axes like an odometer.
        let mut ax = nd - 1;
        loop {
            if ax == 0 {
                return;
            }
            ax -= 1;
            idx[ax] += 1;
            base += strides[ax];
            if idx[ax] < shape[ax] {
                break;
            }
            base -= strides[ax] * shape[ax] as isize;
            idx[ax] = 0;
        }
    }
}

pub(crate) enum State {
    Pending(Arc<Op>),
    Ready(Data),
    Failed(Error),
}

pub(crate) struct Node {
    shape: Vec<usize>,
    dtype: DType,
    pub(crate) state: spin::Mutex<State>,
    /// Set on the stand-ins a transform traces with and on everything computed from them:
    /// while a trace is running ([`crate::transforms::tracing`]), evaluating such a node keeps
    /// its op (in `kept`) so the vjp can still walk the graph afterwards.
    pub(crate) tracer: bool,
    /// The op of an evaluated tracer node (evaluation otherwise drops it).
    pub(crate) kept: spin::Mutex<Option<Arc<Op>>>,
}

impl Node {
    fn new(shape: Vec<usize>, dtype: DType, state: State, tracer: bool) -> Node {
        Node { shape, dtype, state: spin::Mutex::new(state), tracer, kept: spin::Mutex::new(None) }
    }
}

/// A recorded operation: the primitive, its inputs and its (sibling) outputs.
pub(crate) struct Op {
    pub(crate) prim: Primitive,
    pub(crate) inputs: spin::Mutex<Vec<Array>>,
    pub(crate) outputs: spin::Mutex<Vec<Weak<Node>>>,
    pub(crate) metas: Vec<(Vec<usize>, DType)>,
    pub(crate) stream: Stream,
    /// An input was a tracer when the op was recorded: evaluation keeps the inputs.
    pub(crate) tracer: bool,
    /// Nonzero once a background evaluation ([`crate::eval::eval_in_background`]) took the op
    /// on its tape: the number of that tape, which [`crate::eval::eval`] waits for instead of
    /// running the op a second time.
    pub(crate) ticket: core::sync::atomic::AtomicUsize,
    /// The number of the last tape walk that reached this op ([`crate::eval`]'s visit mark,
    /// so that building a tape needs no set of visited ops).
    pub(crate) visit: core::sync::atomic::AtomicUsize,
    /// Set by the evaluation that runs the op, so that it runs once even when two walks racing
    /// over a shared graph both put it on their tapes.
    pub(crate) started: core::sync::atomic::AtomicBool,
}

impl Op {
    /// A pending op whose outputs (`metas`) are attached by the caller.
    fn new(prim: Primitive, inputs: Vec<Array>, metas: Vec<(Vec<usize>, DType)>, tracer: bool) -> Arc<Op> {
        Arc::new(Op {
            tracer,
            prim,
            inputs: spin::Mutex::new(inputs),
            outputs: spin::Mutex::new(Vec::new()),
            metas,
            stream: crate::device::default_stream_now(),
            ticket: core::sync::atomic::AtomicUsize::new(0),
            visit: core::sync::atomic::AtomicUsize::new(0),
            started: core::sync::atomic::AtomicBool::new(false),
        })
    }
}

impl Drop for Op {
    /// Frees a long chain of pending nodes iteratively; the default recursive drop would
    /// overflow the stack on graphs of 10^5 nodes.
    fn drop(&mut self) {
        let mut stack = mem::take(self.inputs.get_mut());
        while let Some(arr) = stack.pop() {
            if let Some(node) = Arc::into_inner(arr.node) {
                // An evaluated tracer keeps its op too: unlink it here as well, or a long
                // traced chain would drop recursively.
                let Node { state, kept, .. } = node;
                let op = match (state.into_inner(), kept.into_inner()) {
                    (State::Pending(op), _) => Some(op),
                    (_, kept) => kept,
                };
                if let Some(mut op) = op.and_then(Arc::into_inner) {
                    stack.append(op.inputs.get_mut());
                }
            }
        }
    }
}

/// A lazy n-dimensional array. Cloning is cheap (a refcount); operations record graph nodes
/// and [`crate::eval`] materializes them.
#[derive(Clone)]
pub struct Array {
    pub(crate) node: Arc<Node>,
}

impl core::fmt::Debug for Array {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Array(shape={:?}, dtype={})", self.shape(), self.dtype())
    }
}

impl Array {
    // ---- construction -------------------------------------------------------------------

    /// A ready array over existing data (the data must cover `shape` with its strides).
    pub(crate) fn from_data(shape: Vec<usize>, dtype: DType, data: Data) -> Array {
        Array { node: Arc::new(Node::new(shape, dtype, State::Ready(data), false)) }
    }

    /// An array whose evaluation fails with `err` (and so does every array computed from it):
    /// for defects MLX reports lazily, at `eval`, such as a `.npy` whose data is cut short.
    pub(crate) fn failed(shape: Vec<usize>, dtype: DType, err: Error) -> Array {
        Array { node: Arc::new(Node::new(shape, dtype, State::Failed(err), false)) }
    }

    /// Records a single-output operation.
    pub(crate) fn from_op(prim: Primitive, inputs: Vec<Array>, shape: Vec<usize>, dtype: DType) -> Array {
        let tracer = inputs.iter().any(Array::is_tracer);
        let node_shape = shape.clone();
        let op = Op::new(prim, inputs, alloc::vec![(shape, dtype)], tracer);
        let out = Array { node: Arc::new(Node::new(node_shape, dtype, State::Pending(op.clone()), tracer)) };
        *op.outputs.lock() = alloc::vec![Arc::downgrade(&out.node)];
        out
    }

    /// Records an operation with several outputs (siblings that are computed together).
    pub(crate) fn from_op_multi(prim: Primitive, inputs: Vec<Array>, metas: Vec<(Vec<usize>, DType)>) -> Vec<Array> {
        let tracer = inputs.iter().any(Array::is_tracer);
        Array::from_op_traced(prim, inputs, metas, tracer)
    }

    /// [`Array::from_op_multi`] with the tracer flag given (transforms mark their stand-ins).
    pub(crate) fn from_op_traced(prim: Primitive, inputs: Vec<Array>, metas: Vec<(Vec<usize>, DType)>, tracer: bool) -> Vec<Array> {
        let op = Op::new(prim, inputs, metas, tracer);
        let outs: Vec<Array> = op
            .metas
            .iter()
            .map(|(shape, dtype)| Array {
                node: Arc::new(Node::new(shape.clone(), *dtype, State::Pending(op.clone()), tracer)),
            })
            .collect();
        *op.outputs.lock() = outs.iter().map(|a| Arc::downgrade(&a.node)).collect();
        outs
    }

    /// An array holding a copy of `data` with the given shape.
    pub fn from_slice<T: Element>(data: &[T], shape: &[usize]) -> Result<Array> {
        let n = checked_size(shape, "array")?;
        if n != data.len() {
            return Err(Error::invalid(
                "array",
                alloc::format!("{} elements cannot fill shape {:?}.", data.len(), shape),
            ));
        }
        let d = Data::alloc(shape, T::DTYPE, "array")?;
        // SAFETY: fresh buffer of n elements of T.
        unsafe { d.slice_mut::<T>(n) }.copy_from_slice(data);
        Ok(Array::from_data(shape.to_vec(), T::DTYPE, d))
    }

    /// A 0-d array holding `v`.
    pub fn scalar<T: Element>(v: T) -> Result<Array> {
        Array::from_slice(&[v], &[])
    }

    /// A 0-d array of `dtype` holding `v` converted with `astype` rules.
    pub fn from_value(v: Value, dtype: DType) -> Result<Array> {
        crate::dispatch_all!(dtype, T => Array::scalar(T::from_value(v)))
    }

    /// An array whose elements are the raw little-endian bytes given (copied).
    pub fn from_bytes(bytes: &[u8], shape: &[usize], dtype: DType) -> Result<Array> {
        let n = checked_size(shape, "array")?;
        if n.checked_mul(dtype.size()) != Some(bytes.len()) {
            return Err(Error::invalid(
                "array",
                alloc::format!("{} bytes do not hold shape {:?} of {}.", bytes.len(), shape, dtype),
            ));
        }
        let d = Data::alloc(shape, dtype, "array")?;
        // SAFETY: fresh buffer of exactly bytes.len() bytes.
        unsafe { d.slice_mut::<u8>(bytes.len()) }.copy_from_slice(bytes);
        if dtype == DType::Bool {
            // Keep the bool invariant (0 or 1) whatever the source bytes were.
            for b in unsafe { d.slice_mut::<u8>(n) } {
                *b = (*b != 0) as u8;
            }
        }
        Ok(Array::from_data(shape.to_vec(), dtype, d))
    }

    /// An array viewing external bytes without a copy (mapped files, flash). `offset` is in bytes.
    /// Bool data is refused (its bytes could break the 0/1 invariant); copy it with [`Array::from_bytes`].
    pub fn from_buffer(buf: Arc<Buffer>, offset: usize, shape: &[usize], dtype: DType) -> Result<Array> {
        let n = checked_size(shape, "array")?;
        let end = n.checked_mul(dtype.size()).and_then(|b| b.checked_add(offset));
        if end.map_or(true, |e| e > buf.len()) {
            return Err(Error::invalid("array", "The view runs past the end of the buffer."));
        }
        if dtype == DType::Bool {
            return Err(Error::invalid("array", "bool data cannot be viewed without a copy."));
        }
        Ok(Array::from_data(shape.to_vec(), dtype, Data { buf, offset, strides: row_major_strides(shape) }))
    }

    // ---- metadata -------------------------------------------------------------------------

    /// The dimensions.
    pub fn shape(&self) -> &[usize] {
        &self.node.shape
    }
    /// The element type.
    pub fn dtype(&self) -> DType {
        self.node.dtype
    }
    /// Number of dimensions.
    pub fn ndim(&self) -> usize {
        self.node.shape.len()
    }
    /// Number of elements.
    pub fn size(&self) -> usize {
        self.node.shape.iter().product()
    }
    /// Bytes per element.
    pub fn itemsize(&self) -> usize {
        self.dtype().size()
    }
    /// Bytes of all elements.
    pub fn nbytes(&self) -> usize {
        self.size() * self.itemsize()
    }
    /// Whether the array has been evaluated.
    pub fn is_available(&self) -> bool {
        matches!(*self.node.state.lock(), State::Ready(_))
    }
    /// True when both arrays are evaluated and view the same buffer.
    pub fn ptr_eq_data(a: &Array, b: &Array) -> bool {
        match (a.data(), b.data()) {
            (Ok(x), Ok(y)) => Arc::ptr_eq(&x.buf, &y.buf),
            _ => false,
        }
    }

    /// True when both handles refer to the same node.
    pub fn same_node(&self, other: &Array) -> bool {
        Arc::ptr_eq(&self.node, &other.node)
    }

    // ---- evaluation and data access -------------------------------------------------------

    /// Evaluates this array (and what it depends on).
    pub fn eval(&self) -> Result<()> {
        crate::eval::eval(core::slice::from_ref(self))
    }

    /// The materialized data, evaluating first if needed, with its host bytes current (a
    /// buffer a backend keeps on its device is brought to the host: see docs/GPU.md).
    pub fn data(&self) -> Result<Data> {
        let d = self.data_on_device()?;
        d.buf.ensure_host()?;
        Ok(d)
    }

    /// The materialized data, evaluating first if needed, wherever its buffer lives: for
    /// backends, which read their own device buffers without moving them to the host.
    pub fn data_on_device(&self) -> Result<Data> {
        if let Some(d) = self.ready_data() {
            return Ok(d);
        }
        self.eval()?;
        self.ready_data().ok_or_else(|| Error::runtime("eval", "Array was not materialized."))
    }

    /// The data if ready (no evaluation).
    pub(crate) fn ready_data(&self) -> Option<Data> {
        match &*self.node.state.lock() {
            State::Ready(d) => Some(d.clone()),
            _ => None,
        }
    }

    pub(crate) fn failure(&self) -> Option<Error> {
        match &*self.node.state.lock() {
            State::Failed(e) => Some(e.clone()),
            _ => None,
        }
    }

    /// True for a tracer node while some trace is running (as MLX's `is_tracer`): once every
    /// trace has ended, arrays that came out of one evaluate and detach like any other.
    pub fn is_tracer(&self) -> bool {
        self.node.tracer && crate::transforms::tracing()
    }

    /// The op that computed this node: the pending one, or the one an evaluated tracer kept.
    pub(crate) fn graph_op(&self) -> Option<Arc<Op>> {
        if let Some(op) = self.pending_op() {
            return Some(op);
        }
        self.node.kept.lock().clone()
    }

    pub(crate) fn pending_op(&self) -> Option<Arc<Op>> {
        match &*self.node.state.lock() {
            State::Pending(op) => Some(op.clone()),
            _ => None,
        }
    }

    /// The elements in row-major order, evaluating first. `T` must match the dtype.
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        if T::DTYPE != self.dtype() {
            return Err(Error::type_error(
                "to_vec",
                alloc::format!("Requested {} from an array of {}.", T::DTYPE, self.dtype()),
            ));
        }
        let d = self.data()?;
        Ok(d.read::<T>(self.shape())?.into_owned())
    }

    /// The single element of a size-1 array, as a [`Value`].
    pub fn item(&self) -> Result<Value> {
        if self.size() != 1 {
            return Err(Error::invalid("item", "item can only be called on arrays of size 1."));
        }
        crate::dispatch_all!(self.dtype(), T => Ok(self.to_vec::<T>()?[0].to_value()))
    }

    /// Row-major little-endian bytes of the elements (a copy), evaluating first.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let d = self.data()?;
        let n = self.size();
        let sz = self.itemsize();
        let mut out = Vec::with_capacity(n * sz);
        let base = d.offset as isize;
        let bytes = d.buf.bytes();
        d.for_each_offset(self.shape(), |off| {
            let start = (base + off * sz as isize) as usize;
            out.extend_from_slice(&bytes[start..start + sz]);
        });
        Ok(out)
    }

    /// If this handle is the only owner of a dense, allocator-owned buffer of exactly
    /// `nbytes`, hands the buffer over so an elementwise kernel can write its output in place.
    pub(crate) fn donate(self, nbytes: usize) -> core::result::Result<Data, Array> {
        self.donate_if(nbytes, true)
    }

    /// For GPU backends: if this handle is the only owner of a dense buffer of exactly
    /// `nbytes` in a backend's device memory, hands the buffer over so a kernel can write its
    /// output into it (a KV cache's `slice_update`). On refusal the array comes back unchanged.
    /// Host buffers are never given here: CPU kernels take those through the crate's own
    /// donation, under the same rules.
    pub fn donate_device(self, nbytes: usize) -> core::result::Result<Data, Array> {
        self.donate_if(nbytes, false)
    }

    /// The donation rules shared by host and device buffers: `host` picks which kind.
    fn donate_if(self, nbytes: usize, host: bool) -> core::result::Result<Data, Array> {
        if Arc::strong_count(&self.node) != 1 {
            return Err(self);
        }
        let ok = match &*self.node.state.lock() {
            State::Ready(d) => {
                d.offset == 0
                    && d.buf.len() == nbytes
                    && !d.buf.is_external()
                    && d.buf.is_host() == host
                    && Arc::strong_count(&d.buf) == 1
                    && d.is_row_contiguous(&self.node.shape)
            }
            _ => false,
        };
        if !ok {
            return Err(self);
        }
        let shape = self.node.shape.clone();
        let taken = mem::replace(&mut *self.node.state.lock(), State::Failed(Error::runtime("donate", "donated")));
        match taken {
            State::Ready(d) => Ok(Data { buf: d.buf, offset: 0, strides: row_major_strides(&shape) }),
            other => {
                *self.node.state.lock() = other;
                Err(self)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs expand to exactly the offsets the element-by-element walk visits, in order.
    #[test]
    fn runs_cover_the_strided_walk() {
        let cases: &[(&[usize], &[isize])] = &[
            (&[1, 3, 5, 4], &[3 * 8 * 4, 8 * 4, 4, 1]), // a KV-cache window: 5 of 8 positions
            (&[2, 3], &[3, 1]),                          // dense: one run
            (&[3, 2], &[1, 3]),                          // transposed: runs of 1
            (&[4, 1, 3], &[0, 7, 1]),                    // broadcast outer axis
            (&[2, 2, 2], &[0, 0, 0]),                    // a broadcast scalar
            (&[1, 1], &[5, 9]),                          // size-1 axes only
            (&[3, 4], &[8, 2]),                          // stepped inner axis
            (&[2, 3, 4], &[24, 8, 1]),                   // padded rows
            (&[], &[]),                                  // 0-d
        ];
        for &(shape, strides) in cases {
            let mut want = Vec::new();
            for_each_strided(shape, strides, &mut |o| want.push(o));
            let mut got = Vec::new();
            for_each_run(shape, strides, &mut |o, len| got.extend((0..len as isize).map(|i| o + i)));
            assert_eq!(got, want, "shape {shape:?} strides {strides:?}");
        }
    }
}
