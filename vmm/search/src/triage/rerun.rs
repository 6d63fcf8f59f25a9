//! Failing branches run again for the triage page: the first failing seed of each group
//! (at most [`MAX_TIMELINES`]) from the report's snapshot, as the exploration ran it, with
//! its timeline drawn (a world's, with the console around the failure; a single machine's,
//! `wio run --timeline`'s picture). A branch whose trace differs from the report's is not
//! drawn (the snapshot is not the one explored, or the run is not deterministic: said on
//! stderr, never hidden). Guided explorations get no timeline here.

use super::{model, Timeline};
use crate::explore::{Report, SeedResult};
use std::path::{Path, PathBuf};
use wio_machines::error::Result;
use wio_machines::machine::driver;
use wio_world as world;
use wio_world::snapshot::LoadedWorld;

/// Most branches run again for one page.
pub const MAX_TIMELINES: usize = 6;

/// Console lines shown around a failure.
const AROUND_BEFORE: usize = 12;
const AROUND_AFTER: usize = 3;

/// When the seed failed: its first violated promise's first false evaluation, else its
/// end.
fn failed_at(r: &SeedResult) -> u64 {
    r.promises
        .iter()
        .filter(|p| p.status == wio_machines::promises::Status::Violated)
        .filter_map(|p| p.first_failure_ns)
        .min()
        .unwrap_or(r.virtual_ns)
}

/// The console lines (node, quantum end, text) up to the failure at `at_ns` (the last
/// [`AROUND_BEFORE`] of them) and the [`AROUND_AFTER`] after it, `node | text`.
fn around(lines: &[(usize, u64, String)], at_ns: u64, names: &[String]) -> Vec<String> {
    let split = lines.partition_point(|(_, t, _)| *t <= at_ns);
    let from = split.saturating_sub(AROUND_BEFORE);
    let to = (split + AROUND_AFTER).min(lines.len());
    lines[from..to]
        .iter()
        .map(|(n, t, text)| {
            let name = names.get(*n).map_or("?", String::as_str);
            format!("{:>9} {name:>8} | {text}", super::page::secs(*t))
        })
        .collect()
}

/// Whether `sha256` is the explored snapshot's (else says so: no timeline is drawn).
fn same_snapshot(r: &Report, snap: &Path, sha256: &str) -> bool {
    let same = sha256 == r.question.snapshot_sha256;
    if !same {
        eprintln!(
            "wio: {} is not the snapshot the report explored (its sha256 differs): no timelines drawn",
            snap.display()
        );
    }
    same
}

/// Each group's first failing seed run again by `run` (its trace hash and timeline; None:
/// abandoned, which ends the drawing); a run whose trace differs from the report's is left
/// out with a warning.
fn draw_each(
    groups: &[(String, Vec<&SeedResult>)],
    mut run: impl FnMut(&SeedResult) -> Result<Option<(String, Timeline)>>,
) -> Result<Vec<Timeline>> {
    let mut out = Vec::new();
    for (key, seeds) in groups.iter().take(MAX_TIMELINES) {
        let Some(first) = seeds.first() else { continue };
        eprintln!("wio: drawing seed {}'s timeline ({key}) ...", first.seed);
        let Some((hash, timeline)) = run(first)? else {
            break;
        };
        if hash != first.trace_hash {
            eprintln!(
                "wio: warning: seed {} ran again with another trace ({hash} where the report has {}): its timeline is left out",
                first.seed, first.trace_hash
            );
            continue;
        }
        out.push(timeline);
    }
    Ok(out)
}

