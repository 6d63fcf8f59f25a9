//! Faults: the explicit plan a run injects (`plan`), how it is drawn from the seed by a
//! profile (`profile`), and how a machine applies it at its virtual times (`inject`).

pub mod flux;

/// Whether virtual time `at` falls in one of `windows` ([from, until)), the windows in
/// which a world's test composer holds faults off (node faults here, the switch's in the
/// world).
pub fn in_quiet(windows: &[(u64, u64)], at: u64) -> bool {
    windows
        .iter()
        .any(|(from, until)| at >= *from && at < *until)
}
pub mod inject;
pub mod plan;
pub mod profile;

use crate::error::Result;
use crate::trace::Trace;
use inject::{Injector, Replaced};
use plan::{FaultPlan, Targets};
use profile::Profile;
use serde_json::json;
use wio_scheduler::RunSeed;

/// Where a run's fault plan comes from. On a restored run, `None` means "no flag given":
/// the snapshot's plan goes on (its future re-drawn when the seed changes and the plan
/// came from a profile); a profile or a plan replaces the snapshot's future faults.
#[derive(Debug, Clone, Default)]
pub enum FaultSource {
    /// No faults.
    #[default]
    None,
    /// Drawn from the seed by this profile (`--faults`).
    Profile(Profile),
    /// Exactly this plan (`--fault-plan`).
    Plan(FaultPlan),
}

impl FaultSource {
    /// The plan of a machine booted with `seed` that has the parts `has`: drawn by the
    /// profile, or the given plan checked against the machine's parts.
    pub fn plan(&self, seed: RunSeed, has: Targets) -> Result<FaultPlan> {
        match self {
            FaultSource::None => Ok(FaultPlan::default()),
            FaultSource::Profile(p) => Ok(p.draw(seed, has)),
            FaultSource::Plan(plan) => {
                plan.check_targets(has)?;
                Ok(plan.clone())
            }
        }
    }

    /// The profile plans are drawn from, if any. A profile without rules draws nothing
    /// whatever the seed, so it counts as none (a restore has nothing to re-draw).
    pub fn profile(&self) -> Option<&Profile> {
        match self {
            FaultSource::Profile(p) if !p.rules.is_empty() => Some(p),
            _ => None,
        }
    }

    /// The injector of a machine booted with `seed`: its plan and the profile it came from.
    pub fn injector(&self, seed: RunSeed, has: Targets) -> Result<Injector> {
        Ok(Injector::new(
            self.plan(seed, has)?,
            self.profile().cloned(),
        ))
    }
}

/// What a restore at `now_ns` does to the fault plan of its snapshot (`injector`), run
/// with `seed` (`reseeded`: another seed than the snapshot's) and `source` (the
/// restore's own `--faults`/`--fault-plan`, or none):
///
/// - no flag, same seed: nothing; the run continues the original bit for bit.
/// - no flag, another seed, a plan drawn from a profile: the faults still to come are
///   drawn again from that profile with the new seed. A profile's window is absolute
///   virtual time, so the whole plan is drawn and its faults starting after `now_ns`
///   are kept; a seed's future faults are a function of (snapshot, seed) alone.
/// - no flag, another seed, a plan given exactly (or none): the plan goes on as it is.
/// - `--faults PROFILE`: the future faults are drawn from PROFILE with `seed`, and
///   PROFILE is the one later restores re-draw from.
/// - `--fault-plan FILE`: the future faults are FILE's faults starting after `now_ns`.
///
/// Faults that started at or before `now_ns` always stay, with their pending ends
/// (what the guest already lives through is the shared past). When the plan changes,
/// the trace says so in a `fault-plan` line (how many faults were kept, dropped and
/// drawn) and the stale events are returned for the machine to replace.
pub fn on_restore(
    injector: &mut Injector,
    source: &FaultSource,
    seed: RunSeed,
    reseeded: bool,
    now_ns: u64,
    has: Targets,
    trace: &mut Trace,
) -> Result<Option<Replaced>> {
    let (future, profile, why) = match source {
        FaultSource::None => match injector.profile() {
            Some(p) if reseeded => (injector.draw(p, seed, has), Some(p.clone()), "reseed"),
            _ => return Ok(None),
        },
        FaultSource::Profile(_) => (
            source.plan(seed, has)?,
            source.profile().cloned(),
            "profile",
        ),
        FaultSource::Plan(_) => (source.plan(seed, has)?, None, "plan"),
    };
    let r = injector.replace_future(now_ns, &future, profile);
    trace_replaced(&r, now_ns, why, trace);
    Ok(Some(r))
}

