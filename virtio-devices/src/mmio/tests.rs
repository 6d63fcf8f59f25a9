//! Tests of the virtio-mmio transport: registers, negotiation, queues, notifications, its
//! snapshot state.

use super::*;
use crate::rng::Rng;
use virtio_queue::desc::{split::Descriptor as SplitDescriptor, RawDescriptor};
use virtio_queue::mock::MockSplitQueue;
use vm_memory::{Bytes, GuestAddress};
use wio_scheduler::RunSeed;

const VRING_DESC_F_WRITE: u16 = 2;

fn mem() -> GuestMem {
    GuestMem::from_ranges(&[(GuestAddress(0), 0x20_0000)]).unwrap()
}

fn w(t: &mut MmioTransport, offset: u64, v: u32, m: &GuestMem) -> Option<usize> {
    t.write(offset, &v.to_le_bytes(), m)
}

fn r(t: &mut MmioTransport, offset: u64) -> u32 {
    let mut b = [0u8; 4];
    t.read(offset, &mut b);
    u32::from_le_bytes(b)
}

/// Drives the transport like Linux's virtio_mmio driver and returns it ready.
fn bring_up(m: &GuestMem, vq: &MockSplitQueue<GuestMem>) -> MmioTransport {
    let mut t = MmioTransport::new(Box::new(Rng::new(RunSeed(7), "rng", 10_000)));
    assert_eq!(r(&mut t, reg::MAGIC), VIRTIO_MMIO_MAGIC);
    assert_eq!(r(&mut t, reg::VERSION), 2);
    assert_eq!(r(&mut t, reg::DEVICE_ID), 4);
    w(&mut t, reg::STATUS, status::ACKNOWLEDGE | status::DRIVER, m);
    w(&mut t, reg::DEVICE_FEATURES_SEL, 1, m);
    assert_eq!(r(&mut t, reg::DEVICE_FEATURES), 1, "VERSION_1 offered");
    w(&mut t, reg::DRIVER_FEATURES_SEL, 1, m);
    w(&mut t, reg::DRIVER_FEATURES, 1, m);
    w(
        &mut t,
        reg::STATUS,
        status::ACKNOWLEDGE | status::DRIVER | status::FEATURES_OK,
        m,
    );
    assert_ne!(r(&mut t, reg::STATUS) & status::FEATURES_OK, 0);
    w(&mut t, reg::QUEUE_SEL, 0, m);
    assert_eq!(r(&mut t, reg::QUEUE_NUM_MAX), 256);
    w(&mut t, reg::QUEUE_NUM, 16, m);
    w(
        &mut t,
        reg::QUEUE_DESC_LOW,
        vq.desc_table_addr().0 as u32,
        m,
    );
    w(&mut t, reg::QUEUE_DRIVER_LOW, vq.avail_addr().0 as u32, m);
    w(&mut t, reg::QUEUE_DEVICE_LOW, vq.used_addr().0 as u32, m);
    w(&mut t, reg::QUEUE_READY, 1, m);
    assert_eq!(r(&mut t, reg::QUEUE_READY), 1);
    w(
        &mut t,
        reg::STATUS,
        status::ACKNOWLEDGE | status::DRIVER | status::FEATURES_OK | status::DRIVER_OK,
        m,
    );
    t
}

#[test]
fn serves_seeded_entropy_and_interrupts() {
    let m = mem();
    let vq = MockSplitQueue::new(&m, 16);
    let descs = [RawDescriptor::from(SplitDescriptor::new(
        0x10_0000,
        32,
        VRING_DESC_F_WRITE,
        0,
    ))];
    vq.add_desc_chains(&descs, 0).unwrap();
    let mut t = bring_up(&m, &vq);
    assert_eq!(w(&mut t, reg::QUEUE_NOTIFY, 0, &m), Some(0));
    let pending = t.submit(0, &m);
    assert_eq!(pending.len(), 1);
    assert!(
        !t.interrupt_level(),
        "nothing completes before its scheduled time"
    );
    t.complete(0, &pending[0].request, &m, 0);
    assert!(t.interrupt_level());
    assert_eq!(r(&mut t, reg::INTERRUPT_STATUS), 1);
    w(&mut t, reg::INTERRUPT_ACK, 1, &m);
    assert!(!t.interrupt_level());
    let mut got = [0u8; 32];
    m.read_slice(&mut got, GuestAddress(0x10_0000)).unwrap();
    let mut want = [0u8; 32];
    RunSeed(7).stream("rng/bytes").fill_bytes(&mut want);
    assert_eq!(got, want, "bytes come from the seed's rng/bytes stream");
    assert_eq!(vq.used().idx().load(), 1);
}

