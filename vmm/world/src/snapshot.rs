//! World snapshots: every machine of a world, its switch and the frames in flight, taken
//! at a quantum boundary, in one versioned, checksummed file.
//!
//! The file is a [`wio_machines::snapshot::sections`] container (magic `WIOWORLD`) with the
//! sections `world` (seed, boundary, reason, where nodes are parked and which ended),
//! `scenario`, `switch`, `in-flight` (frames routed, not yet delivered), `trace` and, with an
//! external service, `peer`, with image nodes, `composer`, with several networks,
//! `networks`, with simulated dependencies, `dependencies`, with a host link, `host`
//! (postcard each), then `node.0`, `node.1`, ... in node order,
//! each a whole machine snapshot file (with its own sections and checksums).
//!
//! Written atomically like a machine snapshot (a temporary name, synced, renamed). Reading
//! checks the container, then every node's snapshot as `wio run --from` would, so a
//! damaged file is a one-line error that names the damaged section (or node).

use super::peer::{PeerState, PeerStats};
use super::scenario::Scenario;
use super::switch::SwitchState;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use wio_machines::error::{Result, SnapshotError, WioError};
use wio_machines::machine::{LoadedSnapshot, RunConfig};
use wio_machines::snapshot::persist::{StateError, StateSections};
use wio_machines::snapshot::sections::Format;
use wio_machines::snapshot::Snapshot;
use wio_machines::trace::TraceState;

/// First bytes of every world snapshot file.
pub use wio_machines::snapshot::WORLD_MAGIC as MAGIC;
/// The world snapshot format this wio writes and reads (what bumps which version: see
/// [`wio_machines::snapshot::sections`]). Major 2: the sections container (1 was one blob).
/// Minor 1: a node's disk may be an imported container image (`NodeDisk::Image`, a variant
/// added at the end: a 2.0 file reads as before; a wio that reads 2.0 only refuses a 2.1
/// file by its version instead of failing to decode it). Minor 2: the optional `composer`
/// section (the test composer's state; a 2.1 file has none: its world had no composer).
/// Minor 3: the optional `networks` section (which nodes reach each other, written only
/// for a world with several networks; a 2.2 file has none: its world had one). Minor 4:
/// the optional `dependencies` section (the simulated dependencies and their faults,
/// written only for a world that has some) and `host` (a recorded or replayed host link's
/// allow list and tape). Minor 5: the optional `node-isa` section (each node's ISA, written
/// only for a world with a node that has extensions beyond RV64GC; older files have none:
/// their nodes were all RV64GC). Minor 6: the optional `node-arch` section (each node's
/// architecture, written only for a world with an x86-64 node; older files have none: their
/// nodes were all riscv64).
pub const FORMAT: Format = Format {
    magic: MAGIC,
    major: 2,
    minor: 6,
    what: "world snapshot",
    first_major: 2,
};
/// Largest world state section (the scenario, the switch, frames in flight).
const MAX_STATE: usize = 256 << 20;

/// A frame on its way to a node when the snapshot was taken.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InFlight {
    /// The node it goes to.
    pub dst: usize,
    /// Virtual ns it arrives.
    pub at_ns: u64,
    /// The Ethernet frame.
    #[serde(with = "serde_bytes")]
    pub bytes: Vec<u8>,
}

/// Everything of a world besides its machines.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorldState {
    /// The wio version that wrote it.
    pub wio_version: String,
    /// The world's seed when it was taken.
    pub seed: u64,
    /// The quantum boundary it was taken at, virtual ns.
    pub at_ns: u64,
    /// Why it was taken.
    pub reason: String,
    /// The scenario (paths resolved when it was read).
    pub scenario: Scenario,
    /// The switch's streams and counters.
    pub switch: SwitchState,
    /// Frames routed but not yet delivered, in delivery order.
    pub in_flight: Vec<InFlight>,
    /// Where each node was parked.
    pub parked: Vec<Option<u64>>,
    /// Which nodes had declared their setup complete.
    pub setup_complete: Vec<bool>,
    /// The exit status of each node that had already ended.
    pub ended: Vec<Option<u32>>,
    /// The world trace's chain.
    pub trace: TraceState,
    /// The external service and what it did, when the world has one.
    pub peer: Option<(PeerState, PeerStats)>,
    /// The test composer, when the world has image nodes.
    pub composer: Option<crate::composer::Composer>,
    /// A recorded or replayed host link: its allow list and tape.
    pub host: Option<crate::hostlink::HostState>,
}

