//! The run's trace: JSON lines, each carrying the SHA-256 of the previous line,
//! so the hash of the last line identifies the whole execution and any edit
//! breaks the chain.
//!
//! Notable events (interrupts, console output, clock jumps, device
//! programming, the end) each get a line. High-frequency exits (port and MMIO
//! accesses) are folded into a running FNV-1a digest that the next line
//! carries as `io` together with how many exits it covers, so every exit is
//! covered by the hash at a small cost per exit.

use crate::error::TraceError;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::io::Write;

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// The kind tags of exits folded into the trace's digest ([`Trace::fold`]); part of the
/// trace format, the same on both machines.
pub mod fold {
    /// A port read (x86-64).
    pub const PIO_READ: u8 = 1;
    /// A port write (x86-64).
    pub const PIO_WRITE: u8 = 2;
    /// An MMIO read.
    pub const MMIO_READ: u8 = 3;
    /// An MMIO write.
    pub const MMIO_WRITE: u8 = 4;
    /// An SBI call (riscv64): extension, function, error.
    pub const SBI_CALL: u8 = 5;
    /// A line on the guest's `wio.sdk` channel: its length, its FNV-1a hash.
    pub const SDK_LINE: u8 = 6;
    /// A stall of the riscv64 CPU (seeded timing noise): its length, the instruction count
    /// it came after.
    pub const STALL: u8 = 7;
}

/// 64-bit FNV-1a of `bytes` (folds a line's content into the trace cheaply).
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Hex of a hash.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Where a trace's chain stands, for snapshots: restoring it continues the chain.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TraceState {
    /// Hash of the last line.
    pub prev: [u8; 32],
    /// Lines so far.
    pub lines: u64,
    /// Running digest of folded exits.
    pub fold: u64,
    /// Exits folded since the last line.
    pub folded: u64,
}

/// The hash chain, optionally mirrored to a file.
pub struct Trace {
    prev: [u8; 32],
    lines: u64,
    fold: u64,
    folded: u64,
    out: Option<Box<dyn Write>>,
    write_error: Option<std::io::Error>,
}

impl Trace {
    /// A trace that only hashes.
    pub fn new() -> Trace {
        Trace {
            prev: [0; 32],
            lines: 0,
            fold: FNV_OFFSET,
            folded: 0,
            out: None,
            write_error: None,
        }
    }

    /// A trace that also writes its lines to `out`.
    pub fn to_writer(out: Box<dyn Write>) -> Trace {
        Trace {
            out: Some(out),
            ..Trace::new()
        }
    }

    /// Folds one high-frequency exit into the digest: a kind tag, an address, a value, the time.
    #[inline]
    pub fn fold(&mut self, kind: u8, addr: u64, value: u64, now_ns: u64) {
        let mut h = self.fold;
        for word in [u64::from(kind), addr, value, now_ns] {
            h ^= word;
            h = h.wrapping_mul(FNV_PRIME);
        }
        self.fold = h;
        self.folded += 1;
    }

    /// Appends an event line: `{"n":…, "t":…, "ev":…, <fields>, "io":…, "prev":…}`.
    pub fn event(&mut self, now_ns: u64, ev: &str, fields: Value) {
        let mut line = json!({ "n": self.lines, "t": now_ns, "ev": ev });
        if let (Value::Object(map), Value::Object(extra)) = (&mut line, fields) {
            map.extend(extra);
            if self.folded > 0 {
                map.insert(
                    "io".into(),
                    json!(format!("{:016x}/{}", self.fold, self.folded)),
                );
            }
            map.insert("prev".into(), json!(hex(&self.prev)));
        }
        let text = line.to_string();
        self.prev = Sha256::digest(text.as_bytes()).into();
        self.lines += 1;
        self.fold = FNV_OFFSET;
        self.folded = 0;
        if let Some(out) = self.out.as_mut() {
            if self.write_error.is_none() {
                if let Err(e) = writeln!(out, "{text}") {
                    self.write_error = Some(e);
                }
            }
        }
    }

    /// Writes its lines to `out` from now on (a debugger moving a run back and forth
    /// keeps the lines itself, see [`SharedLog`]).
    pub fn set_writer(&mut self, out: Box<dyn Write>) {
        self.out = Some(out);
    }

    /// The hash of the last line (all zeros before any line).
    pub fn hash_hex(&self) -> String {
        hex(&self.prev)
    }

    /// Lines written so far.
    pub fn lines(&self) -> u64 {
        self.lines
    }

    /// Flushes the file, reporting the first write error, if any.
    pub fn finish(&mut self) -> std::io::Result<()> {
        if let Some(e) = self.write_error.take() {
            return Err(e);
        }
        match self.out.as_mut() {
            Some(out) => out.flush(),
            None => Ok(()),
        }
    }
}

impl Default for Trace {
    fn default() -> Self {
        Trace::new()
    }
}

