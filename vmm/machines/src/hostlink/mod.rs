//! The host link (`wio sim --net host --allow ...`, `wio run --net host ...`): the peer
//! (a world's, or a single machine's network peer) forwards the guests' TCP connections to
//! allowed host addresses, and records what comes back on a tape (`--record`); a replay
//! (`--replay TAPE`) answers from the tape without the host, so the recorded run comes back
//! bit for bit.
//!
//! A guest reaches an allowed `NAME=ADDR:PORT` at the peer's port PORT (in a world, as
//! `NAME:PORT`: NAME is in every guest's `/etc/hosts` with the peer's address; the default
//! name is `host`). Any other port of
//! the peer refuses the connection (a reset answers its SYN), and the attempt is counted and
//! traced; addresses outside the world's network are unreachable (the guests have no
//! route out).
//!
//! Determinism: a live link is not deterministic (the host answers when it answers), and
//! the summary says so. What the host sent reaches the guests only in the service's calls
//! (the peer's polls, every [`POLL_NS`] of virtual time while a host connection is open,
//! and its frame arrivals), each numbered; the tape records each answer with its call's
//! number, and a replay delivers it in that call. A replay checks what the guests send
//! against the tape, and stops at the first difference, naming it.
//!
//! A replay whose world also has a simulated dependency of an allowed destination's name
//! and port (`[[dependency]]`, which a recording's live host stands in for) does not stop
//! where the guests leave the tape: from there on that dependency answers them (every
//! host connection then open is handed to it with what its guest sent since the host last
//! answered), and the summary says where the run left its tape. So a branch explored from
//! a recorded snapshot goes on past the recording.

pub mod shared;
pub mod tape;

pub use shared::SharedLink;

use crate::error::{Result, WioError};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::time::Duration;
use tape::{describe, tape_request, untimed, Event, Tape};
use wio_virtio_devices::net::stack::{AppAction, TcpApp};

/// How often the link looks at the host while a connection is open, virtual ns.
pub const POLL_NS: u64 = 1_000_000;
/// How long a live link waits for a host connection, wall time.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// Most bytes of a host answer taken in one call (and one tape line).
const PIECE: usize = 64 * 1024;

/// A guest's end of a connection: its IPv4 address and port.
type Endpoint = ([u8; 4], u16);

/// One allowed destination.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allow {
    /// Its host name in the guests.
    pub name: String,
    /// The host address the peer connects to.
    pub addr: SocketAddr,
}

impl Allow {
    /// Parses `[NAME=]ADDR:PORT` (`--allow`).
    pub fn parse(s: &str) -> std::result::Result<Allow, String> {
        let (name, addr) = match s.split_once('=') {
            Some((n, a)) => (n, a),
            None => ("host", s),
        };
        let ok_name = !name.is_empty()
            && name.len() <= 32
            && name.as_bytes()[0].is_ascii_alphabetic()
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
        if !ok_name {
            return Err(format!("--allow {s:?}: {name:?} is not a host name (a letter, then letters, digits or '-')"));
        }
        let addr: SocketAddr = addr.parse().map_err(|_| {
            format!("--allow {s:?}: {addr:?} is not ADDR:PORT (an IP address and a port, e.g. 127.0.0.1:8080)")
        })?;
        if addr.port() == 0 || addr.port() == wio_virtio_devices::net::stack::ECHO_PORT {
            return Err(format!(
                "--allow {s:?}: port {} is not free on the peer (0 and 7 are not)",
                addr.port()
            ));
        }
        Ok(Allow {
            name: name.to_string(),
            addr,
        })
    }

    /// As given.
    pub fn text(&self) -> String {
        format!("{}={}", self.name, self.addr)
    }
}

/// Where the host's answers come from.
pub enum Mode {
    /// The host, live; recorded when a tape writer is given.
    Live(Option<tape::Writer>),
    /// A tape.
    Replay(Tape),
}

/// What the link did.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct HostStats {
    /// "live", "recording" or "replay".
    pub mode: String,
    /// Connections made to allowed destinations.
    pub connections: u64,
    /// Connections to allowed destinations the host refused.
    pub host_refused: u64,
    /// Connection attempts to a port of the peer nothing serves (refused).
    pub refused: u64,
    /// Bytes the guests sent to the host.
    pub bytes_out: u64,
    /// Bytes the host sent to the guests.
    pub bytes_in: u64,
    /// Tape events recorded or replayed.
    pub tape_events: u64,
    /// DNS queries the peer answered for the run's names.
    #[serde(default)]
    pub dns_answered: u64,
    /// DNS queries for other names (NXDOMAIN) or that could not be read.
    #[serde(default)]
    pub dns_refused: u64,
    /// Where a replay left its tape, when simulated dependencies answered from there on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub left_tape: Option<String>,
}

