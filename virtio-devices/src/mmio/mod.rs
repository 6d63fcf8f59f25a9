//! The virtio-mmio transport (version 2, "modern"): the register file a guest
//! driver programs, feature negotiation, queue set-up, notification, the
//! interrupt status, and the device status machine including
//! DEVICE_NEEDS_RESET when the guest hands the device something malformed.

use crate::device::{DeviceError, GuestMem, Pending, Request, VirtioDevice};
use crate::state::DeviceState;
use crate::{VIRTIO_F_VERSION_1, VIRTIO_MMIO_MAGIC, VIRTIO_MMIO_VERSION};
use virtio_queue::{Queue, QueueT};
use wio_scheduler::RunSeed;

/// Register offsets, named after the virtio-mmio registers of the virtio spec (so
/// `QUEUE_NUM_MAX` is the spec's QueueNumMax register, not a limit: wio's own limits are
/// spelled `MAX_*`).
#[allow(missing_docs)]
pub mod reg {
    pub const MAGIC: u64 = 0x000;
    pub const VERSION: u64 = 0x004;
    pub const DEVICE_ID: u64 = 0x008;
    pub const VENDOR_ID: u64 = 0x00c;
    pub const DEVICE_FEATURES: u64 = 0x010;
    pub const DEVICE_FEATURES_SEL: u64 = 0x014;
    pub const DRIVER_FEATURES: u64 = 0x020;
    pub const DRIVER_FEATURES_SEL: u64 = 0x024;
    pub const QUEUE_SEL: u64 = 0x030;
    pub const QUEUE_NUM_MAX: u64 = 0x034;
    pub const QUEUE_NUM: u64 = 0x038;
    pub const QUEUE_READY: u64 = 0x044;
    pub const QUEUE_NOTIFY: u64 = 0x050;
    pub const INTERRUPT_STATUS: u64 = 0x060;
    pub const INTERRUPT_ACK: u64 = 0x064;
    pub const STATUS: u64 = 0x070;
    pub const QUEUE_DESC_LOW: u64 = 0x080;
    pub const QUEUE_DESC_HIGH: u64 = 0x084;
    pub const QUEUE_DRIVER_LOW: u64 = 0x090;
    pub const QUEUE_DRIVER_HIGH: u64 = 0x094;
    pub const QUEUE_DEVICE_LOW: u64 = 0x0a0;
    pub const QUEUE_DEVICE_HIGH: u64 = 0x0a4;
    pub const CONFIG_GENERATION: u64 = 0x0fc;
    pub const CONFIG: u64 = 0x100;
}

/// Device status bits.
#[allow(missing_docs)]
pub mod status {
    pub const ACKNOWLEDGE: u32 = 1;
    pub const DRIVER: u32 = 2;
    pub const DRIVER_OK: u32 = 4;
    pub const FEATURES_OK: u32 = 8;
    pub const DEVICE_NEEDS_RESET: u32 = 64;
    pub const FAILED: u32 = 128;
}

/// Vendor ID wio reports ("WIO").
pub const VENDOR_ID: u32 = 0x004f_4957;
/// Interrupt status: used buffers.
const INT_VRING: u32 = 1;
/// Interrupt status: configuration change (DEVICE_NEEDS_RESET).
const INT_CONFIG: u32 = 2;

/// One device behind its virtio-mmio register window.
pub struct MmioTransport {
    device: Box<dyn VirtioDevice>,
    queues: Vec<Queue>,
    queue_sel: u32,
    device_features_sel: u32,
    driver_features_sel: u32,
    driver_features: u64,
    status: u32,
    interrupt_status: u32,
    config_generation: u32,
    /// The reason the device last asked for a reset, for the trace.
    pub last_error: Option<String>,
}

