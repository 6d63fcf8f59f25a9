//! The console's tests: the multiport handshake Linux's driver performs, lines on
//! `wio.sdk` (split, overlong, flooded), random bytes on `wio.random`, and its state.

use super::*;
use crate::device::test_request as request;
use vm_memory::GuestAddress;

fn mem() -> GuestMem {
    GuestMem::from_ranges(&[(GuestAddress(0), 0x10_0000)]).unwrap()
}

/// Has the device complete a transmit chain holding `bytes` (at 0x8000) on `queue`.
fn transmit(c: &mut Console, m: &GuestMem, queue: usize, bytes: &[u8], now: u64) {
    m.write_slice(bytes, GuestAddress(0x8000)).unwrap();
    let r = request(1, &[(0x8000, bytes.len() as u32, false)]);
    assert_eq!(c.complete(queue, &r, m, now).unwrap(), 0);
}

/// Gives the device `n` receive buffers of 256 bytes on `queue` and delivers; returns what
/// each completed buffer holds.
fn receive(c: &mut Console, m: &GuestMem, queue: usize, n: u16) -> Vec<Vec<u8>> {
    for i in 0..n {
        let r = request(10 + i, &[(0x1000 + u64::from(i) * 0x100, 256, true)]);
        if queue == CONTROL_RX {
            c.control_buffers.push_back(r);
        } else {
            match rx_port(queue, c.ports()).unwrap() {
                COMPOSER_PORT => c.composer.as_mut().unwrap().rx.push_back(r),
                port => c.rx_buffers[port].push_back(r),
            }
        }
    }
    let done = c.timer(DELIVER, m, 0).unwrap();
    done.iter()
        .map(|&(q, head, len)| {
            assert_eq!(q, queue);
            let mut b = vec![0u8; len as usize];
            m.read_slice(&mut b, GuestAddress(0x1000 + u64::from(head - 10) * 0x100))
                .unwrap();
            b
        })
        .collect()
}

#[test]
fn the_driver_handshake_names_both_ports_and_opens_them() {
    let m = mem();
    let mut c = Console::new(RunSeed(1), "console");
    transmit(
        &mut c,
        &m,
        CONTROL_TX,
        &control(0, event::DEVICE_READY, 1, &[]),
        0,
    );
    assert_eq!(c.take_timers(), vec![(0, DELIVER)]);
    let added = receive(&mut c, &m, CONTROL_RX, 4);
    assert_eq!(
        added,
        vec![
            control(0, event::DEVICE_ADD, 0, &[]),
            control(1, event::DEVICE_ADD, 0, &[])
        ]
    );
    transmit(
        &mut c,
        &m,
        CONTROL_TX,
        &control(1, event::PORT_READY, 1, &[]),
        0,
    );
    let named = receive(&mut c, &m, CONTROL_RX, 4);
    assert_eq!(
        named,
        vec![
            control(1, event::PORT_NAME, 1, b"wio.random"),
            control(1, event::PORT_OPEN, 1, &[])
        ]
    );
    transmit(
        &mut c,
        &m,
        CONTROL_TX,
        &control(1, event::PORT_OPEN, 1, &[]),
        0,
    );
    assert_eq!(c.guest_open, [false, true]);
    // Nonsense control messages are counted, not obeyed.
    transmit(
        &mut c,
        &m,
        CONTROL_TX,
        &control(9, event::PORT_READY, 1, &[]),
        0,
    );
    transmit(&mut c, &m, CONTROL_TX, &[1, 2, 3], 0);
    assert_eq!(c.stats.bad_control, 2);
    assert!(matches!(
        c.complete(0, &request(1, &[(0x8000, 4, true)]), &m, 0),
        Err(DeviceError::ConsoleReceiveCompletion { queue: 0 })
    ));
}

