//! Promises across the seeds of an exploration: per seed, each promise's verdict (kept in
//! the report); over all seeds, per promise, how many seeds kept it, broke it or never
//! reached it, whether a `sometimes` was ever true, and the first failing seed with the
//! command that reproduces it. Also JUnit XML of those verdicts for CI systems.
//!
//! Over an exploration a promise fails when an `always` was false in some seed, when one
//! that must be reached was reached in no seed, or when a `sometimes` was true in none.
//! A single seed fails only on a violated `always`: `sometimes` promises are judged
//! across seeds.

use super::report::Verdict;
use super::{Kind, Status};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// One promise's verdict in one seed (the report's per-seed list).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeedPromise {
    /// Its id.
    pub id: String,
    /// What it says.
    pub message: String,
    /// How it is judged.
    pub kind: Kind,
    /// The SDK's name for it.
    pub display_type: String,
    /// Whether it must be reached.
    pub must_hit: bool,
    /// Its verdict in this seed.
    pub status: Status,
    /// Evaluations true / false in this seed.
    pub passes: u64,
    /// Evaluations false.
    pub failures: u64,
    /// Virtual ns of the first false evaluation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_failure_ns: Option<u64>,
    /// What the program said of it then (in a world: `on NODE: details`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_failure_details: Option<String>,
}

impl SeedPromise {
    /// The per-seed form of a run's verdict.
    pub fn of(v: &Verdict) -> SeedPromise {
        let p = &v.promise;
        SeedPromise {
            id: p.id.clone(),
            message: p.message.clone(),
            kind: p.kind,
            display_type: p.display_type.clone(),
            must_hit: p.must_hit,
            status: v.status,
            passes: p.passes,
            failures: p.failures,
            first_failure_ns: p.first_failure_ns,
            first_failure_details: p.first_failure_details.clone(),
        }
    }
}

/// One promise over all seeds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Across {
    /// Its id.
    pub id: String,
    /// What it says.
    pub message: String,
    /// How it is judged.
    pub kind: Kind,
    /// The SDK's name for it.
    pub display_type: String,
    /// Whether it held over the exploration.
    pub passed: bool,
    /// Why not, when it did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// Seeds where it was reached and held.
    pub seeds_passed: u64,
    /// Seeds where an `always` was false.
    pub seeds_violated: u64,
    /// Seeds where it was not reached.
    pub seeds_unreached: u64,
    /// Seeds where a `sometimes` was true (its coverage).
    pub seeds_true: u64,
    /// The first seed where an `always` was false, and the command that reproduces it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_failing_seed: Option<(u64, String)>,
}

/// Aggregates per-seed verdicts `(seed, reproduce command, promises)` in seed order.
pub fn aggregate<'a>(
    seeds: impl IntoIterator<Item = (u64, &'a str, &'a [SeedPromise])>,
) -> Vec<Across> {
    let mut by_id: BTreeMap<String, Across> = BTreeMap::new();
    for (seed, reproduce, promises) in seeds {
        for p in promises {
            let a = by_id.entry(p.id.clone()).or_insert_with(|| Across {
                id: p.id.clone(),
                message: p.message.clone(),
                kind: p.kind,
                display_type: p.display_type.clone(),
                passed: true,
                why: None,
                seeds_passed: 0,
                seeds_violated: 0,
                seeds_unreached: 0,
                seeds_true: 0,
                first_failing_seed: None,
            });
            let reached = p.passes + p.failures > 0;
            if !reached {
                a.seeds_unreached += 1;
            }
            if p.passes > 0 && p.kind == Kind::Sometimes {
                a.seeds_true += 1;
            }
            match p.status {
                Status::Violated => {
                    a.seeds_violated += 1;
                    a.first_failing_seed
                        .get_or_insert_with(|| (seed, reproduce.to_string()));
                }
                Status::Passed if reached => a.seeds_passed += 1,
                _ => {}
            }
        }
    }
    let mut out: Vec<Across> = by_id.into_values().collect();
    for a in &mut out {
        let seeds = a.seeds_passed + a.seeds_violated + a.seeds_unreached;
        let reached_somewhere = a.seeds_unreached < seeds;
        a.why = if a.seeds_violated > 0 {
            Some(format!("false in {} seed(s)", a.seeds_violated))
        } else if a.kind == Kind::Sometimes && a.seeds_true == 0 {
            Some(if reached_somewhere {
                "never true in any seed".into()
            } else {
                "never reached in any seed".into()
            })
        } else if !reached_somewhere
            && a.display_type != "AlwaysOrUnreachable"
            && a.display_type != "Unreachable"
        {
            Some("never reached in any seed".into())
        } else {
            None
        };
        a.passed = a.why.is_none();
    }
    out
}

/// The human table of an exploration's promises.
pub fn table(across: &[Across]) -> String {
    let mut s = String::new();
    if across.is_empty() {
        return s;
    }
    let _ = writeln!(
        s,
        "{:<8} {:<20} {:>7} {:>8} {:>10} {:>6}  promise",
        "verdict", "type", "passed", "violated", "unreached", "true"
    );
    for a in across {
        let _ = writeln!(
            s,
            "{:<8} {:<20} {:>7} {:>8} {:>10} {:>6}  {:?}{}",
            if a.passed { "ok" } else { "FAILED" },
            a.display_type,
            a.seeds_passed,
            a.seeds_violated,
            a.seeds_unreached,
            if a.kind == Kind::Sometimes {
                a.seeds_true.to_string()
            } else {
                "-".into()
            },
            a.message,
            a.why.as_ref().map(|w| format!(": {w}")).unwrap_or_default()
        );
        if let Some((seed, cmd)) = &a.first_failing_seed {
            let _ = writeln!(s, "         first failing seed {seed}: {cmd}");
        }
    }
    s
}

