//! End-to-end tests of the payment scenario (images/payments): four riscv64 machines (the
//! bank, the payment service, Debian's redis-server for receipts, a client with an audit)
//! under faults drawn from the world's seed. The shortest path of the walkthrough: explore
//! a small budget of seeds of each build, shrink a failing seed's faults, reproduce it,
//! verify the fixed build. They need images/build-all-riscv64.sh (the payments disk).

#![forbid(unsafe_code)]

use serde_json::Value;
use wio_e2e_tests::browser::{browse, require_chromium, row};
use wio_e2e_tests::{
    payments_snapshot, require_riscv_artifact, require_riscv_guests, scratch, stderr, stdout, wio,
    Capability,
};

const RECEIPT: &str = "every successful charge has its receipt";
const TWICE: &str = "no payment is charged twice";
const BALANCED: &str = "every customer debit has a merchant credit";

fn world() -> String {
    format!(
        "{}/../images/payments/world.toml",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// The seeds the receipt bug is explored with.
const SEEDS: &str = "0..40";

/// The setup-complete world snapshot of the build with `bug` (the run stops at the first
/// payment: the snapshot is what matters).
fn snapshot(dir: &std::path::Path, bug: &str) -> String {
    let snap = dir.join(format!("{bug}.snap"));
    payments_snapshot(&world(), &snap, bug, &[]);
    snap.to_str().unwrap().to_string()
}

/// Explores `seeds` of `snap`; returns the report.
fn explore(dir: &std::path::Path, snap: &str, seeds: &str) -> (Value, String) {
    let report = dir.join(format!("{}.json", snap.rsplit('/').next().unwrap()));
    let out = wio(&[
        "explore",
        "--from",
        snap,
        "--seeds",
        seeds,
        "--jobs",
        "2",
        "--report",
        report.to_str().unwrap(),
    ]);
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap())
        .unwrap_or_else(|e| panic!("{e}: {}", stderr(&out)));
    (r, report.to_str().unwrap().to_string())
}

/// The triage pages of the two explorations, opened in headless Chromium: the buggy
/// build's shows the broken receipt promise, a failure card with its reproduce line and the
/// first failing seed's timeline; the fixed build's, against the buggy one as its baseline,
/// tags the receipt promise Resolved.
fn triage_pages(dir: &std::path::Path, buggy: &str, fixed: &str) {
    let test = "the_receipt_bug_is_found_shrunk_reproduced_and_its_fix_verified (triage pages)";
    if !require_chromium(test) {
        return;
    }
    let page = dir.join("buggy.html");
    let out = wio(&["report", "html", buggy, "-o", page.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let (dom, console) = browse(&page, None);
    assert!(console.is_empty(), "{console:?}");
    assert!(dom.contains("data-ready=\"1\""), "the page's script ran");
    let receipt = row(&dom, &format!("data-id=\"{RECEIPT}\"")).expect("the receipt row");
    assert!(receipt.contains("data-verdict=\"violated\""), "{receipt}");
    assert!(dom.contains("class=\"failure\""), "a failure card");
    assert!(dom.contains("<code>wio sim --from "), "its reproduce line");
    assert!(dom.contains("<div class=\"timeline\"><svg"), "its timeline");
    let page = dir.join("fixed.html");
    let out = wio(&[
        "report",
        "html",
        fixed,
        "--baseline",
        buggy,
        "-o",
        page.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let (dom, console) = browse(&page, None);
    assert!(console.is_empty(), "{console:?}");
    let receipt = row(&dom, &format!("data-id=\"{RECEIPT}\"")).expect("the receipt row");
    assert!(receipt.contains(">Resolved<"), "{receipt}");
}

fn verdict<'a>(r: &'a Value, message: &str) -> &'a Value {
    r["promises"]
        .as_array()
        .and_then(|l| l.iter().find(|p| p["message"] == message))
        .unwrap_or_else(|| panic!("no promise {message:?}: {}", r["promises"]))
}

fn failing(r: &Value) -> Vec<u64> {
    r["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["failed"] == true)
        .map(|x| x["seed"].as_u64().unwrap())
        .collect()
}

#[test]
fn the_receipt_bug_is_found_shrunk_reproduced_and_its_fix_verified() {
    if !require_riscv_guests("the_receipt_bug_is_found_shrunk_reproduced_and_its_fix_verified") {
        return;
    }
    if require_riscv_artifact(
        "the_receipt_bug_is_found_shrunk_reproduced_and_its_fix_verified",
        "RISCV64_PAYMENTS_ROOTFS",
        Capability::RiscvGuests,
    )
    .is_none()
    {
        return;
    }
    let dir = scratch("payments-receipt");
    let buggy = snapshot(&dir, "receipt-no-retry");
    let fixed = snapshot(&dir, "none");
    // Explore: some seeds break the receipt promise, and only that one. (About one seed in
    // eight does: 8 of 64 measured; 40 seeds miss it with a chance of about 0.5 %.)
    let (r, report) = explore(&dir, &buggy, SEEDS);
    let bad = failing(&r);
    assert!(!bad.is_empty(), "40 seeds find the receipt bug: {r}");
    assert_eq!(verdict(&r, RECEIPT)["passed"], false);
    assert_eq!(verdict(&r, TWICE)["passed"], true, "no charge twice");
    assert_eq!(verdict(&r, BALANCED)["passed"], true, "no money lost");
    // The same seeds on the fixed build: every promise holds.
    let (ok, ok_report) = explore(&dir, &fixed, SEEDS);
    assert!(
        failing(&ok).is_empty(),
        "bug none passes the same seeds: {ok}"
    );
    triage_pages(&dir, &report, &ok_report);
    // Shrink the first failing seed's faults.
    let plan = dir.join("minimal.json");
    let out = wio(&[
        "shrink",
        "--report",
        &report,
        "--jobs",
        "2",
        "--out",
        plan.to_str().unwrap(),
    ]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}{}", stderr(&out));
    assert!(text.contains("minimal plan: "), "{text}");
    assert!(text.contains(&format!("\"{RECEIPT}\" VIOLATED")), "{text}");
    let p: Value = serde_json::from_str(&std::fs::read_to_string(&plan).unwrap()).unwrap();
    let n = p["between"].as_array().unwrap().len();
    assert!((1..=3).contains(&n), "a few faults at most: {p}");
    assert_eq!(p["seed"], bad[0]);
    // Reproduce: the seed with the minimal plan breaks the promise again.
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("reproduce: wio "))
        .unwrap_or_else(|| panic!("no reproduce line: {text}"));
    let args: Vec<&str> = line.split(' ').chain(["--quiet"]).collect();
    let out = wio(&args);
    assert_eq!(out.status.code(), Some(108), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!("VIOLATED Always \"{RECEIPT}\"")),
        "{}",
        stderr(&out)
    );
    // Verify the fix: every failing seed of the report and the plan.
    let out = wio(&[
        "verify",
        "--from",
        &fixed,
        "--report",
        &report,
        "--plan",
        plan.to_str().unwrap(),
        "--jobs",
        "2",
    ]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}{}", stderr(&out));
    assert_eq!(text.matches("fixed ").count(), bad.len() + 1, "{text}");
    // On the buggy build the plan still fails.
    let out = wio(&["verify", "--from", &buggy, "--plan", plan.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(108), "{}", stdout(&out));
    assert!(stdout(&out).contains("STILL FAILING"));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_idempotency_bug_charges_twice_and_breaks_only_that_promise() {
    if !require_riscv_guests("the_idempotency_bug_charges_twice_and_breaks_only_that_promise") {
        return;
    }
    if require_riscv_artifact(
        "the_idempotency_bug_charges_twice_and_breaks_only_that_promise",
        "RISCV64_PAYMENTS_ROOTFS",
        Capability::RiscvGuests,
    )
    .is_none()
    {
        return;
    }
    let dir = scratch("payments-idempotency");
    let buggy = snapshot(&dir, "no-idempotency");
    let (r, _) = explore(&dir, &buggy, "0..6");
    assert!(!failing(&r).is_empty(), "{r}");
    assert_eq!(verdict(&r, TWICE)["passed"], false);
    assert_eq!(verdict(&r, RECEIPT)["passed"], true);
    assert_eq!(verdict(&r, BALANCED)["passed"], true);
    let _ = std::fs::remove_dir_all(dir);
}
