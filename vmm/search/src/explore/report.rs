//! An exploration's report: the question it answered and every seed's result (JSON,
//! `--report`), its JUnit form (`--junit`), the table printed at the end, reading a
//! report back and merging shard reports (`wio report merge`).

use super::{guided, SeedRange};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use wio_machines::error::NondeterminismError;
use wio_machines::error::{ExploreError, Result, WioError};
use wio_machines::faults::inject::Applied;
use wio_machines::machine::noise::SchedNoise;
use wio_machines::promises::across::{self, aggregate, Across, SeedPromise};
use wio_machines::promises::Status;
use wio_world::faults::WorldFault;

/// One seed's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeedResult {
    /// The seed.
    pub seed: u64,
    /// "exit" (the guest powered off), "until" (the --until text appeared) or "error".
    pub ended: String,
    /// The guest's exit status, when it exited.
    pub exit_status: Option<u32>,
    /// wio's error, when the branch ended with one.
    pub error: Option<String>,
    /// Console texts (of --match and --fail-on) that appeared.
    pub matched: Vec<String>,
    /// Virtual ns at the end of the branch.
    pub virtual_ns: u64,
    /// The branch's trace hash.
    pub trace_hash: String,
    /// Whether the seed failed (error, non-zero status, or a --fail-on text).
    pub failed: bool,
    /// The command that reruns this branch alone.
    pub reproduce: String,
    /// The console line the branch stopped at (with --until), e.g. a result it printed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until_line: Option<String>,
    /// The faults the branch applied by its end, in start order (left out when none): the
    /// snapshot's started ones and those of the branch's own future (drawn again from the
    /// snapshot's profile with this seed, so `reproduce` brings them back).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<Applied>,
    /// A world branch's faults between nodes drawn from its seed (the world's `[faults]`
    /// profile), in time order (left out when none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub world_faults: Vec<WorldFault>,
    /// The promises of the guest's programs with their verdicts in this seed (left out
    /// when none). The seed fails on a violated `always`; the others are judged across
    /// seeds (see [`Report::promises`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub promises: Vec<SeedPromise>,
    /// A guided exploration's branch (whose `seed` is then the branch's number): its path
    /// from the root snapshot (`wio run --from ROOT --path PATH`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The moment it started from (guided explorations; 0: the root snapshot).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moment: Option<u32>,
    /// A branch of a replayed host link's snapshot that left its tape: where and how (a
    /// simulated dependency standing in for the host answered it from there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub left_tape: Option<String>,
}

/// What an exploration was asked to do (shards of one exploration agree on it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Question {
    /// The snapshot file as given.
    pub snapshot: PathBuf,
    /// Its checksum: shards must explore the same snapshot.
    pub snapshot_sha256: String,
    /// The seed range.
    pub seeds: SeedRange,
    /// The branches' stop text (--until console:TEXT), if any.
    pub until: Option<String>,
    /// Texts reported when they appear.
    pub matches: Vec<String>,
    /// Texts that fail a seed.
    pub fail_on: Vec<String>,
    /// Virtual-time limit (ns since boot; 0 = none).
    pub max_virtual_ns: u64,
    /// The branches' CPU-timing noise level, when it was not the snapshot's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sched_noise: Option<SchedNoise>,
    /// A guided exploration's settings (then `seeds` is 0..budget: the branch numbers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guided: Option<guided::Search>,
    /// The seed whose branch ran first and taught the others its code (warm branches of a
    /// riscv64 machine snapshot; their reproduce lines say `--learn-from` it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub learn_from: Option<u64>,
}

/// A report: the question, which shards it covers, and the results by seed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Report {
    /// Report format version.
    pub format: u32,
    /// What was explored.
    pub question: Question,
    /// Shard count of the exploration and the shard indexes this report covers.
    pub shards: (u64, Vec<u64>),
    /// Whether every seed of those shards finished (false after Ctrl-C or a failure to start).
    pub complete: bool,
    /// Results in seed order.
    pub results: Vec<SeedResult>,
    /// Each promise over all seeds (see `promises::across`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub promises: Vec<Across>,
    /// A guided exploration's tree of moments and its growth.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tree: Option<guided::Tree>,
}

impl Report {
    /// Judges the promises over the results (after an exploration or a merge).
    pub fn judge_promises(&mut self) {
        self.promises = aggregate(
            self.results
                .iter()
                .map(|r| (r.seed, r.reproduce.as_str(), r.promises.as_slice())),
        );
    }

    /// Whether some promise failed over the exploration.
    pub fn promise_failed(&self) -> bool {
        self.promises.iter().any(|a| !a.passed)
    }
}

/// Format version of reports.
pub const REPORT_FORMAT: u32 = 1;

