//! What a world run reports: the world's seed and trace hash, the switch, every node's
//! summary, the faults between nodes, the promises judged together; and its human form.

use super::dependency::DependencyStats;
use super::faults::WorldFault;
use super::peer::PeerStats;
use super::switch::SwitchStats;
use serde::Serialize;
use wio_machines::promises::report::Verdict;
use wio_machines::promises::Status;
use wio_machines::summary::Summary;

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
    /// The seccomp sandbox's state (`wio_machines::sandbox::describe`; host side, not hashed).
    pub sandbox: &'static str,
    /// Host wall time until every machine was booted or restored, ns (for a restore:
    /// the world branch's creation latency).
    pub start_wall_ns: u64,
    /// What the switch did.
    pub switch: SwitchStats,
    /// Each node's summary, by name.
    pub nodes: Vec<(String, Summary)>,
    /// The exit code of the world: 0 when every node's guest exited 0.
    pub wio_exit_code: i32,
    /// The world snapshot it was restored from, if it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub restored_from: Option<WorldOrigin>,
    /// Watched console texts that appeared (explore's `--match` and `--fail-on`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub matched: Vec<String>,
    /// The line (`NODE | text`) that ended the world at its `until` text, if one did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub until_line: Option<String>,
    /// The faults between nodes its `[faults]` profile drew and that started, in time order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<WorldFault>,
    /// What the external service did, when the world has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peer: Option<PeerStats>,
    /// What the host link did (`--net host`), when there was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<crate::hostlink::HostStats>,
    /// What each simulated dependency did (`[[dependency]]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dependencies: Vec<DependencyStats>,
    /// The promises of every node's programs, judged together (with the test composer's
    /// "test command T/N exits 0" properties).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub promises: Vec<Verdict>,
    /// What the test composer ran, when the world has image nodes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub composer: Option<super::composer::ComposerReport>,
    /// What a timeline draws (frames, drops, every node's console lines), when the run
    /// was asked to keep it (`Options::keep_timeline`; not in the summary's JSON).
    #[serde(skip)]
    pub timeline: Option<Timeline>,
}

/// What a run's timeline draws besides its summary (`timeline.rs` draws it).
#[derive(Debug, Clone, Default)]
pub struct Timeline {
    /// Delivered frames: (src, dst, sent ns, arrived ns).
    pub frames: Vec<(usize, usize, u64, u64)>,
    /// Dropped copies.
    pub drops: Vec<super::switch::Dropped>,
    /// Console lines: (node, virtual ns of the quantum's end, text).
    pub lines: Vec<(usize, u64, String)>,
}

/// Where a restored world came from.
#[derive(Debug, Clone, Serialize)]
pub struct WorldOrigin {
    /// The world snapshot file.
    pub path: String,
    /// Its quantum boundary, virtual ns.
    pub virtual_ns: u64,
    /// The seed of the world that took it.
    pub seed: u64,
}

impl WorldSummary {
    /// Whether the world failed as `wio explore` judges a seed: an `always` promise
    /// violated, a node's error, a non-zero guest status (a `sometimes` or must-reach
    /// promise is judged across seeds, not in one).
    pub fn seed_failed(&self) -> bool {
        self.promises.iter().any(|v| v.status == Status::Violated)
            || self
                .nodes
                .iter()
                .any(|(_, s)| s.error.is_some() || s.exit_status.is_some_and(|x| x != 0))
    }

    /// The human summary.
    pub fn human(&self) -> String {
        let mut s = String::from("── wio sim summary ──\n");
        s.push_str(&format!("seed          {}\n", self.seed));
        if let Some(r) = &self.restored_from {
            s.push_str(&format!(
                "restored from {} (at {} ns, seed {})\n",
                r.path, r.virtual_ns, r.seed
            ));
        }
        if let Some(line) = &self.until_line {
            s.push_str(&format!("stopped at    {line}\n"));
        }
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
        s.push_str(&format!("sandbox       {}\n", self.sandbox));
        let w = &self.switch;
        s.push_str(&format!(
            "switch        {} frames sent, {} delivered, {} lost, {} duplicated, {} partitioned, {} on degraded links, {} to unknown addresses\n",
            w.sent, w.delivered, w.lost, w.duplicated, w.partitioned, w.degraded, w.unknown_destination
        ));
        for (name, n) in &self.nodes {
            s.push_str(&format!(
                "node {name:<8} {} at {}.{:09} s, trace {}{}\n",
                match (&n.exit_status, &n.error) {
                    (Some(st), _) => format!("exit {st}"),
                    (None, Some(e)) => format!("error: {e}"),
                    (None, None) => "stopped".into(),
                },
                n.virtual_ns / 1_000_000_000,
                n.virtual_ns % 1_000_000_000,
                &n.trace_hash[..16.min(n.trace_hash.len())],
                // Which node bounds the world's wall time (host time, never hashed).
                n.run_wall_ns.map_or_else(String::new, |ns| format!(
                    ", ran {:.3} s of wall time",
                    ns as f64 / 1e9
                ))
            ));
            if n.restarts > 0 || !n.faults.is_empty() {
                s.push_str(&format!(
                    "              {} fault(s) applied, {} restart(s)\n",
                    n.faults.len(),
                    n.restarts
                ));
            }
        }
        if let Some(p) = &self.peer {
            s.push_str(&format!(
                "peer          {} frames in, {} out; {} TCP connections, {} bytes echoed; {} UDP datagrams\n",
                p.frames_in, p.frames_out, p.tcp_connections, p.tcp_bytes, p.udp_datagrams
            ));
        }
        if let Some(h) = &self.host {
            s.push_str(&h.human());
        }
        for d in &self.dependencies {
            let answered: Vec<String> =
                d.answered.iter().map(|(s, n)| format!("{n}x{s}")).collect();
            let faults: Vec<String> = d.faults.iter().map(|(k, n)| format!("{n} {k}")).collect();
            let or_none = |v: Vec<String>, sep: &str| {
                if v.is_empty() {
                    "none".to_string()
                } else {
                    v.join(sep)
                }
            };
            s.push_str(&format!(
                "dependency    {}: {} connections ({} refused), {} requests, answered {}; faults hit: {}\n",
                d.name,
                d.connections,
                d.refused,
                d.requests,
                or_none(answered, " "),
                or_none(faults, ", "),
            ));
        }
        for f in &self.faults {
            s.push_str(&format!(
                "fault         {} {} from {:.3} s to {:.3} s\n",
                f.kind,
                f.what,
                f.from_ns as f64 / 1e9,
                f.until_ns as f64 / 1e9
            ));
        }
        if let Some(c) = &self.composer {
            s.push_str(&c.human());
        }
        // Stopped at its --until line, the world's end was not seen: only violations count.
        let judged: Vec<Verdict> = self
            .promises
            .iter()
            .filter(|v| {
                self.until_line.is_none() || matches!(v.status, Status::Passed | Status::Violated)
            })
            .cloned()
            .collect();
        s.push_str(
            &wio_machines::promises::report::Promises {
                list: judged.clone(),
                ..Default::default()
            }
            .human(),
        );
        if judged.len() < self.promises.len() {
            s.push_str(&format!(
                "promises      {} more not judged: the world stopped at its --until line\n",
                self.promises.len() - judged.len()
            ));
        }
        s.push_str(&format!("world trace   {}\n", self.world_trace_hash));
        s
    }
}
