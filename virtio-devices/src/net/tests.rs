//! Tests of the network device without faults (the link, the peer, the port).

use super::*;
use crate::device::test_request as req;
use vm_memory::GuestAddress;

/// A guest's ARP request for the peer, with its virtio header.
pub(super) fn arp_request() -> Vec<u8> {
    let mut f = vec![0u8; NET_HDR_LEN];
    f.extend_from_slice(&[0xff; 6]);
    f.extend_from_slice(&GUEST_MAC);
    f.extend_from_slice(&[0x08, 0x06, 0, 1, 8, 0, 6, 4, 0, 1]);
    f.extend_from_slice(&GUEST_MAC);
    f.extend_from_slice(&[10, 0, 2, 15, 0, 0, 0, 0, 0, 0]);
    f.extend_from_slice(&stack::PEER_IP);
    f
}

#[test]
fn arp_round_trip_through_the_link() {
    let mem = GuestMem::from_ranges(&[(GuestAddress(0), 0x10_0000)]).unwrap();
    let mut net = Net::new(RunSeed(3), "net", Link::default(), None);
    let frame = arp_request();
    mem.write_slice(&frame, GuestAddress(0x1000)).unwrap();
    net.rx_buffers.push_back(req(5, &[(0x8000, 2048, true)]));
    assert_eq!(
        net.complete(
            TX,
            &req(0, &[(0x1000, frame.len() as u32, false)]),
            &mem,
            100
        )
        .unwrap(),
        0
    );
    // Guest -> peer hop.
    let timers = net.take_timers();
    assert_eq!(timers.len(), 1);
    let (d1, t1) = timers[0];
    assert!((50_000..=70_000).contains(&d1));
    assert!(
        net.timer(t1, &mem, 100 + d1).unwrap().is_empty(),
        "the reply is still on the link"
    );
    // Peer -> guest hop.
    let timers: Vec<_> = net
        .take_timers()
        .into_iter()
        .filter(|&(_, t)| t != POLL_STACK)
        .collect();
    assert_eq!(timers.len(), 1);
    let (d2, t2) = timers[0];
    let done = net.timer(t2, &mem, 100 + d1 + d2).unwrap();
    assert_eq!(done.len(), 1);
    assert_eq!(done[0].0, RX);
    assert_eq!(done[0].1, 5);
    let mut got = vec![0u8; done[0].2 as usize];
    mem.read_slice(&mut got, GuestAddress(0x8000)).unwrap();
    assert_eq!(&got[NET_HDR_LEN..NET_HDR_LEN + 6], &GUEST_MAC);
    assert_eq!(&got[NET_HDR_LEN + 28..NET_HDR_LEN + 32], &stack::PEER_IP);
    assert_eq!(net.stats.rx_frames, 1);
}