/// Writes `report` as JSON to `path` (atomically).
pub fn write_report(report: &Report, path: &Path) -> Result<()> {
    let text = serde_json::to_string_pretty(report).map_err(|source| WioError::Encode {
        what: "report",
        source,
    })?;
    let tmp = path.with_extension("json.partial");
    let out = |source| WioError::Output {
        what: "report",
        path: path.to_path_buf(),
        source,
    };
    std::fs::write(&tmp, text + "\n").map_err(out)?;
    std::fs::rename(&tmp, path).map_err(out)
}

/// Writes the promises' verdicts, and the failing seeds no violated promise explains, as
/// JUnit XML to `path`, naming the triage page `html` when one was drawn.
pub fn write_junit(report: &Report, path: &Path, html: Option<&Path>) -> Result<()> {
    let others: Vec<(u64, String, String)> = report
        .results
        .iter()
        .filter(|r| r.failed && !r.promises.iter().any(|p| p.status == Status::Violated))
        .map(|r| {
            let why = r
                .error
                .clone()
                .or_else(|| r.exit_status.map(|s| format!("guest exit status {s}")))
                .unwrap_or_else(|| format!("matched {}", r.matched.join(", ")));
            (r.seed, why, r.reproduce.clone())
        })
        .collect();
    let page = html.map(|h| h.display().to_string());
    let xml = across::junit(
        &report.promises,
        &others,
        report.results.len(),
        page.as_deref(),
    );
    std::fs::write(path, xml).map_err(|source| WioError::Output {
        what: "JUnit XML",
        path: path.to_path_buf(),
        source,
    })
}

/// Prints the results table to stdout: every seed when there are few, else the failing ones.
pub fn print_table(report: &Report) {
    let failing: Vec<&SeedResult> = report.results.iter().filter(|r| r.failed).collect();
    let shown: Vec<&SeedResult> = if report.results.len() <= 50 {
        report.results.iter().collect()
    } else {
        failing.clone()
    };
    if !shown.is_empty() {
        println!(
            "{:>12}  {:<6} {:>6}  {:>14}  {:<16}  matched / line stopped at",
            "seed", "ended", "status", "virtual s", "trace hash"
        );
    }
    for r in &shown {
        println!(
            "{:>12}  {:<6} {:>6}  {:>14.9}  {:<16}  {}{}",
            r.seed,
            r.ended,
            r.exit_status
                .map_or_else(|| "-".to_string(), |s| s.to_string()),
            r.virtual_ns as f64 / 1e9,
            &r.trace_hash[..r.trace_hash.len().min(16)],
            r.matched
                .iter()
                .chain(&r.until_line)
                .cloned()
                .collect::<Vec<_>>()
                .join(", "),
            if r.failed { "  FAILED" } else { "" }
        );
    }
    let distinct: std::collections::BTreeSet<&str> = report
        .results
        .iter()
        .map(|r| r.trace_hash.as_str())
        .collect();
    let left = report
        .results
        .iter()
        .filter(|r| r.left_tape.is_some())
        .count();
    println!(
        "{} seeds, {} failing, {} distinct traces{}{}",
        report.results.len(),
        failing.len(),
        distinct.len(),
        if left > 0 {
            format!("; {left} left the host link's tape (a simulated dependency answered from there: see left_tape in the report)")
        } else {
            String::new()
        },
        if report.complete { "" } else { " (incomplete)" }
    );
    print!("{}", across::table(&report.promises));
    for r in failing.iter().take(20) {
        println!("reproduce seed {}: {}", r.seed, r.reproduce);
        if !r.faults.is_empty() {
            println!("  with faults: {}", fault_list(&r.faults));
        }
        for f in &r.world_faults {
            println!(
                "  with {} {} from {:.3} s to {:.3} s",
                f.kind,
                f.what,
                f.from_ns as f64 / 1e9,
                f.until_ns as f64 / 1e9
            );
        }
    }
    if failing.len() > 20 {
        println!(
            "... {} more failing seeds in the report",
            failing.len() - 20
        );
    }
}

/// A short list of applied faults for the table: kind, target and start second.
fn fault_list(faults: &[Applied]) -> String {
    let label = |a: &Applied| {
        format!(
            "{} {:?}{}",
            a.fault.kind.name(),
            a.fault.target,
            a.node
                .as_ref()
                .map(|n| format!(" of node {n}"))
                .unwrap_or_default()
        )
        .to_lowercase()
    };
    let secs = |a: &Applied| a.fault.at_ns as f64 / 1e9;
    if faults.len() <= FAULTS_LISTED {
        return faults
            .iter()
            .map(|a| format!("{} at {:.3} s", label(a), secs(a)))
            .collect::<Vec<_>>()
            .join(", ");
    }
    // Many faults (a radiation profile draws hundreds): one entry per kind, target and
    // node, with its count and its first and last time; the report has every one.
    let mut groups: Vec<(String, usize, f64, f64)> = Vec::new();
    for a in faults {
        let (l, t) = (label(a), secs(a));
        match groups.iter_mut().find(|g| g.0 == l) {
            Some(g) => {
                g.1 += 1;
                g.2 = g.2.min(t);
                g.3 = g.3.max(t);
            }
            None => groups.push((l, 1, t, t)),
        }
    }
    groups
        .iter()
        .map(|(l, n, first, last)| format!("{n} x {l} from {first:.3} s to {last:.3} s"))
        .collect::<Vec<_>>()
        .join(", ")
        + " (every one in the report)"
}

