//! A world exploration's seed results: the world's end and hash, every node's promises
//! judged together, faults named by node, and the `wio sim` line that reruns the seed.

use super::{shell_quote, Explore, SeedResult};
use crate::faults::inject::Applied;
use crate::promises::across::SeedPromise;
use crate::promises::Status;
use crate::world::snapshot::LoadedWorld;
use crate::world::WorldSummary;

/// One seed's result in a world exploration: the world's hash and end, every node's
/// promises judged together (a promise holds across the whole world, as in the
/// Antithesis SDK), every node's faults named by node, and the `wio sim` line that
/// reruns it.
pub(super) fn world_result_of(
    x: &Explore,
    lw: &LoadedWorld,
    seed: u64,
    w: WorldSummary,
) -> SeedResult {
    let error = w
        .nodes
        .iter()
        .find_map(|(name, s)| s.error.as_ref().map(|e| format!("node {name}: {e}")));
    let exit_status = if error.is_some() {
        None
    } else {
        Some(
            w.nodes
                .iter()
                .filter_map(|(_, s)| s.exit_status)
                .find(|st| *st != 0)
                .unwrap_or(0),
        )
    };
    let mut promises: Vec<SeedPromise> = Vec::new();
    for (_, n) in &w.nodes {
        for v in n.promises.iter().flat_map(|p| p.list.iter()) {
            let p = SeedPromise::of(v);
            match promises.iter_mut().find(|q| q.id == p.id) {
                Some(q) => q.merge(&p),
                None => promises.push(p),
            }
        }
    }
    promises.sort_by(|a, b| a.id.cmp(&b.id));
    let promise_error = w
        .nodes
        .iter()
        .all(|(_, s)| s.error.is_none() || s.wio_exit_code == crate::error::exit_code::PROMISE);
    let violated = promises.iter().any(|p| p.status == Status::Violated);
    let failed = (error.is_some() && !promise_error)
        || violated
        || exit_status.is_some_and(|st| st != 0)
        || w.matched.iter().any(|m| x.fail_on.contains(m));
    let mut reproduce = format!(
        "wio sim --from {} --seed {seed}",
        shell_quote(&x.from.to_string_lossy())
    );
    if let Some(u) = &x.until {
        reproduce.push_str(&format!(
            " --until {}",
            shell_quote(&format!("console:{u}"))
        ));
    }
    let limit = world_limit(x, lw);
    if limit != lw.state.scenario.max_virtual_ns {
        reproduce.push_str(&format!(" --max-virtual-secs {}", limit / 1_000_000_000));
    }
    let faults = w
        .nodes
        .iter()
        .flat_map(|(name, s)| {
            s.faults.iter().map(move |a| Applied {
                node: Some(name.clone()),
                ..a.clone()
            })
        })
        .collect();
    SeedResult {
        seed,
        ended: if w.until_line.is_some() {
            "until"
        } else if error.is_some() {
            "error"
        } else {
            "exit"
        }
        .into(),
        exit_status,
        error,
        matched: w.matched,
        virtual_ns: w.virtual_ns,
        trace_hash: w.world_trace_hash,
        failed,
        reproduce,
        until_line: w.until_line,
        faults,
        world_faults: w.faults,
        promises,
    }
}

/// A world branch's virtual-time limit: the scenario's, or explore's when smaller.
pub(super) fn world_limit(x: &Explore, lw: &LoadedWorld) -> u64 {
    let own = lw.state.scenario.max_virtual_ns;
    if x.max_virtual_ns > 0 {
        own.min(x.max_virtual_ns)
    } else {
        own
    }
}
