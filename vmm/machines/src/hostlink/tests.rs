//! The host link's replay checks, without a world: sends matched as a byte stream, the
//! divergence named, and the handover to a stand-in dependency.

use super::tape::{hex, Event, Head, Tape, FORMAT};
use super::{Allow, HostLink, Mode};
use wio_virtio_devices::net::stack::{AppAction, TcpApp};

const GUEST: ([u8; 4], u16) = ([10, 0, 0, 1], 40000);

/// A replay of: a connection to 8080, "GET /a HTTP/1.1\r\n\r\n" sent in two pieces, the
/// host's answer in call 1.
fn replay() -> HostLink {
    let allow = vec![Allow::parse("api=127.0.0.1:8080").unwrap()];
    let events = vec![
        Event::Connect {
            t: 10,
            port: 8080,
            ok: true,
        },
        Event::Sent {
            t: 20,
            conn: 0,
            hex: hex(b"GET /a "),
        },
        Event::Sent {
            t: 30,
            conn: 0,
            hex: hex(b"HTTP/1.1\r\n\r\n"),
        },
        Event::Recv {
            t: 40,
            call: 1,
            conn: 0,
            hex: hex(b"HTTP/1.1 200 OK\r\n\r\n"),
        },
    ];
    let tape = Tape {
        path: "t".into(),
        head: Head {
            wio_tape: FORMAT,
            seed: 1,
            config: "c".into(),
            allow: vec![allow[0].text()],
        },
        events,
    };
    HostLink::new(allow, Mode::Replay(tape), 1, "c".into())
}

fn open(h: &mut HostLink) {
    assert!(!h.refuse(8080, GUEST, 5));
    h.opened(0, 8080, GUEST, 5);
}

#[test]
fn sends_are_matched_as_a_stream_however_the_guest_cut_them() {
    for pieces in [
        vec!["GET /a HTTP/1.1\r\n\r\n"],
        vec!["GE", "T /a HT", "TP/1.1\r\n", "\r\n"],
    ] {
        let mut h = replay();
        open(&mut h);
        for p in &pieces {
            h.data(0, p.as_bytes(), 25);
        }
        assert!(h.take_failure().is_none(), "{pieces:?}");
        let out = h.due(35);
        assert_eq!(
            out,
            vec![AppAction::Send(0, b"HTTP/1.1 200 OK\r\n\r\n".to_vec())],
            "the answer in its call: {pieces:?}"
        );
    }
}

#[test]
fn a_late_request_gets_its_answer_in_the_first_call_after_the_recorded_one() {
    let mut h = replay();
    open(&mut h);
    // Calls 1 and 2 pass before the guest asks (a branch's other timing).
    assert!(h.due(1).is_empty() && h.due(2).is_empty());
    h.data(0, b"GET /a HTTP/1.1\r\n\r\n", 25);
    assert_eq!(h.due(26).len(), 1);
}

#[test]
fn another_send_stops_the_replay_naming_both_or_hands_over_to_a_stand_in() {
    let mut h = replay();
    open(&mut h);
    h.data(0, b"GET /b HTTP/1.1\r\n\r\n", 25);
    let e = h
        .take_failure()
        .expect("the replay left its tape")
        .to_string();
    assert!(e.contains("GET /b") && e.contains("GET /a"), "{e}");

    let mut h = replay();
    h.fall_back();
    open(&mut h);
    h.data(0, b"GET /a HT", 21);
    h.data(0, b"TP/1.0\r\n\r\n", 22);
    assert!(h.take_failure().is_none());
    assert!(!h.serves(8080), "the stand-in serves the port now");
    let handed = h.take_handover().expect("a handover");
    assert_eq!(
        handed,
        vec![(0, 8080, GUEST, b"GET /a HTTP/1.0\r\n\r\n".to_vec())],
        "the connection with all its guest sent since the host last answered"
    );
    assert!(h.take_handover().is_none(), "once");
    assert!(h
        .stats()
        .left_tape
        .as_deref()
        .unwrap_or("")
        .contains("HTTP/1.0"));
    assert!(h.due(40).is_empty(), "nothing more from the tape");
    assert_eq!(h.wake(), None);
}
