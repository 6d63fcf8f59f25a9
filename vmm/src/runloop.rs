//! The run loop: engine exit → device handling → clock charge → due events →
//! interrupt injection → repeat. Halting jumps the clock to the next event.

use crate::engine::{CpuEngine, Exit};
use crate::error::{Result, WioError};
use crate::platform::{GuestStop, Platform};
use serde_json::json;
use std::collections::BTreeMap;
use std::io::Write;
use wio_clock::{CostModel, ExitCost};

/// Limits and options of one run.
#[derive(Debug, Clone, Copy)]
pub struct RunLimits {
    /// Virtual ns after which the run stops with [`WioError::TimeLimit`]; 0 = none.
    pub max_virtual_ns: u64,
    /// Wall milliseconds of the watchdog, for messages.
    pub watchdog_ms: u64,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// The guest wrote a status to the debug-exit port.
    GuestStatus(u32),
}

/// What the loop counted.
#[derive(Debug, Clone, Default)]
pub struct RunStats {
    /// Exits by kind name.
    pub exits: BTreeMap<&'static str, u64>,
    /// Interrupts injected.
    pub interrupts: u64,
    /// Virtual ns skipped while the guest halted.
    pub idle_ns: u64,
}

/// Where console output goes while the guest runs.
pub enum Console<'a> {
    /// Stream it to this writer as it arrives.
    Stream(&'a mut dyn Write),
    /// Keep it only in the trace.
    Quiet,
}

/// Runs `engine` on `platform` until the guest stops or an error ends the run.
pub fn run(
    engine: &mut dyn CpuEngine,
    platform: &mut Platform,
    cost: &CostModel,
    limits: RunLimits,
    console: &mut Console,
    stats: &mut RunStats,
) -> Result<Ending> {
    let result = run_inner(engine, platform, cost, limits, console, stats);
    let out = platform.drain_console();
    if let Console::Stream(w) = console {
        let _ = w.write_all(&out);
        let _ = w.flush();
    }
    platform.flush_console_line();
    result
}

fn run_inner(
    engine: &mut dyn CpuEngine,
    platform: &mut Platform,
    cost: &CostModel,
    limits: RunLimits,
    console: &mut Console,
    stats: &mut RunStats,
) -> Result<Ending> {
    loop {
        // Deliver a pending interrupt at a point the guest's execution defines.
        if platform.pic.has_pending() {
            if engine.interrupt_ready() {
                if let Some(vector) = platform.pic.acknowledge() {
                    engine.inject_interrupt(vector)?;
                    stats.interrupts += 1;
                    let now = platform.clock.now_ns();
                    platform
                        .trace
                        .event(now, "irq", json!({ "vector": vector }));
                }
                engine.request_interrupt_window(false);
            } else {
                engine.request_interrupt_window(true);
            }
        } else {
            engine.request_interrupt_window(false);
        }

        let exit = engine.run(platform)?;
        let kind = match &exit {
            Exit::PortIo => ExitCost::PortIo,
            Exit::Mmio => ExitCost::Mmio,
            Exit::Halt => ExitCost::Halt,
            Exit::InterruptWindow => ExitCost::InterruptWindow,
            _ => ExitCost::Other,
        };
        *stats.exits.entry(kind.name()).or_insert(0) += 1;
        platform.clock.advance(cost.cost_ns(kind));

        match exit {
            Exit::PortIo | Exit::Mmio | Exit::InterruptWindow => {}
            Exit::Halt => {
                if !platform.pic.has_pending() {
                    match platform.events.peek_time() {
                        Some(t) => {
                            let skipped = platform.clock.advance_to(t);
                            stats.idle_ns += skipped;
                            let now = platform.clock.now_ns();
                            platform.trace.event(now, "hlt", json!({ "idle_ns": skipped }));
                        }
                        None => {
                            let rip = pc_text(engine);
                            return Err(WioError::GuestCrash(format!(
                                "guest halted at {rip} with no timer armed and no interrupt pending: it can never wake up"
                            )));
                        }
                    }
                }
            }
            Exit::Shutdown => {
                return Err(WioError::GuestCrash(format!(
                    "triple fault (shutdown) near {}; the guest hit an exception it could not handle",
                    pc_text(engine)
                )))
            }
            Exit::Stalled(_) => {
                return Err(WioError::Nondeterminism(format!(
                    "guest ran more than {} ms of wall time without a VM exit, at {}; on KVM wio can preempt a guest only at exits, so kicking it would make the run depend on host timing. Make the guest halt or do I/O in its loops; raise --watchdog-ms if the host is just slow",
                    limits.watchdog_ms,
                    pc_text(engine)
                )))
            }
            Exit::Crash(why) => return Err(WioError::GuestCrash(format!("{why} near {}", pc_text(engine)))),
        }

        platform.fire_due_events();
        let out = platform.drain_console();
        if !out.is_empty() {
            if let Console::Stream(w) = console {
                let _ = w.write_all(&out);
                let _ = w.flush();
            }
        }
        match platform.stop {
            Some(GuestStop::Status(s)) => return Ok(Ending::GuestStatus(s)),
            Some(GuestStop::Reset) => {
                return Err(WioError::GuestCrash(format!(
                    "guest requested a CPU reset (i8042) near {}; wio does not reboot guests (a Linux panic with panic=-1 ends here)",
                    pc_text(engine)
                )))
            }
            None => {}
        }
        if limits.max_virtual_ns != 0 && platform.clock.now_ns() >= limits.max_virtual_ns {
            return Err(WioError::TimeLimit {
                limit_ns: limits.max_virtual_ns,
            });
        }
    }
}

fn pc_text(engine: &mut dyn CpuEngine) -> String {
    match engine.program_counter() {
        Some(pc) => format!("RIP {pc:#x}"),
        None => "an unknown RIP".to_string(),
    }
}
