//! Several machines on one virtual clock: `wio sim SCENARIO.toml --seed N`.
//!
//! Each node of the scenario is a riscv64 machine whose virtio-net device is a port
//! ([`RunConfig::net_port`]); the world's switch joins the ports. Synchronization is
//! conservative: the quantum is the smallest link latency; every machine runs to the
//! next quantum boundary (riscv64 stops on an exact instruction count), then the frames
//! sent during the quantum are routed, each arriving at least one latency later, in
//! (time, source node, sequence) order, so nothing depends on the host's thread order.
//! Node i gets its own seed from the world's (`world/node/NAME`), so the nodes differ
//! and the world is a function of one seed.
//!
//! The world's trace hash chains a line per node (its name and its own trace hash) after
//! every delivered frame folded in: one seed, one world hash.

pub mod hosts;
pub mod scenario;
pub mod switch;

use crate::arch::riscv64::DEFAULT_CMDLINE;
use crate::error::Result;
use crate::faults::plan::FaultPlan;
use crate::faults::profile::Profile;
use crate::faults::FaultSource;
use crate::machine::RunConfig;
use crate::summary::Summary;
use crate::trace::{fnv1a, Trace};
use hosts::Hosts;
use scenario::Scenario;
use serde::Serialize;
use serde_json::json;
use std::path::Path;
use std::time::Instant;
use switch::{mac_of, Delivery, Switch, SwitchStats};
use wio_scheduler::RunSeed;
use wio_virtio_devices::Frame;

/// Trace fold tag of a delivered frame.
const FOLD_FRAME: u8 = 16;

/// What a world run reports.
#[derive(Debug, Serialize)]
pub struct WorldSummary {
    /// The world's seed.
    pub seed: u64,
    /// The world's trace hash (every node's trace and every delivered frame).
    pub world_trace_hash: String,
    /// The quantum, ns.
    pub quantum_ns: u64,
    /// Virtual ns when the last node ended (or the limit).
    pub virtual_ns: u64,
    /// Host wall time, ns (not part of any hash).
    pub wall_ns: u64,
    /// What the switch did.
    pub switch: SwitchStats,
    /// Each node's summary, by name.
    pub nodes: Vec<(String, Summary)>,
    /// The exit code of the world: 0 when every node's guest exited 0.
    pub wio_exit_code: i32,
}

