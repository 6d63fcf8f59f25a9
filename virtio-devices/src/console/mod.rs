//! virtio-console with named ports (VIRTIO_CONSOLE_F_MULTIPORT): the channel between
//! programs in the guest and wio, driven by Linux's own `virtio_console` driver (no module
//! of ours). Two ports, neither a console:
//!
//! - `wio.sdk` (port 0): the guest writes JSON lines (promises, lifecycle events); the
//!   device cuts them into lines for the machine ([`Console::take_lines`]). It does not
//!   read them: what they mean is the machine's business.
//! - `wio.random` (port 1): every write of n bytes is a request for n random bytes, which
//!   the device answers from its own stream (`name/bytes`), so a program's randomness is
//!   a function of the seed.
//!
//! - `wio.composer` (port 2, only in a console built [`Console::with_composer`]): the test
//!   composer's line protocol, both ways. The guest's agent writes lines (what it found,
//!   what started, how it ended), cut as on `wio.sdk` ([`Console::take_composer_lines`]);
//!   the machine sends it lines ([`Console::send_composer`]), handed to the guest's
//!   receive buffers as they come. The device reads neither.
//!
//! In the guest the ports are `/dev/vportNp0` and `/dev/vportNp1`, named in
//! `/sys/class/virtio-ports/vportNpM/name`. Everything is bounded: a line longer than
//! [`MAX_LINE`] is dropped (counted), lines the machine has not taken yet beyond
//! [`MAX_PENDING_LINES`] are dropped (counted), random bytes owed beyond
//! [`MAX_RANDOM_OWED`] are refused (counted). A hostile guest costs a fixed amount of host
//! memory and shows up in the counters, never as a host error.

use crate::device::{take_requests, DeviceError, GuestMem, Pending, Request, VirtioDevice};
use crate::VIRTIO_F_VERSION_1;
use std::collections::VecDeque;
use virtio_queue::Queue;
use vm_memory::Bytes;
use wio_scheduler::{stream_names, RunSeed, Stream};

/// virtio device ID of the console.
pub const DEVICE_ID: u32 = 3;
/// The device's name in errors.
pub(crate) const DEVICE: &str = "virtio-console";
/// Feature bit: named ports and a control queue pair.
pub const F_MULTIPORT: u64 = 1 << 1;
/// Queue size offered.
pub const QUEUE_SIZE: u16 = 64;
/// The ports, by id.
pub const PORT_NAMES: [&str; 3] = ["wio.sdk", "wio.random", "wio.composer"];
/// The JSON-lines port.
pub const SDK_PORT: usize = 0;
/// The random-bytes port.
pub const RANDOM_PORT: usize = 1;
/// The test composer's port (only in a console built [`Console::with_composer`]).
pub const COMPOSER_PORT: usize = 2;
/// Most bytes the machine may have sent on `wio.composer` that the guest has not taken.
pub const MAX_COMPOSER_OWED: usize = 64 * 1024;
/// Longest line kept, in bytes (without its newline).
pub const MAX_LINE: usize = 64 * 1024;
/// Most complete lines waiting for the machine.
pub const MAX_PENDING_LINES: usize = 4096;
/// Most random bytes owed to the guest at once.
pub const MAX_RANDOM_OWED: usize = 64 * 1024;
/// Most control messages waiting for a guest buffer.
const MAX_CONTROL: usize = 64;

/// Control message events (virtio spec, console device).
mod event {
    pub const DEVICE_READY: u16 = 0;
    pub const DEVICE_ADD: u16 = 1;
    pub const PORT_READY: u16 = 3;
    pub const PORT_OPEN: u16 = 6;
    pub const PORT_NAME: u16 = 7;
}

/// Queue indices with multiport: port 0 receive/transmit, control receive/transmit, then
/// port 1 receive/transmit.
const CONTROL_RX: usize = 2;
const CONTROL_TX: usize = 3;

fn port_rx(port: usize) -> usize {
    if port == 0 {
        0
    } else {
        2 + 2 * port
    }
}

/// Which of `ports` ports' receive queue `queue` is, if it is one.
fn rx_port(queue: usize, ports: usize) -> Option<usize> {
    (0..ports).find(|p| port_rx(*p) == queue)
}

/// Which of `ports` ports' transmit queue `queue` is, if it is one.
fn tx_port(queue: usize, ports: usize) -> Option<usize> {
    (0..ports).find(|p| port_rx(*p) + 1 == queue)
}