fn bad(path: &Path, reason: String) -> WioError {
    WioError::ArtifactFormat {
        what: "world snapshot",
        path: path.to_path_buf(),
        reason,
    }
}

/// The world's own fields besides its parts (section `world`).
#[derive(Serialize, Deserialize)]
struct WorldHead {
    wio_version: String,
    seed: u64,
    at_ns: u64,
    reason: String,
    parked: Vec<Option<u64>>,
    setup_complete: Vec<bool>,
    ended: Vec<Option<u32>>,
}

/// The sections of a world snapshot besides its nodes (`node.N`), in the order written.
mod section {
    pub const WORLD: &str = "world";
    pub const SCENARIO: &str = "scenario";
    pub const SWITCH: &str = "switch";
    pub const IN_FLIGHT: &str = "in-flight";
    pub const TRACE: &str = "trace";
    pub const PEER: &str = "peer";
    pub const COMPOSER: &str = "composer";
    pub const NETWORKS: &str = "networks";
    pub const DEPENDENCIES: &str = "dependencies";
    pub const HOST: &str = "host";
    pub const NODE_ISA: &str = "node-isa";
    /// Each node's architecture (written only when a node is x86-64).
    pub const NODE_ARCH: &str = "node-arch";
}

/// The world's state as sections, a part each.
fn state_sections(state: &WorldState) -> std::result::Result<StateSections, StateError> {
    let mut s = StateSections::default();
    s.put(
        section::WORLD,
        &WorldHead {
            wio_version: state.wio_version.clone(),
            seed: state.seed,
            at_ns: state.at_ns,
            reason: state.reason.clone(),
            parked: state.parked.clone(),
            setup_complete: state.setup_complete.clone(),
            ended: state.ended.clone(),
        },
    )?;
    s.put(section::SCENARIO, &state.scenario)?;
    s.put(section::SWITCH, &state.switch)?;
    s.put(section::IN_FLIGHT, &state.in_flight)?;
    s.put(section::TRACE, &state.trace)?;
    if let Some(peer) = &state.peer {
        s.put(section::PEER, peer)?;
    }
    if let Some(c) = &state.composer {
        s.put(section::COMPOSER, c)?;
    }
    if !state.scenario.networks.is_single() {
        s.put(section::NETWORKS, &state.scenario.networks)?;
    }
    if let Some(h) = &state.host {
        s.put(section::HOST, h)?;
    }
    if state.scenario.nodes.iter().any(|n| !n.isa.is_base()) {
        let isas: Vec<String> = state
            .scenario
            .nodes
            .iter()
            .map(|n| n.isa.to_string())
            .collect();
        s.put(section::NODE_ISA, &isas)?;
    }
    if state
        .scenario
        .nodes
        .iter()
        .any(|n| n.arch != wio_machines::machine::Arch::Riscv64)
    {
        let archs: Vec<&str> = state.scenario.nodes.iter().map(|n| n.arch.name()).collect();
        s.put(section::NODE_ARCH, &archs)?;
    }
    if !state.scenario.dependencies.is_empty() {
        let deps = (
            &state.scenario.dependencies,
            &state.scenario.dependency_faults,
        );
        s.put(section::DEPENDENCIES, &deps)?;
    }
    Ok(s)
}

/// Why a world snapshot's `node-isa` or `node-arch` section was refused.
#[derive(Debug, thiserror::Error)]
enum NodeListError {
    #[error("{0} node entries for {1} nodes")]
    Count(usize, usize),
    #[error("node architecture {0:?}: neither riscv64 nor x86_64")]
    Arch(String),
    #[error("node ISA {0:?}: {1}")]
    Parse(String, wio_machines::arch::riscv64::IsaError),
}

