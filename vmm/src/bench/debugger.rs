//! `wio bench --debugger`: what reverse execution costs, side by side in one process.
//!
//! The small riscv64 guest runs busy loops (`wio.busy_iters`) for more than 10 virtual
//! seconds. Measured: the replay speed of the plain run and of the same run under the
//! debugger taking its periodic checkpoints (ratio of wall times, alternating rounds),
//! and the latency of `reverse-stepi` at 1 s and at 10 s of virtual time: the first step
//! back (from the periodic checkpoints) and the next ones (the first leaves a checkpoint
//! near where the user is).

use serde_json::json;
use std::time::Instant;
use wio_machines::arch::riscv64::debug::{RunPlan, RvDebugger};
use wio_machines::arch::riscv64::{RvMachine, DEFAULT_CMDLINE};
use wio_machines::error::NondeterminismError;
use wio_machines::error::{BenchFailure, Result, WioError};
use wio_machines::machine::{driver, RunConfig};

/// Busy loop iterations: long enough for 10 virtual seconds of work.
const BUSY_ITERS: u64 = 90_000;

fn config() -> RunConfig {
    RunConfig {
        guest: Some("small".into()),
        cmdline: Some(format!("{DEFAULT_CMDLINE} wio.busy_iters={BUSY_ITERS}")),
        epoch_unix: 1_767_225_600,
        max_virtual_ns: 120_000_000_000,
        ..RunConfig::with_seed(1)
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// (wall s, virtual ns, trace hash) of the plain run.
fn plain() -> Result<(f64, u64, String)> {
    let cfg = config();
    let wall = Instant::now();
    let r = driver::run(Box::new(RvMachine::boot(&cfg, wall)?), &cfg, wall);
    let secs = wall.elapsed().as_secs_f64();
    r.outcome?;
    Ok((secs, r.summary.virtual_ns, r.summary.trace_hash))
}

fn debugger() -> Result<RvDebugger> {
    let cfg = config();
    let wall = Instant::now();
    RvDebugger::new(RvMachine::boot(&cfg, wall)?, RunPlan { cfg, wall })
}

/// (wall s, checkpoints, trace hash) of the run under the debugger, to its end.
fn debugged() -> Result<(f64, usize, String)> {
    let wall = Instant::now();
    let mut d = debugger()?;
    d.forward(None, false, &mut || false)?;
    let checkpoints = d.checkpoints().len();
    let r = d.finish();
    let secs = wall.elapsed().as_secs_f64();
    r.outcome?;
    Ok((secs, checkpoints, r.summary.trace_hash))
}

/// Wall ms of reverse steps from just after `at_ns` of virtual time: the first (from
/// the periodic checkpoints only) and the median of the next `rounds` (each from a new
/// position 1000 instructions on, after the first left a checkpoint near).
fn reverse_step_ms(at_ns: u64, rounds: u32) -> Result<(f64, f64, u64)> {
    let mut d = debugger()?;
    d.seek_time(at_ns)?;
    let mut ms = Vec::new();
    for _ in 0..=rounds.max(1) {
        let pos = d.position() + 1000;
        d.seek(pos)?;
        let t = Instant::now();
        d.reverse_step()?;
        ms.push(t.elapsed().as_secs_f64() * 1e3);
        if d.position() != pos - 1 {
            return Err(BenchFailure::ReverseStep {
                from: pos,
                landed: d.position(),
            }
            .into());
        }
    }
    let first = ms.remove(0);
    Ok((first, median(ms), d.checkpoints().len() as u64))
}

/// Prints the figures and returns them as JSON.
pub fn figures(rounds: u32) -> Result<serde_json::Value> {
    let rounds = rounds.max(1);
    let (mut plain_s, mut debug_s) = (Vec::new(), Vec::new());
    let (mut virt, mut checkpoints) = (0, 0);
    for round in 1..=rounds {
        eprintln!("bench: debugger round {round}/{rounds}: plain replay, then under the debugger…");
        let (p, v, h1) = plain()?;
        let (d, c, h2) = debugged()?;
        if h1 != h2 {
            return Err(WioError::Nondeterminism(NondeterminismError::Debugged {
                plain: h1,
                debugged: h2,
            }));
        }
        plain_s.push(p);
        debug_s.push(d);
        (virt, checkpoints) = (v, c);
    }
    let (p, d) = (median(plain_s), median(debug_s));
    println!(
        "replay, plain              {:>12.2} s wall for {:.2} virtual s",
        p,
        virt as f64 / 1e9
    );
    println!(
        "replay, with checkpoints   {:>12.2} s wall ({checkpoints} checkpoints; cost {:.1}%)",
        d,
        (d / p - 1.0) * 100.0
    );
    let mut latency = Vec::new();
    for at in [1_000_000_000u64, 10_000_000_000] {
        if at >= virt {
            return Err(BenchFailure::EndedEarly {
                guest: "bench guest",
                needed: format!("{at} ns"),
                how: format!("it ran {virt} ns"),
            }
            .into());
        }
        eprintln!("bench: reverse-stepi at {} s…", at / 1_000_000_000);
        let (first, ms, cps) = reverse_step_ms(at, 5)?;
        println!(
            "reverse-stepi at {:>2} s      {:>12.1} ms first, {:.1} ms median of the next 5 ({cps} checkpoints by then)",
            at / 1_000_000_000,
            first,
            ms
        );
        latency
            .push(json!({ "at_ns": at, "first_ms": first, "median_ms": ms, "checkpoints": cps }));
    }
    Ok(json!({
        "virtual_ns": virt, "plain_wall_s": p, "debugged_wall_s": d,
        "checkpoints": checkpoints, "checkpoint_cost": d / p - 1.0,
        "reverse_step": latency, "rounds": rounds,
    }))
}