/// How many faults a failing seed's line lists one by one before it groups them.
const FAULTS_LISTED: usize = 12;

/// Reads a report file.
pub fn read_report(path: &Path) -> Result<Report> {
    let text = std::fs::read_to_string(path).map_err(|source| WioError::ArtifactIo {
        what: "report",
        path: path.to_path_buf(),
        source,
    })?;
    let r: Report = serde_json::from_str(&text).map_err(|e| WioError::ArtifactFormat {
        what: "report",
        path: path.to_path_buf(),
        reason: format!("is not a wio explore report: {e}"),
    })?;
    if r.format != REPORT_FORMAT {
        return Err(WioError::ArtifactFormat {
            what: "report",
            path: path.to_path_buf(),
            reason: format!(
                "is report format {}; this wio reads {REPORT_FORMAT}",
                r.format
            ),
        });
    }
    r.check().map_err(|source| WioError::Report {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(r)
}

/// Joins shard reports of one exploration. Refuses reports of other explorations and
/// shards that disagree about a seed (which would mean a determinism failure); names the
/// shards that are missing (refused unless `allow_partial`, the result then marked
/// incomplete) and those given twice.
pub fn merge(paths: &[PathBuf], allow_partial: bool) -> Result<Report> {
    let mut merged: Option<Report> = None;
    let mut by_seed: BTreeMap<u64, SeedResult> = BTreeMap::new();
    // Which report brought each shard.
    let mut shard_from: BTreeMap<u64, &Path> = BTreeMap::new();
    for p in paths {
        let r = match read_report(p) {
            Ok(r) => r,
            // A shard whose task never wrote its report: named below as missing.
            Err(WioError::ArtifactIo { source, .. })
                if allow_partial && source.kind() == std::io::ErrorKind::NotFound =>
            {
                eprintln!("wio: {} does not exist: skipped", p.display());
                continue;
            }
            Err(e) => return Err(e),
        };
        if r.question.guided.is_some() {
            // Its branches depend on one another (each starts where an earlier one found
            // something): one search, never a shard of one.
            return Err(ExploreError::GuidedShard { path: p.clone() }.into());
        }
        match &mut merged {
            None => merged = Some(r.clone()),
            Some(m) => {
                if m.question != r.question || m.shards.0 != r.shards.0 {
                    return Err(ExploreError::OtherExploration { path: p.clone() }.into());
                }
                m.shards.1.extend(r.shards.1.iter().copied());
                m.complete &= r.complete;
            }
        }
        if !r.complete {
            eprintln!(
                "wio: {} is an incomplete shard report (interrupted?): its missing seeds stay missing",
                p.display()
            );
        }
        for shard in &r.shards.1 {
            if let Some(first) = shard_from.insert(*shard, p) {
                eprintln!(
                    "wio: shard {shard} is in {} and in {} (its seeds agree: they are merged once)",
                    first.display(),
                    p.display()
                );
            }
        }
        for res in r.results {
            if let Some(prev) = by_seed.get(&res.seed) {
                if prev.trace_hash != res.trace_hash {
                    return Err(WioError::Nondeterminism(NondeterminismError::SeedHashes {
                        seed: res.seed,
                        first: prev.trace_hash.clone(),
                        second: res.trace_hash,
                    }));
                }
            }
            by_seed.insert(res.seed, res);
        }
    }
    let mut m = merged.ok_or(ExploreError::NoReports)?;
    m.shards.1.sort_unstable();
    m.shards.1.dedup();
    let missing: Vec<u64> = (0..m.shards.0)
        .filter(|i| !shard_from.contains_key(i))
        .collect();
    if !missing.is_empty() {
        let list = missing
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        if !allow_partial {
            return Err(ExploreError::MissingShards {
                missing,
                count: m.shards.0,
            }
            .into());
        }
        eprintln!(
            "wio: shard(s) {list} of {} are missing: the merged report is partial",
            m.shards.0
        );
    }
    let expected: u64 = m.question.seeds.end - m.question.seeds.start;
    m.complete &= missing.is_empty() && by_seed.len() as u64 == expected;
    m.results = by_seed.into_values().collect();
    m.judge_promises();
    Ok(m)
}
