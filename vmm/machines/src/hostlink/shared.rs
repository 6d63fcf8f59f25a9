//! A host link shared by a single machine's network peer (which serves it on its ports)
//! and the run around it (which stops at a replay's divergence, traces refused attempts,
//! ends the tape and reports what the link did). The peer's calls and the run's checks
//! are on one thread, one after the other: the lock only lets both hold the link.

use super::{HostLink, HostStats};
use crate::error::{Result, WioError};
use std::sync::{Arc, Mutex};
use wio_virtio_devices::net::stack::{AppAction, TcpApp};

/// A host link both the network device and the run hold.
#[derive(Clone)]
pub struct SharedLink(Arc<Mutex<HostLink>>);

impl std::fmt::Debug for SharedLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SharedLink")
    }
}

impl SharedLink {
    /// `link`, to share.
    pub fn new(link: HostLink) -> SharedLink {
        SharedLink(Arc::new(Mutex::new(link)))
    }

    fn with<R>(&self, f: impl FnOnce(&mut HostLink) -> R) -> R {
        // A panic while it was held ends the run anyway; the link is still whole.
        let mut g = self.0.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut g)
    }

    /// Where a replay first left its tape, or a recording's write error.
    pub fn take_failure(&self) -> Option<WioError> {
        self.with(HostLink::take_failure)
    }

    /// Refused attempts since the last call (virtual ns, port).
    pub fn take_refused(&self) -> Vec<(u64, u16)> {
        self.with(HostLink::take_refused)
    }

    /// What it did so far.
    pub fn stats(&self) -> HostStats {
        self.with(|h| h.stats().clone())
    }

    /// The allowed destinations' names.
    pub fn names(&self) -> Vec<String> {
        self.with(|h| h.names())
    }

    /// Ends a recording (its tape's end line).
    pub fn finish(&self) -> Result<()> {
        self.with(HostLink::finish)
    }
}

impl TcpApp for SharedLink {
    fn ports(&self) -> Vec<u16> {
        self.with(|h| h.ports())
    }

    fn refuse(&mut self, port: u16, from: ([u8; 4], u16), now_ns: u64) -> bool {
        self.with(|h| h.refuse(port, from, now_ns))
    }

    fn stray(&mut self, port: u16, now_ns: u64) {
        self.with(|h| h.stray(port, now_ns));
    }

    fn opened(&mut self, conn: u64, port: u16, from: ([u8; 4], u16), now_ns: u64) {
        self.with(|h| h.opened(conn, port, from, now_ns));
    }

    fn data(&mut self, conn: u64, bytes: &[u8], now_ns: u64) {
        self.with(|h| h.data(conn, bytes, now_ns));
    }

    fn closed(&mut self, conn: u64, now_ns: u64) {
        self.with(|h| h.closed(conn, now_ns));
    }

    fn due(&mut self, now_ns: u64) -> Vec<AppAction> {
        self.with(|h| h.due(now_ns))
    }

    fn wake(&self) -> Option<u64> {
        self.with(|h| h.wake())
    }

    fn settings(&mut self, bytes: &[u8]) {
        self.with(|h| h.settings(bytes));
    }
}