/// The world's state from its sections (each named in the error when missing or bad).
fn state_of(s: &StateSections) -> std::result::Result<WorldState, StateError> {
    let head: WorldHead = s.get(section::WORLD)?;
    let mut scenario: Scenario = s.get(section::SCENARIO)?;
    scenario.networks = s.optional(section::NETWORKS)?.unwrap_or_default();
    (scenario.dependencies, scenario.dependency_faults) =
        s.optional(section::DEPENDENCIES)?.unwrap_or_default();
    if let Some(isas) = s.optional::<Vec<String>>(section::NODE_ISA)? {
        let refused = |e| StateError::refused(section::NODE_ISA, e);
        if isas.len() != scenario.nodes.len() {
            return Err(refused(NodeListError::Count(
                isas.len(),
                scenario.nodes.len(),
            )));
        }
        for (node, isa) in scenario.nodes.iter_mut().zip(isas) {
            node.isa = isa
                .parse()
                .map_err(|e| refused(NodeListError::Parse(isa.clone(), e)))?;
        }
    }
    if let Some(archs) = s.optional::<Vec<String>>(section::NODE_ARCH)? {
        let refused = |e| StateError::refused(section::NODE_ARCH, e);
        if archs.len() != scenario.nodes.len() {
            return Err(refused(NodeListError::Count(
                archs.len(),
                scenario.nodes.len(),
            )));
        }
        for (node, name) in scenario.nodes.iter_mut().zip(archs) {
            node.arch = wio_machines::machine::Arch::from_name(&name)
                .ok_or_else(|| refused(NodeListError::Arch(name.clone())))?;
        }
    }
    Ok(WorldState {
        wio_version: head.wio_version,
        seed: head.seed,
        at_ns: head.at_ns,
        reason: head.reason,
        scenario,
        switch: s.get(section::SWITCH)?,
        in_flight: s.get(section::IN_FLIGHT)?,
        parked: head.parked,
        setup_complete: head.setup_complete,
        ended: head.ended,
        trace: s.get(section::TRACE)?,
        peer: s.optional(section::PEER)?,
        composer: s.optional(section::COMPOSER)?,
        host: s.optional(section::HOST)?,
    })
}

/// The bytes of a world snapshot file of `state` and its nodes' snapshots (node order).
pub fn encode(state: &WorldState, nodes: &[Snapshot]) -> Result<Vec<u8>> {
    let st = state_sections(state).map_err(|source| SnapshotError::State {
        what: "world",
        source,
    })?;
    let files: Vec<(String, Vec<u8>)> = nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (format!("node.{i}"), n.encode()))
        .collect();
    let mut sections: Vec<(&str, &[u8])> = st.iter().collect();
    sections.extend(files.iter().map(|(n, b)| (n.as_str(), b.as_slice())));
    Ok(FORMAT.encode(&sections))
}

/// Writes a world snapshot to `path` atomically; returns its size in bytes.
pub fn write(path: &Path, state: &WorldState, nodes: &[Snapshot]) -> Result<u64> {
    wio_machines::snapshot::write_atomic(path, &encode(state, nodes)?, "world snapshot")
}

