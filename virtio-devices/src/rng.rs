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
pub(crate) const DEVICE: &str = "virtio-rng";
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

/// What a snapshot keeps of the entropy device ([`DeviceState::Rng`]): the positions of
/// its two streams and its counter, so a restored device hands out the same bytes after
/// the same latencies as the one saved.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct RngState {
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

impl Rng {
    /// The device's state for a snapshot: everything that shapes what it does next.
    pub(crate) fn save_state(&self) -> Result<RngState, DeviceError> {
        Ok(RngState {
            bytes: self.bytes.save(),
            latency: self.latency.save(),
            served_bytes: self.served_bytes,
        })
    }

    /// Loads a state saved by [`Self::save_state`] from a device built with the same
    /// configuration; with `reseed`, its random streams are re-keyed from that seed. The
    /// checks come before any change: on an error the device is as it was.
    pub(crate) fn load_state(
        &mut self,
        s: &RngState,
        reseed: Option<RunSeed>,
    ) -> Result<(), DeviceError> {
        self.bytes = Stream::resume(&s.bytes, reseed);
        self.latency = Stream::resume(&s.latency, reseed);
        self.served_bytes = s.served_bytes;
        Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::test_request;
    use vm_memory::GuestAddress;

    fn mem() -> GuestMem {
        GuestMem::from_ranges(&[(GuestAddress(0), 0x1_0000)]).unwrap()
    }

    /// Serves one 16-byte request and returns the bytes.
    fn draw(rng: &mut Rng, m: &GuestMem) -> [u8; 16] {
        let r = test_request(0, &[(0x1000, 16, true)]);
        assert_eq!(rng.complete(0, &r, m, 0).unwrap(), 16);
        let mut got = [0u8; 16];
        m.read_slice(&mut got, GuestAddress(0x1000)).unwrap();
        got
    }

    #[test]
    fn state_round_trips_reseeds_and_refuses_other_devices() {
        let m = mem();
        let mut rng = Rng::new(RunSeed(5), "rng", 100);
        draw(&mut rng, &m);
        let saved = rng.save_state().unwrap();
        let mut copy = Rng::new(RunSeed(6), "rng", 100);
        copy.load_state(&saved, None).unwrap();
        assert_eq!(
            postcard::to_stdvec(&copy.save_state().unwrap()).unwrap(),
            postcard::to_stdvec(&saved).unwrap()
        );
        assert_eq!(copy.served_bytes, 16);
        let mut reseeded = Rng::new(RunSeed(5), "rng", 100);
        reseeded.load_state(&saved, Some(RunSeed(9))).unwrap();
        let next = draw(&mut rng, &m);
        assert_eq!(draw(&mut copy, &m), next);
        assert_ne!(draw(&mut reseeded, &m), next);

        let before = postcard::to_stdvec(&copy.save_state().unwrap()).unwrap();
        let net = crate::state::save(&crate::Net::new(
            RunSeed(5),
            "net",
            crate::Link::default(),
            None,
        ))
        .unwrap();
        let e = crate::state::load(&mut copy, &net, None).unwrap_err();
        assert!(matches!(
            e,
            DeviceError::StateKind {
                here: "virtio-rng",
                saved: "virtio-net"
            }
        ));
        assert_eq!(
            e.to_string(),
            "saved state is of a virtio-net device, this is a virtio-rng device"
        );
        assert_eq!(
            postcard::to_stdvec(&copy.save_state().unwrap()).unwrap(),
            before
        );
    }
}