impl MmioTransport {
    /// Wraps `device`.
    pub fn new(device: Box<dyn VirtioDevice>) -> MmioTransport {
        let queues = device
            .queue_max_sizes()
            .iter()
            .map(|&max| Queue::new(max).expect("device queue sizes are powers of two"))
            .collect();
        MmioTransport {
            device,
            queues,
            queue_sel: 0,
            device_features_sel: 0,
            driver_features_sel: 0,
            driver_features: 0,
            status: 0,
            interrupt_status: 0,
            config_generation: 0,
            last_error: None,
        }
    }

    /// The device behind the transport.
    pub fn device(&self) -> &dyn VirtioDevice {
        self.device.as_ref()
    }

    /// The device behind the transport, to change.
    pub fn device_mut(&mut self) -> &mut dyn VirtioDevice {
        self.device.as_mut()
    }

    /// Whether the interrupt line is high.
    pub fn interrupt_level(&self) -> bool {
        self.interrupt_status != 0
    }

    /// The device status register.
    pub fn status(&self) -> u32 {
        self.status
    }

    fn selected(&mut self) -> Option<&mut Queue> {
        self.queues.get_mut(self.queue_sel as usize)
    }

    fn reset(&mut self) {
        for q in self.queues.iter_mut() {
            q.reset();
        }
        self.device.reset();
        self.queue_sel = 0;
        self.device_features_sel = 0;
        self.driver_features_sel = 0;
        self.driver_features = 0;
        self.status = 0;
        self.interrupt_status = 0;
    }

    /// The machine lost power: the transport and its device are reset as if the driver
    /// had written 0 to the status register (the device's durable state, a disk's flushed
    /// writes for one, is the device's to keep).
    pub fn power_cycle(&mut self) {
        self.reset();
        self.last_error = None;
    }

    fn needs_reset(&mut self, why: String) {
        self.status |= status::DEVICE_NEEDS_RESET;
        self.interrupt_status |= INT_CONFIG;
        self.last_error = Some(why);
    }

    /// Register read (32-bit registers; the config space takes any width).
    pub fn read(&mut self, offset: u64, data: &mut [u8]) {
        if offset >= reg::CONFIG {
            self.device.read_config(offset - reg::CONFIG, data);
            return;
        }
        let v: u32 = match offset {
            reg::MAGIC => VIRTIO_MMIO_MAGIC,
            reg::VERSION => VIRTIO_MMIO_VERSION,
            reg::DEVICE_ID => self.device.device_type(),
            reg::VENDOR_ID => VENDOR_ID,
            reg::DEVICE_FEATURES => match self.device_features_sel {
                0 => self.device.features() as u32,
                1 => (self.device.features() >> 32) as u32,
                _ => 0,
            },
            reg::QUEUE_NUM_MAX => self.selected().map_or(0, |q| q.max_size().into()),
            reg::QUEUE_READY => self.selected().map_or(0, |q| q.ready().into()),
            reg::INTERRUPT_STATUS => self.interrupt_status,
            reg::STATUS => self.status,
            reg::CONFIG_GENERATION => self.config_generation,
            _ => 0,
        };
        let bytes = v.to_le_bytes();
        let n = data.len().min(4);
        data[..n].copy_from_slice(&bytes[..n]);
    }

