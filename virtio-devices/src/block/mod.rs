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

impl Block {
    /// The device's state for a snapshot: everything that shapes what it does next.
    pub(crate) fn save_state(&self) -> Result<BlockState, DeviceError> {
        Ok(BlockState {
            disk: self.disk.save_state(),
            latency: self.latency.save(),
            stats: self.stats.clone(),
            faults: self.faults.save(),
        })
    }

    /// Loads a state saved by [`Self::save_state`] from a device built with the same
    /// configuration; with `reseed`, its random streams are re-keyed from that seed. The
    /// checks come before any change: on an error the device is as it was.
    pub(crate) fn load_state(
        &mut self,
        s: &BlockState,
        reseed: Option<RunSeed>,
    ) -> Result<(), DeviceError> {
        self.disk
            .load_state(s.disk.clone())
            .map_err(|error| DeviceError::DiskState { error })?;
        self.latency = Stream::resume(&s.latency, reseed);
        self.stats = s.stats.clone();
        self.faults.load(s.faults.clone(), reseed);
        Ok(())
    }
}

impl VirtioDevice for Block {
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
mod tests;
