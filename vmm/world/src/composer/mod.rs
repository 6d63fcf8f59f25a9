//! The test composer: the executables of `/opt/antithesis/test/v1/<template>/` in a world's
//! image nodes, run as the Antithesis test composer's rules say, in an order drawn from the
//! world's seed (stream `world/composer`).
//!
//! Each image node runs an agent (`images/image/wio-agent.c`) that finds the node's
//! commands, reports them on the `wio.composer` port and starts and stops them when told.
//! The composer lives here, on the host, because a template's commands may be spread over
//! several nodes and its rules (a serial driver runs with no other driver, faults stop
//! before an `eventually_` command) are about the whole world. It acts at quantum
//! boundaries only, on what the agents reported with the virtual time they wrote it, so a
//! branch's commands are a function of its seed.
//!
//! A branch, once every agent has reported and a program declared setup complete:
//! 1. a template is drawn among those with a driver or `anytime_` command;
//! 2. its `first_` commands run one after another (name order), with faults held off;
//! 3. the driver phase: either one drawn `singleton_driver_` (the template's only driver
//!    in the branch), or a drawn number of driver starts ([`MAX_DRIVER_STARTS`] at most),
//!    each a drawn `parallel_driver_` (alongside others), `serial_driver_` (once no other
//!    driver runs, and none starts beside it) or `anytime_` command (alongside anything),
//!    a drawn delay apart;
//! 4. the end, drawn when the template has both: an `eventually_` command, at a drawn
//!    moment after a drawn driver start (faults stop for good, the commands still running
//!    are killed, then one drawn `eventually_` runs), or the `finally_` commands, one after
//!    another, once every started command has ended;
//! 5. the world ends when the last of them has ended.
//!
//! A command that exits non-zero (not killed by the composer) fails the property "test
//! command TEMPLATE/NAME exits 0", judged with the promises. `helper_` files are ignored.
//! A program may pause faults for N seconds by running `$ANTITHESIS_STOP_FAULTS N`.

use serde::{Deserialize, Serialize};
use serde_json::json;
use wio_machines::promises::report::Verdict;
use wio_machines::promises::{Kind as PromiseKind, Promise};
use wio_machines::trace::Trace;
use wio_scheduler::{RunSeed, SavedStream, Stream};

/// Most driver (and `anytime_`) starts in one branch.
pub const MAX_DRIVER_STARTS: u64 = 6;
/// Longest drawn delay between two driver starts, virtual ns.
pub const MAX_GAP_NS: u64 = 2_000_000_000;
/// Most commands one node's agent may report.
pub const MAX_COMMANDS: usize = 256;
/// Most runs one branch may start (a bound on the composer's state).
pub const MAX_RUNS: usize = 4096;
/// Longest `$ANTITHESIS_STOP_FAULTS` pause honoured, seconds.
pub const MAX_STOP_FAULTS_S: u64 = 3600;
/// Most windows in which faults are held off (a program calling `$ANTITHESIS_STOP_FAULTS`
/// in a loop costs a bounded amount: further calls are counted as bad lines).
pub const MAX_QUIET: usize = 1024;

/// When a command runs (its file name's prefix).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum CommandKind {
    /// `first_`: once, before the drivers, with faults held off.
    First,
    /// `parallel_driver_`: alongside other drivers.
    Parallel,
    /// `serial_driver_`: with no other driver.
    Serial,
    /// `singleton_driver_`: the branch's only driver.
    Singleton,
    /// `anytime_`: alongside anything, in the driver phase.
    Anytime,
    /// `eventually_`: after faults stop, the others killed.
    Eventually,
    /// `finally_`: once every started command has ended.
    Finally,
}

impl CommandKind {
    /// The kind a file name says (None: not a command, e.g. `helper_`).
    pub fn of(name: &str) -> Option<CommandKind> {
        const PREFIXES: [(&str, CommandKind); 7] = [
            ("first_", CommandKind::First),
            ("parallel_driver_", CommandKind::Parallel),
            ("serial_driver_", CommandKind::Serial),
            ("singleton_driver_", CommandKind::Singleton),
            ("anytime_", CommandKind::Anytime),
            ("eventually_", CommandKind::Eventually),
            ("finally_", CommandKind::Finally),
        ];
        PREFIXES
            .iter()
            .find(|(p, _)| name.len() > p.len() && name.starts_with(p))
            .map(|(_, k)| *k)
    }
}

