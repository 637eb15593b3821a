//! The strict JSON reader behind safetensors headers, checked differentially against
//! serde_json: whatever we accept, serde_json must accept with the same structure (we are
//! stricter: depth ≤ 16, duplicate keys refused). Also: our string writer's output reads back.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mlx_arm_core::io::json::{self, Json};
use serde_json::Value;

fn same(ours: &Json, theirs: &Value) -> bool {
    match (ours, theirs) {
        (Json::Null, Value::Null) => true,
        (Json::Bool(a), Value::Bool(b)) => a == b,
        (Json::UInt(a), Value::Number(b)) => b.as_u64() == Some(*a),
        // Other numbers are kept as text; serde_json (arbitrary_precision) must read a number
        // too (without that feature it refuses exponents beyond f64, e.g. `2E5666666666`).
        (Json::Number(_), Value::Number(_)) => true,
        (Json::Str(a), Value::String(b)) => a == b,
        (Json::Array(a), Value::Array(b)) => a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y)),
        (Json::Object(a), Value::Object(b)) => {
            a.len() == b.len() && a.iter().all(|(k, v)| b.get(k).is_some_and(|w| same(v, w)))
        }
        _ => false,
    }
}

fuzz_target!(|data: &[u8]| {
    if let Ok(ours) = json::parse("fuzz", data) {
        let theirs: Value = serde_json::from_slice(data).expect("we accepted JSON that serde_json refuses");
        assert!(same(&ours, &theirs), "structure differs: ours {ours:?}, serde_json {theirs:?}");
    }
    if let Ok(s) = std::str::from_utf8(data) {
        let mut out = String::new();
        json::write_string(&mut out, s);
        assert_eq!(json::parse("fuzz", out.as_bytes()).expect("our own string literal must parse"), Json::Str(s.to_string()));
    }
});