/// Cuts `bytes` written at `now_ns` into lines: `partial` is the line being written,
/// `overlong` says it is being dropped up to its newline; complete lines go to `lines`
/// (at most [`MAX_PENDING_LINES`]). Returns (overlong lines, dropped lines).
fn cut_lines(
    bytes: &[u8],
    now_ns: u64,
    partial: &mut Vec<u8>,
    overlong: &mut bool,
    lines: &mut VecDeque<Line>,
) -> (u64, u64) {
    let (mut long, mut dropped) = (0, 0);
    for chunk in bytes.split_inclusive(|b| *b == b'\n') {
        let (body, ends) = match chunk.split_last() {
            Some((b'\n', body)) => (body, true),
            _ => (chunk, false),
        };
        if !*overlong {
            if partial.len() + body.len() > MAX_LINE {
                *overlong = true;
                partial.clear();
            } else {
                partial.extend_from_slice(body);
            }
        }
        if ends {
            if *overlong {
                long += 1;
            } else if lines.len() >= MAX_PENDING_LINES {
                dropped += 1;
            } else if !partial.is_empty() {
                lines.push_back((now_ns, std::mem::take(partial)));
            }
            partial.clear();
            *overlong = false;
        }
    }
    (long, dropped)
}

/// The test composer's port ([`COMPOSER_PORT`]) of a console that has one.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct ComposerPort {
    /// Guest receive buffers, in the order the guest gave them (encoded as a sequence,
    /// as the `Vec` it was before).
    rx: VecDeque<Request>,
    /// Bytes the machine sent, not yet in a guest buffer.
    #[serde(with = "serde_bytes")]
    owed: Vec<u8>,
    /// The line being written by the guest.
    #[serde(with = "serde_bytes")]
    partial: Vec<u8>,
    overlong: bool,
    /// Complete lines for the machine.
    lines: VecDeque<Line>,
    /// Whether a program in the guest has the port open.
    guest_open: bool,
    /// Lines dropped (overlong, or too many waiting), and bytes refused (too many owed).
    pub dropped_lines: u64,
    /// Bytes the machine sent that did not fit ([`MAX_COMPOSER_OWED`]).
    pub refused_bytes: u64,
}

/// Timer token: hand what is owed to the guest's buffers.
const DELIVER: u64 = 1;

/// What the guest did with the channel.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ConsoleStats {
    /// Lines the guest wrote on `wio.sdk` and the machine took.
    pub lines: u64,
    /// Lines longer than [`MAX_LINE`], dropped.
    pub overlong_lines: u64,
    /// Lines dropped because [`MAX_PENDING_LINES`] were waiting.
    pub dropped_lines: u64,
    /// Random requests answered.
    pub random_requests: u64,
    /// Random bytes handed to the guest.
    pub random_bytes: u64,
    /// Random bytes refused (more than [`MAX_RANDOM_OWED`] owed).
    pub random_refused: u64,
    /// Control messages the device did not understand or refused.
    pub bad_control: u64,
}

/// A complete line from `wio.sdk`: the virtual ns its last byte was written, and its bytes.
pub type Line = (u64, Vec<u8>);

/// The console device.
pub struct Console {
    random: Stream,
    latency: Stream,
    /// Guest buffers for control messages to it.
    control_buffers: VecDeque<Request>,
    /// Control messages waiting for a buffer.
    control_out: VecDeque<Vec<u8>>,
    /// Guest receive buffers per port.
    rx_buffers: [VecDeque<Request>; 2],
    /// Random bytes owed on `wio.random`.
    random_owed: VecDeque<u8>,
    /// The line being written on `wio.sdk`.
    partial: Vec<u8>,
    /// The line being written is too long: drop it up to its newline.
    overlong: bool,
    /// Complete lines for the machine.
    lines: VecDeque<Line>,
    /// Whether a program in the guest has each port open.
    guest_open: [bool; 2],
    timers: Vec<(u64, u64)>,
    deliver_armed: bool,
    /// Counters.
    pub stats: ConsoleStats,
    /// The test composer's port, when the console has one.
    composer: Option<ComposerPort>,
    /// Control messages from the driver are taken off their ring at the notification
    /// itself, not after a seeded service time (see [`Console::answer_control_at_kick`]).
    control_at_kick: bool,
}

