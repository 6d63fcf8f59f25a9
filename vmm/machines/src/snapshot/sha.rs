//! SHA-256 whose running state can be saved: the console digest of a run
//! continues across a snapshot and restore exactly as if the run had never
//! stopped. (The `sha2` hashers cannot expose their state; their block
//! function can, so this keeps the state and the partial block itself.)

use serde::{Deserialize, Serialize};

const IV: [u32; 8] = [
    0x6a09_e667,
    0xbb67_ae85,
    0x3c6e_f372,
    0xa54f_f53a,
    0x510e_527f,
    0x9b05_688c,
    0x1f83_d9ab,
    0x5be0_cd19,
];

/// A streaming SHA-256 with serializable state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResumableSha256 {
    state: [u32; 8],
    /// Bytes of the current, incomplete 64-byte block (always fewer than 64).
    partial: Vec<u8>,
    /// Total bytes hashed.
    len: u64,
}

impl Default for ResumableSha256 {
    fn default() -> Self {
        ResumableSha256 {
            state: IV,
            partial: Vec::with_capacity(64),
            len: 0,
        }
    }
}

fn compress(state: &mut [u32; 8], block: &[u8]) {
    let mut b = [0u8; 64];
    b.copy_from_slice(block);
    sha2::compress256(state, &[b.into()]);
}

impl ResumableSha256 {
    /// Hashes `data`.
    pub fn update(&mut self, mut data: &[u8]) {
        self.len = self.len.wrapping_add(data.len() as u64);
        if !self.partial.is_empty() {
            let take = (64 - self.partial.len()).min(data.len());
            self.partial.extend_from_slice(&data[..take]);
            data = &data[take..];
            if self.partial.len() < 64 {
                return;
            }
            let block = std::mem::take(&mut self.partial);
            compress(&mut self.state, &block);
            self.partial = block;
            self.partial.clear();
        }
        let mut blocks = data.chunks_exact(64);
        for block in &mut blocks {
            compress(&mut self.state, block);
        }
        self.partial.extend_from_slice(blocks.remainder());
    }

    /// The digest of everything hashed so far (the hasher goes on unchanged).
    pub fn digest(&self) -> [u8; 32] {
        let mut state = self.state;
        let mut tail = self.partial.clone();
        tail.push(0x80);
        while tail.len() % 64 != 56 {
            tail.push(0);
        }
        tail.extend_from_slice(&self.len.wrapping_mul(8).to_be_bytes());
        for block in tail.chunks_exact(64) {
            compress(&mut state, block);
        }
        let mut out = [0u8; 32];
        for (o, w) in out.chunks_exact_mut(4).zip(state) {
            o.copy_from_slice(&w.to_be_bytes());
        }
        out
    }

    /// Whether a decoded state is one this type can be in.
    pub fn is_valid(&self) -> bool {
        self.partial.len() < 64 && self.len % 64 == self.partial.len() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::{Digest, Sha256};

    #[test]
    fn matches_sha256_for_any_split() {
        let data: Vec<u8> = (0..1000u32).map(|i| (i * 7 + i / 13) as u8).collect();
        for split in [0, 1, 55, 56, 63, 64, 65, 127, 128, 500, 1000] {
            for len in [0, 3, 64, 119, 120, 1000] {
                let len = len.min(data.len());
                let split = split.min(len);
                let mut h = ResumableSha256::default();
                h.update(&data[..split]);
                let saved = h.clone();
                let mut h = saved;
                h.update(&data[split..len]);
                assert!(h.is_valid());
                assert_eq!(h.digest(), <[u8; 32]>::from(Sha256::digest(&data[..len])));
            }
        }
    }
}
