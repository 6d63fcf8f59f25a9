//! Several machines on one virtual clock: `wio sim SCENARIO.toml --seed N`.
//!
//! Each node of the scenario is a riscv64 machine whose virtio-net device is a port
//! ([`RunConfig::net_port`]); the world's switch joins the ports. Synchronization is
//! conservative: the quantum is the smallest link latency; every machine runs to the
//! next quantum boundary (riscv64 stops on an exact instruction count), then the frames
//! sent during the quantum are routed, each arriving at least one latency later, in
//! (time, source node, sequence) order, so nothing depends on the host's thread order.
//! Node i gets its own seed from the world's (`world/node/NAME`), so the nodes differ
//! and the world is a function of one seed.
//!
//! The world's trace hash chains a line per node (its name and its own trace hash) after
//! every delivered frame folded in: one seed, one world hash.

#![forbid(unsafe_code)]

pub mod capture;
pub mod composer;
pub mod dependency;
pub mod faults;
pub mod guided;
pub mod hostlink;
pub mod hosts;
mod nodes;
pub mod peer;
pub mod promises;
mod quanta;
pub mod scenario;
pub mod snapshot;
mod summary;
pub mod switch;
pub mod timeline;

pub use hostlink::HostSpec;
use nodes::node_configs;
pub use summary::{WorldOrigin, WorldSummary};

use composer::Composer;
use faults::{Between, WorldPlan};
use hosts::{Hosts, Input};
use peer::{Peer, PeerStats};
use scenario::Scenario;
use scenario::{Degrade, DepFault, Partition};
use serde_json::json;
use snapshot::{InFlight, LoadedWorld, WorldState};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;
use switch::{mac_of, Switch};
use wio_machines::error::{Result, WioError, WorldError};
use wio_machines::faults::FaultSource;
use wio_machines::machine::novelty::{Mark, Signal};
use wio_machines::machine::RunConfig;
use wio_machines::snapshot::persist::Persist;
use wio_machines::snapshot::plan::SnapshotAt;
use wio_machines::trace::Trace;
use wio_scheduler::RunSeed;
use wio_virtio_devices::Frame;

/// Trace fold tag of a delivered frame.
const FOLD_FRAME: u8 = 16;

/// When a world takes its snapshot: at the first quantum boundary at or after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SnapWhen {
    /// Virtual ns.
    Time(u64),
    /// The first console line of any node that contains this text.
    Console(String),
    /// A program in some node declared its setup complete (the SDK's `setup_complete`; in a
    /// world one program, the workload, usually does).
    SetupComplete,
}

impl SnapWhen {
    /// From `--snapshot-at`'s syntax (worlds take no `guest` point).
    pub fn from_at(at: SnapshotAt) -> Result<SnapWhen> {
        Ok(match at {
            SnapshotAt::Time(ns) => SnapWhen::Time(ns),
            SnapshotAt::Console(t) => SnapWhen::Console(t),
            SnapshotAt::SetupComplete => SnapWhen::SetupComplete,
            SnapshotAt::Guest => return Err(WorldError::SnapshotAtGuest.into()),
        })
    }
}

