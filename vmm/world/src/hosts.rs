//! The host threads of a world (`--jobs`): each owns some of the machines for the whole run
//! (a machine never moves between threads), runs them to the quantum boundary it is
//! given, and reports what they did. The coordinator hands every thread the frames for
//! its machines in the world's (time, source, sequence) order and reads the threads'
//! reports in node order, so the world is the same whatever the number of threads.

use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use wio_clock::VirtualTime;
use wio_machines::builder;
use wio_machines::error::{Result, WioError, WorldError};
use wio_machines::machine::novelty::{Mark, Signal};
use wio_machines::machine::{Arch, LoadedSnapshot, Machine, RunConfig, Stop};
use wio_machines::snapshot::Snapshot;
use wio_machines::summary::Summary;
use wio_virtio_devices::Frame;

/// What one machine did in one quantum.
pub struct NodeStep {
    /// Its index in the world.
    pub node: usize,
    /// Console lines it printed.
    pub lines: Vec<String>,
    /// Frames its guest sent.
    pub frames: Vec<Frame>,
    /// Whether it has ended.
    pub ended: bool,
    /// Its guest's exit status, when it has ended with one (not with an error).
    pub exit_status: Option<u32>,
    /// Where it is parked (see `Machine::parked_until`), if it is.
    pub parked: Option<u64>,
    /// Whether a program in it declared its setup complete in this quantum.
    pub setup_complete: bool,
    /// What it saw for the first time in this quantum (when observing; see
    /// `Machine::observe`).
    pub marks: Vec<Mark>,
    /// The lines its test-composer agent wrote (virtual ns, text).
    pub composer: Vec<wio_virtio_devices::console::Line>,
}

/// What the world hands a node at a boundary, in order, before it runs the next quantum.
#[derive(Debug, Clone)]
pub enum Input {
    /// A frame for its network port.
    Frame(Frame),
    /// A line (with its newline) for its test-composer agent.
    Composer(Vec<u8>),
    /// The windows in which no fault of its plan starts (all of them, replacing the last).
    Quiet(Vec<(u64, u64)>),
}

/// How a node's machine comes to be: booted (None), or restored from a loaded snapshot
/// (with its guest's exit status when it had already ended then).
pub type Start = Option<(Arc<dyn LoadedSnapshot>, Option<u32>)>;

/// A node a host thread brings up: its index, name, architecture, configuration, how it
/// starts, and the address gdb debugs it on (if it does).
type NodeStart = (usize, String, Arch, RunConfig, Start, Option<String>);

enum Cmd {
    /// Hand these inputs (node, input) over in order, then run every live machine to `until`.
    Run {
        until: u64,
        deliveries: Vec<(usize, Input)>,
    },
    /// Take a snapshot of every machine.
    Snapshot { reason: String },
    /// Keep every machine's state in memory (a moment of a guided exploration).
    Moment,
    /// End every machine and report: those still running with the time limit, or
    /// (`until`: the world stopped at its `until` text) as a success, or (`interrupted`:
    /// Ctrl-C or SIGTERM at that world time) as interrupted.
    Finish {
        limit_ns: u64,
        until: bool,
        interrupted: Option<u64>,
    },
}

enum Reply {
    Booted(Result<()>),
    Ran(Vec<NodeStep>),
    Snapshots(Result<Vec<(usize, Snapshot)>>),
    Moments(Result<Vec<(usize, Box<dyn LoadedSnapshot>)>>),
    Finished(Vec<(usize, Summary)>),
}

/// `f` of every machine a thread owns (with its configuration), by node; the first error
/// ends it.
fn each<T>(
    owned: &mut [Owned],
    mut f: impl FnMut(&mut dyn Machine, &RunConfig) -> Result<T>,
) -> Result<Vec<(usize, T)>> {
    owned
        .iter_mut()
        .filter_map(|o| Some((o.node, o.machine.as_mut()?, &o.cfg)))
        .map(|(node, m, cfg)| f(m.as_mut(), cfg).map(|t| (node, t)))
        .collect()
}

