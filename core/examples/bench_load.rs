//! Model-file loading benchmark: load time, first touch of every weight, and peak resident
//! memory for a ~2 GB float16 safetensors file and a ~1 GB Q4_0 GGUF file, beside real MLX's
//! `mx.load` and gguf-py's `GGUFReader` measured in the same run on the same files.
//!
//! `cargo run --release -p mlx-arm-core --example bench_load [-- --st-mb 2048 --gguf-mb 1024
//!  --dir /tmp --python /opt/oracle/bin/python]`
//!
//! Files are generated into `--dir` (a fresh subfolder, deleted at the end). Every measurement
//! runs in its own child process (this program re-invoked, or the Python) so peak RSS
//! (`VmHWM`) belongs to that load alone. The page cache is warm (files were just written).
//! "touch" reads every byte of every weight once (ours: a word sum over the mapped/converted
//! bytes; MLX: `mx.eval` of all arrays, which reads the file; gguf-py: a sum over each memmap).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use mlx_arm_core::io::arrays;
use mlx_arm_core::Array;

const COLS: usize = 4096;

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1).cloned())
}

fn status_kb(key: &str) -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find(|l| l.starts_with(key))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// Cheap deterministic bytes (xorshift64).
fn fill(buf: &mut [u8], seed: &mut u64) {
    for c in buf.chunks_mut(8) {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        let b = seed.to_le_bytes();
        c.copy_from_slice(&b[..c.len()]);
    }
}

/// float16 safetensors: `n` tensors of (rows, 4096) with finite values (exponent bits masked).
fn gen_safetensors(path: &Path, mb: usize) -> usize {
    let rows = 1024;
    let tensor_bytes = rows * COLS * 2;
    let n = (mb << 20).div_ceil(tensor_bytes).max(1);
    let mut header = String::from("{");
    for i in 0..n {
        let (a, b) = (i * tensor_bytes, (i + 1) * tensor_bytes);
        header += &format!("\"layers.{i}.weight\":{{\"dtype\":\"F16\",\"shape\":[{rows},{COLS}],\"data_offsets\":[{a},{b}]}},");
    }
    header.pop();
    header.push('}');
    while header.len() % 8 != 0 {
        header.push(' ');
    }
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).expect("create"));
    f.write_all(&(header.len() as u64).to_le_bytes()).unwrap();
    f.write_all(header.as_bytes()).unwrap();
    let mut chunk = vec![0u8; tensor_bytes];
    let mut seed = 0x9E3779B97F4A7C15u64;
    for _ in 0..n {
        fill(&mut chunk, &mut seed);
        for h in chunk.chunks_mut(2) {
            h[1] &= 0x3B; // |x| < 1: no Inf/NaN
        }
        f.write_all(&chunk).unwrap();
    }
    f.flush().unwrap();
    n * tensor_bytes
}

/// Q4_0 GGUF v3: `n` tensors of (rows, 4096) Q4_0 blocks with small finite scales.
fn gen_gguf_q4_0(path: &Path, mb: usize) -> usize {
    let rows = 2048;
    let tensor_bytes = rows * COLS / 32 * 18;
    let n = (mb << 20).div_ceil(tensor_bytes).max(1);
    let mut head = Vec::new();
    head.extend_from_slice(b"GGUF");
    head.extend_from_slice(&3u32.to_le_bytes());
    head.extend_from_slice(&(n as u64).to_le_bytes());
    head.extend_from_slice(&0u64.to_le_bytes());
    let mut off = 0u64;
    for i in 0..n {
        let name = format!("blk.{i}.ffn.weight");
        head.extend_from_slice(&(name.len() as u64).to_le_bytes());
        head.extend_from_slice(name.as_bytes());
        head.extend_from_slice(&2u32.to_le_bytes());
        head.extend_from_slice(&(COLS as u64).to_le_bytes());
        head.extend_from_slice(&(rows as u64).to_le_bytes());
        head.extend_from_slice(&2u32.to_le_bytes()); // Q4_0
        head.extend_from_slice(&off.to_le_bytes());
        off += (tensor_bytes as u64).div_ceil(32) * 32;
    }
    while head.len() % 32 != 0 {
        head.push(0);
    }
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).expect("create"));
    f.write_all(&head).unwrap();
    let mut chunk = vec![0u8; tensor_bytes];
    let mut seed = 0x2545F4914F6CDD1Du64;
    let pad = vec![0u8; tensor_bytes.div_ceil(32) * 32 - tensor_bytes];
    for _ in 0..n {
        fill(&mut chunk, &mut seed);
        for b in chunk.chunks_mut(18) {
            b[1] = 0x20 | (b[1] & 0x03); // d in [2^-7, 2^-5): finite
        }
        f.write_all(&chunk).unwrap();
        f.write_all(&pad).unwrap();
    }
    f.flush().unwrap();
    n * tensor_bytes
}

/// Reads every byte of `a` once (u64 word sum); returns the sum so it is not optimized away.
fn touch(a: &Array) -> u64 {
    let d = a.data().expect("data");
    let bytes = &d.buf.bytes()[d.offset..d.offset + a.nbytes()];
    let mut s = 0u64;
    for w in bytes.chunks_exact(8) {
        s = s.wrapping_add(u64::from_le_bytes(w.try_into().unwrap()));
    }
    s
}

