//! Faults between a world's nodes drawn from the world's seed (`[faults]` in the
//! scenario): partitions of the nodes into two groups (some one-way) and degraded links
//! (extra latency, jitter, loss), each kind from its own stream (`world/faults/partition`,
//! `world/faults/degrade`), so removing one kind shifts no draw of the other. They join
//! the scenario's own `[[partition]]` and `[[degrade]]` entries. A world snapshot keeps
//! those that started; restored with another seed, the rest are drawn again from it.
//! (A node's own faults, crash and restart included, come from its `faults` profile,
//! drawn from its seed, which derives from the world's.)

use super::scenario::dependency::{self, DepFault, DepFaultKind, Dependency};
use super::scenario::{Degrade, Level, Partition, WorldProfile};
use serde::{Deserialize, Serialize};
use wio_scheduler::{RunSeed, Stream};

struct Rates {
    partition_mean_ns: u64,
    partition_ns: (u64, u64),
    degrade_mean_ns: u64,
    degrade_ns: (u64, u64),
    latency_us: u64,
    jitter_us: u64,
    loss_ppm: u64,
}

const MS: u64 = 1_000_000;

/// The rates of a level.
fn rates(level: Level) -> Rates {
    match level {
        Level::Light => Rates {
            partition_mean_ns: 30_000 * MS,
            partition_ns: (500 * MS, 3_000 * MS),
            degrade_mean_ns: 20_000 * MS,
            degrade_ns: (500 * MS, 5_000 * MS),
            latency_us: 50_000,
            jitter_us: 10_000,
            loss_ppm: 200_000,
        },
        Level::Heavy => Rates {
            partition_mean_ns: 10_000 * MS,
            partition_ns: (1_000 * MS, 10_000 * MS),
            degrade_mean_ns: 5_000 * MS,
            degrade_ns: (1_000 * MS, 10_000 * MS),
            latency_us: 200_000,
            jitter_us: 50_000,
            loss_ppm: 500_000,
        },
    }
}

/// Start times of a Poisson process of mean interval `mean_ns` in [from, until).
fn starts(
    stream: &mut Stream,
    mean_ns: u64,
    from: u64,
    until: u64,
) -> impl Iterator<Item = u64> + '_ {
    let mut t = from;
    std::iter::from_fn(move || {
        t = t.saturating_add(stream.exponential_ns(mean_ns).max(1));
        (t < until).then_some(t)
    })
}

/// The faults `p` draws with `seed` for a world of `nodes` nodes that start in
/// [from_ns, until_ns) (a restore draws from its snapshot's time on).
pub fn draw(
    p: &WorldProfile,
    seed: RunSeed,
    nodes: usize,
    from_ns: u64,
    until_ns: u64,
) -> (Vec<Partition>, Vec<Degrade>) {
    if nodes < 2 {
        return (Vec::new(), Vec::new());
    }
    let r = rates(p.level);
    let from = from_ns.max(p.after_ns);
    let until_ns = p.until_ns.map_or(until_ns, |u| u.min(until_ns));
    let clip = |end: u64| p.until_ns.map_or(end, |u| end.min(u));
    let n = nodes as u64;
    let mut partitions = Vec::new();
    let mut s = seed.stream("world/faults/partition");
    let times: Vec<u64> = starts(&mut s, r.partition_mean_ns, from, until_ns).collect();
    for at in times {
        let len = s.range_inclusive(r.partition_ns.0, r.partition_ns.1);
        let mut group_of: Vec<Option<usize>> =
            (0..nodes).map(|_| Some(s.below(2) as usize)).collect();
        if group_of.iter().all(|g| *g == group_of[0]) {
            // Both sides must hold a node: move one across.
            let i = s.below(n) as usize;
            group_of[i] = group_of[i].map(|g| 1 - g);
        }
        partitions.push(Partition {
            from_ns: at,
            until_ns: clip(at.saturating_add(len)),
            group_of,
            one_way: s.below(4) == 0,
            drawn: true,
        });
    }
    let mut degrades = Vec::new();
    let mut s = seed.stream("world/faults/degrade");
    let times: Vec<u64> = starts(&mut s, r.degrade_mean_ns, from, until_ns).collect();
    for at in times {
        let len = s.range_inclusive(r.degrade_ns.0, r.degrade_ns.1);
        let between = if s.below(4) == 0 {
            None
        } else {
            let a = s.below(n) as usize;
            let b = (a + 1 + s.below(n - 1) as usize) % nodes;
            Some((a, b))
        };
        degrades.push(Degrade {
            from_ns: at,
            until_ns: clip(at.saturating_add(len)),
            between,
            latency_ns: s.below(r.latency_us + 1) * 1_000,
            jitter_ns: s.below(r.jitter_us + 1) * 1_000,
            loss_ppm: s.below(r.loss_ppm + 1),
            drawn: true,
        });
    }
    (partitions, degrades)
}