/// How a world runs and what it reports; nothing here changes what happens in it.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Do not print the nodes' consoles.
    pub quiet: bool,
    /// Host threads (the result is the same for any number).
    pub jobs: usize,
    /// Each node's frames to DIR/NAME.pcap.
    pub pcap_dir: Option<PathBuf>,
    /// A world snapshot to take, and where to write it.
    pub snapshot: Option<(SnapWhen, PathBuf)>,
    /// Console texts (of any node) to report when they appear.
    pub watch: Vec<String>,
    /// A console text (of any node) that ends the world when it appears.
    pub until: Option<String>,
    /// A virtual-time limit in place of the scenario's `max_virtual_secs`, ns.
    pub max_virtual_ns: Option<u64>,
    /// Exactly these faults in place of the drawn ones (from the snapshot on, when restored).
    pub plan: Option<WorldPlan>,
    /// Draw the run as an SVG timeline there.
    pub timeline: Option<PathBuf>,
    /// Keep what a timeline draws in the summary ([`WorldSummary::timeline`]) for the
    /// caller to draw or read (with or without `timeline`'s file).
    pub keep_timeline: bool,
    /// Debug this node (its name) with gdb waiting on this address.
    pub gdb: Option<(String, String)>,
    /// Restored worlds: every node's CPU-timing noise from the snapshot point on, drawn from
    /// its seed (None: each node keeps its snapshot's level).
    pub sched_noise: Option<wio_machines::machine::noise::SchedNoise>,
    /// Every node notes what it sees for the first time of these signals (a guided
    /// exploration's branch; changes nothing the guests see).
    pub observe: Vec<Signal>,
    /// The host link (`--net host`), live, recorded or replayed.
    pub host: Option<HostSpec>,
    /// Write the world's trace to DIR/world.jsonl and each node's to DIR/NAME.jsonl (for
    /// `wio diff`; the same lines the trace hashes chain).
    pub trace_dir: Option<PathBuf>,
    /// Booted x86-64 nodes: wall ms a guest may run without an exit before it is reported
    /// (`wio sim --watchdog-ms`; None: `wio run`'s default). riscv64 nodes have no watchdog.
    pub watchdog_ms: Option<u64>,
}

/// The world's trace: hashing only, or also written to `dir`/world.jsonl.
fn world_trace(dir: Option<&Path>) -> Result<Trace> {
    let Some(dir) = dir else {
        return Ok(Trace::new());
    };
    let path = dir.join("world.jsonl");
    let io = |source| WioError::ArtifactIo {
        what: "world trace",
        path: path.clone(),
        source,
    };
    std::fs::create_dir_all(dir).map_err(io)?;
    let file = std::fs::File::create(&path).map_err(io)?;
    Ok(Trace::to_writer(Box::new(std::io::BufWriter::new(file))))
}

/// What a guided exploration's branch does at each quantum boundary the world goes on
/// from: given the boundary's time, what the nodes saw for the first time in the quantum
/// just run (a node's console shapes and code coverage qualified by the node, see
/// [`Mark::of_node`]), and a way to keep the world's moment there (None: the world cannot
/// be kept there, a node having ended with an error); returns whether the world goes on
/// (false: it is abandoned, as a cancelled branch is).
pub type Guide<'a> =
    dyn FnMut(u64, Vec<Mark>, &mut dyn FnMut() -> Result<Option<LoadedWorld>>) -> Result<bool> + 'a;

pub use wio_machines::error::NotHere;

/// A world between two quanta.
struct World {
    scenario: Scenario,
    seed: u64,
    names: Vec<String>,
    trace: Trace,
    hosts: Hosts,
    switch: Switch,
    alive: Vec<bool>,
    /// The exit status of each node that ended with one.
    exits: Vec<Option<u32>>,
    parked: Vec<Option<u64>>,
    setup: Vec<bool>,
    /// The last quantum boundary, virtual ns.
    t: u64,
    /// Frames routed, to be delivered before the next quantum, in delivery order.
    pending: Vec<(usize, Frame)>,
    restored_from: Option<WorldOrigin>,
    /// Host wall ns it took to boot or restore the machines.
    start_wall_ns: u64,
    /// The external service, the switch's port after the nodes', if there is one.
    peer: Option<Peer>,
    /// What it did.
    peer_stats: PeerStats,
    /// The test composer (active when the world has image nodes).
    composer: Composer,
    /// What the composer sends the nodes at the next boundary, in order.
    orders: Vec<(usize, Input)>,
}

/// Which nodes of `s` run an image, and so the test composer's agent.
fn agents(s: &Scenario) -> Vec<bool> {
    s.nodes
        .iter()
        .map(|n| matches!(n.disk, Some(scenario::NodeDisk::Image(_))))
        .collect()
}

