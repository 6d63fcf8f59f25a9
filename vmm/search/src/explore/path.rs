//! Paths: how a branch of a guided exploration is named and reproduced. A branch starts
//! at the root snapshot and passes through moments; each step is "restore with this seed,
//! run to the first step boundary at or after this virtual time, keep the moment", and
//! the last step is a seed run to the end. As text: `SEED@NS,SEED@NS,...,SEED`, e.g.
//! `17@2140000000,5@2161234567,90`; a path of one seed is a flat branch.
//!
//! `wio run --from ROOT --path P` replays it bit for bit (the same trace hash as the
//! exploration reported), because every step is a restore with another seed exactly as
//! the exploration did it, and a moment is named by a rule both sides follow
//! (`machine::driver::run_guided` and `moment_at`).

use std::fmt;
use std::sync::atomic::AtomicBool;
use wio_machines::error::{exit_code, PathError, PathSyntax, Result, WioError};
use wio_machines::machine::driver::{moment_observed, BranchRun};
use wio_machines::machine::novelty::Signal;
use wio_machines::machine::LoadedSnapshot;
use wio_world as world;
use wio_world::snapshot::LoadedWorld;

/// Most steps a path may have (a guided exploration never goes deeper).
pub const MAX_STEPS: usize = 64;

/// One step through a moment: the seed the step ran with, and the moment's time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Step {
    /// The seed the step's branch ran with.
    pub seed: u64,
    /// The moment: the first step boundary at or after this virtual time.
    pub at_ns: u64,
}

/// A branch from the root snapshot: steps through moments, then its own seed.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct BranchPath {
    /// The moments it passes through, in time order.
    pub steps: Vec<Step>,
    /// The seed it runs with from its last moment (or the root) to its end.
    pub seed: u64,
}

impl BranchPath {
    /// The path through this branch's moment at `at_ns`, then `seed` from there.
    pub fn child(&self, at_ns: u64, seed: u64) -> BranchPath {
        let mut steps = self.steps.clone();
        steps.push(Step {
            seed: self.seed,
            at_ns,
        });
        BranchPath { steps, seed }
    }

