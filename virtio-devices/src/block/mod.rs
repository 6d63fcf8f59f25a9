//! virtio-blk on a [`Disk`]: reads, writes into the volatile cache, FLUSH
//! (which makes them durable) and GET_ID. Each request completes after a
//! latency drawn from the device's PRNG stream, so completion order is a
//! function of the seed.
//!
//! The machine injects faults ([`DiskFault`]) with [`Block::start_fault`] and
//! [`Block::end_fault`]: an error fault fails the matching requests performed while it is
//! in force (`complete`), a latency fault lengthens every request submitted while it is in
//! force (`submit`). Faults draw nothing: a run without faults is the run of before.

pub mod disk;
mod faults;

use crate::device::{
    submit_with_latency, DeviceError, GuestMem, Pending, Request, Segment, VirtioDevice,
};
use crate::state::DeviceState;
use crate::VIRTIO_F_VERSION_1;
pub use disk::{Disk, DiskError, DiskState, DiskStateError, Overlay};
pub use faults::{DiskFault, DiskOp, Unflushed};
use faults::{Faults, FaultsState, T_FLUSH, T_IN, T_OUT};

pub use crate::error::RequestError;

use virtio_queue::Queue;
use vm_memory::{Bytes, GuestAddress};
use wio_scheduler::{stream_names, RunSeed, Stream};

/// virtio device ID of the block device.
pub const DEVICE_ID: u32 = 2;
/// The device's name in errors.
pub(crate) const DEVICE: &str = "virtio-blk";
/// Queue size offered.
pub const QUEUE_SIZE: u16 = 128;
/// Feature bit: the device supports FLUSH.
pub const VIRTIO_BLK_F_FLUSH: u64 = 1 << 9;
/// Largest request wio serves (bigger ones fail with an I/O error status).
pub const MAX_REQUEST_BYTES: u64 = 4 << 20;

const T_GET_ID: u32 = 8;
const S_OK: u8 = 0;
const S_IOERR: u8 = 1;
const S_UNSUPP: u8 = 2;

/// Counters of what the guest asked for.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BlockStats {
    /// Read requests.
    pub reads: u64,
    /// Write requests.
    pub writes: u64,
    /// Flush requests.
    pub flushes: u64,
    /// Requests answered with an error status.
    pub errors: u64,
    /// Requests failed by an injected fault (also counted in `errors`).
    pub fault_errors: u64,
    /// Sectors a bit-rot fault corrupted.
    pub rotted_sectors: u64,
}

/// The block device.
pub struct Block {
    disk: Disk,
    latency: Stream,
    mean_latency_ns: u64,
    /// The injected faults in force and their streams.
    faults: Faults,
    /// What the guest asked for.
    pub stats: BlockStats,
}

impl Block {
    /// A block device on `disk` with latencies from `seed`'s stream `name/latency` (see
    /// [`wio_scheduler::stream_names`]).
    pub fn new(disk: Disk, seed: RunSeed, name: &str, mean_latency_ns: u64) -> Block {
        Block {
            disk,
            latency: seed.stream(&stream_names::sub(name, stream_names::LATENCY)),
            mean_latency_ns,
            faults: Faults::new(seed, name),
            stats: BlockStats::default(),
        }
    }

    /// Fault `id` is in force from now on: it acts on the requests submitted (latency) or
    /// performed (errors) from now on. A fault already in force under `id` is replaced.
    pub fn start_fault(&mut self, id: u64, fault: DiskFault) {
        self.faults.start(id, fault);
    }

    /// Fault `id` is no longer in force; an unknown id changes nothing.
    pub fn end_fault(&mut self, id: u64) {
        self.faults.end(id);
    }

    /// The power is cut: the volatile cache goes as `unflushed` says (see [`Unflushed`]).
    /// Requests in flight are the machine's to drop (they were never performed).
    pub fn power_cut(&mut self, unflushed: Unflushed) {
        self.faults.power_cut(&mut self.disk, unflushed);
    }