/// The faults each dependency's `[dependency.faults]` draws with `seed` in
/// [from_ns, until_ns): each kind of each dependency from its own stream
/// (`world/dependency/NAME/faults/KIND`), so removing a kind or a dependency shifts no
/// other's draws.
pub fn draw_dependencies(
    deps: &[Dependency],
    seed: RunSeed,
    from_ns: u64,
    until_ns: u64,
) -> Vec<DepFault> {
    let mut out = Vec::new();
    for (index, d) in deps.iter().enumerate() {
        let Some(p) = &d.faults else { continue };
        let from = from_ns.max(p.after_ns);
        let until = p.until_ns.map_or(until_ns, |u| u.min(until_ns));
        for &kind in &p.kinds {
            let mut s = seed.stream(&format!(
                "world/dependency/{}/faults/{}",
                d.name,
                kind.name()
            ));
            let times: Vec<u64> = starts(&mut s, p.every_ns, from, until).collect();
            for at in times {
                let len = s.range_inclusive(p.duration_ns.0, p.duration_ns.1);
                // The same draws for every kind, so a fault's values depend only on its place.
                let one_route = s.below(2) == 0;
                let pick = s.below(d.routes.len().max(1) as u64) as usize;
                let slow_ms = s.range_inclusive(100, 2_000);
                let status = [500, 502, 503, 504][s.below(4) as usize];
                let route = (one_route && kind != DepFaultKind::Refuse && !d.routes.is_empty())
                    .then_some(pick);
                out.push(DepFault {
                    from_ns: at,
                    until_ns: p
                        .until_ns
                        .map_or(at.saturating_add(len), |u| at.saturating_add(len).min(u)),
                    dependency: index,
                    route,
                    kind,
                    slow_ns: if kind == DepFaultKind::SlowBody {
                        slow_ms / 10
                    } else {
                        slow_ms
                    } * MS,
                    status,
                    drawn: true,
                    label: dependency::label(&d.name, route.map(|i| &d.routes[i])),
                });
            }
        }
    }
    out.sort_by_key(|f| (f.from_ns, f.dependency, f.kind));
    out
}

/// A fault between nodes exactly: what a world fault plan lists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Between {
    /// A partition.
    Partition(Partition),
    /// A degraded link.
    Degrade(Degrade),
    /// A simulated dependency's fault.
    Dependency(DepFault),
}

impl Between {
    /// When it starts, virtual ns.
    pub fn start_ns(&self) -> u64 {
        match self {
            Between::Partition(p) => p.from_ns,
            Between::Degrade(d) => d.from_ns,
            Between::Dependency(f) => f.from_ns,
        }
    }

    /// Its interval, to change it (shrinking).
    pub fn interval_mut(&mut self) -> (&mut u64, &mut u64) {
        match self {
            Between::Partition(p) => (&mut p.from_ns, &mut p.until_ns),
            Between::Degrade(d) => (&mut d.from_ns, &mut d.until_ns),
            Between::Dependency(f) => (&mut f.from_ns, &mut f.until_ns),
        }
    }
}

/// A fault between nodes as summaries, reports and world fault plans list it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorldFault {
    /// "partition", "one-way partition" or "degrade".
    pub kind: String,
    /// When it starts, virtual ns.
    pub from_ns: u64,
    /// When it ends, virtual ns.
    pub until_ns: u64,
    /// Which nodes and how: `a | b c` (a partition; `->` one way), `a-b +12.0 ms ±3.0 ms 5.0% loss`.
    pub what: String,
    /// The fault exactly (a plan is read from this; the other fields are for people).
    pub exact: Between,
}

impl WorldFault {
    /// The fault `b` between ports named `names`.
    pub fn of(b: &Between, names: &[String]) -> WorldFault {
        match b {
            Between::Partition(p) => WorldFault::of_partition(p, names),
            Between::Degrade(d) => WorldFault::of_degrade(d, names),
            Between::Dependency(f) => WorldFault::of_dependency(f),
        }
    }

