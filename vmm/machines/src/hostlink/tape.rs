//! Tapes: everything that entered a world from the host through its host link, in the
//! order it entered, so a replay gives the recorded run without the host.
//!
//! A tape is JSON lines. The first is the head (format, seed, the configuration's hash,
//! the allow list); then one event per line; the last is the end (how many events). Every
//! line after the first carries the SHA-256 of the line before it (`prev`), as traces do,
//! so an edited, cut or reordered tape is refused with the line where it breaks.
//!
//! Events carry the virtual time they happened at (for people and checks) and, for what
//! the host sent, the number of the service call it came in (`call`): a replay delivers it
//! in exactly that call, so even two calls at one virtual time cannot swap what they see.

use crate::error::{Result, WioError};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The tape format this wio writes and reads.
pub const FORMAT: u32 = 1;
/// Longest tape line read, bytes (a host answer is cut into pieces of at most 64 KiB).
const MAX_LINE: usize = 1 << 20;

/// The first line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Head {
    /// [`FORMAT`].
    pub wio_tape: u32,
    /// The world's seed.
    pub seed: u64,
    /// SHA-256 of the world's configuration (scenario and allow list), hex.
    pub config: String,
    /// The allow list, as given.
    pub allow: Vec<String>,
}

/// One thing that crossed the host link.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "ev", rename_all = "kebab-case")]
pub enum Event {
    /// A guest's connection attempt to an allowed port, and whether the host accepted it.
    Connect {
        /// Virtual ns.
        t: u64,
        /// The port the guest asked for.
        port: u16,
        /// Whether the host's connection was made.
        ok: bool,
    },
    /// Bytes the guest sent on a connection (the host got them).
    Sent {
        /// Virtual ns.
        t: u64,
        /// The connection (numbered from 0 in the order they opened).
        conn: u64,
        /// The bytes, hex.
        hex: String,
    },
    /// Bytes the host sent on a connection, delivered in service call `call`.
    Recv {
        /// Virtual ns.
        t: u64,
        /// The service call.
        call: u64,
        /// The connection.
        conn: u64,
        /// The bytes, hex.
        hex: String,
    },
    /// The host closed a connection, seen in service call `call`.
    Eof {
        /// Virtual ns.
        t: u64,
        /// The service call.
        call: u64,
        /// The connection.
        conn: u64,
    },
}

#[derive(Serialize, Deserialize)]
struct Line<T> {
    #[serde(flatten)]
    body: T,
    prev: String,
}

#[derive(Serialize, Deserialize)]
struct End {
    end: u64,
}

/// Hex of bytes.
pub fn hex(bytes: &[u8]) -> String {
    crate::trace::hex(bytes)
}

/// Bytes of hex (None when it is not hex).
pub fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

fn sha(text: &str) -> String {
    hex(&Sha256::digest(text.as_bytes()))
}

/// A tape being written.
pub struct Writer {
    path: PathBuf,
    out: std::io::BufWriter<std::fs::File>,
    prev: String,
    events: u64,
}

impl Writer {
    /// Starts the tape at `path` with its head.
    pub fn create(path: &Path, head: &Head) -> Result<Writer> {
        let io = |source| WioError::ArtifactIo {
            what: "tape",
            path: path.to_path_buf(),
            source,
        };
        let file = std::fs::File::create(path).map_err(io)?;
        let mut w = Writer {
            path: path.to_path_buf(),
            out: std::io::BufWriter::new(file),
            prev: String::new(),
            events: 0,
        };
        let line = serde_json::to_string(head).unwrap_or_default();
        w.put(line)?;
        Ok(w)
    }

    fn put(&mut self, line: String) -> Result<()> {
        writeln!(self.out, "{line}").map_err(|source| WioError::ArtifactIo {
            what: "tape",
            path: self.path.clone(),
            source,
        })?;
        self.prev = sha(&line);
        Ok(())
    }

