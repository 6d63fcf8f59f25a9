//! The riscv64 machine's bus: the devices behind the hart (NS16550 UART, Goldfish RTC,
//! PLIC, virtio-mmio slots), their MMIO windows, and the device event queue that times
//! virtio completions and timers. The hart reaches it through the engine's
//! [`ExitHandler`] at each MMIO access, with the virtual time of that instruction.

use super::layout;
use crate::devices::legacy::serial::Uart16550;
use crate::devices::riscv::edac::Edac;
use crate::devices::riscv::flight_io::{FlightIo, Watchdog};
use crate::devices::riscv::goldfish_rtc::GoldfishRtc;
use crate::devices::riscv::plic::Plic;
use crate::devices::riscv::sdk_port::SdkPort;
use crate::devices::virtio_slots::{Scheduled, VirtioEvent, VirtioSlots};
use crate::devices::vmgenid::VmGenId;
use crate::engine::ExitHandler;
use crate::faults::inject::{Effect, Injector, Phase, Replaced};
use crate::faults::plan::UpsetPlace;
use crate::machine::power::trace_power_off;
pub use crate::machine::power::Power;
use crate::trace::{fold, Trace};
use serde::{Deserialize, Serialize};
use serde_json::json;
use wio_scheduler::EventQueue;

/// A timed event of the riscv64 machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum BusEvent {
    /// A virtio request completes or a device timer fires.
    Virtio(VirtioEvent),
    /// A planned fault starts or ends: (its index in the plan, which edge).
    Fault(usize, Phase),
    /// The flight I/O board's watchdog expires (its arming's generation; a later pet
    /// makes the event stale).
    Watchdog(u64),
}

/// What the guest asked of the test device (see `layout::TEST_BASE`), for the machine to
/// carry out once the hart has stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TestRequest {
    /// Power off with this status (0: success).
    PowerOff(u32),
    /// Reboot.
    Reset,
}

/// The devices behind the hart.
pub struct RvBus {
    pub uart: Uart16550,
    pub rtc: GoldfishRtc,
    pub plic: Plic,
    /// virtio-mmio slots in use (slot i raises PLIC source i + 1).
    pub virtio: VirtioSlots,
    /// Device completions and timers at their virtual times.
    pub events: EventQueue<BusEvent>,
    /// The run's fault plan and what of it happened.
    pub faults: Injector,
    /// Windows [from, until) of virtual ns in which no fault of the plan starts (a world's
    /// test composer holds faults off so); not in snapshots: the world sends them again.
    pub quiet: Vec<(u64, u64)>,
    pub mmio_accesses: u64,
    pub trace: Trace,
    /// Virtual time of the access being served (reported by the engine).
    pub now_ns: u64,
    /// Whether the hart runs (node faults stop it).
    pub power: Power,
    /// Bits the fault events just fired flip (single-event upsets), for the machine to
    /// apply to the hart before it runs on (see `upsets::fire_due`).
    pub upsets: Vec<(UpsetPlace, u8, u8)>,
    /// RAM bits the fault events just stuck (value) or freed (None), applied with the
    /// upsets.
    pub stuck: Vec<(u64, u8, Option<bool>)>,
    /// A power-off or reset the guest wrote to the test device; the hart stops at once
    /// (the bus reports an event due now) and the machine acts on it.
    pub test_request: Option<TestRequest>,
    /// The flight I/O board (M-mode guests only).
    pub flight: Option<FlightIo>,
    /// The bare-metal promise port (M-mode guests only).
    pub sdk_port: Option<SdkPort>,
    /// The EDAC unit (machines with ECC memory only).
    pub edac: Option<Edac>,
    /// The VM generation ID (kernels; not bare-metal programs).
    pub vmgenid: Option<VmGenId>,
}

/// The devices only some machines have (M-mode guests: the flight I/O board and the
/// promise port; ECC memory: the EDAC unit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Optional {
    Flight,
    SdkPort,
    Edac,
}

/// PLIC source of virtio slot `slot`.
pub fn virtio_irq(slot: usize) -> u32 {
    slot as u32 + 1
}

fn in_window(addr: u64, base: u64, size: u64) -> bool {
    (base..base + size).contains(&addr)
}

fn le(data: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    let n = data.len().min(8);
    b[..n].copy_from_slice(&data[..n]);
    u64::from_le_bytes(b)
}

