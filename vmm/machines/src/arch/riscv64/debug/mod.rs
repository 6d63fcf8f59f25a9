//! A riscv64 run under a debugger, as a replay that can be moved to any instruction:
//! forward to a breakpoint, a watchpoint, a position or the end; backwards by restoring
//! the nearest in-memory checkpoint and executing forward to the exact position.
//!
//! Positions count executed instructions (retired or trapped; see
//! [`RiscvEngine::executed`]) from where the debugger started. A debugged run is the run
//! without a debugger: stopping happens between two instructions inside a machine step
//! and the step then goes on as if it had not stopped (see `RvMachine::slice_until`),
//! breakpoints never touch guest memory, checkpoints are taken at step boundaries and
//! change nothing, and the trace lines re-executed after a restore replace those cut
//! back. Only writes to registers or memory change the run.
//!
//! [`RiscvEngine::executed`]: super::engine::RiscvEngine::executed

use super::machine::RvMachine;
use super::snapshot::{restore, RvLoaded};
use crate::error::DebuggerError;
use crate::error::{MachineError, Result, WioError};
use crate::faults::FaultSource;
use crate::machine::console::Echo;
use crate::machine::driver::{boundary, Boundary};
use crate::machine::{Machine, RunConfig, RunResult, Stop};
use crate::trace::SharedLog;
use std::collections::BTreeSet;
use std::time::Instant;
use wio_clock::VirtualTime;

/// Most checkpoints kept; when full, every other one goes and the interval doubles.
pub const MAX_CHECKPOINTS: usize = 24;

/// Executed instructions between checkpoints at first (about 0.3 s of a busy guest).
pub const DEFAULT_INTERVAL: u64 = 500_000_000;

/// Most write watchpoints.
pub const MAX_WATCHPOINTS: usize = 8;

/// Most bytes one watchpoint covers.
pub const MAX_WATCH_LEN: u64 = 64;

/// Why the run stopped for the debugger.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Halt {
    /// Before the instruction at a breakpoint.
    Breakpoint,
    /// After an instruction that changed a watched variable (its address).
    Watch(u64),
    /// At the position asked for (a step, a seek).
    Reached,
    /// At the beginning of the recorded history (reverse execution found nothing earlier).
    HistoryStart,
    /// The debugger asked it to stop (Ctrl-C), at a step boundary.
    Interrupted,
    /// The run ended (the guest's status, a limit or an error: see [`RvDebugger::ended`]).
    Ended,
}

/// A write watchpoint: the memory a virtual address mapped to when it was set (a
/// hardware watchpoint on physical memory: every address space sees the same bytes).
#[derive(Debug, Clone)]
struct Watch {
    /// The virtual address gdb asked for (gdb's name for it).
    addr: u64,
    len: u64,
    /// The physical address it mapped to.
    phys: u64,
    /// The bytes last seen.
    last: Vec<u8>,
}

impl Watch {
    /// Reads the watched bytes; whether they changed since last looked at (the new
    /// bytes become the ones looked at).
    fn look(&mut self, hart: &wio_riscv::Hart) -> bool {
        let mut now = vec![0; self.len as usize];
        if hart.debug_read(self.phys, &mut now, false) != now.len() || now == self.last {
            return false;
        }
        self.last = now;
        true
    }
}

/// The machine at a past position, ready to restore.
struct Checkpoint {
    executed: u64,
    instret: u64,
    virtual_ns: u64,
    loaded: RvLoaded,
    /// Bytes of trace lines written by then.
    trace_len: usize,
}

/// What the debugger's run does besides being debugged: its configuration, limit and
/// `--until` text.
pub struct RunPlan {
    /// The run's configuration (its seed, outputs and limits).
    pub cfg: RunConfig,
    /// When the run started on the host.
    pub wall: Instant,
}

/// How one call of [`RvDebugger::run_in_world`] ended.
#[derive(Debug)]
pub enum WorldRun {
    /// Stopped for the debugger in the middle of a machine step.
    Stopped(Halt),
    /// A step boundary: what [`crate::machine::Machine::run_until`] returned.
    Boundary(Stop),
}

