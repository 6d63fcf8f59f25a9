//! virtio-rng: entropy from the run seed.
//!
//! Every byte the guest reads comes from the device's "bytes" stream, and each
//! request takes a latency drawn from its "latency" stream, so both what the
//! guest sees and when it sees it are functions of the seed.

use crate::device::{submit_with_latency, DeviceError, GuestMem, Pending, Request, VirtioDevice};
use crate::VIRTIO_F_VERSION_1;
use virtio_queue::Queue;
use vm_memory::Bytes;
use wio_scheduler::{stream_names, RunSeed, Stream};

/// virtio device ID of the entropy device.
pub const DEVICE_ID: u32 = 4;
/// The device's name in errors.
const DEVICE: &str = "virtio-rng";
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

/// What a snapshot keeps of the entropy device.
#[derive(serde::Serialize, serde::Deserialize)]
struct RngState {
    bytes: wio_scheduler::SavedStream,
    latency: wio_scheduler::SavedStream,
    served_bytes: u64,
}

impl Rng {
    /// An entropy device whose streams are split from `seed` under `name`: `name/bytes`
    /// and `name/latency` (see [`wio_scheduler::stream_names`]).
    pub fn new(seed: RunSeed, name: &str, mean_latency_ns: u64) -> Rng {
        Rng {
            bytes: seed.stream(&stream_names::sub(name, stream_names::BYTES)),
            latency: seed.stream(&stream_names::sub(name, stream_names::LATENCY)),
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

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }

    fn save_state(&self) -> Result<Vec<u8>, DeviceError> {
        Ok(crate::state::encode(&RngState {
            bytes: self.bytes.save(),
            latency: self.latency.save(),
            served_bytes: self.served_bytes,
        }))
    }

    fn load_state(&mut self, state: &[u8], reseed: Option<RunSeed>) -> Result<(), DeviceError> {
        let s: RngState = crate::state::decode(state, DEVICE)?;
        self.bytes = Stream::resume(&s.bytes, reseed);
        self.latency = Stream::resume(&s.latency, reseed);
        self.served_bytes = s.served_bytes;
        Ok(())
    }

    fn features(&self) -> u64 {
        VIRTIO_F_VERSION_1
    }

    fn submit(
        &mut self,
        _queue: usize,
        q: &mut Queue,
        mem: &GuestMem,
    ) -> Result<Vec<Pending>, DeviceError> {
        submit_with_latency(q, mem, &mut self.latency, self.mean_latency_ns)
    }

    fn complete(
        &mut self,
        _queue: usize,
        request: &Request,
        mem: &GuestMem,
        _now_ns: u64,
    ) -> Result<u32, DeviceError> {
        let mut written: u32 = 0;
        for seg in &request.segments {
            if !seg.write {
                return Err(DeviceError::BufferDirection {
                    device: DEVICE,
                    chain: "descriptor chain",
                    head: request.head,
                    writable: false,
                });
            }
            let len = seg.len.min(MAX_REQUEST - written);
            let mut buf = vec![0u8; len as usize];
            self.bytes.fill_bytes(&mut buf);
            mem.write_slice(&buf, seg.addr)
                .map_err(|error| DeviceError::GuestMemory {
                    device: DEVICE,
                    buffer: "buffer",
                    addr: seg.addr.0,
                    error,
                })?;
            written += len;
            if written >= MAX_REQUEST {
                break;
            }
        }
        self.served_bytes += u64::from(written);
        Ok(written)
    }
}