impl HostStats {
    /// The DNS queries of the peer whose stack counted `peer` (the link itself sees none).
    pub fn count_dns(&mut self, peer: &wio_virtio_devices::net::stack::StackStats) {
        self.dns_answered = peer.dns_answered;
        self.dns_refused = peer.dns_refused;
    }

    /// Its lines in a run's summary.
    pub fn human(&self) -> String {
        let mut s = format!(
            "host link     {}: {} connections ({} refused by the host), {} bytes out, {} in; {} refused attempts to other ports; {} tape events; DNS {} answered, {} refused\n",
            self.mode, self.connections, self.host_refused, self.bytes_out, self.bytes_in, self.refused, self.tape_events, self.dns_answered, self.dns_refused
        );
        if let Some(at) = &self.left_tape {
            s.push_str(&format!("left tape     {at}; the simulated dependency standing in for the host answered from there\n"));
        }
        if self.mode == "live" {
            s.push_str("warning       a live host link is not deterministic: this run depends on the host's answers and their timing (record it with --record TAPE)\n");
        }
        s
    }
}

struct Conn {
    stream: Option<TcpStream>,
    /// Whether the guest sent bytes since the host last answered (a live link then waits).
    awaiting: bool,
    /// The peer's port the guest connected to, and the guest's end.
    port: u16,
    from: Endpoint,
    /// A replay's bytes the guest sent since the host last answered (what a divergence
    /// names, and what a simulated dependency taking the connection over is handed).
    unanswered: Vec<u8>,
}

/// A host connection a simulated dependency takes over where a replay leaves its tape:
/// its number, the peer's port, the guest's end and what the guest sent since the host
/// last answered.
pub type Handover = (u64, u16, Endpoint, Vec<u8>);

/// The host link, as a service of the peer.
pub struct HostLink {
    allow: Vec<Allow>,
    /// The run's seed and configuration hash (a tape's head).
    seed: u64,
    config: String,
    mode: Mode,
    /// Host connections made at a guest's SYN (by the guest's address and port, and the
    /// port it asked for), waiting for the guest's connection to open: whether the host
    /// accepted it, and (live) the host's connection.
    made: BTreeMap<(Endpoint, u16), (bool, Option<TcpStream>)>,
    conns: BTreeMap<u64, Conn>,
    calls: u64,
    last_due: u64,
    cursor: usize,
    /// How much of the send at `cursor` the guests sent so far (a replay's sends are
    /// matched as a byte stream).
    sent_within: usize,
    out: Vec<AppAction>,
    /// A recording's write error, or where a replay left its tape: the first one.
    failure: Option<WioError>,
    /// Refused attempts (virtual ns, port) not yet traced.
    refused: Vec<(u64, u16)>,
    /// Whether simulated dependencies answer where a replay leaves its tape (instead of
    /// the run stopping there).
    fallback: bool,
    /// Whether the replay left its tape (its dependencies answer from then on).
    off_tape: bool,
    /// The connections handed to the dependencies when it left, not yet taken.
    handover: Option<Vec<Handover>>,
    /// A recording's events so far (a world snapshot keeps them).
    recorded: Vec<Event>,
    stats: HostStats,
}

/// What a world snapshot keeps of a recorded or replayed host link: its allow list and
/// its tape (a recording's events so far; a replay's whole tape). Restored, the link
/// replays it: the peer's history, replayed into it, brings it to the snapshot's point.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct HostState {
    /// The allow list, as given.
    pub allow: Vec<String>,
    /// The tape's head.
    pub seed: u64,
    /// The configuration's hash.
    pub config: String,
    /// The tape's events, one JSON line each (the events are internally tagged, which the
    /// snapshot's postcard cannot carry).
    pub events: Vec<String>,
}

