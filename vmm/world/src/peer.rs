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
use super::scenario::{DepFault, Dependency};
use super::switch::Delivery;
use serde::{Deserialize, Serialize};
use wio_scheduler::RunSeed;
use wio_virtio_devices::net::stack::{Stack, StackInput, TcpApp};
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
    /// The simulated dependencies it serves, if any.
    deps: Option<Dependencies>,
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
    /// The peer of a world of seed `seed`, serving `deps` with `faults`.
    pub fn new(seed: RunSeed, deps: &[Dependency], faults: &[DepFault]) -> Peer {
        let random = seed.stream("world/peer").next_u64();
        let ports: Vec<u16> = deps.iter().map(|d| d.port).collect();
        let mut peer = Peer {
            stack: Stack::serving(random, PEER_MAC, PEER_IP, &ports),
            inbox: Vec::new(),
            next_poll: None,
            deps: (!deps.is_empty()).then(|| Dependencies::new(deps)),
        };
        peer.settings(seed.0, faults);
        peer
    }

    /// Its dependencies' seed and faults from now on (recorded in its history).
    pub fn settings(&mut self, seed: u64, faults: &[DepFault]) {
        if let Some(d) = self.deps.as_mut() {
            self.stack
                .app_settings(&dependency::settings(seed, faults), d);
        }
    }

    /// What each simulated dependency did so far.
    pub fn dependencies(&self) -> Vec<DependencyStats> {
        self.deps
            .as_ref()
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
                    let app = self.deps.as_mut().map(|d| d as &mut (dyn TcpApp + 'static));
                    (f, self.stack.receive_with(&d.bytes, f, app))
                }
                (_, Some(t)) => {
                    let app = self.deps.as_mut().map(|d| d as &mut (dyn TcpApp + 'static));
                    (t, self.stack.poll_with(t, app))
                }
                _ => break,
            };
            stats.frames_out += sent.len() as u64;
            out.extend(sent.into_iter().map(|bytes| Frame { at_ns: now, bytes }));
            let app = self.deps.as_ref().map(|d| d as &(dyn TcpApp + 'static));
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

    /// The peer a world snapshot recorded (the world's node `index`), serving `deps` (the
    /// snapshot's scenario's: replaying its history rebuilds their state too).
    pub fn resume(s: &PeerState, index: usize, deps: &[Dependency]) -> Peer {
        let ports: Vec<u16> = deps.iter().map(|d| d.port).collect();
        let mut app = (!deps.is_empty()).then(|| Dependencies::new(deps));
        let stack = Stack::replay_serving(
            s.seed,
            PEER_MAC,
            PEER_IP,
            &ports,
            s.history.clone(),
            app.as_mut().map(|d| d as &mut (dyn TcpApp + 'static)),
        );
        Peer {
            deps: app,
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