#[test]
fn sdk_lines_are_cut_bounded_and_counted() {
    let m = mem();
    let mut c = Console::new(RunSeed(1), "console");
    let tx = port_rx(SDK_PORT) + 1;
    transmit(&mut c, &m, tx, b"{\"a\":1}\n{\"b\"", 5);
    transmit(&mut c, &m, tx, b":2}\n\n", 7);
    assert_eq!(
        c.take_lines(),
        vec![(5, b"{\"a\":1}".to_vec()), (7, b"{\"b\":2}".to_vec())]
    );
    // An overlong line is dropped up to its newline, across chains; the next one is kept.
    let big = vec![b'x'; MAX_LINE];
    transmit(&mut c, &m, tx, &big, 8);
    transmit(&mut c, &m, tx, b"yy\nok\n", 9);
    assert_eq!(c.take_lines(), vec![(9, b"ok".to_vec())]);
    assert_eq!(c.stats.overlong_lines, 1);
    // A flood: at most MAX_PENDING_LINES wait; the rest are dropped and counted.
    let flood = b"{}\n".repeat(MAX_PENDING_LINES + 10);
    for chunk in flood.chunks(60_000) {
        transmit(&mut c, &m, tx, chunk, 10);
    }
    assert_eq!(c.take_lines().len(), MAX_PENDING_LINES);
    assert_eq!(c.stats.dropped_lines, 10);
    assert_eq!(c.stats.lines, 3 + MAX_PENDING_LINES as u64);
}

#[test]
fn random_requests_are_answered_from_the_seed_and_bounded() {
    let m = mem();
    let draw = |seed| {
        let mut c = Console::new(RunSeed(seed), "console");
        transmit(&mut c, &m, port_rx(RANDOM_PORT) + 1, &[0; 8], 0);
        receive(&mut c, &m, port_rx(RANDOM_PORT), 1)
    };
    let a = draw(1);
    assert_eq!(a.len(), 1);
    assert_eq!(a[0].len(), 8);
    assert_eq!(a, draw(1));
    assert_ne!(a, draw(2));
    // Asking for more than may be owed: the excess is refused and counted.
    let mut c = Console::new(RunSeed(1), "console");
    let tx = port_rx(RANDOM_PORT) + 1;
    let r = request(1, &[(0x8000, 60_000, false), (0x8000, 60_000, false)]);
    c.complete(tx, &r, &m, 0).unwrap();
    assert_eq!(c.random_owed.len(), MAX_RANDOM_OWED);
    assert_eq!(c.stats.random_refused, 120_000 - MAX_RANDOM_OWED as u64);
    // Buffers of 256 bytes take it piece by piece.
    let got = receive(&mut c, &m, port_rx(RANDOM_PORT), 3);
    assert_eq!(got.iter().map(Vec::len).collect::<Vec<_>>(), vec![256; 3]);
    assert_eq!(c.stats.random_bytes, 768);
}

#[test]
fn state_round_trips_and_bad_state_is_refused() {
    let m = mem();
    let mut c = Console::new(RunSeed(1), "console");
    transmit(&mut c, &m, port_rx(SDK_PORT) + 1, b"{\"x\":1}\npart", 3);
    transmit(&mut c, &m, port_rx(RANDOM_PORT) + 1, &[0; 4], 3);
    let saved = c.save_state().unwrap();
    let mut d = Console::new(RunSeed(1), "console");
    d.load_state(&saved, None, None).unwrap();
    let encoded = postcard::to_stdvec(&saved).unwrap();
    assert_eq!(
        postcard::to_stdvec(&d.save_state().unwrap()).unwrap(),
        encoded
    );
    assert_eq!(d.take_lines(), vec![(3, b"{\"x\":1}".to_vec())]);
    assert_eq!(
        receive(&mut d, &m, port_rx(RANDOM_PORT), 1),
        receive(&mut c, &m, port_rx(RANDOM_PORT), 1)
    );
    // Another device's state is refused, and leaves the console as it was.
    let before = postcard::to_stdvec(&d.save_state().unwrap()).unwrap();
    let rng = crate::state::save(&crate::Rng::new(RunSeed(1), "rng", 1)).unwrap();
    assert!(matches!(
        crate::state::load(&mut d, &rng, None),
        Err(DeviceError::StateKind {
            here: "virtio-console",
            saved: "virtio-rng"
        })
    ));
    assert_eq!(
        postcard::to_stdvec(&d.save_state().unwrap()).unwrap(),
        before
    );
    // So is a state beyond the console's bounds.
    let mut big = saved;
    big.partial = vec![b'x'; MAX_LINE + 1];
    assert!(matches!(
        d.load_state(&big, None, None),
        Err(DeviceError::StateBounds {
            device: "virtio-console"
        })
    ));
}

