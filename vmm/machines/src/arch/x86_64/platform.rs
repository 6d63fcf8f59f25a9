//! The x86-64 PC platform: every port-I/O device on one bus, the virtual
//! clock they read, the event queue that times their interrupts, and the
//! trace that records what the guest saw.

use crate::devices::legacy::{
    acpi_pm::AcpiPm,
    debug_exit::{self, DEBUG_EXIT_PORT},
    i8042::I8042,
    paravirt::{self, Paravirt, Selector},
    pic::PicPair,
    pit::Pit,
    rtc::Rtc,
    serial::{com1_handles, Uart16550, COM1_BASE, COM1_IRQ},
};
use crate::devices::virtio_slots::{Scheduled, VirtioEvent, VirtioSlots};
use crate::devices::StateError;
use crate::engine::ExitHandler;
use crate::faults::inject::{Effect, Injector, Phase, Replaced};
use crate::faults::{self, plan::Targets};
use crate::machine::noise::TimerNoise;
use crate::machine::novelty::Observed;
use crate::machine::power::{trace_power_off, Power};
use crate::machine::{sdk, Stop};
use crate::promises::Ledger;
use crate::snapshot::persist::{self, StateError as PersistError, StateSections};
use crate::trace::{fold, Trace};
use serde_json::json;
use wio_clock::{VirtualClock, VirtualTsc};
use wio_scheduler::{EventId, EventQueue, RunSeed, Stream};
use wio_virtio_devices::console::ConsoleStats;
use wio_virtio_devices::{GuestMem, MmioTransport};

/// The POST diagnostic port: writes are accepted and ignored.
pub const POST_PORT: u16 = 0x80;

/// Timed events of the platform.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Event {
    /// PIT channel 0 reaches terminal count: raise IRQ 0.
    PitIrq,
    /// A virtio request completes or a device timer fires.
    Virtio(VirtioEvent),
    /// A planned fault starts or ends: (its index in the plan, which edge).
    Fault(usize, Phase),
}

/// Guest-physical base of the x86-64 virtio-mmio slots (above the largest RAM wio maps).
pub const VIRTIO_BASE: u64 = 0xd000_0000;
/// Size of one virtio-mmio slot.
pub const VIRTIO_SIZE: u64 = 0x1000;
/// PIC line of each virtio slot: rng, net, blk (or the promise channel without a disk)
/// on 5, 6 and 7, the promise channel after a disk on 11 (8 is the RTC's, 9 the ACPI SCI's,
/// 10 the VM generation ID's).
pub const VIRTIO_IRQS: [u8; MAX_VIRTIO_SLOTS] = [5, 6, 7, 11];
/// The most virtio slots a machine has (rng, net, blk, the promise channel).
pub const MAX_VIRTIO_SLOTS: usize = 4;

/// The PIC line of virtio slot `slot` (slots past [`MAX_VIRTIO_SLOTS`] are never attached).
fn virtio_irq(slot: usize) -> u8 {
    VIRTIO_IRQS[slot.min(MAX_VIRTIO_SLOTS - 1)]
}

/// Virtio slot `slot`: its register window and PIC line, as the command line
/// ([`virtio_cmdline`]) and the ACPI tables (an `LNRO0005` device in the DSDT) announce it.
pub fn virtio_slot(slot: usize) -> super::acpi::MmioDevice {
    super::acpi::MmioDevice {
        base: (VIRTIO_BASE + slot as u64 * VIRTIO_SIZE) as u32,
        size: VIRTIO_SIZE as u32,
        irq: u32::from(virtio_irq(slot)),
    }
}

/// The kernel argument announcing virtio slot `slot` to a Linux guest.
pub fn virtio_cmdline(slot: usize) -> String {
    let s = virtio_slot(slot);
    format!(
        "virtio_mmio.device={}K@{:#x}:{}",
        s.size >> 10,
        s.base,
        s.irq
    )
}

/// The faults an x86-64 machine takes: network, clock, disk faults with a disk, crashes and
/// pauses; not faults in RAM (upsets and stuck bits are the interpreter's: KVM runs the
/// guest on host memory wio cannot corrupt between two instructions).
pub fn fault_targets(disk: bool) -> Targets {
    Targets {
        disk,
        node: true,
        ram: false,
    }
}

