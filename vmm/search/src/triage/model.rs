//! What the triage page says, computed from a report (and its baseline): the properties
//! with their tags, the failures grouped by what broke, the faults failing seeds share,
//! and how many distinct behaviours the branches found as they ran. Plain data: the page
//! (`page.rs`) only lays it out.

use crate::explore::{Report, SeedResult};
use std::collections::{BTreeMap, BTreeSet};
use wio_machines::promises::across::Across;
use wio_machines::promises::Status;

/// A promise violated in fewer than this share of the seeds run (per mille) is rare.
pub const RARE_PER_MILLE: u64 = 10;

/// How a property compares with the baseline (and whether it is rare).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Tag {
    /// Broken now, held (or absent) in the baseline.
    New,
    /// Broken in the baseline, holds now.
    Resolved,
    /// Broken in both.
    Ongoing,
    /// In the baseline, not in this report.
    Gone,
}

impl Tag {
    /// Its word on the page.
    pub fn word(self) -> &'static str {
        match self {
            Tag::New => "New",
            Tag::Resolved => "Resolved",
            Tag::Ongoing => "Ongoing",
            Tag::Gone => "Gone",
        }
    }
}

/// One row of the properties table.
#[derive(Debug, Clone)]
pub struct Property {
    /// The promise (over all seeds); for a [`Tag::Gone`] row, the baseline's.
    pub promise: Across,
    /// Compared with the baseline (None without one, or when both held).
    pub tag: Option<Tag>,
    /// Violated in fewer than 1 % of the seeds run.
    pub rare: bool,
}

/// The properties of `report`: its promises in its order, then the baseline's that it no
/// longer has.
pub fn properties(report: &Report, baseline: Option<&Report>) -> Vec<Property> {
    let seeds = report.results.len() as u64;
    let broken = |a: &Across| !a.passed;
    let mut rows: Vec<Property> = report
        .promises
        .iter()
        .map(|a| {
            let before = baseline.and_then(|b| b.promises.iter().find(|x| x.id == a.id));
            let tag = match (baseline.is_some(), broken(a), before.map(broken)) {
                (false, _, _) => None,
                (true, true, Some(true)) => Some(Tag::Ongoing),
                (true, true, _) => Some(Tag::New),
                (true, false, Some(true)) => Some(Tag::Resolved),
                (true, false, _) => None,
            };
            let rare = a.seeds_violated > 0
                && a.seeds_violated.saturating_mul(1000) < seeds.saturating_mul(RARE_PER_MILLE);
            Property {
                promise: a.clone(),
                tag,
                rare,
            }
        })
        .collect();
    if let Some(b) = baseline {
        for a in &b.promises {
            if !report.promises.iter().any(|x| x.id == a.id) {
                rows.push(Property {
                    promise: a.clone(),
                    tag: Some(Tag::Gone),
                    rare: false,
                });
            }
        }
    }
    rows
}

/// What made a failing seed fail, as the page groups it: its first violated promise, else
/// its error, its exit status or a `--fail-on` text.
pub fn broke(r: &SeedResult) -> String {
    if let Some(p) = r.promises.iter().find(|p| p.status == Status::Violated) {
        return format!("promise: {}", p.message);
    }
    if let Some(e) = &r.error {
        // The error's first words, so that one kind of error makes one group.
        let head: String = e.split(':').next().unwrap_or(e).chars().take(80).collect();
        return format!("error: {head}");
    }
    if let Some(s) = r.exit_status.filter(|s| *s != 0) {
        return format!("exit status {s}");
    }
    match r.matched.first() {
        Some(m) => format!("fail-on: {m}"),
        None => "failed".into(),
    }
}

/// The failing seeds grouped by what broke, groups in order of their first seed.
pub fn failures(report: &Report) -> Vec<(String, Vec<&SeedResult>)> {
    let mut groups: Vec<(String, Vec<&SeedResult>)> = Vec::new();
    for r in report.results.iter().filter(|r| r.failed) {
        let key = broke(r);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(r),
            None => groups.push((key, vec![r])),
        }
    }
    groups
}

