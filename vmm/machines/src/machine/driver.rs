//! Runs a [`Machine`] of any architecture: a whole run (`wio run`: snapshots on the
//! way, `--until`, the time limit) or one branch of an exploration (a restore with
//! another seed, run to its end, its `until` text or its limit).
//!
//! Snapshots are taken between two steps of the machine, at the first step boundary
//! at or after the requested point (see `snapshot::plan`), so taking one changes nothing.

use super::noise::SchedNoise;
use super::novelty::{Mark, Signal};
use super::{BranchCost, BranchEnd, LoadedSnapshot, Machine, RunConfig, RunResult, Stop};
use crate::error::{PathError, Result, WioError};
use crate::snapshot::plan::{SnapshotAt, SnapshotPlan};
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;
use wio_clock::VirtualTime;

/// The snapshot point due now, if any, taken off the plan: the guest's request first
/// (when it made one), then a virtual time that has been reached, then a watched
/// console line that appeared. Returns why the snapshot is taken.
fn due_snapshot(
    plan: &mut SnapshotPlan,
    guest: Option<Option<u64>>,
    setup_complete: bool,
    now: u64,
    m: &mut dyn Machine,
) -> Option<String> {
    if setup_complete {
        if let Some(i) = plan.at.iter().position(|a| *a == SnapshotAt::SetupComplete) {
            return Some(plan.at.remove(i).describe());
        }
    }
    if let Some(tag) = guest {
        if let Some(i) = plan.at.iter().position(|a| *a == SnapshotAt::Guest) {
            plan.at.remove(i);
            return Some(match tag {
                Some(tag) => format!("guest request (tag {tag})"),
                None => SnapshotAt::Guest.describe(),
            });
        }
    }
    if let Some(i) = plan
        .at
        .iter()
        .position(|a| matches!(a, SnapshotAt::Time(t) if now >= *t))
    {
        return Some(plan.at.remove(i).describe());
    }
    let console = m.console();
    if console.watch_hits.is_empty() {
        return None;
    }
    let text = console.watch_hits.remove(0);
    plan.at.retain(|a| *a != SnapshotAt::Console(text.clone()));
    Some(SnapshotAt::Console(text).describe())
}

/// How a step boundary of a run without snapshot points (a debugger's) came out.
pub enum Boundary {
    /// The run ends here: its outcome, and the `--until` text it stopped at, if that ended it.
    Ended(Result<u32>, Option<String>),
    /// The run goes on.
    Goes,
}

/// Whether `stop` ends the run as `wio run` decides: at the `--until` line (a success,
/// winning over the guest's own end), at the guest's end, or at the time limit.
pub fn boundary(stop: Stop, cfg: &RunConfig, m: &mut dyn Machine) -> Boundary {
    let at_until = cfg.until.clone().filter(|u| m.console().take_hit(u));
    match stop {
        _ if at_until.is_some() => Boundary::Ended(Ok(0), at_until),
        Stop::End(outcome) => Boundary::Ended(outcome, None),
        Stop::Limit => Boundary::Ended(
            Err(WioError::TimeLimit {
                limit_ns: cfg.max_virtual_ns,
            }),
            None,
        ),
        Stop::Yield | Stop::GuestSnapshot(_) | Stop::SetupComplete => Boundary::Goes,
    }
}

/// One step of `m` towards `limit` (`Machine::run_until`); in debug builds, checks that
/// virtual time did not go back in it. Every loop that steps machines (a run, a branch, a
/// world's node threads) steps them through here.
pub fn step(m: &mut dyn Machine, limit: VirtualTime) -> Stop {
    let before = cfg!(debug_assertions).then(|| m.now());
    let stop = m.run_until(limit);
    debug_assert!(
        before.is_none_or(|b| m.now() >= b),
        "virtual time went back in a step"
    );
    stop
}