struct Owned {
    node: usize,
    cfg: RunConfig,
    machine: Option<Box<dyn Machine>>,
    ended: Option<Result<u32>>,
    /// Host time spent running the machine to quantum boundaries (its summary's
    /// `run_wall_ns`).
    busy: Duration,
}

fn host(
    nodes: Vec<NodeStart>,
    signals: &[Signal],
    wall: Instant,
    rx: Receiver<Cmd>,
    tx: Sender<Reply>,
) {
    let mut owned = match start_nodes(nodes, signals, wall) {
        Ok(owned) => owned,
        Err(e) => {
            let _ = tx.send(Reply::Booted(Err(e)));
            return;
        }
    };
    if tx.send(Reply::Booted(Ok(()))).is_err() {
        return;
    }
    while let Ok(cmd) = recv_soon(&rx) {
        let last = matches!(cmd, Cmd::Finish { .. });
        if tx.send(serve(&mut owned, cmd, wall)).is_err() || last {
            return;
        }
    }
}

/// How long a host waits for the next message by spinning before it sleeps: a quantum's
/// handoff between the coordinator and a host thread is usually a few microseconds away,
/// and putting a thread to sleep and waking it (a futex each way) cost more than the
/// quantum's work in an idle world. Host time decides only how a thread waits, never what
/// any machine computes.
const SPIN_BEFORE_SLEEP: std::time::Duration = std::time::Duration::from_micros(50);

/// The next message on `rx`: spins for [`SPIN_BEFORE_SLEEP`], then blocks.
fn recv_soon<T>(rx: &Receiver<T>) -> std::result::Result<T, std::sync::mpsc::RecvError> {
    use std::sync::mpsc::TryRecvError;
    let mut since: Option<Instant> = None;
    loop {
        for _ in 0..64 {
            match rx.try_recv() {
                Ok(v) => return Ok(v),
                Err(TryRecvError::Disconnected) => return Err(std::sync::mpsc::RecvError),
                Err(TryRecvError::Empty) => std::hint::spin_loop(),
            }
        }
        let start = *since.get_or_insert_with(Instant::now);
        if start.elapsed() >= SPIN_BEFORE_SLEEP {
            return rx.recv();
        }
    }
}

/// What a host does with one command for the machines it owns (a host thread, or the
/// coordinator for its own share).
fn serve(owned: &mut [Owned], cmd: Cmd, wall: Instant) -> Reply {
    match cmd {
        Cmd::Run { until, deliveries } => Reply::Ran(run_quantum(owned, until, deliveries)),
        Cmd::Snapshot { reason } => {
            Reply::Snapshots(each(owned, |m, _| m.snapshot(reason.clone())))
        }
        Cmd::Moment => Reply::Moments(each(owned, |m, cfg| m.moment(cfg))),
        Cmd::Finish {
            limit_ns,
            until,
            interrupted,
        } => Reply::Finished(finish_nodes(owned, wall, limit_ns, until, interrupted)),
    }
}

/// This thread's nodes booted, or restored from their loaded snapshots, each observing
/// `signals`; the first that cannot start is the error.
fn start_nodes(nodes: Vec<NodeStart>, signals: &[Signal], wall: Instant) -> Result<Vec<Owned>> {
    let mut owned = Vec::new();
    for (node, name, arch, cfg, start, gdb) in nodes {
        let (machine, ended) = match (start, gdb) {
            (Some((loaded, ended)), _) => (loaded.restore(&cfg, wall), ended.map(Ok)),
            (None, Some(addr)) if arch == Arch::X86_64 => {
                return Err(WorldError::GdbX86Node { name, addr }.into())
            }
            (None, Some(addr)) => (builder::gdb_node(&cfg, wall, &addr), None),
            (None, None) => (builder::boot(arch, &cfg, wall), None),
        };
        let mut m = machine.map_err(|e| WorldError::NodeStart {
            name,
            source: Box::new(e),
        })?;
        m.observe(signals);
        owned.push(Owned {
            machine: Some(m),
            node,
            cfg,
            ended,
            busy: Duration::ZERO,
        });
    }
    Ok(owned)
}

