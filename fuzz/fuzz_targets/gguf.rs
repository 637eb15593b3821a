//! GGUF: header, metadata of every value type, tensor infos and alignment; then block views
//! (`load_gguf_native`), dequantization of every row of every implemented block type, the
//! MLX-compatible conversion (`load_gguf`), and a write → parse round trip.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mlx_arm_core::io::{arrays, gguf, TensorType};
use mlx_arm_core::quant::ggml;
use mlx_arm_fuzz::{buffer, check_infos, init, materialize, materialize_all};

/// Elements dequantized per input at most, so one input stays fast.
const DEQUANT_BUDGET: usize = 1 << 18;

/// The largest alignment whose files the round trip below writes (twice) in memory.
const MAX_ROUND_TRIP_ALIGNMENT: usize = 1 << 20;

fuzz_target!(|data: &[u8]| {
    init();
    let Ok(g) = gguf::parse(data) else { return };
    assert!(g.version == 2 || g.version == 3);
    assert!(g.alignment.is_power_of_two());
    assert_eq!(g.data_start % g.alignment, 0, "data section not aligned");
    if !g.tensors.is_empty() {
        check_infos(&g.tensors, g.data_start..data.len());
    }
    for t in &g.tensors {
        if !t.data.is_empty() {
            assert_eq!((t.data.start - g.data_start) % g.alignment, 0, "tensor {:?} misaligned", t.name);
        }
    }

    // Dequantize every row of every implemented type (a user's matmul reads these blocks).
    let mut budget = DEQUANT_BUDGET;
    for t in &g.tensors {
        let TensorType::Ggml(ty) = t.ty else { panic!("GGUF tensor with a plain type") };
        if !ggml::is_supported(ty) {
            continue;
        }
        let k = t.shape.last().copied().unwrap_or(1);
        let Some(row) = ty.row_bytes(k) else { panic!("row size of an accepted tensor overflows") };
        if k == 0 || row == 0 {
            continue;
        }
        let mut out = vec![0f32; k.min(budget)];
        for chunk in data[t.data.clone()].chunks(row) {
            if budget < k {
                break;
            }
            assert_eq!(chunk.len(), row, "tensor {:?} is not a whole number of rows", t.name);
            ggml::dequantize_row(ty, chunk, &mut out[..k]).expect("dequantizing an accepted row");
            budget -= k;
        }
    }

    // Block views: one uint8 (rows, row_bytes) array per tensor, bytes unchanged.
    let native = arrays::load_gguf_native_buffer(buffer(data)).expect("parse accepted the file, native load must too");
    assert_eq!(native.tensors.len(), g.tensors.len());
    for (n, t) in native.tensors.iter().zip(&g.tensors) {
        assert_eq!(n.name, t.name);
        assert_eq!(materialize(&n.array), &data[t.data.clone()]);
    }
    // MLX's conversion (may refuse types MLX refuses; must not crash).
    if let Ok(l) = arrays::load_gguf_buffer(buffer(data)) {
        materialize_all(&l);
    }

    // A huge but valid `general.alignment` (up to 2^31) makes the written file that large, and
    // the writer is right to pad it; checking that would need gigabytes per input, beyond the
    // fuzzer's memory limit. Files aligned beyond 1 MiB are parsed above but not round-tripped.
    if g.alignment > MAX_ROUND_TRIP_ALIGNMENT {
        return;
    }
    // Round trip through our writer: whatever it accepts must parse back to the same file.
    let md: Vec<(&str, gguf::Value)> = g.metadata.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
    let ws: Vec<gguf::WriteTensor<'_>> = g
        .tensors
        .iter()
        .map(|t| {
            let TensorType::Ggml(ty) = t.ty else { unreachable!() };
            gguf::WriteTensor { name: &t.name, ty, shape: &t.shape, data: &data[t.data.clone()] }
        })
        .collect();
    if let Ok(out) = gguf::write(&md, &ws) {
        let back = gguf::parse(&out).expect("our own GGUF output must parse");
        assert_eq!(back.tensors.len(), g.tensors.len());
        for (b, t) in back.tensors.iter().zip(&g.tensors) {
            assert_eq!((&b.name, b.ty, &b.shape), (&t.name, t.ty, &t.shape));
            assert_eq!(&out[b.data.clone()], &data[t.data.clone()]);
        }
        let md2: Vec<(&str, gguf::Value)> = back.metadata.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
        let again = gguf::write(&md2, &ws).expect("re-writing our own output");
        assert_eq!(again, out, "write(parse(write(x))) != write(x)");
    }
});