/// Why the guest asked the run to end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GuestStop {
    /// The guest wrote a status to the debug-exit port.
    Status(u32),
    /// The guest pulsed the reset line (i8042 0xfe): a reboot or a panic.
    Reset,
    /// The guest entered ACPI S5 (soft off): Linux's ACPI power-off.
    PowerOff,
}

/// Counters of what the guest did, for the summary.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct IoCounters {
    /// Accesses to ports no device claims.
    pub unhandled_pio: u64,
    /// MMIO accesses (no MMIO devices on x86-64 yet).
    pub unhandled_mmio: u64,
}

/// The platform devices and the simulation state they share.
pub struct Platform {
    /// The 8259 pair.
    pub pic: PicPair,
    /// The 8254.
    pub pit: Pit,
    rtc: Rtc,
    com1: Uart16550,
    i8042: I8042,
    acpi_pm: AcpiPm,
    /// wio's paravirt port (whether a kernel announced itself is read at the end of a run).
    pub paravirt: Paravirt,
    entropy: Stream,
    /// The PIT interrupt's seeded extra latency.
    noise: TimerNoise,
    /// The run's fault plan and what of it happened.
    pub faults: Injector,
    /// Virtual time.
    pub clock: VirtualClock,
    /// The virtual TSC the paravirt port reports.
    pub tsc: VirtualTsc,
    /// Timed device events.
    pub events: EventQueue<Event>,
    pit_event: Option<EventId>,
    /// The run's trace.
    pub trace: Trace,
    /// A request from the guest to end the run.
    pub stop: Option<GuestStop>,
    /// What the guest did that no device handles.
    pub counters: IoCounters,
    /// The guest asked for a snapshot (paravirt selector "snapshot here") since the loop last looked.
    pub snapshot_request: bool,
    /// virtio-mmio devices by slot, once attached.
    virtio: Option<VirtioSlots>,
    /// Interrupt level of each slot, for edge detection on the PIC.
    virtio_levels: Vec<bool>,
    /// Whether the vCPU runs, as node faults leave it (the machine boots it again after a
    /// crash; see `power.rs`).
    pub power: Power,
}

/// The sections of an x86-64 snapshot that hold the platform, one per device or part, in
/// the order written; `virtio.N` (one per slot) follow `counters`.
pub mod section {
    pub const PIC: &str = "pic";
    pub const PIT: &str = "pit";
    pub const RTC: &str = "rtc";
    pub const COM1: &str = "com1";
    pub const I8042: &str = "i8042";
    pub const ACPI_PM: &str = "acpi-pm";
    pub const PARAVIRT: &str = "paravirt";
    pub const ENTROPY: &str = "entropy";
    pub const NOISE: &str = "noise";
    pub const FAULTS: &str = "faults";
    pub const CLOCK: &str = "clock";
    pub const EVENTS: &str = "events";
    pub const TRACE: &str = "trace";
    pub const COUNTERS: &str = "counters";
    pub const VIRTIO: &str = "virtio.";
    pub const VIRTIO_LEVELS: &str = "virtio-levels";
    /// Whether the vCPU runs (written only when it does not: paused, off or booting).
    pub const POWER: &str = "power";
    /// Every fixed section name of the platform.
    pub const ALL: [&str; 16] = [
        PIC,
        PIT,
        RTC,
        COM1,
        I8042,
        ACPI_PM,
        PARAVIRT,
        ENTROPY,
        NOISE,
        FAULTS,
        CLOCK,
        EVENTS,
        TRACE,
        COUNTERS,
        VIRTIO_LEVELS,
        POWER,
    ];
}

/// The platform's timed events as a snapshot keeps them: (virtual ns, sequence, event),
/// the next sequence number and which event is the PIT's.
#[derive(serde::Serialize, serde::Deserialize)]
struct EventsState {
    events: Vec<(u64, u64, Event)>,
    next_seq: u64,
    pit_event: Option<u64>,
}

fn le_value(data: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    let n = data.len().min(8);
    b[..n].copy_from_slice(&data[..n]);
    u64::from_le_bytes(b)
}