/// Runs the world of `s` with `seed` as `opts` says.
pub fn run(s: &Scenario, seed: u64, opts: &Options) -> Result<WorldSummary> {
    let wall = Instant::now();
    let names: Vec<String> = s.nodes.iter().map(|n| n.name.clone()).collect();
    let mut trace = world_trace(opts.trace_dir.as_deref())?;
    trace.event(
        0,
        "world",
        json!({ "seed": seed, "nodes": names, "quantum_ns": s.quantum_ns() }),
    );
    let mut s = s.clone();
    match &opts.plan {
        Some(plan) => add_planned(&mut s, plan, 0, &mut trace)?,
        None => {
            draw_faults(&mut s, RunSeed(seed), 0, &mut trace);
        }
    }
    let host = match &opts.host {
        Some(spec) => Some(hostlink::start(&mut s, seed, spec)?),
        None => None,
    };
    let s = &s;
    let configs = node_configs(s, seed, opts.pcap_dir.as_deref(), opts.trace_dir.as_deref())?
        .into_iter()
        .map(|c| {
            let watchdog_ms = opts.watchdog_ms.unwrap_or(c.watchdog_ms);
            (RunConfig { watchdog_ms, ..c }, None)
        })
        .collect();
    let gdb = match &opts.gdb {
        Some((name, addr)) => Some((
            names
                .iter()
                .position(|n| n == name)
                .ok_or_else(|| WorldError::NoGdbNode {
                    name: name.clone(),
                    addr: addr.clone(),
                    nodes: names.clone(),
                })?,
            addr.clone(),
        )),
        None => None,
    };
    let archs: Vec<_> = s.nodes.iter().map(|n| n.arch).collect();
    let hosts = Hosts::start(&names, &archs, configs, opts.jobs, wall, gdb, &opts.observe)?;
    wio_machines::sandbox::enter()?;
    let world = World {
        switch: Switch::new(
            RunSeed(seed),
            port_macs(s),
            s.links.clone(),
            s.partitions.clone(),
            s.degrades.clone(),
        )
        .with_networks(s.networks.clone()),
        alive: vec![true; names.len()],
        exits: vec![None; names.len()],
        parked: vec![None; names.len()],
        setup: vec![false; names.len()],
        scenario: s.clone(),
        seed,
        names,
        trace,
        hosts,
        t: 0,
        pending: Vec::new(),
        restored_from: None,
        start_wall_ns: wall.elapsed().as_nanos() as u64,
        peer: s.peer.as_ref().map(|_| {
            let names = nodes::dns_names(s);
            Peer::new(
                RunSeed(seed),
                &s.dependencies,
                &s.dependency_faults,
                host,
                names,
            )
        }),
        peer_stats: PeerStats::default(),
        composer: Composer::new(RunSeed(seed), &agents(s)),
        orders: Vec::new(),
    };
    world
        .run(opts, wall, None, None)
        .map(|w| w.expect("not cancellable"))
}

/// Runs a world restored from `l` with `seed` (None: the snapshot's). With the snapshot's
/// seed it continues exactly as the world that took it; with another, every node's
/// streams and the switch's are re-keyed from it: the past is shared, the future differs.
/// Returns None when `cancel` was set, or Ctrl-C or SIGTERM came, before it ended (a
/// cancellable world, an exploration's branch, is abandoned then, not ended as interrupted).
pub fn restore(
    l: &LoadedWorld,
    seed: Option<u64>,
    opts: &Options,
    cancel: Option<&AtomicBool>,
) -> Result<Option<WorldSummary>> {
    restore_guided(l, seed, opts, cancel, None)
}