/// Parses a world snapshot file's bytes: its state, its nodes' snapshots, its checksum.
pub fn decode(path: &Path, bytes: &[u8]) -> Result<(WorldState, Vec<Snapshot>, String)> {
    if !bytes.starts_with(MAGIC) {
        return Err(bad(
            path,
            if bytes.starts_with(wio_machines::snapshot::MAGIC) {
                "is a machine snapshot, not a world's; restore it with `wio run --from`".into()
            } else {
                "is not a wio world snapshot (no WIOWORLD header)".into()
            },
        ));
    }
    let file = FORMAT.decode(bytes).map_err(|e| bad(path, e.to_string()))?;
    type Parts<'a> = Vec<(&'a str, &'a [u8])>;
    let (own, rest): (Parts, Parts) = file
        .sections
        .into_iter()
        .partition(|(name, _)| !name.starts_with("node."));
    let size: usize = own.iter().map(|(_, b)| b.len()).sum();
    if size > MAX_STATE {
        return Err(bad(path, format!("has a world state of {size} bytes")));
    }
    let own = StateSections::from_parts(
        own.into_iter()
            .map(|(n, b)| (n.to_string(), b.to_vec()))
            .collect(),
    );
    let state = own
        .check_known(|n| {
            [
                section::WORLD,
                section::SCENARIO,
                section::SWITCH,
                section::IN_FLIGHT,
                section::TRACE,
                section::PEER,
                section::COMPOSER,
                section::NETWORKS,
                section::DEPENDENCIES,
                section::HOST,
                section::NODE_ISA,
                section::NODE_ARCH,
            ]
            .contains(&n)
        })
        .and_then(|()| state_of(&own))
        .map_err(|e| bad(path, e.to_string()))?;
    if rest.len() != state.scenario.nodes.len() {
        return Err(bad(
            path,
            format!(
                "holds {} machines for a world of {} nodes",
                rest.len(),
                state.scenario.nodes.len()
            ),
        ));
    }
    let mut nodes = Vec::new();
    for (i, (n, (name, bytes))) in state.scenario.nodes.iter().zip(rest).enumerate() {
        if name != format!("node.{i}") {
            return Err(bad(
                path,
                format!("has a `{name}` section where node {i} belongs"),
            ));
        }
        nodes.push(Snapshot::decode(&node_path(path, &n.name), bytes)?);
    }
    let sum = file.sha256;
    let fits = |v: usize| v == nodes.len();
    if !fits(state.parked.len())
        || !fits(state.setup_complete.len())
        || !fits(state.ended.len())
        || state.in_flight.iter().any(|f| f.dst >= nodes.len())
    {
        return Err(bad(
            path,
            "has a world state that does not fit its nodes".into(),
        ));
    }
    Ok((state, nodes, wio_machines::trace::hex(&sum)))
}

/// How a world snapshot's node is named in errors and summaries: `WORLD.snap#NAME`.
pub fn node_path(path: &Path, name: &str) -> PathBuf {
    PathBuf::from(format!("{}#{name}", path.display()))
}

/// A world snapshot read and checked once, ready to be restored any number of times
/// (each node's guest memory in a memfd every restore maps copy-on-write).
pub struct LoadedWorld {
    /// Where it was read from.
    pub path: PathBuf,
    /// The file's checksum.
    pub sha256: String,
    /// The world's state.
    pub state: WorldState,
    /// Each node's loaded snapshot, in node order.
    pub nodes: Vec<Arc<dyn LoadedSnapshot>>,
}

impl LoadedWorld {
    /// Reads and checks the world snapshot at `path`.
    pub fn load(path: &Path) -> Result<LoadedWorld> {
        let bytes = std::fs::read(path).map_err(|source| WioError::ArtifactIo {
            what: "world snapshot",
            path: path.to_path_buf(),
            source,
        })?;
        let (state, snaps, sha256) = decode(path, &bytes)?;
        drop(bytes);
        let cfg = RunConfig {
            seed_given: false,
            ..RunConfig::with_seed(0)
        };
        let mut nodes: Vec<Arc<dyn LoadedSnapshot>> = Vec::new();
        for (snap, n) in snaps.into_iter().zip(&state.scenario.nodes) {
            let p = node_path(path, &n.name);
            nodes.push(Arc::from(wio_machines::builder::from_snapshot(
                snap, &p, &cfg,
            )?));
        }
        Ok(LoadedWorld {
            path: path.to_path_buf(),
            sha256,
            state,
            nodes,
        })
    }

