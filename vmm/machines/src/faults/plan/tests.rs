//! Tests of fault plans: their JSON form, their snapshot form, their checks.

use super::*;

/// One vocabulary: a kind's name is the one serde writes for it, alone and as a
/// fault's `kind` tag, and a fault's kind, target and instantness agree with its kind.
#[test]
fn kinds_name_themselves_as_plans_write_them() {
    let one_of_each = [
        FaultKind::Net(NetFault::Partition(Direction::Both)),
        FaultKind::Net(NetFault::Loss { ppm: 1 }),
        FaultKind::Net(NetFault::Delay { extra_ns: 1 }),
        FaultKind::Net(NetFault::Duplicate { ppm: 1 }),
        FaultKind::Net(NetFault::Reorder { max_ns: 1 }),
        FaultKind::Disk(DiskFault::Error(DiskOp::Read)),
        FaultKind::Disk(DiskFault::Latency { extra_ns: 1 }),
        FaultKind::Disk(DiskFault::BitRot { ppm: 1 }),
        FaultKind::RtcStep { delta_s: 1 },
        FaultKind::Crash {
            unflushed: Unflushed::Lost,
        },
        FaultKind::Pause,
        FaultKind::Upset {
            place: UpsetPlace::Pc,
            bit: 0,
            width: 1,
        },
        FaultKind::Stuck {
            ram: 0,
            bit: 0,
            value: 1,
        },
    ];
    let kinds: Vec<Kind> = one_of_each.iter().map(FaultKind::kind).collect();
    assert_eq!(kinds, Kind::ALL, "one fault of each kind, in order");
    for f in one_of_each {
        let k = f.kind();
        assert_eq!(serde_json::to_value(k).unwrap(), k.name());
        assert_eq!(serde_json::to_value(f).unwrap()["kind"], k.name());
        assert_eq!(serde_json::from_value::<Kind>(k.name().into()).unwrap(), k);
        assert_eq!((f.target(), f.is_instant()), (k.target(), k.is_instant()));
    }
}

/// A plan holding one fault of each kind, with every optional parameter given once.
const EVERY_KIND: &str = r#"{"faults": [
  {"at_ns":1,"duration_ns":2,"target":"net","kind":"partition","params":{"direction":"to-guest"}},
  {"at_ns":3,"duration_ns":4,"target":"net","kind":"loss","params":{"ppm":5}},
  {"at_ns":6,"duration_ns":7,"target":"net","kind":"delay","params":{"extra_ns":8}},
  {"at_ns":9,"duration_ns":10,"target":"net","kind":"duplicate","params":{"ppm":11}},
  {"at_ns":12,"duration_ns":13,"target":"net","kind":"reorder","params":{"max_ns":14}},
  {"at_ns":15,"duration_ns":16,"target":"disk","kind":"error","params":{"op":"write"}},
  {"at_ns":17,"duration_ns":18,"target":"disk","kind":"error","params":{"op":"read","nth":19}},
  {"at_ns":20,"duration_ns":21,"target":"disk","kind":"bit-rot","params":{"ppm":22}},
  {"at_ns":23,"duration_ns":24,"target":"disk","kind":"latency","params":{"extra_ns":25}},
  {"at_ns":26,"duration_ns":0,"target":"clock","kind":"rtc-step","params":{"delta_s":-27}},
  {"at_ns":28,"duration_ns":29,"target":"node","kind":"crash","params":{"unflushed":"torn"}},
  {"at_ns":30,"duration_ns":31,"target":"node","kind":"pause"},
  {"at_ns":32,"duration_ns":0,"target":"node","kind":"upset","params":{"place":{"ram":33},"bit":4,"width":2}},
  {"at_ns":34,"duration_ns":0,"target":"node","kind":"upset","params":{"place":"pc","bit":5}},
  {"at_ns":35,"duration_ns":36,"target":"node","kind":"stuck","params":{"ram":37,"bit":6,"value":1}}
]}
"#;

/// The two forms a fault is written in do not move: a plan's JSON (files users keep,
/// reports) and a snapshot's postcard bytes (older snapshots restore). The bytes were
/// written by the build before the plan's kinds took the devices' own types.
#[test]
fn plan_json_and_snapshot_bytes_stay_the_same() {
    let plan: FaultPlan = serde_json::from_str(EVERY_KIND).unwrap();
    plan.check().unwrap();
    assert_eq!(plan.to_json(), EVERY_KIND);
    let saved: Vec<SavedFault> = plan.faults.iter().copied().map(SavedFault).collect();
    let bytes = postcard::to_stdvec(&saved).unwrap();
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(
        hex,
        "0f010200000103040001050607000208090a00030b0c0d00040e0f100105010011120105000113141501061617180107191a000208351c1d0309011e1f030a2000030b002104022200030b0305012324030c250601"
    );
    let back: Vec<SavedFault> = postcard::from_bytes(&bytes).unwrap();
    assert_eq!(back, saved);
}

fn parse(text: &str) -> std::result::Result<FaultPlan, String> {
    let plan: FaultPlan = serde_json::from_str(text).map_err(|e| e.to_string())?;
    plan.check().map_err(|e| e.to_string())?;
    Ok(plan)
}