/// [`restore`], calling `guide` at every quantum boundary the world goes on from (a
/// guided exploration's branch: see [`guided`]).
pub fn restore_guided(
    l: &LoadedWorld,
    seed: Option<u64>,
    opts: &Options,
    cancel: Option<&AtomicBool>,
    guide: Option<&mut Guide<'_>>,
) -> Result<Option<WorldSummary>> {
    let wall = Instant::now();
    let st = &l.state;
    let seed = seed.unwrap_or(st.seed);
    let reseed = (seed != st.seed).then_some(RunSeed(seed));
    let mut s = st.scenario.clone();
    let names: Vec<String> = s.nodes.iter().map(|n| n.name.clone()).collect();
    let mut trace = wio_machines::snapshot::persist::infallible(Trace::restore(
        world_trace(opts.trace_dir.as_deref())?,
        &st.trace,
    ));
    if reseed.is_some() {
        trace.event(st.at_ns, "reseed", json!({ "from": st.seed, "seed": seed }));
    }
    if reseed.is_some() || opts.plan.is_some() {
        // The drawn faults that started stay; the others are drawn again from the new seed,
        // or are the plan's.
        s.partitions.retain(|p| !p.drawn || p.from_ns < st.at_ns);
        s.degrades.retain(|d| !d.drawn || d.from_ns < st.at_ns);
        s.dependency_faults
            .retain(|f| !f.drawn || f.from_ns < st.at_ns);
        match &opts.plan {
            Some(plan) => add_planned(&mut s, plan, st.at_ns, &mut trace)?,
            None => {
                draw_faults(&mut s, RunSeed(seed), st.at_ns, &mut trace);
            }
        }
    }
    let s = &s;
    // The nodes keep their snapshots' fault plans (re-drawing the future from their
    // profiles when re-seeded), unless the plan gives theirs.
    let mut own: Vec<FaultSource> = vec![FaultSource::None; names.len()];
    for (name, p) in opts.plan.iter().flat_map(|p| p.nodes.iter()) {
        let i = names
            .iter()
            .position(|n| n == name)
            .ok_or_else(|| WorldError::PlanNode { name: name.clone() })?;
        own[i] = FaultSource::Plan(p.clone());
    }
    let configs = node_configs(s, seed, opts.pcap_dir.as_deref(), opts.trace_dir.as_deref())?
        .into_iter()
        .zip(l.nodes.iter().zip(&st.ended))
        .zip(own)
        .map(|((c, (n, ended)), faults)| {
            let c = RunConfig {
                faults,
                sched_noise: opts.sched_noise.unwrap_or(c.sched_noise),
                sched_noise_given: opts.sched_noise.is_some(),
                ..c
            };
            (c, Some((n.clone(), *ended)))
        })
        .collect();
    let switch = Switch::resume(
        &st.switch,
        port_macs(s),
        s.links.clone(),
        s.partitions.clone(),
        s.degrades.clone(),
        reseed,
    )
    .with_networks(s.networks.clone());
    let archs: Vec<_> = s.nodes.iter().map(|n| n.arch).collect();
    let hosts = Hosts::start(
        &names,
        &archs,
        configs,
        opts.jobs,
        wall,
        None,
        &opts.observe,
    )?;
    wio_machines::sandbox::enter()?;
    let world = World {
        switch,
        alive: st.ended.iter().map(Option::is_none).collect(),
        exits: st.ended.clone(),
        parked: st.parked.clone(),
        setup: st.setup_complete.clone(),
        scenario: s.clone(),
        seed,
        names,
        trace,
        hosts,
        t: st.at_ns,
        pending: st
            .in_flight
            .iter()
            .map(|f| {
                (
                    f.dst,
                    Frame {
                        at_ns: f.at_ns,
                        bytes: f.bytes.clone(),
                    },
                )
            })
            .collect(),
        restored_from: Some(WorldOrigin {
            path: l.path.display().to_string(),
            virtual_ns: st.at_ns,
            seed: st.seed,
        }),
        start_wall_ns: wall.elapsed().as_nanos() as u64,
        peer: match (&s.peer, &st.peer) {
            (Some(_), Some((p, _))) => {
                let host = st
                    .host
                    .as_ref()
                    .map(hostlink::HostLink::resume)
                    .transpose()?;
                let mut peer = Peer::resume(p, s.nodes.len(), &s.dependencies, host);
                if reseed.is_some() || opts.plan.is_some() {
                    // Its dependencies draw from the new seed, with the new faults.
                    peer.settings(seed, &s.dependency_faults);
                }
                Some(peer)
            }
            (None, None) => None,
            _ => {
                return Err(WioError::ArtifactFormat {
                    what: "world snapshot",
                    path: l.path.clone(),
                    reason: "has a peer state that does not fit its scenario".into(),
                })
            }
        },
        peer_stats: st.peer.as_ref().map(|(_, s)| s.clone()).unwrap_or_default(),
        composer: match &st.composer {
            Some(c) => {
                let mut c = c.clone();
                if let Some(seed) = reseed {
                    c.reseed(seed);
                }
                c
            }
            None => Composer::new(RunSeed(seed), &agents(s)),
        },
        orders: Vec::new(),
    };
    let mut world = world;
    // The machines and the switch do not keep the composer's quiet windows: given again.
    world.send_quiet();
    world.run(opts, wall, cancel, guide)
}