/// The composer's port exists only when asked for: the guest sees three ports, names the
/// third `wio.composer`, writes lines on it (cut as on `wio.sdk`) and receives what the
/// machine sends, in order, across buffers; a snapshot keeps what is owed and loads only
/// into a console of the same shape.
#[test]
fn the_composer_port_carries_lines_both_ways_and_is_saved() {
    let m = mem();
    let plain = Console::new(RunSeed(1), "console");
    assert_eq!(plain.queue_max_sizes().len(), 6);
    let mut c = Console::with_composer(RunSeed(1), "console");
    assert_eq!(c.queue_max_sizes().len(), 8);
    let mut config = [0u8; 4];
    c.read_config(4, &mut config);
    assert_eq!(u32::from_le_bytes(config), 3);
    transmit(
        &mut c,
        &m,
        CONTROL_TX,
        &control(0, event::DEVICE_READY, 1, &[]),
        0,
    );
    assert_eq!(receive(&mut c, &m, CONTROL_RX, 4).len(), 3);
    transmit(
        &mut c,
        &m,
        CONTROL_TX,
        &control(2, event::PORT_READY, 1, &[]),
        0,
    );
    assert_eq!(
        receive(&mut c, &m, CONTROL_RX, 4)[0],
        control(2, event::PORT_NAME, 1, b"wio.composer")
    );
    let tx = port_rx(COMPOSER_PORT) + 1;
    transmit(&mut c, &m, tx, b"hello 1\nstarted 1", 4);
    transmit(&mut c, &m, tx, b" 77\n", 6);
    assert_eq!(
        c.take_composer_lines(),
        vec![(4, b"hello 1".to_vec()), (6, b"started 1 77".to_vec())]
    );
    assert!(c.take_lines().is_empty(), "the SDK port saw none of it");
    assert!(c.send_composer(b"start 1 main/first_a\n"));
    assert!(
        !Console::new(RunSeed(1), "console").send_composer(b"x"),
        "no port, nothing sent"
    );
    let saved = (c.save_state().unwrap(), c.save_composer());
    let mut d = Console::with_composer(RunSeed(1), "console");
    d.load_state(&saved.0, saved.1.as_ref(), None).unwrap();
    let mut e = Console::new(RunSeed(1), "console");
    assert!(e.load_state(&saved.0, saved.1.as_ref(), None).is_err());
    let got = receive(&mut d, &m, port_rx(COMPOSER_PORT), 1);
    assert_eq!(got, vec![b"start 1 main/first_a\n".to_vec()]);
    assert!(!d.send_composer(&vec![b'x'; MAX_COMPOSER_OWED + 1]));
}

/// Offers one 8-byte transmit chain on `queue` and returns the delays `submit` gives.
fn submit_one(c: &mut Console, queue: usize) -> Vec<u64> {
    use virtio_queue::desc::{split::Descriptor as SplitDescriptor, RawDescriptor};
    let m = GuestMem::from_ranges(&[(GuestAddress(0), 0x20_0000)]).unwrap();
    let vq = virtio_queue::mock::MockSplitQueue::new(&m, 16);
    vq.add_desc_chains(
        &[RawDescriptor::from(SplitDescriptor::new(
            0x10_0000, 8, 0, 0,
        ))],
        0,
    )
    .unwrap();
    let mut q: Queue = vq.create_queue().unwrap();
    c.submit(queue, &mut q, &m)
        .unwrap()
        .iter()
        .map(|p| p.delay_ns)
        .collect()
}

#[test]
fn control_messages_can_be_taken_at_the_kick_without_drawing_a_service_time() {
    let mut seeded = Console::new(RunSeed(3), "console");
    let delayed = submit_one(&mut seeded, CONTROL_TX);
    assert_eq!(delayed.len(), 1);
    assert!(delayed[0] >= 1_000, "a seeded service time: {delayed:?}");
    let mut at_kick = Console::new(RunSeed(3), "console");
    at_kick.answer_control_at_kick();
    assert_eq!(submit_one(&mut at_kick, CONTROL_TX), vec![0]);
    // No draw was made: the next transmit's service time is the one the first console drew.
    assert_eq!(submit_one(&mut at_kick, port_rx(SDK_PORT) + 1), delayed);
}
