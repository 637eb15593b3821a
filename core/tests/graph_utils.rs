//! `graph_utils`: the dot text of small graphs against hand-written expectations (each op
//! once, inputs before readers, sources and sinks ranked, names set or generated A, B, …),
//! multi-output ops, and the generated name sequence past Z.

use mlx_arm_core::graph_utils::{to_dot_string, NodeNamer};
use mlx_arm_core::{ops, Array};

fn arr(v: &[f32]) -> Array {
    Array::from_slice(v, &[v.len()]).unwrap()
}

#[test]
fn small_graph_has_the_expected_nodes_and_edges() {
    let (a, b) = (arr(&[1.0, 2.0]), arr(&[3.0, 4.0]));
    let m = ops::multiply(&a, &b).unwrap();
    let c = ops::add(&m, &a).unwrap();
    let mut namer = NodeNamer::new();
    namer.set_name(&a, "a");
    namer.set_name(&b, "b");
    let dot = to_dot_string(&mut namer, &[c.clone()]);
    let want = "digraph {\n\
        { rank=source; \"a\"; }\n\
        { rank=source; \"b\"; }\n\
        { P0 [label=\"Multiply\", shape=rectangle]; }\n\
        \"a\" -> P0\n\
        \"b\" -> P0\n\
        { \"C\"; }\n\
        P0 -> \"C\"\n\
        { P1 [label=\"Add\", shape=rectangle]; }\n\
        \"C\" -> P1\n\
        \"a\" -> P1\n\
        { rank=sink; \"D\"; }\n\
        P1 -> \"D\"\n\
        }\n";
    assert_eq!(dot, want);
    // Structure: 2 op boxes, 4 input edges + 2 output edges.
    assert_eq!(dot.matches("shape=rectangle").count(), 2);
    assert_eq!(dot.matches(" -> ").count(), 6);
    assert_eq!(namer.get_name(&c), "D");
}

#[test]
fn shared_inputs_and_multi_output_ops_appear_once() {
    let a = Array::from_slice(&[2.0f32, 1.0, 1.0, 3.0], &[2, 2]).unwrap();
    let (q, r) = ops::linalg::qr(&a).unwrap();
    let s = ops::add(&q, &r).unwrap();
    let t = ops::multiply(&s, &a).unwrap();
    let mut namer = NodeNamer::new();
    let dot = to_dot_string(&mut namer, &[t.clone(), q.clone()]);
    // One source (a), read by qr and multiply; qr one box with two outputs.
    assert_eq!(dot.matches("rank=source").count(), 1, "{dot}");
    assert_eq!(dot.matches("shape=rectangle").count(), 3, "{dot}");
    assert_eq!(dot.matches("P0 -> ").count(), 2, "{dot}");
    // Sinks: the product and Q.
    assert_eq!(dot.matches("rank=sink").count(), 2, "{dot}");
    // Edges: a→qr, qr→Q, qr→R, Q→add, R→add, add→s, s→mul, a→mul, mul→t.
    assert_eq!(dot.matches(" -> ").count(), 9, "{dot}");
}

#[test]
fn generated_names_run_past_z() {
    let mut namer = NodeNamer::new();
    let xs: Vec<Array> = (0..28).map(|i| Array::scalar(i as f32).unwrap()).collect();
    let names: Vec<String> = xs.iter().map(|x| namer.get_name(x).to_string()).collect();
    assert_eq!(names[0], "A");
    assert_eq!(names[25], "Z");
    assert_eq!(names[26], "AA");
    assert_eq!(names[27], "AB");
    // Asked again, the same name.
    assert_eq!(namer.get_name(&xs[3]), "D");
    // Names with quotes are escaped in dot.
    namer.set_name(&xs[0], "say \"hi\"");
    let dot = to_dot_string(&mut namer, &[xs[0].clone()]);
    assert!(dot.contains("\"say \\\"hi\\\"\""), "{dot}");
}

mod pending_streams {
    use super::arr;
    use mlx_arm_core::graph_utils::pending_streams;
    use mlx_arm_core::{device, ops, Device, Stream};
    use std::cell::Cell;

    thread_local! {
        static NAMED: Cell<Option<Stream>> = const { Cell::new(None) };
    }

    fn named() -> Option<Stream> {
        NAMED.with(|n| n.get())
    }

    #[test]
    fn lists_the_streams_of_pending_ops_only() {
        device::set_named_stream_source(named);
        let base = device::default_stream(Device::CPU).unwrap();
        let mine = device::new_stream(Device::CPU).unwrap();
        let (a, b) = (arr(&[1.0, 2.0]), arr(&[3.0, 4.0]));
        // Ops recorded while a stream is named record on it; others on the default stream.
        NAMED.with(|n| n.set(Some(mine)));
        let on_mine = ops::multiply(&a, &b).unwrap();
        NAMED.with(|n| n.set(None));
        let on_default = ops::add(&on_mine, &a).unwrap();
        assert_eq!(pending_streams(&[on_default.clone()]), vec![base, mine]);
        assert_eq!(pending_streams(&[on_mine.clone()]), vec![mine]);
        assert!(pending_streams(&[a.clone()]).is_empty(), "a ready array has no pending work");
        on_mine.eval().unwrap();
        assert_eq!(pending_streams(&[on_default.clone()]), vec![base]);
        on_default.eval().unwrap();
        assert!(pending_streams(&[on_default]).is_empty());
        // A stream of a device other than the default one does not move the op.
        NAMED.with(|n| n.set(Some(Stream { index: 999, device: Device::GPU })));
        let c = ops::add(&a, &b).unwrap();
        NAMED.with(|n| n.set(None));
        assert_eq!(pending_streams(&[c]), vec![base]);
    }
}
