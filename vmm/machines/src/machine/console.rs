//! The guest console as every machine sees it: bytes from the guest's UART become trace
//! lines (one `console` event per guest line), a running SHA-256, optional live output,
//! the first appearance of marker lines, the guest's reported exit status, and the
//! console texts a run watches for (snapshot points, `--until`, `--match`).
//!
//! Both architectures feed their UART output here at the points their run loop defines
//! (after each exit), so the trace's console lines carry the virtual time of the exit
//! that completed them.

use crate::snapshot::sha::ResumableSha256;
use crate::summary::Marker;
use crate::trace::Trace;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::io::Write;
use std::time::Instant;

/// Console lines whose first appearance the summary times (virtual and wall).
pub const MARKERS: [&str; 3] = [
    "Run /init as init process",
    "wio-init: start",
    "wio-init: done",
];

/// The console line a guest's init prints to report its exit status before powering off.
pub const STATUS_MARKER: &str = "wio-init: done status=";

/// Longest console line kept whole; a longer one is cut into lines of this length.
pub const MAX_LINE_BYTES: usize = 4096;

/// Where console bytes go besides the trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Echo {
    /// Stream them to stdout as they arrive.
    Stdout,
    /// Keep them only in the trace and the digest.
    Quiet,
    /// Keep whole lines for the caller to take ([`Console::take_captured`]): a world
    /// prints its machines' lines prefixed with their names.
    Capture,
}

/// The console of one machine.
pub struct Console {
    line: Vec<u8>,
    digest: ResumableSha256,
    echo: Echo,
    /// The status the guest reported with [`STATUS_MARKER`], if it did.
    pub status: Option<u32>,
    /// Marker lines seen so far, in order.
    pub markers: Vec<Marker>,
    /// When the run started on the host (for the markers' wall times only).
    wall: Instant,
    /// Texts still waiting for a line that contains them.
    pub watch: Vec<String>,
    /// Watched texts whose line appeared since the run loop last looked, in order.
    pub watch_hits: Vec<String>,
    /// Every watched text that appeared, with its whole line (without the line end), in
    /// order; kept for reports (bounded by the watch list: a text is watched until its
    /// first line).
    pub matched_lines: Vec<(String, String)>,
    /// Lines kept for the caller ([`Echo::Capture`]).
    captured: Vec<String>,
    /// The line shapes of the run, when a guided exploration observes it.
    shapes: Option<super::novelty::ShapeWatch>,
}

/// Most captured lines waiting for the caller (a world takes them every quantum).
const MAX_CAPTURED: usize = 65_536;

/// The console as a snapshot keeps it: a function of the run alone, so the markers'
/// host wall times are left out (a restored run reports 0 for markers it inherited).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ConsoleState {
    #[serde(with = "serde_bytes")]
    line: Vec<u8>,
    digest: ResumableSha256,
    status: Option<u32>,
    markers: Vec<(String, u64)>,
}

impl ConsoleState {
    /// Whether the saved digest can be resumed.
    pub fn is_valid(&self) -> bool {
        self.digest.is_valid()
    }
}

impl Console {
    /// Where its lines go from now on (a debugger re-executing what the user has already
    /// seen keeps it quiet).
    pub fn set_echo(&mut self, echo: Echo) {
        self.echo = echo;
    }

    /// An empty console; `wall` is the run's start on the host.
    pub fn new(echo: Echo, wall: Instant) -> Console {
        Console {
            line: Vec::new(),
            digest: ResumableSha256::default(),
            echo,
            status: None,
            markers: Vec::new(),
            wall,
            watch: Vec::new(),
            watch_hits: Vec::new(),
            matched_lines: Vec::new(),
            captured: Vec::new(),
            shapes: None,
        }
    }

    /// From now on, notes each line shape the run prints for the first time.
    pub fn observe_shapes(&mut self) {
        self.shapes.get_or_insert_with(Default::default);
    }

    /// The marks of the new line shapes since the last call (none unless observing).
    pub fn take_shape_marks(&mut self) -> Vec<super::novelty::Mark> {
        self.shapes.as_mut().map(|w| w.take()).unwrap_or_default()
    }

    /// The lines captured since the last call ([`Echo::Capture`]).
    pub fn take_captured(&mut self) -> Vec<String> {
        std::mem::take(&mut self.captured)
    }

    /// Takes bytes the guest printed at virtual time `now`.
    pub fn push(&mut self, bytes: &[u8], now: u64, trace: &mut Trace) {
        if bytes.is_empty() {
            return;
        }
        self.digest.update(bytes);
        if self.echo == Echo::Stdout {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(bytes);
            let _ = out.flush();
        }
        for &b in bytes {
            self.line.push(b);
            if b == b'\n' || self.line.len() >= MAX_LINE_BYTES {
                self.flush_line(now, trace);
            }
        }
    }

