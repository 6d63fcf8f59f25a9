//! `wio explore --strategy guided --budget N`: a search that goes deep. Every branch starts
//! at a moment of the frontier (at first only the root snapshot), runs to its end with a
//! seed of its own, and keeps a moment wherever it sees something the exploration had not
//! seen (`machine::novelty`: a promise's condition first seen, a new console line shape);
//! of a world snapshot, the moment keeps the whole world (`world::guided`);
//! the frontier (`frontier`) gives moments energy for what was new there and chooses where
//! the next branches start. A rare state reached once is branched from again, so a bug
//! behind several rare events in a row is reached in a few thousand branches where a flat
//! exploration needs millions.
//!
//! Determinism: branches run in rounds of [`ROUND`]. A round's starting moments and seeds
//! are drawn before it runs, every branch of the round judges novelty against what the
//! exploration knew when the round began, and the round's ends are absorbed in branch order;
//! so the tree and the report depend on the root, `--budget` and `--search-seed`, never on
//! `--jobs` or on which thread finished first. Every branch is a path
//! ([`super::path::BranchPath`]) that `wio run --from ROOT --path P` reproduces bit for bit.
//!
//! Checkpoints: every `--checkpoint-secs` (at a round boundary) the results, the growth and
//! the frontier (without the moments' memory) go to REPORT.checkpoint, atomically;
//! `--resume` (after a crash, `kill -9` or Ctrl-C) rebuilds the live moments by replaying
//! their paths and goes on, losing at most the rounds since the last checkpoint, with the
//! same final report as an uninterrupted run.

use super::frontier::{Assignment, Frontier, FrontierState, MomentInfo, MomentState};
use super::path::{BranchPath, Step};
use super::world_branch::{world_options, world_result_of};
use super::{
    result_with, write_report, Explore, Question, Report, SeedRange, SeedResult, REPORT_FORMAT,
};
use serde::{Deserialize, Serialize};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;
use wio_machines::error::{ExploreError, Result, WioError};
use wio_machines::machine::driver::{run_guided, BranchRun, Kept};
use wio_machines::machine::novelty::{Mark, Signal};
use wio_machines::machine::{LoadedSnapshot, RunConfig};
use wio_world as world;
use wio_world::snapshot::LoadedWorld;

/// Branches per round (fixed, so `--jobs` changes nothing).
pub const ROUND: usize = 16;
/// Most moments one branch keeps.
pub const MAX_MOMENTS_PER_BRANCH: usize = 8;
/// Most branches one guided exploration runs.
pub const MAX_BUDGET: u64 = 10_000_000;

/// A guided exploration's settings, as its report's question keeps them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Search {
    /// Branches run in all.
    pub budget: u64,
    /// The explorer's own seed (which moments, which seeds).
    pub search_seed: u64,
    /// The signals that count as new.
    pub signals: Vec<String>,
    /// Most guest memory the moments hold (MiB).
    pub max_memory_mib: u64,
}

/// A guided exploration's tree, as its report keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tree {
    /// Every moment kept (0: the root snapshot), in the order they were found.
    pub moments: Vec<MomentInfo>,
    /// Marks known after each branch (coverage growth, one entry per branch).
    pub growth: Vec<u64>,
    /// The branch after which nothing new was found, when that has lasted long enough to
    /// call it a plateau (a quarter of the branches run, and at least [`PLATEAU_MIN`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plateau_since: Option<u64>,
}

/// Fewest branches without anything new that make a plateau.
pub const PLATEAU_MIN: u64 = 64;

/// The branch since which `growth` stayed flat, if that is a plateau.
fn plateau(growth: &[u64]) -> Option<u64> {
    let last = *growth.last()?;
    let since = growth.iter().position(|g| *g == last)? as u64;
    let flat = growth.len() as u64 - since - 1;
    (flat >= PLATEAU_MIN && flat * 4 >= growth.len() as u64).then_some(since)
}