/// Trace lines kept in memory, shared by the machines a debugger restores one after
/// another: cut back to a checkpoint's length when it restores one, written to the
/// trace file when the run ends.
#[derive(Clone, Default)]
pub struct SharedLog(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl SharedLog {
    /// Bytes so far.
    pub fn len(&self) -> usize {
        self.bytes().len()
    }

    /// Whether nothing was written yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Cuts it back to `len` bytes.
    pub fn truncate(&self, len: usize) {
        self.bytes().truncate(len);
    }

    /// A copy of its bytes.
    pub fn contents(&self) -> Vec<u8> {
        self.bytes().clone()
    }

    fn bytes(&self) -> std::sync::MutexGuard<'_, Vec<u8>> {
        // A writer that panicked mid-line left whole lines only (lines are written whole).
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Write for SharedLog {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.bytes().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Opens the run's trace: hashing only, or also written to `path`.
pub fn open(path: Option<&std::path::PathBuf>) -> crate::error::Result<Trace> {
    match path {
        Some(path) => {
            let file =
                std::fs::File::create(path).map_err(|source| crate::error::WioError::Output {
                    what: "trace",
                    path: path.clone(),
                    source,
                })?;
            Ok(Trace::to_writer(Box::new(std::io::BufWriter::new(file))))
        }
        None => Ok(Trace::new()),
    }
}

/// Ends the run's trace with an `exit` (with `fields`) or `error` line, flushes it,
/// and returns the outcome, turned into an output error if the file could not be written.
pub fn close(
    trace: &mut Trace,
    now_ns: u64,
    outcome: crate::error::Result<u32>,
    fields: Value,
    path: Option<&std::path::PathBuf>,
) -> crate::error::Result<u32> {
    match &outcome {
        Ok(status) => {
            let mut line = json!({ "status": status });
            if let (Value::Object(map), Value::Object(extra)) = (&mut line, fields) {
                map.extend(extra);
            }
            trace.event(now_ns, "exit", line);
        }
        Err(e) => trace.event(
            now_ns,
            "error",
            json!({ "code": e.exit_code(), "message": e.to_string() }),
        ),
    }
    finish(trace, outcome, path)
}

/// Flushes the trace and returns the outcome, turned into an output error if the file
/// could not be written.
pub fn finish(
    trace: &mut Trace,
    outcome: crate::error::Result<u32>,
    path: Option<&std::path::PathBuf>,
) -> crate::error::Result<u32> {
    match trace.finish() {
        Err(source) => Err(crate::error::WioError::Output {
            what: "trace",
            path: path.cloned().unwrap_or_default(),
            source,
        }),
        Ok(()) => outcome,
    }
}

/// Checks a trace file's chain; returns the final hash or the first broken line.
///
/// A trace written by a run restored from a snapshot continues the chain of the run
/// that took the snapshot: its first line has a line number above 0 and carries the
/// hash it continues from, which is taken as given (check it against the trace of the
/// original run up to the snapshot).
pub fn verify(text: &str) -> Result<String, TraceError> {
    let mut prev = [0u8; 32];
    for (i, line) in text.lines().enumerate() {
        let v: Value = serde_json::from_str(line).map_err(|source| TraceError::NotJson {
            line: i + 1,
            source,
        })?;
        let claimed = v
            .get("prev")
            .and_then(Value::as_str)
            .ok_or(TraceError::NoPrev { line: i + 1 })?;
        if i == 0 && v.get("n").and_then(Value::as_u64).is_some_and(|n| n > 0) {
            if claimed.len() != 64 || !claimed.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(TraceError::StartNotSha);
            }
        } else if claimed != hex(&prev) {
            return Err(TraceError::ChainBroken { line: i + 1 });
        }
        prev = Sha256::digest(line.as_bytes()).into();
    }
    Ok(hex(&prev))
}

/// A snapshot keeps where the chain stands; a restore continues the chain in a trace opened
/// for the restoring run (its file, if any): the next line follows the saved last line.
impl crate::snapshot::persist::Persist for Trace {
    type State = TraceState;
    type Args<'a> = Trace;
    type Error = std::convert::Infallible;

    fn save(&self) -> TraceState {
        TraceState {
            prev: self.prev,
            lines: self.lines,
            fold: self.fold,
            folded: self.folded,
        }
    }

    fn restore(mut trace: Trace, s: &TraceState) -> Result<Trace, Self::Error> {
        trace.prev = s.prev;
        trace.lines = s.lines;
        trace.fold = s.fold;
        trace.folded = s.folded;
        Ok(trace)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);
    impl Write for Shared {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn file_chain_verifies_and_matches_hash() {
        let buf = Shared::default();
        let mut t = Trace::to_writer(Box::new(buf.clone()));
        t.event(0, "start", json!({"seed": 1}));
        t.fold(1, 0x3f8, 65, 10);
        t.event(20, "irq", json!({"vector": 32}));
        t.finish().unwrap();
        let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
        assert_eq!(verify(&text).unwrap(), t.hash_hex());
        assert!(text.contains("\"io\""));
        let tampered = text.replacen("\"vector\":32", "\"vector\":33", 1);
        let tampered = tampered.replacen("\"seed\":1", "\"seed\":2", 1);
        assert!(verify(&tampered).is_err());
    }

    #[test]
    fn folded_exits_change_the_hash() {
        let mut a = Trace::new();
        let mut b = Trace::new();
        a.fold(1, 0x80, 1, 5);
        b.fold(1, 0x80, 2, 5);
        a.event(9, "end", json!({}));
        b.event(9, "end", json!({}));
        assert_ne!(a.hash_hex(), b.hash_hex());
    }
}
