//! Why a world (`wio sim`) cannot run as asked, or cannot be snapshotted where asked.

use super::WioError;

/// Why a world cannot be snapshotted (or kept as a moment) at a boundary.
#[derive(Debug, thiserror::Error)]
pub enum NotHere {
    /// A node ended with an error: its state is not one to restore.
    #[error("node {0} has already ended with an error")]
    NodeFailed(String),
    /// The external service's input history (replayed on restore) is too long to keep.
    #[error("the peer's history outgrew what a snapshot keeps")]
    PeerHistory,
    /// A live host link (not recorded) cannot be replayed on restore.
    #[error(
        "the world's host link is live, not recorded: record it (--record TAPE) to snapshot it"
    )]
    HostLive,
}

/// A world that cannot run as its options, plan or path ask.
#[derive(Debug, thiserror::Error)]
pub enum WorldError {
    /// `--gdb NAME=ADDR` names no node.
    #[error("--gdb {name}={addr}: the scenario has no node {name:?} (nodes: {})", .nodes.join(", "))]
    NoGdbNode {
        /// The node named.
        name: String,
        /// The address to serve gdb on.
        addr: String,
        /// The scenario's nodes.
        nodes: Vec<String>,
    },
    /// `--gdb NAME=ADDR` names an x86-64 node.
    #[error("--gdb {name}={addr}: node {name:?} is an x86-64 machine; gdb debugs a world's riscv64 nodes (debug an x86-64 machine alone with wio run --gdb)")]
    GdbX86Node {
        /// The node named.
        name: String,
        /// The address to serve gdb on.
        addr: String,
    },
    /// A world fault plan names a node the world has not.
    #[error("the world fault plan names node {name:?}, which this world has not")]
    PlanNode {
        /// The node named.
        name: String,
    },
    /// A world fault plan has a fault before the snapshot it restores.
    #[error("the world fault plan has a fault at {at_ns} ns, before the snapshot ({from_ns} ns)")]
    PlanBefore {
        /// When the fault starts (virtual ns).
        at_ns: u64,
        /// The snapshot's point (virtual ns).
        from_ns: u64,
    },
    /// A world fault plan has a fault between nodes that does not fit the world.
    #[error("the world fault plan has a {kind} that does not fit this world: {what}")]
    PlanMisfit {
        /// The fault's kind.
        kind: String,
        /// The fault as the plan describes it.
        what: String,
    },
    /// The world cannot be snapshotted at the point asked.
    #[error("cannot take the world snapshot ({reason}): {source}; take it earlier")]
    Snapshot {
        /// Why the snapshot was to be taken.
        reason: String,
        /// Why it cannot be taken here.
        #[source]
        source: NotHere,
    },
    /// A node's machine did not boot or restore.
    #[error("node {name}: {source}")]
    NodeStart {
        /// The node.
        name: String,
        /// Why its machine did not start.
        #[source]
        source: Box<WioError>,
    },
    /// `--snapshot-at guest` for a world.
    #[error("--snapshot-at guest: a world is snapshotted whole, at a quantum boundary; use a time, console:TEXT or setup-complete")]
    SnapshotAtGuest,
    /// The host would not start a thread for the world's machines.
    #[error("cannot start a world thread: {source}")]
    ThreadSpawn {
        /// What the host said.
        #[source]
        source: std::io::Error,
    },
    /// A frame from the switch could not be handed to a machine's network port.
    #[error("network port: {source}")]
    Port {
        /// What the device said.
        #[source]
        source: wio_virtio_devices::DeviceError,
    },
    /// A replay did something its tape does not hold.
    #[error("the replay left its tape at {:.6} virtual s: {what}; the guests' requests are not those recorded (a changed guest or build: record the run again)", *.at_ns as f64 / 1e9)]
    TapeDiverged {
        /// When, virtual ns.
        at_ns: u64,
        /// What the guests did, and what the tape holds there.
        what: String,
    },
    /// The host link was asked for in a way this world cannot run.
    #[error("{0}")]
    HostLink(String),
    /// A thread running some of the world's machines stopped answering (it panicked).
    #[error("a world thread died{}; the run cannot go on", if *.booting { " while booting its machines" } else { "" })]
    ThreadDied {
        /// Whether it was still booting or restoring its machines.
        booting: bool,
    },
}