    /// Appends an event.
    pub fn event(&mut self, e: &Event) -> Result<()> {
        let line = serde_json::to_string(&Line {
            body: e,
            prev: self.prev.clone(),
        })
        .unwrap_or_default();
        self.events += 1;
        self.put(line)
    }

    /// Ends the tape (a tape without its end line is refused as truncated).
    pub fn finish(mut self) -> Result<()> {
        let line = serde_json::to_string(&Line {
            body: End { end: self.events },
            prev: self.prev.clone(),
        })
        .unwrap_or_default();
        self.put(line)?;
        self.out.flush().map_err(|source| WioError::ArtifactIo {
            what: "tape",
            path: self.path.clone(),
            source,
        })
    }
}

/// A tape read whole and checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tape {
    /// Where it was read from.
    pub path: PathBuf,
    /// Its head.
    pub head: Head,
    /// Its events, in order.
    pub events: Vec<Event>,
}

impl Tape {
    /// Reads and checks the tape at `path`: its head, every line's link to the one before,
    /// every event, and its end. Errors are one line naming the tape's line.
    pub fn read(path: &Path) -> Result<Tape> {
        let bad = |reason: String| WioError::ArtifactFormat {
            what: "tape",
            path: path.to_path_buf(),
            reason,
        };
        let text = std::fs::read_to_string(path).map_err(|source| WioError::ArtifactIo {
            what: "tape",
            path: path.to_path_buf(),
            source,
        })?;
        let mut lines = text.lines().enumerate();
        let (_, first) = lines.next().ok_or_else(|| bad("is empty".into()))?;
        let head: Head = serde_json::from_str(first)
            .map_err(|e| bad(format!("line 1 is not a tape's head ({e})")))?;
        if head.wio_tape != FORMAT {
            return Err(bad(format!(
                "is tape format {}; this wio reads format {FORMAT}",
                head.wio_tape
            )));
        }
        let mut prev = sha(first);
        let mut events = Vec::new();
        for (i, line) in lines {
            let n = i + 1;
            if line.len() > MAX_LINE {
                return Err(bad(format!("line {n} is longer than {MAX_LINE} bytes")));
            }
            let v: serde_json::Value = serde_json::from_str(line)
                .map_err(|e| bad(format!("line {n} is not JSON ({e})")))?;
            if v.get("prev").and_then(|p| p.as_str()) != Some(prev.as_str()) {
                return Err(bad(format!(
                    "line {n} does not follow line {} (the tape was edited, cut or damaged)",
                    n - 1
                )));
            }
            prev = sha(line);
            if let Some(end) = v.get("end") {
                if end.as_u64() != Some(events.len() as u64) {
                    return Err(bad(format!(
                        "its end (line {n}) counts {end} events; the tape holds {}",
                        events.len()
                    )));
                }
                if n != text.lines().count() {
                    return Err(bad(format!("has lines after its end (line {n})")));
                }
                return Ok(Tape {
                    path: path.to_path_buf(),
                    head,
                    events,
                });
            }
            let e: Event = serde_json::from_value(v)
                .map_err(|e| bad(format!("line {n} is not a tape event ({e})")))?;
            let hex_ok = match &e {
                Event::Sent { hex, .. } | Event::Recv { hex, .. } => unhex(hex).is_some(),
                _ => true,
            };
            if !hex_ok {
                return Err(bad(format!("line {n}: its bytes are not hex")));
            }
            events.push(e);
        }
        Err(bad(
            "is truncated: it has no end line (the recording did not finish)".into(),
        ))
    }
}

