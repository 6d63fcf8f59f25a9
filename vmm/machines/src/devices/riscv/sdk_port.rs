//! The promise channel of bare-metal guests (`wio,sdk-port`): programs without a
//! virtio driver write the same JSON lines as the `wio.sdk` virtio-console port (the
//! Antithesis SDK protocol, see `promises`) one byte at a time into a register, and read
//! seeded random words from another. The machine takes finished lines into the run's
//! ledger after each step, exactly as it does for the virtio channel.
//!
//! Registers (32-bit): 0x00 TX (wo): the low byte is appended to the line being
//! written, `\n` ends it; 0x04 RANDOM (ro): the next random word of the port's stream.

use serde::{Deserialize, Serialize};
use wio_scheduler::{stream_names, RunSeed};
use wio_virtio_devices::console::{Line, MAX_LINE, MAX_PENDING_LINES};

/// Register offsets.
pub mod reg {
    /// Append a byte.
    pub const TX: u64 = 0x00;
    /// Read a random word.
    pub const RANDOM: u64 = 0x04;
}

/// The port.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SdkPort {
    key: u64,
    /// Random words handed out.
    drawn: u64,
    #[serde(with = "serde_bytes")]
    partial: Vec<u8>,
    lines: Vec<Line>,
    /// Lines longer than [`MAX_LINE`] or beyond [`MAX_PENDING_LINES`], dropped.
    pub dropped_lines: u64,
}

impl SdkPort {
    /// The port of a run with `seed`.
    pub fn new(seed: RunSeed) -> SdkPort {
        SdkPort {
            key: seed.stream(stream_names::SDK_PORT).next_u64(),
            ..SdkPort::default()
        }
    }

    /// Draws the random words from `seed` from now on (a restore with another seed).
    pub fn rekey(&mut self, seed: RunSeed) {
        self.key = seed.stream(stream_names::SDK_PORT).next_u64();
    }

    /// A 32-bit register read.
    pub fn read(&mut self, offset: u64) -> u32 {
        if offset != reg::RANDOM {
            return 0;
        }
        self.drawn += 1;
        // SplitMix64 over (key, count): a stream position is one counter.
        let mut x = self
            .key
            .wrapping_add(self.drawn.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (x ^ (x >> 31)) as u32
    }

    /// A register write at virtual time `now_ns`.
    pub fn write(&mut self, offset: u64, value: u32, now_ns: u64) {
        if offset != reg::TX {
            return;
        }
        let byte = value as u8;
        if byte != b'\n' {
            if self.partial.len() <= MAX_LINE {
                self.partial.push(byte);
            }
            return;
        }
        let line = std::mem::take(&mut self.partial);
        if line.len() > MAX_LINE || self.lines.len() >= MAX_PENDING_LINES {
            self.dropped_lines += 1;
        } else {
            self.lines.push((now_ns, line));
        }
    }

    /// The finished lines since the last call.
    pub fn take_lines(&mut self) -> Vec<Line> {
        std::mem::take(&mut self.lines)
    }

    /// Whether the guest has power-cycled: a line half written is lost with it.
    pub fn reset(&mut self) {
        self.partial.clear();
    }
}

impl SdkPort {
    /// The port is its stream key, a partial line and the lines waiting to be read: a restore
    /// refuses more than the port ever buffers. (A re-seeded restore re-keys it afterwards.)
    fn check_saved(s: &SdkPort) -> Result<(), crate::devices::StateError> {
        for (what, len, max) in [
            ("bytes of a partial line", s.partial.len(), MAX_LINE),
            ("waiting lines", s.lines.len(), MAX_PENDING_LINES),
        ] {
            if len > max {
                return Err(crate::devices::StateError::Bounds {
                    device: "promise port",
                    what,
                    len,
                    max,
                });
            }
        }
        Ok(())
    }
}

crate::persist_registers!(SdkPort, SdkPort::check_saved);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_make_lines_and_random_words_follow_the_seed() {
        let mut p = SdkPort::new(RunSeed(1));
        for b in b"{\"a\":1}\nxy" {
            p.write(reg::TX, u32::from(*b), 7);
        }
        assert_eq!(p.take_lines(), vec![(7, b"{\"a\":1}".to_vec())]);
        assert!(p.take_lines().is_empty());
        let r1: Vec<u32> = (0..4).map(|_| p.read(reg::RANDOM)).collect();
        let mut q = SdkPort::new(RunSeed(1));
        let r2: Vec<u32> = (0..4).map(|_| q.read(reg::RANDOM)).collect();
        let mut o = SdkPort::new(RunSeed(2));
        let r3: Vec<u32> = (0..4).map(|_| o.read(reg::RANDOM)).collect();
        assert_eq!(r1, r2);
        assert_ne!(r1, r3);
    }
}
