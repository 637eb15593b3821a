//! The MLX-compatible `load` dispatch. The first input byte picks the format name (including
//! unknown ones) and the route: low 7 bits → format, high bit → through a real file whose
//! extension names the format (`arrays::load(path, None)`: extension inference + memory map),
//! else through an in-memory buffer (`load_buffer`). The rest of the input is the file.
//! Every array of a successful load is read in full.
#![no_main]

use std::path::PathBuf;

use libfuzzer_sys::fuzz_target;
use mlx_arm_core::io::arrays;
use mlx_arm_fuzz::{buffer, init, materialize, materialize_all};

const FORMATS: [&str; 6] = ["safetensors", "gguf", "npy", "npz", "gguf-native", "bin"];

/// A per-process scratch file named `input.<ext>` (overwritten by every input).
fn scratch(ext: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mlx-arm-fuzz-load-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("creating the scratch directory");
    dir.join(format!("input.{ext}"))
}

fuzz_target!(|data: &[u8]| {
    init();
    let Some((&sel, file)) = data.split_first() else { return };
    let format = FORMATS[(sel & 0x7f) as usize % FORMATS.len()];
    let via_file = sel & 0x80 != 0;
    if format == "gguf-native" {
        let r = if via_file {
            let p = scratch("gguf");
            std::fs::write(&p, file).expect("writing the scratch file");
            arrays::load_gguf_native(&p)
        } else {
            arrays::load_gguf_native_buffer(buffer(file))
        };
        if let Ok(n) = r {
            for t in &n.tensors {
                materialize(&t.array);
            }
        }
        return;
    }
    let r = if via_file {
        let p = scratch(format);
        std::fs::write(&p, file).expect("writing the scratch file");
        arrays::load(&p, None)
    } else {
        arrays::load_buffer(buffer(file), format)
    };
    match r {
        Ok(l) => materialize_all(&l),
        Err(e) => assert!(format != "bin" || e.msg.contains("Unknown file format"), "{e:?}"),
    }
});