/// The faults of a seed as the keys the page counts them by: a machine fault's kind and
/// node (`crash @ payments`), a world fault's kind and the nodes it is between.
pub fn fault_keys(r: &SeedResult) -> BTreeSet<String> {
    let mut keys = BTreeSet::new();
    for a in &r.faults {
        let name = a.fault.kind.name();
        keys.insert(match &a.node {
            Some(n) => format!("{name} @ {n}"),
            None => name.to_string(),
        });
    }
    for w in &r.world_faults {
        let between = w.what.split(" +").next().unwrap_or(&w.what);
        keys.insert(format!("{} {between}", w.kind));
    }
    keys
}

/// How often a fault key occurs in failing and in passing seeds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shared {
    /// The key (see [`fault_keys`]).
    pub key: String,
    /// Failing seeds with it.
    pub failing: u64,
    /// Passing seeds with it.
    pub passing: u64,
}

/// Every fault key with its counts, the ones most over-represented in failing seeds first
/// (by the difference of the two shares, in per-million to stay in integers); `keys[i]`
/// are the report's seed i's [`fault_keys`].
pub fn shared_faults(report: &Report, keys: &[BTreeSet<String>]) -> (Vec<Shared>, u64, u64) {
    let mut counts: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    let (mut failing, mut passing) = (0u64, 0u64);
    for (r, k) in report.results.iter().zip(keys) {
        if r.failed {
            failing += 1;
        } else {
            passing += 1;
        }
        for k in k {
            let c = counts.entry(k.as_str()).or_default();
            if r.failed {
                c.0 += 1;
            } else {
                c.1 += 1;
            }
        }
    }
    let share = |n: u64, of: u64| (n * 1_000_000).checked_div(of).unwrap_or(0) as i64;
    let mut rows: Vec<Shared> = counts
        .into_iter()
        .map(|(key, (f, p))| Shared {
            key: key.to_string(),
            failing: f,
            passing: p,
        })
        .collect();
    rows.sort_by_key(|s| {
        (
            -(share(s.failing, failing) - share(s.passing, passing)),
            s.key.clone(),
        )
    });
    (rows, failing, passing)
}

/// After each branch (in the report's order): distinct trace hashes, and distinct promise
/// conditions seen (a promise evaluated true, or false).
pub fn utilization(report: &Report) -> (Vec<u64>, Vec<u64>) {
    let mut traces: BTreeSet<&str> = BTreeSet::new();
    let mut seen: BTreeSet<(&str, bool)> = BTreeSet::new();
    let mut t = Vec::with_capacity(report.results.len());
    let mut c = Vec::with_capacity(report.results.len());
    for r in &report.results {
        traces.insert(r.trace_hash.as_str());
        for p in &r.promises {
            if p.passes > 0 {
                seen.insert((p.id.as_str(), true));
            }
            if p.failures > 0 {
                seen.insert((p.id.as_str(), false));
            }
        }
        t.push(traces.len() as u64);
        c.push(seen.len() as u64);
    }
    (t, c)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn seed(seed: u64, failed: bool, hash: &str) -> SeedResult {
        SeedResult {
            seed,
            ended: "exit".into(),
            exit_status: Some(u32::from(failed)),
            error: None,
            matched: Vec::new(),
            virtual_ns: 1,
            trace_hash: hash.into(),
            failed,
            reproduce: format!("wio run --from s.snap --seed {seed}"),
            until_line: None,
            faults: Vec::new(),
            world_faults: Vec::new(),
            promises: Vec::new(),
            path: None,
            moment: None,
            left_tape: None,
        }
    }

    #[test]
    fn failures_group_by_what_broke_and_utilization_counts_distinct_traces() {
        let mut r = crate::triage::tests::report(vec![
            seed(0, false, "a"),
            seed(1, true, "b"),
            seed(2, false, "a"),
            seed(3, true, "c"),
        ]);
        r.results[3].exit_status = Some(7);
        let g = failures(&r);
        assert_eq!(g.len(), 2);
        assert_eq!(g[0].0, "exit status 1");
        assert_eq!(g[1].0, "exit status 7");
        let (t, c) = utilization(&r);
        assert_eq!(t, vec![1, 2, 2, 3]);
        assert_eq!(c, vec![0, 0, 0, 0]);
    }
}
