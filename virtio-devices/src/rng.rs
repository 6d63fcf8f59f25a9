//! virtio-rng: entropy from the run seed.
//!
//! Every byte the guest reads comes from the device's "bytes" stream, and each
//! request is served after a latency drawn from its "latency" stream, so both
//! what the guest sees and when it sees it are functions of the seed.

use crate::device::{DeviceError, GuestMem, VirtioDevice};
use crate::VIRTIO_F_VERSION_1;
use virtio_queue::{Queue, QueueT};
use vm_memory::Bytes;
use wio_scheduler::{RunSeed, Stream};

/// virtio device ID of the entropy device.
pub const DEVICE_ID: u32 = 4;
/// Queue size offered.
pub const QUEUE_SIZE: u16 = 256;
/// Most bytes served per request (a guest asking for more gets this many).
pub const MAX_REQUEST: u32 = 64 * 1024;

/// The entropy device.
pub struct Rng {
    bytes: Stream,
    latency: Stream,
    mean_latency_ns: u64,
    /// Bytes handed to the guest so far.
    pub served_bytes: u64,
}

impl Rng {
    /// An entropy device whose streams are split from `seed` under `name`.
    pub fn new(seed: RunSeed, name: &str, mean_latency_ns: u64) -> Rng {
        Rng {
            bytes: seed.stream(&format!("{name}/bytes")),
            latency: seed.stream(&format!("{name}/latency")),
            mean_latency_ns,
            served_bytes: 0,
        }
    }
}

impl VirtioDevice for Rng {
    fn device_type(&self) -> u32 {
        DEVICE_ID
    }

    fn queue_max_sizes(&self) -> &[u16] {
        &[QUEUE_SIZE]
    }

    fn features(&self) -> u64 {
        VIRTIO_F_VERSION_1
    }

    fn service_delay_ns(&mut self, _queue: usize) -> u64 {
        self.latency.exponential_ns(self.mean_latency_ns)
    }

    fn serve(&mut self, _queue: usize, q: &mut Queue, mem: &GuestMem) -> Result<bool, DeviceError> {
        let mut used_any = false;
        // At most one pass over the ring per service: a guest cannot keep the device busy forever.
        for _ in 0..q.size() {
            let Some(chain) = q.pop_descriptor_chain(mem) else {
                break;
            };
            let head = chain.head_index();
            let mut written: u32 = 0;
            for desc in chain {
                if !desc.is_write_only() {
                    return Err(DeviceError(format!(
                        "virtio-rng: descriptor {head} is not device-writable"
                    )));
                }
                let len = desc.len().min(MAX_REQUEST - written);
                let mut buf = vec![0u8; len as usize];
                self.bytes.fill_bytes(&mut buf);
                mem.write_slice(&buf, desc.addr()).map_err(|e| {
                    DeviceError(format!("virtio-rng: buffer at {:#x}: {e}", desc.addr().0))
                })?;
                written += len;
                if written >= MAX_REQUEST {
                    break;
                }
            }
            self.served_bytes += u64::from(written);
            q.add_used(mem, head, written)
                .map_err(|e| DeviceError(format!("virtio-rng: used ring: {e}")))?;
            used_any = true;
        }
        Ok(used_any)
    }
}
