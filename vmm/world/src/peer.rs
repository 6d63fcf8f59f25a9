//! The world's external service (`[peer]` in the scenario): smoltcp's TCP/IP stack on
//! the world's switch at [`PEER_IP`], answering ARP and ping and echoing TCP and UDP on
//! port 7, as the single-machine link's peer does. It is not a machine: the coordinator
//! runs it at every quantum boundary over the quantum just ended (each frame at the
//! virtual time it arrives, each of its timers when due), and what it sends leaves at
//! that time, so it keeps the world's quantum like the nodes. Its TCP/IP randomness
//! comes from the world's seed (`world/peer`); a re-seeded world restore keeps the
//! snapshot's (smoltcp's seed is fixed when the stack is made; the stack is rebuilt by
//! replaying its history).

use super::dependency::{self, Dependencies, DependencyStats};
use super::hostlink::{HostLink, HostState, HostStats};
use super::scenario::{DepFault, Dependency};
use super::switch::Delivery;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use wio_scheduler::RunSeed;
use wio_virtio_devices::net::stack::{AppAction, Stack, StackInput, TcpApp};
use wio_virtio_devices::Frame;

/// The peer's address on the world's network.
pub const PEER_IP: [u8; 4] = [10, 0, 0, 254];
/// The peer's MAC address.
pub const PEER_MAC: [u8; 6] = [0x52, 0x54, 0x00, 0x0a, 0x00, 0xfe];
/// smoltcp's clock is in µs: a timer is never polled again sooner than this.
const MIN_POLL_NS: u64 = 1_000;

/// The external service.
pub struct Peer {
    stack: Stack,
    /// Frames on their way to it, in (arrival, source, sequence) order.
    inbox: Vec<Delivery>,
    /// When its timers next need a poll, virtual ns.
    next_poll: Option<u64>,
    /// The services it runs beside its echo (dependencies, the host link), if any.
    apps: Option<PeerApps>,
}

/// The services the peer runs beside its echo: the simulated dependencies and the host
/// link, each on its own ports, seen by the stack as one [`TcpApp`]. A dependency on an
/// allowed destination's port is the host's stand-in: it serves that port once a replay
/// left its tape (see `hostlink`).
struct PeerApps {
    deps: Option<Dependencies>,
    host: Option<HostLink>,
    /// The connections that are the host link's.
    host_conns: BTreeSet<u64>,
}

impl PeerApps {
    /// The services of `deps` and `host`; None when there are none.
    fn of(deps: &[Dependency], mut host: Option<HostLink>) -> Option<PeerApps> {
        if let Some(h) = host.as_mut() {
            if deps.iter().any(|d| h.serves(d.port)) {
                h.fall_back();
            }
        }
        let deps = (!deps.is_empty()).then(|| Dependencies::new(deps));
        (deps.is_some() || host.is_some()).then(|| PeerApps {
            deps,
            host,
            host_conns: BTreeSet::new(),
        })
    }

    fn is_host_port(&self, port: u16) -> bool {
        self.host.as_ref().is_some_and(|h| h.serves(port))
    }

    /// In a replay run with another seed than its tape's (a branch of a recorded
    /// snapshot), a fault of the dependency standing in for the host on `port` in force at
    /// `now_ns` takes the run off the tape there: the dependency answers from then on, with
    /// its faults. The tape's own seed is the recorded run, whose host had no such faults.
    fn fault_leaves_tape(&mut self, port: u16, now_ns: u64) {
        let (Some(h), Some(d)) = (self.host.as_mut(), self.deps.as_ref()) else {
            return;
        };
        let Some(tape_seed) = h.tape_seed() else {
            return;
        };
        if d.seed().is_none_or(|s| s == tape_seed) || !h.serves(port) {
            return;
        }
        if let Some(kind) = d.fault_at(port, now_ns) {
            h.leave_for(
                now_ns,
                format!(
                    "a {} fault of the dependency on port {port} (this run's seed is not the tape's)",
                    kind.name()
                ),
            );
            self.hand_over(now_ns);
        }
    }

    /// Where a replay just left its tape: the dependencies take the host's connections
    /// over, each with what its guest sent since the host last answered.
    fn hand_over(&mut self, now_ns: u64) {
        let Some(handed) = self.host.as_mut().and_then(HostLink::take_handover) else {
            return;
        };
        self.host_conns.clear();
        let Some(d) = self.deps.as_mut() else { return };
        for (conn, port, from, unanswered) in handed {
            d.opened(conn, port, from, now_ns);
            if !unanswered.is_empty() {
                d.data(conn, &unanswered, now_ns);
            }
        }
    }

