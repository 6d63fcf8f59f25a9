//! The end-of-run summary: a human block on stderr and, with `--summary-json`,
//! a machine-readable file that tools and CI read.

use crate::error::{Result, WioError};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

/// Writes `value` to `path` as pretty JSON and a newline: a run's or a world's summary, a
/// world fault plan. `what` names it in errors (encoding it is wio's fault, exit internal;
/// writing it is an output error).
pub fn write_json<T: Serialize + ?Sized>(value: &T, path: &Path, what: &'static str) -> Result<()> {
    let text =
        serde_json::to_string_pretty(value).map_err(|source| WioError::Encode { what, source })?;
    std::fs::write(path, text + "\n").map_err(|source| WioError::Output {
        what,
        path: path.to_path_buf(),
        source,
    })
}

/// The first appearance of a console marker line.
#[derive(Debug, Clone, Serialize)]
pub struct Marker {
    /// The marker text.
    pub line: String,
    /// Virtual ns when its line completed.
    pub virtual_ns: u64,
    /// Wall ns since the run started (host time; never part of the trace).
    pub wall_ns: u64,
}

/// Where a restored run started.
#[derive(Debug, Clone, Serialize)]
pub struct RestoredFrom {
    /// The snapshot file.
    pub path: String,
    /// Its virtual time.
    pub virtual_ns: u64,
    /// Instructions retired before it (riscv64).
    pub instructions: Option<u64>,
    /// The seed of the run that took it.
    pub seed: u64,
}

/// What the guest did to its disk.
#[derive(Debug, Clone, Serialize)]
pub struct DiskSummary {
    /// Read requests.
    pub reads: u64,
    /// Write requests.
    pub writes: u64,
    /// Flush requests.
    pub flushes: u64,
    /// Requests that got an error status.
    pub errors: u64,
    /// 4 KiB chunks made durable by flushes.
    pub durable_chunks: usize,
    /// 4 KiB chunks written but never flushed (lost, as in a power cut).
    pub unflushed_chunks: usize,
    /// Sectors a bit-rot fault corrupted.
    pub rotted_sectors: u64,
}

/// Everything a run reports at its end.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// The run seed.
    pub seed: u64,
    /// Guest architecture.
    pub arch: &'static str,
    /// Virtual ns at the end of the run.
    pub virtual_ns: u64,
    /// Wall-clock ns the run took (host time; never part of the trace).
    pub wall_ns: u64,
    /// A world's node: wall-clock ns its host thread spent running this machine (host
    /// time; never part of a trace), so the node that bounds a world's wall time shows.
    /// Left out for a machine run on its own, whose `wall_ns` says it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_wall_ns: Option<u64>,
    /// Exits by kind.
    pub exits: BTreeMap<&'static str, u64>,
    /// Interrupts injected (x86-64; riscv64 leaves it out: the hart takes its own, uncounted).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interrupts: Option<u64>,
    /// Instructions retired, where the engine counts them (the interpreter; KVM cannot).
    pub instructions: Option<u64>,
    /// When marker lines first appeared on the console (riscv64 boots: "Run /init", ...).
    pub markers: Vec<Marker>,
    /// The virtio-blk disk at the end of the run, if one was attached.
    pub disk: Option<DiskSummary>,
    /// Virtual ns skipped while the guest halted.
    pub idle_ns: u64,
    /// Hash of the last trace line.
    pub trace_hash: String,
    /// Lines in the trace.
    pub trace_lines: u64,
    /// SHA-256 of everything the guest printed.
    pub console_sha256: String,
    /// The guest's exit status, or null if the run ended with an error or at --until.
    pub exit_status: Option<u32>,
    /// The snapshot the run was restored from, if it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub restored_from: Option<RestoredFrom>,
    /// The console text the run stopped at (--until), if it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped_at: Option<String>,
    /// wio's own process exit code.
    pub wio_exit_code: i32,
    /// The error that ended the run, if any.
    pub error: Option<String>,
    /// The host's virtualization ("hardware", "pvm", ...).
    pub host: &'static str,
    /// riscv64: the hart's ISA when not plain RV64GC (`--isa`; left out otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub isa: Option<String>,
    /// Where the machine can interrupt its guest, when not at any instruction (x86-64 on
    /// KVM: only at exits; left out on riscv64, whose interrupts land on exact instructions).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preemption: Option<&'static str>,
    /// Determinism caveats detected on this host (empty when none).
    pub warnings: Vec<String>,
    /// The seccomp sandbox's state ("on (seccomp)", "off (--no-sandbox)", ...; see
    /// `crate::sandbox`): host side only, never part of a hash.
    pub sandbox: &'static str,
    /// The faults the run applied (left out when none), in start order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<crate::faults::inject::Applied>,
    /// Times the machine booted again after a crash fault.
    pub restarts: u32,
    /// Virtual ns the CPU was stopped by node faults (paused, or off after a crash).
    pub stopped_ns: u64,
    /// The promises the guest's programs made, with their verdicts (left out on machines
    /// without the channel).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub promises: Option<crate::promises::report::Promises>,
    /// What the host link did (`wio run --net host`), when the run had one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_link: Option<crate::hostlink::HostStats>,
}