impl Platform {
    /// A platform at virtual time 0 with an RTC at `epoch_unix` and the given entropy stream.
    pub fn new(
        epoch_unix: i64,
        mem_bytes: u64,
        tsc: VirtualTsc,
        entropy: Stream,
        noise: TimerNoise,
        trace: Trace,
    ) -> Platform {
        Platform {
            pic: PicPair::default(),
            pit: Pit::default(),
            rtc: Rtc::new(epoch_unix, mem_bytes),
            com1: Uart16550::default(),
            i8042: I8042::default(),
            acpi_pm: AcpiPm::default(),
            paravirt: Paravirt::default(),
            entropy,
            noise,
            faults: Injector::default(),
            clock: VirtualClock::new(),
            tsc,
            events: EventQueue::new(),
            pit_event: None,
            trace,
            stop: None,
            counters: IoCounters::default(),
            snapshot_request: false,
            virtio: None,
            virtio_levels: Vec::new(),
            power: Power::On,
        }
    }

    /// Takes the run's fault plan and queues its starts and ends.
    pub fn plan_faults(&mut self, faults: Injector) {
        for (at, index, phase) in faults.events() {
            // A plan holds at most MAX_FAULTS faults, far below the queue's bound.
            self.events
                .push(at, Event::Fault(index, phase))
                .expect("platform event queue overflow");
        }
        self.faults = faults;
    }

    /// Swaps the events of faults a restore replaced (see `Injector::replace_future`):
    /// the old future faults' events leave the queue, the new ones' come in. The
    /// other events (the PIT's included) keep their places and ids.
    pub fn replace_fault_events(&mut self, r: &Replaced) {
        self.events
            .remove_where(|e| matches!(e, Event::Fault(index, _) if *index >= r.kept));
        for &(at, index, phase) in &r.events {
            // A plan holds at most MAX_FAULTS faults, far below the queue's bound.
            self.events
                .push(at, Event::Fault(index, phase))
                .expect("platform event queue overflow");
        }
    }

    /// The power is cut at `now`: the disk's unflushed writes go as `unflushed` says, every
    /// virtio transport is reset, and requests in flight die with the power (never
    /// performed, never completed). Device timers (the link, the peer) and the PIT's
    /// events go on; the boot after the cut resets the PC's devices.
    fn cut_power(&mut self, unflushed: wio_virtio_devices::Unflushed, now: u64) {
        let Some(v) = self.virtio.as_mut() else {
            return;
        };
        let cached = v.power_cut(unflushed);
        let dropped = self
            .events
            .remove_where(|e| matches!(e, Event::Virtio(VirtioEvent::Complete(..))));
        for slot in 0..self.virtio_levels.len() {
            self.update_virtio_line(slot);
        }
        trace_power_off(&mut self.trace, now, dropped, cached, unflushed);
    }

    /// The machine boots again after a power cut, on new memory `mem`: the PC's devices are
    /// as at power-on (the RTC keeps its date, the paravirt port what the kernel announced),
    /// the virtio devices (reset at the cut) use the new memory, and the PIT's next interrupt
    /// is dropped with the PIT's programming.
    pub fn power_on(&mut self, mem: GuestMem) {
        if let Some(id) = self.pit_event.take() {
            self.events.cancel(id);
        }
        self.pic = PicPair::default();
        self.pit = Pit::default();
        self.com1 = Uart16550::default();
        self.i8042 = I8042::default();
        self.acpi_pm = AcpiPm::default();
        self.stop = None;
        self.snapshot_request = false;
        if let Some(v) = self.virtio.as_mut() {
            v.set_memory(mem);
        }
        self.virtio_levels.fill(false);
        self.power = Power::On;
    }

    /// Takes the lines programs wrote on the promise channel since the last call into
    /// `ledger` (see [`sdk::drain`]); the stop the machine must report, if any. Nothing
    /// without a channel.
    pub fn drain_promises(
        &mut self,
        ledger: &mut Ledger,
        stop_on_violation: bool,
        marks: Option<&mut Observed>,
    ) -> Option<Stop> {
        let console = self.virtio.as_mut()?.console_mut()?;
        sdk::drain(console, ledger, &mut self.trace, stop_on_violation, marks)
    }