/// The tape's sends on `conn` next to each other around `at` as one send (a request the
/// guest's TCP cut in pieces), when the event at `at` is one.
pub(super) fn tape_request(events: &[Event], at: usize, conn: u64) -> Option<Event> {
    let is_send = |e: &Event| matches!(e, Event::Sent { conn: c, .. } if *c == conn);
    let t = match events.get(at)? {
        Event::Sent { t, .. } if is_send(&events[at]) => *t,
        _ => return None,
    };
    let start = events[..at]
        .iter()
        .rposition(|e| !is_send(e))
        .map_or(0, |i| i + 1);
    let end = events[at..]
        .iter()
        .position(|e| !is_send(e))
        .map_or(events.len(), |i| at + i);
    let mut bytes = Vec::new();
    for e in &events[start..end] {
        if let Event::Sent { hex, .. } = e {
            bytes.extend(unhex(hex).unwrap_or_default());
        }
    }
    Some(Event::Sent {
        t,
        conn,
        hex: hex(&bytes),
    })
}

/// An event without its virtual time: what a replay checks (a branch of a replayed
/// snapshot runs at other times; an exact replay's times are the trace hash's to prove).
pub(super) fn untimed(e: &Event) -> Event {
    let mut e = e.clone();
    match &mut e {
        Event::Connect { t, .. }
        | Event::Sent { t, .. }
        | Event::Recv { t, .. }
        | Event::Eof { t, .. } => *t = 0,
    }
    e
}

/// An event in words, for divergence messages.
pub(super) fn describe(e: &Event) -> String {
    let bytes = |h: &str| {
        let b = unhex(h).unwrap_or_default();
        let text = String::from_utf8_lossy(&b[..b.len().min(60)]).into_owned();
        format!(
            "{} bytes {:?}{}",
            b.len(),
            text,
            if b.len() > 60 { "..." } else { "" }
        )
    };
    match e {
        Event::Connect { t, port, ok } => format!(
            "a connection to port {port} ({}) at {:.6} s",
            if *ok { "made" } else { "refused by the host" },
            *t as f64 / 1e9
        ),
        Event::Sent { t, conn, hex } => format!(
            "a send on connection {conn} at {:.6} s of {}",
            *t as f64 / 1e9,
            bytes(hex)
        ),
        Event::Recv { t, conn, hex, .. } => format!(
            "the host's answer on connection {conn} at {:.6} s ({})",
            *t as f64 / 1e9,
            bytes(hex)
        ),
        Event::Eof { t, conn, .. } => format!(
            "the host's close of connection {conn} at {:.6} s",
            *t as f64 / 1e9
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tapes_round_trip_and_damage_is_one_line_naming_the_line() {
        let dir = std::env::temp_dir().join(format!("wio-tape-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("t.tape");
        let head = Head {
            wio_tape: FORMAT,
            seed: 7,
            config: "ab".into(),
            allow: vec!["api=127.0.0.1:80".into()],
        };
        let events = vec![
            Event::Connect {
                t: 1,
                port: 80,
                ok: true,
            },
            Event::Sent {
                t: 2,
                conn: 0,
                hex: hex(b"GET"),
            },
            Event::Recv {
                t: 3,
                call: 9,
                conn: 0,
                hex: hex(b"ok"),
            },
            Event::Eof {
                t: 4,
                call: 10,
                conn: 0,
            },
        ];
        let mut w = Writer::create(&p, &head).unwrap();
        for e in &events {
            w.event(e).unwrap();
        }
        w.finish().unwrap();
        let t = Tape::read(&p).unwrap();
        assert_eq!((t.head, t.events), (head, events));
        let text = std::fs::read_to_string(&p).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let err = |s: &str| {
            std::fs::write(&p, s).unwrap();
            let e = Tape::read(&p).unwrap_err().to_string();
            assert!(!e.contains('\n'), "{e}");
            e
        };
        assert!(err(&lines[..4].join("\n")).contains("truncated"));
        assert!(err(&text.replace("474554", "474555")).contains("line 4 does not follow line 3"));
        assert!(err("{}").contains("line 1 is not a tape's head"));
        assert!(err(&format!("{}\nnot json\n", lines[0])).contains("line 2 is not JSON"));
        assert!(err("").contains("is empty"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
