//! safetensors: header JSON, tensor entries, data tiling; then `mx.load`-style loading of
//! every tensor and a write → parse round trip.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mlx_arm_core::io::{arrays, safetensors, TensorType};
use mlx_arm_fuzz::{buffer, check_infos, expected_elements, init, materialize};

fuzz_target!(|data: &[u8]| {
    init();
    let Ok(st) = safetensors::parse(data) else { return };
    assert_eq!(st.file_dtypes.len(), st.tensors.len());
    assert!(st.data_start <= data.len());
    check_infos(&st.tensors, st.data_start..data.len());
    // The tensors lie inside the data section (checked per tensor above) and together fit it;
    // bytes after the last one are ignored, as real MLX reads such files.
    let total: usize = st.tensors.iter().map(|t| t.data.len()).sum();
    assert!(total <= data.len() - st.data_start, "tensors overflow the data section");

    // What a user does next: load (views or copies) and read every element.
    let loaded = arrays::load_safetensors_buffer(buffer(data)).expect("parse accepted the file, load must too");
    assert_eq!(loaded.arrays.len(), st.tensors.len());
    for ((name, a), t) in loaded.arrays.iter().zip(&st.tensors) {
        assert_eq!(name, &t.name);
        assert_eq!(a.shape(), &t.shape[..]);
        let TensorType::Plain(dt) = t.ty else { panic!("safetensors tensor with a GGML type") };
        assert_eq!(a.dtype(), dt);
        assert_eq!(materialize(a), expected_elements(dt, &data[t.data.clone()]), "tensor {name:?} bytes");
    }

    // Write what we read and read it back: same names, dtypes, shapes, bytes and metadata.
    let ws: Vec<safetensors::WriteTensor<'_>> = st
        .tensors
        .iter()
        .map(|t| {
            let TensorType::Plain(dtype) = t.ty else { unreachable!() };
            safetensors::WriteTensor { name: &t.name, dtype, shape: &t.shape, data: &data[t.data.clone()] }
        })
        .collect();
    let md: Vec<(&str, &str)> = st.metadata.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let out = safetensors::write(&ws, &md).expect("re-writing a parsed file must succeed");
    let back = safetensors::parse(&out).expect("our own output must parse");
    assert_eq!(back.metadata, st.metadata);
    assert_eq!(back.tensors.len(), st.tensors.len());
    for t in &st.tensors {
        let b = back.tensors.iter().find(|b| b.name == t.name).expect("tensor lost in the round trip");
        assert_eq!((b.ty, &b.shape), (t.ty, &t.shape));
        assert_eq!(&out[b.data.clone()], &data[t.data.clone()]);
    }
});