    /// Whether the machine has the promise channel (a virtio-console in its last slot).
    pub fn has_channel(&mut self) -> bool {
        self.virtio
            .as_mut()
            .is_some_and(|v| v.console_mut().is_some())
    }

    /// The promise channel's counters (zero without a channel).
    pub fn channel_stats(&mut self) -> ConsoleStats {
        self.virtio
            .as_mut()
            .and_then(VirtioSlots::console_mut)
            .map(|c| c.stats.clone())
            .unwrap_or_default()
    }

    /// Setup was declared complete at `now_ns`: a fault profile counted from then draws
    /// its faults with `seed` (see [`faults::on_setup_complete`]).
    pub fn on_setup_complete(&mut self, seed: RunSeed, now_ns: u64) {
        let has = fault_targets(
            self.virtio
                .as_mut()
                .is_some_and(|v| v.block_mut().is_some()),
        );
        if let Some(r) =
            faults::on_setup_complete(&mut self.faults, seed, now_ns, has, &mut self.trace)
        {
            self.replace_fault_events(&r);
        }
    }

    /// Whether its network device is a port of a world's switch (frames from other
    /// machines may arrive).
    pub fn has_port(&self) -> bool {
        self.virtio.as_ref().is_some_and(VirtioSlots::has_port)
    }

    /// How many virtio slots are attached.
    pub fn virtio_slots(&self) -> usize {
        self.virtio_levels.len()
    }

    /// Attaches virtio devices (slot i at VIRTIO_BASE + i * VIRTIO_SIZE) sharing `mem`.
    pub fn attach_virtio(&mut self, devices: Vec<MmioTransport>, mem: GuestMem) {
        assert!(
            devices.len() <= MAX_VIRTIO_SLOTS,
            "more virtio devices than PIC lines for them"
        );
        self.virtio_levels = vec![false; devices.len()];
        self.virtio = Some(VirtioSlots::new(devices, mem));
    }

    /// The trace and the attached virtio devices, borrowed together (a run's end needs both).
    pub fn trace_and_devices(&mut self) -> (&mut Trace, &[MmioTransport]) {
        let devices = self.virtio.as_ref().map_or(&[][..], VirtioSlots::devices);
        (&mut self.trace, devices)
    }

    fn virtio_slot(&self, addr: u64) -> Option<(usize, u64)> {
        let rel = addr.checked_sub(VIRTIO_BASE)?;
        let slot = (rel / VIRTIO_SIZE) as usize;
        (slot < self.virtio_levels.len()).then_some((slot, rel % VIRTIO_SIZE))
    }

    /// Raises the slot's PIC line on a rising edge of its interrupt level.
    fn update_virtio_line(&mut self, slot: usize) {
        let level = self
            .virtio
            .as_ref()
            .is_some_and(|v| v.interrupt_level(slot));
        if level && !self.virtio_levels[slot] {
            self.pic.raise(virtio_irq(slot));
        }
        self.virtio_levels[slot] = level;
    }

    fn schedule_virtio(&mut self, events: Scheduled) {
        for (due, ev) in events {
            // Devices bound their requests and timers: overflowing the queue is a wio bug.
            self.events
                .push(due, Event::Virtio(ev))
                .expect("platform event queue overflow");
        }
    }

    /// Re-plans channel 0's next interrupt after the guest reprogrammed the PIT.
    fn reschedule_pit(&mut self) {
        if let Some(id) = self.pit_event.take() {
            self.events.cancel(id);
        }
        let (mode, reload) = self.pit.channel0();
        let now = self.clock.now_ns();
        self.trace
            .event(now, "pit", json!({ "mode": mode, "reload": reload }));
        self.schedule_next_pit();
    }

    fn schedule_next_pit(&mut self) {
        if let Some(t) = self.pit.next_irq0() {
            let now = self.clock.now_ns();
            let due = t.max(now);
            let at = due.saturating_add(self.noise.delay_ns(due - now));
            // The queue holds a handful of events; overflowing it is a wio bug.
            let id = self
                .events
                .push(at, Event::PitIrq)
                .expect("platform event queue overflow");
            self.pit_event = Some(id);
        }
    }

