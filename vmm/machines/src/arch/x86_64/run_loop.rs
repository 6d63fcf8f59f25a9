//! The x86-64 run loop, one step at a time: engine exit → device handling → clock
//! charge → due events → console → interrupt injection at the next step. Halting jumps
//! the clock to the next event. The machine calls [`step`] until it says the run ended;
//! between two steps nothing is half done, so snapshots are taken there.

use super::platform::{GuestStop, Platform};
use crate::engine::{CpuEngine, Exit};
use crate::error::InternalError;
use crate::error::{CrashError, NondeterminismError, Rip};
use crate::error::{Result, WioError};
use crate::machine::console::Console;
use serde_json::json;
use std::collections::BTreeMap;
use wio_clock::{CostModel, ExitCost, VirtualTime};

/// What the loop counted.
#[derive(Debug, Clone, Default)]
pub struct RunStats {
    /// Exits by kind name.
    pub exits: BTreeMap<&'static str, u64>,
    /// Interrupts injected.
    pub interrupts: u64,
    /// Virtual ns skipped while the guest halted.
    pub idle_ns: u64,
    /// Where the last step left a halted guest that reached the step's limit with nothing
    /// due before it: the time of its next event (`u64::MAX`: none; only a frame from
    /// outside can wake it). None after any other step. Not saved: a restored machine has
    /// not stepped yet.
    pub parked: Option<u64>,
}

/// What one step came to.
#[derive(Debug)]
pub enum Step {
    /// The guest runs on.
    Continue,
    /// The engine stopped for a debugger between two instructions: nothing was counted,
    /// charged or handled; the next step (with `after_debug`) goes on as if it had not.
    Debug,
    /// The run ended: the status the guest wrote to the debug-exit port, or why it failed.
    End(Result<u32>),
}

/// Runs `engine` on `platform` to its next exit and serves it; a halted guest's clock
/// jumps to the next event, but not past `limit`. `watchdog_ms` is the engine's wall-time
/// limit without an exit, for the message when it fires.
#[allow(clippy::too_many_arguments)]
pub fn step(
    engine: &mut dyn CpuEngine,
    platform: &mut Platform,
    console: &mut Console,
    stats: &mut RunStats,
    cost: &CostModel,
    watchdog_ms: u64,
    limit: VirtualTime,
    after_debug: bool,
) -> Step {
    match step_inner(
        engine,
        platform,
        console,
        stats,
        cost,
        watchdog_ms,
        limit,
        after_debug,
    ) {
        Ok(Inner::Ran) => Step::Continue,
        Ok(Inner::Debug) => Step::Debug,
        Ok(Inner::Ended(status)) => Step::End(Ok(status)),
        Err(e) => Step::End(Err(e)),
    }
}

/// `WIO_DEBUG_EXITS=1`: every exit (kind, RIP, virtual time) and every injected interrupt
/// (vector, RIP) on stderr, to find where two runs of one seed part (a debugging aid: slow).
pub(super) fn debug_exits() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("WIO_DEBUG_EXITS").is_some_and(|v| v == "1"))
}

/// What [`step_inner`] came to.
enum Inner {
    Ran,
    Debug,
    Ended(u32),
}

/// Moves the guest's console output to `console` (raising COM1's interrupt as the UART asks).
pub fn drain_console(platform: &mut Platform, console: &mut Console) {
    let out = platform.take_console_output();
    let now = platform.clock.now_ns();
    console.push(&out, now, &mut platform.trace);
}