/// Runs `m` to its end, taking the snapshots `cfg.snapshots` asks for on the way and
/// stopping at `cfg.until`'s console text. A snapshot that cannot be taken or written
/// ends the run with that error (the summary still comes).
pub fn run(mut m: Box<dyn Machine>, cfg: &RunConfig, wall: Instant) -> RunResult {
    let limit = VirtualTime::limit_or_max(cfg.max_virtual_ns);
    let mut plan = cfg.snapshots.clone();
    let mut taken = 0usize;
    let console = m.console();
    for at in &plan.at {
        if let SnapshotAt::Console(text) = at {
            console.watch.push(text.clone());
        }
    }
    if let Some(u) = &cfg.until {
        console.watch.push(u.clone());
    }
    let mut until_hit = None;
    let outcome = loop {
        let stop = step(m.as_mut(), limit);
        if crate::interrupt::requested() {
            break Err(WioError::Interrupted(m.now().as_ns()));
        }
        if let Some(e) = cfg.host.as_ref().and_then(|h| h.take_failure()) {
            break Err(e);
        }
        // The --until line ends the run after this step's snapshot points (a snapshot at
        // the same line is still taken), and wins over the guest's own end.
        let at_until = cfg.until.as_deref().filter(|u| m.console().take_hit(u));
        let guest = match stop {
            Stop::End(_) | Stop::Limit if at_until.is_some() => {
                until_hit = at_until;
                break Ok(0);
            }
            Stop::End(outcome) => break outcome,
            Stop::Limit => {
                break Err(WioError::TimeLimit {
                    limit_ns: cfg.max_virtual_ns,
                })
            }
            Stop::GuestSnapshot(tag) => Some(tag),
            Stop::Yield | Stop::SetupComplete => None,
        };
        let setup_complete = matches!(stop, Stop::SetupComplete);
        let now = m.now().as_ns();
        if let Some(reason) = due_snapshot(&mut plan, guest, setup_complete, now, m.as_mut()) {
            taken += 1;
            let path = plan.path(taken, m.seed(), now);
            let started = Instant::now();
            match m.snapshot(reason.clone()).and_then(|s| s.write(&path)) {
                Ok(bytes) => eprintln!(
                    "wio: snapshot {} at {now} ns ({reason}): {} MiB in {} ms; restore with: wio run --from {}",
                    path.display(),
                    bytes >> 20,
                    started.elapsed().as_millis(),
                    path.display()
                ),
                Err(e) => break Err(e),
            }
        }
        if at_until.is_some() {
            until_hit = at_until;
            break Ok(0);
        }
    };
    m.finish(cfg, outcome, wall, until_hit)
}

/// The configuration a branch of `l` runs with: `seed`, hash-only trace, no console
/// output, `until` and `limit_ns` (0: none) of virtual time, `sched_noise` from the snapshot
/// point on when given (else the snapshot's level).
fn branch_config(
    l: &dyn LoadedSnapshot,
    seed: u64,
    until: Option<&str>,
    limit_ns: u64,
    sched_noise: Option<SchedNoise>,
) -> RunConfig {
    let meta = l.meta();
    RunConfig {
        mem_mib: meta.mem_bytes >> 20,
        epoch_unix: meta.epoch_unix,
        max_virtual_ns: limit_ns,
        from: Some(l.path().to_path_buf()),
        until: until.map(str::to_string),
        sched_noise: sched_noise.unwrap_or_default(),
        sched_noise_given: sched_noise.is_some(),
        ..RunConfig::with_seed(seed)
    }
}

/// What a branch is run with besides its snapshot and seed.
#[derive(Debug, Clone, Copy)]
pub struct BranchRun<'a> {
    /// Stop at the first console line containing this text.
    pub until: Option<&'a str>,
    /// Console texts to report.
    pub watch: &'a [String],
    /// Virtual-time limit (ns since boot; 0: none).
    pub limit_ns: u64,
    /// CPU-timing noise from the snapshot point on (None: the snapshot's).
    pub sched_noise: Option<SchedNoise>,
}

/// How a branch's loop ended: its outcome and whether its `until` text ended it; None
/// when abandoned.
type LoopEnd = Option<(Result<u32>, bool)>;

/// Runs `m` to its end, its `until` text or `limit`, calling `at_boundary` at every step
/// boundary the run goes on from (where a moment may be taken).
fn branch_loop(
    m: &mut dyn Machine,
    until: Option<&str>,
    limit_ns: u64,
    cancel: &AtomicBool,
    at_boundary: &mut dyn FnMut(&mut dyn Machine) -> Result<bool>,
) -> Result<LoopEnd> {
    let limit = VirtualTime::limit_or_max(limit_ns);
    loop {
        if cancel.load(Ordering::Relaxed) || crate::interrupt::requested() {
            return Ok(None);
        }
        match step(m, limit) {
            Stop::End(outcome) => return Ok(Some((outcome, false))),
            Stop::Limit => return Ok(Some((Err(WioError::TimeLimit { limit_ns }), false))),
            Stop::Yield | Stop::GuestSnapshot(_) | Stop::SetupComplete => {}
        }
        if until.is_some_and(|u| m.console().watch_hits.iter().any(|h| h == u)) {
            return Ok(Some((Ok(0), true)));
        }
        if !at_boundary(m)? {
            return Ok(None);
        }
    }
}