impl HostLink {
    /// A link to `allow` in `mode`, for a run of `seed` whose configuration hashes to
    /// `config`.
    pub fn new(allow: Vec<Allow>, mode: Mode, seed: u64, config: String) -> HostLink {
        let stats = HostStats {
            mode: match &mode {
                Mode::Live(None) => "live",
                Mode::Live(Some(_)) => "recording",
                Mode::Replay(_) => "replay",
            }
            .into(),
            ..HostStats::default()
        };
        HostLink {
            allow,
            seed,
            config,
            mode,
            made: BTreeMap::new(),
            conns: BTreeMap::new(),
            calls: 0,
            last_due: 0,
            cursor: 0,
            sent_within: 0,
            out: Vec::new(),
            failure: None,
            refused: Vec::new(),
            fallback: false,
            off_tape: false,
            handover: None,
            recorded: Vec::new(),
            stats,
        }
    }

    /// Its state for a world snapshot (None: a live link without a tape).
    pub fn save(&self) -> Option<HostState> {
        let events: &[Event] = match &self.mode {
            Mode::Live(None) => return None,
            Mode::Live(Some(_)) => &self.recorded,
            Mode::Replay(t) => &t.events,
        };
        Some(HostState {
            allow: self.allow.iter().map(Allow::text).collect(),
            seed: self.seed,
            config: self.config.clone(),
            events: events
                .iter()
                .map(|e| serde_json::to_string(e).unwrap_or_default())
                .collect(),
        })
    }

    /// A link replaying what a world snapshot kept (its history not yet replayed into it).
    pub fn resume(s: &HostState) -> Result<HostLink> {
        let bad = |reason: String| WioError::ArtifactFormat {
            what: "world snapshot's host link",
            path: std::path::PathBuf::new(),
            reason,
        };
        let allow = allow_list(&s.allow).map_err(bad)?;
        let events = s
            .events
            .iter()
            .map(|e| serde_json::from_str(e).map_err(|e| bad(format!("an event is not one ({e})"))))
            .collect::<Result<Vec<Event>>>()?;
        let tape = Tape {
            path: std::path::PathBuf::from("(the snapshot's tape)"),
            head: tape::Head {
                wio_tape: tape::FORMAT,
                seed: s.seed,
                config: s.config.clone(),
                allow: s.allow.clone(),
            },
            events,
        };
        Ok(HostLink::new(
            allow,
            Mode::Replay(tape),
            s.seed,
            s.config.clone(),
        ))
    }

    /// What it did so far.
    pub fn stats(&self) -> &HostStats {
        &self.stats
    }

    /// Refused attempts since the last call (virtual ns, port), for the world's trace.
    pub fn take_refused(&mut self) -> Vec<(u64, u16)> {
        std::mem::take(&mut self.refused)
    }

    /// Where a replay first left its tape, or a recording's write error.
    pub fn take_failure(&mut self) -> Option<WioError> {
        self.failure.take()
    }

    /// The allowed destinations' names.
    pub fn names(&self) -> Vec<String> {
        self.allow.iter().map(|a| a.name.clone()).collect()
    }

    /// Whether it serves `port` (an allowed destination's) now: not once a replay left
    /// its tape (the simulated dependencies serve its ports then).
    pub fn serves(&self, port: u16) -> bool {
        !self.off_tape && self.allow.iter().any(|a| a.addr.port() == port)
    }

    /// Lets simulated dependencies answer where a replay leaves its tape (the peer has one
    /// of each allowed destination's port).
    pub fn fall_back(&mut self) {
        self.fallback = true;
    }

    /// A replay's tape's seed (the recorded run's), None when not replaying.
    pub fn tape_seed(&self) -> Option<u64> {
        matches!(self.mode, Mode::Replay(_)).then_some(self.seed)
    }

    /// The peer's port connection `conn` is to, when it is the link's.
    pub fn port_of(&self, conn: u64) -> Option<u16> {
        self.conns.get(&conn).map(|c| c.port)
    }

    /// Leaves the replay's tape at `now` because `why` (a stand-in dependency's fault in a
    /// run of another seed than the recording's), when it may and has not yet.
    pub fn leave_for(&mut self, now: u64, why: String) {
        if self.fallback && !self.off_tape && self.failure.is_none() {
            self.leave(now, why);
        }
    }

    /// The connections the dependencies take over, once, when the replay left its tape.
    pub fn take_handover(&mut self) -> Option<Vec<Handover>> {
        self.handover.take()
    }

    /// Ends a recording (its tape's end line).
    pub fn finish(&mut self) -> Result<()> {
        if let Mode::Live(w) = &mut self.mode {
            if let Some(w) = w.take() {
                return w.finish();
            }
        }
        Ok(())
    }

