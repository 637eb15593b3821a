//! The backend-conformance harness (tests/harness) on the device's default memory model
//! (lavapipe: shared host-visible memory, read in place).

mod harness;

#[test]
fn vulkan_matches_cpu_for_every_claimed_op() {
    harness::check_all();
}
