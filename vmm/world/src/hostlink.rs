//! The world's host link (`wio sim --net host --allow ...`): the link itself, its tapes
//! and replays are `wio_machines::hostlink` (a single machine has one too); this module
//! fits it into a world: the peer it needs, the guests' host names, the stand-in
//! dependencies, and the configuration a tape is checked against.

pub use wio_machines::hostlink::*;

use crate::scenario::{Dependency, Scenario};
use wio_machines::error::Result;

/// The host link of a run of `s` with `seed` as `spec` asks: the peer it needs (added when
/// the scenario has none), the allowed names in the guests' hosts files, the tape checked
/// against this configuration (a replay) or started (a recording).
pub(crate) fn start(s: &mut Scenario, seed: u64, spec: &HostSpec) -> Result<HostLink> {
    let (replay, allow) = allowed(spec)?;
    if s.peer.is_none() {
        if s.nodes.iter().any(|n| n.name == "peer") {
            return Err(link_error("--net host needs the world's peer, named \"peer\" by default, and a node has that name: give the scenario a [peer] with another name".into()));
        }
        s.peer = Some("peer".into());
        // Its links are the file's default link (every node's link to itself is that).
        let default = s
            .links
            .first()
            .and_then(|r| r.first())
            .copied()
            .unwrap_or_default();
        for row in &mut s.links {
            row.push(default);
        }
        s.links.push(vec![default; s.links.len() + 1]);
    }
    for a in &allow {
        // A dependency of the same name and port is what the host stands in for (and what
        // answers a replay past its tape).
        let stands_in = |d: &Dependency| d.name == a.name && d.port == a.addr.port();
        if let Some(d) = s
            .dependencies
            .iter()
            .find(|d| d.name == a.name && !stands_in(d))
        {
            return Err(link_error(format!(
                "--allow {}: the dependency {} serves port {}; the host stands in for it only at that port (--allow {}=ADDR:{})",
                a.text(),
                d.name,
                d.port,
                d.name,
                d.port
            )));
        }
        let taken = s.nodes.iter().any(|n| n.name == a.name)
            || s.peer.as_deref() == Some(a.name.as_str())
            || s.dependencies
                .iter()
                .any(|d| d.port == a.addr.port() && !stands_in(d));
        if taken {
            return Err(link_error(format!(
                "--allow {}: its name or port is already a node's, the peer's or a dependency's",
                a.text()
            )));
        }
    }
    s.host_names = allow
        .iter()
        .filter(|a| s.dependencies.iter().all(|d| d.name != a.name))
        .map(|a| a.name.clone())
        .collect();
    let config = config_hash(&serde_json::to_vec(&*s).unwrap_or_default(), &allow);
    open(spec, replay, allow, seed, config)
}
