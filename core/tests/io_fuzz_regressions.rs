//! Crashes found by the fuzz targets (fuzz/), kept as files in core/tests/data/io/fuzz_regressions
//! (raw libFuzzer inputs `*.crash.*` and minimal reproducers from gen_fuzz_regressions.py).
//! Every file goes through every loader that accepts its format and every loaded array is
//! read in full: none may panic, abort or allocate from a hostile count.

use std::path::PathBuf;

use mlx_arm_core::io::arrays;
use mlx_arm_core::DType;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/io/fuzz_regressions")
}

#[test]
fn every_fuzz_regression_loads_or_errs_without_crashing() {
    let mut seen = 0;
    for e in std::fs::read_dir(dir()).unwrap() {
        let p = e.unwrap().path();
        if p.extension().and_then(|x| x.to_str()) == Some("py") {
            continue;
        }
        seen += 1;
        if let Ok(l) = arrays::load(&p, None) {
            for (_, a) in &l.arrays {
                assert_eq!(a.to_bytes().unwrap().len(), a.nbytes());
            }
        }
        if p.extension().and_then(|x| x.to_str()) == Some("gguf") {
            if let Ok(n) = arrays::load_gguf_native(&p) {
                for t in &n.tensors {
                    assert_eq!(t.array.to_bytes().unwrap().len(), t.array.nbytes());
                }
            }
        }
    }
    assert!(seen >= 2, "regression files missing");
}

/// An empty BF16 tensor with ne = [2^40, 0] (gguf-py and MLX report shape (0, 2^40)): MLX's
/// conversion gives an empty float16 array of that shape; it used to allocate a 4 TiB scratch row.
#[test]
fn empty_gguf_tensor_with_huge_row_loads_as_empty_f16() {
    let l = arrays::load(dir().join("gguf_empty_bf16_row_2e40.gguf"), None).unwrap();
    let a = l.get("t").unwrap();
    assert_eq!((a.shape(), a.dtype()), (&[0usize, 1 << 40][..], DType::Float16));
    assert!(a.to_bytes().unwrap().is_empty());
}