/// A command of the chosen template.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Command {
    /// The node whose agent runs it.
    pub node: usize,
    /// `TEMPLATE/NAME`.
    pub path: String,
    /// Its kind.
    pub kind: CommandKind,
}

/// One run of a command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Run {
    /// Index in [`Composer::commands`].
    pub command: usize,
    /// Virtual ns it was started (ordered).
    pub started_ns: u64,
    /// Virtual ns its agent saw it end.
    pub ended_ns: Option<u64>,
    /// Its exit status (128 + signal when a signal ended it).
    pub status: Option<i32>,
    /// Whether the composer killed it (an `eventually_` command came).
    pub killed: bool,
}

/// Where the branch is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Phase {
    /// Waiting for every agent's report and for setup-complete.
    Waiting,
    /// Running the `first_` commands.
    First,
    /// Starting drivers.
    Drivers,
    /// Running the `finally_` commands.
    Finally,
    /// The `eventually_` command runs.
    Eventually,
    /// Every command of the branch has ended (or the template had nothing to run).
    Done,
}

/// How the driver phase ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
enum Ending {
    /// `finally_` commands once everything ended.
    Finally,
    /// An `eventually_` command after this many driver starts, at a drawn delay.
    Eventually { after_starts: u64 },
}

/// What the world must do after a composer step.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Orders {
    /// Lines for each node's agent: (node, line without its newline).
    pub lines: Vec<(usize, String)>,
    /// Whether the fault-quiet windows changed ([`Composer::quiet`]).
    pub quiet_changed: bool,
}

/// The composer's state (kept in world snapshots, whole).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Composer {
    stream: SavedStream,
    /// Per node: whether it has an agent, whether it reported, and what it found
    /// (`TEMPLATE/NAME`, sorted).
    agents: Vec<Option<(bool, Vec<String>)>>,
    /// The chosen template.
    pub template: Option<String>,
    /// Its commands, in (path, node) order.
    pub commands: Vec<Command>,
    /// Every run, in start order (a run's id is its index).
    pub runs: Vec<Run>,
    /// Where the branch is.
    pub phase: Phase,
    /// `first_` or `finally_` commands still to run, in order.
    queue: Vec<usize>,
    /// Driver starts left.
    starts_left: u64,
    /// Driver starts made.
    starts: u64,
    /// A serial driver waiting for the others to end.
    serial_waiting: Option<usize>,
    /// The next driver start's earliest time.
    next_ns: u64,
    ending: Ending,
    /// When the `eventually_` command comes (set at its driver start).
    eventually_ns: Option<u64>,
    /// Windows [from, until) in which no fault starts (`first_`, `ANTITHESIS_STOP_FAULTS`,
    /// the stop before `eventually_`); `u64::MAX` = until further notice.
    pub quiet: Vec<(u64, u64)>,
    /// Virtual ns the composer started (setup complete and every agent reported).
    pub started_ns: Option<u64>,
    /// The boundary at which it first saw setup complete: it starts at a later one, so a
    /// snapshot taken at setup-complete holds a composer that has drawn nothing yet (its
    /// branches each draw their own template).
    setup_seen_ns: Option<u64>,
    /// Lines for the agents not sent yet (node, line): the world sends them at the next
    /// boundary; a snapshot keeps them.
    pub outbox: Vec<(usize, String)>,
    /// Lines from agents it could not read (counted).
    pub bad_lines: u64,
}

impl Composer {
    /// A composer for a world whose nodes have an agent where `agents` says.
    pub fn new(seed: RunSeed, agents: &[bool]) -> Composer {
        Composer {
            stream: seed.stream("world/composer").save(),
            agents: agents
                .iter()
                .map(|a| a.then(|| (false, Vec::new())))
                .collect(),
            template: None,
            commands: Vec::new(),
            runs: Vec::new(),
            phase: Phase::Waiting,
            queue: Vec::new(),
            starts_left: 0,
            starts: 0,
            serial_waiting: None,
            next_ns: 0,
            ending: Ending::Finally,
            eventually_ns: None,
            quiet: Vec::new(),
            started_ns: None,
            setup_seen_ns: None,
            outbox: Vec::new(),
            bad_lines: 0,
        }
    }

    /// Whether any node has an agent.
    pub fn active(&self) -> bool {
        self.agents.iter().any(Option::is_some)
    }

    /// Re-keys the draws to come from `seed` (a branch of a snapshot with another seed).
    pub fn reseed(&mut self, seed: RunSeed) {
        self.stream = Stream::resume(&self.stream, Some(seed)).save();
    }

