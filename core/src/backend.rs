//! The narrow backend interface (ggml-style: supports / eval / synchronize) and the registry
//! through which `std` backend crates (Vulkan, OpenCL, OpenBLAS …) plug in at run time.
//! The CPU kernels in [`crate::cpu`] are always present and are the fallback for any op a
//! registered backend does not support.

use crate::array::{Array, Data};
use crate::device::{Device, DeviceType, Stream};
use crate::dtype::DType;
use crate::error::Result;
use crate::primitive::Primitive;
use alloc::sync::Arc;
use alloc::vec::Vec;

/// Shape and dtype of one output of a primitive.
pub type OutMeta = (Vec<usize>, DType);

/// A compute backend for one device.
pub trait Backend: Send + Sync {
    /// A short name for messages and platform info (`"cpu"`, `"vulkan"` …).
    fn name(&self) -> &str;
    /// The device it drives.
    fn device(&self) -> Device;
    /// Whether it can evaluate `prim` on inputs of `inputs` dtypes.
    fn supports(&self, prim: &Primitive, inputs: &[DType]) -> bool;
    /// Evaluates one primitive. Inputs are ready; ownership lets the backend donate buffers.
    fn eval(&self, prim: &Primitive, inputs: Vec<Array>, outputs: &[OutMeta]) -> Result<Vec<Data>>;
    /// Waits for queued work on `stream`.
    fn synchronize(&self, stream: Stream) -> Result<()>;
}

static BACKENDS: spin::RwLock<Vec<Arc<dyn Backend>>> = spin::RwLock::new(Vec::new());

/// Registers a backend; later registrations for the same device take precedence.
pub fn register(backend: Arc<dyn Backend>) {
    BACKENDS.write().push(backend);
}

/// Whether a registered backend provides `device`.
pub fn has_device(device: Device) -> bool {
    BACKENDS.read().iter().any(|b| b.device() == device)
}

/// The backend for `device` (the newest registered), if any.
pub fn for_device(device: Device) -> Option<Arc<dyn Backend>> {
    if device.kind == DeviceType::Cpu {
        return None;
    }
    BACKENDS.read().iter().rev().find(|b| b.device() == device).cloned()
}

/// Names of the registered backends.
pub fn names() -> Vec<alloc::string::String> {
    BACKENDS.read().iter().map(|b| alloc::string::String::from(b.name())).collect()
}

pub(crate) fn synchronize(stream: Stream) -> Result<()> {
    match for_device(stream.device) {
        Some(b) => b.synchronize(stream),
        None => Ok(()),
    }
}

/// Runs `prim` on the stream's backend when it supports it, else on the CPU kernels.
pub(crate) fn dispatch(stream: Stream, prim: &Primitive, inputs: Vec<Array>, outputs: &[OutMeta]) -> Result<Vec<Data>> {
    if let Some(b) = for_device(stream.device) {
        let dtypes: Vec<DType> = inputs.iter().map(|a| a.dtype()).collect();
        if b.supports(prim, &dtypes) {
            return b.eval(prim, inputs, outputs);
        }
    }
    crate::cpu::eval(prim, inputs, outputs)
}