    /// Register write; returns the index of a queue the guest notified (ready and live).
    pub fn write(&mut self, offset: u64, data: &[u8], mem: &GuestMem) -> Option<usize> {
        if offset >= reg::CONFIG {
            return None; // no writable configuration on wio's devices yet
        }
        let mut b = [0u8; 4];
        let n = data.len().min(4);
        b[..n].copy_from_slice(&data[..n]);
        let v = u32::from_le_bytes(b);
        let live =
            self.status & status::DRIVER_OK != 0 && self.status & status::DEVICE_NEEDS_RESET == 0;
        match offset {
            reg::DEVICE_FEATURES_SEL => self.device_features_sel = v,
            reg::DRIVER_FEATURES_SEL => self.driver_features_sel = v,
            reg::DRIVER_FEATURES if self.status & status::FEATURES_OK == 0 => match self
                .driver_features_sel
            {
                0 => self.driver_features = (self.driver_features & !0xffff_ffff) | u64::from(v),
                1 => {
                    self.driver_features =
                        (self.driver_features & 0xffff_ffff) | (u64::from(v) << 32)
                }
                _ => {}
            },
            reg::QUEUE_SEL => self.queue_sel = v,
            reg::QUEUE_NUM
            | reg::QUEUE_DESC_LOW
            | reg::QUEUE_DESC_HIGH
            | reg::QUEUE_DRIVER_LOW
            | reg::QUEUE_DRIVER_HIGH
            | reg::QUEUE_DEVICE_LOW
            | reg::QUEUE_DEVICE_HIGH => {
                if let Some(q) = self.selected().filter(|q| !q.ready()) {
                    match offset {
                        reg::QUEUE_NUM => q.set_size(v as u16),
                        reg::QUEUE_DESC_LOW => q.set_desc_table_address(Some(v), None),
                        reg::QUEUE_DESC_HIGH => q.set_desc_table_address(None, Some(v)),
                        reg::QUEUE_DRIVER_LOW => q.set_avail_ring_address(Some(v), None),
                        reg::QUEUE_DRIVER_HIGH => q.set_avail_ring_address(None, Some(v)),
                        reg::QUEUE_DEVICE_LOW => q.set_used_ring_address(Some(v), None),
                        _ => q.set_used_ring_address(None, Some(v)),
                    }
                }
            }
            reg::QUEUE_READY => {
                let sel = self.queue_sel;
                if let Some(q) = self.selected() {
                    if v == 1 {
                        // The crate validates only ready queues: mark it, check, undo if bad.
                        q.set_ready(true);
                        if !q.is_valid(mem) {
                            q.set_ready(false);
                            self.needs_reset(format!(
                                "queue {sel} configured outside guest memory or with a bad size"
                            ));
                        }
                    } else {
                        q.set_ready(false);
                    }
                }
            }
            reg::QUEUE_NOTIFY => {
                let index = v as usize;
                if live && self.queues.get(index).is_some_and(|q| q.ready()) {
                    return Some(index);
                }
            }
            reg::INTERRUPT_ACK => self.interrupt_status &= !v,
            reg::STATUS => {
                if v == 0 {
                    self.reset();
                } else {
                    let mut new = v & !status::DEVICE_NEEDS_RESET;
                    if new & status::FEATURES_OK != 0 && self.status & status::FEATURES_OK == 0 {
                        let offered = self.device.features();
                        let acceptable = self.driver_features & !offered == 0
                            && self.driver_features & VIRTIO_F_VERSION_1 != 0;
                        if !acceptable {
                            // The device refuses: FEATURES_OK does not stick.
                            new &= !status::FEATURES_OK;
                        }
                    }
                    self.status = new | (self.status & status::DEVICE_NEEDS_RESET);
                }
            }
            _ => {}
        }
        None
    }

    /// Takes the requests of notified `queue`; each comes back with its latency for the
    /// machine to schedule. A malformed queue sets DEVICE_NEEDS_RESET and yields nothing.
    pub fn submit(&mut self, queue: usize, mem: &GuestMem) -> Vec<Pending> {
        if self.status & status::DEVICE_NEEDS_RESET != 0 {
            return Vec::new();
        }
        let Some(q) = self.queues.get_mut(queue).filter(|q| q.ready()) else {
            return Vec::new();
        };
        match self.device.submit(queue, q, mem) {
            Ok(p) => p,
            Err(e) => {
                self.needs_reset(e.to_string());
                Vec::new()
            }
        }
    }

