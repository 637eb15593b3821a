//! Device-resident buffers (docs/GPU.md): a fake backend keeps its outputs in memory the CPU
//! cannot map; the CPU reads them only through a counted download, ops the backend lacks run on
//! the CPU with their inputs brought over, and host writes drop a stale device mirror.
//! One test function: the default device and the counters are process-wide.

use mlx_arm_core::array::Data;
use mlx_arm_core::backend::{self, Backend, OutMeta};
use mlx_arm_core::buffer::{self, Buffer, DeviceMemory, Direction};
use mlx_arm_core::ops::unary::UnaryOp;
use mlx_arm_core::primitive::Primitive;
use mlx_arm_core::{device, ops, Array, DType, Device, Result, Stream};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// "Device" memory: a Vec the host may not touch directly.
struct FakeMem(Mutex<Vec<u8>>);

static SYNCS: AtomicUsize = AtomicUsize::new(0);

impl DeviceMemory for FakeMem {
    fn device(&self) -> Device {
        Device::GPU
    }
    fn host_ptr(&self) -> Option<NonNull<u8>> {
        None
    }
    fn sync_to_host(&self, mirror: Option<&mut [u8]>) -> Result<()> {
        SYNCS.fetch_add(1, Ordering::Relaxed);
        mirror.expect("unmapped memory gets a mirror").copy_from_slice(&self.0.lock().unwrap());
        Ok(())
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// Negates f32 arrays "on the device"; nothing else.
struct FakeGpu;

impl Backend for FakeGpu {
    fn name(&self) -> &str {
        "fake-gpu"
    }
    fn device(&self) -> Device {
        Device::GPU
    }
    fn supports(&self, prim: &Primitive, inputs: &[DType]) -> bool {
        matches!(prim, Primitive::Unary(UnaryOp::Negative)) && inputs == [DType::Float32]
    }
    fn eval(&self, _prim: &Primitive, inputs: Vec<Array>, outputs: &[OutMeta]) -> Result<Vec<Data>> {
        let x = inputs[0].data_on_device()?;
        // Read the input where it lives: our own memory directly, a host buffer by an upload.
        let vals: Vec<f32> = match x.buf.device_memory().and_then(|m| m.as_any().downcast_ref::<FakeMem>()) {
            Some(m) => bytemuck_f32(&m.0.lock().unwrap()),
            None => {
                buffer::record_transfer(Direction::HostToDevice, x.buf.len());
                inputs[0].to_vec::<f32>()?
            }
        };
        let out: Vec<u8> = vals.iter().flat_map(|v| (-v).to_le_bytes()).collect();
        let len = out.len();
        let buf = Buffer::from_device(Box::new(FakeMem(Mutex::new(out))), len, true, "negative")?;
        Ok(vec![Data { buf, offset: 0, strides: vec![1; outputs[0].0.len().min(1)] }])
    }
    fn synchronize(&self, _stream: Stream) -> Result<()> {
        Ok(())
    }
}

fn bytemuck_f32(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect()
}

#[test]
fn device_buffers_move_only_when_needed_and_are_counted() {
    // Without a backend the GPU is an error, not a crash.
    assert!(device::set_default_device(Device::GPU).is_err());
    backend::register(Arc::new(FakeGpu));
    device::set_default_device(Device::GPU).unwrap();
    buffer::reset_transfer_stats();

    let x = Array::from_slice(&[1.0f32, -2.0, 3.5, 0.0], &[4]).unwrap();
    let y = ops::negative(&x).unwrap();
    let z = ops::negative(&y).unwrap(); // device → device: no transfer
    z.eval().unwrap();
    let s = buffer::transfer_stats();
    assert_eq!((s.host_to_device, s.host_to_device_bytes), (1, 16), "one upload of x");
    assert_eq!(s.device_to_host, 0, "nothing read back yet");
    assert_eq!(buffer::device_active_memory(), 32, "y and z live on the device");
    let zd = z.data_on_device().unwrap();
    assert!(!zd.buf.is_host());

    // Reading brings it over once.
    assert_eq!(z.to_vec::<f32>().unwrap(), vec![1.0, -2.0, 3.5, 0.0]);
    assert_eq!(z.to_vec::<f32>().unwrap(), vec![1.0, -2.0, 3.5, 0.0]);
    let s = buffer::transfer_stats();
    assert_eq!((s.device_to_host, s.device_to_host_bytes), (1, 16));
    assert_eq!(SYNCS.load(Ordering::Relaxed), 1);

    // An op the backend lacks (exp) runs on the CPU; its device input is brought over first.
    let w = ops::negative(&x).unwrap();
    let e = ops::exp(&w).unwrap();
    let got = e.to_vec::<f32>().unwrap();
    let want: Vec<f32> = [-1.0f32, 2.0, -3.5, 0.0].iter().map(|v| v.exp()).collect();
    assert_eq!(got, want);
    let s = buffer::transfer_stats();
    assert_eq!(s.device_to_host, 2, "w was downloaded for the CPU kernel");
    assert!(e.data().unwrap().buf.is_host(), "the CPU kernel's output is host memory");

    // A device buffer is never donated to a CPU kernel (it writes through host pointers).
    // (Otherwise it would be: d's node and buffer are held by square's op alone.)
    let d = ops::negative(&x).unwrap();
    d.eval().unwrap();
    let sq = ops::square(&d).unwrap();
    drop(d);
    assert_eq!(sq.to_vec::<f32>().unwrap(), vec![1.0, 4.0, 12.25, 0.0]);
    assert!(sq.data().unwrap().buf.is_host(), "square wrote a fresh host buffer");

    // Host writes drop a device mirror.
    let hb = Buffer::new(64, "test").unwrap();
    hb.set_device_mirror(Arc::new(FakeMem(Mutex::new(vec![0; 64]))));
    assert!(hb.device_mirror().is_some());
    let _ = hb.as_mut_ptr();
    assert!(hb.device_mirror().is_none());

    drop((x, y, z, zd, w, e, sq));
    assert_eq!(buffer::device_active_memory(), 0, "device memory is returned with its buffers");
    device::set_default_device(Device::CPU).unwrap();
}