    /// Ends the current line (if any) at virtual time `now`: its trace event, markers,
    /// watched texts and status marker.
    pub fn flush_line(&mut self, now: u64, trace: &mut Trace) {
        if self.line.is_empty() {
            return;
        }
        let text = String::from_utf8_lossy(&self.line).into_owned();
        self.line.clear();
        if self.echo == Echo::Capture && self.captured.len() < MAX_CAPTURED {
            self.captured
                .push(text.trim_end_matches(['\r', '\n']).to_string());
        }
        for m in MARKERS {
            if text.contains(m) && !self.markers.iter().any(|k| k.line == m) {
                self.markers.push(Marker {
                    line: m.to_string(),
                    virtual_ns: now,
                    wall_ns: self.wall.elapsed().as_nanos() as u64,
                });
            }
        }
        if let Some(w) = &mut self.shapes {
            w.line(&text);
        }
        let before = self.watch_hits.len();
        crate::snapshot::plan::take_matches(&mut self.watch, &mut self.watch_hits, &text);
        for hit in &self.watch_hits[before..] {
            let line = text.trim_end_matches(['\r', '\n']).to_string();
            self.matched_lines.push((hit.clone(), line));
        }
        if let Some(rest) = text
            .find(STATUS_MARKER)
            .map(|i| &text[i + STATUS_MARKER.len()..])
        {
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            if let Ok(s) = digits.parse() {
                self.status = Some(s);
            }
        }
        trace.event(now, "console", json!({ "text": text }));
    }

    /// Removes `text` from the hits if it is there; returns whether it was.
    pub fn take_hit(&mut self, text: &str) -> bool {
        match self.watch_hits.iter().position(|h| h == text) {
            Some(i) => {
                self.watch_hits.remove(i);
                true
            }
            None => false,
        }
    }

    /// SHA-256 of everything the guest printed so far, in hex.
    pub fn sha256(&self) -> String {
        crate::trace::hex(&self.digest.digest())
    }
}

/// Why a saved console is refused.
#[derive(Debug, thiserror::Error)]
#[error("its output digest cannot be resumed")]
pub struct ConsoleStateError;

/// A snapshot keeps the line being written, the digest of everything printed, the status
/// the guest reported and the console markers; a restore takes a fresh console (what it
/// echoes and watches stays the restoring run's) and refuses a digest that cannot resume.
impl crate::snapshot::persist::Persist for Console {
    type State = ConsoleState;
    type Args<'a> = Console;
    type Error = ConsoleStateError;

    fn save(&self) -> ConsoleState {
        ConsoleState {
            line: self.line.clone(),
            digest: self.digest.clone(),
            status: self.status,
            markers: self
                .markers
                .iter()
                .map(|m| (m.line.clone(), m.virtual_ns))
                .collect(),
        }
    }

    fn restore(mut console: Console, s: &ConsoleState) -> Result<Console, ConsoleStateError> {
        if !s.is_valid() {
            return Err(ConsoleStateError);
        }
        console.line = s.line.clone();
        console.digest = s.digest.clone();
        console.status = s.status;
        console.markers = s
            .markers
            .iter()
            .map(|(line, virtual_ns)| Marker {
                line: line.clone(),
                virtual_ns: *virtual_ns,
                wall_ns: 0,
            })
            .collect();
        Ok(console)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_markers_status_and_watches() {
        let mut trace = Trace::new();
        let mut c = Console::new(Echo::Quiet, Instant::now());
        c.watch = vec!["ready".into(), "never".into()];
        c.push(b"boot\nwio-init: st", 5, &mut trace);
        assert!(c.markers.is_empty());
        c.push(b"art\nready now\nwio-init: done status=7\n", 9, &mut trace);
        assert_eq!(c.markers.len(), 2);
        assert_eq!(c.markers[0].line, "wio-init: start");
        assert_eq!(c.markers[0].virtual_ns, 9);
        assert_eq!(c.status, Some(7));
        assert_eq!(c.watch, vec!["never".to_string()]);
        assert_eq!(
            c.matched_lines,
            vec![("ready".to_string(), "ready now".to_string())]
        );
        assert!(c.take_hit("ready"));
        assert!(!c.take_hit("ready"));
        assert_eq!(trace.lines(), 4);
    }

    #[test]
    fn long_lines_are_cut_and_state_round_trips() {
        let mut trace = Trace::new();
        let mut c = Console::new(Echo::Quiet, Instant::now());
        c.push(&vec![b'x'; MAX_LINE_BYTES + 10], 1, &mut trace);
        assert_eq!(trace.lines(), 1);
        use crate::snapshot::persist::Persist;
        let saved = c.save();
        let mut d = Console::restore(Console::new(Echo::Quiet, Instant::now()), &saved).unwrap();
        c.push(b"end\n", 2, &mut trace);
        let mut t2 = Trace::new();
        d.push(b"end\n", 2, &mut t2);
        assert_eq!(c.sha256(), d.sha256());
    }
}