    /// The faults in force, in id order.
    pub fn faults_in_force(&self) -> impl Iterator<Item = (u64, DiskFault)> + '_ {
        self.faults.iter()
    }

    /// The disk behind the device.
    pub fn disk(&self) -> &Disk {
        &self.disk
    }

    /// The disk behind the device, to change (a restore hands it a shared overlay).
    pub fn disk_mut(&mut self) -> &mut Disk {
        &mut self.disk
    }

    fn bad(request: &Request, problem: RequestError) -> DeviceError {
        DeviceError::BlockRequest {
            head: request.head,
            problem,
        }
    }

    /// A read (`into_guest`) or write an error fault fails: a chain whose data buffers go
    /// the wrong way is still malformed; otherwise the request fails untouched (counted).
    fn fault_error(
        &mut self,
        request: &Request,
        data: &[Segment],
        into_guest: bool,
    ) -> Result<(u8, u32), DeviceError> {
        if data.iter().any(|s| s.write != into_guest) {
            return Err(Self::bad(
                request,
                if into_guest {
                    RequestError::ReadIntoReadable
                } else {
                    RequestError::WriteFromWritable
                },
            ));
        }
        self.stats.fault_errors += 1;
        Ok((S_IOERR, 0))
    }

    /// Performs one request; returns (status, bytes written into guest buffers).
    fn perform(
        &mut self,
        request: &Request,
        header: (u32, u64),
        data: &[Segment],
        mem: &GuestMem,
    ) -> Result<(u8, u32), DeviceError> {
        let (kind, sector) = header;
        let total: u64 = data.iter().map(|s| u64::from(s.len)).sum();
        let Some(offset) = sector.checked_mul(disk::SECTOR) else {
            return Ok((S_IOERR, 0));
        };
        if total > MAX_REQUEST_BYTES {
            return Ok((S_IOERR, 0));
        }
        match kind {
            T_IN => {
                self.stats.reads += 1;
                if self.faults.fails(kind) {
                    return self.fault_error(request, data, true);
                }
                if offset
                    .checked_add(total)
                    .is_some_and(|end| end <= self.disk.capacity())
                {
                    self.stats.rotted_sectors += self.faults.rot(&mut self.disk, offset, total);
                }
                let mut pos = offset;
                for seg in data {
                    if !seg.write {
                        return Err(Self::bad(request, RequestError::ReadIntoReadable));
                    }
                    let mut buf = vec![0u8; seg.len as usize];
                    if self.disk.read(pos, &mut buf).is_err() {
                        return Ok((S_IOERR, 0));
                    }
                    mem.write_slice(&buf, seg.addr).map_err(|error| {
                        Self::bad(
                            request,
                            RequestError::Buffer {
                                addr: seg.addr.0,
                                error,
                            },
                        )
                    })?;
                    pos += u64::from(seg.len);
                }
                Ok((S_OK, total as u32))
            }
            T_OUT => {
                self.stats.writes += 1;
                if self.faults.fails(kind) {
                    return self.fault_error(request, data, false);
                }
                let mut pos = offset;
                for seg in data {
                    if seg.write {
                        return Err(Self::bad(request, RequestError::WriteFromWritable));
                    }
                    let mut buf = vec![0u8; seg.len as usize];
                    mem.read_slice(&mut buf, seg.addr).map_err(|error| {
                        Self::bad(
                            request,
                            RequestError::Buffer {
                                addr: seg.addr.0,
                                error,
                            },
                        )
                    })?;
                    if self.disk.write(pos, &buf).is_err() {
                        return Ok((S_IOERR, 0));
                    }
                    pos += u64::from(seg.len);
                }
                Ok((S_OK, 0))
            }
            T_FLUSH => {
                self.stats.flushes += 1;
                if self.faults.fails(kind) {
                    self.stats.fault_errors += 1;
                    return Ok((S_IOERR, 0));
                }
                self.disk.flush();
                Ok((S_OK, 0))
            }
            T_GET_ID => {
                let id = b"wio-virtio-blk\0\0\0\0\0\0";
                let Some(seg) = data.first().filter(|s| s.write) else {
                    return Ok((S_IOERR, 0));
                };
                let n = (seg.len as usize).min(id.len());
                mem.write_slice(&id[..n], seg.addr)
                    .map_err(|error| Self::bad(request, RequestError::IdBuffer { error }))?;
                Ok((S_OK, n as u32))
            }
            _ => Ok((S_UNSUPP, 0)),
        }
    }
}

