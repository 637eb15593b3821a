//! The malformed-file corpus (core/tests/data/io/malformed, written by gen_malformed.py):
//! every file must be refused with an error naming its defect — never a panic.

use std::path::PathBuf;

use mlx_arm_core::io::{gguf, npy, npz, safetensors};
use mlx_arm_core::{Error, ErrorKind};

fn parse_by_ext(name: &str, buf: &[u8]) -> Result<(), Error> {
    match name.rsplit('.').next().unwrap() {
        "safetensors" => safetensors::parse(buf).map(|_| ()),
        "gguf" => gguf::parse(buf).map(|_| ()),
        "npy" => npy::read(buf).map(|_| ()),
        "npz" => npz::read(buf, 1 << 30).map(|_| ()),
        e => panic!("unknown extension {e}"),
    }
}

#[test]
fn every_malformed_file_is_refused_with_its_defect_named() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/io/malformed");
    let expect: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expect.json")).unwrap()).unwrap();
    let mut seen = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_str().unwrap().to_string();
        if name == "expect.json" {
            continue;
        }
        let frag = expect.get(&name).unwrap_or_else(|| panic!("{name} missing from expect.json")).as_str().unwrap();
        let buf = std::fs::read(&p).unwrap();
        let err = match parse_by_ext(&name, &buf) {
            Ok(()) => panic!("{name}: parsed, expected an error containing {frag:?}"),
            Err(e) => e,
        };
        assert!(matches!(err.kind, ErrorKind::Format | ErrorKind::Unsupported), "{name}: {err:?}");
        assert!(
            err.msg.to_lowercase().contains(&frag.to_lowercase()),
            "{name}: error {err} does not mention {frag:?}"
        );
        seen += 1;
    }
    assert_eq!(seen, expect.len());
    assert!(seen >= 90, "corpus has {seen} files");
}

/// Real MLX writes `"__metadata__":null` when a file has no metadata (e.g.
/// `nn.Module.save_weights`): that is valid and means no metadata.
#[test]
fn null_metadata_is_no_metadata() {
    let header = br#"{"__metadata__":null,"w":{"data_offsets":[0,8],"dtype":"F32","shape":[2]}}"#;
    let mut buf = (header.len() as u64).to_le_bytes().to_vec();
    buf.extend_from_slice(header);
    buf.extend_from_slice(&[0u8; 8]);
    let st = safetensors::parse(&buf).expect("null __metadata__ parses");
    assert!(st.metadata.is_empty());
    assert_eq!(st.tensors.len(), 1);
    // Any other non-object is still refused.
    let bad = br#"{"__metadata__":3}"#;
    let mut buf = (bad.len() as u64).to_le_bytes().to_vec();
    buf.extend_from_slice(bad);
    assert!(safetensors::parse(&buf).is_err());
}
