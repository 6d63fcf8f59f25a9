//! Why a snapshot cannot be taken, or its point (`--snapshot-at`) is not one.

use super::WioError;
use std::path::PathBuf;

/// A snapshot that cannot be taken, or a snapshot point that does not parse.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// `--snapshot-at console:` with no text to look for.
    #[error("--snapshot-at console: needs text to look for, e.g. console:'wio-init: start'")]
    ConsoleNoText,
    /// `--snapshot-at` is none of the forms it takes.
    #[error("--snapshot-at {text:?}: expected a virtual time (2s, 1500ms, 250us, 1000ns), console:TEXT, guest or setup-complete")]
    BadPoint {
        /// The value as given.
        text: String,
    },
    /// A virtio device cannot save its state now (a riscv64 machine).
    #[error("cannot snapshot: {0}")]
    Devices(#[source] crate::devices::StateError),
    /// The platform's devices cannot save their state sections now (an x86-64 machine).
    #[error("cannot snapshot: {0}")]
    Sections(#[source] crate::snapshot::persist::StateError),
    /// A restore is given a disk but the snapshot has none.
    #[error("the snapshot has no disk; drop {} from the command line", .given.display())]
    NoDisk {
        /// The disk given.
        given: PathBuf,
    },
    /// The restore's disk cannot be opened.
    #[error("{source} (the snapshot was taken on {}; pass that image as DISK.img)", .saved.display())]
    Disk {
        /// The disk the snapshot was taken on.
        saved: PathBuf,
        /// Why the disk cannot be opened.
        #[source]
        source: Box<WioError>,
    },
    /// A machine's or a world's state could not be put into snapshot sections (wio's
    /// bug: every state it saves is one it can encode).
    #[error("cannot save the {what} state: {source}")]
    State {
        /// Whose state ("machine", "world").
        what: &'static str,
        /// What the encoder said.
        #[source]
        source: crate::snapshot::persist::StateError,
    },
}
