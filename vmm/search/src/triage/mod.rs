//! The triage page of an exploration (`wio report html`, `wio explore --html`): one
//! self-contained HTML file that opens offline in any browser, made from the exploration's
//! report, optionally compared with a baseline (an earlier exploration of the same service)
//! and with the timelines of failing world branches run again.
//!
//! It shows what was explored, every promise with its verdict (tagged New, Resolved,
//! Ongoing or Gone against the baseline, Rare when violated in under 1 % of the seeds),
//! a card per failing seed grouped by what broke (its reproduce line, faults, promise
//! details, and for the first failing seed of each group of a world exploration the
//! console around the failure and the timeline), how often each fault happened in failing
//! and in passing seeds, how many distinct behaviours the branches found as they ran, and
//! every seed in a table with filters and a search box. The seeds travel as compact JSON
//! drawn page by page by a small script, so a report of 100,000 seeds stays a few MB and
//! opens fast.

mod model;
pub mod page;
pub mod rerun;
mod svg;

use crate::explore::Report;
use std::path::{Path, PathBuf};
use wio_machines::error::{ExploreError, Result, WioError};

/// A failing branch run again for the page: its timeline and console.
#[derive(Debug, Clone)]
pub struct Timeline {
    /// The seed (the branch number of a guided exploration).
    pub seed: u64,
    /// The world timeline's SVG (`wio sim --timeline`).
    pub svg: String,
    /// Console lines around the failure, `node | line`.
    pub lines: Vec<String>,
}

/// What the exploration that wrote the report knew beyond it (`wio explore --html`).
#[derive(Debug, Clone)]
pub struct RunInfo {
    /// The host's name and processors.
    pub host: String,
    /// Wall seconds the exploration took.
    pub wall_s: f64,
}

/// A failing seed's minimal faults, from the plan `wio shrink` wrote beside the report.
#[derive(Debug, Clone)]
pub struct Shrunk {
    /// The seed.
    pub seed: u64,
    /// The plan's file name (`shrink-SEED.json`).
    pub file: String,
    /// Each fault, for people.
    pub faults: Vec<String>,
}

/// What the page shows besides the report.
#[derive(Debug, Clone, Default)]
pub struct Extras {
    /// The baseline report and its path.
    pub baseline: Option<(PathBuf, Report)>,
    /// Failing branches run again.
    pub timelines: Vec<Timeline>,
    /// Shrunk plans found beside the report.
    pub shrunk: Vec<Shrunk>,
    /// The exploration's own figures, when it is the one drawing the page.
    pub run: Option<RunInfo>,
}

/// Checks that `baseline` is an earlier exploration of the same service as `report`: when
/// both state promises, they share at least one.
pub fn check_baseline(
    report: &Report,
    report_path: &Path,
    baseline: &Report,
    baseline_path: &Path,
) -> Result<()> {
    let shared = report
        .promises
        .iter()
        .any(|a| baseline.promises.iter().any(|b| b.id == a.id));
    if report.promises.is_empty() || baseline.promises.is_empty() || shared {
        return Ok(());
    }
    Err(ExploreError::UnrelatedBaseline {
        baseline: baseline_path.to_path_buf(),
        report: report_path.to_path_buf(),
    }
    .into())
}

/// The page of `report` (read from `source`).
pub fn render(report: &Report, source: &str, extras: &Extras) -> String {
    page::html(report, source, extras)
}

/// Draws the page of `report` (read from `report_path`) to `out`, with the shrunk plans
/// beside the report and, when `timelines`, its failing branches run again; `baseline` and
/// `run` as the caller has them. Returns the page's size in bytes.
pub fn draw(
    report: &Report,
    report_path: &Path,
    out: &Path,
    baseline: Option<(PathBuf, Report)>,
    run: Option<RunInfo>,
    timelines: bool,
) -> Result<usize> {
    let extras = Extras {
        baseline,
        timelines: if timelines {
            rerun::timelines(report, report_path)?
        } else {
            Vec::new()
        },
        shrunk: shrunk_beside(report, report_path),
        run,
    };
    let html = render(report, &report_path.display().to_string(), &extras);
    write(out, &html)?;
    Ok(html.len())
}

