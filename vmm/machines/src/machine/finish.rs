//! How every run ends, whatever its machine: the console's last line, the trace's last
//! line (`until` at a `--until` text, else `exit` or `error`), `--persist`, and the summary.

use super::console::Console;
use super::{virtio, Arch, RunConfig, RunResult};
use crate::error::{Result, MAX_GUEST_STATUS};
use crate::summary::{RestoredFrom, Summary};
use crate::trace::Trace;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::time::Instant;
use wio_virtio_devices::MmioTransport;

/// What a machine counted and knows about itself, for the summary.
pub struct Counts {
    /// The seed the run has now.
    pub seed: u64,
    /// The machine's architecture.
    pub arch: Arch,
    /// Exits by kind.
    pub exits: BTreeMap<&'static str, u64>,
    /// Interrupts injected (x86-64).
    pub interrupts: Option<u64>,
    /// Instructions retired, where the engine counts them.
    pub instructions: Option<u64>,
    /// Virtual ns skipped while the guest idled.
    pub idle_ns: u64,
    /// The snapshot the run was restored from.
    pub restored_from: Option<RestoredFrom>,
    /// What ran the guest ("kvm", "pvm", "interpreter").
    pub host: &'static str,
    /// riscv64: the hart's ISA when it is not plain RV64GC (`--isa`).
    pub isa: Option<String>,
    /// Determinism caveats detected on this host.
    pub warnings: Vec<String>,
    /// Where the machine can interrupt its guest (see `Summary::preemption`).
    pub preemption: Option<&'static str>,
    /// When the run started on the host (for the summary's wall time only).
    pub wall: Instant,
    /// The faults the run applied.
    pub faults: Vec<crate::faults::inject::Applied>,
    /// Times the machine booted again after a crash fault.
    pub restarts: u32,
    /// Virtual ns the CPU was stopped by node faults.
    pub stopped_ns: u64,
    /// The promises the guest's programs made (machines with the channel).
    pub promises: Option<crate::promises::report::Promises>,
}

/// The machine's parts a run's end touches.
pub struct Parts<'a> {
    /// The console.
    pub console: &'a mut Console,
    /// The trace.
    pub trace: &'a mut Trace,
    /// The virtio devices (the disk's summary and `--persist`).
    pub devices: &'a [MmioTransport],
}

/// Ends the run at virtual time `now` with `outcome`; `fields` go on the trace's last
/// line; `until` is the console text the run stopped at, if it did (then the guest has
/// no status and the exit code is 0).
pub fn finish_run(
    cfg: &RunConfig,
    now: u64,
    outcome: Result<u32>,
    until: Option<&str>,
    fields: Value,
    parts: Parts,
    counts: Counts,
) -> RunResult {
    let Parts {
        console,
        trace,
        devices,
    } = parts;
    console.flush_line(now, trace);
    // The host link's refused attempts (each at its time), and its tape's end.
    let (host_link, outcome) = match &cfg.host {
        None => (None, outcome),
        Some(h) => {
            for (at_ns, port) in h.take_refused() {
                trace.event(now, "host-refused", json!({ "at_ns": at_ns, "port": port }));
            }
            let outcome = match (outcome, h.finish()) {
                (Ok(_), Err(e)) => Err(e),
                (o, _) => o,
            };
            let mut stats = h.stats();
            if let Some(net) = devices.iter().find_map(|t| {
                t.device()
                    .as_any()
                    .downcast_ref::<wio_virtio_devices::Net>()
            }) {
                stats.count_dns(net.peer_stats());
            }
            (Some(stats), outcome)
        }
    };
    let outcome = match until {
        Some(text) => {
            let mut line = json!({ "text": text });
            if let (Value::Object(map), Value::Object(extra)) = (&mut line, fields) {
                map.extend(extra);
            }
            trace.event(now, "until", line);
            crate::trace::finish(trace, outcome, cfg.trace.as_ref())
        }
        None => crate::trace::close(trace, now, outcome, fields, cfg.trace.as_ref()),
    };
    // Failed promises fail a run the guest ended well; a run stopped at --until (its end
    // not seen) fails on violations only.
    let outcome = match (&counts.promises, outcome) {
        (Some(p), Ok(status)) if cfg.judge_promises => {
            let failed: Vec<_> = p
                .list
                .iter()
                .filter(|v| {
                    v.status == crate::promises::Status::Violated
                        || (until.is_none() && v.status != crate::promises::Status::Passed)
                })
                .collect();
            match failed.first() {
                Some(v) => Err(crate::error::WioError::Promise {
                    count: failed.len(),
                    first: format!(
                        "{} {} {:?}",
                        v.status.name(),
                        v.promise.display_type,
                        v.promise.message
                    ),
                }),
                None => Ok(status),
            }
        }
        (_, outcome) => outcome,
    };
    let wall_ns = counts.wall.elapsed().as_nanos() as u64;
    let (disk, outcome) = virtio::finish_disk(devices, cfg, outcome);
    let summary = Summary {
        seed: counts.seed,
        arch: counts.arch.name(),
        virtual_ns: now,
        wall_ns,
        run_wall_ns: None,
        exits: counts.exits,
        interrupts: counts.interrupts,
        instructions: counts.instructions,
        markers: console.markers.clone(),
        disk,
        idle_ns: counts.idle_ns,
        trace_hash: trace.hash_hex(),
        trace_lines: trace.lines(),
        console_sha256: console.sha256(),
        exit_status: outcome.as_ref().ok().copied().filter(|_| until.is_none()),
        stopped_at: until.map(str::to_string),
        restored_from: counts.restored_from,
        wio_exit_code: match &outcome {
            Ok(s) => (*s).min(MAX_GUEST_STATUS) as i32,
            Err(e) => e.exit_code(),
        },
        error: outcome.as_ref().err().map(|e| e.to_string()),
        host: counts.host,
        isa: counts.isa,
        sandbox: crate::sandbox::describe(),
        warnings: counts.warnings,
        preemption: counts.preemption,
        faults: counts.faults,
        restarts: counts.restarts,
        stopped_ns: counts.stopped_ns,
        promises: counts.promises,
        host_link,
    };
    RunResult { summary, outcome }
}