    /// Whether the file at `path` starts like a world snapshot.
    pub fn is_world(path: &Path) -> bool {
        use std::io::Read;
        let mut head = [0u8; 8];
        std::fs::File::open(path)
            .and_then(|mut f| f.read_exact(&mut head))
            .is_ok()
            && &head == MAGIC
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wio_machines::snapshot::PAGE;

    fn node(seed: u64) -> Snapshot {
        let mut ram = vec![0u8; 4 * PAGE as usize];
        ram[7] = seed as u8;
        wio_machines::snapshot::test_snapshot(&ram, seed, 5)
    }

    fn state() -> WorldState {
        let scenario =
            Scenario::parse("[peer]\n[[node]]\nname = \"a\"\nnetworks = [\"x\"]\n[[node]]\nname = \"b\"\nnetworks = [\"y\"]\n").unwrap();
        assert!(!scenario.networks.is_single());
        let switch = super::super::switch::Switch::new(
            wio_scheduler::RunSeed(1),
            vec![[0; 6]; 3],
            scenario.links.clone(),
            Vec::new(),
            Vec::new(),
        )
        .save();
        WorldState {
            wio_version: "test".into(),
            seed: 1,
            at_ns: 1_000,
            reason: "test".into(),
            scenario,
            switch,
            in_flight: vec![InFlight {
                dst: 1,
                at_ns: 1_200,
                bytes: vec![0xff; 60],
            }],
            parked: vec![None, Some(9)],
            setup_complete: vec![false, true],
            ended: vec![None, Some(0)],
            trace: wio_machines::snapshot::persist::Persist::save(
                &wio_machines::trace::Trace::new(),
            ),
            peer: Some((
                super::super::peer::Peer::new(
                    wio_scheduler::RunSeed(1),
                    &[],
                    &[],
                    None,
                    Vec::new(),
                )
                .save()
                .unwrap(),
                Default::default(),
            )),
            composer: Some(crate::composer::Composer::new(
                wio_scheduler::RunSeed(1),
                &[true, false],
            )),
            host: None,
        }
    }

    #[test]
    fn round_trips_and_refuses_damage_without_panicking() {
        let st = state();
        let nodes = [node(1), node(2)];
        let bytes = encode(&st, &nodes).unwrap();
        let p = Path::new("w.snap");
        let (got, snaps, sha) = decode(p, &bytes).unwrap();
        assert_eq!(got, st);
        assert_eq!(snaps.len(), 2);
        assert_eq!(snaps[1].meta.seed, 2);
        assert_eq!(sha.len(), 64);
        let err = |b: &[u8]| decode(p, b).unwrap_err().to_string();
        assert!(err(&bytes[..bytes.len() - 1]).contains("truncated"));
        assert!(err(b"WIOSNAP\0rest").contains("machine snapshot"));
        assert!(err(b"hello").contains("WIOWORLD"));
        let mut flipped = bytes.clone();
        flipped[30] ^= 1;
        assert!(err(&flipped).contains("checksum"));
        for n in 0..bytes.len() {
            assert!(decode(p, &bytes[..n]).is_err());
        }
        // A damaged part is named: the world's own sections and each node's file.
        let file = FORMAT.decode(&bytes).unwrap();
        let names: Vec<&str> = file.sections.iter().map(|(n, _)| *n).collect();
        assert_eq!(
            names,
            [
                "world",
                "scenario",
                "switch",
                "in-flight",
                "trace",
                "peer",
                "composer",
                "networks",
                "node.0",
                "node.1"
            ]
        );
        // A world on one network writes no `networks` section.
        let mut one = st.clone();
        one.scenario.networks = Default::default();
        let one_file = encode(&one, &nodes).unwrap();
        let (got, _, _) = decode(p, &one_file).unwrap();
        assert_eq!(got, one);
        assert!(FORMAT
            .decode(&one_file)
            .unwrap()
            .sections
            .iter()
            .all(|(n, _)| *n != "networks"));
        for (name, payload) in &file.sections {
            let at = payload.as_ptr() as usize - bytes.as_ptr() as usize + payload.len() / 2;
            let mut b = bytes.clone();
            b[at] ^= 0x08;
            let e = err(&b);
            assert!(
                e.contains(&format!("section `{name}` does not")),
                "{name}: {e}"
            );
        }
        // A valid envelope around a state that does not fit its nodes.
        let mut odd = st.clone();
        odd.ended.pop();
        assert!(decode(p, &encode(&odd, &nodes).unwrap()).is_err());
        assert!(decode(p, &encode(&st, &nodes[..1]).unwrap()).is_err());
    }
}