    /// Completes `request` now: performs it, returns its chain in the used ring and
    /// raises the interrupt. Errors set DEVICE_NEEDS_RESET; the run goes on.
    pub fn complete(&mut self, queue: usize, request: &Request, mem: &GuestMem, now_ns: u64) {
        if self.status & status::DEVICE_NEEDS_RESET != 0 {
            return;
        }
        let result = self.device.complete(queue, request, mem, now_ns);
        let Some(q) = self.queues.get_mut(queue) else {
            return;
        };
        match result {
            Ok(len) => match q.add_used(mem, request.head, len) {
                Ok(()) => self.interrupt_status |= INT_VRING,
                Err(e) => self.needs_reset(format!("used ring of queue {queue}: {e}")),
            },
            Err(e) => self.needs_reset(e.to_string()),
        }
    }
}

/// A queue's registers and ring positions as a snapshot keeps them.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
struct SavedQueue {
    max_size: u16,
    next_avail: u16,
    next_used: u16,
    event_idx_enabled: bool,
    size: u16,
    ready: bool,
    desc_table: u64,
    avail_ring: u64,
    used_ring: u64,
}

/// What a snapshot keeps of a transport and its device: the device type, each queue's
/// registers and ring positions, the transport's registers, and the device's own
/// [`DeviceState`]. Saved by [`MmioTransport::save_state`], loaded by
/// [`MmioTransport::load_state`]; the machine serialises it (serde) into its snapshot.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct TransportState {
    device_type: u32,
    queues: Vec<SavedQueue>,
    queue_sel: u32,
    device_features_sel: u32,
    driver_features_sel: u32,
    driver_features: u64,
    status: u32,
    interrupt_status: u32,
    config_generation: u32,
    device: DeviceState,
}

impl TransportState {
    /// The virtio device ID of the saved device (e.g. [`crate::block::DEVICE_ID`]), so the
    /// machine can tell which slot holds what without loading it.
    pub fn device_type(&self) -> u32 {
        self.device_type
    }

    /// For a saved block device: moves its disk's chunks out into a shared copy-on-write
    /// [`Overlay`](crate::block::Overlay), validated as
    /// [`DiskState::into_overlay`](crate::block::DiskState::into_overlay) does, and leaves
    /// this state without them. A snapshot restored many times does this once; each
    /// restore then loads the stripped state and hands the disk a clone of the overlay
    /// ([`Disk::set_overlay`](crate::block::Disk::set_overlay)), which gives exactly what
    /// loading the full state gave, without copying the disk per restore.
    ///
    /// `Ok(None)` for a device of another type (nothing is taken). A state of device type
    /// block that holds another kind of device state is refused
    /// ([`DeviceError::StateKind`]); on an error nothing is taken.
    pub fn take_block_overlay(&mut self) -> Result<Option<crate::block::Overlay>, DeviceError> {
        if self.device_type != crate::block::DEVICE_ID {
            return Ok(None);
        }
        match &mut self.device {
            DeviceState::Block(block) => block.take_overlay().map(Some),
            other => Err(other.wrong_kind(crate::block::DEVICE)),
        }
    }
}

impl MmioTransport {
    /// The transport's and its device's state for a snapshot (fails only if the device
    /// cannot be saved, see [`VirtioDevice::save_state`]).
    pub fn save_state(&self) -> Result<TransportState, DeviceError> {
        let queues = self
            .queues
            .iter()
            .map(|q| {
                let s = q.state();
                SavedQueue {
                    max_size: s.max_size,
                    next_avail: s.next_avail,
                    next_used: s.next_used,
                    event_idx_enabled: s.event_idx_enabled,
                    size: s.size,
                    ready: s.ready,
                    desc_table: s.desc_table,
                    avail_ring: s.avail_ring,
                    used_ring: s.used_ring,
                }
            })
            .collect();
        Ok(TransportState {
            device_type: self.device.device_type(),
            queues,
            queue_sel: self.queue_sel,
            device_features_sel: self.device_features_sel,
            driver_features_sel: self.driver_features_sel,
            driver_features: self.driver_features,
            status: self.status,
            interrupt_status: self.interrupt_status,
            config_generation: self.config_generation,
            device: crate::state::save(self.device.as_ref())?,
        })
    }

