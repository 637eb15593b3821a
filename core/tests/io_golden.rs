//! Parses the files written by numpy, safetensors, gguf-py and real MLX
//! (core/tests/data/io/gen_io.py) and compares with what those libraries read back
//! (manifest.json); then round-trips them through our writers.

use std::path::PathBuf;

use mlx_arm_core::io::{gguf, npy, npz, safetensors, TensorType};
use mlx_arm_core::quant::GgmlType;
use mlx_arm_core::DType;
use serde_json::Value as J;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/io")
}

fn manifest() -> J {
    serde_json::from_str(&std::fs::read_to_string(dir().join("manifest.json")).unwrap()).unwrap()
}

fn golden(name: &str) -> Vec<u8> {
    std::fs::read(dir().join("golden").join(name)).unwrap()
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

fn shape_of(j: &J) -> Vec<usize> {
    j.as_array().unwrap().iter().map(|x| x.as_u64().unwrap() as usize).collect()
}

fn dtype_of(j: &J) -> DType {
    DType::from_name(j.as_str().unwrap()).unwrap()
}

#[test]
fn npy_matches_numpy_and_mlx() {
    let m = manifest();
    let cases = m["npy"].as_array().unwrap();
    assert!(cases.len() >= 18);
    for c in cases {
        let file = c["file"].as_str().unwrap();
        let buf = golden(file);
        let a = npy::read(&buf).unwrap_or_else(|e| panic!("{file}: {e}"));
        let h = &a.header;
        assert_eq!(h.dtype, dtype_of(&c["dtype"]), "{file}");
        assert_eq!(h.shape, shape_of(&c["shape"]), "{file}");
        assert_eq!(h.big_endian, c["big_endian"].as_bool().unwrap(), "{file}");
        if let Some(f) = c["fortran_order"].as_bool() {
            assert_eq!(h.fortran_order, f, "{file}");
        }
        let c_order = if h.fortran_order {
            npy::fortran_to_c_order(&h.shape, h.dtype.size(), &a.data).unwrap()
        } else {
            a.data.to_vec()
        };
        assert_eq!(c_order, unhex(c["c_hex"].as_str().unwrap()), "{file}");
        if c["np_save_identical"].as_bool().unwrap() {
            // Our writer must reproduce np.save byte for byte.
            let ours = npy::write(h.dtype, &h.shape, h.fortran_order, &a.data).unwrap();
            assert_eq!(ours, buf, "{file}: writer differs from np.save");
        }
        // And what we write, we read back identically.
        let ours = npy::write(h.dtype, &h.shape, h.fortran_order, &a.data).unwrap();
        let back = npy::read(&ours).unwrap();
        assert_eq!((back.header.dtype, &back.header.shape, &back.data), (h.dtype, &h.shape, &a.data));
    }
}

#[test]
fn npz_matches_numpy() {
    let m = manifest();
    for c in m["npz"].as_array().unwrap() {
        let file = c["file"].as_str().unwrap();
        let buf = golden(file);
        let arrays = npz::read(&buf, 1 << 30).unwrap_or_else(|e| panic!("{file}: {e}"));
        let want = c["arrays"].as_array().unwrap();
        assert_eq!(arrays.len(), want.len(), "{file}");
        for w in want {
            let name = w["name"].as_str().unwrap();
            let a = arrays.iter().find(|a| a.name == name).unwrap_or_else(|| panic!("{file}: no {name}"));
            assert_eq!(a.header.dtype, dtype_of(&w["dtype"]), "{file}/{name}");
            assert_eq!(a.header.shape, shape_of(&w["shape"]), "{file}/{name}");
            let data = if a.header.fortran_order {
                npy::fortran_to_c_order(&a.header.shape, a.header.dtype.size(), &a.data).unwrap()
            } else {
                a.data.to_vec()
            };
            assert_eq!(data, unhex(w["hex"].as_str().unwrap()), "{file}/{name}");
            if let Some(r) = &a.source {
                assert_eq!(&buf[r.clone()], &a.data[..], "{file}/{name}: zero-copy range");
            }
        }
        // Round trip through our writer, stored and compressed.
        for compress in [false, true] {
            let c_data: Vec<Vec<u8>> = arrays
                .iter()
                .map(|a| {
                    if a.header.fortran_order {
                        npy::fortran_to_c_order(&a.header.shape, a.header.dtype.size(), &a.data).unwrap()
                    } else {
                        a.data.to_vec()
                    }
                })
                .collect();
            let w: Vec<npz::WriteArray> = arrays
                .iter()
                .zip(&c_data)
                .map(|(a, d)| npz::WriteArray { name: &a.name, dtype: a.header.dtype, shape: &a.header.shape, data: d })
                .collect();
            let out = npz::write(&w, compress).unwrap();
            let back = npz::read(&out, 1 << 30).unwrap();
            assert_eq!(back.len(), arrays.len());
            for (b, d) in back.iter().zip(&c_data) {
                assert_eq!(&b.data[..], &d[..], "{file}/{} compress={compress}", b.name);
                assert_eq!(b.source.is_some(), !compress);
            }
        }
    }
}

#[test]
fn npz_limit_caps_decompression() {
    // 16 KiB of zeros deflate to a few dozen bytes; a 1 KiB limit must refuse before inflating.
    let buf = golden("savez_compressed_zeros.npz");
    let e = npz::read(&buf, 1024).unwrap_err();
    assert!(e.msg.contains("limit"), "{e}");
    assert!(npz::read(&buf, 64 * 64 * 4 + 128).is_ok());
}

#[test]
fn safetensors_matches_reference() {
    let m = manifest();
    for c in m["safetensors"].as_array().unwrap() {
        let file = c["file"].as_str().unwrap();
        let buf = golden(file);
        let st = safetensors::parse(&buf).unwrap_or_else(|e| panic!("{file}: {e}"));
        let meta: Vec<(String, String)> =
            c["metadata"].as_object().unwrap().iter().map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string())).collect();
        let mut got_meta = st.metadata.clone();
        got_meta.sort();
        let mut meta_sorted = meta.clone();
        meta_sorted.sort();
        assert_eq!(got_meta, meta_sorted, "{file}");
        let want = c["tensors"].as_array().unwrap();
        assert_eq!(st.tensors.len(), want.len());
        for w in want {
            let name = w["name"].as_str().unwrap();
            let i = st.tensors.iter().position(|t| t.name == name).unwrap();
            let t = &st.tensors[i];
            assert_eq!(t.ty, TensorType::Plain(dtype_of(&w["dtype"])), "{file}/{name}");
            assert_eq!(st.file_dtypes[i], w["file_dtype"].as_str().unwrap());
            assert_eq!(t.shape, shape_of(&w["shape"]), "{file}/{name}");
            assert_eq!(t.data, w["start"].as_u64().unwrap() as usize..w["end"].as_u64().unwrap() as usize);
            assert_eq!(buf[t.data.clone()], unhex(w["hex"].as_str().unwrap())[..], "{file}/{name}");
        }
        // Round trip (F8 tensors come back as U8, as MLX would save them).
        let wt: Vec<safetensors::WriteTensor> = st
            .tensors
            .iter()
            .map(|t| {
                let TensorType::Plain(dtype) = t.ty else { unreachable!() };
                safetensors::WriteTensor { name: &t.name, dtype, shape: &t.shape, data: &buf[t.data.clone()] }
            })
            .collect();
        let md: Vec<(&str, &str)> = meta.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let out = safetensors::write(&wt, &md).unwrap();
        let back = safetensors::parse(&out).unwrap();
        assert_eq!(back.metadata, meta);
        for t in &st.tensors {
            let b = back.tensors.iter().find(|b| b.name == t.name).unwrap();
            assert_eq!((b.ty, &b.shape), (t.ty, &t.shape));
            assert_eq!(out[b.data.clone()], buf[t.data.clone()]);
            if let TensorType::Plain(d) = b.ty {
                assert_eq!(b.data.start % d.size(), 0, "aligned to element size");
            }
        }
    }
}