    /// A dependency's fault.
    pub fn of_dependency(f: &DepFault) -> WorldFault {
        let what = match f.kind {
            DepFaultKind::Slow | DepFaultKind::SlowBody => {
                format!("{} +{:.1} ms", f.label, f.slow_ns as f64 / 1e6)
            }
            DepFaultKind::Error => format!("{} status {}", f.label, f.status),
            _ => f.label.clone(),
        };
        WorldFault {
            kind: format!("dependency {}", f.kind.name()),
            from_ns: f.from_ns,
            until_ns: f.until_ns,
            what,
            exact: Between::Dependency(f.clone()),
        }
    }
}

impl WorldFault {
    /// A partition, its nodes named by `names`.
    pub fn of_partition(p: &Partition, names: &[String]) -> WorldFault {
        let side = |g: usize| {
            (0..names.len())
                .filter(|i| p.group_of.get(*i).copied().flatten() == Some(g))
                .map(|i| names[i].as_str())
                .collect::<Vec<_>>()
                .join(" ")
        };
        let groups = p.group_of.iter().flatten().max().map_or(0, |m| m + 1);
        let sides: Vec<String> = (0..groups).map(side).collect();
        WorldFault {
            kind: if p.one_way {
                "one-way partition"
            } else {
                "partition"
            }
            .into(),
            from_ns: p.from_ns,
            until_ns: p.until_ns,
            what: sides.join(if p.one_way { " -> " } else { " | " }),
            exact: Between::Partition(p.clone()),
        }
    }

    /// A degradation, its nodes named by `names`.
    pub fn of_degrade(d: &Degrade, names: &[String]) -> WorldFault {
        WorldFault {
            kind: "degrade".into(),
            from_ns: d.from_ns,
            until_ns: d.until_ns,
            what: format!(
                "{} +{:.1} ms ±{:.1} ms {:.1}% loss",
                d.between.map_or_else(
                    || "every link".to_string(),
                    |(a, b)| {
                        let name = |i: usize| names.get(i).map_or("?", String::as_str);
                        format!("{}-{}", name(a), name(b))
                    }
                ),
                d.latency_ns as f64 / 1e6,
                d.jitter_ns as f64 / 1e6,
                d.loss_ppm as f64 / 1e4
            ),
            exact: Between::Degrade(d.clone()),
        }
    }
}

/// An explicit list of a world's faults from some time on (`wio sim --fault-plan`, written
/// by `wio shrink`): the faults between nodes, and each node's own plan.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorldPlan {
    /// The seed it goes with (`wio shrink` writes it; `wio verify --plan` runs it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// The promise it breaks (as `wio shrink` found it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub promise: Option<String>,
    /// The guided exploration's branch it goes with (`SEED@NS,...,SEED`; `seed` is then its
    /// last seed): its faults are those from the path's last moment on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Every node's CPU-timing noise from the snapshot on, as the failing branch ran
    /// (`--sched-noise`; None: the snapshot's levels). A replay of the plan uses it
    /// unless told otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sched_noise: Option<wio_machines::machine::noise::SchedNoise>,
    /// The console line that ended the branch's runs (`--until`, `console:TEXT`): a path's
    /// steps and its last run end there, as in the exploration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<String>,
    /// The branch's virtual-time limit, ns (`--max-virtual-secs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_virtual_ns: Option<u64>,
    /// Faults between nodes, in start order.
    pub between: Vec<WorldFault>,
    /// Each node's own faults (crash, pause, disk, clock), by node name; a node not listed
    /// keeps its snapshot's plan.
    #[serde(default)]
    pub nodes: Vec<(String, wio_machines::faults::plan::FaultPlan)>,
}

impl WorldPlan {
    /// Keeps only the faults that begin at or after `at_ns` (between nodes and the nodes'
    /// own): those a restore at `at_ns` can replay. Returns how many faults between nodes
    /// it left out.
    pub fn keep_from(&mut self, at_ns: u64) -> usize {
        let before = self.between.len();
        self.between.retain(|f| f.exact.start_ns() >= at_ns);
        for (_, p) in &mut self.nodes {
            p.faults.retain(|f| f.at_ns >= at_ns);
        }
        before - self.between.len()
    }