/// A riscv64 run under a debugger.
pub struct RvDebugger {
    m: Box<RvMachine>,
    plan: RunPlan,
    /// The configuration checkpoints are restored with: the run's, without outputs or
    /// fault options (a checkpoint goes on exactly as the machine it was taken of).
    restore_cfg: RunConfig,
    limit: VirtualTime,
    log: Option<SharedLog>,
    checkpoints: Vec<Checkpoint>,
    interval: u64,
    /// The furthest position run so far: the console echoes only what lies beyond it.
    frontier: u64,
    echo: Echo,
    sw_breaks: BTreeSet<u64>,
    hw_breaks: BTreeSet<u64>,
    watches: Vec<Watch>,
    ended: Option<Result<u32>>,
    until_hit: Option<String>,
    /// Reverse-continue is scanning for hits: a watchpoint hit is reported after the
    /// instruction that wrote (else before it, as gdb expects of a forward hit).
    scanning: bool,
    /// Where the machine this run started from came from (kept across restores).
    restored_from: Option<crate::summary::RestoredFrom>,
    /// Where a seek goes (checkpoints are then taken near it).
    seek_target: Option<u64>,
    /// A node of a world: no checkpoints (a node cannot go back alone), the world
    /// drives the run ([`RvDebugger::run_in_world`]).
    world: bool,
}

impl RvDebugger {
    /// Takes `m` (booted or restored with `plan.cfg`) under the debugger.
    pub fn new(m: RvMachine, plan: RunPlan) -> Result<RvDebugger> {
        let mut d = RvDebugger::base(m, plan, false);
        if let Some(log) = &d.log {
            d.m.bus.trace.set_writer(Box::new(log.clone()));
        }
        if let Some(u) = &d.plan.cfg.until {
            d.m.console.watch.push(u.clone());
        }
        d.checkpoint()?;
        Ok(d)
    }

    /// Takes a node of a world under the debugger: forward only (breakpoints,
    /// watchpoints, steps), the world deciding how far it runs.
    pub fn for_world(m: RvMachine, plan: RunPlan) -> RvDebugger {
        RvDebugger::base(m, plan, true)
    }

    fn base(m: RvMachine, plan: RunPlan, world: bool) -> RvDebugger {
        let echo = plan.cfg.echo();
        // A world's node is never restored: no trace lines to keep, no other config.
        let log = (!world && plan.cfg.trace.is_some()).then(SharedLog::default);
        let restore_cfg = if world {
            plan.cfg.clone()
        } else {
            RunConfig {
                trace: None,
                quiet: true,
                capture_console: false,
                faults: FaultSource::default(),
                fault_plan_out: None,
                seed_given: false,
                clock_drift_ppm: None,
                pcap: None,
                ..plan.cfg.clone()
            }
        };
        let limit = if world {
            VirtualTime::MAX
        } else {
            VirtualTime::limit_or_max(plan.cfg.max_virtual_ns)
        };
        let restored_from = m.restored_from.clone();
        RvDebugger {
            m: Box::new(m),
            plan,
            restore_cfg,
            limit,
            log,
            checkpoints: Vec::new(),
            interval: if world { u64::MAX } else { DEFAULT_INTERVAL },
            frontier: 0,
            echo,
            sw_breaks: BTreeSet::new(),
            hw_breaks: BTreeSet::new(),
            watches: Vec::new(),
            ended: None,
            until_hit: None,
            scanning: false,
            restored_from,
            seek_target: None,
            world,
        }
    }

    /// The machine (a world's node, to finish it the world's way).
    pub fn machine_mut(&mut self) -> &mut RvMachine {
        &mut self.m
    }

    /// The machine, to look at.
    pub fn machine_ref(&self) -> &RvMachine {
        &self.m
    }

    /// The machine, leaving the debugger.
    pub fn into_machine(self) -> RvMachine {
        let mut m = *self.m;
        m.engine.hart.set_breakpoints(&[]);
        m.engine.pause_at = None;
        m
    }

