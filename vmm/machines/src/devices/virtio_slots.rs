//! The virtio-mmio slots of a machine, the same on both architectures: register
//! access, turning guest notifications into scheduled completions and device
//! timers, and performing them when the scheduler says so. The machine owns the
//! event queue and the interrupt controller; this owns the devices.

use super::StateError;
use crate::trace::Trace;
use serde_json::json;
use wio_virtio_devices::{
    Block, Console, DeviceError, Frame, GuestMem, MmioTransport, Net, Request,
};

/// A timed virtio event.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum VirtioEvent {
    /// A submitted request completes: (slot, queue, request).
    Complete(usize, usize, Request),
    /// A device timer fires: (slot, token).
    Timer(usize, u64),
}

/// Events to schedule: (virtual ns when due, event).
pub type Scheduled = Vec<(u64, VirtioEvent)>;

/// The devices, by slot, and the guest memory they share with the CPU engine.
pub struct VirtioSlots {
    devices: Vec<MmioTransport>,
    mem: GuestMem,
}

impl VirtioSlots {
    /// Slot i holds `devices[i]`.
    pub fn new(devices: Vec<MmioTransport>, mem: GuestMem) -> VirtioSlots {
        VirtioSlots { devices, mem }
    }

    /// The devices in slot order.
    pub fn devices(&self) -> &[MmioTransport] {
        &self.devices
    }

    /// Every transport's state, slot by slot (see [`MmioTransport::save_state`]).
    pub fn save_states(&self) -> Result<Vec<wio_virtio_devices::TransportState>, StateError> {
        self.devices
            .iter()
            .enumerate()
            .map(|(slot, t)| {
                t.save_state()
                    .map_err(|source| StateError::Slot { slot, source })
            })
            .collect()
    }

    /// Loads saved transport states, slot by slot (see [`MmioTransport::load_state`]).
    pub fn load_states(
        &mut self,
        states: &[wio_virtio_devices::TransportState],
        reseed: Option<wio_scheduler::RunSeed>,
    ) -> Result<(), StateError> {
        if states.len() != self.devices.len() {
            return Err(StateError::SlotCount {
                saved: states.len(),
                here: self.devices.len(),
            });
        }
        for (slot, (t, s)) in self.devices.iter_mut().zip(states).enumerate() {
            t.load_state(s, reseed)
                .map_err(|source| StateError::Slot { slot, source })?;
        }
        Ok(())
    }

    /// The network device and its slot, if the machine has one.
    fn net(&mut self) -> Option<(usize, &mut Net)> {
        self.devices
            .iter_mut()
            .enumerate()
            .find_map(|(slot, t)| Some((slot, t.device_mut().as_any_mut().downcast_mut::<Net>()?)))
    }

