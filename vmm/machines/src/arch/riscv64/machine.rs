//! One riscv64 machine on wio's interpreter: RAM, the device tree, kernel and initrd,
//! the hart on its engine, the bus of devices, SBI, and the run loop, behind the
//! [`Machine`] interface.
//!
//! Time is the hart's cycle count read through the machine's clock (see `clock`: it may
//! drift by a seeded ppm); WFI jumps it to the next timer deadline or device event, so
//! idle time costs nothing.

use super::boot::BootImage;
use super::bus::{Power, RvBus, TestRequest};
use super::clock;
use super::engine::RiscvEngine;
use super::layout;
use super::sbi::{self, SbiEffect};
use super::upsets::fire_due;
use crate::engine::{CpuEngine, Exit};
use crate::error::InternalError;
use crate::error::{CrashError, ResetDevice};
use crate::error::{Result, WioError};
use crate::faults::{self, plan::Targets};
use crate::machine::console::Console;
use crate::machine::finish::{finish_run, Counts, Parts};
use crate::machine::noise::{Stalls, TimerNoise};
use crate::machine::novelty::{Mark, Observed, Signal};
use crate::machine::{sdk, Arch, LearnedCode, LoadedSnapshot, Machine, RunConfig, RunResult, Stop};
use crate::promises::report::Promises;
use crate::promises::Ledger;
use crate::snapshot::{Meta, Snapshot};
use crate::summary::RestoredFrom;
use crate::trace::fold;
use serde_json::json;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;
use wio_clock::{InstructionClock, VirtualTime};
use wio_riscv::Hart;
use wio_scheduler::RunSeed;
use wio_virtio_devices::Frame;

/// Kernel arguments used when `--cmdline` is not given.
/// ASLR stays on: its randomness comes from the device tree's rng-seed, so it is a function
/// of the seed like every other guest-visible value.
pub const DEFAULT_CMDLINE: &str =
    "console=ttyS0 earlycon=sbi kfence.sample_interval=0 panic=-1 random.trust_cpu=off";

/// Virtual ns a run slice may last before the machine yields to the driver (console
/// watches, snapshot points, limits).
const SLICE_NS: u64 = 20_000_000;

/// What a step leaves for the next one, so that a step boundary (where snapshots and a
/// guided exploration's moments are kept) lies between what the guest did and the future
/// that follows: a moment kept there gives each child its own of that future.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Pending {
    /// Nothing: the hart runs.
    #[default]
    None,
    /// The hart stopped at WFI (or an SBI suspend): the next step idles it (what the idle
    /// time brings: device completions, their random bytes, the timer).
    Idle,
    /// The hart stopped for a device event that is due: the next step fires it (a
    /// completion and the bytes it hands out, drawn then from the device's streams).
    Events,
}

