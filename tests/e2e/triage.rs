//! End-to-end tests of the triage page (`wio explore --html`, `wio report html`), opened
//! in a real browser: headless Chromium loads the page from disk, runs its script and
//! hands back the DOM it built (and a screenshot); the checks read that DOM, not the HTML
//! file wio wrote. A two-node world breaks an `always` promise in some seeds under drawn
//! network faults; its fixed twin holds it. Need the guests built by
//! images/build-all-riscv64.sh and Debian's `chromium`.

#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};
use wio_e2e_tests::browser::{browse, require_chromium, row};
use wio_e2e_tests::{
    ready_world_snapshot, require_riscv_guests, riscv_snapshot, scratch, stderr, wio,
};

/// A world whose node `a` states that its random draw is not a multiple of 3 (`fixed`:
/// the draw is taken modulo 3 and bumped, so the promise holds), while `b` pings it under
/// drawn partitions and degraded links.
fn world(fixed: bool) -> String {
    let v = if fixed {
        "v=$(( $(od -An -N1 -tu1 /dev/urandom) / 3 * 3 + 1 ))"
    } else {
        "v=$(od -An -N1 -tu1 /dev/urandom)"
    };
    format!(
        r#"max_virtual_secs = 20
[faults]
profile = "heavy"
[[node]]
name = "a"
run = "echo ready; sleep 0.05; {v}; [ $((v % 3)) != 0 ] && c=true || c=false; wio-assert always 'the draw is not a multiple of 3' $c; echo drew $v"
[[node]]
name = "b"
run = "ping -c 3 -i 0.5 a; echo pinged"
"#
    )
}

/// `world(fixed)` snapshotted when `a` is ready, explored over seeds 0..12 with a page and
/// JUnit XML beside the report; returns the report's path.
fn explored(dir: &Path, name: &str, fixed: bool) -> PathBuf {
    let snap = ready_world_snapshot(dir, name, &world(fixed));
    let report = dir.join(format!("{name}.json"));
    let path = |ext: &str| dir.join(format!("{name}.{ext}"));
    let o = wio(&[
        "explore",
        "--from",
        snap.to_str().expect("utf-8"),
        "--seeds",
        "0..12",
        "--jobs",
        "2",
        "--report",
        report.to_str().expect("utf-8"),
        "--html",
        path("html").to_str().expect("utf-8"),
        "--junit",
        path("xml").to_str().expect("utf-8"),
    ]);
    assert_eq!(
        o.status.code(),
        Some(if fixed { 0 } else { 1 }),
        "{}",
        stderr(&o)
    );
    report
}

