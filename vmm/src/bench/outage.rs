//! `wio bench --outage`: one run of the payment world through a 46-minute bank outage
//! (images/payments/outage.toml: the four nodes of world.toml, the bank cut off from
//! 0.6 s for 2,760 virtual s, the audit at 2,800 s), seed 1, nodes on 2 threads. It
//! prints the wall time against the virtual time and, per node, the instructions it
//! executed and its share: where a long, mostly idle world spends the host's time.

use serde_json::json;
use std::path::Path;
use wio_machines::error::{BenchFailure, Result};
use wio_world::{self as world, scenario::Scenario};

/// The scenario (built into wio: it names only the built `payments` disk).
const WORLD: &str = include_str!("../../../images/payments/outage.toml");
/// The world's seed.
const SEED: u64 = 1;

/// Runs the outage world once; returns the figures as JSON.
pub(super) fn figures() -> Result<serde_json::Value> {
    let s = Scenario::parse_in(WORLD, Path::new(".")).map_err(|source| BenchFailure::World {
        which: "outage",
        source,
    })?;
    let opts = world::Options {
        quiet: true,
        jobs: 2,
        ..world::Options::default()
    };
    eprintln!(
        "bench: the payment world through a 46-minute bank outage (seed {SEED}, 2,800 virtual s)…"
    );
    let w = world::run(&s, SEED, &opts)?;
    let wall = w.wall_ns as f64 / 1e9;
    let virt = w.virtual_ns as f64 / 1e9;
    let total: u64 = w.nodes.iter().filter_map(|(_, n)| n.instructions).sum();
    println!(
        "outage world               {wall:>12.1} s wall for {virt:.0} virtual s ({:.1} virtual s per wall s; goal: under 72 s wall)",
        virt / wall
    );
    println!(
        "outage instructions        {:>12.2} G ({:.0} M per wall s)",
        total as f64 / 1e9,
        total as f64 / 1e6 / wall
    );
    let mut nodes = Vec::new();
    for (name, n) in &w.nodes {
        let insns = n.instructions.unwrap_or(0);
        let share = if total == 0 {
            0.0
        } else {
            insns as f64 / total as f64
        };
        // Host time running this node, and its instructions per second of that time.
        let ran = n.run_wall_ns.unwrap_or(0) as f64 / 1e9;
        println!(
            "outage node {name:<14} {:>12.2} G instructions ({:>5.1} %), idle {:.1} %, ran {ran:.1} s ({:.0} M per s)",
            insns as f64 / 1e9,
            share * 100.0,
            n.idle_ns as f64 / n.virtual_ns.max(1) as f64 * 100.0,
            if ran > 0.0 { insns as f64 / 1e6 / ran } else { 0.0 }
        );
        nodes.push(json!({ "name": name, "instructions": insns, "idle_ns": n.idle_ns, "virtual_ns": n.virtual_ns, "run_wall_ns": n.run_wall_ns }));
    }
    Ok(json!({
        "seed": SEED, "wall_s": wall, "virtual_s": virt, "instructions": total,
        "world_trace_hash": w.world_trace_hash, "exit_code": w.wio_exit_code, "nodes": nodes,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The built-in world is the payment world with one 46-minute partition that cuts the
    /// bank (node 0) off from the three others, ending before the audit and the limit.
    #[test]
    fn the_outage_world_cuts_the_bank_off_for_46_minutes_before_the_audit() {
        let s = Scenario::parse_in(WORLD, Path::new(".")).expect("outage.toml parses");
        let names: Vec<&str> = s.nodes.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["bank", "payments", "receipts", "client"]);
        assert!(s.faults.is_none(), "no drawn faults");
        let [p] = s.partitions.as_slice() else {
            panic!("one partition: {:?}", s.partitions);
        };
        assert_eq!(p.until_ns - p.from_ns, 46 * 60 * 1_000_000_000);
        assert!(p.until_ns < 2_800 * 1_000_000_000 && 2_800 * 1_000_000_000 < s.max_virtual_ns);
        assert!(!p.one_way);
        assert_ne!(p.group_of[0], p.group_of[1]);
        assert_eq!(p.group_of[1], p.group_of[2]);
        assert_eq!(p.group_of[2], p.group_of[3]);
    }
}
