//! virtio-net on a simulated network: frames the guest sends go to a
//! deterministic host-side peer ([`stack::Stack`], smoltcp) over a link whose latency, jitter,
//! loss and duplication come from the device's PRNG stream; replies come back
//! into the guest's receive buffers at those virtual times. Every frame can be
//! captured to pcap with its virtual timestamp.
//!
//! In port mode ([`Net::connect_port`]) the device has no peer and no link of its own:
//! frames the guest sends wait in an outbox for the machine to take ([`Net::take_sent`]),
//! and frames from outside ([`Net::arrive`]) reach the guest at the virtual time they
//! carry. That is how several machines share one simulated network, whose links (latency,
//! loss, partitions) belong to the switch between them.
//!
//! The machine injects faults ([`NetFault`], see [`faults`]) with [`Net::start_fault`] and
//! [`Net::end_fault`]. A frame meets them twice: where it enters the wire (the guest's
//! frames in `complete`, before the link or the outbox; the peer's frames before the link;
//! frames from outside in [`Net::arrive`]), where a partition drops it, loss faults may
//! drop it, duplication faults may copy it, and delay and reordering faults lengthen its
//! trip; and where it arrives (at the peer, or at the guest's inbox), where a partition in
//! force then drops it too (a partition starting while a frame is on the wire).

mod apps;
pub mod dns;
pub mod faults;

pub mod pcap;
pub mod stack;

use crate::device::{take_requests, DeviceError, GuestMem, Pending, Request, VirtioDevice};
use crate::VIRTIO_F_VERSION_1;
pub use faults::{Direction, NetFault};
use faults::{Faults, FaultsState};
use pcap::Pcap;
use stack::Stack;
use std::collections::{BTreeMap, VecDeque};
use virtio_queue::Queue;
use vm_memory::Bytes;
use wio_scheduler::{stream_names, RunSeed, Stream};

/// virtio device ID of the network device.
pub const DEVICE_ID: u32 = 1;
/// The device's name in errors.
pub(crate) const DEVICE: &str = "virtio-net";
/// Queue size offered (receive and transmit).
pub const QUEUE_SIZE: u16 = 256;
/// Feature bit: the device has a MAC address in its configuration.
pub const VIRTIO_NET_F_MAC: u64 = 1 << 5;
/// Size of the virtio_net_hdr_v1 that precedes every frame.
pub const NET_HDR_LEN: usize = 12;
/// Largest frame accepted from the guest.
pub const MAX_FRAME: usize = 65_550;
/// The guest's MAC address.
pub const GUEST_MAC: [u8; 6] = [0x52, 0x54, 0x00, 0x12, 0x34, 0x56];
const RX: usize = 0;
const TX: usize = 1;
/// Timer token: deliver queued frames into newly posted receive buffers.
const DELIVER_NOW: u64 = u64::MAX;
/// Timer token: run the peer's stack (its own timers).
const POLL_STACK: u64 = u64::MAX - 1;
/// Most frames the outbox of a port holds; the guest's further frames are dropped (and
/// counted) until the machine takes them.
pub const MAX_OUTBOX: usize = 4096;

/// A frame crossing a machine's network port: its Ethernet bytes and the virtual time it
/// left the guest (outgoing) or reaches the device (incoming).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Frame {
    /// Virtual ns.
    pub at_ns: u64,
    /// The Ethernet frame (no virtio header).
    #[serde(with = "serde_bytes")]
    pub bytes: Vec<u8>,
}

/// How the simulated link behaves; all randomness comes from the device's stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Link {
    /// One-way latency in virtual ns.
    pub latency_ns: u64,
    /// Extra latency drawn uniformly from [0, jitter_ns].
    pub jitter_ns: u64,
    /// Frames lost, per million.
    pub loss_ppm: u64,
    /// Frames duplicated, per million.
    pub duplicate_ppm: u64,
}

impl Default for Link {
    fn default() -> Self {
        Link {
            latency_ns: 50_000,
            jitter_ns: 20_000,
            loss_ppm: 0,
            duplicate_ppm: 0,
        }
    }
}