#[test]
fn the_triage_page_opens_in_a_browser_with_its_properties_failures_and_timeline() {
    let test = "the_triage_page_opens_in_a_browser_with_its_properties_failures_and_timeline";
    if !require_riscv_guests(test) || !require_chromium(test) {
        return;
    }
    let dir = scratch("triage");
    let buggy = explored(&dir, "buggy", false);
    let page = dir.join("buggy.html");
    let (dom, console) = browse(&page, None);
    assert!(console.is_empty(), "the page logged: {console:?}");
    assert!(
        dom.contains("data-ready=\"1\""),
        "its script ran to the end"
    );
    assert!(!dom.contains("data-errors"), "no script error");
    assert!(dom.contains("id=\"properties-table\""));
    assert!(
        dom.contains("data-verdict=\"violated\" data-id=\"the draw is not a multiple of 3\""),
        "the broken promise's row"
    );
    // A failure card with its reproduce line, and the first failing seed's timeline.
    let card = dom.find("class=\"failure\"").expect("a failure card");
    assert!(
        dom[card..].contains("<code>wio sim --from "),
        "a reproduce line"
    );
    assert!(
        dom.contains("<div class=\"timeline\"><svg"),
        "an embedded timeline"
    );
    // The seeds table, which only the script fills.
    assert!(
        dom.contains("id=\"row-0\""),
        "seed rows drawn by the script"
    );
    assert!(dom.contains("12 of 12 branches"));
    assert!(
        dom.contains("branches per minute"),
        "explore --html knows its wall time"
    );
    let junit = std::fs::read_to_string(dir.join("buggy.xml")).expect("junit");
    assert!(junit.contains("[[ATTACHMENT|"), "{junit}");

    // A shrunk plan beside the report shows on its seed's card.
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&buggy).expect("report")).expect("json");
    let first = r["results"]
        .as_array()
        .and_then(|v| v.iter().find(|x| x["failed"] == true))
        .and_then(|x| x["seed"].as_u64())
        .expect("a failing seed");
    let plan = dir.join(format!("shrink-{first}.json"));
    let o = wio(&[
        "shrink",
        "--report",
        buggy.to_str().expect("utf-8"),
        "--out",
        plan.to_str().expect("utf-8"),
    ]);
    assert!(plan.is_file(), "{}", stderr(&o));
    let shrunk = dir.join("shrunk.html");
    let o = wio(&[
        "report",
        "html",
        buggy.to_str().expect("utf-8"),
        "--no-timelines",
        "-o",
        shrunk.to_str().expect("utf-8"),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let (dom, _) = browse(&shrunk, None);
    let card = dom
        .find(&format!("id=\"seed-{first}\""))
        .expect("the seed's card");
    assert!(
        dom[card..].contains(&format!("<code>shrink-{first}.json</code>")),
        "its minimal faults"
    );

    // A screenshot, and its size.
    let shot = dir.join("buggy.png");
    browse(&page, Some(&shot));
    let png = std::fs::read(&shot).expect("screenshot");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let (w, h) = (
        u32::from_be_bytes(png[16..20].try_into().expect("width")),
        u32::from_be_bytes(png[20..24].try_into().expect("height")),
    );
    assert_eq!((w, h), (1280, 2000));
    assert!(
        png.len() > 20_000,
        "a page, not a blank: {} bytes",
        png.len()
    );

    // Against a baseline: the fixed build resolves the promise; the buggy one against
    // itself is ongoing.
    let fixed = explored(&dir, "fixed", true);
    let tagged = |report: &Path, baseline: &Path, out: &str| {
        let out = dir.join(out);
        let o = wio(&[
            "report",
            "html",
            report.to_str().expect("utf-8"),
            "--baseline",
            baseline.to_str().expect("utf-8"),
            "-o",
            out.to_str().expect("utf-8"),
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let (dom, console) = browse(&out, None);
        assert!(console.is_empty(), "{console:?}");
        row(&dom, "data-id=\"the draw is not a multiple of 3\"")
            .expect("the promise's row")
            .to_string()
    };
    let resolved = tagged(&fixed, &buggy, "fixed-vs-buggy.html");
    assert!(resolved.contains(">Resolved<"), "{resolved}");
    let ongoing = tagged(&buggy, &buggy, "buggy-vs-buggy.html");
    assert!(ongoing.contains(">Ongoing<"), "{ongoing}");

    // Bad input: one line each (exit 101 for a file wio cannot use, 100 for a baseline
    // that is the wrong file), no page written.
    let text = std::fs::read_to_string(&buggy).expect("report");
    let truncated = dir.join("truncated.json");
    std::fs::write(&truncated, &text[..text.len() / 2]).expect("truncated");
    let foreign = dir.join("foreign.json");
    std::fs::write(&foreign, "{\"seed\": 1, \"trace_hash\": \"ab\"}").expect("foreign");
    let other = dir.join("other.json");
    std::fs::write(
        &other,
        text.replace(
            "the draw is not a multiple of 3",
            "another service's promise",
        ),
    )
    .expect("other");
    for (args, needle, code) in [
        (
            vec![truncated.to_str().expect("utf-8")],
            "truncated.json",
            101,
        ),
        (
            vec![foreign.to_str().expect("utf-8")],
            "is not a wio explore report",
            101,
        ),
        (
            vec![
                buggy.to_str().expect("utf-8"),
                "--baseline",
                other.to_str().expect("utf-8"),
            ],
            "is a baseline of another exploration",
            100,
        ),
    ] {
        let out = dir.join("bad.html");
        let mut all = vec!["report", "html"];
        all.extend(args);
        all.extend(["-o", out.to_str().expect("utf-8")]);
        let o = wio(&all);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(code), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(needle), "{needle:?} in {err}");
        assert!(!out.exists(), "nothing written");
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// `wio run --timeline`: a single machine's run drawn over virtual time, with its console
/// markers, its promises' events and its end; a machine exploration's page embeds it.
#[test]
fn a_single_machine_run_draws_its_timeline() {
    let test = "a_single_machine_run_draws_its_timeline";
    if !require_riscv_guests(test) {
        return;
    }
    let dir = scratch("machine-timeline");
    let svg = dir.join("run.svg");
    let o = wio(&[
        "run",
        "--arch",
        "riscv64",
        "--seed",
        "3",
        "--quiet",
        "--cmdline",
        "console=ttyS0 wio.promises=demo",
        "--timeline",
        svg.to_str().expect("utf-8"),
    ]);
    assert!(svg.is_file(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&svg).expect("svg");
    assert!(text.starts_with("<svg") && text.trim_end().ends_with("</svg>"));
    for needle in [
        "wio run: seed 3",
        ">console</text>",
        ">promises</text>",
        "wio-init: start",
        "first true at",
    ] {
        assert!(text.contains(needle), "{needle:?} in {text}");
    }
    // A machine exploration's page draws its first failing seed's timeline the same way.
    let snap = dir.join("m.snap");
    riscv_snapshot(&snap, 7, "console:wio-init: start");
    let page = dir.join("m.html");
    let o = wio(&[
        "explore",
        "--from",
        snap.to_str().expect("utf-8"),
        "--seeds",
        "0..3",
        "--fail-on",
        "wio-init: done",
        "--report",
        dir.join("m.json").to_str().expect("utf-8"),
        "--html",
        page.to_str().expect("utf-8"),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let html = std::fs::read_to_string(&page).expect("page");
    assert_eq!(
        html.matches("<div class=\"timeline\"><svg").count(),
        1,
        "one group, one timeline"
    );
    assert!(html.contains("wio run: seed 0"), "seed 0's picture");
    let _ = std::fs::remove_dir_all(dir);
}