    /// A world's node: runs to `limit` as [`crate::machine::Machine::run_until`] does,
    /// stopping for the debugger before a breakpoint, after a write to a watched
    /// variable, or (`step`) after one instruction. `stops`: breakpoints and watchpoints
    /// are in force (gdb resumed); else it runs freely (gdb detached).
    pub fn run_in_world(&mut self, limit: VirtualTime, step: bool, stops: bool) -> WorldRun {
        let watching = self.arm(stops);
        let target = step.then(|| self.position() + 1);
        loop {
            self.pause_for(target, watching);
            let stop = self.m.run_until(limit);
            self.m.engine.pause_at = None;
            if self.m.debug_paused {
                if self.m.engine.at_breakpoint {
                    return WorldRun::Stopped(Halt::Breakpoint);
                }
                if watching {
                    if let Some(addr) = self.watch_hit() {
                        return WorldRun::Stopped(Halt::Watch(addr));
                    }
                }
                if target.is_some_and(|t| self.position() >= t) {
                    return WorldRun::Stopped(Halt::Reached);
                }
                // Paused for a watched instruction that wrote nothing watched, or resumed
                // from a breakpoint: the step goes on.
                self.m.engine.step_over_break = false;
                continue;
            }
            if let Stop::End(_) = &stop {
                self.m.engine.hart.set_breakpoints(&[]);
            }
            return WorldRun::Boundary(stop);
        }
    }

    /// Puts the breakpoints in force on the hart (`stops`), or none; returns whether
    /// watchpoints are watched (the machine then runs one instruction at a time).
    fn arm(&mut self, stops: bool) -> bool {
        let breaks: Vec<u64> = if stops {
            self.sw_breaks.union(&self.hw_breaks).copied().collect()
        } else {
            Vec::new()
        };
        self.m.engine.hart.set_breakpoints(&breaks);
        stops && !self.watches.is_empty()
    }

    /// Where the engine pauses next: at `target`, and after every instruction while
    /// `watching`.
    fn pause_for(&mut self, target: Option<u64>, watching: bool) {
        let next = self.position() + 1;
        self.m.engine.pause_at = match (target, watching) {
            (t, true) => Some(t.unwrap_or(u64::MAX).min(next)),
            (t, false) => t,
        };
    }

    /// A world's node resumes from where gdb stopped it: the instruction under a
    /// breakpoint runs first.
    pub fn resume_in_world(&mut self) {
        self.m.engine.step_over_break = true;
    }

    /// The machine (registers and memory for the debugger).
    pub fn hart(&self) -> &wio_riscv::Hart {
        &self.m.engine.hart
    }

    /// The machine's hart, to change registers or memory (this changes the run).
    pub fn hart_mut(&mut self) -> &mut wio_riscv::Hart {
        &mut self.m.engine.hart
    }

    /// The position: instructions executed since the debugger started.
    pub fn position(&self) -> u64 {
        self.m.engine.executed
    }

    /// Instructions retired, as the run's summary counts them.
    pub fn instret(&self) -> u64 {
        self.m.instret_before + self.m.engine.hart.instret()
    }

    /// Virtual time.
    pub fn now(&self) -> VirtualTime {
        self.m.now()
    }

    /// How the run ended, if it did.
    pub fn ended(&self) -> Option<&Result<u32>> {
        self.ended.as_ref()
    }

    /// The checkpoints: (position, retired instructions, virtual ns).
    pub fn checkpoints(&self) -> Vec<(u64, u64, u64)> {
        self.checkpoints
            .iter()
            .map(|c| (c.executed, c.instret, c.virtual_ns))
            .collect()
    }

    /// Executed instructions between checkpoints.
    pub fn interval(&self) -> u64 {
        self.interval
    }

    /// Sets the executed instructions between checkpoints (at least 1,000,000).
    pub fn set_interval(&mut self, n: u64) -> bool {
        if n < 1_000_000 {
            return false;
        }
        self.interval = n;
        true
    }

    /// Adds (`on`) or removes a breakpoint at virtual `pc`; `hw` says which list
    /// (both stop the same way). False when no more fit.
    pub fn set_breakpoint(&mut self, pc: u64, hw: bool, on: bool) -> bool {
        let full = self.sw_breaks.len() + self.hw_breaks.len() >= wio_riscv::debug::MAX_BREAKPOINTS;
        if on && full {
            return false;
        }
        let set = if hw {
            &mut self.hw_breaks
        } else {
            &mut self.sw_breaks
        };
        if on {
            set.insert(pc);
        } else {
            set.remove(&pc);
        }
        true
    }