#[test]
fn refuses_features_it_did_not_offer() {
    let m = mem();
    let mut t = MmioTransport::new(Box::new(Rng::new(RunSeed(1), "rng", 1)));
    w(&mut t, reg::DRIVER_FEATURES_SEL, 0, &m);
    w(&mut t, reg::DRIVER_FEATURES, 1 << 28, &m); // INDIRECT_DESC: not offered
    w(&mut t, reg::DRIVER_FEATURES_SEL, 1, &m);
    w(&mut t, reg::DRIVER_FEATURES, 1, &m);
    w(
        &mut t,
        reg::STATUS,
        status::ACKNOWLEDGE | status::DRIVER | status::FEATURES_OK,
        &m,
    );
    assert_eq!(r(&mut t, reg::STATUS) & status::FEATURES_OK, 0);
    // Without VERSION_1 it refuses too.
    let mut t = MmioTransport::new(Box::new(Rng::new(RunSeed(1), "rng", 1)));
    w(
        &mut t,
        reg::STATUS,
        status::ACKNOWLEDGE | status::DRIVER | status::FEATURES_OK,
        &m,
    );
    assert_eq!(r(&mut t, reg::STATUS) & status::FEATURES_OK, 0);
}

#[test]
fn bad_queue_or_buffer_sets_needs_reset_and_run_goes_on() {
    let m = mem();
    let mut t = MmioTransport::new(Box::new(Rng::new(RunSeed(1), "rng", 1)));
    w(&mut t, reg::QUEUE_NUM, 16, &m);
    w(&mut t, reg::QUEUE_DESC_LOW, 0xffff_0000, &m); // outside guest memory
    w(&mut t, reg::QUEUE_READY, 1, &m);
    assert_eq!(r(&mut t, reg::QUEUE_READY), 0);
    assert_ne!(r(&mut t, reg::STATUS) & status::DEVICE_NEEDS_RESET, 0);
    w(&mut t, reg::STATUS, 0, &m);
    assert_eq!(r(&mut t, reg::STATUS), 0, "reset clears it");

    // A device-readable (not writable) buffer is malformed for an entropy device.
    let vq = MockSplitQueue::new(&m, 16);
    vq.add_desc_chains(
        &[RawDescriptor::from(SplitDescriptor::new(
            0x10_0000, 8, 0, 0,
        ))],
        0,
    )
    .unwrap();
    let mut t = bring_up(&m, &vq);
    w(&mut t, reg::QUEUE_NOTIFY, 0, &m);
    for p in t.submit(0, &m) {
        t.complete(0, &p.request, &m, 0);
    }
    assert_ne!(r(&mut t, reg::STATUS) & status::DEVICE_NEEDS_RESET, 0);
    assert!(t
        .last_error
        .as_deref()
        .unwrap_or("")
        .contains("device-readable"));
    assert_eq!(
        w(&mut t, reg::QUEUE_NOTIFY, 0, &m),
        None,
        "a device needing reset takes no work"
    );

    // A buffer pointing outside guest memory.
    let vq = MockSplitQueue::new(&m, 16);
    vq.add_desc_chains(
        &[RawDescriptor::from(SplitDescriptor::new(
            0x7fff_0000,
            8,
            VRING_DESC_F_WRITE,
            0,
        ))],
        0,
    )
    .unwrap();
    let mut t = bring_up(&m, &vq);
    w(&mut t, reg::QUEUE_NOTIFY, 0, &m);
    for p in t.submit(0, &m) {
        t.complete(0, &p.request, &m, 0);
    }
    assert_ne!(r(&mut t, reg::STATUS) & status::DEVICE_NEEDS_RESET, 0);
}

