//! Devices and streams. `core` always has the CPU; a GPU exists only when a backend crate
//! registers one (see [`crate::backend`]), and asking for it otherwise is an error.

use crate::error::{Error, Result};
use core::sync::atomic::{AtomicU32, Ordering};

/// The kind of device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeviceType {
    /// The host CPU (always present).
    Cpu,
    /// A GPU provided by a registered backend.
    Gpu,
}

/// A device: kind plus index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Device {
    /// CPU or GPU.
    pub kind: DeviceType,
    /// Which one of that kind.
    pub index: u32,
}

impl Device {
    /// The CPU.
    pub const CPU: Device = Device { kind: DeviceType::Cpu, index: 0 };
    /// The first GPU.
    pub const GPU: Device = Device { kind: DeviceType::Gpu, index: 0 };
}

/// An ordered queue of work on a device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Stream {
    /// Unique id.
    pub index: u32,
    /// The device it runs on.
    pub device: Device,
}

static NEXT_STREAM: AtomicU32 = AtomicU32::new(2);
static DEFAULT_DEVICE: spin::Mutex<Device> = spin::Mutex::new(Device::CPU);
// Stream 0 is the CPU default, stream 1 the GPU default.
static DEFAULT_STREAMS: spin::Mutex<[Stream; 2]> = spin::Mutex::new([
    Stream { index: 0, device: Device::CPU },
    Stream { index: 1, device: Device::GPU },
]);

fn slot(d: Device) -> usize {
    match d.kind {
        DeviceType::Cpu => 0,
        DeviceType::Gpu => 1,
    }
}

/// Errors unless a backend provides `device`: an invalid argument, as MLX reports a device it
/// was built without (Python ValueError).
pub fn check_available(device: Device, op: &'static str) -> Result<()> {
    if device.kind == DeviceType::Cpu || crate::backend::has_device(device) {
        Ok(())
    } else {
        Err(Error::invalid(op, "No GPU backend is available: build with a Vulkan or OpenCL backend, or use the CPU."))
    }
}

/// The device new operations run on.
pub fn default_device() -> Device {
    *DEFAULT_DEVICE.lock()
}

/// Makes `device` the default; a GPU without a backend is an error.
pub fn set_default_device(device: Device) -> Result<()> {
    check_available(device, "set_default_device")?;
    *DEFAULT_DEVICE.lock() = device;
    Ok(())
}

/// The default stream of `device`.
pub fn default_stream(device: Device) -> Result<Stream> {
    check_available(device, "default_stream")?;
    Ok(DEFAULT_STREAMS.lock()[slot(device)])
}

/// Makes `stream` the default of its device.
pub fn set_default_stream(stream: Stream) -> Result<()> {
    check_available(stream.device, "set_default_stream")?;
    DEFAULT_STREAMS.lock()[slot(stream.device)] = stream;
    Ok(())
}

/// A new stream on `device`.
pub fn new_stream(device: Device) -> Result<Stream> {
    check_available(device, "new_stream")?;
    Ok(Stream { index: NEXT_STREAM.fetch_add(1, Ordering::Relaxed), device })
}

/// Where a caller-named stream comes from (see [`set_named_stream_source`]); read on every op
/// recording, so a lock-free once-cell.
static NAMED_STREAM_SOURCE: spin::Once<fn() -> Option<Stream>> = spin::Once::new();

/// Lets a front end name the stream of the operation being recorded: `source` is asked at each
/// recording (the C API answers with the `mlx_stream` argument of the call in progress, per
/// thread). A named stream on the default device records the op, so [`crate::graph_utils::pending_streams`]
/// can tell which streams an evaluation would run on (MLX binds streams to threads); a stream of
/// another device does not move the op (it still runs on the default device). Only the first
/// source installed counts (the front end installs one for the process).
pub fn set_named_stream_source(source: fn() -> Option<Stream>) {
    NAMED_STREAM_SOURCE.call_once(|| source);
}

/// The stream new operations are recorded on.
pub(crate) fn default_stream_now() -> Stream {
    let default = DEFAULT_STREAMS.lock()[slot(default_device())];
    match NAMED_STREAM_SOURCE.get().and_then(|f| f()) {
        Some(named) if named.device == default.device => named,
        _ => default,
    }
}

/// Waits until all work queued on `stream` is done (CPU work completes inside `eval`).
pub fn synchronize(stream: Stream) -> Result<()> {
    check_available(stream.device, "synchronize")?;
    crate::backend::synchronize(stream)
}