    #[cfg_attr(
        not(test),
        allow(
            dead_code,
            reason = "the multi-machine simulation will call it; tested here"
        )
    )]
    /// The frames the guest sent through the network port since the last call (none
    /// when the network device talks to its built-in peer).
    pub fn take_frames(&mut self) -> Vec<Frame> {
        self.net().map_or_else(Vec::new, |(_, net)| net.take_sent())
    }

    #[cfg_attr(
        not(test),
        allow(
            dead_code,
            reason = "the multi-machine simulation will call it; tested here"
        )
    )]
    /// A frame from outside arrives at the network port at `frame.at_ns` (now is
    /// `now_ns`); returns the device timer to schedule for its delivery.
    pub fn deliver_frame(&mut self, frame: Frame, now_ns: u64) -> Result<Scheduled, DeviceError> {
        let (slot, net) = self.net().ok_or(DeviceError::NoPort)?;
        net.arrive(frame, now_ns)?;
        Ok(self.timers(slot, now_ns))
    }

    /// Sends `bytes` on the console's `wio.composer` port at `now_ns`; returns whether it
    /// took them and the device timer to schedule for their delivery.
    pub fn send_composer(&mut self, bytes: &[u8], now_ns: u64) -> (bool, Scheduled) {
        let Some(slot) = self.devices.iter().position(|t| {
            t.device()
                .as_any()
                .downcast_ref::<Console>()
                .is_some_and(Console::has_composer)
        }) else {
            return (false, Vec::new());
        };
        let took = self.devices[slot]
            .device_mut()
            .as_any_mut()
            .downcast_mut::<Console>()
            .is_some_and(|c| c.send_composer(bytes));
        (took, self.timers(slot, now_ns))
    }

    /// Number of occupied slots.
    pub fn len(&self) -> usize {
        self.devices.len()
    }

    /// Whether no slot is occupied.
    pub fn is_empty(&self) -> bool {
        self.devices.is_empty()
    }

    /// Whether slot `slot`'s interrupt line is high.
    pub fn interrupt_level(&self, slot: usize) -> bool {
        self.devices
            .get(slot)
            .is_some_and(MmioTransport::interrupt_level)
    }

    /// Register read in slot `slot`.
    pub fn read(&mut self, slot: usize, offset: u64, data: &mut [u8]) {
        match self.devices.get_mut(slot) {
            Some(t) => t.read(offset, data),
            None => data.fill(0),
        }
    }

    /// Register write in slot `slot` at virtual time `now_ns`; returns what to schedule.
    pub fn write(&mut self, slot: usize, offset: u64, data: &[u8], now_ns: u64) -> Scheduled {
        let Some(t) = self.devices.get_mut(slot) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        if let Some(queue) = t.write(offset, data, &self.mem) {
            for pending in t.submit(queue, &self.mem) {
                out.push((
                    now_ns.saturating_add(pending.delay_ns),
                    VirtioEvent::Complete(slot, queue, pending.request),
                ));
            }
        }
        out.extend(self.timers(slot, now_ns));
        out
    }

    /// The network device, if the machine has one.
    pub fn net_mut(&mut self) -> Option<&mut Net> {
        self.net().map(|(_, net)| net)
    }

    /// The machine lost power: the disk's unflushed writes go as `unflushed` says, and
    /// every transport is reset as if its driver had reset it. Requests in flight are the
    /// machine's to drop from its event queue (never performed). Returns how many chunks
    /// of unflushed writes the disk held when the power went (None without a disk).
    pub fn power_cut(&mut self, unflushed: wio_virtio_devices::Unflushed) -> Option<usize> {
        let cached = self.block_mut().map(|b| {
            let cached = b.disk().volatile_chunks();
            b.power_cut(unflushed);
            cached
        });
        for t in &mut self.devices {
            t.power_cycle();
        }
        cached
    }

    /// The machine booted again on new memory: the devices use it from now on.
    pub fn set_memory(&mut self, mem: GuestMem) {
        self.mem = mem;
    }

    /// Whether the network device is a port (frames from other machines may arrive).
    pub fn has_port(&self) -> bool {
        self.devices.iter().any(|t| {
            t.device()
                .as_any()
                .downcast_ref::<Net>()
                .is_some_and(Net::has_port)
        })
    }

    /// The promise channel, if the machine has one.
    pub fn console_mut(&mut self) -> Option<&mut Console> {
        self.devices
            .iter_mut()
            .find_map(|t| t.device_mut().as_any_mut().downcast_mut::<Console>())
    }

    /// The disk, if the machine has one.
    pub fn block_mut(&mut self) -> Option<&mut Block> {
        self.devices
            .iter_mut()
            .find_map(|t| t.device_mut().as_any_mut().downcast_mut::<Block>())
    }

    fn timers(&mut self, slot: usize, now_ns: u64) -> Scheduled {
        let Some(t) = self.devices.get_mut(slot) else {
            return Vec::new();
        };
        t.take_timers()
            .into_iter()
            .map(|(delay, token)| {
                (
                    now_ns.saturating_add(delay),
                    VirtioEvent::Timer(slot, token),
                )
            })
            .collect()
    }

    /// Performs `event` (due at `due_ns`) at `now_ns`, traces it, and returns the slot it
    /// touched and what the device wants scheduled next.
    pub fn fire(
        &mut self,
        event: VirtioEvent,
        due_ns: u64,
        now_ns: u64,
        trace: &mut Trace,
    ) -> (usize, Scheduled) {
        let slot = match event {
            VirtioEvent::Complete(slot, queue, request) => {
                if let Some(t) = self.devices.get_mut(slot) {
                    t.complete(queue, &request, &self.mem, now_ns);
                    let error = t.last_error.take();
                    let device = t.device().device_type();
                    trace.event(
                        now_ns,
                        "virtio",
                        json!({ "slot": slot, "device": device, "queue": queue, "head": request.head, "due": due_ns, "error": error }),
                    );
                }
                slot
            }
            VirtioEvent::Timer(slot, token) => {
                if let Some(t) = self.devices.get_mut(slot) {
                    t.fire_timer(token, &self.mem, now_ns);
                    let error = t.last_error.take();
                    trace.event(
                        now_ns,
                        "virtio-timer",
                        json!({ "slot": slot, "token": token, "error": error }),
                    );
                }
                slot
            }
        };
        (slot, self.timers(slot, now_ns))
    }
}