/// Counters of the link.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct NetStats {
    /// Frames the guest sent.
    pub tx_frames: u64,
    /// Frames delivered to the guest.
    pub rx_frames: u64,
    /// Frames the link dropped.
    pub lost: u64,
    /// Frames the link duplicated.
    pub duplicated: u64,
    /// Frames dropped because the guest had no receive buffer.
    pub rx_overruns: u64,
    /// Frames dropped because the port's outbox was full.
    pub port_drops: u64,
    /// Frames dropped by an injected fault (a partition or a fault's loss).
    pub fault_drops: u64,
    /// Extra copies of frames made by an injected duplication fault.
    pub fault_duplicates: u64,
}

/// The network device.
pub struct Net {
    link: Link,
    stream: Stream,
    peer: Stack,
    /// Virtual time of the earliest armed stack poll, to avoid piling up timers.
    poll_armed: Option<u64>,
    /// A TCP service the peer runs on its own ports (a single machine's host link), if any.
    app: Option<Box<dyn stack::TcpApp + Send>>,
    rx_buffers: VecDeque<Request>,
    inbox: VecDeque<Vec<u8>>,
    in_flight: BTreeMap<u64, Flight>,
    next_token: u64,
    timers: Vec<(u64, u64)>,
    pcap: Option<Pcap>,
    /// Port mode: the frames the guest sent, waiting for the machine (None: the device
    /// talks to its own peer over its own link).
    port: Option<VecDeque<Frame>>,
    /// The injected faults in force and their stream.
    faults: Faults,
    /// The MAC address the device reports (machines sharing a simulated switch each
    /// have their own).
    mac: [u8; 6],
    /// Link counters.
    pub stats: NetStats,
}

/// A frame on the link.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
enum Flight {
    /// From the guest, arriving at the peer.
    ToPeer(#[serde(with = "serde_bytes")] Vec<u8>),
    /// From the peer, arriving at the guest.
    ToGuest(#[serde(with = "serde_bytes")] Vec<u8>),
}

/// What a snapshot keeps of the network device ([`DeviceState::Net`]): its stream, its
/// peer's seed and input history (replayed to rebuild the peer), the guest's receive
/// buffers, frames waiting and on the wire, its timers and counters, its port's outbox,
/// the faults in force and its MAC address. The link's settings are not in it: they come
/// from the configuration of the run that restores it.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct NetState {
    stream: wio_scheduler::SavedStream,
    peer_seed: u64,
    peer_history: Vec<stack::StackInput>,
    poll_armed: Option<u64>,
    rx_buffers: Vec<Request>,
    #[serde(with = "crate::codec::byte_lists")]
    inbox: Vec<Vec<u8>>,
    in_flight: Vec<(u64, Flight)>,
    next_token: u64,
    timers: Vec<(u64, u64)>,
    stats: NetStats,
    port: Option<Vec<Frame>>,
    faults: FaultsState,
    mac: [u8; 6],
}

/// Most frames waiting for receive buffers before the device drops new ones.
const MAX_INBOX: usize = 1024;

impl Net {
    /// A network device whose link draws from `seed`'s stream `name/link`, its peer's stack
    /// seeded from the first value of `name/stack`, its injected faults from `name/faults`
    /// (see [`wio_scheduler::stream_names`]).
    pub fn new(seed: RunSeed, name: &str, link: Link, pcap: Option<Pcap>) -> Net {
        let stack_seed = seed
            .stream(&stream_names::sub(name, stream_names::STACK))
            .next_u64();
        let mut net = Net {
            link,
            stream: seed.stream(&stream_names::sub(name, stream_names::LINK)),
            peer: Stack::new(0),
            poll_armed: None,
            app: None,
            rx_buffers: VecDeque::new(),
            inbox: VecDeque::new(),
            in_flight: BTreeMap::new(),
            next_token: 0,
            timers: Vec::new(),
            pcap,
            port: None,
            faults: Faults::new(seed, &stream_names::sub(name, stream_names::FAULTS)),
            mac: GUEST_MAC,
            stats: NetStats::default(),
        };
        net.peer = Stack::new(stack_seed);
        net
    }

    /// Port mode: the guest's frames go to an outbox instead of the built-in peer, and
    /// frames from outside come in through [`Net::arrive`]. Set before the guest runs.
    pub fn connect_port(&mut self) {
        self.port.get_or_insert_with(VecDeque::new);
    }