/// One quantum of this thread's nodes: the frames due delivered, then each node that has
/// not ended run to `until` ns; what each did (console lines, frames sent, how it ended,
/// whether it declared its setup complete, its marks).
fn run_quantum(owned: &mut [Owned], until: u64, deliveries: Vec<(usize, Input)>) -> Vec<NodeStep> {
    for (node, input) in deliveries {
        let Some(o) = owned.iter_mut().find(|o| o.node == node) else {
            continue;
        };
        if let (Some(m), None) = (o.machine.as_mut(), &o.ended) {
            match input {
                Input::Frame(frame) => {
                    if let Err(e) = m.deliver_frame(frame) {
                        o.ended = Some(Err(e));
                    }
                }
                // A line the guest left too much unread to take is lost; the agent's
                // run then never starts, which the composer's report shows.
                Input::Composer(line) => {
                    m.send_composer(&line);
                }
                Input::Quiet(windows) => m.quiet_faults(&windows),
            }
        }
    }
    let limit = VirtualTime::from_ns(until);
    let mut steps = Vec::new();
    for o in owned {
        let was_ended = o.ended.is_some();
        let Some(m) = o.machine.as_mut() else {
            continue;
        };
        let mut setup_complete = false;
        if !was_ended {
            let began = Instant::now();
            loop {
                match wio_machines::machine::driver::step(m.as_mut(), limit) {
                    Stop::Yield | Stop::GuestSnapshot(_) => {}
                    Stop::SetupComplete => setup_complete = true,
                    Stop::Limit => break,
                    Stop::End(outcome) => {
                        o.ended = Some(outcome);
                        break;
                    }
                }
            }
            o.busy += began.elapsed();
        }
        steps.push(NodeStep {
            node: o.node,
            lines: m.console().take_captured(),
            frames: if was_ended {
                Vec::new()
            } else {
                m.take_frames()
            },
            ended: o.ended.is_some(),
            exit_status: o.ended.as_ref().and_then(|e| e.as_ref().ok().copied()),
            parked: m.parked_until().map(VirtualTime::as_ns),
            setup_complete,
            marks: m.take_marks(),
            composer: m.take_composer_lines(),
        });
    }
    steps
}

/// Every node's summary at the world's end: a node still running ends interrupted, at
/// its `--until` line, or at the time limit.
fn finish_nodes(
    owned: &mut [Owned],
    wall: Instant,
    limit_ns: u64,
    until: bool,
    interrupted: Option<u64>,
) -> Vec<(usize, Summary)> {
    let mut out = Vec::new();
    for o in owned {
        let outcome = o.ended.take().unwrap_or(match interrupted {
            Some(at_ns) => Err(WioError::Interrupted(at_ns)),
            None if until => Ok(0),
            None => Err(WioError::TimeLimit { limit_ns }),
        });
        if let Some(m) = o.machine.take() {
            let mut summary = m.finish(&o.cfg, outcome, wall, None).summary;
            summary.run_wall_ns = Some(o.busy.as_nanos() as u64);
            out.push((o.node, summary));
        }
    }
    out
}

/// The world's hosts: the calling thread runs the first share of the machines itself, and
/// one spawned thread runs each other share. A quantum costs a handoff only with the
/// threads (a world on one job has none: the coordinator runs its machines between
/// boundaries), and a machine stays on the thread that built it, so a thread's spare
/// engine caches (see `wio_riscv`'s cache reuse) serve the next world it runs.
pub struct Hosts {
    /// The machines the calling thread runs (share 0).
    local: Vec<Owned>,
    /// When the world began (for the local machines' summaries).
    wall: Instant,
    /// Commands to, and replies from, the threads of shares 1 and up.
    txs: Vec<Sender<Cmd>>,
    rxs: Vec<Receiver<Reply>>,
    /// Which share owns each node (0: the calling thread; s: thread s - 1).
    owner: Vec<usize>,
    handles: Vec<JoinHandle<()>>,
}