/// What a snapshot keeps of the block device ([`DeviceState::Block`]): its disk's writes
/// (durable and volatile chunks, on a base of the saved length), its latency stream, its
/// counters and the faults in force.
///
/// The chunks can be moved out once into a shared [`Overlay`]
/// ([`crate::TransportState::take_block_overlay`]) so that many restores of one snapshot
/// share them instead of each copying the disk.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct BlockState {
    disk: DiskState,
    latency: wio_scheduler::SavedStream,
    stats: BlockStats,
    faults: FaultsState,
}

impl BlockState {
    /// Moves the disk's chunks out as a shared overlay (validated as
    /// [`DiskState::into_overlay`] does), leaving the saved disk without chunks: loading the
    /// stripped state and then [`Disk::set_overlay`] with the overlay gives what loading the
    /// full state gave. On an error nothing is moved.
    pub(crate) fn take_overlay(&mut self) -> Result<Overlay, DeviceError> {
        self.disk
            .take_overlay()
            .map_err(|error| DeviceError::DiskState { error })
    }
}

impl VirtioDevice for Block {
    fn device_type(&self) -> u32 {
        DEVICE_ID
    }

    fn save_state(&self) -> Result<DeviceState, DeviceError> {
        Ok(DeviceState::Block(Box::new(BlockState {
            disk: self.disk.save_state(),
            latency: self.latency.save(),
            stats: self.stats.clone(),
            faults: self.faults.save(),
        })))
    }

    fn load_state(
        &mut self,
        state: &DeviceState,
        reseed: Option<RunSeed>,
    ) -> Result<(), DeviceError> {
        let DeviceState::Block(s) = state else {
            return Err(state.wrong_kind(DEVICE));
        };
        self.disk
            .load_state(s.disk.clone())
            .map_err(|error| DeviceError::DiskState { error })?;
        self.latency = Stream::resume(&s.latency, reseed);
        self.stats = s.stats.clone();
        self.faults.load(s.faults.clone(), reseed);
        Ok(())
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
        VIRTIO_F_VERSION_1 | VIRTIO_BLK_F_FLUSH
    }

    fn read_config(&self, offset: u64, data: &mut [u8]) {
        // Config space: capacity (u64, in sectors) at offset 0; the rest reads as zero.
        let mut config = [0u8; 8];
        config.copy_from_slice(&(self.disk.capacity() / disk::SECTOR).to_le_bytes());
        crate::device::read_config_bytes(&config, offset, data);
    }

    fn submit(
        &mut self,
        _queue: usize,
        q: &mut Queue,
        mem: &GuestMem,
    ) -> Result<Vec<Pending>, DeviceError> {
        let mut pending = submit_with_latency(q, mem, &mut self.latency, self.mean_latency_ns)?;
        let extra = self.faults.latency();
        for p in &mut pending {
            p.delay_ns = p.delay_ns.saturating_add(extra);
        }
        Ok(pending)
    }