/// A machine exploration's timelines: each group's first failing seed run again from the
/// machine snapshot `snap` (`wio run --timeline`'s picture).
fn machine_timelines(
    r: &Report,
    snap: &Path,
    groups: &[(String, Vec<&SeedResult>)],
) -> Result<Vec<Timeline>> {
    let cfg = wio_machines::machine::RunConfig {
        from: Some(snap.to_path_buf()),
        seed_given: false,
        ..wio_machines::machine::RunConfig::with_seed(0)
    };
    let l = wio_machines::builder::load(snap, &cfg)?;
    if !same_snapshot(r, snap, l.sha256()) {
        return Ok(Vec::new());
    }
    let mut watch = r.question.matches.clone();
    watch.extend(r.question.fail_on.iter().cloned());
    let stop = std::sync::atomic::AtomicBool::new(false);
    let b = driver::BranchRun {
        until: r.question.until.as_deref(),
        watch: &watch,
        limit_ns: r.question.max_virtual_ns,
        sched_noise: r.question.sched_noise,
    };
    // Branches that started with the code the exploration's first branch taught (its
    // `learn_from`) run again the same way: from a copy of the snapshot taught by that
    // branch again; the teacher's own branch ran without.
    let taught = match r.question.learn_from {
        Some(teacher) => {
            let t = wio_machines::builder::load(snap, &cfg)?;
            driver::run_branch_as(t.as_ref(), teacher, &b, &stop, true)?;
            Some((teacher, t))
        }
        None => None,
    };
    draw_each(groups, |first| {
        let from = match &taught {
            Some((teacher, t)) if *teacher != first.seed => t,
            _ => &l,
        };
        let end = driver::run_branch_as(from.as_ref(), first.seed, &b, &stop, false)?;
        Ok(end.map(|end| {
            let timeline = Timeline {
                seed: first.seed,
                svg: wio_machines::timeline::svg(&end.summary),
                lines: Vec::new(),
            };
            (end.summary.trace_hash, timeline)
        }))
    })
}

/// A world exploration's timelines: each group's first failing seed run again from the
/// world snapshot `snap` (`wio sim --timeline`'s picture, and the console around the
/// failure).
fn world_timelines(
    r: &Report,
    snap: &Path,
    groups: &[(String, Vec<&SeedResult>)],
) -> Result<Vec<Timeline>> {
    let lw = LoadedWorld::load(snap)?;
    if !same_snapshot(r, snap, &lw.sha256) {
        return Ok(Vec::new());
    }
    let own = lw.state.scenario.max_virtual_ns;
    let opts = world::Options {
        quiet: true,
        jobs: 1,
        until: r.question.until.clone(),
        max_virtual_ns: Some(match r.question.max_virtual_ns {
            0 => own,
            x => own.min(x),
        }),
        sched_noise: r.question.sched_noise,
        keep_timeline: true,
        ..world::Options::default()
    };
    let names = lw.state.scenario.port_names();
    draw_each(groups, |first| {
        let Some(mut w) = world::restore(&lw, Some(first.seed), &opts, None)? else {
            return Ok(None);
        };
        let kept = w.timeline.take().unwrap_or_default();
        let timeline = Timeline {
            seed: first.seed,
            svg: kept.svg(&names, &w),
            lines: around(
                &kept.lines,
                failed_at(first).saturating_add(w.quantum_ns),
                &names,
            ),
        };
        Ok(Some((w.world_trace_hash, timeline)))
    })
}

/// The report's snapshot: as given, else beside the report.
fn snapshot_of(r: &Report, report_path: &Path) -> Option<PathBuf> {
    let given = &r.question.snapshot;
    if given.is_file() {
        return Some(given.clone());
    }
    let beside = report_path.parent()?.join(given.file_name()?);
    beside.is_file().then_some(beside)
}

/// The timelines of the first failing seed of each group, when the report is of a flat
/// exploration whose snapshot is still there (and still the same file).
pub fn timelines(r: &Report, report_path: &Path) -> Result<Vec<Timeline>> {
    let groups = model::failures(r);
    if groups.is_empty() {
        return Ok(Vec::new());
    }
    if r.question.guided.is_some() {
        eprintln!("wio: a guided exploration's branches are paths from its moments: no timelines drawn (wio sim --from SNAP --path PATH --timeline FILE draws one)");
        return Ok(Vec::new());
    }
    let Some(snap) = snapshot_of(r, report_path) else {
        eprintln!(
            "wio: the explored snapshot {} is not here: no timelines drawn",
            r.question.snapshot.display()
        );
        return Ok(Vec::new());
    };
    if LoadedWorld::is_world(&snap) {
        world_timelines(r, &snap, &groups)
    } else {
        machine_timelines(r, &snap, &groups)
    }
}
