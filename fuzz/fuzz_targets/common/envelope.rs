//! What the file targets share: a body in a valid snapshot envelope.

/// `body` in a valid snapshot envelope: magic, version, total length, checksum.
pub fn envelope(magic: &[u8; 8], version: u32, body: &[u8]) -> Vec<u8> {
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