/// Does our metadata value equal gguf-py's reading of it?
fn value_matches(v: &gguf::Value, j: &J) -> bool {
    use gguf::Value as V;
    let t = j["type"].as_str().unwrap();
    let x = &j["value"];
    match v {
        V::U8(a) => t == "UINT8" && x.as_u64() == Some(*a as u64),
        V::I8(a) => t == "INT8" && x.as_i64() == Some(*a as i64),
        V::U16(a) => t == "UINT16" && x.as_u64() == Some(*a as u64),
        V::I16(a) => t == "INT16" && x.as_i64() == Some(*a as i64),
        V::U32(a) => t == "UINT32" && x.as_u64() == Some(*a as u64),
        V::I32(a) => t == "INT32" && x.as_i64() == Some(*a as i64),
        V::U64(a) => t == "UINT64" && x.as_u64() == Some(*a),
        V::I64(a) => t == "INT64" && x.as_i64() == Some(*a),
        V::F32(a) => t == "FLOAT32" && x.as_f64() == Some(*a as f64),
        V::F64(a) => t == "FLOAT64" && x.as_f64() == Some(*a),
        V::Bool(a) => t == "BOOL" && x.as_bool() == Some(*a),
        V::String(a) => t == "STRING" && x.as_str() == Some(a.as_str()),
        V::Array(a) => t == "ARRAY" && array_matches(a, j),
    }
}