/// Restores `l` with `seed` for a branch, watching `b.watch` and `b.until`.
fn restore_branch(
    l: &dyn LoadedSnapshot,
    seed: u64,
    b: &BranchRun,
    wall: Instant,
) -> Result<(Box<dyn Machine>, RunConfig)> {
    let cfg = branch_config(l, seed, b.until, b.limit_ns, b.sched_noise);
    let mut m = l.restore(&cfg, wall)?;
    let console = m.console();
    console.watch = b.watch.to_vec();
    if let Some(u) = b.until {
        console.watch.push(u.to_string());
    }
    Ok((m, cfg))
}

/// Ends a branch's machine: what it matched, and its summary.
fn end_branch(
    mut m: Box<dyn Machine>,
    cfg: &RunConfig,
    b: &BranchRun,
    (outcome, stopped_at_until): (Result<u32>, bool),
    wall: Instant,
    mut cost: BranchCost,
) -> BranchEnd {
    let ending = Instant::now();
    let mut matched: Vec<String> = m
        .console()
        .watch_hits
        .iter()
        .filter(|h| b.watch.contains(h))
        .cloned()
        .collect();
    matched.dedup();
    let lines = std::mem::take(&mut m.console().matched_lines);
    let end = m.finish(cfg, outcome, wall, b.until.filter(|_| stopped_at_until));
    cost.end = ending.elapsed();
    BranchEnd {
        summary: end.summary,
        matched,
        stopped_at_until,
        lines,
        cost,
    }
}

/// Runs one branch: restores `l` with `seed` (hash-only trace, no console output, no
/// other outputs) and runs it to its end, to `until` (a console text), or to `limit_ns`
/// of virtual time (0: none), with `sched_noise` from the snapshot point on when given (else
/// the snapshot's level). `watch` are console texts to report; `cancel`, or Ctrl-C or
/// SIGTERM (`crate::interrupt`), abandons the branch (None is returned: its end at the
/// signal would be the signal's, not its seed's).
pub fn run_branch(
    l: &dyn LoadedSnapshot,
    seed: u64,
    until: Option<&str>,
    watch: &[String],
    limit_ns: u64,
    sched_noise: Option<SchedNoise>,
    cancel: &AtomicBool,
) -> Result<Option<BranchEnd>> {
    let b = BranchRun {
        until,
        watch,
        limit_ns,
        sched_noise,
    };
    run_branch_as(l, seed, &b, cancel, false)
}

/// [`run_branch`] with its settings in `b`; `learn`: then `l` learns the code the branch
/// decoded and built ([`LoadedSnapshot::learn`]): a flat exploration's first branch, so
/// that every later restore is warm.
pub fn run_branch_as(
    l: &dyn LoadedSnapshot,
    seed: u64,
    b: &BranchRun<'_>,
    cancel: &AtomicBool,
    learn: bool,
) -> Result<Option<BranchEnd>> {
    let wall = Instant::now();
    let (mut m, cfg) = restore_branch(l, seed, b, wall)?;
    let restore = wall.elapsed();
    let Some(ended) = branch_loop(m.as_mut(), b.until, b.limit_ns, cancel, &mut |_| Ok(true))?
    else {
        return Ok(None);
    };
    if learn {
        if let Some(code) = m.learned_code() {
            l.learn(code)?;
        }
    }
    let cost = BranchCost {
        restore,
        run: wall.elapsed().saturating_sub(restore),
        end: Default::default(),
    };
    Ok(Some(end_branch(m, &cfg, b, ended, wall, cost)))
}

/// A moment a guided branch kept: where, for what, and the state there (a machine's, or
/// a world's).
pub struct Kept<S: ?Sized = dyn LoadedSnapshot> {
    /// The virtual time it is named by: the moment is the first step boundary at or after it.
    pub at_ns: u64,
    /// What was new there.
    pub marks: Vec<Mark>,
    /// The state, ready to branch from.
    pub loaded: Box<S>,
}

/// How a guided branch ended.
pub struct GuidedEnd {
    /// As any branch ends.
    pub end: BranchEnd,
    /// The moments it kept, in time order (what it saw new elsewhere, after its last
    /// moment or once it could keep no more, stays unknown to the exploration, for a later
    /// branch to keep a moment at).
    pub moments: Vec<Kept>,
}