impl RvBus {
    /// Which optional device this machine has at `addr`, and the offset in its window.
    fn optional_at(&self, addr: u64) -> Option<(Optional, u64)> {
        [
            (
                Optional::Flight,
                self.flight.is_some(),
                layout::FLIGHT_IO_BASE,
                layout::FLIGHT_IO_SIZE,
            ),
            (
                Optional::SdkPort,
                self.sdk_port.is_some(),
                layout::SDK_PORT_BASE,
                layout::SDK_PORT_SIZE,
            ),
            (
                Optional::Edac,
                self.edac.is_some(),
                layout::EDAC_BASE,
                layout::EDAC_SIZE,
            ),
        ]
        .into_iter()
        .find(|&(_, present, base, size)| present && in_window(addr, base, size))
        .map(|(device, _, base, _)| (device, addr - base))
    }

    /// The VM generation ID and the offset in its window, when `addr` is there.
    fn vmgenid_at(&self, addr: u64) -> Option<(&VmGenId, u64)> {
        self.vmgenid
            .as_ref()
            .filter(|_| in_window(addr, layout::VMGENID_BASE, layout::VMGENID_SIZE))
            .map(|g| (g, addr - layout::VMGENID_BASE))
    }

    fn uart_irq(&mut self) {
        if self.uart.take_irq() {
            self.plic.pulse(layout::UART_IRQ);
        }
    }

    fn virtio_slot(addr: u64) -> Option<(usize, u64)> {
        in_window(
            addr,
            layout::VIRTIO_BASE,
            u64::from(layout::VIRTIO_SLOTS) * layout::VIRTIO_SIZE,
        )
        .then(|| {
            let rel = addr - layout::VIRTIO_BASE;
            (
                (rel / layout::VIRTIO_SIZE) as usize,
                rel % layout::VIRTIO_SIZE,
            )
        })
    }

    fn update_virtio_line(&mut self, slot: usize) {
        self.plic
            .set_level(virtio_irq(slot), self.virtio.interrupt_level(slot));
    }

    /// Queues device events.
    pub fn schedule(&mut self, events: Scheduled) {
        for (due, ev) in events {
            // Devices bound their requests and timers (queue sizes, inbox limit): overflow is a wio bug.
            self.events
                .push(due, BusEvent::Virtio(ev))
                .expect("device event queue overflow");
        }
    }

    /// Queues the fault plan's starts and ends (at boot).
    pub fn schedule_faults(&mut self) {
        for (at, index, phase) in self.faults.events() {
            // A plan holds at most MAX_FAULTS faults, far below the queue's bound.
            self.events
                .push(at, BusEvent::Fault(index, phase))
                .expect("device event queue overflow");
        }
    }

    /// Swaps the events of faults a restore replaced (see `Injector::replace_future`):
    /// the old future faults' events leave the queue, the new ones' come in. The
    /// other events keep their places.
    pub fn replace_fault_events(&mut self, r: &Replaced) {
        self.events
            .remove_where(|e| matches!(e, BusEvent::Fault(index, _) if *index >= r.kept));
        for &(at, index, phase) in &r.events {
            // A plan holds at most MAX_FAULTS faults, far below the queue's bound.
            self.events
                .push(at, BusEvent::Fault(index, phase))
                .expect("device event queue overflow");
        }
    }

    /// Performs every event due at `now_ns`, in (time, sequence) order.
    pub fn fire_due_events(&mut self, now_ns: u64) {
        while let Some(ev) = self.events.pop_due(now_ns) {
            match ev.event {
                BusEvent::Virtio(event) => {
                    let (slot, next) = self.virtio.fire(event, ev.time_ns, now_ns, &mut self.trace);
                    self.schedule(next);
                    self.update_virtio_line(slot);
                }
                BusEvent::Fault(index, phase) => {
                    if phase == Phase::Start && crate::faults::in_quiet(&self.quiet, now_ns) {
                        self.trace
                            .event(now_ns, "fault-held", json!({ "index": index }));
                        continue;
                    }
                    // The end of a fault that never started (held off): nothing to end.
                    // Known from what was applied, which snapshots keep.
                    if phase == Phase::End
                        && !self.faults.applied().iter().any(|a| a.index == index)
                    {
                        continue;
                    }
                    let effect =
                        self.faults
                            .fire(index, phase, now_ns, &mut self.virtio, &mut self.trace);
                    // Setting or clearing a device fault changes only how later requests
                    // and frames are handled: no timer, no interrupt line moves here.
                    self.node_effect(effect, now_ns);
                }
                BusEvent::Watchdog(generation) => self.watchdog_expired(generation, now_ns),
            }
        }
    }