/// One riscv64 machine: the hart on its engine, the devices, the console and the counters.
pub struct RvMachine {
    pub(super) engine: RiscvEngine,
    pub(super) bus: RvBus,
    pub(super) console: Console,
    pub(super) exits: BTreeMap<&'static str, u64>,
    pub(super) idle_ns: u64,
    /// The timer interrupt's seeded extra latency.
    pub(super) noise: TimerNoise,
    /// Where the running CPU stalls (seeded).
    pub(super) stalls: Stalls,
    /// What the last step left for the next (see [`Pending`]).
    pub(super) pending: Pending,
    /// The seed the run has now (the snapshot's, or the one it was re-keyed with).
    pub(super) seed: u64,
    /// What snapshots of this machine say it is (time, seed and reason filled in per snapshot).
    pub(super) meta: Meta,
    /// The snapshot this machine was restored from.
    pub(super) restored_from: Option<RestoredFrom>,
    /// What it boots, kept for a boot after a crash (a restored machine reads it from the
    /// snapshot's paths when it first needs it).
    pub(super) image: Option<Arc<BootImage>>,
    /// How many times it has booted (1 + restarts).
    pub(super) boots: u32,
    /// Instructions retired by the boots before this one.
    pub(super) instret_before: u64,
    /// Virtual ns the hart was stopped by node faults.
    pub(super) stopped_ns: u64,
    /// What the guest's programs promised (the `wio.sdk` channel).
    pub(super) promises: Ledger,
    /// End the run at the first violated `always` promise.
    pub(super) stop_on_violation: bool,
    /// Idle at the limit it was given, waiting for this time (its timer or next device
    /// event; MAX: only a frame from outside can wake it): see [`Machine::parked_until`].
    pub(super) parked: Option<VirtualTime>,
    /// The end of the slice a debugger stopped in the middle of: the next step runs on
    /// to it, so a debugged run's slices (and the console lines and events they flush)
    /// are those of the run without a debugger.
    pub(super) slice_until: Option<VirtualTime>,
    /// The last step stopped for a debugger (see [`RiscvEngine::pause_at`]) with the
    /// slice half run: nothing of the step's end (events, console, promises) was done.
    pub(super) debug_paused: bool,
    /// The promise firsts and guidance watermarks of the run not yet taken, when a guided
    /// exploration observes it
    /// ([`Machine::observe`]; not part of the machine's state).
    pub(super) marks: Option<Observed>,
    /// The layers a restored machine's guest memory is a private view of, until a power
    /// cut gives it new memory: a guided exploration's moment keeps only what the machine
    /// wrote over them (see [`RvMachine::keep_moment`]).
    pub(super) memory_view: Option<crate::memory::layers::Layers>,
}