/// A program in the guest declared its setup complete at `now_ns`: a plan drawn from a
/// profile counted from setup-complete gets its faults now, from the machine's `seed`
/// (traced as a `fault-plan` line). Returns the events to put in the machine's queue.
pub fn on_setup_complete(
    injector: &mut Injector,
    seed: RunSeed,
    now_ns: u64,
    has: Targets,
    trace: &mut Trace,
) -> Option<Replaced> {
    let r = injector.setup_complete(now_ns, seed, has)?;
    trace_replaced(&r, now_ns, "setup-complete", trace);
    Some(r)
}

fn trace_replaced(r: &Replaced, now_ns: u64, why: &str, trace: &mut Trace) {
    trace.event(
        now_ns,
        "fault-plan",
        json!({
            "why": why,
            "kept": r.kept,
            "dropped": r.dropped,
            "future": r.added(),
        }),
    );
}

#[cfg(test)]
mod tests {
    use super::inject::Phase;
    use super::plan::Fault;
    use super::*;

    const NOW: u64 = 20_000_000_000;
    const ALL: Targets = Targets {
        disk: true,
        node: true,
        ram: true,
    };

    /// A heavy-profile machine of seed 1 restored at `NOW` with `seed` (reseeded when it
    /// is not 1) and `source`: the injector after the restore and what was replaced.
    fn restored(seed: u64, source: &FaultSource) -> (Injector, Option<Replaced>, Trace) {
        let heavy = FaultSource::Profile(Profile::builtin("heavy").unwrap());
        let mut injector = heavy.injector(RunSeed(1), ALL).unwrap();
        let mut trace = Trace::new();
        let r = on_restore(
            &mut injector,
            source,
            RunSeed(seed),
            seed != 1,
            NOW,
            ALL,
            &mut trace,
        )
        .unwrap();
        (injector, r, trace)
    }

    fn split(faults: &[Fault]) -> (Vec<Fault>, Vec<Fault>) {
        faults.iter().partition(|f| f.at_ns <= NOW)
    }

    #[test]
    fn another_seed_redraws_only_the_faults_still_to_come() {
        let heavy = Profile::builtin("heavy").unwrap();
        let original = heavy.draw(RunSeed(1), ALL);
        let (past, old_future) = split(&original.faults);
        assert!(!past.is_empty() && !old_future.is_empty(), "{original:?}");

        let (a, r, trace) = restored(2, &FaultSource::None);
        let r = r.expect("a profile's future is re-drawn");
        let (kept, future) = split(&a.plan().faults);
        assert_eq!(kept, past, "started faults stay, at their indices");
        assert_eq!(r.kept, past.len());
        assert_eq!(r.dropped, old_future.len());
        let (_, drawn) = split(&heavy.draw(RunSeed(2), ALL).faults);
        assert_eq!(future, drawn, "the future is seed 2's draw after NOW");
        assert_eq!(r.added(), drawn.len());
        assert_eq!(a.profile(), Some(&heavy), "later restores re-draw from it");
        // The events are the new faults' edges only, with their new indices.
        assert!(r.events.iter().all(|(at, i, _)| *i >= r.kept && *at > NOW));
        let starts: Vec<(u64, usize)> = r
            .events
            .iter()
            .filter(|(_, _, p)| *p == Phase::Start)
            .map(|(at, i, _)| (*at, *i))
            .collect();
        let want: Vec<(u64, usize)> = future
            .iter()
            .enumerate()
            .map(|(i, f)| (f.at_ns, r.kept + i))
            .collect();
        assert_eq!(starts, want);
        assert_eq!(trace.lines(), 1, "one fault-plan line");

        // Deterministic per seed; another seed, another future.
        let (again, _, again_trace) = restored(2, &FaultSource::None);
        assert_eq!(again, a);
        assert_eq!(again_trace.hash_hex(), trace.hash_hex());
        let (b, _, _) = restored(3, &FaultSource::None);
        assert_eq!(split(&b.plan().faults).0, past);
        assert_ne!(split(&b.plan().faults).1, future);
    }

