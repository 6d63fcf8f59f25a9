//! `wio verify`: re-runs every failing seed of an exploration report, and every shrunk
//! plan, against a changed build (a world snapshot of the fixed images), under the same
//! conditions: the same seed and exactly the faults the failing run had (the report lists
//! them; a shrunk plan is them). Each comes back `fixed` (every promise holds, nothing else
//! fails; a `sometimes` promise the failing run did not meet either is said, not counted:
//! one seed need not reach every rare state) or `still failing`, with the promises that
//! fail now.
//!
//! A guided exploration's failing branch is a path: its steps are replayed on the fixed
//! build's snapshot (the same seeds, each to the same virtual time), then its last seed runs
//! with the faults the failing branch had from its last moment on.

use crate::explore::path::{world_steps, BranchPath};
use crate::explore::Report;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use wio_machines::error::{Result, ShrinkError, WioError};
use wio_machines::faults::plan::FaultPlan;
use wio_machines::promises::Status;
use wio_world as world;
use wio_world::faults::WorldPlan;
use wio_world::snapshot::LoadedWorld;

/// What to verify.
pub struct Verify {
    /// The world snapshot of the fixed build.
    pub from: PathBuf,
    /// Reports whose failing seeds are re-run.
    pub reports: Vec<PathBuf>,
    /// Shrunk plans (each with its seed) re-run.
    pub plans: Vec<PathBuf>,
    /// Worker threads.
    pub jobs: usize,
}

/// One case: a seed (or a guided branch's path, and how its steps run), its faults, and
/// what failed before.
struct Case {
    what: String,
    seed: u64,
    path: Option<(BranchPath, world::Options)>,
    /// The exploration's CPU-timing noise (None: the snapshot's).
    sched_noise: Option<wio_machines::machine::noise::SchedNoise>,
    plan: WorldPlan,
    before: Vec<String>,
}

fn cases(v: &Verify) -> Result<Vec<Case>> {
    let mut out = Vec::new();
    for path in &v.reports {
        let r: Report = crate::explore::read_report(path)?;
        for res in r.results.iter().filter(|r| r.failed) {
            let mut nodes: Vec<(String, FaultPlan)> = Vec::new();
            for a in &res.faults {
                let Some(name) = &a.node else {
                    return Err(ShrinkError::SingleMachine { path: path.clone() }.into());
                };
                match nodes.iter_mut().find(|(n, _)| n == name) {
                    Some((_, p)) => p.faults.push(a.fault),
                    None => nodes.push((
                        name.clone(),
                        FaultPlan {
                            faults: vec![a.fault],
                        },
                    )),
                }
            }
            let mut before: Vec<String> = res
                .promises
                .iter()
                .filter(|p| p.status != Status::Passed)
                .map(|p| p.message.clone())
                .collect();
            if before.is_empty() {
                before.push(
                    res.error
                        .clone()
                        .unwrap_or_else(|| format!("ended {}", res.ended)),
                );
            }
            let q = &r.question;
            let branch = match &res.path {
                Some(p) => Some((
                    BranchPath::parse(p)?,
                    world_steps(q.until.clone(), q.max_virtual_ns, q.sched_noise),
                )),
                None => None,
            };
            out.push(Case {
                what: format!(
                    "{} {} {}",
                    path.display(),
                    if branch.is_some() { "branch" } else { "seed" },
                    res.seed
                ),
                seed: branch.as_ref().map_or(res.seed, |(p, _)| p.seed),
                path: branch,
                sched_noise: q.sched_noise,
                plan: WorldPlan {
                    between: res.world_faults.clone(),
                    nodes,
                    ..WorldPlan::default()
                },
                before,
            });
        }
    }
    for path in &v.plans {
        let plan = WorldPlan::read(path)?;
        let seed = plan
            .seed
            .ok_or_else(|| ShrinkError::NoSeed { path: path.clone() })?;
        let branch = match &plan.path {
            Some(p) => Some((
                BranchPath::parse(p)?,
                world_steps(
                    plan.until.clone(),
                    plan.max_virtual_ns.unwrap_or(0),
                    plan.sched_noise,
                ),
            )),
            None => None,
        };
        out.push(Case {
            what: match &branch {
                Some((p, _)) => format!("{} (path {p})", path.display()),
                None => format!("{} (seed {seed})", path.display()),
            },
            seed,
            path: branch,
            sched_noise: plan.sched_noise,
            before: plan.promise.iter().cloned().collect(),
            plan,
        });
    }
    Ok(out)
}