/// Child: one measurement, printed as JSON.
fn child(mode: &str, path: &str) {
    let base = status_kb("VmRSS:");
    let t = Instant::now();
    let mut sum = 0u64;
    let (n, copied, load_s) = match mode {
        "st" | "gguf" => {
            let l = arrays::load(path, None).expect("load");
            let load_s = t.elapsed().as_secs_f64();
            for (_, a) in &l.arrays {
                sum = sum.wrapping_add(touch(a));
            }
            (l.len(), l.copied_bytes, load_s)
        }
        _ => {
            let g = arrays::load_gguf_native(path).expect("load");
            let load_s = t.elapsed().as_secs_f64();
            for tn in &g.tensors {
                sum = sum.wrapping_add(touch(&tn.array));
            }
            (g.tensors.len(), g.copied_bytes, load_s)
        }
    };
    let total = t.elapsed().as_secs_f64();
    println!(
        "{{\"load_s\": {load_s:.4}, \"touch_s\": {:.4}, \"peak_rss_mb\": {:.1}, \"base_rss_mb\": {:.1}, \"arrays\": {n}, \"copied_mb\": {:.1}, \"sum\": {sum}}}",
        total - load_s,
        status_kb("VmHWM:") as f64 / 1024.0,
        base as f64 / 1024.0,
        copied as f64 / 1048576.0
    );
}

const PY: &str = r#"
import sys, time, json
mode, path = sys.argv[1], sys.argv[2]
def kb(k):
    for l in open('/proc/self/status'):
        if l.startswith(k): return int(l.split()[1])
import numpy as np
if mode == 'ggufpy':
    import gguf
    base = kb('VmRSS:'); t = time.perf_counter()
    r = gguf.GGUFReader(path); n = len(r.tensors)
    load = time.perf_counter() - t
    s = 0
    for x in r.tensors:
        s += int(np.asarray(x.data).view(np.uint64).sum(dtype=np.uint64))
else:
    import mlx.core as mx
    base = kb('VmRSS:'); t = time.perf_counter()
    d = mx.load(path); n = len(d)
    load = time.perf_counter() - t
    mx.eval(list(d.values())); s = 0
tot = time.perf_counter() - t
print(json.dumps({"load_s": round(load, 4), "touch_s": round(tot - load, 4), "peak_rss_mb": round(kb('VmHWM:') / 1024, 1), "base_rss_mb": round(base / 1024, 1), "arrays": n}))
"#;

fn run(cmd: &mut Command) -> String {
    match cmd.output() {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_string(),
        Ok(o) => format!("{{\"error\": {:?}}}", String::from_utf8_lossy(&o.stderr).lines().last().unwrap_or("")),
        Err(e) => format!("{{\"error\": \"{e}\"}}"),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("child") {
        return child(&args[2], &args[3]);
    }
    let st_mb: usize = arg(&args, "--st-mb").and_then(|v| v.parse().ok()).unwrap_or(2048);
    let gguf_mb: usize = arg(&args, "--gguf-mb").and_then(|v| v.parse().ok()).unwrap_or(1024);
    let dir = PathBuf::from(arg(&args, "--dir").unwrap_or_else(|| std::env::temp_dir().to_string_lossy().into_owned()))
        .join(format!("bench-load-{}", std::process::id()));
    let python = arg(&args, "--python").unwrap_or_else(|| "/opt/oracle/bin/python".into());
    std::fs::create_dir_all(&dir).expect("dir");
    let st = dir.join("model.safetensors");
    let gg = dir.join("model-q4_0.gguf");
    let t = Instant::now();
    let st_bytes = gen_safetensors(&st, st_mb);
    let gg_bytes = gen_gguf_q4_0(&gg, gguf_mb);
    eprintln!("generated {:.0} MB safetensors + {:.0} MB Q4_0 GGUF in {:.1}s", st_bytes as f64 / 1e6, gg_bytes as f64 / 1e6, t.elapsed().as_secs_f64());
    let exe = std::env::current_exe().expect("exe");
    let (st_s, gg_s) = (st.to_string_lossy().into_owned(), gg.to_string_lossy().into_owned());
    let rows: Vec<(&str, String)> = vec![
        ("ours load safetensors (mmap)", run(Command::new(&exe).args(["child", "st", &st_s]))),
        ("mlx  mx.load safetensors", run(Command::new(&python).args(["-c", PY, "mlx", &st_s]))),
        ("ours load gguf (MLX affine)", run(Command::new(&exe).args(["child", "gguf", &gg_s]))),
        ("ours load_gguf_native (mmap)", run(Command::new(&exe).args(["child", "native", &gg_s]))),
        ("mlx  mx.load gguf", run(Command::new(&python).args(["-c", PY, "mlx", &gg_s]))),
        ("gguf-py GGUFReader", run(Command::new(&python).args(["-c", PY, "ggufpy", &gg_s]))),
    ];
    println!("files: safetensors {:.0} MB (f16), GGUF {:.0} MB (Q4_0); warm page cache", st_bytes as f64 / 1e6, gg_bytes as f64 / 1e6);
    for (name, r) in rows {
        println!("{name:32} {r}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
