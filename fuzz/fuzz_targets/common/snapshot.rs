//! What the file targets share: a snapshot file decoded, raw or as a body in a valid
//! envelope (the harness computes length and checksum, so the fuzzer reaches the
//! metadata, machine state and memory-run decoders behind them), and counted.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// Snapshot files decoded over the whole fuzzing run (printed every 2^18).
static DECODED: AtomicU64 = AtomicU64::new(0);

/// `body` in a valid snapshot envelope: magic, version, total length, checksum.
fn envelope(magic: &[u8; 8], version: u32, body: &[u8]) -> Vec<u8> {
    use sha2::{Digest, Sha256};
    let mut out = Vec::with_capacity(body.len() + 52);
    out.extend_from_slice(magic);
    out.extend_from_slice(&version.to_le_bytes());
    out.extend_from_slice(&((20 + body.len() + 32) as u64).to_le_bytes());
    out.extend_from_slice(body);
    let sum = Sha256::digest(&out);
    out.extend_from_slice(&sum);
    out
}

/// Decodes `body` as a snapshot file: `mode` 0 a machine snapshot, 1 a world snapshot,
/// 2 a machine snapshot's body in a valid envelope, 3 a world snapshot's. Counts it
/// (printed with `target`'s name).
pub fn decode(target: &str, mode: u8, body: &[u8]) {
    let n = DECODED.fetch_add(1, Ordering::Relaxed) + 1;
    if n % (1 << 18) == 0 {
        eprintln!("{target}: {n} snapshot files decoded");
    }
    let path = Path::new("fuzz.snap");
    match mode % 4 {
        0 => {
            let _ = wio::snapshot::Snapshot::decode(path, body);
        }
        1 => {
            let _ = wio::world::snapshot::decode(path, body);
        }
        2 => {
            let f = envelope(wio::snapshot::MAGIC, wio::snapshot::FORMAT_VERSION, body);
            let _ = wio::snapshot::Snapshot::decode(path, &f);
        }
        _ => {
            let f = envelope(
                wio::snapshot::WORLD_MAGIC,
                wio::world::snapshot::FORMAT_VERSION,
                body,
            );
            let _ = wio::world::snapshot::decode(path, &f);
        }
    }
}
