//! Guided exploration of worlds: a branch of a world snapshot (or of a world's moment)
//! that notes what its nodes see for the first time and keeps the whole world in memory
//! (every machine, the switch, the frames in flight, the peer) where that is new to the
//! exploration, at the quantum boundary that ends the quantum it was seen in.
//!
//! A world's moment is named as a machine's is: "the first quantum boundary at or after
//! `at_ns`" ([`wio_machines::machine::driver::Keeper`]). Quantum boundaries of a world strictly
//! increase, and a branch's boundaries are a function of its restore and seed, so a path's
//! replay ([`moment_at`]) stops at the very boundary the branch kept its moment at.
//! Restoring a moment with another seed re-keys it as restoring a world snapshot file does
//! (every node's streams, the switch, the future of the world's faults).

use super::snapshot::LoadedWorld;
use super::{restore_guided, Options, WorldSummary};
use std::sync::atomic::AtomicBool;
use wio_machines::error::{PathError, Result};
use wio_machines::machine::driver::{Keeper, Kept};
use wio_machines::machine::novelty::Mark;

/// How a guided branch of a world ended.
pub struct WorldGuidedEnd {
    /// The world's summary, as any world branch ends.
    pub summary: WorldSummary,
    /// The moments it kept, in time order.
    pub moments: Vec<Kept<LoadedWorld>>,
}

/// Runs one guided branch: `l` restored with `seed` as `opts` says (its nodes observing
/// `opts.observe`), keeping a moment wherever a quantum brought marks `known` does not
/// know (at most `max_moments`). None when abandoned (`cancel`, Ctrl-C or SIGTERM).
pub fn run_guided(
    l: &LoadedWorld,
    seed: u64,
    opts: &Options,
    known: &dyn Fn(&Mark) -> bool,
    max_moments: usize,
    cancel: &AtomicBool,
) -> Result<Option<WorldGuidedEnd>> {
    let mut keeper: Keeper<LoadedWorld> =
        Keeper::new(&opts.observe, known, max_moments, l.state.at_ns);
    let mut guide = |t: u64,
                     marks: Vec<Mark>,
                     keep: &mut dyn FnMut() -> Result<Option<LoadedWorld>>|
     -> Result<bool> {
        keeper.boundary(t, marks, || Ok(keep()?.map(Box::new)))?;
        Ok(true)
    };
    let Some(summary) = restore_guided(l, Some(seed), opts, Some(cancel), Some(&mut guide))? else {
        return Ok(None);
    };
    Ok(Some(WorldGuidedEnd {
        summary,
        moments: keeper.moments,
    }))
}

/// A step of a path through a world: restores `l` with `seed`, runs it to the first quantum
/// boundary at or after `at_ns`, and keeps the world's moment there (as [`run_guided`]
/// kept it). None when abandoned; a usage error when the world ends first or cannot be kept
/// there (the path does not fit the snapshot).
pub fn moment_at(
    l: &LoadedWorld,
    seed: u64,
    at_ns: u64,
    opts: &Options,
    cancel: &AtomicBool,
) -> Result<Option<LoadedWorld>> {
    let start_ns = l.state.at_ns;
    if at_ns <= start_ns {
        return Err(PathError::StepNotAfter { at_ns, start_ns }.into());
    }
    let mut kept: Option<Option<LoadedWorld>> = None;
    let mut guide = |t: u64,
                     _: Vec<Mark>,
                     keep: &mut dyn FnMut() -> Result<Option<LoadedWorld>>|
     -> Result<bool> {
        if t >= at_ns {
            kept = Some(keep()?);
            return Ok(false);
        }
        Ok(true)
    };
    let ended = restore_guided(l, Some(seed), opts, Some(cancel), Some(&mut guide))?;
    match (kept, ended) {
        (Some(Some(moment)), _) => Ok(Some(moment)),
        (Some(None), _) => Err(PathError::WorldNotKept { seed, at_ns }.into()),
        (None, None) => Ok(None),
        (None, Some(w)) => Err(PathError::WorldEnded {
            seed,
            ended_ns: w.virtual_ns,
            at_ns,
        }
        .into()),
    }
}