impl Hosts {
    /// Boots or restores `configs` (node i named `names[i]`) in `jobs` shares, node i in
    /// share i % jobs: share 0 on the calling thread, the others on a thread each; `gdb`:
    /// (node, address) of a node booted under gdb; every machine observes `signals` (see
    /// `Machine::observe`; none: nothing is observed).
    pub fn start(
        names: &[String],
        archs: &[Arch],
        configs: Vec<(RunConfig, Start)>,
        jobs: usize,
        wall: Instant,
        gdb: Option<(usize, String)>,
        signals: &[Signal],
    ) -> Result<Hosts> {
        let jobs = jobs.clamp(1, configs.len().max(1));
        let mut parts: Vec<Vec<NodeStart>> = (0..jobs).map(|_| Vec::new()).collect();
        let owner: Vec<usize> = (0..configs.len()).map(|i| i % jobs).collect();
        for (i, (cfg, start)) in configs.into_iter().enumerate() {
            let addr = gdb
                .as_ref()
                .filter(|(n, _)| *n == i)
                .map(|(_, a)| a.clone());
            let arch = archs.get(i).copied().unwrap_or(Arch::Riscv64);
            parts[i % jobs].push((i, names[i].clone(), arch, cfg, start, addr));
        }
        let mut parts = parts.into_iter();
        let own = parts.next().unwrap_or_default();
        let mut hosts = Hosts {
            local: Vec::new(),
            wall,
            txs: Vec::new(),
            rxs: Vec::new(),
            owner,
            handles: Vec::new(),
        };
        for part in parts {
            let (ctx, crx) = channel();
            let (rtx, rrx) = channel();
            let signals = signals.to_vec();
            let handle = std::thread::Builder::new()
                .name("wio-world".into())
                .spawn(move || host(part, &signals, wall, crx, rtx))
                .map_err(|source| WorldError::ThreadSpawn { source })?;
            hosts.txs.push(ctx);
            hosts.rxs.push(rrx);
            hosts.handles.push(handle);
        }
        // The calling thread's share boots while the threads boot theirs.
        let own = start_nodes(own, signals, wall);
        for rx in &hosts.rxs {
            match rx.recv() {
                Ok(Reply::Booted(r)) => r?,
                _ => return Err(WorldError::ThreadDied { booting: true }.into()),
            }
        }
        hosts.local = own?;
        Ok(hosts)
    }

    /// Sends `cmd()` to every thread, serves it for the calling thread's machines
    /// meanwhile, then gathers the replies: the calling thread's first, then each thread's
    /// in order.
    fn broadcast(&mut self, cmd: impl Fn() -> Cmd) -> Result<Vec<Reply>> {
        let died = || WioError::from(WorldError::ThreadDied { booting: false });
        for tx in &self.txs {
            tx.send(cmd()).map_err(|_| died())?;
        }
        let mut replies = vec![serve(&mut self.local, cmd(), self.wall)];
        for rx in &self.rxs {
            replies.push(recv_soon(rx).map_err(|_| died())?);
        }
        Ok(replies)
    }

    /// Delivers `deliveries` (in order) and runs every live machine to `until`; returns
    /// every machine's step in node order.
    pub fn run(&mut self, until: u64, deliveries: Vec<(usize, Input)>) -> Result<Vec<NodeStep>> {
        let shares = self.txs.len() + 1;
        let mut per: Vec<Vec<(usize, Input)>> = (0..shares).map(|_| Vec::new()).collect();
        for (node, input) in deliveries {
            if let Some(w) = self.owner.get(node) {
                per[*w].push((node, input));
            }
        }
        let died = || WioError::from(WorldError::ThreadDied { booting: false });
        let mut per = per.into_iter();
        let own = per.next().unwrap_or_default();
        for (tx, deliveries) in self.txs.iter().zip(per) {
            tx.send(Cmd::Run { until, deliveries })
                .map_err(|_| died())?;
        }
        let mut steps = run_quantum(&mut self.local, until, own);
        for rx in &self.rxs {
            match recv_soon(rx) {
                Ok(Reply::Ran(s)) => steps.extend(s),
                _ => return Err(died()),
            }
        }
        steps.sort_by_key(|s| s.node);
        Ok(steps)
    }

