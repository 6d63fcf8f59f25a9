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
