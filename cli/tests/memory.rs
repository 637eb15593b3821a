//! Issue 16's memory target as a regression test: `mlx-arm bench` runs prompt processing and
//! generation on the default model, and the process's peak resident set (VmHWM, the weights'
//! mapped file pages included) must stay within a bound derived from the two things a
//! generation has to hold: the model file and the KV cache. Linux only (VmHWM is read from
//! /proc); skipped loudly without the default model, required under CI.

use std::process::Command;

/// Allowed peak RSS as a multiple of (file + KV cache), at 2 threads (issue 16's setting: the
/// test asks for 2 worker threads, so the bound does not move with the machine's core count).
/// Measured 1.12–1.16× before dec25, 1.06–1.09× after it (docs/BENCHMARKS.md, "dec25": the KV
/// cache's buffers are resident only where written), 1.050–1.055× at 2 threads after rss27 (the
/// buffer cache lends a block to a request up to 4× smaller; `add_rms_norm` writes its sum into
/// x's buffer), and since rss29 (the code and read-only data that only loading ran are dropped
/// from the resident set after loading) 1.036–1.039× on the 16-core device and 1.032–1.034× on
/// the 2-core dev VM in release builds, 1.040–1.042× for the dev-profile binary the test command
/// builds by default (its code is larger). The rest is the hot code, activations, the buffer
/// cache, the tokenizer's tables and the allocators' pages, varying by ~0.3 % with how the
/// threads interleave and where the binary's hot code falls. The bound, the issue's goal, leaves
/// ~0.8 MiB for the dev binary and ~1.2–1.7 MiB for release ones for regressions to trip it;
/// main's dev binary before rss29 (1.058–1.059× on the dev VM) fails it.
const MAX_RATIO: f64 = 1.05;

fn default_model_installed() -> bool {
    let ok = mlx_arm_lm::load::files::default_model_path().exists();
    if !ok {
        eprintln!("SKIPPED: the default model is not installed (scripts/setup.sh installs it)");
        assert!(std::env::var_os("CI").is_none(), "CI must have the default model installed");
    }
    ok
}

/// The number after `key` in `line` (`"file 93.8 MiB"` → 93.8).
fn number_after(line: &str, key: &str) -> f64 {
    let rest = &line[line.find(key).unwrap_or_else(|| panic!("no {key:?} in {line:?}")) + key.len()..];
    rest.split_whitespace().next().unwrap().trim_end_matches('x').parse().unwrap()
}

#[test]
#[cfg(target_os = "linux")]
fn peak_rss_stays_near_file_plus_kv_cache() {
    if !default_model_installed() {
        return;
    }
    let out = Command::new(env!("CARGO_BIN_EXE_mlx-arm"))
        .args(["bench", "-t", "2", "-p", "128", "-n", "16", "-r", "1", "--ttft-tokens", "0"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let line = text.lines().find(|l| l.starts_with("peak RSS:")).unwrap_or_else(|| panic!("no peak RSS line in {text}"));
    let (rss, file, kv) = (number_after(line, "peak RSS:"), number_after(line, "file"), number_after(line, "KV cache"));
    // The file size the bench divides by is the model file's, checked independently.
    let bytes = std::fs::metadata(mlx_arm_lm::load::files::default_model_path()).unwrap().len();
    assert!((file - bytes as f64 / (1 << 20) as f64).abs() < 0.1, "{line}");
    // 128 positions of 30 layers' keys and values, grown 256 at a time, in f32: 11.25 MiB.
    assert!((11.0..11.5).contains(&kv), "{line}");
    eprintln!("{line}");
    assert!(rss <= MAX_RATIO * (file + kv), "peak RSS {rss} MiB exceeds {MAX_RATIO} x (file {file} + KV {kv}) MiB");
}
