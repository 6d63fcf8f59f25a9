//! TCP services wio runs on the peer beside its echo services: a [`TcpApp`] sees
//! connections as numbers and bytes, never smoltcp's sockets. The world's simulated
//! dependencies (HTTP APIs implemented by wio) are such apps.
//!
//! An app is driven only by the peer's inputs (frames, polls, the app's own settings
//! recorded as [`StackInput::App`](super::stack::StackInput::App)) and virtual time, so
//! replaying the peer's history into a new app of the same configuration rebuilds its
//! state too: snapshots keep no app state of their own.
//!
//! Limits: [`SOCKETS_PER_PORT`] connections at once per port (another connection attempt
//! is refused by smoltcp with a reset, as a full backlog would be); a connection that ends
//! in TIME-WAIT gives its socket back at once (the simulated server keeps no TIME-WAIT).

use smoltcp::iface::{SocketHandle, SocketSet};
use smoltcp::socket::tcp;
use smoltcp::wire::{
    EthernetFrame, EthernetProtocol, IpProtocol, Ipv4Address, Ipv4Packet, TcpPacket,
};
use std::collections::VecDeque;

/// Connections one port serves at once.
pub const SOCKETS_PER_PORT: usize = 8;
/// Each connection's smoltcp buffers, bytes (each way); longer answers wait in the app's queue.
const BUFFER: usize = 16 * 1024;

/// What an app asks of a connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AppAction {
    /// Send these bytes on connection `.0`.
    Send(u64, Vec<u8>),
    /// Close connection `.0` once what was sent has left (FIN).
    Close(u64),
    /// Reset connection `.0` now (RST), dropping what was not sent.
    Abort(u64),
}

/// A TCP service on the peer. Connections are numbered from 0 in the order they opened.
pub trait TcpApp {
    /// The ports it listens on (fixed for its life).
    fn ports(&self) -> Vec<u16>;
    /// Whether a connection attempt from `from` (IPv4 address, port) to `port` at `now_ns`
    /// is refused (answered with a reset). A SYN sent again is asked about again.
    fn refuse(&mut self, port: u16, from: ([u8; 4], u16), now_ns: u64) -> bool;
    /// A connection attempt to a port of the peer that nothing serves (refused by smoltcp).
    fn stray(&mut self, _port: u16, _now_ns: u64) {}
    /// Connection `conn` from `from` to `port` opened.
    fn opened(&mut self, conn: u64, port: u16, from: ([u8; 4], u16), now_ns: u64);
    /// Bytes arrived on `conn`.
    fn data(&mut self, conn: u64, bytes: &[u8], now_ns: u64);
    /// The other side of `conn` closed it or reset it: no more bytes will arrive. The app
    /// should close or abort it (its socket serves the port again once it has).
    fn closed(&mut self, conn: u64, now_ns: u64);
    /// What to do at `now_ns`, in order.
    fn due(&mut self, now_ns: u64) -> Vec<AppAction>;
    /// When it next has something to do (a delayed answer), virtual ns.
    fn wake(&self) -> Option<u64>;
    /// Its settings changed (a re-seeded or planned restore): `bytes` as the app wrote them.
    fn settings(&mut self, bytes: &[u8]);
}

/// One socket of an app's port.
struct Slot {
    port: u16,
    handle: SocketHandle,
    conn: Option<u64>,
    told_closed: bool,
    out: VecDeque<u8>,
    closing: bool,
    /// Reset by the app: its RST leaves at the stack's next dispatch, then it serves again.
    aborted: bool,
    /// The stack has been polled once since the abort (its reset has left).
    reset_sent: bool,
}

/// The sockets the peer keeps for its apps.
#[derive(Default)]
pub(super) struct AppSockets {
    slots: Vec<Slot>,
    next_conn: u64,
}

impl AppSockets {
    /// Sockets listening on each of `ports`.
    pub(super) fn new(ports: &[u16], sockets: &mut SocketSet<'static>) -> AppSockets {
        let mut slots = Vec::new();
        for &port in ports {
            for _ in 0..SOCKETS_PER_PORT {
                let mut s = tcp::Socket::new(
                    tcp::SocketBuffer::new(vec![0; BUFFER]),
                    tcp::SocketBuffer::new(vec![0; BUFFER]),
                );
                // A fresh socket always listens on a non-zero port (ports are checked).
                let _ = s.listen(port);
                slots.push(Slot {
                    port,
                    handle: sockets.add(s),
                    conn: None,
                    told_closed: false,
                    out: VecDeque::new(),
                    closing: false,
                    aborted: false,
                    reset_sent: false,
                });
            }
        }
        AppSockets {
            slots,
            next_conn: 0,
        }
    }