/// Writes the page to `path` (through a temporary name, so a reader never sees half).
fn write(path: &Path, html: &str) -> Result<()> {
    let out = |source| WioError::Output {
        what: "triage page",
        path: path.to_path_buf(),
        source,
    };
    let tmp = path.with_extension("html.partial");
    std::fs::write(&tmp, html).map_err(out)?;
    std::fs::rename(&tmp, path).map_err(out)
}

/// The minimal plans `wio shrink` left beside the report (`shrink-SEED.json`, its default
/// name) for its failing seeds; a file there that is no world plan is named on stderr.
pub fn shrunk_beside(report: &Report, report_path: &Path) -> Vec<Shrunk> {
    let dir = report_path.parent().unwrap_or(Path::new("."));
    let mut out = Vec::new();
    for r in report.results.iter().filter(|r| r.failed) {
        let file = format!("shrink-{}.json", r.seed);
        let path = dir.join(&file);
        if !path.is_file() {
            continue;
        }
        match wio_world::faults::WorldPlan::read(&path) {
            Ok(plan) if plan.seed.is_none_or(|s| s == r.seed) => {
                let mut faults: Vec<String> = plan
                    .between
                    .iter()
                    .map(|w| {
                        format!(
                            "{} {} from {} to {}",
                            w.kind,
                            w.what,
                            page::secs(w.from_ns),
                            page::secs(w.until_ns)
                        )
                    })
                    .collect();
                for (node, p) in &plan.nodes {
                    faults.extend(p.faults.iter().map(|f| {
                        format!(
                            "{} on {node} from {} to {}",
                            f.kind.name(),
                            page::secs(f.at_ns),
                            page::secs(f.end_ns())
                        )
                    }));
                }
                out.push(Shrunk {
                    seed: r.seed,
                    file,
                    faults,
                });
            }
            Ok(_) => eprintln!("wio: {} is another seed's plan: left out", path.display()),
            Err(e) => eprintln!("wio: {e}: left out"),
        }
    }
    out
}

/// The host's name and processor count, for the page's header.
pub fn host() -> String {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "this host".into());
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    format!("{name}, {cores} processors")
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::explore::{Question, SeedRange, REPORT_FORMAT};

    pub(crate) fn report(results: Vec<crate::explore::SeedResult>) -> Report {
        let n = results.len() as u64;
        let mut r = Report {
            format: REPORT_FORMAT,
            question: Question {
                snapshot: PathBuf::from("s.snap"),
                snapshot_sha256: "ab".repeat(32),
                seeds: SeedRange { start: 0, end: n },
                until: None,
                matches: Vec::new(),
                fail_on: Vec::new(),
                max_virtual_ns: 0,
                sched_noise: None,
                guided: None,
                learn_from: None,
            },
            shards: (1, vec![0]),
            complete: true,
            results,
            promises: Vec::new(),
            tree: None,
        };
        r.judge_promises();
        r
    }

    #[test]
    fn a_page_escapes_report_text_and_keeps_its_data_in_one_element() {
        let mut bad = model::tests::seed(1, true, "</script><b>");
        bad.error = Some("boom <img src=x onerror=alert(1)>".into());
        let r = report(vec![model::tests::seed(0, false, "aa"), bad]);
        let html = render(&r, "r.json", &Extras::default());
        assert!(!html.contains("<img src=x"), "escaped");
        assert!(
            !html.contains("</script><b>"),
            "the data cannot close its element"
        );
        assert_eq!(
            html.matches("<script").count(),
            2,
            "the data and the script"
        );
        assert!(
            html.contains("id=\"seed-1\""),
            "a card for the failing seed"
        );
        assert!(html.contains("wio run --from s.snap --seed 1"));
    }
}
