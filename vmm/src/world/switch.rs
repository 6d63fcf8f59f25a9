//! The world's switch: frames a node's guest sent leave through its machine's network
//! port and reach the node whose MAC address they name (broadcast and multicast: every
//! other node) after the link's latency, plus a jitter drawn per frame, unless the link
//! loses them; a link may also duplicate them. Draws come from the switch's own stream
//! (`world/switch`) in a fixed order (nodes in order, frames in the order sent), so what
//! arrives where and when is a function of the seed.

use super::scenario::{Degrade, LinkSpec, Partition};
use serde::{Deserialize, Serialize};
use wio_scheduler::{RunSeed, SavedStream, Stream};
use wio_virtio_devices::Frame;

/// What the switch did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SwitchStats {
    /// Frames the nodes sent.
    pub sent: u64,
    /// Copies handed to destination nodes.
    pub delivered: u64,
    /// Copies the links lost.
    pub lost: u64,
    /// Extra copies the links made.
    pub duplicated: u64,
    /// Frames to a MAC address no node has.
    pub unknown_destination: u64,
    /// Copies a partition dropped.
    pub partitioned: u64,
    /// Copies sent on a degraded link.
    pub degraded: u64,
    /// Copies for nodes that had already ended.
    pub to_ended_nodes: u64,
}

/// A frame on its way: when and where it arrives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    /// Virtual ns it arrives.
    pub at_ns: u64,
    /// Virtual ns it was sent.
    pub sent_ns: u64,
    /// The node that sent it.
    pub src: usize,
    /// The order the switch took it in (ties in time go by source, then this).
    pub seq: u64,
    /// The node it arrives at.
    pub dst: usize,
    /// The Ethernet frame.
    pub bytes: Vec<u8>,
}

/// The switch.
pub struct Switch {
    macs: Vec<[u8; 6]>,
    links: Vec<Vec<LinkSpec>>,
    partitions: Vec<Partition>,
    /// Degraded links and the stream of each (`world/degrade-<i>`: a degradation's draws
    /// shift no other).
    degrades: Vec<(Degrade, Stream)>,
    stream: Stream,
    seq: u64,
    /// Counters.
    pub stats: SwitchStats,
    /// When kept (a timeline is drawn): every copy the links dropped.
    pub drops: Option<Vec<Dropped>>,
}

/// A copy of a frame the switch dropped, for timelines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dropped {
    /// The sender.
    pub src: usize,
    /// The node it was for.
    pub dst: usize,
    /// Virtual ns it was sent.
    pub at_ns: u64,
    /// "partition" or "loss".
    pub why: &'static str,
}

/// What a world snapshot keeps of the switch (its links come from the scenario).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SwitchState {
    stream: SavedStream,
    degrades: Vec<SavedStream>,
    seq: u64,
    stats: SwitchStats,
}

/// The stream of degradation `i`: the scenario's own by their index (`world/degrade-i`),
/// drawn or planned ones by their start (`world/degrade@NS`), so removing one (shrinking
/// a plan) shifts no other's draws.
fn degrade_stream(i: usize, d: &Degrade) -> String {
    if d.drawn {
        format!("world/degrade@{}", d.from_ns)
    } else {
        format!("world/degrade-{i}")
    }
}

/// Node `i`'s MAC address.
pub fn mac_of(i: usize) -> [u8; 6] {
    [0x52, 0x54, 0x00, 0x0a, (i >> 8) as u8, (i & 0xff) as u8 + 1]
}

impl Switch {
    /// A switch between ports of these MAC addresses with these links (`links[i][j]`:
    /// from i to j).
    pub fn new(
        seed: RunSeed,
        macs: Vec<[u8; 6]>,
        links: Vec<Vec<LinkSpec>>,
        partitions: Vec<Partition>,
        degrades: Vec<Degrade>,
    ) -> Switch {
        let degrades = degrades
            .into_iter()
            .enumerate()
            .map(|(i, d)| {
                let stream = seed.stream(&degrade_stream(i, &d));
                (d, stream)
            })
            .collect();
        Switch {
            macs,
            links,
            partitions,
            degrades,
            stream: seed.stream("world/switch"),
            seq: 0,
            stats: SwitchStats::default(),
            drops: None,
        }
    }