    /// The peer runs `app` on its ports from now on (its TCP/IP stack is made again, with
    /// the same seed, to listen on them). Set before the guest runs. A device serving an
    /// app cannot be snapshotted (the app's own state is not the device's). Its DNS service
    /// answers `names` (each at the peer's address) and NXDOMAIN for any other name.
    pub fn serve(&mut self, app: Box<dyn stack::TcpApp + Send>, names: &[String]) {
        let seed = self.peer.history().map_or(0, |(seed, _)| seed);
        self.peer = Stack::serving(seed, stack::PEER_MAC, stack::PEER_IP, &app.ports());
        self.peer
            .serve_names(names.iter().map(|n| (n.clone(), stack::PEER_IP)).collect());
        self.app = Some(app);
    }

    /// The MAC address the guest reads from the device's config space (default
    /// [`GUEST_MAC`]). Set before the guest runs.
    pub fn set_mac(&mut self, mac: [u8; 6]) {
        self.mac = mac;
    }

    /// Fault `id` is in force from now on: it acts on the frames the device handles from
    /// now on (and on frames already on the wire when they arrive, for a partition). A
    /// fault already in force under `id` is replaced.
    pub fn start_fault(&mut self, id: u64, fault: NetFault) {
        self.faults.start(id, fault);
    }

    /// Fault `id` is no longer in force; an unknown id changes nothing.
    pub fn end_fault(&mut self, id: u64) {
        self.faults.end(id);
    }

    /// The faults in force, in id order.
    pub fn faults_in_force(&self) -> impl Iterator<Item = (u64, NetFault)> + '_ {
        self.faults.iter()
    }

    /// Whether the device is in port mode.
    pub fn has_port(&self) -> bool {
        self.port.is_some()
    }

    /// The frames the guest sent since the last call, in order (none without a port).
    pub fn take_sent(&mut self) -> Vec<Frame> {
        self.port
            .as_mut()
            .map_or_else(Vec::new, |p| p.drain(..).collect())
    }

    /// A frame from outside reaches the device at `frame.at_ns` (the device's time is
    /// `now_ns`): it is captured and, at that time, handed to the guest's receive buffers.
    /// Faults in force now may drop or duplicate it and lengthen its trip; a partition in
    /// force when it reaches the guest drops it then.
    pub fn arrive(&mut self, frame: Frame, now_ns: u64) -> Result<(), DeviceError> {
        if self.port.is_none() {
            return Err(DeviceError::NoPort);
        }
        if frame.at_ns < now_ns {
            return Err(DeviceError::FrameInThePast {
                at_ns: frame.at_ns,
                now_ns,
            });
        }
        if frame.bytes.len() < 14 || frame.bytes.len() > MAX_FRAME {
            return Err(DeviceError::PortFrameSize {
                len: frame.bytes.len(),
                max: MAX_FRAME,
            });
        }
        self.capture(frame.at_ns, &frame.bytes);
        let Some(copies) = self.fault_entry(true) else {
            return Ok(());
        };
        for _ in 0..copies {
            self.arrive_at(frame.bytes.clone(), frame.at_ns - now_ns);
        }
        self.arrive_at(frame.bytes, frame.at_ns - now_ns);
        Ok(())
    }

    /// A frame from outside reaches the guest's inbox in `delay_ns`, plus the extra delay
    /// of the faults in force.
    fn arrive_at(&mut self, bytes: Vec<u8>, delay_ns: u64) {
        let extra = self.faults.extra_delay();
        let t = self.next_token;
        self.next_token += 1;
        self.in_flight.insert(t, Flight::ToGuest(bytes));
        self.timers.push((delay_ns.saturating_add(extra), t));
    }

    /// A frame going `to_guest` (else from the guest) enters the wire: the faults in force
    /// may drop it (counted; None) or make extra copies of it (how many).
    fn fault_entry(&mut self, to_guest: bool) -> Option<u32> {
        let copies = self.faults.enter(to_guest);
        match copies {
            None => self.stats.fault_drops += 1,
            Some(n) => self.stats.fault_duplicates += u64::from(n),
        }
        copies
    }

    /// A frame going `to_guest` (else from the guest) arrives: whether a partition in force
    /// drops it (counted).
    fn fault_cuts(&mut self, to_guest: bool) -> bool {
        let cut = self.faults.partitioned(to_guest);
        if cut {
            self.stats.fault_drops += 1;
        }
        cut
    }