    /// Runs `cmd()` on every host and gathers what `take` finds in each reply, in node
    /// order; a machine's error comes back once every host has answered.
    fn gather<T>(
        &mut self,
        cmd: impl Fn() -> Cmd,
        take: impl Fn(Reply) -> Option<Result<Vec<(usize, T)>>>,
    ) -> Result<Vec<T>> {
        let mut out = Vec::new();
        let mut failed = None;
        for reply in self.broadcast(cmd)? {
            match take(reply) {
                Some(Ok(s)) => out.extend(s),
                Some(Err(e)) => failed = failed.or(Some(e)),
                None => return Err(WioError::from(WorldError::ThreadDied { booting: false })),
            }
        }
        if let Some(e) = failed {
            return Err(e);
        }
        out.sort_by_key(|(i, _)| *i);
        Ok(out.into_iter().map(|(_, s)| s).collect())
    }

    /// A snapshot of every machine, in node order; `reason` says why.
    pub fn snapshot(&mut self, reason: &str) -> Result<Vec<Snapshot>> {
        self.gather(
            || Cmd::Snapshot {
                reason: reason.to_string(),
            },
            |r| match r {
                Reply::Snapshots(s) => Some(s),
                _ => None,
            },
        )
    }

    /// Every machine's state kept in memory, in node order (a world's moment).
    pub fn moment(&mut self) -> Result<Vec<Box<dyn LoadedSnapshot>>> {
        self.gather(
            || Cmd::Moment,
            |r| match r {
                Reply::Moments(s) => Some(s),
                _ => None,
            },
        )
    }