/// What a guided branch keeps as it runs, boundary by boundary: a moment wherever it saw
/// marks the exploration did not know. A boundary brings marks; the
/// moment is kept at that boundary when its time is past the previous boundary's, else at
/// the next boundary past it, so a moment is always "the first step boundary at or after
/// `at_ns`" (what a path's replay finds again). At most `max` moments are kept, and none
/// from the boundary that brought a violated promise on (every branch from after a
/// violation fails the same way). Machines and worlds keep moments by the same rule.
pub struct Keeper<'a, S: ?Sized> {
    signals: &'a [Signal],
    known: &'a dyn Fn(&Mark) -> bool,
    max: usize,
    own: BTreeSet<(Signal, u64)>,
    /// The moments kept, in time order.
    pub moments: Vec<Kept<S>>,
    /// (at_ns, marks) of the moment to keep at the first boundary at or after at_ns.
    pending: Option<(u64, Vec<Mark>)>,
    prev_ns: u64,
    /// Whether the branch has violated a promise (it keeps no more moments).
    violated: bool,
}

impl<'a, S: ?Sized> Keeper<'a, S> {
    /// A keeper of a branch that starts at `start_ns`, counting `signals`, for an
    /// exploration that knows what `known` says, keeping at most `max` moments.
    pub fn new(
        signals: &'a [Signal],
        known: &'a dyn Fn(&Mark) -> bool,
        max: usize,
        start_ns: u64,
    ) -> Keeper<'a, S> {
        Keeper {
            signals,
            known,
            max,
            own: BTreeSet::new(),
            moments: Vec::new(),
            pending: None,
            prev_ns: start_ns,
            violated: false,
        }
    }

    /// A step boundary at `now` that brought `seen`: notes what is new, and keeps the
    /// moment due here with `keep` (None: no moment can be taken here; it is not kept).
    pub fn boundary(
        &mut self,
        now: u64,
        seen: Vec<Mark>,
        keep: impl FnOnce() -> Result<Option<Box<S>>>,
    ) -> Result<()> {
        // A violation's mark is worth nothing (`machine::sdk`): known or not, what follows
        // it is no place to branch from.
        if seen
            .iter()
            .any(|k| k.signal == Signal::Promise && k.weight == 0)
        {
            self.violated = true;
            self.pending = None;
        }
        let fresh: Vec<Mark> = seen
            .into_iter()
            .filter(|k| {
                self.signals.contains(&k.signal) && !(self.known)(k) && self.own.insert(k.id())
            })
            .collect();
        if !fresh.is_empty() && self.moments.len() < self.max && !self.violated {
            match &mut self.pending {
                Some((_, p)) => p.extend(fresh),
                None => {
                    let at = if now > self.prev_ns { now } else { now + 1 };
                    self.pending = Some((at, fresh));
                }
            }
        }
        if let Some((at_ns, marks)) = self.pending.take_if(|(at_ns, _)| now >= *at_ns) {
            if let Some(loaded) = keep()? {
                self.moments.push(Kept {
                    at_ns,
                    marks,
                    loaded,
                });
            }
        }
        self.prev_ns = now;
        Ok(())
    }
}

/// Runs one branch of a guided exploration: as [`run_branch`], observing what the run sees
/// for the first time (of `signals`) and keeping moments where that is new to `known`
/// ([`Keeper`]; at most `max_moments`).
#[allow(clippy::too_many_arguments)]
pub fn run_guided(
    l: &dyn LoadedSnapshot,
    seed: u64,
    b: &BranchRun,
    signals: &[Signal],
    known: &dyn Fn(&Mark) -> bool,
    max_moments: usize,
    cancel: &AtomicBool,
) -> Result<Option<GuidedEnd>> {
    let wall = Instant::now();
    let (mut m, cfg) = restore_branch(l, seed, b, wall)?;
    let restore = wall.elapsed();
    m.observe(signals);
    let mut keeper: Keeper<dyn LoadedSnapshot> =
        Keeper::new(signals, known, max_moments, m.now().as_ns());
    let ended = branch_loop(m.as_mut(), b.until, b.limit_ns, cancel, &mut |m| {
        let now = m.now().as_ns();
        let seen = m.take_marks();
        keeper.boundary(now, seen, || m.moment(&cfg).map(Some))?;
        Ok(true)
    })?;
    let Some(ended) = ended else {
        return Ok(None);
    };
    let cost = BranchCost {
        restore,
        run: wall.elapsed().saturating_sub(restore),
        end: Default::default(),
    };
    Ok(Some(GuidedEnd {
        end: end_branch(m, &cfg, b, ended, wall, cost),
        moments: keeper.moments,
    }))
}

