//! The simulated network's host-side peer: smoltcp's TCP/IP stack at
//! 10.0.2.2, driven only by the frames the guest sends and by virtual time.
//! It answers ARP and ICMP echo (ping), and runs echo services on TCP and UDP
//! port 7. Its randomness (initial sequence numbers, ports) comes from a seed
//! the device draws from the run seed, and its clock is the virtual clock, so
//! what it sends and when is a function of the seed.

use super::apps::AppSockets;
pub use super::apps::{AppAction, TcpApp, SOCKETS_PER_PORT};
use smoltcp::iface::{Config, Interface, SocketHandle, SocketSet};
use smoltcp::phy::{Device, DeviceCapabilities, Medium};
use smoltcp::socket::{tcp, udp};
use smoltcp::time::Instant;
use smoltcp::wire::{EthernetAddress, HardwareAddress, IpAddress, IpCidr};
use std::collections::VecDeque;

/// The peer's IPv4 address (10.0.2.2, as in QEMU's user network).
pub const PEER_IP: [u8; 4] = [10, 0, 2, 2];
/// The peer's MAC address.
pub const PEER_MAC: [u8; 6] = [0x52, 0x54, 0x00, 0x12, 0x34, 0x02];
/// Echo port (TCP and UDP).
pub const ECHO_PORT: u16 = 7;
/// Largest frame the stack handles.
const MTU: usize = 1514;

/// Frames between the stack and the link.
#[derive(Default)]
struct Pipe {
    inbound: VecDeque<Vec<u8>>,
    outbound: Vec<Vec<u8>>,
}

struct Rx(Vec<u8>);
struct Tx<'a>(&'a mut Vec<Vec<u8>>);

impl smoltcp::phy::RxToken for Rx {
    fn consume<R, F: FnOnce(&[u8]) -> R>(self, f: F) -> R {
        f(&self.0)
    }
}

impl smoltcp::phy::TxToken for Tx<'_> {
    fn consume<R, F: FnOnce(&mut [u8]) -> R>(self, len: usize, f: F) -> R {
        let mut buf = vec![0u8; len];
        let r = f(&mut buf);
        self.0.push(buf);
        r
    }
}

impl Device for Pipe {
    type RxToken<'a> = Rx;
    type TxToken<'a> = Tx<'a>;

    fn receive(&mut self, _t: Instant) -> Option<(Rx, Tx<'_>)> {
        let frame = self.inbound.pop_front()?;
        Some((Rx(frame), Tx(&mut self.outbound)))
    }

    fn transmit(&mut self, _t: Instant) -> Option<Tx<'_>> {
        Some(Tx(&mut self.outbound))
    }

    fn capabilities(&self) -> DeviceCapabilities {
        let mut caps = DeviceCapabilities::default();
        caps.medium = Medium::Ethernet;
        caps.max_transmission_unit = MTU;
        caps
    }
}

/// Counters of the echo services.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StackStats {
    /// TCP connections accepted.
    pub tcp_connections: u64,
    /// Bytes echoed over TCP.
    pub tcp_bytes: u64,
    /// UDP datagrams echoed.
    pub udp_datagrams: u64,
    /// DNS queries answered for a name it serves.
    pub dns_answered: u64,
    /// DNS queries for names it does not serve (NXDOMAIN) or it could not read.
    pub dns_refused: u64,
}