/// The MAC address of each port of the switch (see [`Scenario::port_names`]).
fn port_macs(s: &Scenario) -> Vec<[u8; 6]> {
    (0..s.nodes.len())
        .map(mac_of)
        .chain(s.peer.as_ref().map(|_| peer::PEER_MAC))
        .collect()
}

/// Adds a plan's faults between nodes (those from `from_ns` on) to the scenario's, in
/// place of drawn ones (traced); refuses entries that do not fit the world.
fn add_planned(s: &mut Scenario, plan: &WorldPlan, from_ns: u64, trace: &mut Trace) -> Result<()> {
    let ports = s.port_names().len();
    let mut count = 0;
    for f in &plan.between {
        if f.exact.start_ns() < from_ns {
            return Err(WorldError::PlanBefore {
                at_ns: f.exact.start_ns(),
                from_ns,
            }
            .into());
        }
        let fits = match &f.exact {
            Between::Partition(p) => p.group_of.len() <= ports && p.until_ns >= p.from_ns,
            Between::Degrade(d) => {
                d.between.is_none_or(|(a, b)| a < ports && b < ports)
                    && d.until_ns >= d.from_ns
                    && d.loss_ppm <= 1_000_000
            }
            Between::Dependency(f) => s.dependencies.get(f.dependency).is_some_and(|d| {
                f.route.is_none_or(|r| r < d.routes.len()) && f.until_ns >= f.from_ns
            }),
        };
        if !fits {
            return Err(WorldError::PlanMisfit {
                kind: f.kind.clone(),
                what: f.what.clone(),
            }
            .into());
        }
        match &f.exact {
            Between::Partition(p) => s.partitions.push(Partition {
                drawn: true,
                ..p.clone()
            }),
            Between::Degrade(d) => s.degrades.push(Degrade {
                drawn: true,
                ..d.clone()
            }),
            Between::Dependency(f) => s.dependency_faults.push(DepFault {
                drawn: true,
                ..f.clone()
            }),
        }
        count += 1;
    }
    trace.event(from_ns, "world-fault-plan", json!({ "between": count }));
    Ok(())
}

/// Adds the faults the scenario's profiles draw with `seed` from `from_ns` on: `[faults]`'s
/// to its partitions and degradations, the dependencies' to their faults (each traced).
fn draw_faults(s: &mut Scenario, seed: RunSeed, from_ns: u64, trace: &mut Trace) {
    if let Some(p) = s.faults {
        let (ps, ds) = faults::draw(&p, seed, s.nodes.len(), from_ns, s.max_virtual_ns);
        trace.event(
            from_ns,
            "world-faults",
            json!({ "partitions": ps.len(), "degrades": ds.len() }),
        );
        s.partitions.extend(ps);
        s.degrades.extend(ds);
    }
    draw_dependency_faults(s, seed, from_ns, trace);
}

/// Adds the faults the dependencies' profiles draw with `seed` from `from_ns` on (traced
/// when there are such profiles, so worlds without them trace as before).
fn draw_dependency_faults(s: &mut Scenario, seed: RunSeed, from_ns: u64, trace: &mut Trace) {
    if s.dependencies.iter().all(|d| d.faults.is_none()) {
        return;
    }
    let drawn = faults::draw_dependencies(&s.dependencies, seed, from_ns, s.max_virtual_ns);
    trace.event(
        from_ns,
        "dependency-faults",
        json!({ "drawn": drawn.len() }),
    );
    s.dependency_faults.extend(drawn);
}

impl World {
    /// Whether the snapshot point `when` is due at this boundary (`lines`: the console
    /// lines of the quantum just run).
    fn due(&self, when: &SnapWhen, lines: &[String]) -> bool {
        match when {
            SnapWhen::Time(ns) => self.t >= *ns,
            SnapWhen::Console(text) => lines.iter().any(|l| l.contains(text.as_str())),
            SnapWhen::SetupComplete => self.setup.iter().any(|s| *s),
        }
    }