/// Base64 (standard alphabet, padded) of `bytes`: a node's script on the kernel command line.
fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for c in bytes.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for k in 0..4 {
            if k <= c.len() {
                out.push(A[((n >> (18 - 6 * k)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Node `i`'s address.
pub fn ip_of(i: usize) -> String {
    format!("10.0.0.{}", i + 1)
}

/// The run configurations of the scenario's nodes under world seed `seed` (each node's
/// frames captured to `pcap_dir/NAME.pcap` when given).
fn node_configs(s: &Scenario, seed: u64, pcap_dir: Option<&Path>) -> Result<Vec<RunConfig>> {
    let hosts: Vec<String> = s
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| format!("{}:{}", n.name, ip_of(i)))
        .collect();
    s.nodes
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let node_seed = RunSeed(seed)
                .stream(&format!("world/node/{}", n.name))
                .next_u64();
            let faults = match &n.faults {
                None => FaultSource::None,
                Some(f) if f.ends_with(".json") => {
                    FaultSource::Plan(FaultPlan::read(std::path::Path::new(f))?)
                }
                Some(f) => FaultSource::Profile(Profile::from_arg(f)?),
            };
            Ok(RunConfig {
                faults,
                kernel: n.kernel.clone(),
                initrd: n.initrd.clone(),
                guest: n
                    .kernel
                    .is_none()
                    .then(|| n.guest.clone().unwrap_or_else(|| "small".into())),
                mem_mib: n.mem_mib,
                cmdline: Some(format!(
                    "{DEFAULT_CMDLINE} wio.node={} wio.ip={} wio.hosts={} wio.run={}",
                    n.name,
                    ip_of(i),
                    hosts.join(","),
                    base64(n.run.as_bytes())
                )),
                net_port: true,
                pcap: pcap_dir.map(|d| d.join(format!("{}.pcap", n.name))),
                mac: Some(mac_of(i)),
                capture_console: true,
                ..RunConfig::with_seed(node_seed)
            })
        })
        .collect()
}

/// Runs the world of `s` with `seed` on `jobs` host threads (the result does not depend
/// on how many); prints each node's console lines prefixed with its name unless `quiet`.
pub fn run(
    s: &Scenario,
    seed: u64,
    quiet: bool,
    jobs: usize,
    pcap_dir: Option<&Path>,
) -> Result<WorldSummary> {
    let wall = Instant::now();
    let quantum = s.quantum_ns();
    let names: Vec<String> = s.nodes.iter().map(|n| n.name.clone()).collect();
    let width = names.iter().map(String::len).max().unwrap_or(1);
    let mut trace = Trace::new();
    trace.event(
        0,
        "world",
        json!({ "seed": seed, "nodes": names, "quantum_ns": quantum }),
    );
    let mut hosts = Hosts::boot(&names, node_configs(s, seed, pcap_dir)?, jobs, wall)?;
    let mut switch = Switch::new(
        RunSeed(seed),
        s.links.clone(),
        s.partitions.clone(),
        s.degrades.clone(),
    );
    let mut alive = vec![true; names.len()];
    let mut parked: Vec<Option<u64>> = vec![None; names.len()];
    let mut t = 0u64;
    let mut deliveries: Vec<Delivery> = Vec::new();
    let mut pending: Vec<(usize, Frame)> = Vec::new();
    while alive.iter().any(|a| *a) && t < s.max_virtual_ns {
        // When every live machine is parked (idle at the last boundary, nothing to take
        // up) and no frame is on its way to one, nothing happens anywhere before the
        // earliest wake: skip to it.
        let wake = (0..names.len())
            .filter(|i| alive[*i])
            .map(|i| parked[i])
            .try_fold(u64::MAX, |w, p| p.map(|p| w.min(p)))
            .filter(|_| pending.is_empty());
        let next = t.saturating_add(quantum);
        t = match wake {
            Some(w) if w > next => w,
            _ => next,
        }
        .min(s.max_virtual_ns);
        let steps = hosts.run(t, std::mem::take(&mut pending))?;
        for step in steps {
            if !quiet {
                for line in &step.lines {
                    println!("{:>width$} | {line}", names[step.node]);
                }
            }
            alive[step.node] = !step.ended;
            parked[step.node] = step.parked;
            for frame in step.frames {
                switch.route(step.node, frame, &mut deliveries);
            }
        }
        // Frames of this quantum, in (arrival, source, sequence) order.
        deliveries.sort_by_key(|d| (d.at_ns, d.src, d.seq));
        for d in deliveries.drain(..) {
            if !alive[d.dst] {
                switch.stats.to_ended_nodes += 1;
                continue;
            }
            trace.fold(
                FOLD_FRAME,
                (d.src * 256 + d.dst) as u64,
                fnv1a(&d.bytes),
                d.at_ns,
            );
            switch.stats.delivered += 1;
            pending.push((
                d.dst,
                Frame {
                    at_ns: d.at_ns,
                    bytes: d.bytes,
                },
            ));
        }
    }
    let mut summaries = Vec::new();
    let mut code = 0;
    for (i, summary) in hosts.finish(s.max_virtual_ns)? {
        if code == 0 && summary.wio_exit_code != 0 {
            code = summary.wio_exit_code;
        }
        trace.event(
            summary.virtual_ns,
            "node",
            json!({ "name": names[i], "trace_hash": summary.trace_hash, "exit": summary.wio_exit_code }),
        );
        summaries.push((names[i].clone(), summary));
    }
    Ok(WorldSummary {
        seed,
        world_trace_hash: trace.hash_hex(),
        quantum_ns: quantum,
        virtual_ns: summaries
            .iter()
            .map(|(_, s)| s.virtual_ns)
            .max()
            .unwrap_or(0),
        wall_ns: wall.elapsed().as_nanos() as u64,
        switch: switch.stats,
        nodes: summaries,
        wio_exit_code: code,
    })
}

impl WorldSummary {
    /// The human summary.
    pub fn human(&self) -> String {
        let mut s = String::from("── wio sim summary ──\n");
        s.push_str(&format!("seed          {}\n", self.seed));
        s.push_str(&format!(
            "virtual time  {}.{:09} s (quantum {} µs)\n",
            self.virtual_ns / 1_000_000_000,
            self.virtual_ns % 1_000_000_000,
            self.quantum_ns / 1_000
        ));
        s.push_str(&format!(
            "wall time     {:.3} s\n",
            self.wall_ns as f64 / 1e9
        ));
        let w = &self.switch;
        s.push_str(&format!(
            "switch        {} frames sent, {} delivered, {} lost, {} duplicated, {} partitioned, {} on degraded links, {} to unknown addresses\n",
            w.sent, w.delivered, w.lost, w.duplicated, w.partitioned, w.degraded, w.unknown_destination
        ));
        for (name, n) in &self.nodes {
            s.push_str(&format!(
                "node {name:<8} {} at {}.{:09} s, trace {}\n",
                match (&n.exit_status, &n.error) {
                    (Some(st), _) => format!("exit {st}"),
                    (None, Some(e)) => format!("error: {e}"),
                    (None, None) => "stopped".into(),
                },
                n.virtual_ns / 1_000_000_000,
                n.virtual_ns % 1_000_000_000,
                &n.trace_hash[..16.min(n.trace_hash.len())]
            ));
            if n.restarts > 0 || !n.faults.is_empty() {
                s.push_str(&format!(
                    "              {} fault(s) applied, {} restart(s)\n",
                    n.faults.len(),
                    n.restarts
                ));
            }
            if let Some(p) = &n.promises {
                for line in p.human().lines() {
                    s.push_str(&format!("  {name:<8} {line}\n"));
                }
            }
        }
        s.push_str(&format!("world trace   {}\n", self.world_trace_hash));
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_standard() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"ping -c 3 b"), "cGluZyAtYyAzIGI=");
    }
}