    /// Whether the branch's commands are all done (the world ends).
    pub fn done(&self) -> bool {
        self.phase == Phase::Done && self.template.is_some()
    }

    /// Takes a line node `node`'s agent wrote at `at_ns`; traces what it means.
    pub fn take_line(
        &mut self,
        node: usize,
        at_ns: u64,
        line: &[u8],
        trace: &mut Trace,
        out: &mut Orders,
    ) {
        let text = String::from_utf8_lossy(line);
        let mut words = text.split(' ');
        let (verb, a, b) = (words.next(), words.next(), words.next());
        let Some(Some((ready, found))) = self.agents.get_mut(node) else {
            self.bad_lines += 1;
            return;
        };
        if *ready && verb == Some("command") {
            // The agent reports again: its node restarted (a crash fault, a reboot). What
            // ran there is lost; the list is taken again.
            *ready = false;
            found.clear();
            self.lose_runs(node, at_ns, trace);
            return self.take_line(node, at_ns, line, trace, out);
        }
        match (verb, a, b) {
            (Some("command"), Some(path), None) if !*ready => {
                if found.len() < MAX_COMMANDS && valid_path(path) {
                    found.push(path.to_string());
                } else {
                    self.bad_lines += 1;
                }
            }
            (Some("ready"), None, None) if !*ready => {
                *ready = true;
                found.sort();
                found.dedup();
                trace.event(
                    at_ns,
                    "composer-agent",
                    json!({ "node": node, "commands": found }),
                );
            }
            (Some("exited"), Some(id), Some(status)) => {
                let (Ok(id), Ok(status)) = (id.parse::<usize>(), status.parse::<i32>()) else {
                    self.bad_lines += 1;
                    return;
                };
                match self.runs.get_mut(id) {
                    Some(r) if r.ended_ns.is_none() && self.commands[r.command].node == node => {
                        r.ended_ns = Some(at_ns);
                        r.status = Some(status);
                        trace.event(
                            at_ns,
                            "composer-end",
                            json!({ "run": id, "command": self.commands[r.command].path, "status": status, "killed": r.killed }),
                        );
                    }
                    _ => self.bad_lines += 1,
                }
            }
            (Some("stop_faults"), Some(secs), None) => {
                let Ok(secs) = secs.parse::<u64>() else {
                    self.bad_lines += 1;
                    return;
                };
                if self.quiet.len() >= MAX_QUIET {
                    self.bad_lines += 1;
                    return;
                }
                let secs = secs.min(MAX_STOP_FAULTS_S);
                let until = at_ns.saturating_add(secs * 1_000_000_000);
                self.quiet.push((at_ns, until));
                out.quiet_changed = true;
                trace.event(
                    at_ns,
                    "composer-stop-faults",
                    json!({ "node": node, "until": until }),
                );
            }
            _ => self.bad_lines += 1,
        }
    }

    /// Node `node` ended (or restarted) at `at_ns`: the runs still going there ended with
    /// it, with no status (neither a success nor a failure of the command).
    pub fn lose_runs(&mut self, node: usize, at_ns: u64, trace: &mut Trace) {
        for (id, r) in self.runs.iter_mut().enumerate() {
            if r.ended_ns.is_none() && self.commands[r.command].node == node {
                r.ended_ns = Some(at_ns);
                trace.event(at_ns, "composer-lost", json!({ "run": id, "node": node }));
            }
        }
    }

    /// One step at quantum boundary `now` (`setup`: a program declared setup complete):
    /// starts what is due, as the rules say. Returns what the world must send.
    pub fn step(&mut self, now: u64, setup: bool, trace: &mut Trace, out: &mut Orders) {
        // Nothing happens once every command of the branch has ended: the stream is not
        // even resumed (resuming and saving it without a draw leaves it as it was).
        if self.phase == Phase::Done {
            return;
        }
        let mut rng = Stream::resume(&self.stream, None);
        // Several transitions may happen at one boundary (a phase with nothing to run).
        for _ in 0..8 {
            let before = (self.phase, self.runs.len());
            self.advance(now, setup, &mut rng, trace, out);
            if (self.phase, self.runs.len()) == before {
                break;
            }
        }
        self.stream = rng.save();
    }

    fn running(&self) -> impl Iterator<Item = (usize, &Run)> {
        self.runs
            .iter()
            .enumerate()
            .filter(|(_, r)| r.ended_ns.is_none())
    }