/// Options a guided exploration adds to [`Explore`]'s.
#[derive(Debug, Clone)]
pub struct Guided {
    /// Branches in all.
    pub budget: u64,
    /// The explorer's seed.
    pub search_seed: u64,
    /// Signals that count.
    pub signals: Vec<Signal>,
    /// Most guest memory the moments hold (bytes).
    pub max_memory: u64,
    /// Stop after the round in which a branch first failed (benchmarks: branches to the
    /// first failure); the report is then incomplete.
    pub stop_at_failure: bool,
    /// Write a checkpoint (REPORT.checkpoint) at the first round boundary this many wall
    /// seconds after the last one (0: every round).
    pub checkpoint_secs: u64,
    /// Go on from the checkpoint instead of starting.
    pub resume: bool,
}

/// Format version of checkpoints (2: the frontier counts the root's branches, whose seeds
/// follow the flat order).
const CHECKPOINT_FORMAT: u32 = 2;

/// A guided exploration after some whole rounds: what `--resume` goes on from.
#[derive(Serialize, Deserialize)]
struct Checkpoint {
    format: u32,
    question: Question,
    results: Vec<SeedResult>,
    growth: Vec<u64>,
    frontier: FrontierState,
}

/// Where the checkpoint of the exploration reporting to `report` goes.
pub fn checkpoint_path(report: &Path) -> PathBuf {
    let mut p = report.as_os_str().to_owned();
    p.push(".checkpoint");
    PathBuf::from(p)
}

fn write_checkpoint<S: ?Sized + MomentState>(
    path: &Path,
    question: &Question,
    results: &[SeedResult],
    growth: &[u64],
    frontier: &Frontier<S>,
) -> Result<()> {
    let c = Checkpoint {
        format: CHECKPOINT_FORMAT,
        question: question.clone(),
        results: results.to_vec(),
        growth: growth.to_vec(),
        frontier: frontier.save(),
    };
    let text = serde_json::to_vec(&c).map_err(|source| WioError::Encode {
        what: "checkpoint",
        source,
    })?;
    wio_machines::snapshot::write_atomic(path, &text, "checkpoint").map(|_| ())
}

/// Where a guided exploration stands: its frontier, the results and the growth so far.
type Standing<S> = (Frontier<S>, Vec<SeedResult>, Vec<u64>);

/// The frontier, results and growth of the checkpoint at `path`, which must be of the
/// exploration `question` asks; live moments are rebuilt by replaying their paths.
fn resume<T: Target>(
    path: &Path,
    question: &Question,
    root: &Arc<T::State>,
    target: &T,
) -> Result<Standing<T::State>> {
    let bad = |reason: String| WioError::ArtifactFormat {
        what: "checkpoint",
        path: path.to_path_buf(),
        reason,
    };
    let text = std::fs::read(path).map_err(|source| match source.kind() {
        std::io::ErrorKind::NotFound => ExploreError::NoCheckpoint {
            path: path.to_path_buf(),
        }
        .into(),
        _ => WioError::ArtifactIo {
            what: "checkpoint",
            path: path.to_path_buf(),
            source,
        },
    })?;
    let c: Checkpoint =
        serde_json::from_slice(&text).map_err(|e| bad(format!("is not a wio checkpoint: {e}")))?;
    if c.format != CHECKPOINT_FORMAT {
        return Err(bad(format!(
            "is checkpoint format {}; this wio reads {CHECKPOINT_FORMAT}",
            c.format
        )));
    }
    if &c.question != question {
        return Err(ExploreError::OtherCheckpoint {
            path: path.to_path_buf(),
        }
        .into());
    }
    if c.results.len() != c.growth.len() || c.results.len() as u64 >= question.seeds.end {
        return Err(bad(format!(
            "holds {} results and {} growth entries for a budget of {}",
            c.results.len(),
            c.growth.len(),
            question.seeds.end
        )));
    }
    eprintln!(
        "wio: resuming after {} branches from {}: rebuilding {} moments…",
        c.results.len(),
        path.display(),
        c.frontier.live()
    );
    let cancel = AtomicBool::new(false);
    let frontier = Frontier::restore(Arc::clone(root), &c.frontier, &mut |steps| {
        target
            .rebuild(root, steps, &cancel)?
            .ok_or(WioError::Interrupted(0))
    })?;
    Ok((frontier, c.results, c.growth))
}