/// What a snapshot keeps of the console ([`DeviceState::Console`]): its two streams, the
/// guest's buffers per queue, control messages and random bytes owed, the line being
/// written and the lines waiting for the machine, which ports the guest has open, its
/// timers and its counters.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct ConsoleState {
    random: wio_scheduler::SavedStream,
    latency: wio_scheduler::SavedStream,
    control_buffers: Vec<Request>,
    #[serde(with = "crate::codec::byte_lists")]
    control_out: Vec<Vec<u8>>,
    rx_buffers: [Vec<Request>; 2],
    #[serde(with = "serde_bytes")]
    random_owed: Vec<u8>,
    #[serde(with = "serde_bytes")]
    partial: Vec<u8>,
    overlong: bool,
    lines: Vec<Line>,
    guest_open: [bool; 2],
    timers: Vec<(u64, u64)>,
    deliver_armed: bool,
    stats: ConsoleStats,
}

fn control(id: u32, event: u16, value: u16, extra: &[u8]) -> Vec<u8> {
    let mut m = Vec::with_capacity(8 + extra.len());
    m.extend_from_slice(&id.to_le_bytes());
    m.extend_from_slice(&event.to_le_bytes());
    m.extend_from_slice(&value.to_le_bytes());
    m.extend_from_slice(extra);
    m
}

impl Console {
    /// A console whose streams are split from `seed` under `name`: `name/bytes` (what
    /// `wio.random` hands out) and `name/latency` (transmit service times).
    pub fn new(seed: RunSeed, name: &str) -> Console {
        Console {
            random: seed.stream(&stream_names::sub(name, stream_names::BYTES)),
            latency: seed.stream(&stream_names::sub(name, stream_names::LATENCY)),
            control_buffers: VecDeque::new(),
            control_out: VecDeque::new(),
            rx_buffers: [VecDeque::new(), VecDeque::new()],
            random_owed: VecDeque::new(),
            partial: Vec::new(),
            overlong: false,
            lines: VecDeque::new(),
            guest_open: [false; 2],
            timers: Vec::new(),
            deliver_armed: false,
            stats: ConsoleStats::default(),
            composer: None,
            control_at_kick: false,
        }
    }

    /// From now on the driver's control messages (port ready, port open, ...) are taken
    /// off their ring at the notification that offered them, drawing no service time.
    /// For machines whose CPU runs between exits (x86-64 on KVM): Linux's driver spins
    /// without an exit until the device has used a control message, so virtual time, which
    /// moves only at exits there, would never reach a delayed completion. A configuration
    /// of the machine, not state: whoever builds the device sets it, restores included.
    pub fn answer_control_at_kick(&mut self) {
        self.control_at_kick = true;
    }

    /// [`Console::new`] with a third port, `wio.composer` (the test composer's channel).
    pub fn with_composer(seed: RunSeed, name: &str) -> Console {
        Console {
            composer: Some(ComposerPort::default()),
            ..Console::new(seed, name)
        }
    }

    /// How many ports the guest sees.
    fn ports(&self) -> usize {
        if self.composer.is_some() {
            3
        } else {
            2
        }
    }

    /// Whether the console has the `wio.composer` port.
    pub fn has_composer(&self) -> bool {
        self.composer.is_some()
    }

    /// The lines the guest wrote on `wio.composer` since the last call, in order (none
    /// without the port).
    pub fn take_composer_lines(&mut self) -> Vec<Line> {
        self.composer
            .as_mut()
            .map_or_else(Vec::new, |c| c.lines.drain(..).collect())
    }

    /// Sends `bytes` to the guest on `wio.composer`: they fill its receive buffers as the
    /// guest posts them. Returns false, keeping none of them, when the port is missing or
    /// more than [`MAX_COMPOSER_OWED`] bytes would wait.
    pub fn send_composer(&mut self, bytes: &[u8]) -> bool {
        let Some(c) = self.composer.as_mut() else {
            return false;
        };
        if c.owed.len() + bytes.len() > MAX_COMPOSER_OWED {
            c.refused_bytes += bytes.len() as u64;
            return false;
        }
        c.owed.extend_from_slice(bytes);
        self.arm();
        true
    }

    /// The lines written on `wio.sdk` since the last call, in order.
    pub fn take_lines(&mut self) -> Vec<Line> {
        let lines: Vec<Line> = self.lines.drain(..).collect();
        self.stats.lines += lines.len() as u64;
        lines
    }

    /// Whether lines are waiting (cheap: the machine asks after every step).
    pub fn has_lines(&self) -> bool {
        !self.lines.is_empty()
    }