    fn drivers_running(&self) -> usize {
        self.running()
            .filter(|(_, r)| {
                matches!(
                    self.commands[r.command].kind,
                    CommandKind::Parallel | CommandKind::Serial | CommandKind::Singleton
                )
            })
            .count()
    }

    fn of_kind(&self, kind: CommandKind) -> Vec<usize> {
        (0..self.commands.len())
            .filter(|i| self.commands[*i].kind == kind)
            .collect()
    }

    fn start(&mut self, command: usize, now: u64, trace: &mut Trace, out: &mut Orders) {
        if self.runs.len() >= MAX_RUNS {
            return;
        }
        let id = self.runs.len();
        let c = &self.commands[command];
        out.lines.push((c.node, format!("start {id} {}", c.path)));
        trace.event(
            now,
            "composer-start",
            json!({ "run": id, "command": c.path, "node": c.node }),
        );
        self.runs.push(Run {
            command,
            started_ns: now,
            ended_ns: None,
            status: None,
            killed: false,
        });
    }

    /// Holds faults off from `now` until further notice.
    fn hold_faults(&mut self, now: u64, out: &mut Orders) {
        self.quiet.push((now, u64::MAX));
        out.quiet_changed = true;
    }

    /// Ends the open-ended quiet window opened at `from`, at `now`.
    fn release_faults(&mut self, from: u64, now: u64, out: &mut Orders) {
        for w in self
            .quiet
            .iter_mut()
            .filter(|w| w.0 == from && w.1 == u64::MAX)
        {
            w.1 = now;
            out.quiet_changed = true;
        }
    }

    fn advance(
        &mut self,
        now: u64,
        setup: bool,
        rng: &mut Stream,
        trace: &mut Trace,
        out: &mut Orders,
    ) {
        match self.phase {
            Phase::Waiting => {
                if setup && self.setup_seen_ns.is_none() {
                    self.setup_seen_ns = Some(now);
                }
                let all_ready = self.agents.iter().flatten().all(|(ready, _)| *ready);
                let after_setup = self.setup_seen_ns.is_some_and(|t| now > t);
                if !(after_setup && all_ready && self.active()) {
                    return;
                }
                self.started_ns = Some(now);
                self.choose_template(rng, now, trace);
                if self.template.is_none() {
                    self.phase = Phase::Done;
                    return;
                }
                self.queue = self.of_kind(CommandKind::First);
                self.hold_faults(now, out);
                self.phase = Phase::First;
            }
            Phase::First | Phase::Finally => {
                if self.running().next().is_some() {
                    return;
                }
                if !self.queue.is_empty() {
                    let c = self.queue.remove(0);
                    self.start(c, now, trace, out);
                    return;
                }
                if self.phase == Phase::Finally {
                    self.phase = Phase::Done;
                    return;
                }
                if let Some(from) = self.started_ns {
                    self.release_faults(from, now, out);
                }
                self.begin_drivers(now, rng, trace, out);
            }
            Phase::Drivers => self.drive(now, rng, trace, out),
            Phase::Eventually => {
                if self.running().next().is_none() {
                    self.phase = Phase::Done;
                }
            }
            Phase::Done => {}
        }
    }

    fn choose_template(&mut self, rng: &mut Stream, now: u64, trace: &mut Trace) {
        let mut templates: Vec<&str> = self
            .agents
            .iter()
            .flatten()
            .flat_map(|(_, found)| found.iter())
            .filter(|p| {
                p.split_once('/')
                    .and_then(|(_, n)| CommandKind::of(n))
                    .is_some_and(|k| {
                        matches!(
                            k,
                            CommandKind::Parallel
                                | CommandKind::Serial
                                | CommandKind::Singleton
                                | CommandKind::Anytime
                        )
                    })
            })
            .filter_map(|p| p.split_once('/').map(|(t, _)| t))
            .collect();
        templates.sort_unstable();
        templates.dedup();
        if templates.is_empty() {
            trace.event(now, "composer-template", json!({ "template": null }));
            return;
        }
        let t = templates[rng.below(templates.len() as u64) as usize].to_string();
        let mut commands = Vec::new();
        for (node, (_, found)) in self
            .agents
            .iter()
            .enumerate()
            .filter_map(|(i, a)| Some((i, a.as_ref()?)))
        {
            for p in found {
                let Some((tt, name)) = p.split_once('/') else {
                    continue;
                };
                if let (true, Some(kind)) = (tt == t, CommandKind::of(name)) {
                    commands.push(Command {
                        node,
                        path: p.clone(),
                        kind,
                    });
                }
            }
        }
        commands.sort_by(|a, b| (&a.path, a.node).cmp(&(&b.path, b.node)));
        // A command several nodes have (a template shared by containers) runs on one of
        // them, drawn: the template's commands, once each.
        let mut once: Vec<Command> = Vec::new();
        for group in commands.chunk_by(|a, b| a.path == b.path) {
            once.push(group[rng.below(group.len() as u64) as usize].clone());
        }
        let commands = once;
        trace.event(
            now,
            "composer-template",
            json!({ "template": t, "commands": commands.len() }),
        );
        self.template = Some(t);
        self.commands = commands;
    }