    /// Reads a plan file (JSON).
    pub fn read(path: &std::path::Path) -> wio_machines::error::Result<WorldPlan> {
        let bad = |reason: String| wio_machines::error::WioError::ArtifactFormat {
            what: "world fault plan",
            path: path.to_path_buf(),
            reason,
        };
        let text = std::fs::read_to_string(path).map_err(|source| {
            wio_machines::error::WioError::ArtifactIo {
                what: "world fault plan",
                path: path.to_path_buf(),
                source,
            }
        })?;
        serde_json::from_str(&text).map_err(|e| bad(format!("is not a world fault plan: {e}")))
    }

    /// Writes it as JSON.
    pub fn write(&self, path: &std::path::Path) -> wio_machines::error::Result<()> {
        wio_machines::summary::write_json(self, path, "world fault plan")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_are_seeded_bounded_and_each_kind_has_its_own_stream() {
        let p = WorldProfile {
            level: Level::Heavy,
            after_ns: 2_000 * MS,
            until_ns: None,
        };
        let hour = 3_600_000 * MS;
        let (ps, ds) = draw(&p, RunSeed(5), 3, 0, hour);
        assert_eq!(draw(&p, RunSeed(5), 3, 0, hour), (ps.clone(), ds.clone()));
        assert_ne!(draw(&p, RunSeed(6), 3, 0, hour).0, ps);
        // About one partition every 10 s and one degradation every 5 s over an hour.
        assert!((250..500).contains(&ps.len()), "{}", ps.len());
        assert!((550..900).contains(&ds.len()), "{}", ds.len());
        for q in &ps {
            assert!(q.from_ns >= p.after_ns && q.from_ns < hour);
            assert!((1_000 * MS..=10_000 * MS).contains(&(q.until_ns - q.from_ns)));
            assert!(q.group_of.contains(&Some(0)) && q.group_of.contains(&Some(1)));
            assert!(q.drawn);
        }
        assert!(ps.windows(2).all(|w| w[0].from_ns < w[1].from_ns));
        for d in &ds {
            assert!(d.loss_ppm <= 500_000 && d.latency_ns <= 200 * MS);
            if let Some((a, b)) = d.between {
                assert!(a != b && a < 3 && b < 3);
            }
        }
        // One node: nothing to partition.
        assert_eq!(draw(&p, RunSeed(5), 1, 0, hour), (Vec::new(), Vec::new()));
        let names: Vec<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
        let f = WorldFault::of_partition(&ps[0], &names);
        assert!(f.what.contains(" | ") || f.what.contains(" -> "), "{f:?}");
    }

    #[test]
    fn dependency_faults_are_seeded_and_each_kind_has_its_own_stream() {
        use crate::scenario::Scenario;
        let text = |kinds: &str| {
            format!("[[node]]\nname = \"c\"\n[[dependency]]\nname = \"api\"\nport = 80\n[[dependency.route]]\npath = \"/a\"\n[dependency.faults]\nevery_ms = 1000\nafter_ms = 500\nuntil_ms = 60000\nkinds = [{kinds}]\n")
        };
        let s = Scenario::parse(&text("\"reset\", \"slow\"")).unwrap();
        let min = 60_000 * MS;
        let a = draw_dependencies(&s.dependencies, RunSeed(5), 0, min);
        assert_eq!(a, draw_dependencies(&s.dependencies, RunSeed(5), 0, min));
        assert_ne!(a, draw_dependencies(&s.dependencies, RunSeed(6), 0, min));
        // About one of each kind per second over 59.5 s, inside the profile's bounds.
        assert!((70..170).contains(&a.len()), "{}", a.len());
        assert!(a
            .iter()
            .all(|f| f.from_ns >= 500 * MS && f.until_ns <= min && f.drawn));
        assert!(a.windows(2).all(|w| w[0].from_ns <= w[1].from_ns));
        // Dropping a kind leaves the other's faults exactly as they were.
        let s2 = Scenario::parse(&text("\"slow\"")).unwrap();
        let slow_only = draw_dependencies(&s2.dependencies, RunSeed(5), 0, min);
        let slow: Vec<_> = a
            .iter()
            .filter(|f| f.kind == DepFaultKind::Slow)
            .cloned()
            .collect();
        assert_eq!(slow, slow_only);
        // A restore draws only from its point on.
        let later = draw_dependencies(&s.dependencies, RunSeed(5), 30_000 * MS, min);
        assert!(later.iter().all(|f| f.from_ns >= 30_000 * MS));
        let f = WorldFault::of_dependency(&a[0]);
        assert!(f.kind.starts_with("dependency "), "{f:?}");
    }
}
