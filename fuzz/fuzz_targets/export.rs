//! Exported functions (`transforms::export`): parse the file; when it parses, call its first
//! trace on zero-filled inputs of its signature and read every output byte. Errors are fine
//! anywhere; a panic, abort or out-of-bounds access is not.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mlx_arm_core::transforms::export::ExportedFunction;
use mlx_arm_fuzz::init;

fuzz_target!(|data: &[u8]| {
    init();
    let Ok(f) = ExportedFunction::from_bytes(data) else { return };
    assert!(!f.is_empty(), "a parsed file holds at least one trace");
    let Some(Ok((args, kwargs))) = f.example_inputs(0) else { return };
    if let Ok(out) = f.call(&args, &kwargs) {
        for a in out {
            let _ = a.to_bytes();
        }
    }
});