    fn send_control(&mut self, message: Vec<u8>) {
        if self.control_out.len() < MAX_CONTROL {
            self.control_out.push_back(message);
        } else {
            self.stats.bad_control += 1;
        }
        self.arm();
    }

    fn arm(&mut self) {
        if !self.deliver_armed {
            self.deliver_armed = true;
            self.timers.push((0, DELIVER));
        }
    }

    /// A control message from the guest's driver.
    fn on_control(&mut self, m: &[u8]) {
        let Some(head) = m.get(..8) else {
            self.stats.bad_control += 1;
            return;
        };
        let id = u32::from_le_bytes([head[0], head[1], head[2], head[3]]);
        let ev = u16::from_le_bytes([head[4], head[5]]);
        let value = u16::from_le_bytes([head[6], head[7]]);
        let port = usize::try_from(id).ok().filter(|p| *p < self.ports());
        match (ev, port) {
            (event::DEVICE_READY, _) if value == 1 => {
                for p in 0..self.ports() as u32 {
                    self.send_control(control(p, event::DEVICE_ADD, 0, &[]));
                }
            }
            (event::PORT_READY, Some(p)) if value == 1 => {
                self.send_control(control(
                    p as u32,
                    event::PORT_NAME,
                    1,
                    PORT_NAMES[p].as_bytes(),
                ));
                // wio is always listening: the host side of every port is open.
                self.send_control(control(p as u32, event::PORT_OPEN, 1, &[]));
            }
            (event::PORT_OPEN, Some(COMPOSER_PORT)) => {
                if let Some(c) = self.composer.as_mut() {
                    c.guest_open = value == 1;
                }
            }
            (event::PORT_OPEN, Some(p)) => self.guest_open[p] = value == 1,
            _ => self.stats.bad_control += 1,
        }
    }

    /// Bytes the guest wrote on `wio.sdk` at `now_ns`.
    fn on_sdk_bytes(&mut self, bytes: &[u8], now_ns: u64) {
        let (long, dropped) = cut_lines(
            bytes,
            now_ns,
            &mut self.partial,
            &mut self.overlong,
            &mut self.lines,
        );
        self.stats.overlong_lines += long;
        self.stats.dropped_lines += dropped;
    }

    /// Bytes the guest wrote on `wio.composer` at `now_ns`.
    fn on_composer_bytes(&mut self, bytes: &[u8], now_ns: u64) {
        if let Some(c) = self.composer.as_mut() {
            let (long, dropped) =
                cut_lines(bytes, now_ns, &mut c.partial, &mut c.overlong, &mut c.lines);
            c.dropped_lines += long + dropped;
        }
    }

    /// A request on `wio.random` for `n` bytes.
    fn on_random_request(&mut self, n: usize) {
        self.stats.random_requests += 1;
        let room = MAX_RANDOM_OWED - self.random_owed.len();
        let give = n.min(room);
        self.stats.random_refused += (n - give) as u64;
        let mut bytes = vec![0u8; give];
        self.random.fill_bytes(&mut bytes);
        self.random_owed.extend(bytes);
        self.arm();
    }

    /// Fills waiting guest buffers with what is owed: control messages (one per buffer)
    /// and random bytes. Returns the completions (queue, head, bytes written).
    fn deliver(&mut self, mem: &GuestMem) -> Result<Vec<(usize, u16, u32)>, DeviceError> {
        let mut done = Vec::new();
        while !self.control_out.is_empty() {
            let Some(buf) = self.control_buffers.pop_front() else {
                break;
            };
            let m = self.control_out.pop_front().unwrap_or_default();
            let n = write_into(&buf, &m, mem)?;
            done.push((CONTROL_RX, buf.head, n));
        }
        while !self.random_owed.is_empty() {
            let Some(buf) = self.rx_buffers[RANDOM_PORT].pop_front() else {
                break;
            };
            let room: usize = buf.segments.iter().map(|s| s.len as usize).sum();
            let take = room.min(self.random_owed.len());
            let bytes: Vec<u8> = self.random_owed.drain(..take).collect();
            let n = write_into(&buf, &bytes, mem)?;
            self.stats.random_bytes += u64::from(n);
            done.push((port_rx(RANDOM_PORT), buf.head, n));
        }
        if let Some(c) = self.composer.as_mut() {
            while !c.owed.is_empty() {
                let Some(buf) = c.rx.pop_front() else { break };
                let room: usize = buf.segments.iter().map(|s| s.len as usize).sum();
                let take = room.min(c.owed.len());
                let n = write_into(&buf, &c.owed[..take], mem)?;
                c.owed.drain(..n as usize);
                done.push((port_rx(COMPOSER_PORT), buf.head, n));
            }
        }
        Ok(done)
    }