/// How a branch of a guided exploration ended, whatever it branched.
struct Branched<S: ?Sized> {
    /// Its result as the report gives it.
    result: SeedResult,
    /// The moments it kept, in time order.
    moments: Vec<Kept<S>>,
    /// Instructions retired at its end (every machine's), where counted.
    instructions: Option<u64>,
    /// Its virtual time at the end.
    virtual_ns: u64,
}

impl<S: ?Sized> Branched<S> {
    /// The end of the branch assigned `a`: its result as `result` makes it from the
    /// reproduce line's `--path P`, with its path and moment.
    fn of(
        a: &Assignment<S>,
        result: impl FnOnce(&str) -> SeedResult,
        moments: Vec<Kept<S>>,
        instructions: Option<u64>,
        virtual_ns: u64,
    ) -> Branched<S> {
        let path = a.path.to_string();
        let mut result = result(&format!("--path {path}"));
        result.path = Some(path);
        result.moment = Some(a.moment);
        Branched {
            result,
            moments,
            instructions,
            virtual_ns,
        }
    }
}

/// What a guided exploration branches: one machine's states, or a world's.
trait Target: Sync {
    /// A moment's state.
    type State: ?Sized + MomentState;
    /// Runs branch `number`, assigned `a`, keeping moments where it sees marks `known` does
    /// not know; None when abandoned (`cancel`, Ctrl-C or SIGTERM).
    fn branch(
        &self,
        number: u64,
        a: &Assignment<Self::State>,
        known: &dyn Fn(&Mark) -> bool,
        cancel: &AtomicBool,
    ) -> Result<Option<Branched<Self::State>>>;
    /// A live moment's state again, by replaying its path's `steps` from `root` (observing
    /// the same signals, so its coverage counts come back); None when abandoned.
    fn rebuild(
        &self,
        root: &Self::State,
        steps: &[Step],
        cancel: &AtomicBool,
    ) -> Result<Option<Box<Self::State>>>;
}

/// Branches of one machine's snapshot.
struct OnMachine<'a> {
    x: &'a Explore,
    b: BranchRun<'a>,
    signals: &'a [Signal],
}

impl Target for OnMachine<'_> {
    type State = dyn LoadedSnapshot;

    fn branch(
        &self,
        number: u64,
        a: &Assignment,
        known: &dyn Fn(&Mark) -> bool,
        cancel: &AtomicBool,
    ) -> Result<Option<Branched<dyn LoadedSnapshot>>> {
        let Some(end) = run_guided(
            a.loaded.as_ref(),
            a.path.seed,
            &self.b,
            self.signals,
            known,
            MAX_MOMENTS_PER_BRANCH,
            cancel,
        )?
        else {
            return Ok(None);
        };
        let (instructions, virtual_ns) = (end.end.summary.instructions, end.end.summary.virtual_ns);
        Ok(Some(Branched::of(
            a,
            |how| result_with(self.x, number, end.end, how),
            end.moments,
            instructions,
            virtual_ns,
        )))
    }

    fn rebuild(
        &self,
        root: &dyn LoadedSnapshot,
        steps: &[Step],
        cancel: &AtomicBool,
    ) -> Result<Option<Box<dyn LoadedSnapshot>>> {
        let path = BranchPath {
            steps: steps.to_vec(),
            seed: 0,
        };
        path.last_moment_observed(root, &self.b, self.signals, cancel)
    }
}

/// Branches of a world snapshot: every node observes the signals, and a moment keeps the
/// whole world (`world::guided`).
struct OnWorld<'a> {
    x: &'a Explore,
    root: &'a LoadedWorld,
    opts: world::Options,
}

