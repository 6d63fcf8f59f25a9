//! The ledger's tests: the Antithesis protocol's lines, verdicts, bounds, bad input.

use super::*;

fn line(v: serde_json::Value) -> Vec<u8> {
    v.to_string().into_bytes()
}

fn assert_line(
    id: &str,
    kind: &str,
    display: &str,
    hit: bool,
    must_hit: bool,
    cond: bool,
) -> Vec<u8> {
    line(serde_json::json!({"antithesis_assert": {
        "id": id, "message": id, "assert_type": kind, "display_type": display,
        "hit": hit, "must_hit": must_hit, "condition": cond,
        "location": {"file": "x.c", "begin_line": 3}, "details": {"n": 1}
    }}))
}

#[test]
fn verdicts_follow_the_antithesis_semantics() {
    let mut l = Ledger::default();
    // The catalogue, registered at start.
    for (id, kind, display, must) in [
        ("a", "always", "Always", true),
        ("b", "always", "AlwaysOrUnreachable", false),
        ("c", "sometimes", "Sometimes", true),
        ("d", "reachability", "Reachable", true),
        ("e", "reachability", "Unreachable", false),
        ("f", "sometimes", "Sometimes", true),
        ("g", "always", "Always", true),
    ] {
        assert_eq!(
            l.note(0, &assert_line(id, kind, display, false, must, false)),
            Noted::Nothing
        );
    }
    let first = |id: &str, condition| Noted::First {
        id: id.into(),
        condition,
    };
    assert_eq!(
        l.note(5, &assert_line("a", "always", "Always", true, true, true)),
        first("a", true)
    );
    assert_eq!(
        l.note(6, &assert_line("a", "always", "Always", true, true, true)),
        Noted::Nothing,
        "a condition is first once"
    );
    assert_eq!(
        l.note(7, &assert_line("a", "always", "Always", true, true, false)),
        Noted::Violation("a".into())
    );
    assert_eq!(
        l.note(8, &assert_line("a", "always", "Always", true, true, false)),
        Noted::Nothing,
        "reported once"
    );
    assert_eq!(
        l.note(
            9,
            &assert_line("c", "sometimes", "Sometimes", true, true, false),
        ),
        first("c", false),
        "a sometimes false is no violation"
    );
    l.note(
        10,
        &assert_line("c", "sometimes", "Sometimes", true, true, true),
    );
    l.note(
        11,
        &assert_line("d", "reachability", "Reachable", true, true, true),
    );
    l.note(
        12,
        &assert_line("f", "sometimes", "Sometimes", true, true, false),
    );
    let st = |id: &str| l.promises[id].status();
    assert_eq!(st("a"), Status::Violated);
    assert_eq!(l.promises["a"].first_failure_ns, Some(7));
    assert_eq!(
        l.promises["a"].first_failure_details.as_deref(),
        Some("{\"n\":1}")
    );
    assert_eq!(
        st("b"),
        Status::Passed,
        "always-or-unreachable, never reached"
    );
    assert_eq!(st("c"), Status::Passed);
    assert_eq!(st("d"), Status::Passed);
    assert_eq!(st("e"), Status::Passed, "unreachable, not reached");
    assert_eq!(st("f"), Status::Unmet);
    assert_eq!(st("g"), Status::Unreached);
    use crate::snapshot::persist::Persist;
    let bytes = postcard::to_stdvec(&l.save()).unwrap();
    let state: super::LedgerState = postcard::from_bytes(&bytes).unwrap();
    let saved = Ledger::restore((), &state).unwrap();
    assert_eq!(saved, l, "snapshots keep the ledger");
    // Reaching an unreachable promise violates it.
    assert_eq!(
        l.note(
            13,
            &assert_line("e", "reachability", "Unreachable", true, false, false)
        ),
        Noted::Violation("e".into())
    );
}

#[test]
fn lifecycle_events_and_bad_lines() {
    let mut l = Ledger::default();
    let setup =
        line(serde_json::json!({"antithesis_setup": {"status": "complete", "details": null}}));
    assert_eq!(l.note(4, &setup), Noted::SetupComplete);
    assert_eq!(l.note(6, &setup), Noted::Nothing, "once");
    assert_eq!(l.setup_complete_ns, Some(4));
    l.note(7, &line(serde_json::json!({"charge": {"amount": 5}})));
    l.note(8, &line(serde_json::json!({"charge": {"amount": 6}})));
    assert_eq!(l.events["charge"], 2);
    l.note(
        9,
        &line(serde_json::json!({"antithesis_sdk": {"language": {"name": "C"}}})),
    );
    assert_eq!(l.sdks.len(), 1);
    l.note(
        9,
        &line(serde_json::json!({"antithesis_guidance": {"guidance_type": "numeric"}})),
    );
    assert_eq!(l.guidance, 1);
    assert!(!l.events.contains_key("antithesis_guidance"));
    for bad in [
        &b"not json"[..],
        b"[1,2]",
        b"{}",
        b"{\"a\":1,\"b\":2}",
        b"{\"antithesis_assert\": {\"hit\": true}}",
        b"{\"antithesis_assert\": {\"message\": \"m\", \"assert_type\": \"never\", \"hit\": true}}",
        b"\xff\xfe",
    ] {
        assert_eq!(l.note(10, bad), Noted::Nothing);
    }
    assert_eq!(l.malformed, 7);
    assert!(l.promises.is_empty());
}

