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