    /// Port mode: the guest's frame, sent at `now_ns`, waits in the outbox (or is dropped
    /// and counted when the outbox is full).
    fn push_outbox(&mut self, bytes: Vec<u8>, now_ns: u64) {
        match self.port.as_mut() {
            Some(outbox) if outbox.len() >= MAX_OUTBOX => self.stats.port_drops += 1,
            Some(outbox) => outbox.push_back(Frame {
                at_ns: now_ns,
                bytes,
            }),
            None => {}
        }
    }

    /// What the peer's services did.
    pub fn peer_stats(&self) -> &stack::StackStats {
        &self.peer.stats
    }

    /// The app as the stack takes it (a function of the field, so the stack can be
    /// borrowed beside it).
    fn app(
        app: &mut Option<Box<dyn stack::TcpApp + Send>>,
    ) -> Option<&mut (dyn stack::TcpApp + 'static)> {
        app.as_deref_mut()
            .map(|a| a as &mut (dyn stack::TcpApp + 'static))
    }

    /// Arms a timer for the stack's next poll (retransmissions, delayed ACKs).
    fn arm_poll(&mut self, now_ns: u64) {
        let app = self
            .app
            .as_deref()
            .map(|a| a as &(dyn stack::TcpApp + 'static));
        if let Some(delay) = self.peer.next_poll_ns_with(now_ns, app) {
            let at = now_ns.saturating_add(delay.max(1_000));
            if self
                .poll_armed
                .is_none_or(|armed| at < armed || armed <= now_ns)
            {
                self.poll_armed = Some(at);
                self.timers.push((at - now_ns, POLL_STACK));
            }
        }
    }

    fn capture(&mut self, ns: u64, frame: &[u8]) {
        if let Some(p) = self.pcap.as_mut() {
            // A capture that cannot be written must not change the guest's run.
            let _ = p.record(ns, frame);
        }
    }

    /// Puts a frame on the link after the faults in force had their say at its entry: they
    /// may drop it, or send extra copies (each copy, then the frame, crosses the link on
    /// its own).
    fn fault_send(&mut self, flight: Flight) {
        let Some(copies) = self.fault_entry(matches!(flight, Flight::ToGuest(_))) else {
            return;
        };
        for _ in 0..copies {
            self.send(flight.clone());
        }
        self.send(flight);
    }

    /// Puts a frame on the link: it may be lost or duplicated, and arrives after the
    /// link's latency plus jitter (so frames can overtake each other), plus the extra delay
    /// of the faults in force.
    fn send(&mut self, flight: Flight) {
        let l = self.link;
        // One draw each for loss, duplication and both delays, always: changing a rate does
        // not shift the rest of the stream.
        let lost = self.stream.chance(l.loss_ppm, 1_000_000);
        let dup = self.stream.chance(l.duplicate_ppm, 1_000_000);
        let delay = l.latency_ns + self.stream.range_inclusive(0, l.jitter_ns);
        let dup_delay = l.latency_ns + self.stream.range_inclusive(0, l.jitter_ns);
        if lost {
            self.stats.lost += 1;
            return;
        }
        if dup {
            self.stats.duplicated += 1;
            let extra = self.faults.extra_delay();
            let t = self.next_token;
            self.next_token += 1;
            self.in_flight.insert(t, flight.clone());
            self.timers.push((dup_delay.saturating_add(extra), t));
        }
        let extra = self.faults.extra_delay();
        let t = self.next_token;
        self.next_token += 1;
        self.in_flight.insert(t, flight);
        self.timers.push((delay.saturating_add(extra), t));
    }

    /// The peer sends `frames` at `now_ns`: captured, then put on the link.
    fn peer_sends(&mut self, frames: Vec<Vec<u8>>, now_ns: u64) {
        for f in frames {
            self.capture(now_ns, &f);
            self.fault_send(Flight::ToGuest(f));
        }
        self.arm_poll(now_ns);
    }

    /// A frame on the link arrives at `now_ns` (unless a partition in force drops it): at
    /// the peer, which may reply, or in the guest's inbox.
    fn land(&mut self, flight: Flight, now_ns: u64) {
        if self.fault_cuts(matches!(flight, Flight::ToGuest(_))) {
            return;
        }
        match flight {
            Flight::ToPeer(frame) => {
                let replies = self
                    .peer
                    .receive_with(&frame, now_ns, Net::app(&mut self.app));
                self.peer_sends(replies, now_ns);
            }
            Flight::ToGuest(frame) => {
                if self.inbox.len() < MAX_INBOX {
                    self.inbox.push_back(frame);
                } else {
                    self.stats.rx_overruns += 1;
                }
            }
        }
    }

    /// Fills receive buffers with waiting frames.
    fn deliver(&mut self, mem: &GuestMem) -> Result<Vec<(usize, u16, u32)>, DeviceError> {
        let mut done = Vec::new();
        while !self.inbox.is_empty() {
            let Some(buf) = self.rx_buffers.pop_front() else {
                break;
            };
            let Some(frame) = self.inbox.pop_front() else {
                break;
            };
            let mut data = vec![0u8; NET_HDR_LEN];
            data[10] = 1; // num_buffers
            data.extend_from_slice(&frame);
            let mut written = 0usize;
            for seg in &buf.segments {
                if !seg.write {
                    return Err(DeviceError::BufferDirection {
                        device: DEVICE,
                        chain: "receive chain",
                        head: buf.head,
                        writable: false,
                    });
                }
                if written == data.len() {
                    break;
                }
                let n = (seg.len as usize).min(data.len() - written);
                mem.write_slice(&data[written..written + n], seg.addr)
                    .map_err(|error| DeviceError::GuestMemory {
                        device: DEVICE,
                        buffer: "receive buffer",
                        addr: seg.addr.0,
                        error,
                    })?;
                written += n;
            }
            if written < data.len() {
                // The buffer is too small for the frame: the frame is dropped, the buffer returned empty.
                self.stats.rx_overruns += 1;
                done.push((RX, buf.head, 0));
                continue;
            }
            self.stats.rx_frames += 1;
            done.push((RX, buf.head, written as u32));
        }
        Ok(done)
    }
}

impl Net {
    /// The device's state for a snapshot: everything that shapes what it does next.
    pub(crate) fn save_state(&self) -> Result<NetState, DeviceError> {
        if self.app.is_some() {
            return Err(DeviceError::ServingApp);
        }
        let (peer_seed, history) = self.peer.history().ok_or(DeviceError::HistoryOverflow {
            max: stack::MAX_HISTORY,
        })?;
        Ok(NetState {
            stream: self.stream.save(),
            peer_seed,
            peer_history: history.to_vec(),
            poll_armed: self.poll_armed,
            rx_buffers: self.rx_buffers.iter().cloned().collect(),
            inbox: self.inbox.iter().cloned().collect(),
            in_flight: self
                .in_flight
                .iter()
                .map(|(k, v)| (*k, v.clone()))
                .collect(),
            next_token: self.next_token,
            timers: self.timers.clone(),
            stats: self.stats.clone(),
            port: self.port.as_ref().map(|p| p.iter().cloned().collect()),
            faults: self.faults.save(),
            mac: self.mac,
        })
    }

    /// Loads a state saved by [`Self::save_state`] from a device built with the same
    /// configuration; with `reseed`, its random streams are re-keyed from that seed. The
    /// checks come before any change: on an error the device is as it was.
    pub(crate) fn load_state(
        &mut self,
        s: &NetState,
        reseed: Option<RunSeed>,
    ) -> Result<(), DeviceError> {
        for (what, len, max) in [
            (
                "peer history calls",
                s.peer_history.len(),
                stack::MAX_HISTORY,
            ),
            ("waiting frames", s.inbox.len(), MAX_INBOX),
            (
                "outgoing frames",
                s.port.as_ref().map_or(0, Vec::len),
                MAX_OUTBOX,
            ),
            (
                "receive buffers",
                s.rx_buffers.len(),
                usize::from(QUEUE_SIZE),
            ),
        ] {
            if len > max {
                return Err(DeviceError::StateLimit {
                    device: DEVICE,
                    what,
                    len,
                    max,
                });
            }
        }
        self.stream = Stream::resume(&s.stream, reseed);
        // The peer's own randomness (TCP sequence numbers) is replayed with its original
        // seed: smoltcp cannot be re-keyed, so after a re-seeded restore only the link's
        // draws and everything downstream of them change.
        self.peer = Stack::replay(s.peer_seed, s.peer_history.clone());
        self.poll_armed = s.poll_armed;
        self.rx_buffers = s.rx_buffers.iter().cloned().collect();
        self.inbox = s.inbox.iter().cloned().collect();
        self.in_flight = s.in_flight.iter().cloned().collect();
        self.next_token = s.next_token;
        self.timers = s.timers.clone();
        self.stats = s.stats.clone();
        self.port = s.port.as_ref().map(|p| p.iter().cloned().collect());
        self.mac = s.mac;
        self.faults = Faults::resume(&s.faults, reseed);
        Ok(())
    }
}

impl VirtioDevice for Net {
    /// The guest reset the device (or the machine lost power): the receive buffers it had
    /// posted belong to queues that no longer exist, and frames waiting for them are
    /// dropped with them. The link and the peer go on.
    fn reset(&mut self) {
        self.rx_buffers.clear();
        self.inbox.clear();
    }

    fn device_type(&self) -> u32 {
        DEVICE_ID
    }

    fn queue_max_sizes(&self) -> &[u16] {
        &[QUEUE_SIZE, QUEUE_SIZE]
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }

    fn features(&self) -> u64 {
        VIRTIO_F_VERSION_1 | VIRTIO_NET_F_MAC
    }

    fn read_config(&self, offset: u64, data: &mut [u8]) {
        // Config space: the MAC address; the rest reads as zero.
        crate::device::read_config_bytes(&self.mac, offset, data);
    }

    fn submit(
        &mut self,
        queue: usize,
        q: &mut Queue,
        mem: &GuestMem,
    ) -> Result<Vec<Pending>, DeviceError> {
        let requests = take_requests(q, mem)?;
        if queue == RX {
            self.rx_buffers.extend(requests);
            if !self.inbox.is_empty() {
                self.timers.push((0, DELIVER_NOW));
            }
            return Ok(Vec::new());
        }
        // Transmit: the device takes each frame off the ring after a short, seeded service time.
        Ok(crate::device::with_service_time(requests, &mut self.stream))
    }

    fn complete(
        &mut self,
        queue: usize,
        request: &Request,
        mem: &GuestMem,
        now_ns: u64,
    ) -> Result<u32, DeviceError> {
        if queue != TX {
            return Err(DeviceError::NetReceiveCompletion);
        }
        let mut bytes = Vec::new();
        for seg in &request.segments {
            if seg.write {
                return Err(DeviceError::BufferDirection {
                    device: DEVICE,
                    chain: "transmit chain",
                    head: request.head,
                    writable: true,
                });
            }
            if bytes.len() + seg.len as usize > MAX_FRAME + NET_HDR_LEN {
                return Err(DeviceError::FrameTooLarge {
                    head: request.head,
                    max: MAX_FRAME,
                });
            }
            let mut b = vec![0u8; seg.len as usize];
            mem.read_slice(&mut b, seg.addr)
                .map_err(|error| DeviceError::GuestMemory {
                    device: DEVICE,
                    buffer: "transmit buffer",
                    addr: seg.addr.0,
                    error,
                })?;
            bytes.extend_from_slice(&b);
        }
        if bytes.len() < NET_HDR_LEN + 14 {
            return Err(DeviceError::NoFrame { head: request.head });
        }
        let frame = bytes.split_off(NET_HDR_LEN);
        self.stats.tx_frames += 1;
        self.capture(now_ns, &frame);
        if self.port.is_none() {
            self.fault_send(Flight::ToPeer(frame));
            return Ok(0);
        }
        let Some(copies) = self.fault_entry(false) else {
            return Ok(0);
        };
        for _ in 0..copies {
            self.push_outbox(frame.clone(), now_ns);
        }
        self.push_outbox(frame, now_ns);
        Ok(0)
    }

    fn take_timers(&mut self) -> Vec<(u64, u64)> {
        std::mem::take(&mut self.timers)
    }

    fn timer(
        &mut self,
        token: u64,
        mem: &GuestMem,
        now_ns: u64,
    ) -> Result<Vec<(usize, u16, u32)>, DeviceError> {
        if token == POLL_STACK {
            if self.poll_armed.is_some_and(|at| at <= now_ns) {
                self.poll_armed = None;
            }
            let frames = self.peer.poll_with(now_ns, Net::app(&mut self.app));
            self.peer_sends(frames, now_ns);
        } else {
            if let Some(flight) = self.in_flight.remove(&token) {
                self.land(flight, now_ns);
            }
        }
        self.deliver(mem)
    }
}

impl Drop for Net {
    fn drop(&mut self) {
        if let Some(p) = self.pcap.as_mut() {
            let _ = p.flush();
        }
    }
}

#[cfg(test)]
mod tests;