fn xml(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '&' => "&amp;".into(),
            '<' => "&lt;".into(),
            '>' => "&gt;".into(),
            '"' => "&quot;".into(),
            '\'' => "&apos;".into(),
            c if (c as u32) < 0x20 && c != '\n' && c != '\t' => " ".into(),
            c => c.to_string(),
        })
        .collect()
}

/// JUnit XML: one test case per promise (failed ones carry why and the reproducing
/// command), one per failing seed that no promise explains (`others`: seed, why,
/// command); with `triage`, the path of the exploration's HTML page as a property
/// (`wio.triage`) and as an attachment line (`[[ATTACHMENT|path]]`, which Jenkins and
/// GitLab show).
pub fn junit(
    across: &[Across],
    others: &[(u64, String, String)],
    seeds: usize,
    triage: Option<&str>,
) -> String {
    let failures = across.iter().filter(|a| !a.passed).count() + others.len();
    let mut s = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        s,
        "<testsuite name=\"wio explore\" tests=\"{}\" failures=\"{failures}\" errors=\"0\">",
        across.len() + others.len()
    );
    let page = triage
        .map(|t| format!("<property name=\"wio.triage\" value=\"{}\"/>", xml(t)))
        .unwrap_or_default();
    let _ = writeln!(
        s,
        "  <properties><property name=\"seeds\" value=\"{seeds}\"/>{page}</properties>"
    );
    if let Some(t) = triage {
        let _ = writeln!(s, "  <system-out>[[ATTACHMENT|{}]]</system-out>", xml(t));
    }
    for a in across {
        let _ = write!(
            s,
            "  <testcase classname=\"promise.{}\" name=\"{}\"",
            xml(&a.display_type),
            xml(&a.message)
        );
        match &a.why {
            None => s.push_str("/>\n"),
            Some(why) => {
                let repro = a
                    .first_failing_seed
                    .as_ref()
                    .map(|(seed, cmd)| format!("first failing seed {seed}: {cmd}"))
                    .unwrap_or_default();
                let _ = writeln!(
                    s,
                    ">\n    <failure message=\"{}\">{}</failure>\n  </testcase>",
                    xml(why),
                    xml(&repro)
                );
            }
        }
    }
    for (seed, why, cmd) in others {
        let _ = writeln!(
            s,
            "  <testcase classname=\"seed\" name=\"seed {seed}\">\n    <failure message=\"{}\">{}</failure>\n  </testcase>",
            xml(why),
            xml(cmd)
        );
    }
    s.push_str("</testsuite>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(
        id: &str,
        kind: Kind,
        display: &str,
        status: Status,
        passes: u64,
        failures: u64,
    ) -> SeedPromise {
        SeedPromise {
            id: id.into(),
            message: id.into(),
            kind,
            display_type: display.into(),
            must_hit: true,
            status,
            passes,
            failures,
            first_failure_ns: None,
            first_failure_details: None,
        }
    }

    #[test]
    fn verdicts_over_seeds() {
        let s1 = [
            p("conserved", Kind::Always, "Always", Status::Passed, 1, 0),
            p("lost", Kind::Sometimes, "Sometimes", Status::Unmet, 0, 1),
            p(
                "full",
                Kind::Sometimes,
                "Sometimes",
                Status::Unreached,
                0,
                0,
            ),
        ];
        let s2 = [
            p("conserved", Kind::Always, "Always", Status::Violated, 0, 1),
            p("lost", Kind::Sometimes, "Sometimes", Status::Passed, 1, 0),
            p(
                "full",
                Kind::Sometimes,
                "Sometimes",
                Status::Unreached,
                0,
                0,
            ),
        ];
        let a = aggregate([
            (1, "wio run --seed 1", &s1[..]),
            (2, "wio run --seed 2", &s2[..]),
        ]);
        let get = |id: &str| a.iter().find(|x| x.id == id).unwrap();
        let c = get("conserved");
        assert!(!c.passed);
        assert_eq!((c.seeds_passed, c.seeds_violated), (1, 1));
        assert_eq!(c.first_failing_seed, Some((2, "wio run --seed 2".into())));
        assert!(get("lost").passed, "true in one seed is enough");
        assert_eq!(get("lost").seeds_true, 1);
        let f = get("full");
        assert!(!f.passed);
        assert_eq!(f.why.as_deref(), Some("never reached in any seed"));
        let t = table(&a);
        assert!(t.contains("first failing seed 2: wio run --seed 2"), "{t}");
        let x = junit(
            &a,
            &[(7, "guest crashed".into(), "wio run --seed 7".into())],
            2,
            Some("triage.html"),
        );
        assert!(
            x.contains("<property name=\"wio.triage\" value=\"triage.html\"/>")
                && x.contains("[[ATTACHMENT|triage.html]]"),
            "{x}"
        );
        assert!(x.contains("tests=\"4\" failures=\"3\""), "{x}");
        assert!(
            x.contains("<testcase classname=\"promise.Sometimes\" name=\"lost\"/>"),
            "{x}"
        );
        assert_eq!(xml("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
    }
}