fn array_matches(a: &gguf::Array, j: &J) -> bool {
    use gguf::Array as A;
    let x = j["value"].as_array().unwrap();
    let et = j["elem"].as_str().unwrap();
    if a.len() != x.len() {
        return false;
    }
    let ok_t = match a {
        A::U8(_) => "UINT8",
        A::I8(_) => "INT8",
        A::U16(_) => "UINT16",
        A::I16(_) => "INT16",
        A::U32(_) => "UINT32",
        A::I32(_) => "INT32",
        A::U64(_) => "UINT64",
        A::I64(_) => "INT64",
        A::F32(_) => "FLOAT32",
        A::F64(_) => "FLOAT64",
        A::Bool(_) => "BOOL",
        A::String(_) => "STRING",
        A::Array(_) => "ARRAY",
    } == et;
    ok_t && match a {
        A::U8(v) => v.iter().zip(x).all(|(a, b)| b.as_u64() == Some(*a as u64)),
        A::I8(v) => v.iter().zip(x).all(|(a, b)| b.as_i64() == Some(*a as i64)),
        A::U16(v) => v.iter().zip(x).all(|(a, b)| b.as_u64() == Some(*a as u64)),
        A::I16(v) => v.iter().zip(x).all(|(a, b)| b.as_i64() == Some(*a as i64)),
        A::U32(v) => v.iter().zip(x).all(|(a, b)| b.as_u64() == Some(*a as u64)),
        A::I32(v) => v.iter().zip(x).all(|(a, b)| b.as_i64() == Some(*a as i64)),
        A::U64(v) => v.iter().zip(x).all(|(a, b)| b.as_u64() == Some(*a)),
        A::I64(v) => v.iter().zip(x).all(|(a, b)| b.as_i64() == Some(*a)),
        A::F32(v) => v.iter().zip(x).all(|(a, b)| b.as_f64() == Some(*a as f64)),
        A::F64(v) => v.iter().zip(x).all(|(a, b)| b.as_f64() == Some(*a)),
        A::Bool(v) => v.iter().zip(x).all(|(a, b)| b.as_bool() == Some(*a)),
        A::String(v) => v.iter().zip(x).all(|(a, b)| b.as_str() == Some(a.as_str())),
        A::Array(v) => v.iter().zip(x).all(|(a, b)| array_matches(a, b)),
    }
}

