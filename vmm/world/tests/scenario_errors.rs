//! A bad scenario file's error, as `wio sim` reports it: the line and field it names
//! (the error type lives in wio-machines' `error`, the parser here).

use std::path::Path;
use wio_machines::error::ScenarioError;
use wio_world::scenario::Scenario;

fn parse(text: &str) -> Result<Scenario, ScenarioError> {
    Scenario::parse_in(text, Path::new(""))
}

/// A bad scenario's error carries its line and field, and reads the same as before.
#[test]
fn scenario_errors_name_line_and_field() {
    let text = "[[node]]\nname = \"a\"\n[[node]]\nname = \"a\"\n";
    let e = parse(text).expect_err("a name used twice");
    assert_eq!(e.line, Some(4));
    assert_eq!(e.field.as_deref(), Some("node.name"));
    assert_eq!(e.to_string(), "line 4: node.name \"a\" is used twice");
    let e = e.in_file("w.toml");
    assert_eq!(
        e.to_string(),
        "scenario w.toml: line 4: node.name \"a\" is used twice"
    );
    // TOML's own errors: the line from its span, the key path from the text.
    let e = parse("[[node]]\nname = \"a\"\ncolour = 1\n").expect_err("unknown key");
    assert_eq!((e.line, e.field.as_deref()), (Some(3), Some("node.colour")));
    // An error about no one line still names the field.
    let e = parse("[link]\nlatency_us = 0\n[[node]]\nname = \"a\"\n").expect_err("latency 0");
    assert_eq!(
        (e.line, e.field.as_deref()),
        (None, Some("link.latency_us"))
    );
    let whole = ScenarioError::about("node", "no [[node]]: a world needs at least one");
    assert_eq!(whole.to_string(), "no [[node]]: a world needs at least one");
}

/// Options with a fixed set of values are read into their types by the parser itself: a
/// value outside the set is an error naming its line, its field and the values allowed.
#[test]
fn options_outside_their_values_name_the_field_and_the_choices() {
    let node = "[[node]]\nname = \"a\"\n";
    for (extra, field, line, allowed) in [
        (
            "sched_noise = \"medium\"\n",
            "node.sched_noise",
            3,
            "`off`, `light`, `heavy`",
        ),
        ("arch = \"arm\"\n", "node.arch", 3, "`riscv64`"),
        (
            "[faults]\nprofile = \"medium\"\n",
            "faults.profile",
            4,
            "`none`, `light`, `heavy`",
        ),
    ] {
        let e = parse(&format!("{node}{extra}")).expect_err(extra);
        assert_eq!(
            (e.line, e.field.as_deref()),
            (Some(line), Some(field)),
            "{extra}"
        );
        let text = e.to_string();
        assert!(
            text.starts_with(&format!("line {line}: {field}: unknown variant")),
            "{text}"
        );
        assert!(text.contains(allowed), "{text}");
    }
    // The values inside the set, and the arch aliases `wio run --arch` takes.
    for extra in [
        "sched_noise = \"heavy\"\narch = \"riscv\"\n",
        "[faults]\nprofile = \"none\"\n",
    ] {
        parse(&format!("{node}{extra}")).expect(extra);
    }
    // `amd64` names an x86-64 node: without a kernel it runs the built x86-64 guest, whose
    // disks it may name; a riscv64 hart's ISA is refused.
    let s =
        parse(&format!("{node}arch = \"amd64\"\ndisk = \"payments\"\n")).expect("an x86-64 node");
    assert_eq!(s.nodes[0].arch, wio_machines::machine::Arch::X86_64);
    let e = parse(&format!("{node}arch = \"amd64\"\nisa = \"rv64gc\"\n")).expect_err("an ISA");
    assert!(e.to_string().contains("a riscv64 node's setting"), "{e}");
}

/// Image nodes' fields, checked before any image is looked up: a wait on a node without
/// a health check, a cycle of waits, image fields on a node without an image.
#[test]
fn image_node_fields_name_their_line() {
    let two = |a: &str, b: &str| format!("[[node]]\nname = \"a\"\n{a}[[node]]\nname = \"b\"\n{b}");
    for (text, line, needle) in [
        (
            two("wait_healthy = [\"b\"]\n", ""),
            3,
            "node \"b\" has no healthcheck",
        ),
        (
            two(
                "healthcheck = [\"true\"]\nwait_healthy = [\"b\"]\n",
                "healthcheck = [\"true\"]\nwait_healthy = [\"a\"]\n",
            ),
            4,
            "\"a\" waits, through others, for itself",
        ),
        (
            two("command = [\"x\"]\n", ""),
            3,
            "node.command changes an image's process: give node.image too",
        ),
    ] {
        let e = parse(&text).expect_err(needle);
        assert_eq!(e.line, Some(line), "{e}");
        assert!(e.to_string().contains(needle), "{e}");
    }
}
