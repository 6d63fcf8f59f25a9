//! A world's networks (compose's `networks`; `networks = [...]` on a TOML world's
//! `[[node]]`): which ports of the world's one switch reach each other.
//!
//! A node is on the networks it names, or on `default` when it names none (as a compose
//! service without `networks` is on the project's default network). Two nodes exchange
//! frames only when they share a network: the switch hands a broadcast only to the nodes
//! that share one with its sender, and a frame for the MAC address of a node that shares
//! none is a frame to an unknown destination. Each guest's /etc/hosts names only the nodes
//! it shares a network with (and the peer), so a service on another network neither
//! resolves nor answers, as under a container engine. The peer (`[peer]`), a service
//! outside the nodes, is on every network.
//!
//! What differs from a container engine: a node keeps its one address (10.0.0.(i+1)) and
//! its one interface on every network it joins, where an engine gives a container an
//! interface and an address per network; a service that binds one network's address only
//! is not modelled.
//!
//! A world whose nodes all share a network (every world without `networks`) has an empty
//! [`Networks`]: its scenario encodes as before, and its snapshots hold no `networks`
//! section, so their bytes are unchanged.

use serde::{Deserialize, Serialize};

/// Most networks in one world.
pub const MAX_NETWORKS: usize = 16;
/// The network of a node that names none.
pub const DEFAULT: &str = "default";

/// The networks of a world's nodes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Networks {
    /// Node i's networks (sorted), for every node; empty when every pair of nodes shares
    /// one (a world on one network).
    nodes: Vec<Vec<String>>,
}

impl Networks {
    /// The networks of each node in order (an empty list: [`DEFAULT`]); empty when every
    /// pair of nodes shares one.
    pub fn new(per_node: Vec<Vec<String>>) -> Networks {
        let nodes: Vec<Vec<String>> = per_node
            .into_iter()
            .map(|mut n| {
                if n.is_empty() {
                    n.push(DEFAULT.to_string());
                }
                n.sort();
                n.dedup();
                n
            })
            .collect();
        let all_share = nodes
            .iter()
            .all(|a| nodes.iter().all(|b| a.iter().any(|x| b.contains(x))));
        if all_share {
            Networks::default()
        } else {
            Networks { nodes }
        }
    }

    /// Whether every port reaches every other (one network).
    pub fn is_single(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Whether ports `a` and `b` exchange frames: nodes when they share a network; a port
    /// past the nodes (the peer) reaches every node.
    pub fn reach(&self, a: usize, b: usize) -> bool {
        match (self.nodes.get(a), self.nodes.get(b)) {
            (Some(x), Some(y)) => x.iter().any(|n| y.contains(n)),
            _ => true,
        }
    }

    /// Node `i`'s networks (empty when the world has one).
    pub fn of(&self, i: usize) -> &[String] {
        self.nodes.get(i).map_or(&[], Vec::as_slice)
    }
}

/// Whether `name` may name a network: letters, digits, '-', '_' or '.', starting with a
/// letter or digit, at most 64 bytes (compose's network names).
pub(super) fn name_ok(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
        && name.as_bytes()[0].is_ascii_alphanumeric()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nets(v: &[&[&str]]) -> Networks {
        Networks::new(
            v.iter()
                .map(|n| n.iter().map(|s| s.to_string()).collect())
                .collect(),
        )
    }

    #[test]
    fn nodes_reach_each_other_only_through_a_shared_network() {
        // front - api - db: api is on both.
        let n = nets(&[&["front"], &["back", "front"], &["back"]]);
        assert!(!n.is_single());
        assert!(n.reach(0, 1) && n.reach(1, 0) && n.reach(1, 2));
        assert!(!n.reach(0, 2) && !n.reach(2, 0));
        // The peer (port 3) reaches every node.
        assert!((0..3).all(|i| n.reach(i, 3) && n.reach(3, i)));
        assert_eq!(n.of(1), ["back".to_string(), "front".to_string()]);
        // A node that names none is on `default`.
        let n = nets(&[&[], &["default", "x"], &["x"]]);
        assert!(n.reach(0, 1) && !n.reach(0, 2));
    }

    #[test]
    fn a_world_whose_nodes_all_share_a_network_is_one_network() {
        assert!(nets(&[&[], &[], &[]]).is_single());
        assert!(nets(&[&["a"], &["a", "b"], &["a"]]).is_single());
        assert_eq!(nets(&[&["a"], &["a"]]), Networks::default());
        assert!(!nets(&[&["a"], &["b"]]).is_single());
    }

    #[test]
    fn network_names_are_compose_names() {
        assert!(name_ok("back-end_1.x") && name_ok("1net"));
        assert!(!name_ok("") && !name_ok("-x") && !name_ok("a b") && !name_ok(&"n".repeat(65)));
    }
}