    fn begin_drivers(&mut self, now: u64, rng: &mut Stream, trace: &mut Trace, out: &mut Orders) {
        let p = self.of_kind(CommandKind::Parallel).len() as u64;
        let s = self.of_kind(CommandKind::Serial).len() as u64;
        let g = self.of_kind(CommandKind::Singleton);
        let a = self.of_kind(CommandKind::Anytime).len() as u64;
        let e = self.of_kind(CommandKind::Eventually).len();
        let f = self.of_kind(CommandKind::Finally).len();
        self.phase = Phase::Drivers;
        // A singleton driver, drawn in proportion to the drivers of each kind.
        let singleton = !g.is_empty() && rng.below(g.len() as u64 + p + s) < g.len() as u64;
        self.starts_left = if singleton {
            1
        } else if p + s + a > 0 {
            rng.range_inclusive(1, MAX_DRIVER_STARTS)
        } else {
            0
        };
        self.ending = if e > 0 && (f == 0 || rng.below(2) == 0) {
            Ending::Eventually {
                after_starts: rng.range_inclusive(1, self.starts_left.max(1)),
            }
        } else {
            Ending::Finally
        };
        trace.event(
            now,
            "composer-drivers",
            json!({ "singleton": singleton, "starts": self.starts_left, "eventually": matches!(self.ending, Ending::Eventually { .. }) }),
        );
        if singleton {
            let c = g[rng.below(g.len() as u64) as usize];
            self.start(c, now, trace, out);
            self.starts_left = 0;
            self.starts = 1;
            self.eventually_due(now, rng);
        }
        self.next_ns = now;
    }

    /// Sets when the `eventually_` command comes, once its driver start was made.
    fn eventually_due(&mut self, now: u64, rng: &mut Stream) {
        if let Ending::Eventually { after_starts } = self.ending {
            if self.starts >= after_starts && self.eventually_ns.is_none() {
                self.eventually_ns = Some(now + rng.below(MAX_GAP_NS + 1));
            }
        }
    }

    fn drive(&mut self, now: u64, rng: &mut Stream, trace: &mut Trace, out: &mut Orders) {
        if let Some(at) = self.eventually_ns.filter(|at| now >= *at) {
            // Faults stop for good, what runs is killed, one eventually_ command runs.
            self.hold_faults(now, out);
            let running: Vec<usize> = self.running().map(|(i, _)| i).collect();
            for id in running {
                self.runs[id].killed = true;
                let node = self.commands[self.runs[id].command].node;
                out.lines.push((node, format!("kill {id}")));
            }
            trace.event(now, "composer-eventually", json!({ "due": at }));
            let e = self.of_kind(CommandKind::Eventually);
            let c = e[rng.below(e.len() as u64) as usize];
            self.start(c, now, trace, out);
            self.phase = Phase::Eventually;
            return;
        }
        if let Some(c) = self.serial_waiting {
            if self.drivers_running() == 0 {
                self.serial_waiting = None;
                self.start(c, now, trace, out);
                self.next_ns = now + rng.below(MAX_GAP_NS + 1);
            }
            return;
        }
        if self.starts_left > 0 && now >= self.next_ns {
            let p = self.of_kind(CommandKind::Parallel);
            let s = self.of_kind(CommandKind::Serial);
            let a = self.of_kind(CommandKind::Anytime);
            let serial_runs = self
                .running()
                .any(|(_, r)| self.commands[r.command].kind == CommandKind::Serial);
            let total = (p.len() + s.len() + a.len()) as u64;
            if total == 0 {
                self.starts_left = 0;
                return;
            }
            let mut k = rng.below(total) as usize;
            self.starts_left -= 1;
            self.starts += 1;
            if k < p.len() {
                if serial_runs {
                    // Beside a serial driver no other driver starts: this start waits
                    // for it, drawn again then.
                    self.starts_left += 1;
                    self.starts -= 1;
                    return;
                }
                self.start(p[k], now, trace, out);
            } else {
                k -= p.len();
                if k < s.len() {
                    if self.drivers_running() == 0 {
                        self.start(s[k], now, trace, out);
                    } else {
                        self.serial_waiting = Some(s[k]);
                        return;
                    }
                } else {
                    self.start(a[k - s.len()], now, trace, out);
                }
            }
            self.next_ns = now + rng.below(MAX_GAP_NS + 1);
            self.eventually_due(now, rng);
            return;
        }
        let idle = self.starts_left == 0 && self.running().next().is_none();
        if idle && self.eventually_ns.is_none() {
            self.queue = self.of_kind(CommandKind::Finally);
            self.phase = Phase::Finally;
        }
    }