impl RvMachine {
    /// Runs the hart to its next exit, at most [`SLICE_NS`] and never past `limit`, and
    /// serves the exit.
    fn step(&mut self, limit: VirtualTime) -> Stop {
        if self.bus.power != Power::On {
            self.parked = None;
            self.pending = Pending::None;
            return self.step_unpowered(limit);
        }
        // Parked until it runs again: a slow clock's last cycle before the limit may sit
        // just short of it, with nothing left to run there.
        if self.engine.hart.cycles() < self.engine.clock.count_before(limit) {
            self.parked = None;
        }
        self.debug_paused = false;
        match std::mem::take(&mut self.pending) {
            Pending::None => {}
            Pending::Idle => {
                let (clk, hart, bus) = (self.engine.clock, &mut self.engine.hart, &mut self.bus);
                let before = self.idle_ns;
                if let Some(e) = idle(&clk, hart, bus, &mut self.idle_ns, limit, &mut self.parked) {
                    return Stop::End(Err(e));
                }
                self.woke(self.idle_ns - before);
                return Stop::Yield;
            }
            Pending::Events => {
                let hart = &mut self.engine.hart;
                let now = clock::now(&self.engine.clock, hart).as_ns();
                fire_due(hart, &mut self.bus, now);
                return Stop::Yield;
            }
        }
        if let Some(stop) = self.stall_step(limit) {
            return stop;
        }
        let until = self
            .slice_until
            .take()
            .unwrap_or_else(|| self.engine.now().saturating_add_ns(SLICE_NS))
            .min(limit)
            .min(self.stall_deadline());
        self.engine.set_deadline(until.as_ns());
        let exit = match self.engine.run(&mut self.bus) {
            Ok(Exit::Debug) => {
                self.slice_until = Some(until);
                self.debug_paused = true;
                return Stop::Yield;
            }
            Ok(exit) => exit,
            Err(e) => return Stop::End(Err(e)),
        };
        let bus = &mut self.bus;
        let console = &mut self.console;
        let clk = self.engine.clock;
        let hart = &mut self.engine.hart;
        let now = clock::now(&clk, hart).as_ns();
        if bus.events.peek_time().is_some_and(|t| t <= now) {
            if matches!(exit, Exit::Budget) && hart.cycles() < clk.count_before(limit) {
                // The hart stopped for a device event: the step ends before it fires.
                // (At the limit it fires now: what is due there has happened when the run
                // stops there.)
                self.pending = Pending::Events;
            } else {
                fire_due(hart, bus, now);
            }
        }
        let out = bus.uart.take_output();
        console.push(&out, now, &mut bus.trace);
        if let Some(request) = bus.test_request.take() {
            console.flush_line(now, &mut bus.trace);
            bus.trace.event(
                now,
                "test-device",
                json!({ "request": format!("{request:?}") }),
            );
            return match request {
                TestRequest::PowerOff(0) => Stop::End(Ok(console.status.unwrap_or(0))),
                TestRequest::PowerOff(code) => Stop::End(Ok(code)),
                TestRequest::Reset => {
                    Stop::End(Err(WioError::GuestCrash(CrashError::RebootRequest {
                        device: ResetDevice::TestDevice,
                        pc: hart.pc,
                    })))
                }
            };
        }
        match exit {
            Exit::TimerSet => {
                *self.exits.entry("mtimecmp").or_insert(0) += 1;
                let value = hart.timecmp;
                arm_timer(&clk, hart, &mut self.noise, value);
            }
            Exit::Budget => {
                // At the last cycle at or before the limit (the limit itself unless a
                // slow clock's cycle steps over it).
                if hart.cycles() >= clk.count_before(limit) {
                    return Stop::Limit;
                }
            }
            Exit::Halt => {
                *self.exits.entry("wfi").or_insert(0) += 1;
                self.pending = Pending::Idle;
            }
            Exit::Hypercall => {
                *self.exits.entry("sbi").or_insert(0) += 1;
                let (call, effect) = sbi::handle(hart);
                bus.trace
                    .fold(fold::SBI_CALL, call.eid, call.fid, call.error as u64);
                match effect {
                    SbiEffect::None => {}
                    SbiEffect::Console(bytes) => console.push(&bytes, now, &mut bus.trace),
                    SbiEffect::SnapshotHere(tag) => return Stop::GuestSnapshot(Some(tag)),
                    SbiEffect::SetTimer(value) => arm_timer(&clk, hart, &mut self.noise, value),
                    SbiEffect::Suspend => self.pending = Pending::Idle,
                    SbiEffect::Shutdown { failure } => {
                        console.flush_line(now, &mut bus.trace);
                        return Stop::End(Ok(console.status.unwrap_or(u32::from(failure))));
                    }
                    SbiEffect::Reboot => {
                        return Stop::End(Err(WioError::GuestCrash(CrashError::RebootRequest {
                            device: ResetDevice::SbiSystemReset,
                            pc: hart.pc,
                        })))
                    }
                }
            }
            other => {
                return Stop::End(Err(WioError::Invariant(InternalError::RiscvExit {
                    exit: format!("{other:?}"),
                })))
            }
        }
        Stop::Yield
    }
}

impl Machine for RvMachine {
    fn seed(&self) -> u64 {
        self.seed
    }

    fn now(&self) -> VirtualTime {
        self.engine.now()
    }

    fn run_until(&mut self, limit: VirtualTime) -> Stop {
        let stop = self.step(limit);
        if self.debug_paused {
            return stop;
        }
        let bus = &mut self.bus;
        let setup_before = self.promises.setup_complete_ns;
        // Two channels may carry promises: the virtio console's `wio.sdk` port, and the
        // promise port of M-mode guests. The run's end wins over setup-complete.
        let mut drained = None;
        if let Some(console) = bus.virtio.console_mut() {
            drained = sdk::drain(
                console,
                &mut self.promises,
                &mut bus.trace,
                self.stop_on_violation,
                self.marks.as_mut(),
            );
        }
        if let Some(port) = bus.sdk_port.as_mut() {
            let lines = port.take_lines();
            if !lines.is_empty() {
                let d = sdk::note_lines(
                    lines,
                    &mut self.promises,
                    &mut bus.trace,
                    self.stop_on_violation,
                    self.marks.as_mut(),
                );
                if !matches!(drained, Some(Stop::End(_))) {
                    drained = d.or(drained);
                }
            }
        }
        if let (None, Some(t)) = (setup_before, self.promises.setup_complete_ns) {
            // A fault profile counted from setup-complete draws its faults now.
            let has = Targets {
                disk: bus.virtio.block_mut().is_some(),
                node: true,
                ram: true,
            };
            let seed = RunSeed(self.seed);
            if let Some(r) =
                faults::on_setup_complete(&mut bus.faults, seed, t, has, &mut bus.trace)
            {
                bus.replace_fault_events(&r);
            }
        }
        match (drained, stop) {
            (_, Stop::End(outcome)) => Stop::End(outcome),
            (Some(Stop::End(e)), _) => Stop::End(e),
            (Some(Stop::SetupComplete), Stop::Yield) => Stop::SetupComplete,
            (_, stop) => stop,
        }
    }