impl Summary {
    /// The summary of a synthetic machine of the unit tests (no engine, no devices): what
    /// it was given, and nothing else.
    #[cfg(any(test, feature = "test-support"))]
    pub fn synthetic(
        seed: u64,
        virtual_ns: u64,
        trace: &crate::trace::Trace,
        console_sha256: String,
        exit_status: Option<u32>,
    ) -> Summary {
        Summary {
            seed,
            arch: "synthetic",
            virtual_ns,
            wall_ns: 0,
            run_wall_ns: None,
            exits: BTreeMap::new(),
            interrupts: None,
            instructions: None,
            markers: Vec::new(),
            disk: None,
            idle_ns: 0,
            trace_hash: trace.hash_hex(),
            trace_lines: trace.lines(),
            console_sha256,
            exit_status,
            restored_from: None,
            stopped_at: None,
            wio_exit_code: 0,
            error: None,
            host: "none",
            preemption: None,
            isa: None,
            warnings: Vec::new(),
            sandbox: "off",
            faults: Vec::new(),
            restarts: 0,
            stopped_ns: 0,
            promises: None,
            host_link: None,
        }
    }

    /// The human-readable block printed to stderr.
    pub fn human(&self) -> String {
        let mut s = String::new();
        self.human_run(&mut s);
        self.human_end(&mut s);
        if let Some(p) = &self.promises {
            s.push_str(&p.human());
        }
        for a in &self.faults {
            s.push_str(&fault_line(a));
        }
        if let Some(h) = &self.host_link {
            s.push_str(&h.human());
        }
        for w in &self.warnings {
            s.push_str(&format!("warning       {w}\n"));
        }
        self.human_reproduce(&mut s);
        s
    }