    /// Whether the breakpoint the machine stopped at is a hardware one.
    pub fn at_hw_breakpoint(&self) -> bool {
        let pc = self.m.engine.hart.pc;
        self.hw_breaks.contains(&pc) && !self.sw_breaks.contains(&pc)
    }

    /// Adds a write watchpoint on `len` bytes at virtual `addr` (the memory it maps to
    /// now), or removes it. False when it cannot be watched (too long, too many, or not
    /// mapped to contiguous RAM now).
    pub fn set_watchpoint(&mut self, addr: u64, len: u64, on: bool) -> bool {
        if !on {
            self.watches.retain(|w| (w.addr, w.len) != (addr, len));
            return true;
        }
        if len == 0 || len > MAX_WATCH_LEN || self.watches.len() >= MAX_WATCHPOINTS {
            return false;
        }
        let hart = &self.m.engine.hart;
        let (Some(phys), Some(end)) = (
            hart.debug_translate(addr),
            hart.debug_translate(addr.wrapping_add(len - 1)),
        ) else {
            return false;
        };
        let mut last = vec![0; len as usize];
        if end.wrapping_sub(phys) != len - 1
            || hart.debug_read(phys, &mut last, false) != last.len()
        {
            return false;
        }
        self.watches.push(Watch {
            addr,
            len,
            phys,
            last,
        });
        true
    }

    /// A watched variable that changed since it was last looked at, if any (the new
    /// value becomes the one looked at).
    fn watch_hit(&mut self) -> Option<u64> {
        let hart = &self.m.engine.hart;
        let mut hit = None;
        for w in &mut self.watches {
            if w.look(hart) {
                hit.get_or_insert(w.addr);
            }
        }
        hit
    }

    /// Re-reads every watched variable (after the machine moved without watching).
    fn refresh_watches(&mut self) {
        let hart = &self.m.engine.hart;
        for w in &mut self.watches {
            w.look(hart);
        }
    }

    /// Runs forward: to `target` (a position), or with `stops`, to the next breakpoint or
    /// watchpoint hit; or to the run's end; `interrupted` is asked at every step boundary
    /// (about every 20 virtual ms, and every 65,536 watched instructions).
    pub fn forward(
        &mut self,
        target: Option<u64>,
        stops: bool,
        interrupted: &mut dyn FnMut() -> bool,
    ) -> Result<Halt> {
        let watching = self.arm(stops);
        let report_before = !self.scanning;
        self.m.engine.step_over_break = true;
        let mut steps = 0u64;
        let halt = loop {
            if self.ended.is_some() {
                break Halt::Ended;
            }
            let pos = self.position();
            if target.is_some_and(|t| pos >= t) {
                break Halt::Reached;
            }
            self.pause_for(target, watching);
            let stop = self.m.run_until(self.limit);
            self.note_progress();
            if self.m.debug_paused {
                if self.m.engine.at_breakpoint {
                    break Halt::Breakpoint;
                }
                let clock = self.m.engine.hart.cycles();
                if self.m.engine.pause_cycle.is_some_and(|c| clock >= c) {
                    break Halt::Reached;
                }
                if watching {
                    if let Some(addr) = self.watch_hit() {
                        if report_before {
                            // Stopped before the instruction that wrote, as a hardware
                            // trigger stops (gdb then steps over it itself).
                            let p = self.position();
                            self.seek(p - 1)?;
                        }
                        break Halt::Watch(addr);
                    }
                    steps += 1;
                    if steps.is_multiple_of(65_536) && interrupted() {
                        break Halt::Interrupted;
                    }
                }
                continue;
            }
            if watching {
                if let Some(addr) = self.watch_hit() {
                    // Changed by the step's end (a device, at an event).
                    self.after_step(stop)?;
                    break Halt::Watch(addr);
                }
            }
            self.after_step(stop)?;
            if self.ended.is_none() && interrupted() {
                break Halt::Interrupted;
            }
        };
        self.m.engine.pause_at = None;
        self.m.engine.hart.set_breakpoints(&[]);
        if !watching {
            self.refresh_watches();
        }
        Ok(halt)
    }