    fn record(&mut self, e: Event) {
        if let Mode::Live(Some(w)) = &mut self.mode {
            self.stats.tape_events += 1;
            if let Err(e) = w.event(&e) {
                self.failure.get_or_insert(e);
            }
            self.recorded.push(e);
        }
    }

    /// The replay's next event if it is what the guests did now; otherwise the divergence.
    fn expect(&mut self, now: u64, want: &Event) -> bool {
        let Mode::Replay(t) = &self.mode else {
            return true;
        };
        if self.failure.is_some() || self.off_tape {
            return false;
        }
        match t.events.get(self.cursor) {
            Some(got) if untimed(got) == untimed(want) => {
                self.cursor += 1;
                self.stats.tape_events += 1;
                true
            }
            _ => {
                self.diverge(now, want, None);
                false
            }
        }
    }

    /// Whether the guests' `bytes` on `conn` are the tape's next sends on it, as a byte
    /// stream: how the guest's TCP cut them into segments (which a branch's timing moves)
    /// does not matter, only their order and content.
    fn expect_sent(&mut self, conn: u64, bytes: &[u8], now: u64) -> bool {
        let Mode::Replay(t) = &self.mode else {
            return true;
        };
        if self.failure.is_some() || self.off_tape {
            return false;
        }
        let mut rest = bytes;
        while !rest.is_empty() {
            let on_tape = match t.events.get(self.cursor) {
                Some(Event::Sent { conn: c, hex, .. }) if *c == conn => tape::unhex(hex),
                _ => None,
            };
            let Some(on_tape) = on_tape else { break };
            let left = on_tape.get(self.sent_within..).unwrap_or_default();
            if rest.starts_with(left) {
                rest = &rest[left.len()..];
                self.cursor += 1;
                self.sent_within = 0;
                self.stats.tape_events += 1;
            } else if left.starts_with(rest) {
                self.sent_within += rest.len();
                return true;
            } else {
                break;
            }
        }
        if rest.is_empty() {
            return true;
        }
        // Both sides' whole request: what the guest sent since the host last answered, and
        // the tape's sends on the connection around where it parts.
        let sent = self
            .conns
            .get(&conn)
            .map(|c| c.unanswered.as_slice())
            .filter(|u| !u.is_empty())
            .unwrap_or(bytes);
        let want = Event::Sent {
            t: now,
            conn,
            hex: tape::hex(sent),
        };
        let got = tape_request(&t.events, self.cursor, conn);
        self.diverge(now, &want, got);
        false
    }

    /// The guests did `want` where the tape holds something else (or nothing more): a
    /// simulated dependency answers from here, or the run stops naming both.
    fn diverge(&mut self, now: u64, want: &Event, got: Option<Event>) {
        let Mode::Replay(t) = &self.mode else { return };
        let got = got
            .as_ref()
            .or(t.events.get(self.cursor))
            .map_or_else(|| "its end".to_string(), describe);
        let what = format!(
            "the guests did {} where the tape holds {got}",
            describe(want)
        );
        if self.fallback {
            self.leave(now, what);
        } else {
            self.failure = Some(crate::error::WorldError::TapeDiverged { at_ns: now, what }.into());
        }
    }

    /// The replay leaves its tape at `now` (`what` the guests did): every open connection
    /// goes to the dependencies, and nothing more comes from the tape.
    fn leave(&mut self, now: u64, what: String) {
        self.off_tape = true;
        self.stats.left_tape = Some(format!("at {:.6} s: {what}", now as f64 / 1e9));
        self.made.clear();
        self.out.clear();
        let conns = std::mem::take(&mut self.conns);
        self.handover = Some(
            conns
                .into_iter()
                .map(|(n, c)| (n, c.port, c.from, c.unanswered))
                .collect(),
        );
    }
}

impl TcpApp for HostLink {
    fn ports(&self) -> Vec<u16> {
        self.allow.iter().map(|a| a.addr.port()).collect()
    }