    /// The run: seed, machine, times, exits, instructions, trace.
    fn human_run(&self, s: &mut String) {
        let exits: Vec<String> = self.exits.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let total: u64 = self.exits.values().sum();
        s.push_str("── wio run summary ──\n");
        s.push_str(&format!("seed          {}\n", self.seed));
        s.push_str(&format!(
            "arch          {} (host: {}){}\n",
            self.arch,
            self.host,
            self.isa
                .as_ref()
                .map(|i| format!(", isa {i}"))
                .unwrap_or_default()
        ));
        s.push_str(&format!("sandbox       {}\n", self.sandbox));
        if let Some(p) = self.preemption {
            s.push_str(&format!("preemption    {p}\n"));
        }
        s.push_str(&format!(
            "virtual time  {}.{:09} s (idle {}.{:09} s)\n",
            self.virtual_ns / 1_000_000_000,
            self.virtual_ns % 1_000_000_000,
            self.idle_ns / 1_000_000_000,
            self.idle_ns % 1_000_000_000
        ));
        s.push_str(&format!(
            "wall time     {:.3} s\n",
            self.wall_ns as f64 / 1e9
        ));
        s.push_str(&format!("exits         {total} ({})\n", exits.join(" ")));
        if let Some(n) = self.interrupts {
            s.push_str(&format!("interrupts    {n}\n"));
        }
        if self.restarts > 0 || self.stopped_ns > 0 {
            s.push_str(&format!(
                "node          {} restart(s) after crashes; CPU stopped {}.{:09} s\n",
                self.restarts,
                self.stopped_ns / 1_000_000_000,
                self.stopped_ns % 1_000_000_000
            ));
        }
        if let Some(n) = self.instructions {
            let secs = self.wall_ns as f64 / 1e9;
            // A restored run executed only the instructions after its snapshot.
            let before = self
                .restored_from
                .as_ref()
                .and_then(|r| r.instructions)
                .unwrap_or(0);
            s.push_str(&format!(
                "instructions  {n} ({} in this run, {:.1} MIPS)\n",
                n.saturating_sub(before),
                n.saturating_sub(before) as f64 / secs.max(1e-9) / 1e6
            ));
        }
        s.push_str(&format!(
            "trace hash    {} ({} lines)\n",
            self.trace_hash, self.trace_lines
        ));
    }

    /// How it ended: status or error, where it stopped, the disk, the console markers.
    fn human_end(&self, s: &mut String) {
        match (self.exit_status, &self.error) {
            (Some(st), _) => s.push_str(&format!("exit status   {st}\n")),
            (None, Some(e)) => s.push_str(&format!(
                "ended by      error (wio exit {}): {e}\n",
                self.wio_exit_code
            )),
            (None, None) => {}
        }
        if let Some(t) = &self.stopped_at {
            s.push_str(&format!(
                "stopped at    console line containing {t:?} (--until)\n"
            ));
        }
        if let Some(d) = &self.disk {
            s.push_str(&format!(
                "disk          {} reads, {} writes, {} flushes, {} errors; {} KiB durable, {} KiB never flushed\n",
                d.reads, d.writes, d.flushes, d.errors, d.durable_chunks * 4, d.unflushed_chunks * 4
            ));
        }
        for m in &self.markers {
            s.push_str(&format!(
                "marker        {:?} at virtual {:.3} s, wall {:.3} s\n",
                m.line,
                m.virtual_ns as f64 / 1e9,
                m.wall_ns as f64 / 1e9
            ));
        }
    }

    /// Where it came from and the command that runs it again.
    fn human_reproduce(&self, s: &mut String) {
        let arch = if self.arch == "x86_64" {
            String::new()
        } else {
            format!("--arch {} ", self.arch)
        };
        match &self.restored_from {
            Some(from) => s.push_str(&format!(
                "restored from {} (snapshot at {:.9} s, seed {})\nreproduce     wio run --from {} --seed {}  (plus the same options)\n",
                from.path, from.virtual_ns as f64 / 1e9, from.seed, from.path, self.seed
            )),
            None => s.push_str(&format!(
                "reproduce     wio run {arch}--seed {}  (plus the same options)\n",
                self.seed
            )),
        }
    }
}

/// One applied fault's line: number, target, kind, parameters, when and how long.
fn fault_line(a: &crate::faults::inject::Applied) -> String {
    let f = &a.fault;
    let params = f.kind.params().map(|p| p.to_string()).unwrap_or_default();
    format!(
        "fault         #{} {} {} {params} at {}.{:09} s{}\n",
        a.index,
        serde_json::to_value(f.target)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default(),
        f.kind.name(),
        f.at_ns / 1_000_000_000,
        f.at_ns % 1_000_000_000,
        if f.kind.is_instant() {
            String::new()
        } else {
            format!(
                " for {:.3} s{}",
                f.duration_ns as f64 / 1e9,
                if a.ended {
                    ""
                } else {
                    " (still in force at the end)"
                }
            )
        }
    )
}