#[allow(clippy::too_many_arguments)]
fn step_inner(
    engine: &mut dyn CpuEngine,
    platform: &mut Platform,
    console: &mut Console,
    stats: &mut RunStats,
    cost: &CostModel,
    watchdog_ms: u64,
    limit: VirtualTime,
    after_debug: bool,
) -> Result<Inner> {
    stats.parked = None;
    // Deliver a pending interrupt at a point the guest's execution defines (not where a
    // debugger stopped it: that point is not one of the run's exits).
    if !after_debug {
        if platform.pic.has_pending() {
            if engine.interrupt_ready() {
                if let Some(vector) = platform.pic.acknowledge() {
                    if debug_exits() {
                        let rip = engine.program_counter().unwrap_or(0);
                        eprintln!("wio-debug: inject {vector} rip {rip:#x}");
                    }
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
    }

    let exit = engine.run(platform)?;
    if debug_exits() {
        let rip = engine.program_counter().unwrap_or(0);
        eprintln!(
            "wio-debug: exit {exit:?} rip {rip:#x} t {}",
            platform.clock.now_ns()
        );
    }
    if exit == Exit::Debug {
        return Ok(Inner::Debug);
    }
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
        Exit::PortIo | Exit::Mmio | Exit::InterruptWindow | Exit::Budget => {}
        Exit::Hypercall | Exit::TimerSet => {
            return Err(WioError::Invariant(InternalError::X86Exit {
                exit: format!("{exit:?}"),
                near: rip(engine),
            }))
        }
        Exit::Debug => return Ok(Inner::Debug),
        Exit::Halt if engine.halted_for_good() => {
            // Halted with interrupts off: the machine is off for good. Linux halts so
            // when it powers off without ACPI (`poweroff -f`, `reboot: System halted`).
            drain_console(platform, console);
            return Ok(power_off(
                platform,
                console,
                engine,
                "halted with interrupts disabled",
            ));
        }
        Exit::Halt => {
            if !platform.pic.has_pending() {
                // A machine on a world's switch halted with nothing queued waits for a frame.
                let next = platform
                    .events
                    .peek_time()
                    .or(platform.has_port().then_some(u64::MAX));
                match next {
                    Some(t) => {
                        let skipped = platform.clock.advance_to(t.min(limit.as_ns()));
                        stats.idle_ns += skipped;
                        if t > limit.as_ns() {
                            stats.parked = Some(t);
                        }
                        let now = platform.clock.now_ns();
                        platform
                            .trace
                            .event(now, "hlt", json!({ "idle_ns": skipped }));
                    }
                    None => {
                        return Err(WioError::GuestCrash(CrashError::HaltsForever {
                            near: rip(engine),
                        }));
                    }
                }
            }
        }
        Exit::Shutdown => {
            return Err(WioError::GuestCrash(CrashError::TripleFault {
                near: rip(engine),
            }))
        }
        Exit::Stalled(_) => {
            return Err(WioError::Nondeterminism(NondeterminismError::NoExit {
                watchdog_ms,
                near: rip(engine),
            }))
        }
        Exit::Crash(why) => {
            return Err(WioError::GuestCrash(CrashError::Engine {
                why,
                near: rip(engine),
            }))
        }
    }

    platform.fire_due_events();
    drain_console(platform, console);
    match platform.stop {
        Some(GuestStop::Status(s)) => Ok(Inner::Ended(s)),
        // ACPI S5: Linux powering off through the FADT's PM1a control block.
        Some(GuestStop::PowerOff) => Ok(power_off(
            platform,
            console,
            engine,
            "ACPI S5 (PM1a control)",
        )),
        Some(GuestStop::Reset) => Err(WioError::GuestCrash(CrashError::CpuReset {
            near: rip(engine),
        })),
        None => Ok(Inner::Ran),
    }
}

/// The guest switched the machine off (`how`): the console's last line and a `power-off`
/// event go to the trace, and the run ends with the status the guest's init reported
/// (`wio-init: done status=N`), else 0.
fn power_off(
    platform: &mut Platform,
    console: &mut Console,
    engine: &mut dyn CpuEngine,
    how: &str,
) -> Inner {
    let now = platform.clock.now_ns();
    console.flush_line(now, &mut platform.trace);
    platform.trace.event(
        now,
        "power-off",
        json!({ "how": how, "at": rip(engine).to_string() }),
    );
    Inner::Ended(console.status.unwrap_or(0))
}

fn rip(engine: &mut dyn CpuEngine) -> Rip {
    Rip(engine.program_counter())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::ExitHandler;
    use crate::machine::console::Echo;
    use crate::trace::Trace;
    use wio_clock::VirtualTsc;
    use wio_scheduler::RunSeed;

    /// One step of a scripted guest.
    #[derive(Debug, Clone, Copy)]
    enum Step {
        Out(u16, u8),
        Hlt,
        Cli,
        Sti,
        Exit(u8),
    }

    /// A CPU engine that replays a script, so the loop's timing logic is tested without KVM.
    struct ScriptedGuest {
        script: Vec<Step>,
        pc: usize,
        interrupts_enabled: bool,
        window_wanted: bool,
        windows_requested: u32,
        /// (vector, index of the step before which it was taken).
        taken: Vec<(u8, usize)>,
    }

    impl ScriptedGuest {
        fn new(script: Vec<Step>) -> Self {
            ScriptedGuest {
                script,
                pc: 0,
                interrupts_enabled: true,
                window_wanted: false,
                windows_requested: 0,
                taken: Vec::new(),
            }
        }
    }

    impl CpuEngine for ScriptedGuest {
        fn run(&mut self, io: &mut dyn ExitHandler) -> Result<Exit> {
            loop {
                let step = *self.script.get(self.pc).expect("script ran out");
                self.pc += 1;
                match step {
                    Step::Out(port, v) => {
                        io.pio_write(port, &[v]);
                        return Ok(Exit::PortIo);
                    }
                    Step::Hlt => return Ok(Exit::Halt),
                    Step::Cli => self.interrupts_enabled = false,
                    Step::Sti => {
                        self.interrupts_enabled = true;
                        if self.window_wanted {
                            return Ok(Exit::InterruptWindow);
                        }
                    }
                    Step::Exit(s) => {
                        io.pio_write(0x501, &[s]);
                        return Ok(Exit::PortIo);
                    }
                }
            }
        }
        fn interrupt_ready(&mut self) -> bool {
            self.interrupts_enabled
        }
        fn inject_interrupt(&mut self, vector: u8) -> Result<()> {
            assert!(self.interrupts_enabled);
            self.taken.push((vector, self.pc));
            Ok(())
        }
        fn request_interrupt_window(&mut self, wanted: bool) {
            if wanted && !self.window_wanted {
                self.windows_requested += 1;
            }
            self.window_wanted = wanted;
        }
        fn program_counter(&mut self) -> Option<u64> {
            Some(self.pc as u64)
        }
    }

    fn pic_init() -> Vec<Step> {
        vec![
            Step::Out(0x20, 0x11),
            Step::Out(0x21, 0x20),
            Step::Out(0x21, 0x04),
            Step::Out(0x21, 0x03), // auto-EOI: the script has no handler to send EOIs
            Step::Out(0x21, 0xfe),
        ]
    }

    fn run_script(script: Vec<Step>) -> (ScriptedGuest, Platform, RunStats, Result<u32>) {
        let mut guest = ScriptedGuest::new(script);
        let mut platform = Platform::new(
            0,
            64 << 20,
            VirtualTsc::new(1_000_000_000),
            RunSeed(1).stream("e"),
            crate::machine::noise::TimerNoise::new(
                crate::machine::noise::SchedNoise::Off,
                RunSeed(1),
            ),
            Trace::new(),
        );
        let mut stats = RunStats::default();
        let mut console = Console::new(Echo::Quiet, std::time::Instant::now());
        let r = loop {
            match step(
                &mut guest,
                &mut platform,
                &mut console,
                &mut stats,
                &CostModel::default(),
                1,
                VirtualTime::MAX,
                false,
            ) {
                super::Step::Continue | super::Step::Debug => {}
                super::Step::End(r) => break r,
            }
        };
        (guest, platform, stats, r)
    }

    #[test]
    fn halts_jump_the_clock_to_each_pit_tick() {
        let mut script = pic_init();
        script.extend([
            Step::Out(0x43, 0x34),
            Step::Out(0x40, 0xa9),
            Step::Out(0x40, 0x04),
        ]); // 1193: ~1 kHz
        script.extend([Step::Hlt; 5]);
        script.push(Step::Exit(0));
        let (guest, platform, stats, r) = run_script(script);
        assert_eq!(r.unwrap(), 0);
        assert_eq!(guest.taken.len(), 5);
        assert!(guest.taken.iter().all(|&(v, _)| v == 0x20));
        assert_eq!(stats.interrupts, 5);
        // The count's last byte was the 8th exit, seen at 7 charged exits × 1 µs; the 5th
        // tick is 5 periods later, and the final debug-exit write costs one more exit.
        let start = 7 * 1_000;
        let fifth = start + crate::devices::legacy::pit::ns_of_ticks(5 * 1193);
        assert_eq!(platform.clock.now_ns(), fifth + 1_000);
        assert_eq!(stats.exits.get("hlt"), Some(&5));
    }

    #[test]
    fn masked_interrupts_wait_for_the_window() {
        let mut script = pic_init();
        script.push(Step::Cli);
        script.extend([
            Step::Out(0x43, 0x30),
            Step::Out(0x40, 0x02),
            Step::Out(0x40, 0x00),
        ]); // one-shot, 2 input clocks
            // Busy port I/O with interrupts off moves the clock past the terminal count.
        script.extend([Step::Out(0x80, 0); 4]);
        script.push(Step::Sti);
        script.push(Step::Exit(7));
        let (guest, _, stats, r) = run_script(script);
        assert_eq!(r.unwrap(), 7);
        assert_eq!(
            guest.windows_requested, 1,
            "the loop asked for an interrupt window"
        );
        assert_eq!(stats.exits.get("irq_window"), Some(&1));
        // Taken right after STI, before the exit step.
        assert_eq!(guest.taken, vec![(0x20, guest.script.len() - 1)]);
    }

    #[test]
    fn halting_with_nothing_armed_is_a_crash() {
        let mut script = pic_init();
        script.push(Step::Hlt);
        let (_, _, _, r) = run_script(script);
        let e = r.unwrap_err();
        assert_eq!(e.exit_code(), crate::error::exit_code::GUEST_CRASH);
        assert!(e.to_string().contains("never wake up"), "{e}");
    }

    #[test]
    fn same_script_same_trace_hash() {
        let script = || {
            let mut s = pic_init();
            s.extend([
                Step::Out(0x43, 0x34),
                Step::Out(0x40, 0x10),
                Step::Out(0x40, 0x00),
            ]);
            s.extend([Step::Hlt; 20]);
            s.push(Step::Exit(0));
            s
        };
        let (_, a, _, _) = run_script(script());
        let (_, b, _, _) = run_script(script());
        assert_eq!(a.trace.hash_hex(), b.trace.hash_hex());
        assert!(a.trace.lines() > 20);
    }
}