/// A step of a path: restores `l` with `seed`, runs it to the first step boundary at or
/// after `at_ns`, and keeps the moment there (as [`run_guided`] kept it). None when
/// abandoned; an error when the run ends first (the path does not fit the snapshot).
pub fn moment_at(
    l: &dyn LoadedSnapshot,
    seed: u64,
    at_ns: u64,
    b: &BranchRun,
    cancel: &AtomicBool,
) -> Result<Option<Box<dyn LoadedSnapshot>>> {
    moment_observed(l, seed, at_ns, b, &[], cancel)
}

/// [`moment_at`], observing `signals` on the way (a resumed guided exploration rebuilds
/// its moments so: their coverage counts come back with them).
pub fn moment_observed(
    l: &dyn LoadedSnapshot,
    seed: u64,
    at_ns: u64,
    b: &BranchRun,
    signals: &[Signal],
    cancel: &AtomicBool,
) -> Result<Option<Box<dyn LoadedSnapshot>>> {
    let wall = Instant::now();
    let start_ns = l.meta().virtual_ns;
    if at_ns <= start_ns {
        return Err(PathError::StepNotAfter { at_ns, start_ns }.into());
    }
    let (mut m, cfg) = restore_branch(l, seed, b, wall)?;
    m.observe(signals);
    let mut kept = None;
    let ended = branch_loop(m.as_mut(), b.until, b.limit_ns, cancel, &mut |m| {
        if m.now().as_ns() >= at_ns {
            kept = Some(m.moment(&cfg)?);
            return Ok(false);
        }
        Ok(true)
    })?;
    match (kept, ended) {
        (Some(k), _) => Ok(Some(k)),
        (None, None) => Ok(None),
        (None, Some((outcome, until))) => Err(PathError::BranchEnded {
            seed,
            ended_ns: m.now().as_ns(),
            how: match (until, outcome) {
                (true, _) => "at its --until line".to_string(),
                (false, Ok(s)) => format!("guest exit status {s}"),
                (false, Err(e)) => e.to_string(),
            },
            at_ns,
        }
        .into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::InternalError;
    use crate::machine::console::{Console, Echo};
    use crate::snapshot::plan::SnapshotPlan;
    use crate::snapshot::Snapshot;
    use crate::summary::Summary;
    use crate::trace::Trace;

    /// What a scripted machine answers to what it does not model.
    fn not_modelled(what: &'static str) -> WioError {
        WioError::Invariant(InternalError::NotModelled { what })
    }

    /// One step of a scripted machine: advance the clock, print, then stop this way.
    enum Act {
        Run(u64, &'static str),
        Guest(u64),
        End(u32),
    }

    /// A machine that plays a script, so the driver's logic is tested without an engine.
    struct Scripted {
        script: Vec<Act>,
        now: u64,
        console: Console,
        trace: Trace,
        snapshots: Vec<(u64, String)>,
        steps: usize,
    }

    impl Scripted {
        fn new(script: Vec<Act>) -> Box<Scripted> {
            Box::new(Scripted {
                script,
                now: 0,
                console: Console::new(Echo::Quiet, Instant::now()),
                trace: Trace::new(),
                snapshots: Vec::new(),
                steps: 0,
            })
        }
    }

    impl Machine for Scripted {
        fn seed(&self) -> u64 {
            7
        }
        fn now(&self) -> VirtualTime {
            VirtualTime::from_ns(self.now)
        }
        fn run_until(&mut self, limit: VirtualTime) -> Stop {
            let act = self.script.get(self.steps);
            self.steps += 1;
            match act {
                None => Stop::End(Err(not_modelled("a step past the end of the script"))),
                Some(Act::End(s)) => Stop::End(Ok(*s)),
                Some(Act::Guest(tag)) => Stop::GuestSnapshot(Some(*tag)),
                Some(Act::Run(ns, text)) => {
                    self.now = (self.now + ns).min(limit.as_ns());
                    self.console
                        .push(text.as_bytes(), self.now, &mut self.trace);
                    if self.now >= limit.as_ns() {
                        Stop::Limit
                    } else {
                        Stop::Yield
                    }
                }
            }
        }
        fn console(&mut self) -> &mut Console {
            &mut self.console
        }
        fn take_frames(&mut self) -> Vec<wio_virtio_devices::Frame> {
            Vec::new()
        }
        fn deliver_frame(&mut self, _: wio_virtio_devices::Frame) -> Result<()> {
            Err(not_modelled("a network on a scripted machine"))
        }
        fn snapshot(&mut self, reason: String) -> Result<Snapshot> {
            self.snapshots.push((self.now, reason));
            Err(not_modelled("a snapshot of a scripted machine"))
        }
        fn finish(
            self: Box<Self>,
            _: &RunConfig,
            outcome: Result<u32>,
            _: Instant,
            until: Option<&str>,
        ) -> RunResult {
            let exit_status = outcome.as_ref().ok().copied();
            let console = self.console.sha256();
            let summary = Summary {
                stopped_at: until.map(str::to_string),
                error: self
                    .snapshots
                    .iter()
                    .map(|(t, r)| format!("{t}:{r}"))
                    .reduce(|a, b| a + ";" + &b),
                ..Summary::synthetic(7, self.now, &self.trace, console, exit_status)
            };
            RunResult { summary, outcome }
        }
    }

    fn config(at: &[&str], until: Option<&str>, max_ns: u64) -> RunConfig {
        let mut plan = SnapshotPlan::default();
        for a in at {
            plan.at.push(SnapshotAt::parse(a).unwrap());
        }
        RunConfig {
            snapshots: plan,
            until: until.map(str::to_string),
            max_virtual_ns: max_ns,
            ..RunConfig::with_seed(7)
        }
    }

    #[test]
    fn until_stops_at_its_line_and_wins_over_the_end() {
        let m = Scripted::new(vec![
            Act::Run(5, "boot\n"),
            Act::Run(5, "ready\n"),
            Act::End(3),
        ]);
        let r = run(m, &config(&[], Some("ready"), 0), Instant::now());
        assert_eq!(r.outcome.unwrap(), 0);
        assert_eq!(r.summary.stopped_at.as_deref(), Some("ready"));
        assert_eq!(r.summary.virtual_ns, 10);
    }

    #[test]
    fn the_limit_is_a_time_limit_error() {
        let m = Scripted::new(vec![Act::Run(5, ""), Act::Run(50, ""), Act::End(0)]);
        let r = run(m, &config(&[], None, 20), Instant::now());
        let e = r.outcome.unwrap_err();
        assert_eq!(e.exit_code(), crate::error::exit_code::TIME_LIMIT);
        assert_eq!(r.summary.virtual_ns, 20);
    }

    #[test]
    fn snapshot_points_fire_once_each_in_order_and_a_failed_write_ends_the_run() {
        // The guest asks first (no guest point planned: nothing), then time 10 is reached.
        let m = Scripted::new(vec![
            Act::Guest(1),
            Act::Run(12, "x\n"),
            Act::Run(1, ""),
            Act::End(0),
        ]);
        let r = run(m, &config(&["10ns"], None, 0), Instant::now());
        assert!(
            r.outcome.is_err(),
            "the scripted snapshot cannot be written"
        );
        assert_eq!(r.summary.error.as_deref(), Some("12:virtual time >= 10 ns"));
        // A guest request with a guest point planned, tag included.
        let m = Scripted::new(vec![Act::Run(1, ""), Act::Guest(9), Act::End(0)]);
        let r = run(m, &config(&["guest"], None, 0), Instant::now());
        assert_eq!(r.summary.error.as_deref(), Some("1:guest request (tag 9)"));
        // A console point fires at the step whose output completed the line.
        let m = Scripted::new(vec![Act::Run(1, "wa"), Act::Run(2, "it\n"), Act::End(0)]);
        let r = run(m, &config(&["console:wait"], None, 0), Instant::now());
        assert_eq!(
            r.summary.error.as_deref(),
            Some("3:console line containing \"wait\"")
        );
        // A point on the --until line is taken before the run stops there.
        let m = Scripted::new(vec![Act::Run(4, "done\n"), Act::End(0)]);
        let r = run(
            m,
            &config(&["console:done"], Some("done"), 0),
            Instant::now(),
        );
        assert_eq!(
            r.summary.error.as_deref(),
            Some("4:console line containing \"done\"")
        );
    }
}