    /// Before the stack sees `frame` at `now_ns`: a connection attempt the app refuses
    /// finds no socket listening (smoltcp answers it with a reset); one to a port neither
    /// the app nor the stack itself (`own`) serves is told to the app as stray.
    pub(super) fn screen(
        &mut self,
        frame: &[u8],
        ip: [u8; 4],
        own: &[u16],
        now_ns: u64,
        app: &mut (dyn TcpApp + 'static),
        sockets: &mut SocketSet<'static>,
    ) {
        let Some((port, from)) = syn_port(frame, ip) else {
            return;
        };
        if !self.slots.iter().any(|s| s.port == port) {
            if !own.contains(&port) {
                app.stray(port, now_ns);
            }
            return;
        }
        if !app.refuse(port, from, now_ns) {
            return;
        }
        for slot in self.slots.iter().filter(|s| s.port == port) {
            let s = sockets.get_mut::<tcp::Socket>(slot.handle);
            if s.state() == tcp::State::Listen {
                s.abort();
            }
        }
    }

    /// Moves bytes between the sockets and `app`; returns whether anything happened.
    pub(super) fn serve(
        &mut self,
        now_ns: u64,
        app: &mut (dyn TcpApp + 'static),
        sockets: &mut SocketSet<'static>,
    ) -> bool {
        let mut busy = false;
        let mut buf = [0u8; 4096];
        for slot in &mut self.slots {
            let s = sockets.get_mut::<tcp::Socket>(slot.handle);
            if slot.conn.is_none() {
                if s.state() == tcp::State::Established {
                    let conn = self.next_conn;
                    self.next_conn += 1;
                    slot.conn = Some(conn);
                    let from = match s.remote_endpoint() {
                        Some(e) => match e.addr {
                            smoltcp::wire::IpAddress::Ipv4(a) => (a.octets(), e.port),
                        },
                        None => ([0; 4], 0),
                    };
                    app.opened(conn, slot.port, from, now_ns);
                    busy = true;
                } else if !s.is_open() {
                    // Re-armed after a refusal, or after a connection that never opened.
                    let _ = s.listen(slot.port);
                }
            }
            let Some(conn) = slot.conn else { continue };
            while s.can_recv() {
                let n = s.recv_slice(&mut buf).unwrap_or(0);
                if n == 0 {
                    break;
                }
                app.data(conn, &buf[..n], now_ns);
                busy = true;
            }
            if !slot.told_closed && !s.may_recv() {
                slot.told_closed = true;
                app.closed(conn, now_ns);
                busy = true;
            }
        }
        for action in app.due(now_ns) {
            busy = true;
            let conn = match &action {
                AppAction::Send(c, _) | AppAction::Close(c) | AppAction::Abort(c) => *c,
            };
            let Some(slot) = self.slots.iter_mut().find(|s| s.conn == Some(conn)) else {
                continue;
            };
            match action {
                AppAction::Send(_, bytes) => slot.out.extend(bytes),
                AppAction::Close(_) => slot.closing = true,
                AppAction::Abort(_) => {
                    sockets.get_mut::<tcp::Socket>(slot.handle).abort();
                    slot.out.clear();
                    slot.closing = false;
                    slot.aborted = true;
                }
            }
        }
        for slot in &mut self.slots {
            let Some(conn) = slot.conn else { continue };
            let s = sockets.get_mut::<tcp::Socket>(slot.handle);
            if slot.aborted && s.state() == tcp::State::Closed && !slot.reset_sent {
                // The reset goes out at the stack's next dispatch (the caller polls again).
                slot.reset_sent = true;
                busy = true;
                continue;
            }
            while !slot.out.is_empty() && s.can_send() {
                let (a, _) = slot.out.as_slices();
                let n = s.send_slice(a).unwrap_or(0);
                if n == 0 {
                    break;
                }
                slot.out.drain(..n);
                busy = true;
            }
            if slot.out.is_empty()
                && slot.closing
                && matches!(s.state(), tcp::State::Established | tcp::State::CloseWait)
            {
                s.close();
                busy = true;
            }
            if matches!(s.state(), tcp::State::Closed | tcp::State::TimeWait) {
                // The connection is over: the socket serves the port again.
                if !slot.told_closed {
                    app.closed(conn, now_ns);
                }
                s.abort();
                let _ = s.listen(slot.port);
                slot.conn = None;
                slot.told_closed = false;
                slot.closing = false;
                slot.aborted = false;
                slot.reset_sent = false;
                slot.out.clear();
                busy = true;
            }
        }
        busy
    }
}

/// The destination port and the source (address, port) of `frame` when it is a TCP
/// connection attempt (SYN without ACK) to `ip`.
fn syn_port(frame: &[u8], ip: [u8; 4]) -> Option<(u16, ([u8; 4], u16))> {
    let eth = EthernetFrame::new_checked(frame).ok()?;
    if eth.ethertype() != EthernetProtocol::Ipv4 {
        return None;
    }
    let ipv4 = Ipv4Packet::new_checked(eth.payload()).ok()?;
    if ipv4.next_header() != IpProtocol::Tcp || ipv4.dst_addr() != Ipv4Address::from(ip) {
        return None;
    }
    let tcp = TcpPacket::new_checked(ipv4.payload()).ok()?;
    (tcp.syn() && !tcp.ack()).then(|| (tcp.dst_port(), (ipv4.src_addr().octets(), tcp.src_port())))
}