    fn refuse(&mut self, port: u16, from: ([u8; 4], u16), now_ns: u64) -> bool {
        let Some(a) = self.allow.iter().find(|a| a.addr.port() == port) else {
            return false;
        };
        if let Some(made) = self.made.get(&(from, port)) {
            // The same SYN again (its answer was lost): the same answer, nothing recorded.
            return !made.0;
        }
        let addr = a.addr;
        let (ok, stream) = match &self.mode {
            Mode::Live(_) => {
                let s = TcpStream::connect_timeout(&addr, CONNECT_TIMEOUT).ok();
                if let Some(s) = &s {
                    let _ = s.set_nonblocking(true);
                    let _ = s.set_nodelay(true);
                }
                (s.is_some(), s)
            }
            Mode::Replay(t) => match t.events.get(self.cursor) {
                Some(Event::Connect { ok, .. }) => (*ok, None),
                _ => (true, None),
            },
        };
        let e = Event::Connect {
            t: now_ns,
            port,
            ok,
        };
        if self.expect(now_ns, &e) {
            self.record(e);
        } else if self.off_tape {
            // The dependency standing in for the host answers this one.
            return false;
        }
        if ok {
            self.stats.connections += 1;
        } else {
            self.stats.host_refused += 1;
        }
        self.made.insert((from, port), (ok, stream));
        !ok
    }

    fn stray(&mut self, port: u16, now_ns: u64) {
        self.stats.refused += 1;
        self.refused.push((now_ns, port));
    }

    fn opened(&mut self, conn: u64, port: u16, from: ([u8; 4], u16), _now_ns: u64) {
        let stream = self.made.remove(&(from, port)).and_then(|(_, s)| s);
        self.conns.insert(
            conn,
            Conn {
                stream,
                awaiting: false,
                port,
                from,
                unanswered: Vec::new(),
            },
        );
    }

    fn data(&mut self, conn: u64, bytes: &[u8], now_ns: u64) {
        if matches!(self.mode, Mode::Replay(_)) {
            if let Some(c) = self.conns.get_mut(&conn) {
                c.unanswered.extend_from_slice(bytes);
            }
        }
        if !self.expect_sent(conn, bytes, now_ns) {
            return;
        }
        self.record(Event::Sent {
            t: now_ns,
            conn,
            hex: tape::hex(bytes),
        });
        self.stats.bytes_out += bytes.len() as u64;
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        c.awaiting = true;
        if let Some(s) = &mut c.stream {
            // Requests are small; a host that does not take them within its buffers is
            // written to blocking (a live run waits for the host anyway), for at most
            // CONNECT_TIMEOUT: a host that takes nothing then has its connection closed.
            let _ = s.set_nonblocking(false);
            let _ = s.set_write_timeout(Some(CONNECT_TIMEOUT));
            let written = s.write_all(bytes);
            let _ = s.set_nonblocking(true);
            if written.is_err() {
                let _ = s.shutdown(std::net::Shutdown::Both);
            }
        }
    }

    fn closed(&mut self, conn: u64, _now_ns: u64) {
        if let Some(c) = self.conns.remove(&conn) {
            if let Some(s) = c.stream {
                let _ = s.shutdown(std::net::Shutdown::Both);
            }
        }
        self.out.push(AppAction::Close(conn));
    }

    fn due(&mut self, now_ns: u64) -> Vec<AppAction> {
        self.calls += 1;
        self.last_due = now_ns;
        let call = self.calls;
        let mut got: Vec<(u64, Option<Vec<u8>>)> = Vec::new();
        match &mut self.mode {
            Mode::Live(_) => {
                let waiting = self.conns.values().any(|c| c.awaiting);
                let mut buf = vec![0u8; PIECE];
                for (&conn, c) in self.conns.iter_mut() {
                    let Some(s) = &mut c.stream else { continue };
                    match s.read(&mut buf) {
                        Ok(0) => {
                            c.stream = None;
                            got.push((conn, None));
                        }
                        Ok(n) => got.push((conn, Some(buf[..n].to_vec()))),
                        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                        Err(_) => {
                            c.stream = None;
                            got.push((conn, None));
                        }
                    }
                }
                if got.is_empty() && waiting {
                    // The guests wait for the host: virtual time waits with them, about as
                    // long as it passes between two polls.
                    std::thread::sleep(Duration::from_nanos(POLL_NS));
                }
            }
            Mode::Replay(t) => {
                while let Some(e) = t.events.get(self.cursor) {
                    match e {
                        Event::Recv {
                            call: c, conn, hex, ..
                        } if *c <= call => {
                            got.push((*conn, Some(tape::unhex(hex).unwrap_or_default())));
                        }
                        Event::Eof { call: c, conn, .. } if *c <= call => got.push((*conn, None)),
                        _ => break,
                    }
                    self.cursor += 1;
                    self.stats.tape_events += 1;
                }
            }
        }
        let live = matches!(self.mode, Mode::Live(_));
        for (conn, bytes) in got {
            if live {
                let e = match &bytes {
                    Some(b) => Event::Recv {
                        t: now_ns,
                        call,
                        conn,
                        hex: tape::hex(b),
                    },
                    None => Event::Eof {
                        t: now_ns,
                        call,
                        conn,
                    },
                };
                self.record(e);
            }
            if let Some(c) = self.conns.get_mut(&conn) {
                c.awaiting = false;
                c.unanswered.clear();
            }
            match bytes {
                Some(b) => {
                    self.stats.bytes_in += b.len() as u64;
                    self.out.push(AppAction::Send(conn, b));
                }
                None => self.out.push(AppAction::Close(conn)),
            }
        }
        std::mem::take(&mut self.out)
    }

