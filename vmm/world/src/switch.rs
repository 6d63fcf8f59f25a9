//! The world's switch: frames a node's guest sent leave through its machine's network
//! port and reach the node whose MAC address they name (broadcast and multicast: every
//! other node) after the link's latency, plus a jitter drawn per frame, unless the link
//! loses them; a link may also duplicate them. Draws come from the switch's own stream
//! (`world/switch`) in a fixed order (nodes in order, frames in the order sent), so what
//! arrives where and when is a function of the seed.

use super::scenario::{Degrade, LinkSpec, Networks, Partition};
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
    /// Frames to a MAC address no node on the sender's networks has.
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
    /// Windows [from, until) in which no drawn partition or degradation is in force or
    /// starts (the test composer's; the world sets them again on restore).
    quiet: Vec<(u64, u64)>,
    /// Which ports reach each other (a world's networks; from the scenario).
    networks: Networks,
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
            quiet: Vec::new(),
            networks: Networks::default(),
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

    /// The switch with these networks: frames pass only between ports that share one
    /// (default: one network, every port reaches every other).
    pub fn with_networks(mut self, networks: Networks) -> Switch {
        self.networks = networks;
        self
    }

    /// From now on no drawn partition or degradation is in force in these windows
    /// [from, until), nor does one that starts in them ever take effect (the test
    /// composer holds faults off).
    pub fn set_quiet(&mut self, windows: &[(u64, u64)]) {
        self.quiet = windows.to_vec();
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
        // Only ports on a network of the sender's see the frame.
        let targets: Vec<usize> = if group {
            (0..self.macs.len())
                .filter(|d| *d != src && self.networks.reach(src, *d))
                .collect()
        } else {
            self.macs
                .iter()
                .position(|m| m == dst_mac)
                .filter(|d| self.networks.reach(src, *d))
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
            let quiet = &self.quiet;
            // A drawn fault is not in force while faults are held off, nor does one that
            // would start then ever start.
            let at = frame.at_ns;
            let held = |drawn: bool, from: u64| {
                drawn
                    && (crate::composer::in_quiet(quiet, from)
                        || crate::composer::in_quiet(quiet, at))
            };
            if self
                .partitions
                .iter()
                .any(|p| !held(p.drawn, p.from_ns) && p.cuts(src, dst, frame.at_ns))
            {
                self.stats.partitioned += 1;
                self.dropped(src, dst, frame.at_ns, "partition");
                continue;
            }
            // Degradations in force: extra delay and loss, each from its own stream.
            let mut extra = 0u64;
            let mut degraded_loss = false;
            for (d, stream) in self.degrades.iter_mut() {
                if held(d.drawn, d.from_ns) || !d.hits(src, dst, frame.at_ns) {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A frame from a node to node `dst` (by MAC), sent at `at_ns`.
    fn frame(dst: usize, at_ns: u64) -> Frame {
        let mut bytes = mac_of(dst).to_vec();
        bytes.extend_from_slice(&[0u8; 54]);
        Frame { at_ns, bytes }
    }

    fn links(n: usize, spec: LinkSpec) -> Vec<Vec<LinkSpec>> {
        vec![vec![spec; n]; n]
    }

    fn switch(seed: u64, n: usize, spec: LinkSpec, p: Vec<Partition>, d: Vec<Degrade>) -> Switch {
        Switch::new(
            RunSeed(seed),
            (0..n).map(mac_of).collect(),
            links(n, spec),
            p,
            d,
        )
    }

    /// Frames pass only between ports that share a network: a broadcast reaches those, a
    /// frame for another network's node is to an unknown destination; the peer's port
    /// (past the nodes) reaches every node.
    #[test]
    fn frames_stay_on_their_networks() {
        let nets = Networks::new(vec![
            vec!["front".into()],
            vec!["front".into(), "back".into()],
            vec!["back".into()],
        ]);
        let mut s = switch(1, 4, LinkSpec::default(), Vec::new(), Vec::new()).with_networks(nets);
        let mut out = Vec::new();
        let mut broadcast = frame(0, 0);
        broadcast.bytes[..6].copy_from_slice(&[0xff; 6]);
        s.route(0, broadcast.clone(), &mut out);
        assert_eq!(out.iter().map(|d| d.dst).collect::<Vec<_>>(), vec![1, 3]);
        out.clear();
        s.route(2, broadcast, &mut out);
        assert_eq!(out.iter().map(|d| d.dst).collect::<Vec<_>>(), vec![1, 3]);
        out.clear();
        s.route(0, frame(2, 10), &mut out);
        assert!(out.is_empty());
        assert_eq!(s.stats.unknown_destination, 1);
        for (src, dst) in [(0, 1), (1, 2), (3, 0), (2, 3)] {
            s.route(src, frame(dst, 20), &mut out);
        }
        assert_eq!(out.len(), 4);
        assert_eq!(s.stats.unknown_destination, 1);
    }

    /// Latency and jitter bound every arrival; broadcasts reach every other node; unknown
    /// addresses are counted; ties in time go by source, then the order taken.
    #[test]
    fn frames_arrive_after_their_latency_in_a_total_order() {
        let spec = LinkSpec {
            latency_us: 200,
            jitter_us: 50,
            ..LinkSpec::default()
        };
        let mut s = switch(1, 3, spec, Vec::new(), Vec::new());
        let mut out = Vec::new();
        for i in 0..100u64 {
            s.route(
                (i % 3) as usize,
                frame(((i + 1) % 3) as usize, 1_000 * i),
                &mut out,
            );
        }
        assert_eq!(out.len(), 100);
        for d in &out {
            let delay = d.at_ns - d.sent_ns;
            assert!((200_000..=250_000).contains(&delay), "{delay}");
            assert_ne!(d.src, d.dst);
        }
        let jitters: std::collections::BTreeSet<u64> =
            out.iter().map(|d| d.at_ns - d.sent_ns).collect();
        assert!(jitters.len() > 10, "jitter drawn per frame");
        let mut broadcast = frame(0, 5);
        broadcast.bytes[..6].copy_from_slice(&[0xff; 6]);
        let mut b = Vec::new();
        s.route(1, broadcast, &mut b);
        assert_eq!(b.iter().map(|d| d.dst).collect::<Vec<_>>(), [0, 2]);
        s.route(0, frame(7, 5), &mut b);
        assert_eq!(s.stats.unknown_destination, 1);
        // The world sorts by (arrival, source, sequence): a total order, sequences unique.
        let mut keys: Vec<(u64, usize, u64)> =
            out.iter().map(|d| (d.at_ns, d.src, d.seq)).collect();
        keys.sort();
        keys.dedup_by_key(|k| k.2);
        assert_eq!(keys.len(), 100);
    }

    /// A partition drops exactly what is sent across it while it lasts (one way: only from
    /// group 0 to group 1), drawing nothing; the same seed routes the same, another seed
    /// differently.
    #[test]
    fn partitions_cut_their_interval_and_draws_are_the_seeds() {
        let spec = LinkSpec {
            latency_us: 100,
            jitter_us: 20,
            loss_ppm: 100_000,
            duplicate_ppm: 100_000,
        };
        let cut = |one_way| Partition {
            from_ns: 10_000,
            until_ns: 20_000,
            group_of: vec![Some(0), Some(1), None],
            one_way,
            drawn: false,
        };
        let run = |seed: u64, parts: Vec<Partition>| {
            let mut s = switch(seed, 3, spec, parts, Vec::new());
            let mut out = Vec::new();
            for t in (0..30_000).step_by(500) {
                s.route(0, frame(1, t), &mut out);
                s.route(1, frame(0, t), &mut out);
                s.route(2, frame(0, t), &mut out);
            }
            (out, s.stats)
        };
        let (both, stats) = run(3, vec![cut(false)]);
        assert!(!both
            .iter()
            .any(|d| (10_000..20_000).contains(&d.sent_ns) && d.src != 2));
        assert!(both
            .iter()
            .any(|d| (10_000..20_000).contains(&d.sent_ns) && d.src == 2));
        assert_eq!(
            stats.partitioned,
            2 * 20,
            "20 sends each way in the interval"
        );
        assert!(stats.lost > 0 && stats.duplicated > 0);
        let (one, _) = run(3, vec![cut(true)]);
        assert!(one
            .iter()
            .any(|d| (10_000..20_000).contains(&d.sent_ns) && d.src == 1 && d.dst == 0));
        assert!(!one
            .iter()
            .any(|d| (10_000..20_000).contains(&d.sent_ns) && d.src == 0 && d.dst == 1));
        assert_eq!(run(3, vec![cut(false)]).0, both, "one seed, one routing");
        assert_ne!(
            run(4, vec![cut(false)]).0,
            both,
            "another seed, other draws"
        );
    }

    /// A degraded link adds its latency only while it lasts and only on its pair; its draws
    /// come from its own stream, so adding it changes no other link's draws.
    /// While the test composer holds faults off, a drawn partition is not in force (one in
    /// force lifts for the window) and one that would start in the window never does; a
    /// partition the scenario itself names is kept.
    #[test]
    fn quiet_windows_lift_drawn_partitions_only() {
        let cut = |from_ns, until_ns, drawn| Partition {
            from_ns,
            until_ns,
            group_of: vec![Some(0), Some(1)],
            one_way: false,
            drawn,
        };
        let sent = |parts: Vec<Partition>, quiet: &[(u64, u64)]| {
            let mut s = switch(1, 2, LinkSpec::default(), parts, Vec::new());
            s.set_quiet(quiet);
            let mut out = Vec::new();
            let times = [5_000, 15_000, 25_000, 35_000, 45_000];
            for t in times {
                s.route(0, frame(1, t), &mut out);
            }
            times
                .iter()
                .map(|t| out.iter().any(|d| d.sent_ns == *t))
                .collect::<Vec<bool>>()
        };
        // In force 0..30 us, quiet 10..20 us; another would start at 40 us, inside 38..50.
        let drawn = vec![cut(0, 30_000, true), cut(40_000, 60_000, true)];
        let quiet = [(10_000, 20_000), (38_000, 50_000)];
        assert_eq!(sent(drawn.clone(), &[]), [false, false, false, true, false]);
        assert_eq!(sent(drawn, &quiet), [false, true, false, true, true]);
        let named = vec![cut(0, 30_000, false)];
        assert_eq!(sent(named, &quiet), [false, false, false, true, true]);
    }

    #[test]
    fn a_degradation_delays_its_link_only_and_shifts_no_other_draw() {
        let spec = LinkSpec {
            latency_us: 100,
            jitter_us: 30,
            ..LinkSpec::default()
        };
        let slow = Degrade {
            from_ns: 0,
            until_ns: 1_000_000,
            between: Some((0, 1)),
            latency_ns: 5_000_000,
            jitter_ns: 1_000,
            loss_ppm: 0,
            drawn: false,
        };
        let run = |d: Vec<Degrade>| {
            let mut s = switch(9, 3, spec, Vec::new(), d);
            let mut out = Vec::new();
            for t in (0..2_000_000).step_by(100_000) {
                s.route(0, frame(1, t), &mut out);
                s.route(2, frame(1, t), &mut out);
            }
            out
        };
        let (plain, slowed) = (run(Vec::new()), run(vec![slow]));
        for (p, s) in plain.iter().zip(&slowed) {
            let extra = s.at_ns - p.at_ns;
            if p.src == 0 && p.sent_ns < 1_000_000 {
                assert!((5_000_000..=5_001_000).contains(&extra), "{extra}");
            } else {
                assert_eq!(extra, 0, "other links and times are untouched");
            }
        }
    }
}
