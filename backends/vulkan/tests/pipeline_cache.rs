//! The on-disk pipeline cache across processes (the cache is per process, so each case runs
//! this test binary again as a child with `MLX_ARM_VULKAN_PIPELINE_CACHE` set): a first run
//! writes the file, a second hands it to the driver, and a corrupt, truncated or foreign file
//! is refused and rewritten; a directory that cannot be written costs only the cache. The
//! child checks its GPU results against values computed here, so a cache the driver loaded
//! must still give right answers.

use mlx_arm_core::{device, ops, Array, Device};
use mlx_arm_vulkan as vkb;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The child: runs a few kernels on the GPU, checks them, saves the cache and prints its stats.
#[test]
#[ignore = "run by pipeline_cache_across_processes as a child process"]
fn child_runs_kernels_and_reports() {
    vkb::init().expect("a Vulkan device (CI: Mesa lavapipe)");
    device::set_default_device(Device::GPU).unwrap();
    let a: Vec<f32> = (0..64).map(|i| i as f32 * 0.5).collect();
    let b: Vec<f32> = (0..64).map(|i| 3.0 - i as f32).collect();
    let x = Array::from_slice(&a, &[8, 8]).unwrap();
    let y = Array::from_slice(&b, &[8, 8]).unwrap();
    let s = ops::sum(&ops::multiply(&ops::add(&x, &y).unwrap(), &x).unwrap(), Some(&[1]), false).unwrap();
    let got = s.to_vec::<f32>().unwrap();
    let want: Vec<f32> = (0..8).map(|r| (0..8).map(|c| (a[r * 8 + c] + b[r * 8 + c]) * a[r * 8 + c]).sum()).collect();
    assert_eq!(got, want);
    device::set_default_device(Device::CPU).unwrap();
    vkb::save_pipeline_cache();
    let st = vkb::pipeline_cache_stats().unwrap();
    println!(
        "PCSTATS path={} loaded={} rejected={} saves={} saved={} save_error={} built={} build_ns={}",
        st.path.map(|p| p.display().to_string()).unwrap_or_else(|| "-".into()),
        st.loaded_bytes,
        st.rejected.unwrap_or_else(|| "-".into()).replace(' ', "_"),
        st.saves,
        st.saved_bytes,
        st.save_error.unwrap_or_else(|| "-".into()).replace(' ', "_"),
        st.pipelines_built,
        st.build_ns,
    );
}

/// One child's stats line, as fields.
struct Stats(Vec<(String, String)>);

impl Stats {
    fn get(&self, k: &str) -> &str {
        self.0.iter().find(|(a, _)| a == k).map(|(_, v)| v.as_str()).unwrap_or_else(|| panic!("no {k}"))
    }
    fn num(&self, k: &str) -> u64 {
        self.get(k).parse().unwrap()
    }
}

fn run_child(cache: &str) -> Stats {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--ignored", "--exact", "child_runs_kernels_and_reports", "--nocapture", "--test-threads=1"])
        .env(vkb::PIPELINE_CACHE_ENV, cache)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "child failed: {text}\n{}", String::from_utf8_lossy(&out.stderr));
    // The harness prints the test's name on the same line first.
    let line = text.lines().find_map(|l| l.split_once("PCSTATS ").map(|(_, s)| s)).unwrap_or_else(|| panic!("no stats in {text}"));
    Stats(line.split(' ').filter_map(|f| f.split_once('=')).map(|(a, b)| (a.to_string(), b.to_string())).collect())
}

/// The one cache file in `dir`.
fn the_file(dir: &Path) -> PathBuf {
    let files: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(files.len(), 1, "one file, no temporaries: {files:?}");
    files.into_iter().next().unwrap()
}

#[test]
fn pipeline_cache_across_processes() {
    let dir = std::env::temp_dir().join(format!("mlx-arm-pipeline-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let d = dir.to_str().unwrap();

    // First run: nothing to load; the cache is written.
    let first = run_child(d);
    assert_eq!(first.num("loaded"), 0);
    assert_eq!(first.get("rejected"), "-");
    assert!(first.num("built") >= 2, "an elementwise kernel and the sum at least");
    assert_eq!(first.num("saves"), 1);
    assert_eq!(first.get("save_error"), "-");
    let file = the_file(&dir);
    assert_eq!(first.get("path"), file.to_str().unwrap());
    let saved = std::fs::read(&file).unwrap();
    // Our 56-byte header, then the driver's blob with Vulkan's header (version one).
    assert_eq!(&saved[..8], b"MLXARMPC");
    assert_eq!(saved.len() as u64, 56 + first.num("saved"));
    assert_eq!(u32::from_le_bytes(saved[60..64].try_into().unwrap()), 1, "VK_PIPELINE_CACHE_HEADER_VERSION_ONE");

    // Second run: the driver gets the whole blob; the same pipelines leave nothing new to write.
    let second = run_child(d);
    assert_eq!(second.num("loaded"), first.num("saved"));
    assert_eq!(second.get("rejected"), "-");
    assert_eq!(second.num("built"), first.num("built"));
    println!(
        "pipeline creation: first run {:.2} ms, cached {:.2} ms ({} pipelines)",
        first.num("build_ns") as f64 / 1e6,
        second.num("build_ns") as f64 / 1e6,
        second.num("built")
    );

    // Damaged files: each is refused (the cache starts empty) and rewritten whole.
    let damage: [(&str, Box<dyn Fn(&mut Vec<u8>)>); 4] = [
        ("checksum", Box::new(|f: &mut Vec<u8>| *f.last_mut().unwrap() ^= 0x5a)),
        ("truncated", Box::new(|f: &mut Vec<u8>| f.truncate(f.len() - 5))),
        ("another device or driver", Box::new(|f: &mut Vec<u8>| f[12] ^= 1)),
        ("not an mlx-arm", Box::new(|f: &mut Vec<u8>| f.truncate(10))),
    ];
    for (why, spoil) in &damage {
        let mut f = saved.clone();
        spoil(&mut f);
        std::fs::write(&file, &f).unwrap();
        let s = run_child(d);
        assert_eq!(s.num("loaded"), 0, "{why}");
        assert!(s.get("rejected").contains(&why.replace(' ', "_")), "{why}: {}", s.get("rejected"));
        assert_eq!(s.num("saves"), 1, "{why}: rewritten");
        assert_eq!(std::fs::read(&file).unwrap().len(), saved.len(), "{why}");
        let again = run_child(d);
        assert_eq!(again.num("loaded"), first.num("saved"), "{why}: the rewritten file loads");
    }

    // A directory that cannot be made (its parent is a file): results still right, the save
    // fails quietly into the stats.
    let blocked = file.join("sub");
    let s = run_child(blocked.to_str().unwrap());
    assert_eq!(s.num("saves"), 0);
    assert_ne!(s.get("save_error"), "-");
    assert_eq!(s.num("loaded"), 0);

    // Off: no file at all.
    let s = run_child("off");
    assert_eq!(s.get("path"), "-");
    assert_eq!((s.num("loaded"), s.num("saves")), (0, 0));
    std::fs::remove_dir_all(&dir).unwrap();
}