    fn wake(&self) -> Option<u64> {
        (!self.conns.is_empty()).then(|| self.last_due.saturating_add(POLL_NS))
    }

    fn settings(&mut self, _bytes: &[u8]) {}
}

/// The host link's allow list from `--allow` values (names and ports each used once).
pub fn allow_list(values: &[String]) -> std::result::Result<Vec<Allow>, String> {
    let mut out: Vec<Allow> = Vec::new();
    for v in values {
        let a = Allow::parse(v)?;
        if out.iter().any(|o| o.addr.port() == a.addr.port()) {
            return Err(format!("--allow {v:?}: port {} is allowed twice; the guests reach each destination at the peer's port of the same number", a.addr.port()));
        }
        out.push(a);
    }
    Ok(out)
}

/// The host link a run asks for.
#[derive(Debug, Clone, Default)]
pub struct HostSpec {
    /// The allowed destinations (a replay takes its tape's).
    pub allow: Vec<Allow>,
    /// Record what comes from the host to this tape.
    pub record: Option<PathBuf>,
    /// Replay this tape instead of reaching the host.
    pub replay: Option<PathBuf>,
}

/// The tape `spec` replays (None: not a replay), and the allow list the run uses (a
/// replay's is its tape's).
pub fn allowed(spec: &HostSpec) -> Result<(Option<Tape>, Vec<Allow>)> {
    let replay = spec.replay.as_deref().map(Tape::read).transpose()?;
    let allow = match &replay {
        Some(t) => allow_list(&t.head.allow)
            .map_err(|e| link_error(format!("the tape's allow list: {e}")))?,
        None => spec.allow.clone(),
    };
    Ok((replay, allow))
}

/// The configuration hash a tape's head keeps: SHA-256 of the run's configuration as
/// `config` bytes and the allow list.
pub fn config_hash(config: &[u8], allow: &[Allow]) -> String {
    use sha2::Digest;
    let text: Vec<String> = allow.iter().map(Allow::text).collect();
    let mut h = sha2::Sha256::new();
    h.update(config);
    h.update(text.join(",").as_bytes());
    crate::trace::hex(&h.finalize())
}

/// The link of a run of `seed` whose configuration hashes to `config` (see
/// [`config_hash`]): `replay` checked against both, or a recording started when `spec`
/// asks for one, or a live link.
pub fn open(
    spec: &HostSpec,
    replay: Option<Tape>,
    allow: Vec<Allow>,
    seed: u64,
    config: String,
) -> Result<HostLink> {
    let mode = match replay {
        Some(t) => {
            if t.head.config != config {
                return Err(link_error(format!("{}: the tape was recorded with another configuration (the scenario, the machine's options or the allow list changed); record it again", t.path.display())));
            }
            if t.head.seed != seed {
                return Err(link_error(format!("{}: the tape was recorded with seed {}; replay it with --seed {} (or without --seed)", t.path.display(), t.head.seed, t.head.seed)));
            }
            Mode::Replay(t)
        }
        None => {
            let head = tape::Head {
                wio_tape: tape::FORMAT,
                seed,
                config: config.clone(),
                allow: allow.iter().map(Allow::text).collect(),
            };
            Mode::Live(
                spec.record
                    .as_deref()
                    .map(|p| tape::Writer::create(p, &head))
                    .transpose()?,
            )
        }
    };
    Ok(HostLink::new(allow, mode, seed, config))
}

/// A host link error (one line, exit 100).
pub fn link_error(m: String) -> WioError {
    WioError::from(crate::error::WorldError::HostLink(m))
}

#[cfg(test)]
mod tests;