#[test]
fn random_register_traffic_never_panics() {
    // A seeded property test: arbitrary writes and reads, then serving.
    let m = mem();
    let mut s = RunSeed(99).stream("fuzz");
    let dir = std::env::temp_dir().join(format!("wio-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let image = dir.join("disk.img");
    std::fs::write(&image, vec![0u8; 64 * 1024]).unwrap();
    for round in 0..400 {
        // Both devices: the entropy device and the block device on a scratch disk.
        let device: Box<dyn VirtioDevice> = if round % 2 == 0 {
            Box::new(Rng::new(RunSeed(1), "rng", 1))
        } else {
            let disk = crate::block::Disk::open(&image).unwrap();
            Box::new(crate::block::Block::new(disk, RunSeed(1), "blk", 1))
        };
        let mut t = MmioTransport::new(device);
        // Random bytes in the queue area, as if the guest scribbled descriptor tables.
        let mut junk = vec![0u8; 4096];
        s.fill_bytes(&mut junk);
        m.write_slice(&junk, GuestAddress(0x1000)).unwrap();
        for _ in 0..64 {
            let offset = s.below(0x110) & !3;
            let value = match s.below(4) {
                0 => s.next_u32(),
                1 => 0x1000 + (s.below(4096) as u32 & !15),
                2 => s.below(17) as u32,
                _ => status::ACKNOWLEDGE | status::DRIVER | status::FEATURES_OK | status::DRIVER_OK,
            };
            if let Some(q) = w(&mut t, offset, value, &m) {
                for p in t.submit(q, &m) {
                    t.complete(q, &p.request, &m, 0);
                }
            }
            let _ = r(&mut t, s.below(0x110) & !3);
        }
        for p in t.submit(0, &m) {
            t.complete(0, &p.request, &m, 0);
        }
    }
}

#[test]
fn saved_transport_continues_identically_or_reseeded() {
    let m = mem();
    let vq = MockSplitQueue::new(&m, 16);
    let descs: Vec<RawDescriptor> = (0..2)
        .map(|i| {
            RawDescriptor::from(SplitDescriptor::new(
                0x10_0000 + i * 0x100,
                32,
                VRING_DESC_F_WRITE,
                0,
            ))
        })
        .collect();
    vq.add_desc_chains(&descs[..1], 0).unwrap();
    let mut t = bring_up(&m, &vq);
    w(&mut t, reg::QUEUE_NOTIFY, 0, &m);
    let first = t.submit(0, &m);
    t.complete(0, &first[0].request, &m, 0);
    let saved = t.save_state().unwrap();
    // A fresh transport of the same device, given the state, does what the original does.
    let fresh = || MmioTransport::new(Box::new(Rng::new(RunSeed(7), "rng", 10_000)));
    let mut copy = fresh();
    copy.load_state(&saved, None).unwrap();
    assert_eq!(saved.device_type(), crate::rng::DEVICE_ID);
    assert_eq!(
        postcard::to_stdvec(&copy.save_state().unwrap()).unwrap(),
        postcard::to_stdvec(&saved).unwrap()
    );
    assert_eq!(r(&mut copy, reg::STATUS), r(&mut t, reg::STATUS));
    let mut reseeded = fresh();
    reseeded.load_state(&saved, Some(RunSeed(8))).unwrap();
    vq.add_desc_chains(&descs[1..], 1).unwrap();
    let mut outputs = Vec::new();
    for dev in [&mut t, &mut copy, &mut reseeded] {
        let p = dev.submit(0, &m);
        assert_eq!(p.len(), 1, "the restored queue knows where the driver is");
        dev.complete(0, &p[0].request, &m, 0);
        let mut got = [0u8; 32];
        m.read_slice(&mut got, GuestAddress(0x10_0100)).unwrap();
        outputs.push((p[0].delay_ns, got));
    }
    assert_eq!(outputs[0], outputs[1]);
    assert_ne!(outputs[0], outputs[2], "another seed draws other bytes");
    // A transport of another device type or queue count is refused.
    let mut net = MmioTransport::new(Box::new(crate::Net::new(
        RunSeed(7),
        "net",
        crate::Link::default(),
        None,
    )));
    assert!(matches!(
        net.load_state(&saved, None),
        Err(DeviceError::DeviceMismatch {
            saved_type: 4,
            saved_queues: 1,
            here_type: 1,
            here_queues: 2
        })
    ));
    let mut fewer = saved.clone();
    fewer.queues.clear();
    assert!(matches!(
        fresh().load_state(&fewer, None),
        Err(DeviceError::DeviceMismatch {
            saved_type: 4,
            saved_queues: 0,
            here_type: 4,
            here_queues: 1
        })
    ));
    let mut resized = saved.clone();
    resized.queues[0].max_size = 128;
    assert!(matches!(
        fresh().load_state(&resized, None),
        Err(DeviceError::QueueSizeMismatch {
            queue: 0,
            saved: 128,
            here: 256
        })
    ));
    // A transport whose device state is of another kind is refused by the device, and
    // leaves the transport as it was.
    let mut other = saved.clone();
    other.device = crate::state::save(net.device()).unwrap();
    let mut target = fresh();
    let before = postcard::to_stdvec(&target.save_state().unwrap()).unwrap();
    assert!(matches!(
        target.load_state(&other, None),
        Err(DeviceError::StateKind {
            here: "virtio-rng",
            saved: "virtio-net"
        })
    ));
    assert_eq!(
        postcard::to_stdvec(&target.save_state().unwrap()).unwrap(),
        before
    );
    // Nothing to take from a transport that is not a block device's.
    assert!(other.take_block_overlay().unwrap().is_none());
    let mut claims_block = other;
    claims_block.device_type = crate::block::DEVICE_ID;
    assert!(matches!(
        claims_block.take_block_overlay(),
        Err(DeviceError::StateKind {
            here: "virtio-blk",
            saved: "virtio-net"
        })
    ));
}