/// Re-runs the cases; prints each verdict; returns the exit code (0: every case fixed).
pub fn verify(v: &Verify) -> Result<i32> {
    let lw = LoadedWorld::load(&v.from)?;
    let cases = cases(v)?;
    if cases.is_empty() {
        return Err(ShrinkError::NothingToVerify.into());
    }
    say_dropped_faults(&cases, lw.state.at_ns);
    eprintln!(
        "wio: verifying {} failing case(s) against {} on {} workers",
        cases.len(),
        v.from.display(),
        v.jobs
    );
    let results = wio_machines::pool::map_in_order(&cases, v.jobs, |c| run_case(c, &lw))?;
    let still = cases
        .iter()
        .zip(results)
        .filter(|(c, w)| !judge(c, w))
        .count();
    println!(
        "{} of {} case(s) fixed{}",
        cases.len() - still,
        cases.len(),
        if still > 0 { "" } else { ": the fix holds" }
    );
    Ok(if still > 0 {
        wio_machines::error::exit_code::PROMISE
    } else {
        0
    })
}

/// Says, per case without a path, how many of its faults began before the fixed build's
/// snapshot at `at` ns: those cannot be replayed from it and are left out (a path's
/// earlier faults come back with its steps).
fn say_dropped_faults(cases: &[Case], at: u64) {
    for c in cases.iter().filter(|c| c.path.is_none()) {
        let dropped = c
            .plan
            .between
            .iter()
            .filter(|f| f.exact.start_ns() < at)
            .count();
        if dropped > 0 {
            eprintln!(
                "wio: {}: {dropped} fault(s) began before the fixed build's snapshot ({at} ns) and are left out",
                c.what
            );
        }
    }
}

/// One case on the fixed build: its path's steps replayed to their last moment, then its
/// seed with the faults from there on.
fn run_case(c: &Case, lw: &LoadedWorld) -> Result<world::WorldSummary> {
    let moment = match &c.path {
        Some((path, steps)) => path.last_world_moment(lw, steps, &AtomicBool::new(false))?,
        None => None,
    };
    let start = moment.as_ref().unwrap_or(lw);
    // The faults from where the run starts (a path's last moment: those before came
    // with its steps).
    let mut plan = c.plan.clone();
    plan.keep_from(start.state.at_ns);
    let opts = world::Options {
        quiet: true,
        jobs: 1,
        plan: Some(plan),
        sched_noise: c.sched_noise,
        ..world::Options::default()
    };
    world::restore(start, Some(c.seed), &opts, None)?.ok_or(WioError::NoResult {
        what: "a verify run",
    })
}

/// Whether the case is fixed by run `w`; prints its verdict line. What counts against the
/// fix: a promise that does not hold now, unless it is a `sometimes` promise this case did
/// not meet before either (one seed need not reach every rare state; explorations judge
/// those across seeds). Such ones are said.
fn judge(c: &Case, w: &world::WorldSummary) -> bool {
    let (as_before, now): (Vec<_>, Vec<_>) = w
        .promises
        .iter()
        .filter(|p| p.status != Status::Passed)
        .partition(|p| {
            p.promise.kind == wio_machines::promises::Kind::Sometimes
                && c.before.contains(&p.promise.message)
        });
    let show = |list: &[&wio_machines::promises::report::Verdict]| {
        list.iter()
            .map(|p| format!("{} {:?}", p.status.name(), p.promise.message))
            .collect::<Vec<_>>()
    };
    let (as_before, now) = (show(&as_before), show(&now));
    // A run whose only failed promises are those carries the promise exit code.
    let ended_well = w.wio_exit_code == 0
        || (w.wio_exit_code == wio_machines::error::exit_code::PROMISE && !as_before.is_empty());
    let fixed = ended_well && now.is_empty();
    println!(
        "{:<14} {}: was {}; {}",
        if fixed { "fixed" } else { "STILL FAILING" },
        c.what,
        c.before
            .iter()
            .map(|b| format!("{b:?}"))
            .collect::<Vec<_>>()
            .join(", "),
        if fixed && as_before.is_empty() {
            format!(
                "every promise holds (world trace {})",
                &w.world_trace_hash[..16]
            )
        } else if fixed {
            format!(
                "every promise holds but {}, as before (world trace {})",
                as_before.join(", "),
                &w.world_trace_hash[..16]
            )
        } else if now.is_empty() {
            format!("ends with exit code {}", w.wio_exit_code)
        } else {
            format!("now {}", now.join(", "))
        }
    );
    fixed
}