    #[test]
    fn the_same_seed_or_an_exact_plan_keeps_the_snapshots_plan() {
        let heavy = Profile::builtin("heavy").unwrap();
        let (same, r, trace) = restored(1, &FaultSource::None);
        assert!(r.is_none());
        assert_eq!(same.plan(), &heavy.draw(RunSeed(1), ALL));
        assert_eq!(trace.lines(), 0, "the continuation's trace is untouched");

        // A plan given exactly has no profile: another seed keeps it too.
        let plan = heavy.draw(RunSeed(1), ALL);
        let mut exact = FaultSource::Plan(plan.clone())
            .injector(RunSeed(1), ALL)
            .unwrap();
        assert_eq!(exact.profile(), None);
        let r = on_restore(
            &mut exact,
            &FaultSource::None,
            RunSeed(9),
            true,
            NOW,
            ALL,
            &mut Trace::new(),
        )
        .unwrap();
        assert!(r.is_none());
        assert_eq!(exact.plan(), &plan);
        // `--faults none` is no profile either.
        let none = FaultSource::Profile(Profile::builtin("none").unwrap());
        assert_eq!(none.injector(RunSeed(1), ALL).unwrap().profile(), None);
    }

    #[test]
    fn a_restores_own_profile_or_plan_replaces_the_future() {
        let heavy = Profile::builtin("heavy").unwrap();
        let (past, _) = split(&heavy.draw(RunSeed(1), ALL).faults);
        // --faults light on a restore with the snapshot's seed.
        let light = Profile::builtin("light").unwrap();
        let (l, r, _) = restored(1, &FaultSource::Profile(light.clone()));
        assert!(r.is_some());
        let (kept, future) = split(&l.plan().faults);
        assert_eq!(kept, past);
        assert_eq!(future, split(&light.draw(RunSeed(1), ALL).faults).1);
        assert_eq!(l.profile(), Some(&light));
        // --fault-plan: its faults after NOW; its past ones are the snapshot's business.
        let given = FaultPlan {
            faults: vec![
                Fault {
                    at_ns: NOW + 5,
                    duration_ns: 0,
                    target: plan::Target::Clock,
                    kind: plan::FaultKind::RtcStep { delta_s: 60 },
                },
                Fault {
                    at_ns: 1,
                    duration_ns: 10,
                    target: plan::Target::Net,
                    kind: plan::FaultKind::Net(plan::NetFault::Loss { ppm: 5 }),
                },
            ],
        };
        let (p, r, _) = restored(4, &FaultSource::Plan(given.clone()));
        let r = r.unwrap();
        assert_eq!(p.plan().faults[..r.kept], past[..]);
        assert_eq!(p.plan().faults[r.kept..], given.faults[..1]);
        assert_eq!(r.events, vec![(NOW + 5, r.kept, Phase::Start)]);
        assert_eq!(p.profile(), None, "a given plan is not re-drawn later");
    }
}

#[cfg(test)]
mod setup_tests {
    use super::profile::After;
    use super::*;

    #[test]
    fn a_profile_counted_from_setup_complete_draws_then_and_only_once() {
        let mut p = Profile::builtin("heavy").unwrap();
        p.after = After::SetupComplete;
        let has = Targets {
            disk: true,
            node: true,
            ram: true,
        };
        let source = FaultSource::Profile(p.clone());
        let mut i = source.injector(RunSeed(4), has).unwrap();
        assert!(
            i.plan().faults.is_empty(),
            "no fault before setup is complete"
        );
        let t = 7_000_000_000;
        let mut trace = Trace::new();
        let r = on_setup_complete(&mut i, RunSeed(4), t, has, &mut trace).unwrap();
        assert!(r.added() > 0);
        let shifted = p.draw_from(RunSeed(4), has, t);
        assert_eq!(
            i.plan(),
            &shifted,
            "the boot-relative draw moved to setup time"
        );
        assert!(i.plan().faults.iter().all(|f| f.at_ns >= t + 1_000_000_000));
        assert!(on_setup_complete(&mut i, RunSeed(4), t + 5, has, &mut trace).is_none());
        // A restore with another seed re-draws from the same origin.
        let r = on_restore(
            &mut i,
            &FaultSource::None,
            RunSeed(5),
            true,
            t + 10,
            has,
            &mut trace,
        )
        .unwrap()
        .unwrap();
        assert!(r.kept == 0 || i.plan().faults[..r.kept].iter().all(|f| f.at_ns <= t + 10));
        assert!(i.plan().faults.iter().all(|f| f.at_ns >= t));
        // A boot-relative profile ignores setup-complete.
        let mut b = FaultSource::Profile(Profile::builtin("light").unwrap())
            .injector(RunSeed(4), has)
            .unwrap();
        assert!(on_setup_complete(&mut b, RunSeed(4), t, has, &mut trace).is_none());
    }
}