    /// Fires every event due at the current virtual time, in (time, sequence) order.
    pub fn fire_due_events(&mut self) {
        while let Some(ev) = self.events.pop_due(self.clock.now_ns()) {
            match ev.event {
                Event::PitIrq => {
                    self.pit_event = None;
                    self.pic.raise(0);
                    self.pit.irq0_delivered();
                    self.schedule_next_pit();
                }
                Event::Virtio(event) => {
                    let now = self.clock.now_ns();
                    if let Some(v) = self.virtio.as_mut() {
                        let (slot, next) = v.fire(event, ev.time_ns, now, &mut self.trace);
                        self.schedule_virtio(next);
                        self.update_virtio_line(slot);
                    }
                }
                Event::Fault(index, phase) => {
                    let now = self.clock.now_ns();
                    let Some(v) = self.virtio.as_mut() else {
                        continue;
                    };
                    let effect = self.faults.fire(index, phase, now, v, &mut self.trace);
                    if let Effect::RtcStep(delta_s) = effect {
                        self.rtc.step(delta_s);
                    }
                    let (power, cut) = self.power.after(&effect);
                    if let Some(unflushed) = cut {
                        self.cut_power(unflushed, now);
                    }
                    self.power = power;
                }
            }
        }
    }

    /// The guest's frames that left through the network port since the last call.
    #[cfg_attr(
        not(test),
        allow(
            dead_code,
            reason = "the multi-machine simulation will call it; tested here"
        )
    )]
    pub fn take_frames(&mut self) -> Vec<wio_virtio_devices::Frame> {
        self.virtio
            .as_mut()
            .map_or_else(Vec::new, VirtioSlots::take_frames)
    }

    /// A frame from outside arrives at the network port at its time (not before now).
    #[cfg_attr(
        not(test),
        allow(
            dead_code,
            reason = "the multi-machine simulation will call it; tested here"
        )
    )]
    pub fn deliver_frame(
        &mut self,
        frame: wio_virtio_devices::Frame,
    ) -> Result<(), wio_virtio_devices::DeviceError> {
        let now = self.clock.now_ns();
        let v = self
            .virtio
            .as_mut()
            .ok_or(wio_virtio_devices::DeviceError::NoPort)?;
        let next = v.deliver_frame(frame, now)?;
        self.schedule_virtio(next);
        Ok(())
    }

    /// What the guest wrote to COM1 since the last call (and COM1's interrupt, if the UART
    /// asks for one).
    pub fn take_console_output(&mut self) -> Vec<u8> {
        let out = self.com1.take_output();
        if self.com1.take_irq() {
            self.pic.raise(COM1_IRQ);
        }
        out
    }

    /// The PIT interrupt's timing-noise level.
    pub fn noise_level(&self) -> crate::machine::noise::SchedNoise {
        self.noise.level()
    }

    /// Replaces the PIT interrupt's timing noise (a restore given another level).
    pub fn set_noise(&mut self, noise: TimerNoise) {
        self.noise = noise;
    }

    /// Writes the platform's state (the virtio devices included) into `out`, a section
    /// per device.
    pub fn save_sections(&self, out: &mut StateSections) -> Result<(), PersistError> {
        let virtio = match &self.virtio {
            Some(v) => v
                .save_states()
                .map_err(|e| PersistError::refused(section::VIRTIO, e))?,
            None => Vec::new(),
        };
        out.save(section::PIC, &self.pic)?;
        out.save(section::PIT, &self.pit)?;
        out.save(section::RTC, &self.rtc)?;
        out.save(section::COM1, &self.com1)?;
        out.save(section::I8042, &self.i8042)?;
        out.save(section::ACPI_PM, &self.acpi_pm)?;
        out.save(section::PARAVIRT, &self.paravirt)?;
        out.put(section::ENTROPY, &self.entropy.save())?;
        out.save(section::NOISE, &self.noise)?;
        out.save(section::FAULTS, &self.faults)?;
        out.put(section::CLOCK, &self.clock)?;
        out.put(
            section::EVENTS,
            &EventsState {
                events: self
                    .events
                    .iter()
                    .map(|(t, s, e)| (t, s, e.clone()))
                    .collect(),
                next_seq: self.events.next_seq(),
                pit_event: self.pit_event.map(|id| id.seq()),
            },
        )?;
        out.save(section::TRACE, &self.trace)?;
        out.put(section::COUNTERS, &self.counters)?;
        out.put_indexed(section::VIRTIO, &virtio)?;
        out.put(section::VIRTIO_LEVELS, &self.virtio_levels)?;
        if self.power != Power::On {
            out.put(section::POWER, &self.power)?;
        }
        Ok(())
    }

    /// Loads the platform's sections of a snapshot into this platform, built with the same
    /// devices attached. `reseed` re-keys every random stream (a branch with another seed).
    /// A section missing, unreadable or refused is named in the error.
    pub fn load_sections(
        &mut self,
        s: &StateSections,
        reseed: Option<wio_scheduler::RunSeed>,
    ) -> Result<(), PersistError> {
        let refused = |section: &str, e: StateError| PersistError::refused(section, e);
        let ev: EventsState = s.get(section::EVENTS)?;
        let events = EventQueue::from_parts(ev.events, ev.next_seq)
            .map_err(|e| refused(section::EVENTS, e.into()))?;
        let faults: Injector = persist::restore(s, section::FAULTS, ())?;
        let slots = self.virtio_levels.len();
        let virtio: Vec<wio_virtio_devices::TransportState> = s.indexed(section::VIRTIO)?;
        let levels: Vec<bool> = s.get(section::VIRTIO_LEVELS)?;
        if virtio.len() != slots || levels.len() != slots {
            return Err(refused(
                section::VIRTIO_LEVELS,
                StateError::SlotCount {
                    saved: virtio.len(),
                    here: slots,
                },
            ));
        }
        if let Some(index) = events.iter().find_map(|(_, _, e)| match e {
            Event::Fault(index, _) if !faults.has(*index) => Some(*index),
            _ => None,
        }) {
            return Err(refused(section::EVENTS, StateError::UnknownFault { index }));
        }
        if events.iter().any(|(_, _, e)| match e {
            Event::Virtio(VirtioEvent::Complete(slot, _, _) | VirtioEvent::Timer(slot, _)) => {
                *slot >= slots
            }
            Event::PitIrq | Event::Fault(..) => false,
        }) {
            return Err(refused(section::EVENTS, StateError::EmptySlot));
        }
        if let Some(v) = self.virtio.as_mut() {
            v.load_states(&virtio, reseed)
                .map_err(|e| refused(section::VIRTIO, e))?;
        }
        self.rtc = persist::restore(s, section::RTC, ())?;
        self.com1 = persist::restore(s, section::COM1, ())?;
        self.pic = persist::restore(s, section::PIC, ())?;
        self.pit = persist::restore(s, section::PIT, ())?;
        self.i8042 = persist::restore(s, section::I8042, ())?;
        self.acpi_pm = persist::restore(s, section::ACPI_PM, ())?;
        self.paravirt = persist::restore(s, section::PARAVIRT, ())?;
        self.entropy = Stream::resume(&s.get(section::ENTROPY)?, reseed);
        self.noise = persist::restore(s, section::NOISE, reseed)?;
        self.faults = faults;
        self.clock = s.get(section::CLOCK)?;
        self.events = events;
        self.pit_event = ev.pit_event.map(EventId::from_seq);
        let trace = std::mem::take(&mut self.trace);
        self.trace = persist::restore(s, section::TRACE, trace)?;
        self.counters = s.get(section::COUNTERS)?;
        self.virtio_levels = levels;
        self.power = s.optional(section::POWER)?.unwrap_or_default();
        Ok(())
    }

    fn pio_read_byte(&mut self, port: u16, now: u64) -> Option<u8> {
        if PicPair::handles(port) {
            Some(self.pic.read(port))
        } else if Pit::handles(port) {
            Some(self.pit.read(port, now))
        } else if Rtc::handles(port) {
            Some(self.rtc.read(port, now))
        } else if com1_handles(port) {
            Some(self.com1.read((port - COM1_BASE) as u8))
        } else if I8042::handles(port) {
            Some(self.i8042.read(port))
        } else if AcpiPm::handles(port) {
            Some(self.acpi_pm.read(port))
        } else {
            None
        }
    }

    fn pio_write_byte(&mut self, port: u16, value: u8, now: u64) -> bool {
        if PicPair::handles(port) {
            self.pic.write(port, value);
        } else if Pit::handles(port) {
            if self.pit.write(port, value, now) {
                self.reschedule_pit();
            }
        } else if Rtc::handles(port) {
            self.rtc.write(port, value);
        } else if com1_handles(port) {
            self.com1.write((port - COM1_BASE) as u8, value);
        } else if I8042::handles(port) {
            self.i8042.write(port, value);
            if self.i8042.reset_requested() {
                self.stop.get_or_insert(GuestStop::Reset);
            }
        } else if AcpiPm::handles(port) {
            self.acpi_pm.write(port, value);
            if self.acpi_pm.powered_off() {
                self.stop.get_or_insert(GuestStop::PowerOff);
            }
        } else {
            return port == POST_PORT;
        }
        true
    }
}