    fn console(&mut self) -> &mut Console {
        &mut self.console
    }

    fn parked_until(&self) -> Option<VirtualTime> {
        self.parked
    }

    fn take_frames(&mut self) -> Vec<Frame> {
        self.bus.virtio.take_frames()
    }

    fn deliver_frame(&mut self, frame: Frame) -> Result<()> {
        let now = self.now().as_ns();
        let next = self
            .bus
            .virtio
            .deliver_frame(frame, now)
            .map_err(|source| crate::error::WorldError::Port { source })?;
        self.bus.schedule(next);
        Ok(())
    }

    fn quiet_faults(&mut self, windows: &[(u64, u64)]) {
        self.bus.quiet = windows.to_vec();
    }

    fn take_composer_lines(&mut self) -> Vec<wio_virtio_devices::console::Line> {
        self.bus
            .virtio
            .console_mut()
            .map_or_else(Vec::new, |c| c.take_composer_lines())
    }

    fn send_composer(&mut self, bytes: &[u8]) -> bool {
        let now = self.now().as_ns();
        let (took, next) = self.bus.virtio.send_composer(bytes, now);
        self.bus.schedule(next);
        took
    }

    fn snapshot(&mut self, reason: String) -> Result<Snapshot> {
        self.capture(reason)
    }

    fn moment(&mut self, cfg: &RunConfig) -> Result<Box<dyn LoadedSnapshot>> {
        self.keep_moment(cfg)
    }

    fn learned_code(&self) -> Option<LearnedCode> {
        Some(LearnedCode(Box::new(self.engine.hart.learned_code())))
    }

    fn observe(&mut self, signals: &[Signal]) {
        if signals.contains(&Signal::Console) {
            self.console.observe_shapes();
        }
        Observed::watch(&mut self.marks, signals);
        if signals.contains(&Signal::Coverage) && self.engine.hart.coverage().is_none() {
            // A restore from a moment brings its counts; anything else starts from none.
            self.engine
                .hart
                .set_coverage(Some(wio_riscv::Coverage::default()));
        }
    }

    fn take_marks(&mut self) -> Vec<Mark> {
        let mut marks = Observed::take(&mut self.marks);
        marks.extend(self.console.take_shape_marks());
        marks.extend(self.engine.hart.take_coverage().into_iter().map(Mark::edge));
        marks
    }

    fn finish(
        self: Box<Self>,
        cfg: &RunConfig,
        outcome: Result<u32>,
        wall: Instant,
        until: Option<&str>,
    ) -> RunResult {
        let m = *self;
        if let Some(view) = &m.memory_view {
            view.learn_written(m.engine.hart.ram.bytes());
        }
        let now = m.now().as_ns();
        let instret = m.instret_before + m.engine.hart.instret();
        let mut exits = m.exits;
        exits.insert("mmio", m.bus.mmio_accesses);
        let mut bus = m.bus;
        let applied = bus.faults.applied().to_vec();
        let mut channel = bus
            .virtio
            .console_mut()
            .map(|c| c.stats.clone())
            .unwrap_or_default();
        // Lines the bare-metal promise port had to drop count with the channel's.
        if let Some(port) = &bus.sdk_port {
            channel.dropped_lines += port.dropped_lines;
        }
        let mut console = m.console;
        finish_run(
            cfg,
            now,
            outcome,
            until,
            json!({ "instret": instret }),
            Parts {
                console: &mut console,
                trace: &mut bus.trace,
                devices: bus.virtio.devices(),
            },
            Counts {
                seed: m.seed,
                arch: Arch::Riscv64,
                exits,
                // The interpreter does not count the interrupts it takes.
                interrupts: None,
                instructions: Some(instret),
                idle_ns: m.idle_ns,
                restored_from: m.restored_from,
                host: "interpreter",
                isa: Some(m.engine.hart.isa())
                    .filter(|i| !i.is_base())
                    .map(|i| i.to_string()),
                warnings: Vec::new(),
                preemption: None,
                wall,
                faults: applied,
                restarts: m.boots.saturating_sub(1),
                stopped_ns: m.stopped_ns,
                promises: Some(Promises::new(&m.promises, channel)),
            },
        )
    }
}

