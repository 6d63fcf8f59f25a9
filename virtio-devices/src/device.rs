//! What a virtio device implements, independent of the transport.
//!
//! Requests are handled in two steps so that completion times and orders come
//! from the seed: [`VirtioDevice::submit`] takes the available descriptor
//! chains when the guest notifies and says, per request, how many virtual ns it
//! takes (drawn from the device's PRNG); the machine schedules each one, and
//! [`VirtioDevice::complete`] performs it at that virtual time and hands the
//! buffer back. Two requests may therefore complete in the other order.

use virtio_queue::desc::split::Descriptor;
use virtio_queue::{Queue, QueueT};
use vm_memory::GuestAddress;

pub use crate::error::DeviceError;

/// Guest memory as devices see it.
pub type GuestMem = vm_memory::GuestMemoryMmap<()>;

/// Most descriptors wio accepts in one chain (the queue crate also stops loops).
pub const MAX_CHAIN: usize = 1024;

/// One descriptor of a chain, copied out of guest memory at submission.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Segment {
    /// Guest-physical address.
    #[serde(with = "crate::codec::guest_address")]
    pub addr: GuestAddress,
    /// Length in bytes.
    pub len: u32,
    /// Whether the device may write it (else it is device-readable).
    pub write: bool,
}

/// A request taken from a queue: its head index and its descriptors in order.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Request {
    /// Head descriptor index, handed back in the used ring.
    pub head: u16,
    /// The chain's descriptors.
    pub segments: Vec<Segment>,
}

/// A submitted request with the virtual ns it takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pending {
    /// Virtual ns from submission to completion.
    pub delay_ns: u64,
    /// What to complete.
    pub request: Request,
}

/// Takes every available chain of `q` (at most one pass over the ring).
pub fn take_requests(q: &mut Queue, mem: &GuestMem) -> Result<Vec<Request>, DeviceError> {
    let mut out = Vec::new();
    for _ in 0..q.size() {
        let Some(chain) = q.pop_descriptor_chain(mem) else {
            break;
        };
        let head = chain.head_index();
        let mut segments = Vec::new();
        for desc in chain {
            let desc: Descriptor = desc;
            if segments.len() == MAX_CHAIN {
                return Err(DeviceError::ChainTooLong {
                    head,
                    max: MAX_CHAIN,
                });
            }
            segments.push(Segment {
                addr: desc.addr(),
                len: desc.len(),
                write: desc.is_write_only(),
            });
        }
        out.push(Request { head, segments });
    }
    Ok(out)
}

/// Takes the available chains of `q` and gives each an exponentially distributed latency
/// (mean `mean_ns`) drawn from `latency`, in ring order: the usual `submit` of a device.
pub fn submit_with_latency(
    q: &mut Queue,
    mem: &GuestMem,
    latency: &mut wio_scheduler::Stream,
    mean_ns: u64,
) -> Result<Vec<Pending>, DeviceError> {
    Ok(take_requests(q, mem)?
        .into_iter()
        .map(|request| Pending {
            delay_ns: latency.exponential_ns(mean_ns),
            request,
        })
        .collect())
}

/// Copies the bytes of a device's config space `config` at `offset` into `data`; bytes
/// beyond it read as zero.
pub fn read_config_bytes(config: &[u8], offset: u64, data: &mut [u8]) {
    for (i, b) in data.iter_mut().enumerate() {
        *b = usize::try_from(offset)
            .ok()
            .and_then(|o| config.get(o + i))
            .copied()
            .unwrap_or(0);
    }
}

/// Transmit chains taken off the ring, each after a short service time drawn from
/// `stream` (1 to 2 µs): the usual `submit` of a device's transmit queue.
pub fn with_service_time(
    requests: Vec<Request>,
    stream: &mut wio_scheduler::Stream,
) -> Vec<Pending> {
    requests
        .into_iter()
        .map(|request| Pending {
            delay_ns: 1_000 + stream.below(1_000),
            request,
        })
        .collect()
}