impl Target for OnWorld<'_> {
    type State = LoadedWorld;

    fn branch(
        &self,
        number: u64,
        a: &Assignment<LoadedWorld>,
        known: &dyn Fn(&Mark) -> bool,
        cancel: &AtomicBool,
    ) -> Result<Option<Branched<LoadedWorld>>> {
        let Some(end) = world::guided::run_guided(
            a.loaded.as_ref(),
            a.path.seed,
            &self.opts,
            known,
            MAX_MOMENTS_PER_BRANCH,
            cancel,
        )?
        else {
            return Ok(None);
        };
        let instructions = end
            .summary
            .nodes
            .iter()
            .map(|(_, s)| s.instructions)
            .sum::<Option<u64>>();
        let virtual_ns = end.summary.virtual_ns;
        Ok(Some(Branched::of(
            a,
            |how| world_result_of(self.x, self.root, number, end.summary, how),
            end.moments,
            instructions,
            virtual_ns,
        )))
    }

    fn rebuild(
        &self,
        root: &LoadedWorld,
        steps: &[Step],
        cancel: &AtomicBool,
    ) -> Result<Option<Box<LoadedWorld>>> {
        let path = BranchPath {
            steps: steps.to_vec(),
            seed: 0,
        };
        Ok(path
            .last_world_moment(root, &self.opts, cancel)?
            .map(Box::new))
    }
}

/// Parses `--signals`: a comma-separated list of promises, console (or `all`).
pub fn parse_signals(text: &str) -> Result<Vec<Signal>> {
    if text == "all" {
        return Ok(Signal::ALL.to_vec());
    }
    let mut out = Vec::new();
    for part in text.split(',') {
        let s = Signal::ALL
            .into_iter()
            .find(|s| s.name() == part.trim())
            .ok_or_else(|| ExploreError::BadSignal {
                text: text.to_string(),
                part: part.to_string(),
                known: Signal::ALL.map(Signal::name).join(", "),
            })?;
        if !out.contains(&s) {
            out.push(s);
        }
    }
    Ok(out)
}

/// One branch's slot in a round.
type Slot<S> = Mutex<Option<Result<Option<Branched<S>>>>>;

/// Runs the guided exploration; returns the report (also written to `x.report`).
pub fn explore(x: &Explore, g: &Guided) -> Result<Report> {
    if g.budget == 0 || g.budget > MAX_BUDGET {
        return Err(ExploreError::Budget {
            budget: g.budget,
            max: MAX_BUDGET,
        }
        .into());
    }
    if g.signals.is_empty() {
        return Err(ExploreError::NoSignals.into());
    }
    if x.shard.1 > 1 {
        return Err(ExploreError::GuidedShardFlag.into());
    }
    let mut watch: Vec<String> = x.matches.clone();
    for f in &x.fail_on {
        if !watch.contains(f) {
            watch.push(f.clone());
        }
    }
    let search = Search {
        budget: g.budget,
        search_seed: g.search_seed,
        signals: g.signals.iter().map(|s| s.name().to_string()).collect(),
        max_memory_mib: g.max_memory >> 20,
    };
    let question = |sha256: &str| Question {
        snapshot: x.from.clone(),
        snapshot_sha256: sha256.to_string(),
        seeds: SeedRange {
            start: 0,
            end: g.budget,
        },
        until: x.until.clone(),
        matches: x.matches.clone(),
        fail_on: x.fail_on.clone(),
        max_virtual_ns: x.max_virtual_ns,
        sched_noise: x.sched_noise,
        guided: Some(search.clone()),
        learn_from: None,
    };
    if LoadedWorld::is_world(&x.from) {
        if x.disk.is_some() {
            return Err(ExploreError::WorldDisk.into());
        }
        let root = Arc::new(LoadedWorld::load(&x.from)?);
        let mut opts = world_options(x, &root, &watch);
        opts.observe = g.signals.clone();
        let q = question(&root.sha256);
        let point = (root.state.at_ns, root.state.seed);
        let target = OnWorld {
            x,
            root: &root,
            opts,
        };
        return search_from(x, g, q, Arc::clone(&root), point, &target);
    }
    let load_cfg = RunConfig {
        disk: x.disk.clone(),
        from: Some(x.from.clone()),
        seed_given: false,
        ..RunConfig::with_seed(0)
    };
    let root: Arc<dyn wio_machines::machine::LoadedSnapshot> =
        Arc::from(wio_machines::builder::load(&x.from, &load_cfg)?);
    let target = OnMachine {
        x,
        b: BranchRun {
            until: x.until.as_deref(),
            watch: &watch,
            limit_ns: x.max_virtual_ns,
            sched_noise: x.sched_noise,
        },
        signals: &g.signals,
    };
    let point = (root.meta().virtual_ns, root.meta().seed);
    search_from(x, g, question(root.sha256()), root, point, &target)
}