    /// Parses `SEED@NS,...,SEED` (the form [`fmt::Display`] writes).
    pub fn parse(text: &str) -> Result<BranchPath> {
        let bad = |why| -> WioError {
            PathError::Syntax {
                text: text.to_string(),
                why,
            }
            .into()
        };
        let parts: Vec<&str> = text.split(',').map(str::trim).collect();
        if parts.len() > MAX_STEPS + 1 {
            return Err(bad(PathSyntax::TooManySteps { max: MAX_STEPS }));
        }
        let number = |s: &str, what: &'static str| -> Result<u64> {
            s.parse::<u64>().map_err(|_| {
                bad(PathSyntax::NotANumber {
                    what,
                    text: s.to_string(),
                })
            })
        };
        let (last, through) = parts.split_last().ok_or_else(|| bad(PathSyntax::Empty))?;
        let mut steps = Vec::with_capacity(through.len());
        for p in through {
            let (seed, at) = p.split_once('@').ok_or_else(|| {
                bad(PathSyntax::NoTime {
                    step: p.to_string(),
                })
            })?;
            let step = Step {
                seed: number(seed, "seed")?,
                at_ns: number(at, "virtual time")?,
            };
            if steps.last().is_some_and(|s: &Step| s.at_ns >= step.at_ns) {
                return Err(bad(PathSyntax::TimesNotIncreasing {
                    before: steps.last().map_or(0, |s: &Step| s.at_ns),
                    after: step.at_ns,
                }));
            }
            steps.push(step);
        }
        if last.contains('@') {
            return Err(bad(PathSyntax::LastHasTime));
        }
        Ok(BranchPath {
            steps,
            seed: number(last, "seed")?,
        })
    }

    /// Runs the path's steps from `root` to its last moment, which is returned (None when
    /// abandoned by `cancel` or a signal; `root` itself is not returned: a path without
    /// steps needs no moment, see [`BranchPath::steps`]). A step whose run ends before its
    /// moment is a one-line error (the path does not fit this snapshot).
    pub fn last_moment(
        &self,
        root: &dyn LoadedSnapshot,
        b: &BranchRun,
        cancel: &AtomicBool,
    ) -> Result<Option<Box<dyn LoadedSnapshot>>> {
        self.last_moment_observed(root, b, &[], cancel)
    }

    /// [`BranchPath::last_moment`], observing `signals` on the way (see
    /// `machine::driver::moment_observed`).
    pub fn last_moment_observed(
        &self,
        root: &dyn LoadedSnapshot,
        b: &BranchRun,
        signals: &[Signal],
        cancel: &AtomicBool,
    ) -> Result<Option<Box<dyn LoadedSnapshot>>> {
        self.walk(|at: Option<&Box<dyn LoadedSnapshot>>, step| {
            let from = at.map_or(root, |m| m.as_ref());
            moment_observed(from, step.seed, step.at_ns, b, signals, cancel)
        })
    }

    /// [`BranchPath::last_moment`] of a world snapshot: the steps run as `opts` says (an
    /// exploration's branch options, with the signals it observed), each keeping the
    /// world's moment at its step (`world::guided::moment_at`). None for a path without
    /// steps (its branch starts at `root`); abandoned by `cancel`, Ctrl-C or SIGTERM, it is
    /// `WioError::Interrupted`.
    pub fn last_world_moment(
        &self,
        root: &LoadedWorld,
        opts: &world::Options,
        cancel: &AtomicBool,
    ) -> Result<Option<LoadedWorld>> {
        let last = self.walk(|at: Option<&LoadedWorld>, step| {
            world::guided::moment_at(at.unwrap_or(root), step.seed, step.at_ns, opts, cancel)
        })?;
        if last.is_none() && !self.steps.is_empty() {
            return Err(WioError::Interrupted(root.state.at_ns));
        }
        Ok(last)
    }

    /// Runs the path's steps in order, each with `step` from the last one's moment (None:
    /// the root) to its own; the last moment (None without steps, or when a step was
    /// abandoned). A step that does not fit is named in the error.
    fn walk<M>(
        &self,
        mut step: impl FnMut(Option<&M>, &Step) -> Result<Option<M>>,
    ) -> Result<Option<M>> {
        let mut at: Option<M> = None;
        for (i, s) in self.steps.iter().enumerate() {
            match step(at.as_ref(), s) {
                Ok(Some(m)) => at = Some(m),
                Ok(None) => return Ok(None),
                // A step's usage error (its run ended before its moment, ...) names the step.
                Err(e) if e.exit_code() == exit_code::USAGE => {
                    return Err(PathError::Step {
                        step: i + 1,
                        path: self.to_string(),
                        source: Box::new(e),
                    }
                    .into())
                }
                Err(e) => return Err(e),
            }
        }
        Ok(at)
    }
}

/// How a world path's steps run when it is replayed outside its exploration (`wio sim
/// --path`, shrink, verify): quiet, on one thread, to the exploration's `--until`, limit
/// (ns; 0: the scenario's) and CPU-timing noise, as its branches ran.
pub fn world_steps(
    until: Option<String>,
    max_virtual_ns: u64,
    sched_noise: Option<wio_machines::machine::noise::SchedNoise>,
) -> world::Options {
    world::Options {
        quiet: true,
        jobs: 1,
        until,
        max_virtual_ns: (max_virtual_ns > 0).then_some(max_virtual_ns),
        sched_noise,
        ..world::Options::default()
    }
}

/// `SEED@NS`, as a path writes each step.
impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@{}", self.seed, self.at_ns)
    }
}

impl fmt::Display for BranchPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for s in &self.steps {
            write!(f, "{s},")?;
        }
        write!(f, "{}", self.seed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_read_what_they_write_and_refuse_nonsense() {
        let p = BranchPath::parse("17@2140000000,5@2161234567,90").unwrap();
        assert_eq!(p.steps.len(), 2);
        assert_eq!(p.seed, 90);
        assert_eq!(p.to_string(), "17@2140000000,5@2161234567,90");
        assert_eq!(BranchPath::parse(&p.to_string()).unwrap(), p);
        let flat = BranchPath::parse("3").unwrap();
        assert!(flat.steps.is_empty());
        let c = flat.child(10, 4).child(20, 5);
        assert_eq!(c.to_string(), "3@10,4@20,5");
        for bad in [
            "",
            "x",
            "1@2",
            "1@,2",
            "@5,2",
            "1@5,2@5,3",
            "1@9,2@5,3",
            "1@5,,3",
            "-1",
            "1@5@6,2",
        ] {
            let e = BranchPath::parse(bad).unwrap_err().to_string();
            assert!(e.contains("--path"), "{bad}: {e}");
        }
        let long = vec!["1@1"; MAX_STEPS + 1].join(",") + ",2";
        assert!(BranchPath::parse(&long).is_err());
    }
}