    fn complete(
        &mut self,
        _queue: usize,
        request: &Request,
        mem: &GuestMem,
        _now_ns: u64,
    ) -> Result<u32, DeviceError> {
        let segs = &request.segments;
        let (Some(first), Some(last)) = (segs.first(), segs.last()) else {
            return Err(Self::bad(request, RequestError::EmptyChain));
        };
        if segs.len() < 2 || first.write || first.len < 16 || !last.write || last.len < 1 {
            return Err(Self::bad(request, RequestError::NotHeaderDataStatus));
        }
        let mut header = [0u8; 16];
        mem.read_slice(&mut header, first.addr)
            .map_err(|error| Self::bad(request, RequestError::Header { error }))?;
        let kind = u32::from_le_bytes([header[0], header[1], header[2], header[3]]);
        let sector = u64::from_le_bytes(header[8..16].try_into().unwrap_or([0; 8]));
        let data = &segs[1..segs.len() - 1];
        let (status, written) = self.perform(request, (kind, sector), data, mem)?;
        if status != S_OK {
            self.stats.errors += 1;
        }
        mem.write_slice(
            &[status],
            GuestAddress(last.addr.0 + u64::from(last.len) - 1),
        )
        .map_err(|error| Self::bad(request, RequestError::StatusByte { error }))?;
        Ok(written + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::test_request as request;
    use crate::mmio::{reg, status, MmioTransport};
    use virtio_queue::desc::{split::Descriptor as SplitDescriptor, RawDescriptor};
    use virtio_queue::mock::MockSplitQueue;

    const NEXT: u16 = 1;
    const WRITE: u16 = 2;

    fn disk(bytes: &[u8], tag: &str) -> Disk {
        let dir = std::env::temp_dir().join(format!("wio-blk-{}-{tag}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("base.img");
        std::fs::write(&p, bytes).unwrap();
        Disk::open(&p).unwrap()
    }

    fn header(mem: &GuestMem, at: u64, kind: u32, sector: u64) {
        let mut h = [0u8; 16];
        h[..4].copy_from_slice(&kind.to_le_bytes());
        h[8..].copy_from_slice(&sector.to_le_bytes());
        mem.write_slice(&h, GuestAddress(at)).unwrap();
    }

    #[test]
    fn write_read_flush_round_trip() {
        let mem = GuestMem::from_ranges(&[(GuestAddress(0), 0x10_0000)]).unwrap();
        let mut blk = Block::new(disk(&[0u8; 8192], "rt"), RunSeed(1), "blk", 1000);
        header(&mem, 0x1000, T_OUT, 2);
        mem.write_slice(b"sector two", GuestAddress(0x2000))
            .unwrap();
        let w = request(
            0,
            &[(0x1000, 16, false), (0x2000, 512, false), (0x3000, 1, true)],
        );
        assert_eq!(blk.complete(0, &w, &mem, 0).unwrap(), 1);
        assert_eq!(mem.read_obj::<u8>(GuestAddress(0x3000)).unwrap(), S_OK);
        assert_eq!(blk.disk().volatile_chunks(), 1);
        header(&mem, 0x1000, T_IN, 2);
        let r = request(
            1,
            &[(0x1000, 16, false), (0x4000, 512, true), (0x3000, 1, true)],
        );
        assert_eq!(blk.complete(0, &r, &mem, 0).unwrap(), 513);
        let mut got = [0u8; 10];
        mem.read_slice(&mut got, GuestAddress(0x4000)).unwrap();
        assert_eq!(&got, b"sector two");
        header(&mem, 0x1000, T_FLUSH, 0);
        let f = request(2, &[(0x1000, 16, false), (0x3000, 1, true)]);
        blk.complete(0, &f, &mem, 0).unwrap();
        assert_eq!(
            (blk.disk().volatile_chunks(), blk.disk().durable_chunks()),
            (0, 1)
        );
        // Beyond the end: an I/O error status, not a device failure.
        header(&mem, 0x1000, T_IN, 1000);
        blk.complete(0, &r, &mem, 0).unwrap();
        assert_eq!(mem.read_obj::<u8>(GuestAddress(0x3000)).unwrap(), S_IOERR);
        header(&mem, 0x1000, 99, 0);
        blk.complete(0, &r, &mem, 0).unwrap();
        assert_eq!(mem.read_obj::<u8>(GuestAddress(0x3000)).unwrap(), S_UNSUPP);
    }

    #[test]
    fn malformed_chains_are_device_errors() {
        let mem = GuestMem::from_ranges(&[(GuestAddress(0), 0x10_0000)]).unwrap();
        let mut blk = Block::new(disk(&[0u8; 4096], "bad"), RunSeed(1), "blk", 1000);
        assert!(matches!(
            blk.complete(0, &request(0, &[(0x1000, 16, false)]), &mem, 0),
            Err(DeviceError::BlockRequest {
                head: 0,
                problem: RequestError::NotHeaderDataStatus
            })
        ));
        assert!(matches!(
            blk.complete(
                0,
                &request(0, &[(0x1000, 16, true), (0x3000, 1, true)]),
                &mem,
                0
            ),
            Err(DeviceError::BlockRequest {
                problem: RequestError::NotHeaderDataStatus,
                ..
            })
        ));
        header(&mem, 0x1000, T_IN, 0);
        let outside = request(
            0,
            &[
                (0x1000, 16, false),
                (0x7fff_0000, 512, true),
                (0x3000, 1, true),
            ],
        );
        assert!(matches!(
            blk.complete(0, &outside, &mem, 0),
            Err(DeviceError::BlockRequest {
                problem: RequestError::Buffer {
                    addr: 0x7fff_0000,
                    ..
                },
                ..
            })
        ));
    }

    #[test]
    fn completion_order_depends_on_the_seed() {
        // Two requests submitted together complete in an order drawn from the seed.
        let orders: Vec<bool> = (0..16)
            .map(|seed| {
                let mem = GuestMem::from_ranges(&[(GuestAddress(0), 0x20_0000)]).unwrap();
                let vq = MockSplitQueue::new(&mem, 16);
                let descs = [
                    RawDescriptor::from(SplitDescriptor::new(0x10_0000, 16, NEXT, 1)),
                    RawDescriptor::from(SplitDescriptor::new(0x10_1000, 1, WRITE, 0)),
                    RawDescriptor::from(SplitDescriptor::new(0x10_2000, 16, NEXT, 3)),
                    RawDescriptor::from(SplitDescriptor::new(0x10_3000, 1, WRITE, 0)),
                ];
                vq.add_desc_chains(&descs, 0).unwrap();
                header(&mem, 0x10_0000, T_FLUSH, 0);
                header(&mem, 0x10_2000, T_FLUSH, 0);
                let blk = Block::new(
                    disk(&[0u8; 4096], &format!("ord{seed}")),
                    RunSeed(seed),
                    "blk",
                    100_000,
                );
                let mut t = MmioTransport::new(Box::new(blk));
                let w = |t: &mut MmioTransport, o: u64, v: u32| t.write(o, &v.to_le_bytes(), &mem);
                w(&mut t, reg::STATUS, status::ACKNOWLEDGE | status::DRIVER);
                w(&mut t, reg::DRIVER_FEATURES_SEL, 1);
                w(&mut t, reg::DRIVER_FEATURES, 1);
                w(
                    &mut t,
                    reg::STATUS,
                    status::ACKNOWLEDGE | status::DRIVER | status::FEATURES_OK,
                );
                w(&mut t, reg::QUEUE_NUM, 16);
                w(&mut t, reg::QUEUE_DESC_LOW, vq.desc_table_addr().0 as u32);
                w(&mut t, reg::QUEUE_DRIVER_LOW, vq.avail_addr().0 as u32);
                w(&mut t, reg::QUEUE_DEVICE_LOW, vq.used_addr().0 as u32);
                w(&mut t, reg::QUEUE_READY, 1);
                w(
                    &mut t,
                    reg::STATUS,
                    status::ACKNOWLEDGE | status::DRIVER | status::FEATURES_OK | status::DRIVER_OK,
                );
                assert_eq!(w(&mut t, reg::QUEUE_NOTIFY, 0), Some(0));
                let p = t.submit(0, &mem);
                assert_eq!(p.len(), 2);
                p[0].delay_ns <= p[1].delay_ns
            })
            .collect();
        assert!(
            orders.contains(&true) && orders.contains(&false),
            "both orders occur across seeds: {orders:?}"
        );
    }

    /// Submits two FLUSH requests on a fresh queue and returns their delays.
    fn submit_two(blk: &mut Block) -> Vec<u64> {
        let mem = GuestMem::from_ranges(&[(GuestAddress(0), 0x20_0000)]).unwrap();
        let vq = MockSplitQueue::new(&mem, 16);
        let descs = [
            RawDescriptor::from(SplitDescriptor::new(0x10_0000, 16, NEXT, 1)),
            RawDescriptor::from(SplitDescriptor::new(0x10_1000, 1, WRITE, 0)),
            RawDescriptor::from(SplitDescriptor::new(0x10_2000, 16, NEXT, 3)),
            RawDescriptor::from(SplitDescriptor::new(0x10_3000, 1, WRITE, 0)),
        ];
        vq.add_desc_chains(&descs, 0).unwrap();
        let mut q: Queue = vq.create_queue().unwrap();
        blk.submit(0, &mut q, &mem)
            .unwrap()
            .iter()
            .map(|p| p.delay_ns)
            .collect()
    }

    #[test]
    fn an_error_fault_fails_reads_without_touching_the_guests_buffer() {
        let mem = GuestMem::from_ranges(&[(GuestAddress(0), 0x10_0000)]).unwrap();
        let mut blk = Block::new(disk(&[7u8; 4096], "eio-read"), RunSeed(1), "blk", 1000);
        mem.write_slice(&[0xaa; 512], GuestAddress(0x4000)).unwrap();
        header(&mem, 0x1000, T_IN, 0);
        let r = request(
            0,
            &[(0x1000, 16, false), (0x4000, 512, true), (0x3000, 1, true)],
        );
        blk.start_fault(3, DiskFault::Error(DiskOp::Read));
        assert_eq!(blk.complete(0, &r, &mem, 0).unwrap(), 1, "only the status");
        assert_eq!(mem.read_obj::<u8>(GuestAddress(0x3000)).unwrap(), S_IOERR);
        let mut got = [0u8; 512];
        mem.read_slice(&mut got, GuestAddress(0x4000)).unwrap();
        assert_eq!(got, [0xaa; 512], "the guest's buffer is untouched");
        assert_eq!(
            (blk.stats.reads, blk.stats.errors, blk.stats.fault_errors),
            (1, 1, 1)
        );
        // A write fault leaves reads alone; GET_ID is never failed.
        blk.start_fault(4, DiskFault::Error(DiskOp::Write));
        blk.end_fault(3);
        blk.end_fault(99); // unknown: nothing happens
        assert_eq!(
            blk.faults_in_force().collect::<Vec<_>>(),
            vec![(4, DiskFault::Error(DiskOp::Write))]
        );
        assert_eq!(blk.complete(0, &r, &mem, 0).unwrap(), 513);
        assert_eq!(mem.read_obj::<u8>(GuestAddress(0x3000)).unwrap(), S_OK);
        mem.read_slice(&mut got, GuestAddress(0x4000)).unwrap();
        assert_eq!(got, [7u8; 512]);
        blk.start_fault(5, DiskFault::Error(DiskOp::Any));
        header(&mem, 0x1000, T_GET_ID, 0);
        let id = request(
            2,
            &[(0x1000, 16, false), (0x5000, 20, true), (0x3000, 1, true)],
        );
        assert_eq!(blk.complete(0, &id, &mem, 0).unwrap(), 21);
        assert_eq!(mem.read_obj::<u8>(GuestAddress(0x3000)).unwrap(), S_OK);
        // A malformed chain stays a device error under a fault.
        header(&mem, 0x1000, T_IN, 0);
        assert!(matches!(
            blk.complete(
                0,
                &request(
                    3,
                    &[(0x1000, 16, false), (0x4000, 512, false), (0x3000, 1, true)]
                ),
                &mem,
                0
            ),
            Err(DeviceError::BlockRequest {
                problem: RequestError::ReadIntoReadable,
                ..
            })
        ));
        assert_eq!((blk.stats.errors, blk.stats.fault_errors), (1, 1));
    }

    #[test]
    fn an_error_fault_fails_writes_and_flushes_without_changing_the_disk() {
        let mem = GuestMem::from_ranges(&[(GuestAddress(0), 0x10_0000)]).unwrap();
        let mut blk = Block::new(disk(&[0u8; 8192], "eio-write"), RunSeed(1), "blk", 1000);
        mem.write_slice(b"written", GuestAddress(0x2000)).unwrap();
        let w = request(
            0,
            &[(0x1000, 16, false), (0x2000, 512, false), (0x3000, 1, true)],
        );
        let r = request(
            1,
            &[(0x1000, 16, false), (0x4000, 512, true), (0x3000, 1, true)],
        );
        let f = request(2, &[(0x1000, 16, false), (0x3000, 1, true)]);
        blk.start_fault(0, DiskFault::Error(DiskOp::Write));
        header(&mem, 0x1000, T_OUT, 1);
        assert_eq!(blk.complete(0, &w, &mem, 0).unwrap(), 1);
        assert_eq!(mem.read_obj::<u8>(GuestAddress(0x3000)).unwrap(), S_IOERR);
        assert_eq!(blk.disk().volatile_chunks(), 0, "nothing written");
        header(&mem, 0x1000, T_IN, 1);
        assert_eq!(blk.complete(0, &r, &mem, 0).unwrap(), 513);
        let mut got = [0xffu8; 7];
        mem.read_slice(&mut got, GuestAddress(0x4000)).unwrap();
        assert_eq!(got, [0u8; 7], "the disk reads back unchanged");

        // The fault ends: the write lands; a flush under `Any` fails and keeps it volatile.
        blk.end_fault(0);
        header(&mem, 0x1000, T_OUT, 1);
        blk.complete(0, &w, &mem, 0).unwrap();
        assert_eq!(mem.read_obj::<u8>(GuestAddress(0x3000)).unwrap(), S_OK);
        assert_eq!(blk.disk().volatile_chunks(), 1);
        blk.start_fault(1, DiskFault::Error(DiskOp::Any));
        header(&mem, 0x1000, T_FLUSH, 0);
        assert_eq!(blk.complete(0, &f, &mem, 0).unwrap(), 1);
        assert_eq!(mem.read_obj::<u8>(GuestAddress(0x3000)).unwrap(), S_IOERR);
        assert_eq!(
            (blk.disk().volatile_chunks(), blk.disk().durable_chunks()),
            (1, 0),
            "the failed flush made nothing durable"
        );
        blk.end_fault(1);
        blk.complete(0, &f, &mem, 0).unwrap();
        assert_eq!(mem.read_obj::<u8>(GuestAddress(0x3000)).unwrap(), S_OK);
        assert_eq!(
            (blk.disk().volatile_chunks(), blk.disk().durable_chunks()),
            (0, 1)
        );
        assert_eq!(
            (
                blk.stats.writes,
                blk.stats.flushes,
                blk.stats.errors,
                blk.stats.fault_errors
            ),
            (2, 2, 2, 2)
        );
    }

    #[test]
    fn a_latency_fault_lengthens_submitted_requests_without_draws() {
        let mk = || Block::new(disk(&[0u8; 4096], "lat"), RunSeed(9), "blk", 100_000);
        let mut plain = mk();
        let mut spiked = mk();
        spiked.start_fault(0, DiskFault::Latency { extra_ns: 5_000 });
        spiked.start_fault(1, DiskFault::Latency { extra_ns: 2_000 });
        spiked.start_fault(2, DiskFault::Error(DiskOp::Read));
        let base = submit_two(&mut plain);
        assert_eq!(base.len(), 2);
        assert_eq!(
            submit_two(&mut spiked),
            base.iter().map(|d| d + 7_000).collect::<Vec<_>>()
        );
        // The faults end: the streams are where the plain device's are.
        for id in 0..3 {
            spiked.end_fault(id);
        }
        assert_eq!(submit_two(&mut spiked), submit_two(&mut plain));
    }

    #[test]
    fn faults_in_force_survive_a_snapshot() {
        let mem = GuestMem::from_ranges(&[(GuestAddress(0), 0x10_0000)]).unwrap();
        let mut blk = Block::new(disk(&[0u8; 4096], "fsave"), RunSeed(1), "blk", 1000);
        blk.start_fault(7, DiskFault::Error(DiskOp::Read));
        blk.start_fault(2, DiskFault::Latency { extra_ns: 1 });
        let saved = blk.save_state().unwrap();
        let mut copy = Block::new(disk(&[0u8; 4096], "fsave2"), RunSeed(1), "blk", 1000);
        copy.load_state(&saved, None).unwrap();
        assert_eq!(
            copy.faults_in_force().collect::<Vec<_>>(),
            vec![
                (2, DiskFault::Latency { extra_ns: 1 }),
                (7, DiskFault::Error(DiskOp::Read))
            ]
        );
        header(&mem, 0x1000, T_IN, 0);
        let r = request(
            0,
            &[(0x1000, 16, false), (0x4000, 512, true), (0x3000, 1, true)],
        );
        copy.complete(0, &r, &mem, 0).unwrap();
        assert_eq!(mem.read_obj::<u8>(GuestAddress(0x3000)).unwrap(), S_IOERR);
        assert_eq!(submit_two(&mut copy), submit_two(&mut blk));
        // Another device's state is refused.
        let rng = crate::Rng::new(RunSeed(1), "rng", 1).save_state().unwrap();
        assert!(matches!(
            copy.load_state(&rng, None),
            Err(DeviceError::StateKind {
                here: "virtio-blk",
                saved: "virtio-rng"
            })
        ));
    }

    /// The block device behind a transport.
    fn block_of(t: &mut MmioTransport) -> &mut Block {
        t.device_mut().as_any_mut().downcast_mut::<Block>().unwrap()
    }

    #[test]
    fn a_taken_overlay_restores_what_the_full_state_restores() {
        let base: Vec<u8> = (0..4 * 4096u32).map(|i| (i % 251) as u8).collect();
        let mut t = MmioTransport::new(Box::new(Block::new(
            disk(&base, "split"),
            RunSeed(4),
            "blk",
            1000,
        )));
        let d = block_of(&mut t).disk_mut();
        d.write(4096, &[1; 100]).unwrap();
        d.flush();
        d.write(3 * 4096 + 7, &[2; 10]).unwrap();
        d.write(4096 + 50, &[3; 4]).unwrap();
        let saved = t.save_state().unwrap();
        let fresh = |tag: &str| {
            MmioTransport::new(Box::new(Block::new(
                disk(&base, tag),
                RunSeed(4),
                "blk",
                1000,
            )))
        };
        let mut full = fresh("split-full");
        full.load_state(&saved, None).unwrap();

        let mut stripped = saved.clone();
        let overlay = stripped
            .take_block_overlay()
            .unwrap()
            .expect("a block device");
        assert_eq!(
            (overlay.durable.len(), overlay.volatile.len()),
            (1, 2),
            "the chunks moved into the overlay"
        );
        assert!(
            postcard::to_stdvec(&stripped).unwrap().len() + 3 * 4096
                <= postcard::to_stdvec(&saved).unwrap().len(),
            "and out of the state"
        );
        assert_eq!(
            stripped.take_block_overlay().unwrap(),
            Some(Overlay::default()),
            "a stripped state has no chunks left"
        );
        let mut bare = fresh("split-bare");
        bare.load_state(&stripped, None).unwrap();
        assert_eq!(block_of(&mut bare).disk().volatile_chunks(), 0);
        // Two restores share the overlay; each is what the full restore is.
        for tag in ["split-a", "split-b"] {
            let mut r = fresh(tag);
            r.load_state(&stripped, None).unwrap();
            block_of(&mut r).disk_mut().set_overlay(overlay.clone());
            assert_eq!(
                postcard::to_stdvec(&r.save_state().unwrap()).unwrap(),
                postcard::to_stdvec(&full.save_state().unwrap()).unwrap()
            );
            assert_eq!(
                postcard::to_stdvec(&r.save_state().unwrap()).unwrap(),
                postcard::to_stdvec(&saved).unwrap()
            );
            let (mut a, mut b) = (vec![0; base.len()], vec![0; base.len()]);
            block_of(&mut r).disk().read(0, &mut a).unwrap();
            block_of(&mut full).disk().read(0, &mut b).unwrap();
            assert_eq!(a, b);
            assert_eq!(&a[4096 + 50..4096 + 54], &[3; 4]);
            assert_eq!(
                (
                    block_of(&mut r).disk().durable_chunks(),
                    block_of(&mut r).disk().volatile_chunks()
                ),
                (1, 2)
            );
        }
    }

    #[test]
    fn a_state_with_a_bad_chunk_gives_no_overlay_and_keeps_its_chunks() {
        let mut blk = Block::new(disk(&[0u8; 8192], "bad-chunk"), RunSeed(1), "blk", 1000);
        blk.disk_mut().write(0, &[9; 10]).unwrap();
        blk.disk_mut().write(4096, &[8; 10]).unwrap();
        let DeviceState::Block(mut s) = blk.save_state().unwrap() else {
            panic!("a block device saves a block state");
        };
        s.disk.volatile[1].1.truncate(100);
        let before = postcard::to_stdvec(&s).unwrap();
        assert!(matches!(
            s.take_overlay(),
            Err(DeviceError::DiskState {
                error: DiskStateError::TornChunk {
                    index: 1,
                    len: 100,
                    chunk: 4096
                }
            })
        ));
        assert_eq!(postcard::to_stdvec(&s).unwrap(), before, "nothing moved");
        s.disk.volatile[1].0 = 2;
        s.disk.volatile[1].1.resize(4096, 0);
        assert!(matches!(
            s.take_overlay(),
            Err(DeviceError::DiskState {
                error: DiskStateError::ChunkOutOfRange {
                    index: 2,
                    chunks: 2
                }
            })
        ));
        // The same chunk is refused by a plain load.
        let mut copy = Block::new(disk(&[0u8; 8192], "bad-chunk2"), RunSeed(1), "blk", 1000);
        assert!(matches!(
            copy.load_state(&DeviceState::Block(s), None),
            Err(DeviceError::DiskState {
                error: DiskStateError::ChunkOutOfRange { .. }
            })
        ));
        assert_eq!(copy.disk().volatile_chunks(), 0);
    }
}