/// A virtio device behind a transport.
pub trait VirtioDevice {
    /// The virtio device ID (2 = block, 4 = entropy).
    fn device_type(&self) -> u32;
    /// Maximum size of each of the device's queues.
    fn queue_max_sizes(&self) -> &[u16];
    /// Feature bits the device offers (including [`crate::VIRTIO_F_VERSION_1`]).
    fn features(&self) -> u64;
    /// Reads the device-specific configuration space.
    fn read_config(&self, _offset: u64, data: &mut [u8]) {
        data.fill(0);
    }
    /// Takes the requests the guest made available on `queue` and says how long each takes.
    fn submit(
        &mut self,
        queue: usize,
        q: &mut Queue,
        mem: &GuestMem,
    ) -> Result<Vec<Pending>, DeviceError>;
    /// Performs `request` now (virtual time `now_ns`) and returns the number of bytes written
    /// into its buffers (the used length); the transport hands the chain back.
    fn complete(
        &mut self,
        queue: usize,
        request: &Request,
        mem: &GuestMem,
        now_ns: u64,
    ) -> Result<u32, DeviceError>;
    /// Timers the device wants (virtual ns from now, token), taken by the machine after each
    /// access and completion; it calls [`VirtioDevice::timer`] at each one.
    fn take_timers(&mut self) -> Vec<(u64, u64)> {
        Vec::new()
    }
    /// A timer fired at `now_ns`: returns chains to hand back as (queue, head, used length).
    fn timer(
        &mut self,
        _token: u64,
        _mem: &GuestMem,
        _now_ns: u64,
    ) -> Result<Vec<(usize, u16, u32)>, DeviceError> {
        Ok(Vec::new())
    }
    /// Forgets per-driver state (the guest reset the device).
    fn reset(&mut self) {}
    /// The device as `Any`, so the machine can reach a device's own API (a disk to persist).
    fn as_any(&self) -> &dyn std::any::Any;
    /// The device as mutable `Any` (a restored disk takes its shared overlay this way).
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any;
}

/// Builds a request from (address, length, device-writable) triples, for tests.
#[cfg(test)]
pub(crate) fn test_request(head: u16, segs: &[(u64, u32, bool)]) -> Request {
    Request {
        head,
        segments: segs
            .iter()
            .map(|&(a, l, w)| Segment {
                addr: GuestAddress(a),
                len: l,
                write: w,
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{DiskStateError, RequestError};

    fn mem_error() -> vm_memory::GuestMemoryError {
        vm_memory::GuestMemoryError::InvalidGuestAddress(GuestAddress(0x7fff_0000))
    }

    /// The messages of errors met while serving the guest go into the trace: they are
    /// pinned here as the `format!` strings they replaced spelled them.
    #[test]
    fn guest_facing_messages_are_unchanged() {
        let m = mem_error().to_string();
        let cases = [
            (
                DeviceError::ChainTooLong {
                    head: 3,
                    max: MAX_CHAIN,
                },
                "descriptor chain 3 is longer than 1024".to_string(),
            ),
            (
                DeviceError::BufferDirection {
                    device: "virtio-rng",
                    chain: "descriptor chain",
                    head: 4,
                    writable: false,
                },
                "virtio-rng: descriptor chain 4 has a device-readable buffer".to_string(),
            ),
            (
                DeviceError::BufferDirection {
                    device: "virtio-net",
                    chain: "transmit chain",
                    head: 5,
                    writable: true,
                },
                "virtio-net: transmit chain 5 has a device-writable buffer".to_string(),
            ),
            (
                DeviceError::GuestMemory {
                    device: "virtio-net",
                    buffer: "receive buffer",
                    addr: 0x7fff_0000,
                    error: mem_error(),
                },
                format!("virtio-net: receive buffer at 0x7fff0000: {m}"),
            ),
            (
                DeviceError::BlockRequest {
                    head: 6,
                    problem: RequestError::Buffer {
                        addr: 0x7fff_0000,
                        error: mem_error(),
                    },
                },
                format!("virtio-blk: request 6: buffer at 0x7fff0000: {m}"),
            ),
            (
                DeviceError::BlockRequest {
                    head: 7,
                    problem: RequestError::StatusByte { error: mem_error() },
                },
                format!("virtio-blk: request 7: status byte: {m}"),
            ),
            (
                DeviceError::BlockRequest {
                    head: 8,
                    problem: RequestError::NotHeaderDataStatus,
                },
                "virtio-blk: request 8: not a header, data and status chain".to_string(),
            ),
            (
                DeviceError::NetReceiveCompletion,
                "virtio-net: completion on the receive queue".to_string(),
            ),
            (
                DeviceError::FrameTooLarge {
                    head: 9,
                    max: crate::net::MAX_FRAME,
                },
                "virtio-net: transmit chain 9 is larger than 65550 bytes".to_string(),
            ),
            (
                DeviceError::NoFrame { head: 10 },
                "virtio-net: transmit chain 10 holds no Ethernet frame".to_string(),
            ),
        ];
        for (e, want) in cases {
            assert_eq!(e.to_string(), want);
        }
    }

    #[test]
    fn state_messages_name_what_is_wrong() {
        let e = DeviceError::DiskState {
            error: DiskStateError::BaseLength {
                here: 1024,
                saved: 2048,
            },
        };
        assert_eq!(
            e.to_string(),
            "virtio-blk: the base image is 1024 bytes, the snapshot's was 2048"
        );
        let e = DeviceError::StateLimit {
            device: "virtio-net",
            what: "waiting frames",
            len: 2000,
            max: 1024,
        };
        assert_eq!(
            e.to_string(),
            "saved virtio-net state exceeds the device's limits: 2000 waiting frames, at most 1024"
        );
    }
}
