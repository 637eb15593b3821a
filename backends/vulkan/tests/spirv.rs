//! The SPIR-V committed under shaders/spv/ is what shaders/build.sh makes from the sources
//! with this machine's glslc (scripts/test.sh requires glslc for this section).

use std::path::Path;
use std::process::Command;

#[test]
fn committed_spirv_matches_sources() {
    let shaders = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shaders");
    let out = std::env::temp_dir().join(format!("mlx-arm-spv-{}", std::process::id()));
    let status = Command::new("bash").arg(shaders.join("build.sh")).arg(&out).status().expect("bash runs");
    assert!(status.success(), "shaders/build.sh failed (is glslc installed?)");
    let mut n = 0;
    for entry in std::fs::read_dir(&out).unwrap() {
        let p = entry.unwrap().path();
        let name = p.file_name().unwrap().to_owned();
        let fresh = std::fs::read(&p).unwrap();
        let committed = std::fs::read(shaders.join("spv").join(&name)).unwrap_or_else(|_| panic!("{name:?} is not committed"));
        assert!(fresh == committed, "{name:?} is stale: run shaders/build.sh and commit shaders/spv/");
        n += 1;
    }
    let committed = std::fs::read_dir(shaders.join("spv")).unwrap().count();
    assert_eq!(n, committed, "shaders/spv/ holds files no source makes");
    assert!(n >= 10);
    std::fs::remove_dir_all(&out).ok();
}
