//! `.npz`: the zip layer (central directory, local headers, ZIP64, member names, stored and
//! deflate members, CRC-32, declared-size caps against bombs) and the `.npy` members; then
//! loading and a write → read round trip.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mlx_arm_core::io::{arrays, npz, zip};
use mlx_arm_fuzz::{buffer, init, materialize, MEMORY_LIMIT};

/// An accepted member name must not be able to escape a directory it is extracted into
/// (independent restatement of the rule in `io::zip`).
fn safe_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('/')
        && !name.contains('\\')
        && !name.contains('\0')
        && name.as_bytes().get(1) != Some(&b':')
        && !name.split('/').any(|c| c == "..")
}

fuzz_target!(|data: &[u8]| {
    init();
    if let Ok(entries) = zip::entries(data) {
        for e in &entries {
            assert!(safe_name(&e.name), "unsafe member name accepted: {:?}", e.name);
            assert!(e.data.start <= e.data.end && e.data.end <= data.len());
            if let Ok(bytes) = zip::read(data, e, MEMORY_LIMIT) {
                assert_eq!(bytes.len(), e.size, "member {:?} size", e.name);
                assert_eq!(zip::crc32(&bytes), e.crc32);
            }
        }
    }

    let Ok(members) = npz::read(data, MEMORY_LIMIT) else { return };
    let total: usize = members.iter().map(|m| m.data.len()).sum();
    assert!(total <= MEMORY_LIMIT, "members exceed the inflation limit");
    for m in &members {
        let h = &m.header;
        let n = mlx_arm_core::io::checked_numel("fuzz", &h.shape).expect("accepted shape overflows");
        assert_eq!(m.data.len(), n * h.dtype.size(), "member {:?} data size", m.name);
        if let Some(src) = &m.source {
            assert!(src.end <= data.len());
            assert_eq!(&data[src.clone()], &m.data[..]);
        }
    }

    let l = arrays::load_npz_buffer(buffer(data)).expect("npz::read accepted the file, load must too");
    assert_eq!(l.arrays.len(), members.len());
    for ((name, a), m) in l.arrays.iter().zip(&members) {
        assert_eq!(name, &m.name);
        assert_eq!((a.shape(), a.dtype()), (&m.header.shape[..], m.header.dtype));
        materialize(a);
    }

    // Re-save the loaded arrays (stored or deflated by the first byte) and read them back.
    let named: Vec<(&str, &mlx_arm_core::Array)> = l.arrays.iter().map(|(k, a)| (k.as_str(), a)).collect();
    if let Ok(out) = arrays::npz_bytes(&named, data.first().is_some_and(|b| b & 1 == 1)) {
        let back = arrays::load_npz_buffer(buffer(&out)).expect("our own .npz must load");
        assert_eq!(back.arrays.len(), l.arrays.len());
        for ((n1, a1), (n2, a2)) in back.arrays.iter().zip(&l.arrays) {
            assert_eq!(n1, n2);
            assert_eq!((a1.shape(), a1.dtype()), (a2.shape(), a2.dtype()));
            assert_eq!(materialize(a1), materialize(a2));
        }
    }
});