/// The search itself, from `root` (taken at `point`: virtual ns, seed), whatever it branches.
fn search_from<T: Target>(
    x: &Explore,
    g: &Guided,
    question: Question,
    root: Arc<T::State>,
    point: (u64, u64),
    target: &T,
) -> Result<Report> {
    eprintln!(
        "wio: guided exploration of {} ({} ns, seed {}): {} branches in rounds of {ROUND}, search seed {}, signals {}, on {} workers",
        x.from.display(),
        point.0,
        point.1,
        g.budget,
        g.search_seed,
        g.signals.iter().map(|s| s.name()).collect::<Vec<_>>().join(","),
        x.jobs
    );
    let ckpt = checkpoint_path(&x.report);
    let (mut frontier, mut results, mut growth) = if g.resume {
        resume(&ckpt, &question, &root, target)?
    } else {
        (
            Frontier::new(Arc::clone(&root), g.search_seed, g.max_memory),
            Vec::new(),
            Vec::new(),
        )
    };
    let mut failing = results.iter().filter(|r: &&SeedResult| r.failed).count() as u64;
    let mut saved = Instant::now();
    let mut first_error = None;
    let stop = AtomicBool::new(false);
    let started = Instant::now();
    let mut shown = Instant::now();
    let tty = std::io::stderr().is_terminal();
    let mut finished = true;
    wio_machines::sandbox::enter()?;
    while (results.len() as u64) < g.budget {
        if wio_machines::interrupt::requested() {
            finished = false;
            break;
        }
        if saved.elapsed().as_secs() >= g.checkpoint_secs && !results.is_empty() {
            // Whole rounds only: what a resume goes on from.
            write_checkpoint(&ckpt, &question, &results, &growth, &frontier)?;
            saved = Instant::now();
        }
        let n = ROUND.min((g.budget - results.len() as u64) as usize);
        let first = results.len() as u64;
        let round: Vec<Assignment<T::State>> = (0..n).map(|_| frontier.assign()).collect();
        let slots = run_round(x.jobs, target, &frontier, &round, first, &stop);
        for (a, slot) in round.iter().zip(slots) {
            let branch = results.len() as u64;
            match slot.into_inner().ok().flatten() {
                Some(Ok(Some(b))) => {
                    frontier.absorb(branch, a, b.moments, b.instructions, b.virtual_ns);
                    failing += u64::from(b.result.failed);
                    results.push(b.result);
                    growth.push(frontier.marks() as u64);
                }
                Some(Err(e)) => {
                    first_error.get_or_insert(e);
                    finished = false;
                    break;
                }
                // Abandoned (Ctrl-C or SIGTERM, or another branch's error): the round ends here.
                Some(Ok(None)) | None => {
                    finished = false;
                    break;
                }
            }
        }
        if !finished || (g.stop_at_failure && failing > 0) {
            finished = false;
            break;
        }
        let done = results.len() as u64;
        let every = if tty { 0.2 } else { 5.0 };
        if shown.elapsed().as_secs_f64() >= every || done == g.budget {
            shown = Instant::now();
            let rate = done as f64 / started.elapsed().as_secs_f64().max(1e-9);
            show_progress(tty, (done, g.budget, failing), &frontier, rate);
        }
    }
    if tty {
        eprintln!();
    }
    let complete = finished && results.len() as u64 == g.budget;
    end_search(
        x,
        g,
        question,
        (results, growth),
        &frontier,
        complete,
        first_error,
    )
}