impl ExitHandler for Platform {
    fn pio_read(&mut self, port: u16, data: &mut [u8]) {
        let now = self.clock.now_ns();
        if Paravirt::handles(port) {
            let v = self.paravirt.read(port).to_le_bytes();
            for (d, s) in data.iter_mut().zip(v.iter()) {
                *d = *s;
            }
        } else {
            let mut handled = true;
            for (i, d) in data.iter_mut().enumerate() {
                match self.pio_read_byte(port.wrapping_add(i as u16), now) {
                    Some(v) => *d = v,
                    None => {
                        *d = 0xff;
                        handled = false;
                    }
                }
            }
            if !handled {
                self.counters.unhandled_pio += 1;
            }
        }
        self.trace
            .fold(fold::PIO_READ, u64::from(port), le_value(data), now);
    }

    fn pio_write(&mut self, port: u16, data: &[u8]) {
        let now = self.clock.now_ns();
        self.trace
            .fold(fold::PIO_WRITE, u64::from(port), le_value(data), now);
        if port == DEBUG_EXIT_PORT {
            let status = debug_exit::status_from(data);
            self.stop.get_or_insert(GuestStop::Status(status));
            return;
        }
        if port == paravirt::SELECT_PORT {
            let value = match Selector::from_u32(debug_exit::status_from(data)) {
                Some(Selector::VirtualNs) => now,
                Some(Selector::VirtualTsc) => self.tsc.ticks_at(now),
                Some(Selector::TscHz) => self.tsc.freq_hz(),
                Some(Selector::Entropy) => self.entropy.next_u64(),
                Some(Selector::SnapshotHere) => {
                    self.snapshot_request = true;
                    0
                }
                Some(Selector::Announce) => {
                    if !self.paravirt.announced() {
                        self.trace.event(
                            now,
                            "guest-announce",
                            json!({ "what": "kernel reads time through the paravirt port" }),
                        );
                    }
                    self.paravirt.announce();
                    0
                }
                None => u64::MAX,
            };
            self.paravirt.latch(value);
            return;
        }
        let mut handled = true;
        for (i, &b) in data.iter().enumerate() {
            handled &= self.pio_write_byte(port.wrapping_add(i as u16), b, now);
        }
        if !handled {
            self.counters.unhandled_pio += 1;
        }
    }

    fn mmio_read(&mut self, addr: u64, data: &mut [u8]) {
        let now = self.clock.now_ns();
        match (self.virtio_slot(addr), self.virtio.as_mut()) {
            (Some((slot, offset)), Some(v)) => {
                v.read(slot, offset, data);
                self.update_virtio_line(slot);
            }
            _ => {
                data.fill(0xff);
                self.counters.unhandled_mmio += 1;
            }
        }
        self.trace.fold(fold::MMIO_READ, addr, le_value(data), now);
    }

    fn mmio_write(&mut self, addr: u64, data: &[u8]) {
        let now = self.clock.now_ns();
        self.trace.fold(fold::MMIO_WRITE, addr, le_value(data), now);
        match (self.virtio_slot(addr), self.virtio.as_mut()) {
            (Some((slot, offset)), Some(v)) => {
                let next = v.write(slot, offset, data, now);
                self.schedule_virtio(next);
                self.update_virtio_line(slot);
            }
            _ => self.counters.unhandled_mmio += 1,
        }
    }
}