    /// The watchdog of arming `generation` ran out: unless petted since (or the machine
    /// is not running), it resets the machine, which boots its program again.
    fn watchdog_expired(&mut self, generation: u64, now_ns: u64) {
        let Some(board) = self.flight.as_mut() else {
            return;
        };
        if !board.expires(generation) || self.power != Power::On {
            return;
        }
        board.watchdog_reset(now_ns);
        if let Some(port) = self.sdk_port.as_mut() {
            port.reset();
        }
        self.trace.event(
            now_ns,
            "watchdog-reset",
            json!({ "resets": board.watchdog_resets, "angle_mdeg": board.true_angle_mdeg() }),
        );
        self.power = Power::Booting;
    }

    fn watchdog(&mut self, w: Watchdog) {
        if let Watchdog::Arm { at_ns, generation } = w {
            // One armed expiry at a time is live; stale ones are few (one per pet) and
            // dropped when they come due, but the queue is bounded: drop them now.
            self.events
                .remove_where(|e| matches!(e, BusEvent::Watchdog(_)));
            self.events
                .push(at_ns, BusEvent::Watchdog(generation))
                .expect("device event queue overflow");
        }
    }
}

impl RvBus {
    /// What a fault's edge asks of the machine beyond its devices. Node faults meeting a
    /// machine already off change nothing (a pause or a second crash while it is off).
    fn node_effect(&mut self, effect: Effect, now_ns: u64) {
        match effect {
            Effect::RtcStep(delta_s) => self.rtc.step(delta_s),
            Effect::Upset(place, bit, width) => self.upsets.push((place, bit, width)),
            Effect::Stuck(addr, bit, value) => self.stuck.push((addr, bit, value)),
            _ => {}
        }
        let (power, cut) = self.power.after(&effect);
        if let Some(unflushed) = cut {
            let cached = self.virtio.power_cut(unflushed);
            // Requests in flight die with the power: never performed, never completed.
            // Device timers (the link, the peer) are the world's and go on.
            let dropped = self
                .events
                .remove_where(|e| matches!(e, BusEvent::Virtio(VirtioEvent::Complete(..))));
            for slot in 0..self.virtio.len() {
                self.update_virtio_line(slot);
            }
            trace_power_off(&mut self.trace, now_ns, dropped, cached, unflushed);
        }
        self.power = power;
    }
}

impl ExitHandler for RvBus {
    fn pio_read(&mut self, _port: u16, data: &mut [u8]) {
        data.fill(0xff); // RISC-V has no port I/O
    }

    fn pio_write(&mut self, _port: u16, _data: &[u8]) {}

    fn mmio_claims(&self, addr: u64) -> bool {
        in_window(addr, layout::RTC_BASE, layout::RTC_SIZE)
            || in_window(addr, layout::TEST_BASE, layout::TEST_SIZE)
            || self.optional_at(addr).is_some()
            || self.vmgenid_at(addr).is_some()
            || in_window(addr, layout::UART_BASE, layout::UART_SIZE)
            || in_window(addr, layout::PLIC_BASE, layout::PLIC_SIZE)
            || in_window(
                addr,
                layout::VIRTIO_BASE,
                u64::from(layout::VIRTIO_SLOTS) * layout::VIRTIO_SIZE,
            )
    }