    /// What the run driver does at a step boundary: the run's end, its limit and
    /// `--until` text, and a checkpoint when one is due.
    fn after_step(&mut self, stop: Stop) -> Result<()> {
        match boundary(stop, &self.plan.cfg, self.m.as_mut()) {
            Boundary::Ended(outcome, until) => {
                self.until_hit = until;
                self.ended = Some(outcome);
            }
            Boundary::Goes => {
                let pos = self.position();
                let last = self.checkpoints.last().map_or(0, |c| c.executed);
                let before = self.checkpoints[self.checkpoint_before(pos)].executed;
                let near = self.interval / 8;
                // Going forward past the last one; or close to where a seek goes, far
                // from the checkpoint before it, so the next steps back are short.
                let due = match self.seek_target {
                    None => pos >= last.saturating_add(self.interval),
                    Some(t) => t > pos && t - pos <= near && pos - before >= near,
                };
                if due {
                    self.checkpoint()?;
                }
            }
        }
        Ok(())
    }

    /// Echoes the console again once the run is past what the user already saw.
    fn note_progress(&mut self) {
        let pos = self.position();
        if pos > self.frontier {
            self.frontier = pos;
            self.m.console.set_echo(self.echo);
        }
    }

    /// Takes a checkpoint here (a step boundary).
    fn checkpoint(&mut self) -> Result<()> {
        let m = &mut self.m;
        let snap = m.capture("debugger checkpoint".into())?;
        let disk = m.meta.disk.as_ref().map(|d| d.path.clone());
        let loaded = RvLoaded::from_own_snapshot(
            snap,
            std::path::Path::new("debugger checkpoint"),
            &self.restore_cfg,
            disk,
        )?;
        let at = self
            .checkpoints
            .partition_point(|c| c.executed < m.engine.executed);
        if self
            .checkpoints
            .get(at)
            .is_some_and(|c| c.executed == m.engine.executed)
        {
            return Ok(());
        }
        self.checkpoints.insert(
            at,
            Checkpoint {
                executed: m.engine.executed,
                instret: m.instret_before + m.engine.hart.instret(),
                virtual_ns: m.now().as_ns(),
                loaded,
                trace_len: self.log.as_ref().map_or(0, SharedLog::len),
            },
        );
        if self.checkpoints.len() > MAX_CHECKPOINTS {
            // Keep the first and every other one after it.
            let mut i = 0;
            self.checkpoints.retain(|_| {
                i += 1;
                i % 2 == 1
            });
            self.interval = self.interval.saturating_mul(2);
        }
        Ok(())
    }

    /// Restores checkpoint `i`: the machine as it was there, the trace cut back to it.
    fn restore(&mut self, i: usize) -> Result<()> {
        let c = &self.checkpoints[i];
        let mut m = restore(&c.loaded, &self.restore_cfg, self.plan.wall)?;
        m.engine.executed = c.executed;
        m.restored_from = self.restored_from.clone();
        m.meta = self.m.meta.clone();
        m.image = self.m.image.clone();
        m.console.watch = self.m.console.watch.clone();
        if let Some(log) = &self.log {
            log.truncate(c.trace_len);
            m.bus.trace.set_writer(Box::new(log.clone()));
        }
        *self.m = m;
        self.ended = None;
        self.until_hit = None;
        Ok(())
    }

    /// The last checkpoint at or before position `pos`.
    fn checkpoint_before(&self, pos: u64) -> usize {
        self.last_checkpoint(|c| c.executed <= pos)
    }

    /// The last checkpoint for which `before` holds (the first when none does).
    fn last_checkpoint(&self, before: impl Fn(&Checkpoint) -> bool) -> usize {
        self.checkpoints.iter().rposition(before).unwrap_or(0)
    }

    /// Refuses to move a world's node (it cannot go back alone).
    fn movable(&self) -> Result<()> {
        if self.world {
            return Err(MachineError::WorldNodeSeek.into());
        }
        Ok(())
    }

    /// Moves to position `pos` exactly (back through a checkpoint, or forward).
    pub fn seek(&mut self, pos: u64) -> Result<Halt> {
        self.movable()?;
        if pos < self.position() || self.ended.is_some() {
            self.restore(self.checkpoint_before(pos))?;
        }
        self.seek_target = Some(pos);
        let h = self.forward(Some(pos), false, &mut || false);
        self.seek_target = None;
        h
    }