    /// The switch's state for a world snapshot.
    pub fn save(&self) -> SwitchState {
        SwitchState {
            stream: self.stream.save(),
            degrades: self.degrades.iter().map(|(_, s)| s.save()).collect(),
            seq: self.seq,
            stats: self.stats.clone(),
        }
    }

    /// The switch a world snapshot recorded, between ports of these MAC addresses with
    /// these links; with a `reseed` other than the snapshot's seed its streams are re-keyed
    /// from it (the past is shared, the future differs; degradations drawn again get fresh
    /// streams).
    pub fn resume(
        state: &SwitchState,
        macs: Vec<[u8; 6]>,
        links: Vec<Vec<LinkSpec>>,
        partitions: Vec<Partition>,
        degrades: Vec<Degrade>,
        reseed: Option<RunSeed>,
    ) -> Switch {
        let fresh = reseed.unwrap_or(RunSeed(state.stream.seed));
        let mut s = Switch::new(fresh, macs, links, partitions, degrades);
        for (_, stream) in s.degrades.iter_mut() {
            if let Some(saved) = state.degrades.iter().find(|x| x.name == stream.name()) {
                *stream = Stream::resume(saved, reseed);
            }
        }
        s.stream = Stream::resume(&state.stream, reseed);
        s.seq = state.seq;
        s.stats = state.stats.clone();
        s
    }

    fn dropped(&mut self, src: usize, dst: usize, at_ns: u64, why: &'static str) {
        if let Some(d) = self.drops.as_mut() {
            d.push(Dropped {
                src,
                dst,
                at_ns,
                why,
            });
        }
    }

    /// Routes a frame node `src` sent; its copies go to `out`.
    pub fn route(&mut self, src: usize, frame: Frame, out: &mut Vec<Delivery>) {
        self.stats.sent += 1;
        let Some(dst_mac) = frame.bytes.get(..6) else {
            self.stats.unknown_destination += 1;
            return;
        };
        let group = dst_mac[0] & 1 == 1;
        let targets: Vec<usize> = if group {
            (0..self.macs.len()).filter(|d| *d != src).collect()
        } else {
            self.macs
                .iter()
                .position(|m| m == dst_mac)
                .into_iter()
                .collect()
        };
        if targets.is_empty() && !group {
            self.stats.unknown_destination += 1;
        }
        for dst in targets {
            let Some(link) = self.links.get(src).and_then(|r| r.get(dst)).copied() else {
                continue;
            };
            // A partition drops what is sent across it while it lasts (no draw).
            if self
                .partitions
                .iter()
                .any(|p| p.cuts(src, dst, frame.at_ns))
            {
                self.stats.partitioned += 1;
                self.dropped(src, dst, frame.at_ns, "partition");
                continue;
            }
            // Degradations in force: extra delay and loss, each from its own stream.
            let mut extra = 0u64;
            let mut degraded_loss = false;
            for (d, stream) in self.degrades.iter_mut() {
                if !d.hits(src, dst, frame.at_ns) {
                    continue;
                }
                self.stats.degraded += 1;
                extra = extra.saturating_add(d.latency_ns);
                if d.jitter_ns > 0 {
                    extra = extra.saturating_add(stream.below(d.jitter_ns + 1));
                }
                if d.loss_ppm > 0 && stream.below(1_000_000) < d.loss_ppm {
                    degraded_loss = true;
                }
            }
            if degraded_loss {
                self.stats.lost += 1;
                self.dropped(src, dst, frame.at_ns, "loss");
                continue;
            }
            if link.loss_ppm > 0 && self.stream.below(1_000_000) < link.loss_ppm {
                self.stats.lost += 1;
                self.dropped(src, dst, frame.at_ns, "loss");
                continue;
            }
            let copies =
                if link.duplicate_ppm > 0 && self.stream.below(1_000_000) < link.duplicate_ppm {
                    self.stats.duplicated += 1;
                    2
                } else {
                    1
                };
            for _ in 0..copies {
                let jitter = if link.jitter_us > 0 {
                    self.stream.below(link.jitter_us * 1_000 + 1)
                } else {
                    0
                };
                self.seq += 1;
                out.push(Delivery {
                    at_ns: frame.at_ns + link.latency_us * 1_000 + jitter + extra,
                    sent_ns: frame.at_ns,
                    src,
                    seq: self.seq,
                    dst,
                    bytes: frame.bytes.clone(),
                });
            }
        }
    }
}