    /// Reads a transmit chain's bytes (at most `cap`).
    fn read_chain(request: &Request, mem: &GuestMem, cap: usize) -> Result<Vec<u8>, DeviceError> {
        let mut out = Vec::new();
        for seg in &request.segments {
            if seg.write {
                return Err(DeviceError::BufferDirection {
                    device: DEVICE,
                    chain: "transmit chain",
                    head: request.head,
                    writable: true,
                });
            }
            let n = (seg.len as usize).min(cap.saturating_sub(out.len()));
            let mut b = vec![0u8; n];
            mem.read_slice(&mut b, seg.addr)
                .map_err(|error| DeviceError::GuestMemory {
                    device: DEVICE,
                    buffer: "transmit buffer",
                    addr: seg.addr.0,
                    error,
                })?;
            out.extend_from_slice(&b);
        }
        Ok(out)
    }
}

/// Writes `bytes` into a receive chain's writable buffers, in order; returns how many fit.
fn write_into(buf: &Request, bytes: &[u8], mem: &GuestMem) -> Result<u32, DeviceError> {
    let mut done = 0usize;
    for seg in &buf.segments {
        if done == bytes.len() {
            break;
        }
        if !seg.write {
            return Err(DeviceError::BufferDirection {
                device: DEVICE,
                chain: "receive chain",
                head: buf.head,
                writable: false,
            });
        }
        let n = (seg.len as usize).min(bytes.len() - done);
        mem.write_slice(&bytes[done..done + n], seg.addr)
            .map_err(|error| DeviceError::GuestMemory {
                device: DEVICE,
                buffer: "receive buffer",
                addr: seg.addr.0,
                error,
            })?;
        done += n;
    }
    Ok(done as u32)
}

impl Console {
    /// The device's state for a snapshot: everything that shapes what it does next.
    pub(crate) fn save_state(&self) -> Result<ConsoleState, DeviceError> {
        Ok(ConsoleState {
            random: self.random.save(),
            latency: self.latency.save(),
            control_buffers: self.control_buffers.iter().cloned().collect(),
            control_out: self.control_out.iter().cloned().collect(),
            rx_buffers: [
                self.rx_buffers[0].iter().cloned().collect(),
                self.rx_buffers[1].iter().cloned().collect(),
            ],
            random_owed: self.random_owed.iter().copied().collect(),
            partial: self.partial.clone(),
            overlong: self.overlong,
            lines: self.lines.iter().cloned().collect(),
            guest_open: self.guest_open,
            timers: self.timers.clone(),
            deliver_armed: self.deliver_armed,
            stats: self.stats.clone(),
        })
    }

    /// The `wio.composer` port's state for a snapshot (None without the port).
    pub(crate) fn save_composer(&self) -> Option<ComposerPort> {
        self.composer.clone()
    }

    /// Loads a state saved by [`Self::save_state`] from a device built with the same
    /// configuration; with `reseed`, its random streams are re-keyed from that seed. The
    /// checks come before any change: on an error the device is as it was.
    pub(crate) fn load_state(
        &mut self,
        s: &ConsoleState,
        composer: Option<&ComposerPort>,
        reseed: Option<RunSeed>,
    ) -> Result<(), DeviceError> {
        if composer.is_some() != self.composer.is_some()
            || composer.is_some_and(|c| {
                c.owed.len() > MAX_COMPOSER_OWED
                    || c.lines.len() > MAX_PENDING_LINES
                    || c.partial.len() > MAX_LINE
            })
            || s.control_out.len() > MAX_CONTROL
            || s.lines.len() > MAX_PENDING_LINES
            || s.random_owed.len() > MAX_RANDOM_OWED
            || s.partial.len() > MAX_LINE
        {
            return Err(DeviceError::StateBounds { device: DEVICE });
        }
        self.random = Stream::resume(&s.random, reseed);
        self.latency = Stream::resume(&s.latency, reseed);
        self.control_buffers = s.control_buffers.iter().cloned().collect();
        self.control_out = s.control_out.iter().cloned().collect();
        let [a, b] = &s.rx_buffers;
        self.rx_buffers = [a.iter().cloned().collect(), b.iter().cloned().collect()];
        self.random_owed = s.random_owed.iter().copied().collect();
        self.partial = s.partial.clone();
        self.overlong = s.overlong;
        self.lines = s.lines.iter().cloned().collect();
        self.guest_open = s.guest_open;
        self.timers = s.timers.clone();
        self.deliver_armed = s.deliver_armed;
        self.stats = s.stats.clone();
        self.composer = composer.cloned();
        Ok(())
    }
}