    fn mmio_read(&mut self, addr: u64, data: &mut [u8]) {
        self.mmio_accesses += 1;
        if let Some((g, off)) = self.vmgenid_at(addr) {
            // Any width: the kernel copies the ID with memcpy.
            g.read(off, data);
            let v = le(data);
            self.trace.fold(fold::MMIO_READ, addr, v, self.now_ns);
            return;
        }
        let word = data.len() == 4;
        let v = if in_window(addr, layout::RTC_BASE, layout::RTC_SIZE) && word {
            u64::from(self.rtc.read(addr - layout::RTC_BASE, self.now_ns))
        } else if in_window(addr, layout::UART_BASE, 8) {
            let v = u64::from(self.uart.read((addr - layout::UART_BASE) as u8));
            self.uart_irq();
            v
        } else if in_window(addr, layout::PLIC_BASE, layout::PLIC_SIZE) && word {
            u64::from(self.plic.read(addr - layout::PLIC_BASE))
        } else if let Some((device, off)) = self.optional_at(addr).filter(|_| word) {
            let now = self.now_ns;
            u64::from(match device {
                Optional::Flight => self.flight.as_mut().map_or(0, |b| b.read(off, now)),
                Optional::SdkPort => self.sdk_port.as_mut().map_or(0, |p| p.read(off)),
                Optional::Edac => self.edac.as_ref().map_or(0, |e| e.read(off)),
            })
        } else if let Some((slot, offset)) =
            Self::virtio_slot(addr).filter(|(slot, _)| *slot < self.virtio.len())
        {
            self.virtio.read(slot, offset, data);
            let v = le(data);
            self.trace.fold(fold::MMIO_READ, addr, v, self.now_ns);
            return;
        } else {
            // The rest of the UART window, odd-sized accesses, and empty virtio-mmio slots
            // (no magic value: no device there) read as zero.
            0
        };
        let bytes = v.to_le_bytes();
        let n = data.len().min(8);
        data[..n].copy_from_slice(&bytes[..n]);
        self.trace.fold(fold::MMIO_READ, addr, v, self.now_ns);
    }

    fn mmio_write(&mut self, addr: u64, data: &[u8]) {
        self.mmio_accesses += 1;
        let value = le(data);
        self.trace.fold(fold::MMIO_WRITE, addr, value, self.now_ns);
        let word = data.len() == 4;
        if in_window(addr, layout::RTC_BASE, layout::RTC_SIZE) && word {
            self.rtc
                .write(addr - layout::RTC_BASE, value as u32, self.now_ns);
        } else if addr == layout::TEST_BASE && word {
            let v = value as u32;
            let request = match v & 0xffff {
                x if x == layout::TEST_PASS => Some(TestRequest::PowerOff(0)),
                // A failure code of 0 still says failure.
                x if x == layout::TEST_FAIL => Some(TestRequest::PowerOff((v >> 16).max(1))),
                x if x == layout::TEST_RESET => Some(TestRequest::Reset),
                _ => None,
            };
            if request.is_some() {
                self.test_request = request;
            }
        } else if in_window(addr, layout::UART_BASE, 8) {
            self.uart
                .write((addr - layout::UART_BASE) as u8, value as u8);
            self.uart_irq();
        } else if in_window(addr, layout::PLIC_BASE, layout::PLIC_SIZE) && word {
            self.plic.write(addr - layout::PLIC_BASE, value as u32);
        } else if let Some((device, off)) = self.optional_at(addr).filter(|_| word) {
            let (v, now) = (value as u32, self.now_ns);
            match device {
                Optional::Flight => {
                    if let Some(w) = self.flight.as_mut().map(|b| b.write(off, v, now)) {
                        self.watchdog(w);
                    }
                }
                Optional::SdkPort => {
                    if let Some(p) = self.sdk_port.as_mut() {
                        p.write(off, v, now);
                    }
                }
                Optional::Edac => {
                    if let Some(e) = self.edac.as_mut() {
                        e.write(off, v);
                        self.plic.set_level(layout::EDAC_IRQ, e.irq());
                    }
                }
            }
        } else if let Some((slot, offset)) =
            Self::virtio_slot(addr).filter(|(slot, _)| *slot < self.virtio.len())
        {
            let next = self.virtio.write(slot, offset, data, self.now_ns);
            self.schedule(next);
            self.update_virtio_line(slot);
        }
    }

    fn external_interrupt(&self) -> bool {
        self.plic.interrupt_pending()
    }

    fn set_time(&mut self, now_ns: u64) {
        self.now_ns = now_ns;
    }

    fn memory_error(&mut self, paddr: u64, corrected: bool) {
        let Some(edac) = self.edac.as_mut() else {
            return;
        };
        edac.record(paddr, corrected);
        self.plic.set_level(layout::EDAC_IRQ, edac.irq());
        self.trace.event(
            self.now_ns,
            "ecc",
            json!({ "word": paddr, "error": if corrected { "corrected" } else { "uncorrectable" } }),
        );
    }

    fn next_event_ns(&self) -> u64 {
        if self.test_request.is_some() {
            // Stop the hart right after the write: the machine powers off or resets.
            return self.now_ns;
        }
        self.events.peek_time().unwrap_or(u64::MAX)
    }
}