/// One call into the peer, as its history records it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum StackInput {
    /// A frame from the guest arrived.
    Receive(u64, #[serde(with = "serde_bytes")] Vec<u8>),
    /// The peer's timers ran.
    Poll(u64),
    /// The machine asked when to poll next (this sets the stack's clock).
    PollDelay(u64),
    /// The apps' settings changed (bytes as the app wrote them): a re-seeded restore.
    App(#[serde(with = "serde_bytes")] Vec<u8>),
    /// The peer answers DNS queries for these names from now on (see [`super::dns`]).
    Names(Vec<super::dns::Name>),
}

/// Most calls a peer's history keeps; a longer history cannot be snapshotted.
pub const MAX_HISTORY: usize = 1 << 20;

/// The peer.
///
/// smoltcp's state cannot be copied out, so for snapshots the peer keeps its
/// history instead: its random seed and every call made into it. Replaying that
/// history into a new peer rebuilds the same state, because the stack is a pure
/// function of its seed, its inputs and the virtual times they came at.
pub struct Stack {
    random_seed: u64,
    mac: [u8; 6],
    ip: [u8; 4],
    history: Vec<StackInput>,
    /// Whether the history outgrew [`MAX_HISTORY`] (recording stopped).
    history_overflow: bool,
    iface: Interface,
    sockets: SocketSet<'static>,
    pipe: Pipe,
    tcp: SocketHandle,
    udp: SocketHandle,
    tcp_was_active: bool,
    /// The sockets of the apps' ports ([`TcpApp`]).
    apps: AppSockets,
    /// The DNS service's socket and names, once it has some.
    dns: Option<(SocketHandle, Vec<super::dns::Name>)>,
    /// What the services did.
    pub stats: StackStats,
}

fn instant(ns: u64) -> Instant {
    Instant::from_micros((ns / 1_000) as i64)
}

impl Stack {
    /// A peer whose TCP/IP randomness comes from `random_seed`, at [`PEER_IP`] / [`PEER_MAC`].
    pub fn new(random_seed: u64) -> Stack {
        Stack::at(random_seed, PEER_MAC, PEER_IP)
    }

    /// A peer at another address (a /24): a world's external service.
    pub fn at(random_seed: u64, mac: [u8; 6], ip: [u8; 4]) -> Stack {
        Stack::serving(random_seed, mac, ip, &[])
    }

    /// [`Stack::at`] with sockets listening on `ports` for a [`TcpApp`] (given to each call
    /// with `_with`); `ports` must not hold [`ECHO_PORT`] or 0.
    pub fn serving(random_seed: u64, mac: [u8; 6], ip: [u8; 4], ports: &[u16]) -> Stack {
        let mut pipe = Pipe::default();
        let mut config = Config::new(HardwareAddress::Ethernet(EthernetAddress(mac)));
        config.random_seed = random_seed;
        let mut iface = Interface::new(config, &mut pipe, instant(0));
        iface.update_ip_addrs(|addrs| {
            let [a, b, c, d] = ip;
            // One address: the vector has room for it by construction.
            let _ = addrs.push(IpCidr::new(IpAddress::v4(a, b, c, d), 24));
        });
        let mut sockets = SocketSet::new(Vec::new());
        let tcp = sockets.add(tcp::Socket::new(
            tcp::SocketBuffer::new(vec![0; 16384]),
            tcp::SocketBuffer::new(vec![0; 16384]),
        ));
        let mut udp_socket = udp::Socket::new(
            udp::PacketBuffer::new(vec![udp::PacketMetadata::EMPTY; 16], vec![0; 16384]),
            udp::PacketBuffer::new(vec![udp::PacketMetadata::EMPTY; 16], vec![0; 16384]),
        );
        // A fresh socket always binds.
        let _ = udp_socket.bind(ECHO_PORT);
        let udp = sockets.add(udp_socket);
        let apps = AppSockets::new(ports, &mut sockets);
        let mut stack = Stack {
            random_seed,
            mac,
            ip,
            history: Vec::new(),
            history_overflow: false,
            iface,
            sockets,
            pipe,
            tcp,
            udp,
            tcp_was_active: false,
            apps,
            dns: None,
            stats: StackStats::default(),
        };
        stack.listen();
        stack
    }

    fn listen(&mut self) {
        let s = self.sockets.get_mut::<tcp::Socket>(self.tcp);
        if !s.is_open() {
            // Listening on a closed socket cannot fail for a fixed, non-zero port.
            let _ = s.listen(ECHO_PORT);
        }
    }

    fn record(&mut self, input: StackInput) {
        if self.history.len() < MAX_HISTORY {
            self.history.push(input);
        } else {
            self.history_overflow = true;
        }
    }

    /// The seed and history a snapshot keeps (None when the history outgrew [`MAX_HISTORY`]).
    pub fn history(&self) -> Option<(u64, &[StackInput])> {
        (!self.history_overflow).then_some((self.random_seed, &self.history[..]))
    }

    /// A peer in the state `history` leaves a new peer of `random_seed` in.
    pub fn replay(random_seed: u64, history: Vec<StackInput>) -> Stack {
        Stack::replay_serving(random_seed, PEER_MAC, PEER_IP, &[], history, None)
    }

    /// Its addresses: (MAC, IPv4).
    pub fn address(&self) -> ([u8; 6], [u8; 4]) {
        (self.mac, self.ip)
    }

    /// [`Stack::replay`] of a peer at another address (a /24) [`Stack::serving`] `ports` for
    /// `app` (a new app of the configuration the history was made with: replaying rebuilds
    /// its state too).
    pub fn replay_serving(
        random_seed: u64,
        mac: [u8; 6],
        ip: [u8; 4],
        ports: &[u16],
        history: Vec<StackInput>,
        mut app: Option<&mut (dyn TcpApp + 'static)>,
    ) -> Stack {
        let mut stack = Stack::serving(random_seed, mac, ip, ports);
        for input in history {
            match input {
                StackInput::Receive(now, frame) => {
                    stack.receive_with(&frame, now, app.as_deref_mut());
                }
                StackInput::Poll(now) => {
                    stack.poll_with(now, app.as_deref_mut());
                }
                StackInput::PollDelay(now) => {
                    stack.next_poll_ns_with(now, app.as_deref());
                }
                StackInput::App(bytes) => {
                    if let Some(app) = app.as_deref_mut() {
                        stack.app_settings(&bytes, app);
                    }
                }
                StackInput::Names(names) => stack.serve_names(names),
            }
        }
        stack
    }

    /// A frame from the guest at virtual time `now_ns`: returns the frames the peer sends.
    pub fn receive(&mut self, frame: &[u8], now_ns: u64) -> Vec<Vec<u8>> {
        self.receive_with(frame, now_ns, None)
    }

    /// [`Stack::receive`] with the app of its ports.
    pub fn receive_with(
        &mut self,
        frame: &[u8],
        now_ns: u64,
        mut app: Option<&mut (dyn TcpApp + 'static)>,
    ) -> Vec<Vec<u8>> {
        self.record(StackInput::Receive(now_ns, frame.to_vec()));
        if let Some(app) = app.as_deref_mut() {
            self.apps
                .screen(frame, self.ip, &[ECHO_PORT], now_ns, app, &mut self.sockets);
        }
        self.pipe.inbound.push_back(frame.to_vec());
        self.run(now_ns, app)
    }

    /// Runs the stack at virtual time `now_ns` (timers, services); returns frames to send.
    pub fn poll(&mut self, now_ns: u64) -> Vec<Vec<u8>> {
        self.poll_with(now_ns, None)
    }

    /// [`Stack::poll`] with the app of its ports.
    pub fn poll_with(
        &mut self,
        now_ns: u64,
        app: Option<&mut (dyn TcpApp + 'static)>,
    ) -> Vec<Vec<u8>> {
        self.record(StackInput::Poll(now_ns));
        self.run(now_ns, app)
    }

    /// Answers DNS queries on UDP port 53 for `names` from now on, NXDOMAIN for any other
    /// (recorded: a replay starts the service at the same point). Given once; a second
    /// call changes nothing.
    pub fn serve_names(&mut self, names: Vec<super::dns::Name>) {
        if self.dns.is_some() {
            return;
        }
        self.record(StackInput::Names(names.clone()));
        let mut s = udp::Socket::new(
            udp::PacketBuffer::new(vec![udp::PacketMetadata::EMPTY; 16], vec![0; 8192]),
            udp::PacketBuffer::new(vec![udp::PacketMetadata::EMPTY; 16], vec![0; 8192]),
        );
        // A fresh socket always binds.
        let _ = s.bind(super::dns::DNS_PORT);
        self.dns = Some((self.sockets.add(s), names));
    }

    /// Gives the app new settings (recorded: a replay gives them at the same point).
    pub fn app_settings(&mut self, bytes: &[u8], app: &mut (dyn TcpApp + 'static)) {
        self.record(StackInput::App(bytes.to_vec()));
        app.settings(bytes);
    }

    fn run(&mut self, now_ns: u64, mut app: Option<&mut (dyn TcpApp + 'static)>) -> Vec<Vec<u8>> {
        let now = instant(now_ns);
        for _ in 0..4 {
            self.iface.poll(now, &mut self.pipe, &mut self.sockets);
            let mut busy = self.services();
            if let Some(app) = app.as_deref_mut() {
                busy |= self.apps.serve(now_ns, app, &mut self.sockets);
            }
            if !busy {
                break;
            }
        }
        std::mem::take(&mut self.pipe.outbound)
    }

    /// Echo services; returns whether they queued anything.
    fn services(&mut self) -> bool {
        let mut busy = false;
        let tcp = self.sockets.get_mut::<tcp::Socket>(self.tcp);
        if tcp.is_active() && !self.tcp_was_active {
            self.stats.tcp_connections += 1;
        }
        self.tcp_was_active = tcp.is_active();
        let mut buf = [0u8; 4096];
        while tcp.can_recv() && tcp.can_send() {
            let n = tcp.recv_slice(&mut buf).unwrap_or(0);
            if n == 0 {
                break;
            }
            let sent = tcp.send_slice(&buf[..n]).unwrap_or(0);
            self.stats.tcp_bytes += sent as u64;
            busy = true;
        }
        if tcp.state() == tcp::State::CloseWait {
            tcp.close();
            busy = true;
        }
        let udp = self.sockets.get_mut::<udp::Socket>(self.udp);
        while let Ok((n, meta)) = udp.recv_slice(&mut buf) {
            if udp.send_slice(&buf[..n], meta.endpoint).is_ok() {
                self.stats.udp_datagrams += 1;
                busy = true;
            }
        }
        if let Some((handle, names)) = &self.dns {
            let dns = self.sockets.get_mut::<udp::Socket>(*handle);
            while let Ok((n, meta)) = dns.recv_slice(&mut buf) {
                let Some((reply, outcome)) = super::dns::answer(&buf[..n], names) else {
                    continue;
                };
                if outcome == super::dns::Outcome::Known {
                    self.stats.dns_answered += 1;
                } else {
                    self.stats.dns_refused += 1;
                }
                if dns.send_slice(&reply, meta.endpoint).is_ok() {
                    busy = true;
                }
            }
        }
        self.listen();
        busy
    }

    /// Virtual ns from `now_ns` until the stack next needs polling (retransmits, ACKs), if ever.
    pub fn next_poll_ns(&mut self, now_ns: u64) -> Option<u64> {
        self.next_poll_ns_with(now_ns, None)
    }

    /// [`Stack::next_poll_ns`] counting the app's own wake-ups (delayed answers).
    pub fn next_poll_ns_with(
        &mut self,
        now_ns: u64,
        app: Option<&(dyn TcpApp + 'static)>,
    ) -> Option<u64> {
        self.record(StackInput::PollDelay(now_ns));
        let stack = self
            .iface
            .poll_delay(instant(now_ns), &self.sockets)
            .map(|d| d.total_micros().saturating_mul(1000));
        let app = app.and_then(|a| a.wake()).map(|t| t.saturating_sub(now_ns));
        stack.into_iter().chain(app).min()
    }
}
