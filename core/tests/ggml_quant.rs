//! GGML/GGUF block formats against their oracles (data from tests/data/ggml/gen_ggml.py):
//! quantized bytes equal ggml's C reference and gguf-py, dequantized floats equal ggml C /
//! gguf-py bit for bit, dot products equal ggml's portable C kernels bit for bit; round-trip
//! and dot-product errors stay inside ggml's test-quantize-fns budgets; the matmul kernel
//! agrees with per-row dot products and an f64 reference on odd shapes; bad sizes are errors.

use mlx_arm_core::quant::ggml::{
    dequantize_row, qmatmul_rows, qmatmul_rows_quantized, quantize_activations, quantize_row,
    vec_dot, vec_dot_at, vec_dot_type,
};
use mlx_arm_core::cpu::isa::Isa;
use mlx_arm_core::quant::GgmlType;
use mlx_arm_core::ErrorKind;
use serde_json::Value;
use std::path::PathBuf;

fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/ggml")
}

fn read_bytes(name: &str) -> Vec<u8> {
    std::fs::read(data_dir().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn read_f32(name: &str) -> Vec<f32> {
    read_bytes(name)
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn manifest() -> Value {
    serde_json::from_slice(&read_bytes("manifest.json")).expect("manifest.json")
}

fn ty_by_name(name: &str) -> GgmlType {
    *GgmlType::ALL
        .iter()
        .find(|t| t.name() == name)
        .unwrap_or_else(|| panic!("type {name}"))
}

/// Bitwise equality that also accepts NaN against NaN.
fn same(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

struct Golden {
    n: usize,
    rows: Vec<String>,
    inputs: Vec<f32>,
    types: Vec<(String, GgmlType)>,
    m: Value,
}

fn golden() -> Golden {
    let m = manifest();
    let n = m["n"].as_u64().unwrap() as usize;
    let rows: Vec<String> = m["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    let inputs = read_f32("inputs.bin");
    assert_eq!(inputs.len(), n * rows.len());
    let mut types: Vec<(String, GgmlType)> = m["types"]
        .as_object()
        .unwrap()
        .keys()
        .map(|k| (k.clone(), ty_by_name(k)))
        .collect();
    types.sort_by_key(|(_, t)| t.id());
    Golden {
        n,
        rows,
        inputs,
        types,
        m,
    }
}

#[test]
fn type_table_matches_gguf_py() {
    let m = manifest();
    let sizes = m["gguf_quant_sizes"].as_object().unwrap();
    let mut checked = 0;
    for (name, v) in sizes {
        let v = v.as_array().unwrap();
        let (id, bl, bb) = (
            v[0].as_u64().unwrap() as u32,
            v[1].as_u64().unwrap() as usize,
            v[2].as_u64().unwrap() as usize,
        );
        let t = GgmlType::from_id(id).unwrap_or_else(|| panic!("GgmlType lacks {name} = {id}"));
        assert_eq!(t.name().to_ascii_uppercase(), name.to_ascii_uppercase());
        assert_eq!(t.block_len(), bl, "{name} block_len");
        if t == GgmlType::Q8_1 {
            // gguf-py 0.19 still lists Q8_1 as 4 + 4 + 32 = 40 bytes (a float d and s); ggml's
            // block_q8_1 is two halves + 32 quants = 36 (static_assert in ggml-common.h), and
            // newer gguf-py (llama.cpp 0c1e57098) says (32, 2 + 2 + 32).
            assert_eq!((bb, t.block_bytes()), (40, 36));
        } else {
            assert_eq!(t.block_bytes(), bb, "{name} block_bytes");
        }
        checked += 1;
    }
    // Q2_0 (42) is newer than gguf-py 0.19; the anchor llama.cpp's gguf-py lists it as (64, 2 + 16).
    assert_eq!(
        checked + 1,
        GgmlType::ALL.len(),
        "every GgmlType row but Q2_0 is in gguf-py's table"
    );
    assert_eq!(
        (
            GgmlType::Q2_0.id(),
            GgmlType::Q2_0.block_len(),
            GgmlType::Q2_0.block_bytes()
        ),
        (42, 64, 18)
    );
}

#[test]
fn quantize_bytes_equal_ggml_and_gguf_py() {
    let g = golden();
    let mut failures = Vec::new();
    for (name, ty) in &g.types {
        let want = read_bytes(&format!("q_{name}.bin"));
        let rb = ty.row_bytes(g.n).unwrap();
        assert_eq!(want.len(), rb * g.rows.len(), "{name}");
        let mut got = vec![0u8; rb];
        for (r, row) in g.rows.iter().enumerate() {
            quantize_row(*ty, &g.inputs[r * g.n..(r + 1) * g.n], &mut got).unwrap();
            if got[..] != want[r * rb..(r + 1) * rb] {
                let first = got
                    .iter()
                    .zip(&want[r * rb..])
                    .position(|(a, b)| a != b)
                    .unwrap();
                failures.push(format!("{name}/{row}: first differing byte {first}"));
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn quantize_bulk_blocks_like_ggml_c() {
    // 32 super-blocks from four distributions: exercises every branch of the K-quant searches.
    let g = golden();
    let x = read_f32("bulk.bin");
    for (name, ty) in &g.types {
        let path = data_dir().join(format!("bulk_{name}.bin"));
        if !path.exists() {
            continue; // F16/BF16 have no C ref quantizer; covered above.
        }
        let want = std::fs::read(path).unwrap();
        let got = quantize(*ty, &x);
        let bb = ty.block_bytes();
        let bad: Vec<usize> = (0..want.len() / bb)
            .filter(|&b| got[b * bb..(b + 1) * bb] != want[b * bb..(b + 1) * bb])
            .collect();
        assert!(bad.is_empty(), "{name}: blocks {bad:?} differ from ggml C");
    }
}

/// The sign of a NaN that arithmetic creates is the CPU's choice (negative on x86-64, positive
/// on AArch64), so goldens made on x86 may differ there in exactly that bit of an f16 field.
fn differs_only_in_nan_sign(got: &[u8], want: &[u8]) -> bool {
    got.len() == want.len()
        && got.iter().zip(want).enumerate().all(|(i, (a, b))| {
            a == b || (i % 2 == 1 && a ^ b == 0x80 && {
                let w = u16::from_le_bytes([want[i - 1], want[i]]);
                let g = u16::from_le_bytes([got[i - 1], got[i]]);
                half::f16::from_bits(w).is_nan() && half::f16::from_bits(g).is_nan()
            })
        })
}

#[test]
fn quantize_nonfinite_inputs_like_ggml_c() {
    let g = golden();
    let x = read_f32("nonfinite.bin");
    let mut failures = Vec::new();
    for (name, ty) in &g.types {
        let path = data_dir().join(format!("nonfinite_{name}.bin"));
        let mut got = vec![0u8; ty.row_bytes(x.len()).unwrap()];
        quantize_row(*ty, &x, &mut got).unwrap();
        if !path.exists() {
            continue; // F16/BF16: no C ref row (numpy/gguf-py oracles only)
        }
        let want = std::fs::read(path).unwrap();
        if got != want && !differs_only_in_nan_sign(&got, &want) {
            failures.push(name.clone());
        }
    }
    assert!(
        failures.is_empty(),
        "differ from ggml C on NaN/Inf input: {failures:?}"
    );
}

#[test]
fn dequantize_equals_oracle_bit_for_bit() {
    let g = golden();
    for (name, ty) in &g.types {
        let q = read_bytes(&format!("q_{name}.bin"));
        let want = read_f32(&format!("dq_{name}.bin"));
        let mut got = vec![0f32; want.len()];
        dequantize_row(*ty, &q, &mut got).unwrap();
        for (i, (a, b)) in got.iter().zip(&want).enumerate() {
            assert!(
                same(*a, *b),
                "{name}: element {i} ({}): {a} vs oracle {b}",
                g.rows[i / g.n]
            );
        }
    }
}

#[test]
fn dequantize_random_blocks_like_gguf_py() {
    let g = golden();
    let nb = g.m["rnd_blocks"].as_u64().unwrap() as usize;
    for (name, ty) in &g.types {
        let q = read_bytes(&format!("rnd_{name}.bin"));
        let want = read_f32(&format!("rnd_dq_{name}.bin"));
        assert_eq!(want.len(), nb * ty.block_len());
        let mut got = vec![0f32; want.len()];
        dequantize_row(*ty, &q, &mut got).unwrap();
        for (i, (a, b)) in got.iter().zip(&want).enumerate() {
            assert!(
                same(*a, *b),
                "{name}: random element {i}: {a} vs oracle {b}"
            );
        }
    }
}

#[test]
fn vec_dot_equals_ggml_generic_bit_for_bit() {
    let g = golden();
    let dots = g.m["dots"].as_object().unwrap();
    assert_eq!(dots.len(), 15);
    for (wname, cases) in dots {
        let wt = ty_by_name(wname);
        let at = vec_dot_type(wt).unwrap();
        let wq = read_bytes(&format!("q_{wname}.bin"));
        let aq = read_bytes(&format!("q_{}.bin", at.name()));
        let (wrb, arb) = (wt.row_bytes(g.n).unwrap(), at.row_bytes(g.n).unwrap());
        for c in cases.as_array().unwrap() {
            let c = c.as_array().unwrap();
            let (i, j) = (
                c[0].as_u64().unwrap() as usize,
                c[1].as_u64().unwrap() as usize,
            );
            let want = f32::from_bits(c[2].as_u64().unwrap() as u32);
            let (wr, ar) = (&wq[i * wrb..(i + 1) * wrb], &aq[j * arb..(j + 1) * arb]);
            // The portable kernel is ggml's generic one, bit for bit.
            let got = vec_dot_at(Isa::Portable, wt, wr, ar, g.n).unwrap();
            assert!(
                same(got, want),
                "{wname}·{}: rows {}·{}: {got} vs ggml {want}",
                at.name(),
                g.rows[i],
                g.rows[j]
            );
            // The active (possibly SIMD) kernel sums in another order: equal to float
            // rounding (tests/ggml_simd.rs checks the bound term by term).
            let active = vec_dot(wt, wr, ar, g.n).unwrap();
            assert!(
                same(active, want) || (active - want).abs() <= 1e-4 * want.abs().max(1.0),
                "{wname}·{} (active kernel): rows {}·{}: {active} vs ggml {want}",
                at.name(),
                g.rows[i],
                g.rows[j]
            );
        }
    }
}

#[test]
fn partner_types_follow_ggml() {
    use GgmlType as T;
    let pairs = [
        (T::Q4_0, T::Q8_0),
        (T::Q4_1, T::Q8_1),
        (T::Q5_0, T::Q8_0),
        (T::Q5_1, T::Q8_1),
        (T::Q8_0, T::Q8_0),
        (T::Q2_K, T::Q8_K),
        (T::Q3_K, T::Q8_K),
        (T::Q4_K, T::Q8_K),
        (T::Q5_K, T::Q8_K),
        (T::Q6_K, T::Q8_K),
        (T::TQ1_0, T::Q8_K),
        (T::TQ2_0, T::Q8_K),
        (T::MXFP4, T::Q8_0),
        (T::IQ4_NL, T::Q8_0),
        (T::IQ4_XS, T::Q8_K),
        (T::F32, T::F32),
        (T::F16, T::F16),
        (T::BF16, T::BF16),
    ];
    for (w, a) in pairs {
        assert_eq!(vec_dot_type(w), Some(a), "{}", w.name());
    }
    assert_eq!(vec_dot_type(T::Q8_K), None);
    assert_eq!(vec_dot_type(T::IQ2_XXS), None);
}

// ------------------------------------------------------------ ggml test-quantize-fns budgets

/// ggml's `generate_data`: `0.1 + amplitude·cosf(i + offset)` (double arithmetic, stored as float).
fn generate_data(offset: f32, n: usize, amplitude: f64) -> Vec<f32> {
    (0..n)
        .map(|i| (0.1 + amplitude * libm::cosf(i as f32 + offset) as f64) as f32)
        .collect()
}

/// ggml's `array_rmse`: sqrt(Σ diff²) / n.
fn array_rmse(a: &[f32], b: &[f32]) -> f64 {
    let s: f64 = a
        .iter()
        .zip(b)
        .map(|(&x, &y)| (x as f64 - y as f64).powi(2))
        .sum();
    s.sqrt() / a.len() as f64
}

fn dot_f64(a: &[f32], b: &[f32]) -> f64 {
    a.iter().zip(b).map(|(&x, &y)| x as f64 * y as f64).sum()
}

/// (max total quantization error, max dot product error) from test-quantize-fns.cpp.
fn budgets(t: GgmlType) -> (f64, f64) {
    use GgmlType as T;
    let q = match t {
        T::TQ1_0 | T::TQ2_0 => 0.01,
        T::Q2_K => 0.0075,
        T::Q3_K => 0.0040,
        _ => 0.002,
    };
    let d = match t {
        T::Q2_K => 0.04,
        T::TQ1_0 | T::TQ2_0 => 0.15,
        _ => 0.02,
    };
    (q, d)
}

fn quant_types() -> Vec<GgmlType> {
    use GgmlType as T;
    vec![
        T::F16,
        T::BF16,
        T::Q4_0,
        T::Q4_1,
        T::Q5_0,
        T::Q5_1,
        T::Q8_0,
        T::Q8_1,
        T::Q2_K,
        T::Q3_K,
        T::Q4_K,
        T::Q5_K,
        T::Q6_K,
        T::Q8_K,
        T::TQ1_0,
        T::TQ2_0,
        T::MXFP4,
        T::IQ4_NL,
        T::IQ4_XS,
    ]
}

fn quantize(t: GgmlType, x: &[f32]) -> Vec<u8> {
    let mut q = vec![0u8; t.row_bytes(x.len()).unwrap()];
    quantize_row(t, x, &mut q).unwrap();
    q
}

fn dequantize(t: GgmlType, q: &[u8], n: usize) -> Vec<f32> {
    let mut y = vec![0f32; n];
    dequantize_row(t, q, &mut y).unwrap();
    y
}

#[test]
fn round_trip_and_dot_errors_within_ggml_budgets() {
    let n = 32 * 128;
    let d1 = generate_data(0.0, n, 2.0);
    let d2 = generate_data(1.0, n, 2.0);
    for t in quant_types() {
        let (qmax, dmax) = budgets(t);
        let err = array_rmse(&d1, &dequantize(t, &quantize(t, &d1), n));
        assert!(
            err < qmax,
            "{}: total quantization error {err} ≥ {qmax}",
            t.name()
        );
        if let Some(at) = vec_dot_type(t) {
            let r = vec_dot(t, &quantize(t, &d1), &quantize(at, &d2), n).unwrap();
            let e = (r as f64 - dot_f64(&d1, &d2)).abs() / n as f64;
            assert!(e < dmax, "{}: dot product error {e} ≥ {dmax}", t.name());
        }
    }
}

// ------------------------------------------------------------ matmul

/// Small deterministic generator (xorshift) for matmul inputs.
struct Rng(u64);
impl Rng {
    fn next_f32(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        ((self.0 >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    }
    fn vec(&mut self, n: usize) -> Vec<f32> {
        (0..n).map(|_| self.next_f32()).collect()
    }
}

fn matmul_types() -> Vec<GgmlType> {
    quant_types()
        .into_iter()
        .chain([GgmlType::F32])
        .filter(|t| vec_dot_type(*t).is_some())
        .collect()
}

#[test]
fn qmatmul_matches_vec_dot_and_f64_reference() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for t in matmul_types() {
        let at = vec_dot_type(t).unwrap();
        let bl = t.block_len().max(at.block_len()).max(32);
        // (n_rows, k, m): one block, odd row counts, m > 1, and ggml's test length 4096.
        for (n_rows, k, m) in [
            (1, bl, 1),
            (5, bl, 3),
            (7, 2 * bl, 2),
            (3, 3 * bl, 4),
            (3, 4096, 2),
        ] {
            let wf = rng.vec(n_rows * k);
            let x = rng.vec(m * k);
            let w = quantize(t, &wf);
            let wd = dequantize(t, &w, n_rows * k);
            let mut out = vec![0f32; m * n_rows];
            qmatmul_rows(t, &w, n_rows, k, &x, m, &mut out, 0..n_rows).unwrap();
            let wrb = t.row_bytes(k).unwrap();
            for i in 0..m {
                let xr = &x[i * k..(i + 1) * k];
                let xq = quantize(at, xr);
                let xd = dequantize(at, &xq, k);
                for j in 0..n_rows {
                    let got = out[i * n_rows + j];
                    // 1. Exactly one ggml vec_dot per output — or, where a kernel over
                    //    prepared activations runs (AVX-512 VNNI, aarch64 NEON / dotprod:
                    //    arch/*/gemv*.rs), the same block products summed in another float
                    //    order: then equal to it up to f32 accumulation.
                    let d = vec_dot(t, &w[j * wrb..(j + 1) * wrb], &xq, k).unwrap();
                    if !mlx_arm_core::quant::ggml::matmul_equals_dot(t, mlx_arm_core::cpu::isa::isa()) {
                        let scale: f32 = xd.iter().zip(&wd[j * k..(j + 1) * k]).map(|(a, b)| (a * b).abs()).sum();
                        let tol = 4.0 * (k / 32 + 16) as f32 * f32::EPSILON * scale;
                        assert!((got - d).abs() <= tol, "{} ({n_rows},{k},{m}) [{i},{j}]: {got} vs dot {d}", t.name());
                    } else {
                        assert!(same(got, d), "{} ({n_rows},{k},{m}) [{i},{j}]", t.name());
                    }
                    // 2. The f64 product of the dequantized operands, up to f32 accumulation
                    //    (and, for Q8_1 partners, the f16 rounding of the block sums `s`).
                    let wr = &wd[j * k..(j + 1) * k];
                    let exact = dot_f64(wr, &xd);
                    let mag: f64 = wr
                        .iter()
                        .zip(&xd)
                        .map(|(&a, &b)| (a as f64 * b as f64).abs())
                        .sum();
                    let rel = if at == GgmlType::Q8_1 { 1e-3 } else { 1e-5 };
                    assert!(
                        (got as f64 - exact).abs() <= rel * mag + 1e-30,
                        "{} ({n_rows},{k},{m}) [{i},{j}]: {got} vs dequantized f64 {exact}",
                        t.name()
                    );
                    // 3. ggml's dot-product budget against the original floats, at its length.
                    if k == 4096 {
                        let e =
                            (got as f64 - dot_f64(xr, &wf[j * k..(j + 1) * k])).abs() / k as f64;
                        let budget = budgets(t).1;
                        assert!(e < budget, "{} [{i},{j}]: error {e} ≥ {budget}", t.name());
                    }
                }
            }
            // Row ranges: tiles computed separately equal the full result.
            let xq = quantize_activations(t, &x, m, k).unwrap();
            let split = n_rows / 2;
            for range in [0..split, split..n_rows] {
                let mut tile = vec![0f32; m * range.len()];
                qmatmul_rows_quantized(t, &w, n_rows, &xq, &mut tile, range.clone()).unwrap();
                for i in 0..m {
                    for (jj, j) in range.clone().enumerate() {
                        assert!(
                            same(tile[i * range.len() + jj], out[i * n_rows + j]),
                            "{} tile",
                            t.name()
                        );
                    }
                }
            }
        }
    }
}

// ------------------------------------------------------------ robustness

#[test]
fn wrong_sizes_are_errors() {
    use GgmlType as T;
    let x = vec![0.5f32; 256];
    let mut q = vec![0u8; T::Q4_0.row_bytes(256).unwrap()];
    // Not a whole number of blocks, wrong destination size, unimplemented type.
    assert_eq!(
        quantize_row(T::Q4_0, &x[..33], &mut q).unwrap_err().kind,
        ErrorKind::InvalidArgument
    );
    assert_eq!(
        quantize_row(T::Q4_0, &x, &mut q[1..]).unwrap_err().kind,
        ErrorKind::InvalidArgument
    );
    assert_eq!(
        quantize_row(T::Q4_K, &x[..128], &mut q).unwrap_err().kind,
        ErrorKind::InvalidArgument
    );
    assert_eq!(
        quantize_row(T::IQ2_XXS, &x, &mut q).unwrap_err().kind,
        ErrorKind::Unsupported
    );
    quantize_row(T::Q4_0, &x, &mut q).unwrap();
    let mut y = vec![0f32; 256];
    assert!(dequantize_row(T::Q4_0, &q[..q.len() - 1], &mut y).is_err());
    assert!(dequantize_row(T::Q4_0, &q, &mut y[..255]).is_err());
    // vec_dot: truncated rows, wrong n.
    let a = quantize(T::Q8_0, &x);
    assert!(vec_dot(T::Q4_0, &q, &a, 256).is_ok());
    assert!(vec_dot(T::Q4_0, &q[..q.len() - 18], &a, 256).is_err());
    assert!(vec_dot(T::Q4_0, &q, &a[..a.len() - 1], 256).is_err());
    assert!(vec_dot(T::Q4_0, &q, &a, 224).is_err());
    assert!(vec_dot(T::Q8_K, &q, &a, 256).is_err());
    // qmatmul: truncated weights, bad x, bad out, bad range, overflowing sizes.
    let w = quantize(T::Q4_0, &vec![0.25f32; 4 * 64]);
    let xs = vec![1.0f32; 2 * 64];
    let mut out = vec![0f32; 2 * 4];
    assert!(qmatmul_rows(T::Q4_0, &w, 4, 64, &xs, 2, &mut out, 0..4).is_ok());
    assert!(qmatmul_rows(T::Q4_0, &w[..w.len() - 1], 4, 64, &xs, 2, &mut out, 0..4).is_err());
    assert!(qmatmul_rows(T::Q4_0, &w, 4, 64, &xs[1..], 2, &mut out, 0..4).is_err());
    assert!(qmatmul_rows(T::Q4_0, &w, 4, 64, &xs, 2, &mut out[1..], 0..4).is_err());
    assert_eq!(
        qmatmul_rows(T::Q4_0, &w, 4, 64, &xs, 2, &mut out, 2..5)
            .unwrap_err()
            .kind,
        ErrorKind::Index
    );
    assert!(qmatmul_rows(T::Q4_0, &w, usize::MAX, 64, &xs, 2, &mut out, 0..4).is_err());
    assert!(qmatmul_rows(T::Q4_0, &w, 4, 64, &xs, usize::MAX, &mut out, 0..4).is_err());
    assert!(qmatmul_rows(T::Q4_0, &w, 4, 48, &xs, 2, &mut out, 0..4).is_err());
    assert!(qmatmul_rows(T::IQ2_XXS, &w, 4, 64, &xs, 2, &mut out, 0..4).is_err());
    // Activations of the wrong type.
    let xq = quantize_activations(T::Q4_1, &xs, 2, 64).unwrap();
    assert!(qmatmul_rows_quantized(T::Q4_0, &w, 4, &xq, &mut out, 0..4).is_err());
}

#[test]
fn unaligned_and_hostile_blocks_do_not_panic() {
    let g = golden();
    for (name, ty) in &g.types {
        let q = read_bytes(&format!("q_{name}.bin"));
        let rb = ty.row_bytes(g.n).unwrap();
        // Same bytes at an odd address decode the same.
        let mut shifted = vec![0u8; rb + 1];
        shifted[1..].copy_from_slice(&q[..rb]);
        assert_eq!(
            dequantize(*ty, &shifted[1..], g.n),
            dequantize(*ty, &q[..rb], g.n),
            "{name}"
        );
        // All-0xFF bytes (NaN scales for f16-scaled formats) and NaN-scaled activations.
        let ff = vec![0xFFu8; rb];
        let _ = dequantize(*ty, &ff, g.n);
        if let Some(at) = vec_dot_type(*ty) {
            let a = vec![0xFFu8; at.row_bytes(g.n).unwrap()];
            let _ = vec_dot(*ty, &ff, &a, g.n).unwrap();
        }
    }
    // A NaN scale gives NaN values, as in ggml.
    let mut blk = vec![0u8; 18];
    blk[0..2].copy_from_slice(&0x7E00u16.to_le_bytes());
    blk[2] = 0x31;
    assert!(dequantize(GgmlType::Q4_0, &blk, 32)
        .iter()
        .all(|v| v.is_nan()));
}

/// Throughput of the portable kernels (not a correctness test):
/// `cargo test --release -p mlx-arm-core --test ggml_quant -- --ignored --nocapture`.
#[test]
#[ignore]
fn throughput_report() {
    let (n, k) = (1024usize, 4096usize);
    let mut rng = Rng(42);
    let wf = rng.vec(n * k);
    let x = rng.vec(k);
    for t in matmul_types() {
        let t0 = std::time::Instant::now();
        let w = quantize(t, &wf);
        let tq = t0.elapsed().as_secs_f64();
        let mut out = vec![0f32; n];
        let t1 = std::time::Instant::now();
        qmatmul_rows(t, &w, n, k, &x, 1, &mut out, 0..n).unwrap();
        let tm = t1.elapsed().as_secs_f64();
        let mut y = vec![0f32; n * k];
        let t2 = std::time::Instant::now();
        dequantize_row(t, &w, &mut y).unwrap();
        let td = t2.elapsed().as_secs_f64();
        let me = (n * k) as f64 / 1e6;
        println!(
            "{:>6}: quantize {:8.1} Melem/s  dequantize {:8.1} Melem/s  matvec {:8.1} Melem/s ({:.2} GB/s of weights)",
            t.name(), me / tq, me / td, me / tm, w.len() as f64 / tm / 1e9
        );
    }
}
