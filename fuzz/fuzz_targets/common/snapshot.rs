//! What the file targets share: a snapshot file decoded, raw or as sections in a valid
//! container (the harness computes every length and checksum, so the fuzzer reaches the
//! metadata, world-state and memory-run decoders behind them), and counted.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// Snapshot files decoded over the whole fuzzing run (printed every 2^18).
static DECODED: AtomicU64 = AtomicU64::new(0);

/// Section names the harness picks from (a name byte indexes them): those machine and
/// world snapshots have, and one neither has.
const NAMES: [&str; 14] = [
    "meta",
    "memory",
    "hart",
    "plic",
    "virtio.0",
    "world",
    "node.0",
    "node.1",
    "x",
    "scenario",
    "switch",
    "in-flight",
    "trace",
    "peer",
];

/// `body` read as sections, each `[name index u8][length u16 LE][payload]` (cut short at
/// the end of the input), in a valid container of `format`.
fn container(format: &wio_machines::snapshot::sections::Format, mut body: &[u8]) -> Vec<u8> {
    let mut sections: Vec<(&str, &[u8])> = Vec::new();
    while let [name, lo, hi, rest @ ..] = body {
        let len = (usize::from(*hi) << 8 | usize::from(*lo)).min(rest.len());
        let name = NAMES[usize::from(*name) % NAMES.len()];
        if sections.iter().all(|(n, _)| *n != name) {
            sections.push((name, &rest[..len]));
        }
        body = &rest[len..];
    }
    format.encode(&sections)
}

/// Decodes `body` as a snapshot file: `mode` 0 a machine snapshot, 1 a world snapshot,
/// 2 a machine snapshot's sections in a valid container, 3 a world snapshot's. Counts it
/// (printed with `target`'s name).
pub fn decode(target: &str, mode: u8, body: &[u8]) {
    let n = DECODED.fetch_add(1, Ordering::Relaxed) + 1;
    if n % (1 << 18) == 0 {
        eprintln!("{target}: {n} snapshot files decoded");
    }
    let path = Path::new("fuzz.snap");
    match mode % 4 {
        0 => {
            let _ = wio_machines::snapshot::Snapshot::decode(path, body);
        }
        1 => {
            let _ = wio_world::snapshot::decode(path, body);
        }
        2 => {
            let f = container(&wio_machines::snapshot::FORMAT, body);
            let _ = wio_machines::snapshot::Snapshot::decode(path, &f);
        }
        _ => {
            let f = container(&wio_world::snapshot::FORMAT, body);
            let _ = wio_world::snapshot::decode(path, &f);
        }
    }
}