#[test]
fn gguf_matches_gguf_py() {
    let m = manifest();
    for c in m["gguf"].as_array().unwrap() {
        let file = c["file"].as_str().unwrap();
        let buf = golden(file);
        let g = gguf::parse(&buf).unwrap_or_else(|e| panic!("{file}: {e}"));
        let want_meta = c["metadata"].as_array().unwrap();
        assert_eq!(g.metadata.len(), want_meta.len(), "{file}");
        for (w, (k, v)) in want_meta.iter().zip(&g.metadata) {
            assert_eq!(w["key"].as_str().unwrap(), k, "{file}");
            assert!(value_matches(v, w), "{file}: {k}: ours {v:?} vs gguf-py {w}");
        }
        let want_t = c["tensors"].as_array().unwrap();
        assert_eq!(g.tensors.len(), want_t.len());
        for (w, t) in want_t.iter().zip(&g.tensors) {
            assert_eq!(t.name, w["name"].as_str().unwrap());
            let ty = GgmlType::ALL.iter().find(|x| x.name().eq_ignore_ascii_case(w["ggml_type"].as_str().unwrap())).unwrap();
            assert_eq!(t.ty, TensorType::Ggml(*ty), "{file}/{}", t.name);
            let mut ne = shape_of(&w["ne"]);
            ne.reverse();
            assert_eq!(t.shape, ne, "{file}/{}", t.name);
            assert_eq!(t.data, w["start"].as_u64().unwrap() as usize..w["end"].as_u64().unwrap() as usize);
            assert_eq!(buf[t.data.clone()], unhex(w["hex"].as_str().unwrap())[..]);
            assert_eq!(t.data.start % g.alignment, 0);
        }
        if file == "gguf_align64.gguf" {
            assert_eq!(g.alignment, 64);
        }
        // Round trip through our writer.
        let md: Vec<(&str, gguf::Value)> = g.metadata.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
        let wt: Vec<gguf::WriteTensor> = g
            .tensors
            .iter()
            .map(|t| {
                let TensorType::Ggml(ty) = t.ty else { unreachable!() };
                gguf::WriteTensor { name: &t.name, ty, shape: &t.shape, data: &buf[t.data.clone()] }
            })
            .collect();
        let out = gguf::write(&md, &wt).unwrap();
        let back = gguf::parse(&out).unwrap();
        assert_eq!(back.metadata, g.metadata);
        assert_eq!(back.alignment, g.alignment);
        for (b, t) in back.tensors.iter().zip(&g.tensors) {
            assert_eq!((&b.name, b.ty, &b.shape), (&t.name, t.ty, &t.shape));
            assert_eq!(out[b.data.clone()], buf[t.data.clone()]);
        }
        if file == "gguf_mlx.gguf" || file == "gguf_align64.gguf" || file == "gguf_q_mlx.gguf" {
            // gguf-py pads the same way we do, so these files come out byte-identical.
            assert_eq!(out, buf, "{file}: writer differs from the original");
        }
    }
}

#[test]
fn every_truncation_is_an_error_and_never_panics() {
    let golden_dir = dir().join("golden");
    let mut n = 0;
    for e in std::fs::read_dir(&golden_dir).unwrap() {
        let p = e.unwrap().path();
        let buf = std::fs::read(&p).unwrap();
        let ext = p.extension().unwrap().to_str().unwrap().to_string();
        for cut in 0..buf.len() {
            let b = &buf[..cut];
            let r = match ext.as_str() {
                "npy" => npy::read(b).map(|_| ()),
                "npz" => npz::read(b, 1 << 30).map(|_| ()),
                "safetensors" => safetensors::parse(b).map(|_| ()),
                "gguf" => gguf::parse(b).map(|_| ()),
                _ => continue,
            };
            // A GGUF's final padding may be cut without losing data; everything else must fail.
            if ext == "gguf" && r.is_ok() {
                let g = gguf::parse(&buf).unwrap();
                let end = g.tensors.iter().map(|t| t.data.end).max().unwrap_or(g.data_start);
                assert!(cut >= end, "{p:?} cut {cut} parsed though tensor data ends at {end}");
                continue;
            }
            assert!(r.is_err(), "{p:?} truncated to {cut} bytes parsed");
            n += 1;
        }
    }
    assert!(n > 5000);
}

#[test]
fn single_byte_corruption_never_panics() {
    let golden_dir = dir().join("golden");
    for e in std::fs::read_dir(&golden_dir).unwrap() {
        let p = e.unwrap().path();
        let buf = std::fs::read(&p).unwrap();
        let ext = p.extension().unwrap().to_str().unwrap().to_string();
        // Corrupt every header byte (first 512) with a few patterns; results may be Ok or Err.
        for i in 0..buf.len().min(512) {
            for x in [0xFFu8, 0x80, 0x01, 0x00] {
                let mut b = buf.clone();
                b[i] = if x == 0 { 0 } else { b[i] ^ x };
                let _ = match ext.as_str() {
                    "npy" => npy::read(&b).map(|_| ()),
                    "npz" => npz::read(&b, 1 << 30).map(|_| ()),
                    "safetensors" => safetensors::parse(&b).map(|_| ()),
                    "gguf" => gguf::parse(&b).map(|_| ()),
                    _ => Ok(()),
                };
            }
        }
    }
}
