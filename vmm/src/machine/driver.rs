//! Runs a [`Machine`] of any architecture: a whole run (`wio run`: snapshots on the
//! way, `--until`, the time limit) or one branch of an exploration (a restore with
//! another seed, run to its end, its `until` text or its limit).
//!
//! Snapshots are taken between two steps of the machine, at the first step boundary
//! at or after the requested point (see `snapshot::plan`), so taking one changes nothing.

use super::{BranchEnd, LoadedSnapshot, Machine, RunConfig, RunResult, Stop};
use crate::error::{Result, WioError};
use crate::snapshot::plan::{SnapshotAt, SnapshotPlan};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;
use wio_clock::VirtualTime;

/// The snapshot point due now, if any, taken off the plan: the guest's request first
/// (when it made one), then a virtual time that has been reached, then a watched
/// console line that appeared. Returns why the snapshot is taken.
fn due_snapshot(
    plan: &mut SnapshotPlan,
    guest: Option<Option<u64>>,
    now: u64,
    m: &mut dyn Machine,
) -> Option<String> {
    if let Some(tag) = guest {
        if let Some(i) = plan.at.iter().position(|a| *a == SnapshotAt::Guest) {
            plan.at.remove(i);
            return Some(match tag {
                Some(tag) => format!("guest request (tag {tag})"),
                None => SnapshotAt::Guest.describe(),
            });
        }
    }
    if let Some(i) = plan
        .at
        .iter()
        .position(|a| matches!(a, SnapshotAt::Time(t) if now >= *t))
    {
        return Some(plan.at.remove(i).describe());
    }
    let console = m.console();
    if console.watch_hits.is_empty() {
        return None;
    }
    let text = console.watch_hits.remove(0);
    plan.at.retain(|a| *a != SnapshotAt::Console(text.clone()));
    Some(SnapshotAt::Console(text).describe())
}

/// Runs `m` to its end, taking the snapshots `cfg.snapshots` asks for on the way and
/// stopping at `cfg.until`'s console text. A snapshot that cannot be taken or written
/// ends the run with that error (the summary still comes).
pub fn run(mut m: Box<dyn Machine>, cfg: &RunConfig, wall: Instant) -> RunResult {
    let limit = VirtualTime::limit_or_max(cfg.max_virtual_ns);
    let mut plan = cfg.snapshots.clone();
    let mut taken = 0usize;
    let console = m.console();
    for at in &plan.at {
        if let SnapshotAt::Console(text) = at {
            console.watch.push(text.clone());
        }
    }
    if let Some(u) = &cfg.until {
        console.watch.push(u.clone());
    }
    let mut until_hit = None;
    let outcome = loop {
        let stop = m.run_until(limit);
        if let Some(u) = cfg.until.as_deref() {
            if m.console().take_hit(u) {
                until_hit = Some(u);
                break Ok(0);
            }
        }
        let guest = match stop {
            Stop::End(outcome) => break outcome,
            Stop::Limit => {
                break Err(WioError::TimeLimit {
                    limit_ns: cfg.max_virtual_ns,
                })
            }
            Stop::GuestSnapshot(tag) => Some(tag),
            Stop::Yield => None,
        };
        let now = m.now().as_ns();
        let Some(reason) = due_snapshot(&mut plan, guest, now, m.as_mut()) else {
            continue;
        };
        taken += 1;
        let path = plan.path(taken, m.seed(), now);
        let started = Instant::now();
        match m.snapshot(reason.clone()).and_then(|s| s.write(&path)) {
            Ok(bytes) => eprintln!(
                "wio: snapshot {} at {now} ns ({reason}): {} MiB in {} ms; restore with: wio run --from {}",
                path.display(),
                bytes >> 20,
                started.elapsed().as_millis(),
                path.display()
            ),
            Err(e) => break Err(e),
        }
    };
    m.finish(cfg, outcome, wall, until_hit)
}

/// Runs one branch: restores `l` with `seed` (hash-only trace, no console output, no
/// other outputs) and runs it to its end, to `until` (a console text), or to `limit_ns`
/// of virtual time (0: none). `watch` are console texts to report; `cancel` abandons the
/// branch (None is returned).
pub fn run_branch(
    l: &dyn LoadedSnapshot,
    seed: u64,
    until: Option<&str>,
    watch: &[String],
    limit_ns: u64,
    cancel: &AtomicBool,
) -> Result<Option<BranchEnd>> {
    let wall = Instant::now();
    let meta = l.meta();
    let cfg = RunConfig {
        mem_mib: meta.mem_bytes >> 20,
        epoch_unix: meta.epoch_unix,
        max_virtual_ns: limit_ns,
        from: Some(l.path().to_path_buf()),
        until: until.map(str::to_string),
        ..RunConfig::with_seed(seed)
    };
    let mut m = l.restore(&cfg, wall)?;
    let console = m.console();
    console.watch = watch.to_vec();
    if let Some(u) = until {
        console.watch.push(u.to_string());
    }
    let limit = VirtualTime::limit_or_max(limit_ns);
    let mut stopped_at_until = false;
    let outcome = loop {
        if cancel.load(Ordering::Relaxed) {
            return Ok(None);
        }
        match m.run_until(limit) {
            Stop::End(outcome) => break outcome,
            Stop::Limit => break Err(WioError::TimeLimit { limit_ns }),
            Stop::Yield | Stop::GuestSnapshot(_) => {}
        }
        if until.is_some_and(|u| m.console().watch_hits.iter().any(|h| h == u)) {
            stopped_at_until = true;
            break Ok(0);
        }
    };
    let mut matched: Vec<String> = m
        .console()
        .watch_hits
        .iter()
        .filter(|h| watch.contains(h))
        .cloned()
        .collect();
    matched.dedup();
    let end = m.finish(&cfg, outcome, wall, until.filter(|_| stopped_at_until));
    Ok(Some(BranchEnd {
        summary: end.summary,
        matched,
        stopped_at_until,
    }))
}
