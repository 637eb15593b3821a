//! Our writers' output read by the reference readers: files are written to a temp dir and
//! core/tests/data/io/check_written.py loads them with numpy / safetensors / gguf-py (and real
//! MLX when present). Skipped, loudly, when no Python with those modules is available.

use std::path::PathBuf;
use std::process::Command;

use mlx_arm_core::io::{gguf, npy, npz, safetensors};
use mlx_arm_core::quant::GgmlType;
use mlx_arm_core::DType;
use serde_json::json;

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn python() -> Option<String> {
    for p in ["/opt/oracle/bin/python", "python3"] {
        let ok = Command::new(p)
            .args(["-c", "import numpy, safetensors, gguf"])
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false);
        if ok {
            return Some(p.to_string());
        }
    }
    None
}

fn le<T: Copy, const N: usize>(xs: &[T], f: impl Fn(T) -> [u8; N]) -> Vec<u8> {
    xs.iter().flat_map(|&x| f(x)).collect()
}

#[test]
fn reference_readers_accept_our_files() {
    let Some(py) = python() else {
        eprintln!("\n*** SKIPPED io_writers_python: no python with numpy+safetensors+gguf (tried /opt/oracle/bin/python, python3) ***\n");
        return;
    };
    let dir = std::env::temp_dir().join(format!("mlx-arm-io-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut files = vec![];

    let f32s = le(&[1.5f32, -2.0, 0.0, 3.25, 1e-3, -7.0], f32::to_le_bytes);
    let i64s = le(&[-1i64, 2, i64::MAX], i64::to_le_bytes);
    let f64s = le(&[0.1f64, -1e300], f64::to_le_bytes);
    let bools = vec![1u8, 0, 0, 1];
    let u16s = le(&[1u16, 65535], u16::to_le_bytes);
    let c64 = le(&[1.0f32, 2.0, -0.5, 0.0], f32::to_le_bytes);

    // .npy
    let cases: Vec<(&str, DType, Vec<usize>, &[u8])> = vec![
        ("w_f32.npy", DType::Float32, vec![2, 3], &f32s),
        ("w_i64.npy", DType::Int64, vec![3], &i64s),
        ("w_bool.npy", DType::Bool, vec![2, 2], &bools),
        ("w_u16_scalar.npy", DType::Uint16, vec![], &u16s[..2]),
        ("w_c64.npy", DType::Complex64, vec![2], &c64),
        ("w_empty.npy", DType::Float64, vec![0, 4], &[]),
    ];
    for (name, dt, shape, data) in &cases {
        std::fs::write(dir.join(name), npy::write(*dt, shape, false, data).unwrap()).unwrap();
        files.push(json!({"file": name, "kind": "npy",
            "arrays": [{"name": "", "dtype": dt.name(), "shape": shape, "hex": hex(data)}]}));
    }
    // Fortran order: the same logical 2x3 f32 array stored column-major.
    let f32v = [1.5f32, -2.0, 0.0, 3.25, 1e-3, -7.0];
    let col = le(&[f32v[0], f32v[3], f32v[1], f32v[4], f32v[2], f32v[5]], f32::to_le_bytes);
    std::fs::write(dir.join("w_fortran.npy"), npy::write(DType::Float32, &[2, 3], true, &col).unwrap()).unwrap();
    files.push(json!({"file": "w_fortran.npy", "kind": "npy",
        "arrays": [{"name": "", "dtype": "float32", "shape": [2, 3], "hex": hex(&f32s)}]}));

    // .npz, stored and compressed
    let arrays = [
        npz::WriteArray { name: "weight", dtype: DType::Float32, shape: &[3, 2], data: &f32s },
        npz::WriteArray { name: "idx", dtype: DType::Int64, shape: &[3], data: &i64s },
        npz::WriteArray { name: "m", dtype: DType::Bool, shape: &[4], data: &bools },
    ];
    for (name, compress) in [("w_savez.npz", false), ("w_savez_compressed.npz", true)] {
        std::fs::write(dir.join(name), npz::write(&arrays, compress).unwrap()).unwrap();
        files.push(json!({"file": name, "kind": "npz", "arrays": arrays.iter().map(|a| json!({
            "name": a.name, "dtype": a.dtype.name(), "shape": a.shape, "hex": hex(a.data)})).collect::<Vec<_>>()}));
    }

    // safetensors
    let st = [
        safetensors::WriteTensor { name: "a", dtype: DType::Float32, shape: &[2, 3], data: &f32s },
        safetensors::WriteTensor { name: "b.i64", dtype: DType::Int64, shape: &[3], data: &i64s },
        safetensors::WriteTensor { name: "c.f64", dtype: DType::Float64, shape: &[2], data: &f64s },
        safetensors::WriteTensor { name: "d.bool", dtype: DType::Bool, shape: &[2, 2], data: &bools },
        safetensors::WriteTensor { name: "e.u16", dtype: DType::Uint16, shape: &[2], data: &u16s },
        safetensors::WriteTensor { name: "f.empty", dtype: DType::Int8, shape: &[0], data: &[] },
    ];
    let meta = [("format", "pt"), ("note", "quote \" backslash \\ newline \n é")];
    std::fs::write(dir.join("w.safetensors"), safetensors::write(&st, &meta).unwrap()).unwrap();
    files.push(json!({"file": "w.safetensors", "kind": "safetensors",
        "metadata": meta.iter().map(|(k, v)| (k.to_string(), json!(v))).collect::<serde_json::Map<_, _>>(),
        "arrays": st.iter().map(|t| json!({"name": t.name, "dtype": t.dtype.name(), "shape": t.shape, "hex": hex(t.data)})).collect::<Vec<_>>()}));

    // GGUF with metadata of every type and a Q8_0 tensor (two blocks of d=1.0, q=0..31, -16..15).
    let mut q8 = vec![];
    for b in 0..2i32 {
        q8.extend_from_slice(&[0x00, 0x3c]); // f16 1.0
        q8.extend((0..32).map(|i| (i - 16 * b) as i8 as u8));
    }
    let f16s = [0x00u8, 0x3c, 0x00, 0xc0]; // [1.0, -2.0]
    let i32s = le(&[7i32, -9], i32::to_le_bytes);
    use gguf::{Array as A, Value as V};
    let md = vec![
        ("general.architecture", V::String("llama".into())),
        ("general.alignment", V::U32(64)),
        ("t.u8", V::U8(255)),
        ("t.i8", V::I8(-128)),
        ("t.u16", V::U16(65535)),
        ("t.i16", V::I16(-32768)),
        ("t.i32", V::I32(-5)),
        ("t.f32", V::F32(0.25)),
        ("t.bool", V::Bool(true)),
        ("t.u64", V::U64(u64::MAX)),
        ("t.i64", V::I64(i64::MIN)),
        ("t.f64", V::F64(-2.5)),
        ("t.arr", V::Array(A::I32(vec![1, 2, 3]))),
        ("t.strs", V::Array(A::String(vec!["a".into(), "ü".into()]))),
        ("t.nested", V::Array(A::Array(vec![A::U8(vec![1]), A::U8(vec![2, 3])]))),
    ];
    let gt = [
        gguf::WriteTensor { name: "tok.weight", ty: GgmlType::F32, shape: &[2, 3], data: &f32s },
        gguf::WriteTensor { name: "h", ty: GgmlType::F16, shape: &[2], data: &f16s },
        gguf::WriteTensor { name: "i", ty: GgmlType::I32, shape: &[2], data: &i32s },
        gguf::WriteTensor { name: "blk.q8.weight", ty: GgmlType::Q8_0, shape: &[1, 64], data: &q8 },
    ];
    std::fs::write(dir.join("w.gguf"), gguf::write(&md, &gt).unwrap()).unwrap();
    let mut gm = serde_json::Map::new();
    for (k, v) in &md {
        let (t, val) = match v {
            V::String(s) => ("STRING", json!(s)),
            V::U32(x) => ("UINT32", json!(x)),
            V::U8(x) => ("UINT8", json!(x)),
            V::I8(x) => ("INT8", json!(x)),
            V::U16(x) => ("UINT16", json!(x)),
            V::I16(x) => ("INT16", json!(x)),
            V::I32(x) => ("INT32", json!(x)),
            V::F32(x) => ("FLOAT32", json!(x)),
            V::Bool(x) => ("BOOL", json!(x)),
            V::U64(x) => ("UINT64", json!(x)),
            V::I64(x) => ("INT64", json!(x)),
            V::F64(x) => ("FLOAT64", json!(x)),
            V::Array(_) => ("ARRAY", json!(null)),
        };
        let len = if let V::Array(a) = v { a.len() } else { 0 };
        gm.insert(k.to_string(), json!({"type": t, "value": val, "len": len}));
    }
    files.push(json!({"file": "w.gguf", "kind": "gguf", "metadata": gm,
        "arrays": gt.iter().map(|t| json!({"name": t.name, "ggml_type": t.ty.name().to_lowercase(), "shape": t.shape, "hex": hex(t.data)})).collect::<Vec<_>>()}));

    std::fs::write(dir.join("spec.json"), serde_json::to_string_pretty(&json!({"files": files})).unwrap()).unwrap();
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/io/check_written.py");
    let out = Command::new(&py).arg(&script).arg(&dir).output().unwrap();
    let so = String::from_utf8_lossy(&out.stdout);
    let se = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "reference readers rejected our files:\n{so}\n{se}");
    eprintln!("{so}");
    let _ = std::fs::remove_dir_all(&dir);
}