    /// As the stack takes it (None: no services).
    fn app(apps: &mut Option<PeerApps>) -> Option<&mut (dyn TcpApp + 'static)> {
        apps.as_mut().map(|a| a as &mut (dyn TcpApp + 'static))
    }
}

impl TcpApp for PeerApps {
    fn ports(&self) -> Vec<u16> {
        let mut p = self.deps.as_ref().map_or_else(Vec::new, |d| d.ports());
        for h in self.host.as_ref().map_or_else(Vec::new, |h| h.ports()) {
            if !p.contains(&h) {
                p.push(h);
            }
        }
        p
    }

    fn refuse(&mut self, port: u16, from: ([u8; 4], u16), now_ns: u64) -> bool {
        self.fault_leaves_tape(port, now_ns);
        if self.is_host_port(port) {
            let refused = self
                .host
                .as_mut()
                .is_some_and(|h| h.refuse(port, from, now_ns));
            self.hand_over(now_ns);
            if self.is_host_port(port) {
                return refused;
            }
        }
        self.deps
            .as_mut()
            .is_some_and(|d| d.refuse(port, from, now_ns))
    }

    fn stray(&mut self, port: u16, now_ns: u64) {
        if let Some(h) = self.host.as_mut() {
            h.stray(port, now_ns);
        }
    }

    fn opened(&mut self, conn: u64, port: u16, from: ([u8; 4], u16), now_ns: u64) {
        if self.is_host_port(port) {
            self.host_conns.insert(conn);
            if let Some(h) = self.host.as_mut() {
                h.opened(conn, port, from, now_ns);
            }
        } else if let Some(d) = self.deps.as_mut() {
            d.opened(conn, port, from, now_ns);
        }
    }

    fn data(&mut self, conn: u64, bytes: &[u8], now_ns: u64) {
        if let Some(port) = self.host.as_ref().and_then(|h| h.port_of(conn)) {
            self.fault_leaves_tape(port, now_ns);
        }
        if self.host_conns.contains(&conn) {
            if let Some(h) = self.host.as_mut() {
                h.data(conn, bytes, now_ns);
            }
            // Bytes that left the tape are in the handed-over connection's.
            self.hand_over(now_ns);
        } else if let Some(d) = self.deps.as_mut() {
            d.data(conn, bytes, now_ns);
        }
    }

    fn closed(&mut self, conn: u64, now_ns: u64) {
        if self.host_conns.remove(&conn) {
            if let Some(h) = self.host.as_mut() {
                h.closed(conn, now_ns);
            }
        } else if let Some(d) = self.deps.as_mut() {
            d.closed(conn, now_ns);
        }
    }

    fn due(&mut self, now_ns: u64) -> Vec<AppAction> {
        let mut out = self.deps.as_mut().map_or_else(Vec::new, |d| d.due(now_ns));
        if let Some(h) = self.host.as_mut() {
            out.extend(h.due(now_ns));
        }
        out
    }

    fn wake(&self) -> Option<u64> {
        let d = self.deps.as_ref().and_then(|d| d.wake());
        let h = self.host.as_ref().and_then(|h| h.wake());
        d.into_iter().chain(h).min()
    }

    fn settings(&mut self, bytes: &[u8]) {
        if let Some(d) = self.deps.as_mut() {
            d.settings(bytes);
        }
    }
}

/// What a world snapshot keeps of the peer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PeerState {
    seed: u64,
    history: Vec<StackInput>,
    inbox: Vec<(u64, usize, u64, Vec<u8>)>,
    next_poll: Option<u64>,
}

/// What the peer did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PeerStats {
    /// Frames it received.
    pub frames_in: u64,
    /// Frames it sent.
    pub frames_out: u64,
    /// TCP connections it accepted.
    pub tcp_connections: u64,
    /// Bytes it echoed over TCP.
    pub tcp_bytes: u64,
    /// UDP datagrams it echoed.
    pub udp_datagrams: u64,
}

impl Peer {
    /// The peer of a world of seed `seed`, serving `deps` with `faults`, and the host link
    /// when given.
    pub fn new(
        seed: RunSeed,
        deps: &[Dependency],
        faults: &[DepFault],
        host: Option<HostLink>,
        names: Vec<(String, [u8; 4])>,
    ) -> Peer {
        let has_host = host.is_some();
        let random = seed.stream("world/peer").next_u64();
        let apps = PeerApps::of(deps, host);
        let ports = apps.as_ref().map_or_else(Vec::new, |a| a.ports());
        let mut peer = Peer {
            stack: Stack::serving(random, PEER_MAC, PEER_IP, &ports),
            inbox: Vec::new(),
            next_poll: None,
            apps,
        };
        if has_host {
            // A world with a host link answers DNS for its names (and no other).
            peer.stack.serve_names(names);
        }
        peer.settings(seed.0, faults);
        peer
    }

    /// Its dependencies' seed and faults from now on (recorded in its history).
    pub fn settings(&mut self, seed: u64, faults: &[DepFault]) {
        if let Some(a) = self.apps.as_mut().filter(|a| a.deps.is_some()) {
            self.stack
                .app_settings(&dependency::settings(seed, faults), a);
        }
    }

    /// What the host link did (with the DNS service's queries), when the world has one.
    pub fn host_stats(&self) -> Option<HostStats> {
        let mut h = self.apps.as_ref()?.host.as_ref()?.stats().clone();
        h.count_dns(&self.stack.stats);
        Some(h)
    }

