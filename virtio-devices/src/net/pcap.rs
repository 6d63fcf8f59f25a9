//! A pcap writer with nanosecond timestamps (magic 0xa1b23c4d): every frame of
//! the simulated network with its *virtual* time, readable by tcpdump and Wireshark.

use std::io::{self, Write};

const MAGIC_NANOS: u32 = 0xa1b2_3c4d;
const LINKTYPE_ETHERNET: u32 = 1;
const SNAPLEN: u32 = 65_535;

/// A capture being written.
pub struct Pcap {
    out: Box<dyn Write>,
}

impl Pcap {
    /// Starts a capture on `out` (writes the global header).
    pub fn new(mut out: Box<dyn Write>) -> io::Result<Pcap> {
        let mut h = Vec::with_capacity(24);
        h.extend_from_slice(&MAGIC_NANOS.to_le_bytes());
        h.extend_from_slice(&2u16.to_le_bytes());
        h.extend_from_slice(&4u16.to_le_bytes());
        h.extend_from_slice(&0i32.to_le_bytes());
        h.extend_from_slice(&0u32.to_le_bytes());
        h.extend_from_slice(&SNAPLEN.to_le_bytes());
        h.extend_from_slice(&LINKTYPE_ETHERNET.to_le_bytes());
        out.write_all(&h)?;
        Ok(Pcap { out })
    }

    /// Records `frame` at virtual time `ns` (since the run's epoch).
    pub fn record(&mut self, ns: u64, frame: &[u8]) -> io::Result<()> {
        let len = frame.len().min(SNAPLEN as usize);
        let mut r = Vec::with_capacity(16 + len);
        r.extend_from_slice(&((ns / 1_000_000_000) as u32).to_le_bytes());
        r.extend_from_slice(&((ns % 1_000_000_000) as u32).to_le_bytes());
        r.extend_from_slice(&(len as u32).to_le_bytes());
        r.extend_from_slice(&(frame.len() as u32).to_le_bytes());
        r.extend_from_slice(&frame[..len]);
        self.out.write_all(&r)
    }

    /// Flushes the capture.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}