    /// Moves to the first position where `instret` instructions have retired.
    pub fn seek_instret(&mut self, instret: u64) -> Result<Halt> {
        self.movable()?;
        if instret < self.instret() || self.ended.is_some() {
            self.restore(self.last_checkpoint(|c| c.instret <= instret))?;
        }
        loop {
            let have = self.instret();
            if have >= instret {
                return Ok(Halt::Reached);
            }
            // Every executed instruction retires at most one.
            let h = self.forward(Some(self.position() + (instret - have)), false, &mut || {
                false
            })?;
            if h != Halt::Reached {
                return Ok(h);
            }
        }
    }

    /// Moves to the first position at or after virtual time `ns` (an idle machine
    /// jumps over it: the position after the jump).
    pub fn seek_time(&mut self, ns: u64) -> Result<Halt> {
        self.movable()?;
        if ns < self.now().as_ns() || self.ended.is_some() {
            self.restore(self.last_checkpoint(|c| c.virtual_ns <= ns))?;
        }
        if self.now().as_ns() >= ns {
            return Ok(Halt::Reached);
        }
        let cycle = self
            .m
            .engine
            .clock
            .count_at_or_after(VirtualTime::from_ns(ns));
        self.m.engine.pause_cycle = Some(cycle);
        let h = self.forward(None, false, &mut || false);
        self.m.engine.pause_cycle = None;
        h
    }

    /// One instruction back (`reverse-stepi`).
    pub fn reverse_step(&mut self) -> Result<Halt> {
        let pos = self.position();
        // No history (a world's node), or at its start.
        if self.checkpoints.first().is_none_or(|c| pos <= c.executed) {
            return Ok(Halt::HistoryStart);
        }
        self.seek(pos - 1)?;
        Ok(Halt::Reached)
    }

    /// Back to the previous breakpoint or watchpoint hit (`reverse-continue`), or to the
    /// beginning of the history when there is none.
    pub fn reverse_continue(&mut self) -> Result<Halt> {
        if self.checkpoints.is_empty() {
            return Ok(Halt::HistoryStart);
        }
        self.scanning = true;
        let r = self.reverse_scan();
        self.scanning = false;
        r
    }

    fn reverse_scan(&mut self) -> Result<Halt> {
        let mut end = self.position();
        let count = self.checkpoints.len();
        for i in (0..count).rev() {
            let start = self.checkpoints[i].executed;
            if start >= end {
                continue;
            }
            self.restore(i)?;
            self.refresh_watches();
            // Every hit in [start, end): the last one is where to go.
            let mut last = None;
            loop {
                let h = self.forward(Some(end), true, &mut || false)?;
                let pos = self.position();
                match h {
                    Halt::Breakpoint | Halt::Watch(_) if pos < end => last = Some((pos, h)),
                    _ => break,
                }
            }
            if let Some((pos, h)) = last {
                self.seek(pos)?;
                if let Halt::Watch(_) = h {
                    self.refresh_watches();
                }
                return Ok(h);
            }
            end = start;
        }
        self.seek(self.checkpoints.first().map_or(0, |c| c.executed))?;
        Ok(Halt::HistoryStart)
    }

    /// Ends the run here (gdb's `kill`).
    pub fn kill(&mut self) {
        if self.ended.is_none() {
            self.ended = Some(Err(WioError::Debugger(DebuggerError::Killed {
                at_ns: self.now().as_ns(),
                retired: Some(self.instret()),
            })));
        }
    }

    /// Ends the run: runs it to its end if it has not ended (without breakpoints), then
    /// builds the summary and writes the trace file.
    pub fn finish(mut self) -> RunResult {
        let outcome = loop {
            if let Some(o) = self.ended.take() {
                break o;
            }
            match self.forward(None, false, &mut || false) {
                Ok(_) => {}
                Err(e) => break Err(e),
            }
        };
        let cfg = self.plan.cfg.clone();
        let until = self.until_hit.clone();
        // Restored checkpoints already carry the run's origin (see `restore`).
        let mut result = self
            .m
            .finish(&cfg, outcome, self.plan.wall, until.as_deref());
        if let (Some(log), Some(path)) = (&self.log, &cfg.trace) {
            if let Err(source) = std::fs::write(path, log.contents()) {
                result.outcome = Err(WioError::Output {
                    what: "trace",
                    path: path.clone(),
                    source,
                });
            }
        }
        result
    }
}

#[cfg(test)]
mod tests;