    /// Loads a state saved by [`MmioTransport::save_state`] into this transport, whose
    /// device must be of the same type with the same number and sizes of queues
    /// ([`DeviceError::DeviceMismatch`], [`DeviceError::QueueSizeMismatch`]) and built with
    /// the same configuration; the device then loads its own state (see
    /// [`VirtioDevice::load_state`]). With `reseed`, the device's streams are re-keyed. On
    /// an error the transport is as it was.
    pub fn load_state(
        &mut self,
        state: &TransportState,
        reseed: Option<RunSeed>,
    ) -> Result<(), DeviceError> {
        let s = state;
        let here = self.device.device_type();
        if s.device_type != here || s.queues.len() != self.queues.len() {
            return Err(DeviceError::DeviceMismatch {
                saved_type: s.device_type,
                saved_queues: s.queues.len(),
                here_type: here,
                here_queues: self.queues.len(),
            });
        }
        let mut queues = Vec::with_capacity(s.queues.len());
        for (i, (saved, current)) in s.queues.iter().zip(&self.queues).enumerate() {
            if saved.max_size != current.max_size() {
                return Err(DeviceError::QueueSizeMismatch {
                    queue: i,
                    saved: saved.max_size,
                    here: current.max_size(),
                });
            }
            let mut q = Queue::new(saved.max_size)
                .map_err(|error| DeviceError::SavedQueue { queue: i, error })?;
            // Addresses and sizes go back exactly as the guest wrote them (the transport
            // validates them when the guest sets QUEUE_READY, as it did before the snapshot).
            q.set_size(saved.size);
            q.set_desc_table_address(
                Some(saved.desc_table as u32),
                Some((saved.desc_table >> 32) as u32),
            );
            q.set_avail_ring_address(
                Some(saved.avail_ring as u32),
                Some((saved.avail_ring >> 32) as u32),
            );
            q.set_used_ring_address(
                Some(saved.used_ring as u32),
                Some((saved.used_ring >> 32) as u32),
            );
            q.set_next_avail(saved.next_avail);
            q.set_next_used(saved.next_used);
            q.set_event_idx(saved.event_idx_enabled);
            q.set_ready(saved.ready);
            queues.push(q);
        }
        crate::state::load(self.device.as_mut(), &s.device, reseed)?;
        self.queues = queues;
        self.queue_sel = s.queue_sel;
        self.device_features_sel = s.device_features_sel;
        self.driver_features_sel = s.driver_features_sel;
        self.driver_features = s.driver_features;
        self.status = s.status;
        self.interrupt_status = s.interrupt_status;
        self.config_generation = s.config_generation;
        Ok(())
    }

    /// Timers the device asked for since the last call: (virtual ns from now, token).
    pub fn take_timers(&mut self) -> Vec<(u64, u64)> {
        self.device.take_timers()
    }

    /// Fires a device timer: the chains it completes are handed back and the interrupt raised.
    pub fn fire_timer(&mut self, token: u64, mem: &GuestMem, now_ns: u64) {
        if self.status & status::DEVICE_NEEDS_RESET != 0 {
            return;
        }
        match self.device.timer(token, mem, now_ns) {
            Ok(done) => {
                for (queue, head, len) in done {
                    let Some(q) = self.queues.get_mut(queue) else {
                        continue;
                    };
                    match q.add_used(mem, head, len) {
                        Ok(()) => self.interrupt_status |= INT_VRING,
                        Err(e) => {
                            self.needs_reset(format!("used ring of queue {queue}: {e}"));
                            return;
                        }
                    }
                }
            }
            Err(e) => self.needs_reset(e.to_string()),
        }
    }
}

#[cfg(test)]
mod tests;