/// Sets the timer the guest just programmed (SBI set_timer, or an M-mode guest's CLINT
/// mtimecmp) with the machine's seeded latency: the interrupt becomes pending that long
/// after `time` reaches `value`.
pub(super) fn arm_timer(
    clk: &InstructionClock,
    hart: &mut Hart,
    noise: &mut TimerNoise,
    value: u64,
) {
    if value != u64::MAX {
        let target = value.saturating_mul(layout::CYCLES_PER_TICK);
        // The guest's interval is in its (drifting) cycles; the latency, like device
        // events, in virtual time.
        let interval = clk.ns_of(target.saturating_sub(hart.cycles()));
        let delay = noise.delay_ns(interval);
        hart.set_timer(value, clk.count_of(delay));
    }
}

/// WFI or suspend: jump the clock to the timer deadline or the next device event, but
/// not past `limit` (a machine never runs past the limit it was given; a hart woken
/// early by it runs on from its WFI, which the architecture allows). Returns an error when
/// nothing can ever wake the hart.
fn idle(
    clk: &InstructionClock,
    hart: &mut Hart,
    bus: &mut RvBus,
    idle_ns: &mut u64,
    limit: VirtualTime,
    parked: &mut Option<VirtualTime>,
) -> Option<WioError> {
    let external = bus.plic.interrupt_pending();
    if hart.pending_interrupt_with(external).is_some() || external {
        return None;
    }
    // In cycles: the timer fires on its exact cycle, a device event on the first cycle
    // at or after its time.
    let timer = hart.timer_deadline();
    let device = bus
        .events
        .peek_time()
        .map_or(u64::MAX, |t| clk.count_at_or_after(VirtualTime::from_ns(t)));
    let wake = timer.min(device);
    if wake == u64::MAX && bus.virtio.has_port() {
        // Only a frame from another machine can wake it: park at the limit.
        clock::idle_until(clk, hart, u64::MAX, limit);
        *parked = Some(VirtualTime::MAX);
        return None;
    }
    if wake == u64::MAX {
        return Some(WioError::GuestCrash(CrashError::WaitsForever {
            pc: hart.pc,
        }));
    }
    let skipped = clock::idle_until(clk, hart, wake, limit);
    let now = clock::now(clk, hart).as_ns();
    if skipped > 0 {
        *idle_ns += skipped;
        bus.trace.event(now, "wfi", json!({ "idle_ns": skipped }));
    }
    fire_due(hart, bus, now);
    *parked = parked_until(clk, hart, bus, limit);
    None
}

/// Where a hart idle at `limit` would wake by itself (after the events due now fired):
/// None when it has an interrupt to take or something due by the limit.
fn parked_until(
    clk: &InstructionClock,
    hart: &Hart,
    bus: &RvBus,
    limit: VirtualTime,
) -> Option<VirtualTime> {
    let external = bus.plic.interrupt_pending();
    if external || hart.pending_interrupt_with(external).is_some() {
        return None;
    }
    let timer = clk.time_at(hart.timer_deadline());
    let device = bus
        .events
        .peek_time()
        .map_or(VirtualTime::MAX, VirtualTime::from_ns);
    let wake = timer.min(device);
    (wake > limit).then_some(wake)
}