#[test]
fn a_port_takes_the_guests_frames_and_brings_others_in_at_their_time() {
    let mem = GuestMem::from_ranges(&[(GuestAddress(0), 0x10_0000)]).unwrap();
    let mut net = Net::new(RunSeed(3), "net", Link::default(), None);
    let frame = arp_request();
    assert!(matches!(
        net.arrive(
            Frame {
                at_ns: 5,
                bytes: frame[NET_HDR_LEN..].to_vec()
            },
            0
        ),
        Err(DeviceError::NoPort)
    ));
    net.connect_port();
    mem.write_slice(&frame, GuestAddress(0x1000)).unwrap();
    net.complete(
        TX,
        &req(0, &[(0x1000, frame.len() as u32, false)]),
        &mem,
        100,
    )
    .unwrap();
    assert!(
        net.take_timers().is_empty(),
        "no link, no peer: nothing in flight"
    );
    let sent = net.take_sent();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].at_ns, 100);
    assert_eq!(sent[0].bytes, frame[NET_HDR_LEN..].to_vec());
    assert!(net.take_sent().is_empty());
    assert_eq!(
        net.peer_stats(),
        &stack::StackStats::default(),
        "the peer saw nothing"
    );

    // A frame from outside, due at 900 while the device is at 200.
    let mut incoming = sent[0].bytes.clone();
    incoming[0..6].copy_from_slice(&GUEST_MAC);
    assert!(matches!(
        net.arrive(
            Frame {
                at_ns: 150,
                bytes: incoming.clone()
            },
            200
        ),
        Err(DeviceError::FrameInThePast {
            at_ns: 150,
            now_ns: 200
        })
    ));
    assert!(matches!(
        net.arrive(
            Frame {
                at_ns: 900,
                bytes: vec![0; 3]
            },
            200
        ),
        Err(DeviceError::PortFrameSize { len: 3, .. })
    ));
    net.arrive(
        Frame {
            at_ns: 900,
            bytes: incoming.clone(),
        },
        200,
    )
    .unwrap();
    let timers = net.take_timers();
    assert_eq!(timers.len(), 1);
    let (delay, token) = timers[0];
    assert_eq!(delay, 700);
    net.rx_buffers.push_back(req(5, &[(0x8000, 2048, true)]));
    let done = net.timer(token, &mem, 900).unwrap();
    assert_eq!(done, vec![(RX, 5, (NET_HDR_LEN + incoming.len()) as u32)]);
    let mut got = vec![0u8; incoming.len()];
    mem.read_slice(&mut got, GuestAddress(0x8000 + NET_HDR_LEN as u64))
        .unwrap();
    assert_eq!(got, incoming);

    // The port and its outbox survive a snapshot.
    net.complete(
        TX,
        &req(1, &[(0x1000, frame.len() as u32, false)]),
        &mem,
        1000,
    )
    .unwrap();
    let saved = net.save_state().unwrap();
    let mut copy = Net::new(RunSeed(3), "net", Link::default(), None);
    copy.load_state(&saved, None).unwrap();
    assert_eq!(
        postcard::to_stdvec(&copy.save_state().unwrap()).unwrap(),
        postcard::to_stdvec(&saved).unwrap()
    );
    assert!(copy.has_port());
    assert_eq!(copy.take_sent(), net.take_sent());

    // Another device's state, or one beyond the device's limits, is refused and changes
    // nothing.
    let mut other = Net::new(RunSeed(3), "net", Link::default(), None);
    let before = postcard::to_stdvec(&other.save_state().unwrap()).unwrap();
    let console = crate::state::save(&crate::Console::new(RunSeed(3), "console")).unwrap();
    assert!(matches!(
        crate::state::load(&mut other, &console, None),
        Err(DeviceError::StateKind {
            here: "virtio-net",
            saved: "virtio-console"
        })
    ));
    let mut flooded = saved;
    flooded.inbox = vec![vec![0; 14]; MAX_INBOX + 1];
    assert!(matches!(
        other.load_state(&flooded, None),
        Err(DeviceError::StateLimit {
            device: "virtio-net",
            what: "waiting frames",
            len,
            max: MAX_INBOX
        }) if len == MAX_INBOX + 1
    ));
    assert_eq!(
        postcard::to_stdvec(&other.save_state().unwrap()).unwrap(),
        before
    );
}

#[test]
fn loss_and_duplication_come_from_the_seed() {
    let mem = GuestMem::from_ranges(&[(GuestAddress(0), 0x10_0000)]).unwrap();
    let link = Link {
        loss_ppm: 300_000,
        duplicate_ppm: 300_000,
        ..Link::default()
    };
    let run = |seed| {
        let mut net = Net::new(RunSeed(seed), "net", link, None);
        let frame = arp_request();
        mem.write_slice(&frame, GuestAddress(0x1000)).unwrap();
        for i in 0..50 {
            net.complete(TX, &req(i, &[(0x1000, frame.len() as u32, false)]), &mem, 0)
                .unwrap();
        }
        (net.stats.lost, net.stats.duplicated, net.take_timers())
    };
    let a = run(1);
    assert_eq!(a, run(1), "one seed, one link behaviour");
    assert!(
        a.0 > 0 && a.1 > 0,
        "losses and duplicates happen: {:?}",
        (a.0, a.1)
    );
    assert_ne!(a, run(2));
}

#[test]
fn malformed_transmit_chains_are_errors() {
    let mem = GuestMem::from_ranges(&[(GuestAddress(0), 0x10_0000)]).unwrap();
    let mut net = Net::new(RunSeed(3), "net", Link::default(), None);
    assert!(
        matches!(
            net.complete(TX, &req(0, &[(0x1000, 4, false)]), &mem, 0),
            Err(DeviceError::NoFrame { head: 0 })
        ),
        "too short"
    );
    assert!(
        matches!(
            net.complete(TX, &req(1, &[(0x1000, 64, true)]), &mem, 0),
            Err(DeviceError::BufferDirection {
                head: 1,
                writable: true,
                ..
            })
        ),
        "writable"
    );
    assert!(
        matches!(
            net.complete(TX, &req(2, &[(0x7fff_0000, 64, false)]), &mem, 0),
            Err(DeviceError::GuestMemory {
                addr: 0x7fff_0000,
                ..
            })
        ),
        "outside memory"
    );
    assert!(
        matches!(
            net.complete(TX, &req(3, &[(0x1000, 70_000, false)]), &mem, 0),
            Err(DeviceError::FrameTooLarge { head: 3, .. })
        ),
        "oversized"
    );
    assert!(
        matches!(
            net.complete(RX, &req(4, &[(0x1000, 64, true)]), &mem, 0),
            Err(DeviceError::NetReceiveCompletion)
        ),
        "receive queue"
    );
}