    /// Connection attempts to ports nothing serves, since the last call (virtual ns, port).
    pub fn take_host_refused(&mut self) -> Vec<(u64, u16)> {
        self.host_mut()
            .map_or_else(Vec::new, HostLink::take_refused)
    }

    /// Where a replay left its tape, or why a recording failed, once.
    pub fn take_host_failure(&mut self) -> Option<wio_machines::error::WioError> {
        self.host_mut()?.take_failure()
    }

    /// Ends a recording's tape.
    pub fn finish_host(&mut self) -> wio_machines::error::Result<()> {
        self.host_mut().map_or(Ok(()), HostLink::finish)
    }

    fn host_mut(&mut self) -> Option<&mut HostLink> {
        self.apps.as_mut()?.host.as_mut()
    }

    /// What each simulated dependency did so far.
    pub fn dependencies(&self) -> Vec<DependencyStats> {
        self.apps
            .as_ref()
            .and_then(|a| a.deps.as_ref())
            .map_or_else(Vec::new, |d| d.stats().to_vec())
    }

    /// A frame on its way to the peer.
    pub fn take(&mut self, d: Delivery) {
        let key = |d: &Delivery| (d.at_ns, d.src, d.seq);
        let at = self.inbox.partition_point(|x| key(x) <= key(&d));
        self.inbox.insert(at, d);
    }

    /// Whether frames are on their way to it.
    pub fn busy(&self) -> bool {
        !self.inbox.is_empty()
    }

    /// When its timers next need it (with nothing on its way to it).
    pub fn wake(&self) -> Option<u64> {
        self.next_poll
    }

    /// Runs the peer over everything due before `until`, in time order (a frame before a
    /// timer of the same ns); returns the frames it sent, each at the time it sent it.
    pub fn run_until(&mut self, until: u64, stats: &mut PeerStats) -> Vec<Frame> {
        let mut out = Vec::new();
        loop {
            let frame_at = self.inbox.first().map(|d| d.at_ns).filter(|t| *t < until);
            let timer_at = self.next_poll.filter(|t| *t < until);
            let (now, sent) = match (frame_at, timer_at) {
                (Some(f), t) if t.is_none_or(|t| f <= t) => {
                    let d = self.inbox.remove(0);
                    stats.frames_in += 1;
                    let app = PeerApps::app(&mut self.apps);
                    (f, self.stack.receive_with(&d.bytes, f, app))
                }
                (_, Some(t)) => (t, self.stack.poll_with(t, PeerApps::app(&mut self.apps))),
                _ => break,
            };
            stats.frames_out += sent.len() as u64;
            out.extend(sent.into_iter().map(|bytes| Frame { at_ns: now, bytes }));
            let app = self.apps.as_ref().map(|a| a as &(dyn TcpApp + 'static));
            self.next_poll = self
                .stack
                .next_poll_ns_with(now, app)
                .map(|d| now.saturating_add(d.max(MIN_POLL_NS)));
        }
        let s = &self.stack.stats;
        stats.tcp_connections = s.tcp_connections;
        stats.tcp_bytes = s.tcp_bytes;
        stats.udp_datagrams = s.udp_datagrams;
        out
    }

    /// Its state for a world snapshot; None when its history outgrew what a snapshot keeps.
    pub fn save(&self) -> Option<PeerState> {
        let (seed, history) = self.stack.history()?;
        Some(PeerState {
            seed,
            history: history.to_vec(),
            inbox: self
                .inbox
                .iter()
                .map(|d| (d.at_ns, d.src, d.seq, d.bytes.clone()))
                .collect(),
            next_poll: self.next_poll,
        })
    }

    /// What a world snapshot keeps of its host link (None: it has none).
    pub fn host_save(&self) -> Result<Option<HostState>, wio_machines::error::NotHere> {
        match self.apps.as_ref().and_then(|a| a.host.as_ref()) {
            None => Ok(None),
            Some(h) => h
                .save()
                .map(Some)
                .ok_or(wio_machines::error::NotHere::HostLive),
        }
    }

    /// The peer a world snapshot recorded (the world's node `index`), serving `deps` (the
    /// snapshot's scenario's) and `host` (its host link, replaying its tape): replaying the
    /// peer's history rebuilds their state too.
    pub fn resume(
        s: &PeerState,
        index: usize,
        deps: &[Dependency],
        host: Option<HostLink>,
    ) -> Peer {
        let mut apps = PeerApps::of(deps, host);
        let ports = apps.as_ref().map_or_else(Vec::new, |a| a.ports());
        let stack = Stack::replay_serving(
            s.seed,
            PEER_MAC,
            PEER_IP,
            &ports,
            s.history.clone(),
            PeerApps::app(&mut apps),
        );
        Peer {
            apps,
            stack,
            inbox: s
                .inbox
                .iter()
                .map(|(at_ns, src, seq, bytes)| Delivery {
                    at_ns: *at_ns,
                    sent_ns: *at_ns,
                    src: *src,
                    seq: *seq,
                    dst: index,
                    bytes: bytes.clone(),
                })
                .collect(),
            next_poll: s.next_poll,
        }
    }
}
