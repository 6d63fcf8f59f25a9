//! Tests of the block device: requests, flushes, faults, snapshots of its state.
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
    let rng = crate::state::save(&crate::Rng::new(RunSeed(1), "rng", 1)).unwrap();
    assert!(matches!(
        crate::state::load(&mut copy, &rng, None),
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
    let mut s = blk.save_state().unwrap();
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
        copy.load_state(&s, None),
        Err(DeviceError::DiskState {
            error: DiskStateError::ChunkOutOfRange { .. }
        })
    ));
    assert_eq!(copy.disk().volatile_chunks(), 0);
}