    /// The world's own state at this boundary (besides its machines), `reason` saying why
    /// it is taken.
    fn state(&self, reason: &str) -> std::result::Result<WorldState, NotHere> {
        if let Some(i) = (0..self.names.len()).find(|i| !self.alive[*i] && self.exits[*i].is_none())
        {
            return Err(NotHere::NodeFailed(self.names[i].clone()));
        }
        let peer = match &self.peer {
            None => None,
            Some(p) => Some((
                p.save().ok_or(NotHere::PeerHistory)?,
                self.peer_stats.clone(),
            )),
        };
        let host = self
            .peer
            .as_ref()
            .map(Peer::host_save)
            .transpose()?
            .flatten();
        Ok(WorldState {
            wio_version: env!("CARGO_PKG_VERSION").into(),
            seed: self.seed,
            at_ns: self.t,
            reason: reason.to_string(),
            scenario: self.scenario.clone(),
            switch: self.switch.save(),
            in_flight: self
                .pending
                .iter()
                .map(|(dst, f)| InFlight {
                    dst: *dst,
                    at_ns: f.at_ns,
                    bytes: f.bytes.clone(),
                })
                .collect(),
            parked: self.parked.clone(),
            setup_complete: self.setup.clone(),
            // Set only for nodes that ended with a status.
            ended: self.exits.clone(),
            trace: self.trace.save(),
            peer,
            composer: self.composer.active().then(|| self.composer.clone()),
            host,
        })
    }

    /// The world here kept in memory, ready to be restored as a loaded world snapshot is (a
    /// guided exploration's moment); None when it cannot be kept here ([`NotHere`]).
    fn moment(&mut self) -> Result<Option<LoadedWorld>> {
        let Ok(state) = self.state("moment") else {
            return Ok(None);
        };
        let nodes = self.hosts.moment()?;
        Ok(Some(LoadedWorld {
            path: self
                .restored_from
                .as_ref()
                .map(|o| PathBuf::from(&o.path))
                .unwrap_or_default(),
            sha256: String::new(),
            state,
            nodes: nodes.into_iter().map(Arc::from).collect(),
        }))
    }

    /// Hands the composer's fault-quiet windows to the switch and (at the next boundary)
    /// to every node.
    fn send_quiet(&mut self) {
        if self.composer.quiet.is_empty() {
            return;
        }
        self.switch.set_quiet(&self.composer.quiet);
        for i in 0..self.names.len() {
            self.orders
                .push((i, Input::Quiet(self.composer.quiet.clone())));
        }
    }

    /// The test composer's step at this boundary: it takes what the agents wrote in the
    /// quantum (`lines`, node order), starts and stops commands as its rules say, and
    /// what it orders goes to the nodes at the next boundary (from its outbox, which a
    /// snapshot keeps).
    fn compose(&mut self, lines: Vec<(usize, Vec<wio_virtio_devices::console::Line>)>) {
        if !self.composer.active() {
            return;
        }
        let mut out = composer::Orders::default();
        for (node, ls) in lines {
            for (at, line) in ls {
                self.composer
                    .take_line(node, at, &line, &mut self.trace, &mut out);
            }
        }
        for node in (0..self.names.len()).filter(|i| !self.alive[*i]) {
            self.composer.lose_runs(node, self.t, &mut self.trace);
        }
        let setup = self.setup.iter().any(|s| *s);
        self.composer.step(self.t, setup, &mut self.trace, &mut out);
        self.composer.outbox.extend(out.lines);
        if out.quiet_changed {
            self.send_quiet();
        }
    }

    /// Takes the world's snapshot here and writes it to `path`.
    fn snapshot(&mut self, reason: String, path: &Path) -> Result<()> {
        let state = self.state(&reason).map_err(|source| WorldError::Snapshot {
            reason: reason.clone(),
            source,
        })?;
        let wall = Instant::now();
        let nodes = self.hosts.snapshot(&reason)?;
        let bytes = snapshot::write(path, &state, &nodes)?;
        eprintln!(
            "wio: world snapshot {} at {} ns ({reason}): {} nodes, {} frames in flight, {} MiB in {} ms; restore with: wio sim --from {} --seed {}",
            path.display(),
            self.t,
            nodes.len(),
            state.in_flight.len(),
            bytes >> 20,
            wall.elapsed().as_millis(),
            path.display(),
            self.seed
        );
        Ok(())
    }
}