#[test]
fn bounds_hold_against_a_flood() {
    let mut l = Ledger::default();
    for i in 0..MAX_PROMISES + 5 {
        l.note(
            1,
            &assert_line(&format!("p{i}"), "always", "Always", true, true, true),
        );
    }
    for i in 0..MAX_EVENTS + 3 {
        l.note(1, &line(serde_json::json!({ format!("ev{i}"): null })));
    }
    assert_eq!(l.promises.len(), MAX_PROMISES);
    assert_eq!(l.events.len(), MAX_EVENTS);
    assert_eq!(l.dropped, 8);
    let huge = "x".repeat(100_000);
    let mut l = Ledger::default();
    l.note(
        1,
        &line(serde_json::json!({"antithesis_assert": {
            "id": "h", "message": "h", "assert_type": "always", "hit": true, "must_hit": true,
            "condition": false, "details": {"blob": huge}
        }})),
    );
    let d = l.promises["h"].first_failure_details.as_ref().unwrap();
    assert!(d.len() <= MAX_DETAILS + 3, "{}", d.len());
}

/// Guidance records: a registration is only counted; an evaluation carries its quantity's
/// score, ordered the way the search should push it (numeric: left - right; boolean: how
/// many are true), whatever the sign and magnitude.
#[test]
fn guidance_evaluations_are_scored_in_their_direction() {
    let numeric = |left: f64, right: f64, maximize: bool| {
        line(serde_json::json!({"antithesis_guidance": {
            "guidance_type": "numeric", "id": "lag", "message": "lag", "maximize": maximize,
            "hit": true, "guidance_data": {"left": left, "right": right}}}))
    };
    let score = |l: &mut Ledger, text: &[u8]| match l.note(1, text) {
        Noted::Guidance(g) => {
            assert_eq!((g.id.as_str(), g.message.as_str()), ("lag", "lag"));
            g.score
        }
        other => panic!("{other:?}"),
    };
    let mut l = Ledger::default();
    let reg = line(serde_json::json!({"antithesis_guidance": {
        "guidance_type": "numeric", "id": "lag", "message": "lag", "maximize": true, "hit": false}}));
    assert_eq!(l.note(1, &reg), Noted::Nothing, "a registration");
    // Maximized: a larger left - right scores higher, across signs and magnitudes.
    let up: Vec<u64> = [
        (-1e9, 0.0),
        (-3.0, 1.0),
        (0.0, 0.0),
        (2.5, 2.0),
        (1e12, 1.0),
    ]
    .iter()
    .map(|&(a, b)| score(&mut l, &numeric(a, b, true)))
    .collect();
    assert!(up.windows(2).all(|w| w[0] < w[1]), "{up:?}");
    // Minimized: the other way round.
    let down: Vec<u64> = [(5.0, 0.0), (1.0, 0.0), (-7.0, 0.0)]
        .iter()
        .map(|&(a, b)| score(&mut l, &numeric(a, b, false)))
        .collect();
    assert!(down.windows(2).all(|w| w[0] < w[1]), "{down:?}");
    let boolean = |v: serde_json::Value| {
        line(serde_json::json!({"antithesis_guidance": {
            "guidance_type": "boolean", "id": "lag", "message": "lag", "maximize": true,
            "hit": true, "guidance_data": v}}))
    };
    let one = score(&mut l, &boolean(serde_json::json!({"a": true, "b": false})));
    let two = score(&mut l, &boolean(serde_json::json!({"a": true, "b": true})));
    assert!(one < two);
    // Not guidance the search can use: counted, nothing more.
    for odd in [
        serde_json::json!({"guidance_type": "numeric", "id": "x", "hit": true}),
        serde_json::json!({"guidance_type": "numeric", "hit": true, "guidance_data": {"left": 1, "right": 0}}),
        serde_json::json!({"guidance_type": "other", "id": "x", "hit": true, "guidance_data": {}}),
        serde_json::json!({"guidance_type": "numeric", "id": "x", "hit": true, "guidance_data": {"left": "a", "right": 0}}),
    ] {
        let n = l.guidance;
        assert_eq!(
            l.note(2, &line(serde_json::json!({ "antithesis_guidance": odd }))),
            Noted::Nothing
        );
        assert_eq!(l.guidance, n + 1);
    }
}

#[test]
fn coverage_edges_of_instrumented_programs_are_handed_on_not_kept() {
    let mut l = Ledger::default();
    let edge = line(serde_json::json!({"wio_coverage": {"module": "prog", "edge": 7}}));
    assert_eq!(
        l.note(10, &edge),
        Noted::Edge {
            module: "prog".into(),
            edge: 7
        }
    );
    assert!(l.events.is_empty(), "not an event");
    for bad in [
        serde_json::json!({"wio_coverage": {"module": "prog"}}),
        serde_json::json!({"wio_coverage": {"module": 3, "edge": 1}}),
        serde_json::json!({"wio_coverage": {"module": "m".repeat(300), "edge": 1}}),
    ] {
        assert_eq!(l.note(11, &line(bad)), Noted::Nothing);
    }
    assert_eq!(l.malformed, 3);
}