impl VirtioDevice for Console {
    fn device_type(&self) -> u32 {
        DEVICE_ID
    }

    fn queue_max_sizes(&self) -> &[u16] {
        &[QUEUE_SIZE; 8][..2 + 2 * self.ports()]
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }

    fn features(&self) -> u64 {
        VIRTIO_F_VERSION_1 | F_MULTIPORT
    }

    fn read_config(&self, offset: u64, data: &mut [u8]) {
        // cols (u16), rows (u16), max_nr_ports (u32), emerg_wr (u32).
        let mut config = [0u8; 12];
        config[4..8].copy_from_slice(&(self.ports() as u32).to_le_bytes());
        crate::device::read_config_bytes(&config, offset, data);
    }

    fn submit(
        &mut self,
        queue: usize,
        q: &mut Queue,
        mem: &GuestMem,
    ) -> Result<Vec<Pending>, DeviceError> {
        let requests = take_requests(q, mem)?;
        if queue == CONTROL_RX {
            self.control_buffers.extend(requests);
            if !self.control_out.is_empty() {
                self.arm();
            }
            return Ok(Vec::new());
        }
        if let Some(port) = rx_port(queue, self.ports()) {
            if let (COMPOSER_PORT, Some(c)) = (port, self.composer.as_mut()) {
                c.rx.extend(requests);
                let owed = !c.owed.is_empty();
                if owed {
                    self.arm();
                }
                return Ok(Vec::new());
            }
            self.rx_buffers[port].extend(requests);
            if port == RANDOM_PORT && !self.random_owed.is_empty() {
                self.arm();
            }
            return Ok(Vec::new());
        }
        if queue == CONTROL_TX && self.control_at_kick {
            return Ok(requests
                .into_iter()
                .map(|request| Pending {
                    delay_ns: 0,
                    request,
                })
                .collect());
        }
        // Transmit queues: each chain is taken off the ring after a short, seeded time.
        Ok(crate::device::with_service_time(
            requests,
            &mut self.latency,
        ))
    }

    fn complete(
        &mut self,
        queue: usize,
        request: &Request,
        mem: &GuestMem,
        now_ns: u64,
    ) -> Result<u32, DeviceError> {
        if queue == CONTROL_TX {
            let m = Self::read_chain(request, mem, 4096)?;
            self.on_control(&m);
            return Ok(0);
        }
        match tx_port(queue, self.ports()) {
            Some(COMPOSER_PORT) => {
                let bytes = Self::read_chain(request, mem, MAX_LINE + 1)?;
                self.on_composer_bytes(&bytes, now_ns);
                Ok(0)
            }
            Some(SDK_PORT) => {
                // Read at most a line and a bit per chain: longer chains are overlong lines.
                let bytes = Self::read_chain(request, mem, MAX_LINE + 1)?;
                self.on_sdk_bytes(&bytes, now_ns);
                Ok(0)
            }
            Some(_) => {
                let n: usize = request.segments.iter().map(|s| s.len as usize).sum();
                self.on_random_request(n);
                Ok(0)
            }
            None => Err(DeviceError::ConsoleReceiveCompletion { queue }),
        }
    }

    fn take_timers(&mut self) -> Vec<(u64, u64)> {
        std::mem::take(&mut self.timers)
    }

    fn timer(
        &mut self,
        token: u64,
        mem: &GuestMem,
        _now_ns: u64,
    ) -> Result<Vec<(usize, u16, u32)>, DeviceError> {
        if token == DELIVER {
            self.deliver_armed = false;
        }
        self.deliver(mem)
    }

    /// The guest reset the device (or the machine lost power): its buffers and what was
    /// owed go; lines already complete stay for the machine to take.
    fn reset(&mut self) {
        self.control_buffers.clear();
        self.control_out.clear();
        self.rx_buffers = [VecDeque::new(), VecDeque::new()];
        self.random_owed.clear();
        self.partial.clear();
        self.overlong = false;
        self.guest_open = [false; 2];
        if let Some(c) = self.composer.as_mut() {
            c.rx.clear();
            c.owed.clear();
            c.partial.clear();
            c.overlong = false;
            c.guest_open = false;
        }
    }
}

#[cfg(test)]
mod tests;