    /// Ends every machine and returns the summaries in node order; `until`: the world
    /// stopped at its `until` text (machines still running end as a success).
    pub fn finish(
        mut self,
        limit_ns: u64,
        until: bool,
        interrupted: Option<u64>,
    ) -> Result<Vec<(usize, Summary)>> {
        let replies = self.broadcast(|| Cmd::Finish {
            limit_ns,
            until,
            interrupted,
        })?;
        let mut out = Vec::new();
        for reply in replies {
            match reply {
                Reply::Finished(s) => out.extend(s),
                _ => return Err(WioError::from(WorldError::ThreadDied { booting: false })),
            }
        }
        for h in self.handles.drain(..) {
            let _ = h.join();
        }
        out.sort_by_key(|(i, _)| *i);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    //! The host threads with synthetic machines (no engine, no guest): what the world loop
    //! is given must not depend on how many threads run the machines.
    use super::*;
    use wio_machines::machine::console::{Console, Echo};
    use wio_machines::machine::{RunResult, SnapshotOrigin};
    use wio_machines::snapshot::Meta;
    use wio_machines::trace::Trace;

    /// A node that sends `sends` (virtual time, bytes) and prints every frame it receives,
    /// then ends with its index as its status at `end_ns`.
    struct Node {
        index: u32,
        now: u64,
        end_ns: u64,
        sends: Vec<(u64, &'static [u8])>,
        inbox: Vec<Frame>,
        outbox: Vec<Frame>,
        console: Console,
        trace: Trace,
    }

    impl Machine for Node {
        fn seed(&self) -> u64 {
            u64::from(self.index)
        }
        fn now(&self) -> VirtualTime {
            VirtualTime::from_ns(self.now)
        }
        fn run_until(&mut self, limit: VirtualTime) -> Stop {
            let limit = limit.as_ns().min(self.end_ns);
            for f in std::mem::take(&mut self.inbox) {
                let line = format!("got {:?} sent for {}\n", f.bytes, f.at_ns);
                self.console
                    .push(line.as_bytes(), self.now, &mut self.trace);
            }
            while let Some(&(at, bytes)) = self.sends.first().filter(|(at, _)| *at <= limit) {
                self.sends.remove(0);
                self.outbox.push(Frame {
                    at_ns: at,
                    bytes: bytes.to_vec(),
                });
            }
            self.now = limit;
            if self.now >= self.end_ns {
                Stop::End(Ok(self.index))
            } else {
                Stop::Limit
            }
        }
        fn console(&mut self) -> &mut Console {
            &mut self.console
        }
        fn take_frames(&mut self) -> Vec<Frame> {
            std::mem::take(&mut self.outbox)
        }
        fn deliver_frame(&mut self, frame: Frame) -> Result<()> {
            self.inbox.push(frame);
            Ok(())
        }
        fn snapshot(&mut self, _: String) -> Result<Snapshot> {
            Err(WioError::Invariant(
                wio_machines::error::InternalError::NotModelled {
                    what: "a snapshot of a synthetic node",
                },
            ))
        }
        fn finish(
            self: Box<Self>,
            _: &RunConfig,
            outcome: Result<u32>,
            _: Instant,
            _: Option<&str>,
        ) -> RunResult {
            let status = outcome.as_ref().ok().copied();
            let summary = Summary::synthetic(
                self.seed(),
                self.now,
                &self.trace,
                self.console.sha256(),
                status,
            );
            RunResult { summary, outcome }
        }
    }

    /// How a node starts: "restored" from this recipe.
    struct Recipe {
        origin: SnapshotOrigin,
        index: u32,
        end_ns: u64,
        sends: Vec<(u64, &'static [u8])>,
    }

    impl LoadedSnapshot for Recipe {
        fn origin(&self) -> &SnapshotOrigin {
            &self.origin
        }
        fn restore(&self, _: &RunConfig, wall: Instant) -> Result<Box<dyn Machine>> {
            Ok(Box::new(Node {
                index: self.index,
                now: 0,
                end_ns: self.end_ns,
                sends: self.sends.clone(),
                inbox: Vec::new(),
                outbox: Vec::new(),
                console: Console::new(Echo::Capture, wall),
                trace: Trace::new(),
            }))
        }
    }

    fn recipe(index: u32, end_ns: u64, sends: Vec<(u64, &'static [u8])>) -> Start {
        let meta = Meta {
            arch: "synthetic".into(),
            wio_version: String::new(),
            seed: u64::from(index),
            virtual_ns: 0,
            instructions: None,
            reason: String::new(),
            mem_base: 0,
            mem_bytes: 0,
            kernel_sha256: String::new(),
            initrd_sha256: None,
            cmdline: String::new(),
            epoch_unix: 0,
            disk: None,
            link: [0; 4],
            kernel_path: None,
            initrd_path: None,
            firmware_path: None,
            firmware_sha256: None,
            ecc: false,
            isa: Default::default(),
        };
        let origin = SnapshotOrigin {
            path: "synthetic".into(),
            meta,
            sha256: String::new(),
        };
        Some((
            Arc::new(Recipe {
                origin,
                index,
                end_ns,
                sends,
            }),
            None,
        ))
    }

    /// One quantum as the coordinator sees it: per node (lines, frames, ended, status).
    type Seen = Vec<(usize, Vec<String>, Vec<(u64, Vec<u8>)>, bool, Option<u32>)>;

    /// Three nodes on `jobs` threads, run in quanta of 10 ns to 60 ns; every frame a node
    /// sends goes to the next node at the following boundary. Then `finish`es them.
    fn world(jobs: usize, until: bool) -> (Vec<Seen>, Vec<Summary>) {
        let names: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
        let configs = vec![
            (
                RunConfig::with_seed(0),
                recipe(0, 1_000, vec![(5, b"x"), (25, b"y")]),
            ),
            (
                RunConfig::with_seed(1),
                recipe(1, 1_000, vec![(12, b"z"), (35, b"w")]),
            ),
            (RunConfig::with_seed(2), recipe(2, 30, vec![])),
        ];
        let mut hosts =
            Hosts::start(&names, &[], configs, jobs, Instant::now(), None, &[]).unwrap();
        let mut seen = Vec::new();
        let mut pending = Vec::new();
        for t in (10..=60).step_by(10) {
            let steps = hosts.run(t, std::mem::take(&mut pending)).unwrap();
            let mut quantum = Seen::new();
            for s in steps {
                for f in &s.frames {
                    pending.push(((s.node + 1) % 3, Input::Frame(f.clone())));
                }
                quantum.push((
                    s.node,
                    s.lines,
                    s.frames.into_iter().map(|f| (f.at_ns, f.bytes)).collect(),
                    s.ended,
                    s.exit_status,
                ));
            }
            seen.push(quantum);
        }
        let summaries = hosts.finish(60, until, None).unwrap();
        assert_eq!(
            summaries.iter().map(|(i, _)| *i).collect::<Vec<_>>(),
            [0, 1, 2],
            "summaries in node order"
        );
        (seen, summaries.into_iter().map(|(_, s)| s).collect())
    }

    #[test]
    fn machines_report_in_node_order_and_the_same_on_any_number_of_threads() {
        let (one, ends) = world(1, false);
        for jobs in [2, 3, 8] {
            let (many, many_ends) = world(jobs, false);
            assert_eq!(one, many, "{jobs} threads");
            let hashes = |e: &[Summary]| e.iter().map(|s| s.trace_hash.clone()).collect::<Vec<_>>();
            assert_eq!(hashes(&ends), hashes(&many_ends), "{jobs} threads");
        }
        for quantum in &one {
            assert_eq!(quantum.iter().map(|q| q.0).collect::<Vec<_>>(), [0, 1, 2]);
        }
        // Node a's frame of t=5 leaves in the first quantum and b prints it in the second;
        // b's of t=12 reaches c in the third; a's of t=25, b in the fourth.
        assert_eq!(one[0][0].2, vec![(5, b"x".to_vec())]);
        assert_eq!(one[1][1].1, vec!["got [120] sent for 5".to_string()]);
        assert_eq!(one[1][1].2, vec![(12, b"z".to_vec())]);
        assert_eq!(one[2][0].2, vec![(25, b"y".to_vec())]);
        assert_eq!(one[2][2].1, vec!["got [122] sent for 12".to_string()]);
        assert_eq!(one[3][1].1, vec!["got [121] sent for 25".to_string()]);
        // Node c ends at 30 with its status and stays ended: b's frame of t=35, routed to
        // it at 40, is never delivered.
        assert_eq!((one[2][2].3, one[2][2].4), (true, Some(2)));
        assert_eq!(one[3][1].2, vec![(35, b"w".to_vec())]);
        for quantum in &one[3..] {
            assert!(quantum[2].3 && quantum[2].1.is_empty());
        }
        // A world stopped by the time limit ends its live machines with that error; c
        // keeps its own end.
        assert_eq!(
            ends.iter().map(|s| s.exit_status).collect::<Vec<_>>(),
            [None, None, Some(2)]
        );
        assert!(ends.iter().all(|s| s.virtual_ns <= 60));
        // Every node says how long its host thread ran it (host time, outside the hashes).
        assert!(ends.iter().all(|s| s.run_wall_ns.is_some()));
    }

    #[test]
    fn a_world_stopped_at_its_until_text_ends_live_machines_as_a_success() {
        let (_, ends) = world(2, true);
        assert_eq!(
            ends.iter().map(|s| s.exit_status).collect::<Vec<_>>(),
            [Some(0), Some(0), Some(2)]
        );
    }
}
