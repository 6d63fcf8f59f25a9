//! A world exploration's seed results: the world's end and hash, every node's promises
//! judged together, faults named by node, and the `wio sim` line that reruns the seed.

use super::{shell_quote, Explore, SeedResult};
use wio_machines::faults::inject::Applied;
use wio_machines::promises::across::SeedPromise;
use wio_world as world;
use wio_world::snapshot::LoadedWorld;
use wio_world::WorldSummary;

/// One seed's result in a world exploration: the world's hash and end, every node's
/// promises judged together (a promise holds across the whole world, as in the
/// Antithesis SDK), every node's faults named by node, and the `wio sim` line that
/// reruns it (`how`: `--seed S`, or a guided branch's `--path P`, whose `seed` is then its
/// number).
pub(super) fn world_result_of(
    x: &Explore,
    lw: &LoadedWorld,
    seed: u64,
    w: WorldSummary,
    how: &str,
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
    // The world already judged its nodes' promises together.
    let promises: Vec<SeedPromise> = w.promises.iter().map(SeedPromise::of).collect();
    let failed = w.seed_failed() || w.matched.iter().any(|m| x.fail_on.contains(m));
    let mut reproduce = format!(
        "wio sim --from {} {how}",
        shell_quote(&x.from.to_string_lossy())
    );
    if let Some(u) = &x.until {
        reproduce.push_str(&format!(
            " --until {}",
            shell_quote(&format!("console:{u}"))
        ));
    }
    if let Some(level) = x.sched_noise {
        reproduce.push_str(&format!(" --sched-noise {}", level.name()));
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
        path: None,
        moment: None,
        left_tape: w.host.and_then(|h| h.left_tape),
    }
}

/// How a world branch runs: quiet, on one thread (an exploration runs branches side by
/// side), reporting `watch`, stopping at `--until`, to [`world_limit`].
pub(super) fn world_options(x: &Explore, lw: &LoadedWorld, watch: &[String]) -> world::Options {
    world::Options {
        quiet: true,
        jobs: 1,
        watch: watch.to_vec(),
        until: x.until.clone(),
        max_virtual_ns: Some(world_limit(x, lw)),
        sched_noise: x.sched_noise,
        ..world::Options::default()
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