#[test]
fn plans_round_trip_and_bad_ones_name_the_field() {
    let text = r#"{"faults": [
        {"at_ns": 3000000000, "target": "clock", "kind": "rtc-step", "params": {"delta_s": -60}},
        {"at_ns": 2000000000, "duration_ns": 5, "target": "net", "kind": "partition", "params": {"direction": "from-guest"}},
        {"at_ns": 1, "duration_ns": 7, "target": "disk", "kind": "error", "params": {"op": "any"}}
    ]}"#;
    let mut plan = parse(text).unwrap();
    plan.sort();
    assert_eq!(
        plan.faults[0].kind,
        FaultKind::Disk(DiskFault::Error(DiskOp::Any))
    );
    assert_eq!(plan.faults[2].kind, FaultKind::RtcStep { delta_s: -60 });
    assert_eq!(parse(&plan.to_json()).unwrap(), plan);
    assert_eq!(
        parse(&FaultPlan::default().to_json()).unwrap(),
        FaultPlan::default()
    );

    let bad = [
        (
            r#"{"faults": [{"at_ns": 1, "target": "disk", "kind": "partition", "params": {"direction": "both"}}]}"#,
            "faults[0].target",
        ),
        (
            r#"{"faults": [{"at_ns": 1, "target": "net", "kind": "loss", "params": {"ppm": 2000000}}]}"#,
            "faults[0].params.ppm",
        ),
        (
            r#"{"faults": [{"at_ns": 1, "duration_ns": 3, "target": "clock", "kind": "rtc-step", "params": {"delta_s": 1}}]}"#,
            "faults[0].duration_ns",
        ),
        (
            r#"{"faults": [{"at_ns": 1, "target": "net", "kind": "meteor", "params": {}}]}"#,
            "meteor",
        ),
        (
            r#"{"faults": [{"target": "net", "kind": "loss", "params": {"ppm": 1}}]}"#,
            "at_ns",
        ),
        (
            r#"{"faults": [{"at_ns": 1, "target": "net", "kind": "partition", "params": {"direction": "sideways"}}]}"#,
            "sideways",
        ),
        (r#"{"fault": []}"#, "fault"),
    ];
    for (text, field) in bad {
        let e = parse(text).unwrap_err();
        assert!(e.contains(field), "{text}: {e}");
    }
}

#[test]
fn disk_faults_need_a_disk() {
    let plan = parse(
        r#"{"faults": [{"at_ns": 1, "target": "disk", "kind": "latency", "params": {"extra_ns": 5}}]}"#,
    )
    .unwrap();
    let e = plan
        .check_targets(Targets {
            disk: false,
            node: true,
            ram: true,
        })
        .unwrap_err();
    assert!(e.to_string().contains("no disk"), "{e}");
    plan.check_targets(Targets {
        disk: true,
        node: false,
        ram: false,
    })
    .unwrap();
    let crash = parse(
        r#"{"faults": [{"at_ns": 1, "duration_ns": 9, "target": "node", "kind": "crash", "params": {}}]}"#,
    )
    .unwrap();
    let e = crash
        .check_targets(Targets {
            disk: true,
            node: false,
            ram: false,
        })
        .unwrap_err();
    assert!(e.to_string().contains("--arch riscv64"), "{e}");
}

#[test]
fn node_and_new_disk_kinds_parse_with_their_defaults() {
    let plan = parse(
        r#"{"faults": [
        {"at_ns": 5, "duration_ns": 9, "target": "node", "kind": "crash", "params": {}},
        {"at_ns": 6, "duration_ns": 9, "target": "node", "kind": "crash", "params": {"unflushed": "torn"}},
        {"at_ns": 7, "duration_ns": 9, "target": "node", "kind": "pause"},
        {"at_ns": 8, "duration_ns": 9, "target": "disk", "kind": "error", "params": {"op": "write", "nth": 3}},
        {"at_ns": 9, "duration_ns": 9, "target": "disk", "kind": "bit-rot", "params": {"ppm": 1000000}}
    ]}"#,
    )
    .unwrap();
    let kinds: Vec<FaultKind> = plan.faults.iter().map(|f| f.kind).collect();
    assert_eq!(
        kinds,
        vec![
            FaultKind::Crash {
                unflushed: Unflushed::Lost
            },
            FaultKind::Crash {
                unflushed: Unflushed::Torn
            },
            FaultKind::Pause,
            FaultKind::Disk(DiskFault::ErrorNth {
                op: DiskOp::Write,
                nth: 3
            }),
            FaultKind::Disk(DiskFault::BitRot { ppm: 1_000_000 }),
        ]
    );
    assert_eq!(parse(&plan.to_json()).unwrap(), plan);
    for (text, field) in [
        (
            r#"{"faults": [{"at_ns": 1, "target": "disk", "kind": "error", "params": {"op": "read", "nth": 0}}]}"#,
            "faults[0].params.nth",
        ),
        (
            r#"{"faults": [{"at_ns": 1, "target": "disk", "kind": "bit-rot", "params": {"ppm": 1000001}}]}"#,
            "faults[0].params.ppm",
        ),
        (
            r#"{"faults": [{"at_ns": 1, "target": "node", "kind": "crash", "params": {"unflushed": "maybe"}}]}"#,
            "maybe",
        ),
        (
            r#"{"faults": [{"at_ns": 1, "target": "disk", "kind": "pause"}]}"#,
            "faults[0].target",
        ),
    ] {
        let e = parse(text).unwrap_err();
        assert!(e.contains(field), "{text}: {e}");
    }
}
