//! Array-level load/save (`io::arrays`) against real MLX 0.32.4:
//! - files written by MLX / numpy / safetensors / gguf-py load with the keys, dtypes, shapes
//!   and element bytes `mx.load` returns (core/tests/data/io_arrays/manifest.json, made by
//!   gen_io_arrays.py), both from a mapped file and from a static byte slice;
//! - GGUF Q4_0/Q4_1/Q8_0 → affine and Q2_K/Q4_K/Q6_K/BF16 → f16 bit for bit with MLX;
//! - `load_gguf_native` bytes equal gguf-py's `GGUFReader` tensor data;
//! - files our savers write load in real MLX identically (check_mlx_loads.py; skipped loudly
//!   without a Python that has mlx);
//! - a 1 GB safetensors loads without reading it (resident memory), and arrays outlive the loader.

use std::path::{Path, PathBuf};
use std::process::Command;

use mlx_arm_core::io::arrays::{self, Loaded, Metadata};
use mlx_arm_core::io::gguf::{Array as GArray, Value};
use mlx_arm_core::{ops, Array, DType};
use serde_json::{json, Value as J};

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/io_arrays")
}

fn manifest() -> J {
    let text = std::fs::read_to_string(data_dir().join("manifest.json")).expect("manifest.json");
    serde_json::from_str(&text).expect("manifest json")
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// MLX's view of a GGUF metadata value: ("string"|"strings"|"array", dtype, values as JSON).
fn mlx_view(v: &Value) -> J {
    fn arr(dtype: &str, shape: Vec<usize>, vals: Vec<J>) -> J {
        json!({"kind": "array", "dtype": dtype, "shape": shape, "value": vals})
    }
    macro_rules! a1 {
        ($d:expr, $v:expr) => {
            arr($d, vec![$v.len()], $v.iter().map(|x| json!(x)).collect())
        };
    }
    match v {
        Value::String(s) => json!({"kind": "string", "value": s}),
        Value::U8(x) => arr("uint8", vec![], vec![json!(x)]),
        Value::I8(x) => arr("int8", vec![], vec![json!(x)]),
        Value::U16(x) => arr("uint16", vec![], vec![json!(x)]),
        Value::I16(x) => arr("int16", vec![], vec![json!(x)]),
        Value::U32(x) => arr("uint32", vec![], vec![json!(x)]),
        Value::I32(x) => arr("int32", vec![], vec![json!(x)]),
        Value::U64(x) => arr("uint64", vec![], vec![json!(x)]),
        Value::I64(x) => arr("int64", vec![], vec![json!(x)]),
        Value::F32(x) => arr("float32", vec![], vec![json!(*x as f64)]),
        Value::F64(x) => arr("float32", vec![], vec![json!(*x as f32 as f64)]),
        Value::Bool(x) => arr("bool", vec![], vec![json!(x)]),
        Value::Array(GArray::String(v)) => json!({"kind": "strings", "value": v}),
        Value::Array(GArray::U8(v)) => a1!("uint8", v),
        Value::Array(GArray::I8(v)) => a1!("int8", v),
        Value::Array(GArray::U16(v)) => a1!("uint16", v),
        Value::Array(GArray::I16(v)) => a1!("int16", v),
        Value::Array(GArray::U32(v)) => a1!("uint32", v),
        Value::Array(GArray::I32(v)) => a1!("int32", v),
        Value::Array(GArray::U64(v)) => a1!("uint64", v),
        Value::Array(GArray::I64(v)) => a1!("int64", v),
        Value::Array(GArray::F32(v)) => arr("float32", vec![v.len()], v.iter().map(|x| json!(*x as f64)).collect()),
        Value::Array(GArray::F64(v)) => arr("float32", vec![v.len()], v.iter().map(|x| json!(*x as f32 as f64)).collect()),
        Value::Array(GArray::Bool(v)) => a1!("bool", v),
        Value::Array(GArray::Array(_)) => json!({"kind": "nested"}),
    }
}

/// Compares a load with MLX's result for one manifest case; returns the mismatches.
fn compare(tag: &str, case: &J, got: &Loaded) -> Vec<String> {
    let mut f = vec![];
    let want = case["arrays"].as_object().expect("arrays");
    let mut gk: Vec<&str> = got.names().collect();
    let mut wk: Vec<&str> = want.keys().map(|s| s.as_str()).collect();
    gk.sort();
    wk.sort();
    if gk != wk {
        f.push(format!("{tag}: keys {gk:?} != MLX {wk:?}"));
        return f;
    }
    for (k, w) in want {
        let a = got.get(k).expect("key present");
        let shape: Vec<usize> = w["shape"].as_array().unwrap().iter().map(|d| d.as_u64().unwrap() as usize).collect();
        if a.dtype().name() != w["dtype"].as_str().unwrap() || a.shape() != shape.as_slice() {
            f.push(format!("{tag}[{k}]: {} {:?} != MLX {} {:?}", a.dtype(), a.shape(), w["dtype"], shape));
            continue;
        }
        // Where MLX is known to be wrong (see gen_io_arrays.py), the oracle is gguf-py's
        // reference dequantization, and MLX must still differ from it (else the bug was fixed).
        let expect = match w.get("reference_hex") {
            Some(r) => {
                if r == &w["hex"] {
                    f.push(format!("{tag}[{k}]: MLX no longer shows '{}': drop the workaround", w["mlx_bug"]));
                }
                r.as_str().unwrap()
            }
            None => w["hex"].as_str().unwrap(),
        };
        match a.to_bytes() {
            Ok(b) if hex(&b) == expect => {}
            Ok(b) => f.push(format!("{tag}[{k}]: bytes {} != MLX {}", &hex(&b)[..hex(&b).len().min(64)], &w["hex"].as_str().unwrap()[..w["hex"].as_str().unwrap().len().min(64)])),
            Err(e) => f.push(format!("{tag}[{k}]: {e}")),
        }
    }
    if let Some(m) = case.get("metadata") {
        let m = m.as_object().unwrap();
        match &got.metadata {
            Metadata::Strings(kv) => {
                let ours: serde_json::Map<String, J> =
                    kv.iter().map(|(k, v)| (k.clone(), json!({"kind": "string", "value": v}))).collect();
                if &ours != m {
                    f.push(format!("{tag}: metadata {ours:?} != MLX {m:?}"));
                }
            }
            Metadata::Gguf(kv) => {
                let ours: serde_json::Map<String, J> = kv.iter().map(|(k, v)| (k.clone(), mlx_view(v))).collect();
                if &ours != m {
                    f.push(format!("{tag}: metadata\n  ours {ours:?}\n  MLX  {m:?}"));
                }
            }
            Metadata::None => f.push(format!("{tag}: no metadata, MLX has {m:?}")),
        }
    }
    f
}

#[test]
fn loads_match_real_mlx() {
    let m = manifest();
    let mut failures = vec![];
    let mut checked = 0;
    for case in m["cases"].as_array().unwrap() {
        let file = case["file"].as_str().unwrap();
        let path = data_dir().join("files").join(file);
        let fmt = case["format"].as_str().unwrap();
        // From a mapped file, and from a static byte slice (the firmware path).
        let bytes: &'static [u8] = Box::leak(std::fs::read(&path).expect("golden file").into_boxed_slice());
        for (tag, res) in [
            (format!("{file} (mmap)"), arrays::load(&path, None)),
            (format!("{file} (bytes)"), arrays::load_bytes(bytes, fmt)),
        ] {
            checked += 1;
            match (case.get("error"), res) {
                (Some(e), Ok(_)) => failures.push(format!("{tag}: loaded, MLX fails with {e}")),
                (Some(e), Err(err)) => {
                    // MLX: "RuntimeError: [load_gguf] gguf_tensor_to_f16 failed".
                    let mlx_msg = e.as_str().unwrap().split_once(": ").unwrap().1;
                    if !err.to_string().contains(mlx_msg) {
                        failures.push(format!("{tag}: error '{err}' lacks MLX's '{mlx_msg}'"));
                    }
                }
                (None, Err(err)) => failures.push(format!("{tag}: {err}")),
                (None, Ok(l)) => failures.extend(compare(&tag, case, &l)),
            }
        }
    }
    assert!(failures.is_empty(), "{} of {checked} loads differ from real MLX:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn views_not_copies_where_the_layout_allows() {
    let dir = data_dir().join("files");
    // safetensors.numpy pads the header: every tensor is aligned, so nothing is copied.
    let st = arrays::load(dir.join("st_aligned.safetensors"), None).unwrap();
    assert_eq!(st.copied_bytes, 0);
    // A Fortran-order .npy is column-strided (MLX: a transposed view): a view of a static
    // region; from a file, read into allocator memory when evaluated, as MLX reads every .npy.
    let fortran = std::fs::read(dir.join("np_fortran.npy")).unwrap().leak();
    let f = arrays::load_npy_bytes(fortran).unwrap();
    assert_eq!(f.copied_bytes, 0);
    let strides = f.arrays[0].1.data().unwrap().strides.clone();
    assert_eq!(strides, [1, 2, 6], "column strides of shape (2, 3, 4)");
    let f = arrays::load(dir.join("np_fortran.npy"), None).unwrap();
    let d = f.arrays[0].1.data().unwrap();
    assert!(!d.buf.is_external() && d.strides == strides);
    // Big-endian data must be swapped, bool normalized, compressed members inflated.
    assert_eq!(arrays::load(dir.join("np_bigendian.npy"), None).unwrap().copied_bytes, 20);
    assert_eq!(arrays::load(dir.join("mlx_bool.npy"), None).unwrap().copied_bytes, 4);
    let c = arrays::load(dir.join("mlx_compressed.npz"), None).unwrap();
    assert_eq!(c.copied_bytes, 12 * 4 + 3 * 2 + 2);
    // GGUF plain tensors are 32-byte aligned views; quantized ones are converted.
    let g = arrays::load(dir.join("mlx_saved.gguf"), None).unwrap();
    assert_eq!(g.copied_bytes, 0);
}

#[test]
fn gguf_native_matches_gguf_py() {
    let path = data_dir().join("files/gguf_quant.gguf");
    gguf_native_equals_gguf_py(arrays::load_gguf_native(&path).unwrap());
    // The header parsed from a lazy mapping, only the data section read into memory (as the
    // language-model loader keeps weights): the same tensors, the same bytes.
    let header = mlx_arm_core::io::mmap::map_file("t", &path).unwrap();
    let mut starts = vec![];
    let parts = arrays::load_gguf_native_parts(header.bytes(), &mut |from| {
        starts.push(from);
        mlx_arm_core::io::mmap::read_file_huge("t", &path, from, from, &mut |_, _| {})
    });
    assert!(starts.len() == 1 && starts[0] > 0, "{starts:?}");
    gguf_native_equals_gguf_py(parts.unwrap());
    // A data buffer that misses the section's start cannot place the tensors.
    let short = arrays::load_gguf_native_parts(header.bytes(), &mut |from| {
        mlx_arm_core::io::mmap::read_file_huge("t", &path, from + 32, from + 32, &mut |_, _| {})
    });
    assert!(short.is_err());
}

fn gguf_native_equals_gguf_py(n: arrays::GgufNative) {
    let m = manifest();
    let want = m["gguf_native"].as_array().unwrap();
    assert_eq!(n.tensors.len(), want.len());
    assert_eq!(n.copied_bytes, 0);
    let mut failures = vec![];
    for (t, w) in n.tensors.iter().zip(want) {
        let shape: Vec<usize> = w["shape"].as_array().unwrap().iter().map(|d| d.as_u64().unwrap() as usize).collect();
        if t.name != w["name"].as_str().unwrap() || t.ty.id() as u64 != w["type"].as_u64().unwrap() || t.shape != shape {
            failures.push(format!("{}: {:?} {:?} != gguf-py {w}", t.name, t.ty, t.shape));
            continue;
        }
        let rows: usize = shape[..shape.len() - 1].iter().product();
        let row_bytes = t.ty.row_bytes(shape[shape.len() - 1]).unwrap();
        if t.array.dtype() != DType::Uint8 || t.array.shape() != [rows, row_bytes] {
            failures.push(format!("{}: array {:?}", t.name, t.array));
        }
        if hex(&t.array.to_bytes().unwrap()) != w["hex"].as_str().unwrap() {
            failures.push(format!("{}: bytes differ from gguf-py", t.name));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn saver_refusals_match_mlx_messages() {
    let m = manifest();
    for e in m["saver_errors"].as_array().unwrap() {
        let dt = DType::from_name(e["dtype"].as_str().unwrap()).unwrap();
        let a = ops::zeros(&[2], dt).unwrap();
        let res = match e["fn"].as_str().unwrap() {
            "save_gguf" => arrays::gguf_bytes(&[("a", &a)], &[]),
            _ => arrays::safetensors_bytes(&[("a", &a)], &[]),
        };
        let want = e["error"].as_str().unwrap().split_once(": ").unwrap().1;
        match res {
            Ok(_) => panic!("{e}: we wrote it"),
            Err(err) => assert_eq!(err.to_string(), want),
        }
    }
}

#[test]
fn unknown_formats_are_refused_like_mlx() {
    let e = arrays::load("/nonexistent/x.foo", None).unwrap_err();
    assert_eq!(e.to_string(), "[load] Unknown file format foo");
    let e = arrays::load("/nonexistent/noext", None).unwrap_err();
    assert_eq!(e.to_string(), "[load] Could not infer file format from extension");
    let e = arrays::load("/nonexistent/x.safetensors", None).unwrap_err();
    assert!(e.to_string().starts_with("[load_safetensors] Failed to open"), "{e}");
    let e = arrays::load_bytes(b"GGUF\x03\x00", "gguf").unwrap_err();
    assert!(!e.to_string().is_empty());
}

fn python_with_mlx() -> Option<String> {
    for p in ["/opt/oracle/bin/python", "python3"] {
        let ok = Command::new(p).args(["-c", "import mlx.core, numpy"]).output().map(|o| o.status.success()).unwrap_or(false);
        if ok {
            return Some(p.to_string());
        }
    }
    None
}

fn spec_entry(file: &Path, arrays: &[(&str, &Array)]) -> J {
    let mut m = serde_json::Map::new();
    for (k, a) in arrays {
        m.insert(k.to_string(), json!({"dtype": a.dtype().name(), "shape": a.shape(), "hex": hex(&a.to_bytes().unwrap())}));
    }
    json!({"file": file.to_str().unwrap(), "arrays": m})
}

#[test]
fn real_mlx_loads_our_files() {
    let Some(py) = python_with_mlx() else {
        eprintln!("\n*** SKIPPED io_arrays::real_mlx_loads_our_files: no python with mlx (tried /opt/oracle/bin/python, python3) ***\n");
        return;
    };
    let dir = std::env::temp_dir().join(format!("mlx-arm-io-arrays-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f32s = Array::from_slice(&[1.5f32, -2.0, 0.0, 3.25, 1e-3, -7.0], &[2, 3]).unwrap();
    let transposed = ops::transpose(&f32s, None).unwrap(); // non-contiguous source
    let bf = Array::from_slice(&[half::bf16::from_f32(1.0), half::bf16::from_f32(-3.5)], &[2]).unwrap();
    let hf = Array::from_slice(&[half::f16::from_f32(0.5), half::f16::from_f32(-65504.0), half::f16::INFINITY], &[3]).unwrap();
    let bools = Array::from_slice(&[true, false, true, true], &[2, 2]).unwrap();
    let i64s = Array::from_slice(&[-1i64, i64::MAX], &[2]).unwrap();
    let u64s = Array::from_slice(&[u64::MAX], &[1]).unwrap();
    let c64 = Array::from_slice(&[mlx_arm_core::Complex64::new(1.0, -2.0)], &[1]).unwrap();
    let scalar = Array::scalar(7i32).unwrap();
    let empty = ops::zeros(&[0, 3], DType::Float32).unwrap();
    let i8s = Array::from_slice(&[-128i8, 0, 127], &[3]).unwrap();
    let i16s = Array::from_slice(&[-3i16, 4, 5, 6], &[2, 2]).unwrap();
    let u8s = Array::from_slice(&[0u8, 200], &[2]).unwrap();
    let mut cases = vec![];

    for (name, a) in [("f32", &f32s), ("t", &transposed), ("bf16", &bf), ("bool", &bools), ("scalar", &scalar), ("c64", &c64), ("empty", &empty)] {
        let p = dir.join(format!("ours_{name}"));
        arrays::save(&p, a).unwrap(); // ".npy" appended like mx.save
        cases.push(spec_entry(&p.with_extension("npy"), &[("", a)]));
    }
    let npz_set: Vec<(&str, &Array)> = vec![("a", &f32s), ("t", &transposed), ("b", &bools), ("h", &hf), ("z", &bf)];
    arrays::savez(dir.join("ours"), &npz_set).unwrap();
    cases.push(spec_entry(&dir.join("ours.npz"), &npz_set));
    arrays::savez_compressed(dir.join("ours_c.npz"), &npz_set).unwrap();
    cases.push(spec_entry(&dir.join("ours_c.npz"), &npz_set));

    let st_set: Vec<(&str, &Array)> = vec![
        ("f32", &f32s), ("t", &transposed), ("bf16", &bf), ("f16", &hf), ("bool", &bools), ("i64", &i64s),
        ("u64", &u64s), ("c64", &c64), ("scalar", &scalar), ("empty", &empty), ("i8", &i8s), ("u8", &u8s),
    ];
    arrays::save_safetensors(dir.join("ours"), &st_set, &[("format", "mlx"), ("k", "välue")]).unwrap();
    let mut e = spec_entry(&dir.join("ours.safetensors"), &st_set);
    e["metadata"] = json!({"format": "mlx", "k": "välue"});
    cases.push(e);

    let gg_set: Vec<(&str, &Array)> = vec![("w", &f32s), ("t", &transposed), ("h", &hf), ("i8", &i8s), ("i16", &i16s), ("s", &scalar)];
    let meta = [
        ("name", Value::String("ours".into())),
        ("tags", Value::Array(GArray::String(vec!["a".into(), "b".into()]))),
        ("n", Value::U32(3)),
        ("v", Value::Array(GArray::F32(vec![0.5, -1.0]))),
    ];
    arrays::save_gguf(dir.join("ours"), &gg_set, &meta).unwrap();
    let mut e = spec_entry(&dir.join("ours.gguf"), &gg_set);
    e["metadata"] = json!({"name": "ours", "tags": ["a", "b"], "n": {"dtype": "uint32", "value": [3]}, "v": {"dtype": "float32", "value": [0.5, -1.0]}});
    cases.push(e);

    // Round trip through our own loader too.
    let back = arrays::load(dir.join("ours.safetensors"), None).unwrap();
    assert_eq!(back.len(), st_set.len());

    let spec = dir.join("spec.json");
    std::fs::write(&spec, serde_json::to_string(&json!({"cases": cases})).unwrap()).unwrap();
    let out = Command::new(&py).arg(data_dir().join("check_mlx_loads.py")).arg(&spec).output().unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let _ = std::fs::remove_dir_all(&dir);
    assert!(out.status.success(), "real MLX disagrees with our files:\n{text}");
}

/// Resident set size in bytes (Linux /proc/self/statm; None elsewhere).
fn rss() -> Option<usize> {
    let s = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: usize = s.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

#[test]
fn one_gigabyte_safetensors_is_mapped_not_read() {
    if rss().is_none() {
        eprintln!("\n*** SKIPPED one_gigabyte_safetensors_is_mapped_not_read: no /proc/self/statm ***\n");
        return;
    }
    const N: usize = 1 << 30; // bytes of tensor data
    let dir = std::env::temp_dir().join(format!("mlx-arm-io-1g-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("big.safetensors");
    {
        use std::io::Write;
        let half = N / 2;
        let header = format!(
            "{{\"a\":{{\"dtype\":\"F32\",\"shape\":[{},1024],\"data_offsets\":[0,{half}]}},\"b\":{{\"dtype\":\"U8\",\"shape\":[{half}],\"data_offsets\":[{half},{N}]}}}}",
            half / 4096
        );
        let mut hb = header.into_bytes();
        while hb.len() % 8 != 0 {
            hb.push(b' ');
        }
        let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        f.write_all(&(hb.len() as u64).to_le_bytes()).unwrap();
        f.write_all(&hb).unwrap();
        // f32 element i of "a" holds i as f32 for the first page pattern; the rest repeats.
        let chunk: Vec<u8> = (0..(1 << 20) / 4).flat_map(|i| (i as f32).to_le_bytes()).collect();
        for _ in 0..N / chunk.len() {
            f.write_all(&chunk).unwrap();
        }
        f.flush().unwrap();
    }
    let before = rss().unwrap();
    let loaded = arrays::load(&path, None).unwrap();
    let after_load = rss().unwrap();
    assert_eq!(loaded.copied_bytes, 0);
    let a = loaded.get("a").unwrap().clone();
    let b = loaded.get("b").unwrap().clone();
    assert_eq!(a.shape(), [N / 2 / 4096, 1024]);
    drop(loaded); // the loader's handles go; the arrays keep the mapping alive
    let _ = std::fs::remove_file(&path); // unlinking keeps the mapped pages valid on Linux
    let rise = after_load.saturating_sub(before);
    assert!(rise < 64 << 20, "loading a 1 GiB file raised RSS by {rise} bytes");

    // Touch 256 MiB of "b": resident memory rises by about that much.
    let data = b.data().unwrap();
    let bytes = &data.buf.bytes()[data.offset..data.offset + (256 << 20)];
    let mut acc = 0u64;
    for p in bytes.chunks(4096) {
        acc = acc.wrapping_add(p[p.len() - 1] as u64);
    }
    let after_touch = rss().unwrap();
    assert!(acc > 0);
    assert!(after_touch.saturating_sub(after_load) > 200 << 20, "touching 256 MiB raised RSS by only {}", after_touch - after_load);
    // Values read through the array API after the loader is gone.
    let row = ops::slice(&a, &[3, 0], &[4, 4], &[1, 1]).unwrap();
    assert_eq!(row.to_vec::<f32>().unwrap(), vec![3072.0, 3073.0, 3074.0, 3075.0]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Hostile input through the array layer: the malformed corpus of core/tests/data/io (made by
/// gen_malformed.py) must fail with an error (at load, or at eval for a `.npy` whose data is cut
/// short, as in MLX), and every truncation and single-byte corruption
/// of our golden files must return (Ok or Err) without panicking.
#[test]
fn hostile_files_error_never_panic() {
    let mal = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/io/malformed");
    let mut failures = vec![];
    for e in std::fs::read_dir(&mal).unwrap() {
        let p = e.unwrap().path();
        let ext = p.extension().and_then(|x| x.to_str()).unwrap_or("").to_string();
        if ext == "json" {
            continue;
        }
        let bytes: &'static [u8] = Box::leak(std::fs::read(&p).unwrap().into_boxed_slice());
        // An error may surface at load or, for data MLX reads lazily, when the arrays are evaluated.
        let loads = arrays::load_bytes(bytes, &ext).is_ok_and(|l| l.arrays.iter().all(|(_, a)| a.eval().is_ok()));
        if loads && (ext != "gguf" || arrays::load_gguf_native_bytes(bytes).is_ok()) {
            failures.push(format!("{}: loaded", p.display()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let dir = data_dir().join("files");
    for file in ["mlx_mixed.safetensors", "gguf_quant.gguf", "mlx.npz", "np_fortran.npy", "mlx_compressed.npz"] {
        let full = std::fs::read(dir.join(file)).unwrap();
        let fmt = file.rsplit('.').next().unwrap();
        for cut in (0..full.len()).step_by(7) {
            let b: &'static [u8] = Box::leak(full[..cut].to_vec().into_boxed_slice());
            let _ = arrays::load_bytes(b, fmt);
        }
        for i in (0..full.len().min(4096)).step_by(3) {
            let mut v = full.clone();
            v[i] ^= 0xA5;
            let b: &'static [u8] = Box::leak(v.into_boxed_slice());
            if let Ok(l) = arrays::load_bytes(b, fmt) {
                for (_, a) in &l.arrays {
                    let _ = a.to_bytes();
                }
            }
            if fmt == "gguf" {
                let _ = arrays::load_gguf_native_bytes(b);
            }
        }
    }
}

/// MLX reads `.npy` data lazily: a file cut inside its data loads, and evaluating the array
/// (or anything computed from it) fails with a runtime error naming the file and the defect.
#[test]
fn npy_with_missing_data_fails_at_eval_like_mlx() {
    let dir = std::env::temp_dir().join(format!("mlx_arm_npy_cut_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let a = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[4]).unwrap();
    let bytes = arrays::npy_bytes(&a).unwrap();
    let path = dir.join("cut.npy");
    std::fs::write(&path, &bytes[..bytes.len() - 8]).unwrap();
    let got = arrays::load_npy(&path).unwrap();
    assert_eq!((got.shape(), got.dtype()), (&[4usize][..], DType::Float32));
    let sum = ops::add(&got, &Array::scalar(1.0f32).unwrap()).unwrap();
    let e = sum.eval().unwrap_err();
    assert_eq!(e.kind, mlx_arm_core::ErrorKind::Runtime);
    assert!(e.msg.contains("needs 16 data bytes but only 8 remain") && e.msg.contains("cut.npy"), "{e}");
    // A header cut short is still refused at load.
    std::fs::write(&path, &bytes[..20]).unwrap();
    assert!(arrays::load_npy(&path).is_err());
    let _ = std::fs::remove_dir_all(&dir);
}