    /// When the composer next acts by itself (a driver start or the `eventually_` command
    /// is due), if it waits for a time: a world whose machines are all idle does not jump
    /// past it.
    pub fn wake(&self) -> Option<u64> {
        if self.phase != Phase::Drivers {
            return None;
        }
        let next = (self.starts_left > 0 && self.serial_waiting.is_none()).then_some(self.next_ns);
        match (next, self.eventually_ns) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// What the summary says of the composer.
    pub fn report(&self, names: &[String]) -> ComposerReport {
        let mut found: Vec<String> = Vec::new();
        for (i, (_, f)) in self
            .agents
            .iter()
            .enumerate()
            .filter_map(|(i, a)| Some((i, a.as_ref()?)))
        {
            found.extend(
                f.iter()
                    .map(|p| format!("{}:{p}", names.get(i).map_or("?", String::as_str))),
            );
        }
        ComposerReport {
            commands_found: found,
            template: self.template.clone(),
            started_ns: self.started_ns,
            finished: self.phase == Phase::Done,
            runs: self
                .runs
                .iter()
                .enumerate()
                .map(|(id, r)| {
                    let c = &self.commands[r.command];
                    RunReport {
                        run: id,
                        command: c.path.clone(),
                        node: names.get(c.node).cloned().unwrap_or_default(),
                        started_ns: r.started_ns,
                        ended_ns: r.ended_ns,
                        status: r.status,
                        killed: r.killed,
                    }
                })
                .collect(),
            quiet: self.quiet.clone(),
            bad_lines: self.bad_lines,
        }
    }

    /// The property each command that ran stands for: "test command T/N exits 0",
    /// violated by each run that ended non-zero and was not killed.
    /// `names`: the nodes' names (the details say where it failed, as the promises' do).
    pub fn verdicts(&self, names: &[String]) -> Vec<Verdict> {
        let mut out: Vec<Promise> = Vec::new();
        for (id, r) in self.runs.iter().enumerate() {
            let c = &self.commands[r.command];
            let name = format!("test command {} exits 0", c.path);
            let i = match out.iter().position(|p| p.id == name) {
                Some(i) => i,
                None => {
                    let always = PromiseKind::Always;
                    out.push(Promise::new(
                        name.clone(),
                        name,
                        always,
                        "Always".into(),
                        false,
                        None,
                    ));
                    out.len() - 1
                }
            };
            match (r.status, r.killed, r.ended_ns) {
                (Some(0), _, Some(t)) => {
                    out[i].evaluate(t, true, || None);
                }
                (Some(status), false, Some(t)) => {
                    let node = names.get(c.node).map_or("?", String::as_str);
                    out[i].evaluate(t, false, || {
                        Some(format!("on {node}: exit status {status} (run {id})"))
                    });
                }
                _ => {}
            }
        }
        out.into_iter()
            .map(|promise| Verdict {
                status: promise.status(),
                promise,
            })
            .collect()
    }
}

/// A command path an agent may report: `TEMPLATE/NAME`, printable, no spaces.
fn valid_path(p: &str) -> bool {
    let Some((t, n)) = p.split_once('/') else {
        return false;
    };
    !t.is_empty()
        && !n.contains('/')
        && CommandKind::of(n).is_some()
        && p.len() <= 255
        && p.bytes().all(|b| b.is_ascii_graphic())
        && t != "."
        && t != ".."
}

pub use wio_machines::faults::in_quiet;

mod report;
pub use report::{ComposerReport, RunReport};

#[cfg(test)]
mod tests;