/// Runs one round's branches on `jobs` worker threads; a branch that fails stops the
/// others. Each slot holds its branch's outcome (None: not run, abandoned).
fn run_round<T: Target>(
    jobs: usize,
    target: &T,
    frontier: &Frontier<T::State>,
    round: &[Assignment<T::State>],
    first: u64,
    stop: &AtomicBool,
) -> Vec<Slot<T::State>> {
    let n = round.len();
    let slots: Vec<Slot<T::State>> = (0..n).map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..jobs.clamp(1, n) {
            scope.spawn(|| loop {
                if stop.load(Ordering::Relaxed) || wio_machines::interrupt::requested() {
                    return;
                }
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(a) = round.get(i) else { return };
                let r = target.branch(first + i as u64, a, &|m| frontier.knows(m), stop);
                if r.is_err() {
                    stop.store(true, Ordering::SeqCst);
                }
                if let Ok(mut s) = slots[i].lock() {
                    *s = Some(r);
                }
            });
        }
    });
    slots
}

/// The progress line: branches done of the budget, failing, the frontier, the rate (on a
/// terminal, one line rewritten in place).
fn show_progress<S: ?Sized + MomentState>(
    tty: bool,
    (done, budget, failing): (u64, u64, u64),
    frontier: &Frontier<S>,
    rate: f64,
) {
    let line = format!(
        "guided {done}/{budget} branches, {failing} failing, frontier {} moments ({} live, depth {}), {} marks, {rate:.1} branches/s",
        frontier.moments(),
        frontier.live(),
        frontier.depth(),
        frontier.marks()
    );
    if tty {
        eprint!("\r{line}\x1b[K");
    } else {
        eprintln!("{line}");
    }
}

/// Ends the search: the report with the tree and its promises judged (written, with the
/// growth plot), the checkpoint removed once it is no longer needed, and the first
/// branch error if there was one.
fn end_search<S: ?Sized + MomentState>(
    x: &Explore,
    g: &Guided,
    question: Question,
    (results, growth): (Vec<SeedResult>, Vec<u64>),
    frontier: &Frontier<S>,
    complete: bool,
    first_error: Option<WioError>,
) -> Result<Report> {
    let ckpt = checkpoint_path(&x.report);
    let mut report = Report {
        format: REPORT_FORMAT,
        question,
        shards: (1, vec![0]),
        complete,
        results,
        promises: Vec::new(),
        tree: Some(Tree {
            moments: frontier.tree(),
            plateau_since: plateau(&growth),
            growth,
        }),
    };
    report.judge_promises();
    write_report(&report, &x.report)?;
    if let Some(tree) = &report.tree {
        let failing: Vec<u64> = report
            .results
            .iter()
            .filter(|r| r.failed)
            .map(|r| r.seed)
            .collect();
        let plot = super::growth_plot::path_for(&x.report);
        let svg = super::growth_plot::svg(&tree.growth, tree.plateau_since, &failing);
        wio_machines::snapshot::write_atomic(&plot, svg.as_bytes(), "coverage growth plot")?;
    }
    if report.complete || g.stop_at_failure {
        let _ = std::fs::remove_file(&ckpt);
    }
    if let Some(e) = first_error {
        return Err(e);
    }
    if wio_machines::interrupt::requested() {
        eprintln!(
            "wio: interrupted; the {} finished branches are in {}",
            report.results.len(),
            x.report.display()
        );
    }
    Ok(report)
}
