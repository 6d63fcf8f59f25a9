//! `wio explore`: many futures of one snapshot. Each seed of a range is a
//! branch restored from the same loaded snapshot (guest memory shared
//! copy-on-write), run on a pool of worker threads, and reported with its
//! status, the console texts it matched, its virtual time and its trace hash.
//! Every failing seed comes with the one-line command that reproduces it.
//!
//! `--shard i/N` keeps seeds whose offset in the range is i modulo N, so a batch
//! system can spread one exploration over machines; `wio report merge` joins the
//! shard reports. Ctrl-C or SIGTERM (`wio_machines::interrupt`) stops the workers and keeps the
//! finished seeds' report.
//!
//! A world snapshot (`wio sim --snapshot-at`) is explored the same way: each branch is
//! the whole world restored with the seed (`world_branch`).

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;
use warm::Warmup;
use wio_machines::error::{ExploreError, Result, WioError};
use wio_machines::machine::noise::SchedNoise;
use wio_machines::machine::{driver, BranchEnd, LoadedSnapshot, RunConfig};
use wio_machines::promises::across::SeedPromise;
use wio_machines::promises::Status;
use wio_world as world;
use wio_world::snapshot::LoadedWorld;
use world_branch::{world_options, world_result_of};

pub mod frontier;
pub mod growth_plot;
pub mod guided;
pub mod path;
mod report;
mod report_check;
mod seeds;
pub mod slurm;
mod warm;
mod world_branch;

pub use report::{
    merge, print_table, read_report, write_junit, write_report, Question, Report, SeedResult,
    REPORT_FORMAT,
};
pub use seeds::{parse_shard, SeedRange, MAX_SEEDS, MAX_SHARDS};

/// Options of one exploration.
pub struct Explore {
    /// The snapshot.
    pub from: PathBuf,
    /// Base disk image, when it moved since the snapshot.
    pub disk: Option<PathBuf>,
    /// Seeds.
    pub seeds: SeedRange,
    /// Shard (index, count).
    pub shard: (u64, u64),
    /// Worker threads.
    pub jobs: usize,
    /// Stop text.
    pub until: Option<String>,
    /// Texts to report.
    pub matches: Vec<String>,
    /// Texts that fail a seed.
    pub fail_on: Vec<String>,
    /// Virtual-time limit (ns since boot; 0 = none).
    pub max_virtual_ns: u64,
    /// Where the JSON report goes.
    pub report: PathBuf,
    /// Every branch's CPU-timing noise from the snapshot point on (None: the snapshot's).
    pub sched_noise: Option<SchedNoise>,
}

fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@".contains(&b))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// The command that reruns a branch alone: `wio run --from SNAP` with `how` (`--seed S` or
/// `--path P`) and the exploration's options that change a branch.
fn reproduce_line(x: &Explore, how: &str) -> String {
    let mut reproduce = format!(
        "wio run --from {} {how}",
        shell_quote(&x.from.to_string_lossy())
    );
    if let Some(d) = &x.disk {
        reproduce.push(' ');
        reproduce.push_str(&shell_quote(&d.to_string_lossy()));
    }
    if let Some(u) = &x.until {
        reproduce.push_str(&format!(
            " --until {}",
            shell_quote(&format!("console:{u}"))
        ));
    }
    if let Some(level) = x.sched_noise {
        reproduce.push_str(&format!(" --sched-noise {}", level.name()));
    }
    if x.max_virtual_ns > 0 && x.max_virtual_ns != 3600 * 1_000_000_000 {
        reproduce.push_str(&format!(
            " --max-virtual-secs {}",
            x.max_virtual_ns / 1_000_000_000
        ));
    }
    reproduce
}

/// A branch's result; `how` names it on the reproduce line (see [`reproduce_line`]).
fn result_with(x: &Explore, seed: u64, end: BranchEnd, how: &str) -> SeedResult {
    let s = end.summary;
    let ended = if end.stopped_at_until {
        "until"
    } else if s.error.is_some() {
        "error"
    } else {
        "exit"
    };
    let promises: Vec<SeedPromise> = s
        .promises
        .as_ref()
        .map(|p| p.list.iter().map(SeedPromise::of).collect())
        .unwrap_or_default();
    // A branch whose only failure is its promises fails on a violated `always`; the other
    // verdicts (never reached, never true) are judged across seeds.
    let promise_error = s.wio_exit_code == wio_machines::error::exit_code::PROMISE;
    let violated = promises.iter().any(|p| p.status == Status::Violated);
    let failed = (s.error.is_some() && !promise_error)
        || violated
        || s.exit_status.is_some_and(|st| st != 0)
        || end.matched.iter().any(|m| x.fail_on.contains(m));
    let reproduce = reproduce_line(x, how);
    SeedResult {
        seed,
        ended: ended.into(),
        exit_status: s.exit_status,
        error: s.error,
        matched: end.matched,
        virtual_ns: s.virtual_ns,
        trace_hash: s.trace_hash,
        failed,
        reproduce,
        faults: s.faults,
        world_faults: Vec::new(),
        promises,
        path: None,
        moment: None,
        left_tape: None,
        until_line: x
            .until
            .as_ref()
            .filter(|_| end.stopped_at_until)
            .and_then(|u| {
                end.lines
                    .iter()
                    .find(|(text, _)| text == u)
                    .map(|(_, line)| line.clone())
            }),
    }
}

/// What an exploration branches from: one machine's snapshot, or a world's.
enum Source {
    Machine(Box<dyn LoadedSnapshot>),
    World(Box<LoadedWorld>),
}

impl Source {
    fn sha256(&self) -> &str {
        match self {
            Source::Machine(l) => l.sha256(),
            Source::World(w) => &w.sha256,
        }
    }

    /// Whether the snapshot learned a branch's code (see `warm`).
    fn learned(&self) -> bool {
        matches!(self, Source::Machine(l) if l.learned())
    }

    /// Says so when the snapshot learned the code of `seed`'s branch (see `warm`).
    fn tell_learned(&self, seed: u64) {
        if self.learned() {
            eprintln!(
                "wio: the other branches start with the code seed {seed}'s branch decoded and \
                 built (WIO_COLD_BRANCHES=1: without)"
            );
        }
    }

    /// (virtual ns, seed) of the snapshot.
    fn point(&self) -> (u64, u64) {
        match self {
            Source::Machine(l) => (l.meta().virtual_ns, l.meta().seed),
            Source::World(w) => (w.state.at_ns, w.state.seed),
        }
    }

    /// Runs the branch of `seed` (`learn`: and the snapshot learns its code, see `warm`);
    /// None when abandoned (`stop` set, or Ctrl-C or SIGTERM).
    fn branch(
        &self,
        x: &Explore,
        seed: u64,
        watch: &[String],
        stop: &AtomicBool,
        learn: bool,
    ) -> Result<Option<SeedResult>> {
        match self {
            Source::Machine(l) => {
                let b = driver::BranchRun {
                    until: x.until.as_deref(),
                    watch,
                    limit_ns: x.max_virtual_ns,
                    sched_noise: x.sched_noise,
                };
                Ok(
                    driver::run_branch_as(l.as_ref(), seed, &b, stop, learn)?.map(|end| {
                        // A branch that started with another's code says so on its reproduce line.
                        let how = match (learn, l.learned()) {
                            (false, true) => {
                                format!("--seed {seed} --learn-from {}", x.seeds.start)
                            }
                            _ => format!("--seed {seed}"),
                        };
                        result_with(x, seed, end, &how)
                    }),
                )
            }
            Source::World(lw) => {
                let opts = world_options(x, lw, watch);
                Ok(world::restore(lw, Some(seed), &opts, Some(stop))?
                    .map(|w| world_result_of(x, lw, seed, w, &format!("--seed {seed}"))))
            }
        }
    }
}

/// Prints progress to stderr: rewritten in place on a terminal, a line every few seconds otherwise.
struct Progress {
    started: Instant,
    last: Instant,
    tty: bool,
    total: u64,
}

impl Progress {
    fn show(&mut self, done: u64, failing: u64, force: bool) {
        let every = if self.tty { 0.2 } else { 5.0 };
        if !force && self.last.elapsed().as_secs_f64() < every {
            return;
        }
        self.last = Instant::now();
        let secs = self.started.elapsed().as_secs_f64();
        let rate = done as f64 / secs.max(1e-9);
        let eta = if done > 0 {
            format!("{:.0}s", (self.total - done) as f64 / rate)
        } else {
            "?".into()
        };
        let width = 30usize;
        let filled = (done as usize * width) / (self.total.max(1) as usize);
        let bar: String = "#".repeat(filled) + &"-".repeat(width - filled);
        let line = format!(
            "explore [{bar}] {done}/{} seeds, {failing} failing, {:.1} branches/s, ETA {eta}",
            self.total, rate
        );
        if self.tty {
            eprint!("\r{line}\x1b[K");
        } else {
            eprintln!("{line}");
        }
    }
}

/// The snapshot an exploration branches from, loaded once: a world's or a machine's.
fn load_source(x: &Explore) -> Result<Source> {
    // Every branch starts from this one snapshot: it learns which pages the first ones
    // write and copies them into each later restore at once (host work only).
    if LoadedWorld::is_world(&x.from) {
        if x.disk.is_some() {
            return Err(ExploreError::WorldDisk.into());
        }
        let world = LoadedWorld::load(&x.from)?;
        for node in &world.nodes {
            node.populate_written();
        }
        return Ok(Source::World(Box::new(world)));
    }
    let load_cfg = RunConfig {
        disk: x.disk.clone(),
        from: Some(x.from.clone()),
        seed_given: false,
        ..RunConfig::with_seed(0)
    };
    let loaded = wio_machines::builder::load(&x.from, &load_cfg)?;
    loaded.populate_written();
    Ok(Source::Machine(loaded))
}

/// The console texts a branch watches for: `--match` and `--fail-on`, each once.
fn watch_list(x: &Explore) -> Vec<String> {
    let mut watch: Vec<String> = x.matches.clone();
    for f in &x.fail_on {
        if !watch.contains(f) {
            watch.push(f.clone());
        }
    }
    watch
}

/// The line that says what is explored, from where, on how many workers.
fn announce(x: &Explore, seeds: usize, loaded: &Source) {
    eprintln!(
        "wio: exploring {seeds} seeds of {} from {} (snapshot at {} ns, seed {}) on {} workers",
        if x.shard.1 > 1 {
            format!("shard {}/{}", x.shard.0, x.shard.1)
        } else {
            "the range".into()
        },
        x.from.display(),
        loaded.point().0,
        loaded.point().1,
        x.jobs
    );
}

/// Runs the exploration; returns the report (also written to `x.report`).
pub fn explore(x: &Explore) -> Result<Report> {
    let loaded = load_source(x)?;
    // (A range of one seed has no branch to teach.)
    let warm = Warmup::new(
        x.seeds.start,
        Warmup::cold_asked()
            || matches!(loaded, Source::World(_))
            || x.seeds.end - x.seeds.start < 2,
    );
    let seeds: Vec<u64> = x.seeds.shard(x.shard.0, x.shard.1).collect();
    let mut question = Question {
        snapshot: x.from.clone(),
        snapshot_sha256: loaded.sha256().to_string(),
        seeds: x.seeds,
        until: x.until.clone(),
        matches: x.matches.clone(),
        fail_on: x.fail_on.clone(),
        max_virtual_ns: x.max_virtual_ns,
        sched_noise: x.sched_noise,
        guided: None,
        learn_from: None,
    };
    let watch = watch_list(x);
    // Set when a branch cannot even start: the workers stop and running branches are
    // abandoned, as on Ctrl-C or SIGTERM (which the workers and branches see through
    // wio_machines::interrupt::requested).
    let stop = AtomicBool::new(false);
    let stopping = || stop.load(Ordering::Relaxed) || wio_machines::interrupt::requested();
    announce(x, seeds.len(), &loaded);
    let next = AtomicUsize::new(0);
    let done = AtomicU64::new(0);
    let failing = AtomicU64::new(0);
    let results: Mutex<BTreeMap<u64, SeedResult>> = Mutex::new(BTreeMap::new());
    let first_error: Mutex<Option<WioError>> = Mutex::new(None);
    let mut progress = Progress {
        started: Instant::now(),
        last: Instant::now(),
        tty: std::io::stderr().is_terminal(),
        total: seeds.len() as u64,
    };
    wio_machines::sandbox::enter()?;
    if let Some(teacher) = warm.seed.filter(|s| !seeds.contains(s)) {
        // Another shard reports this branch; this one runs it only to learn.
        loaded.branch(x, teacher, &watch, &stop, true)?;
        loaded.tell_learned(teacher);
        warm.finish();
    }
    std::thread::scope(|scope| {
        for _ in 0..x.jobs.max(1) {
            scope.spawn(|| loop {
                if stopping() {
                    return;
                }
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(&seed) = seeds.get(i) else { return };
                let teaches = warm.teaches(seed);
                if !teaches {
                    warm.wait(&stopping);
                }
                let ran = loaded.branch(x, seed, &watch, &stop, teaches);
                if teaches {
                    loaded.tell_learned(seed);
                    warm.finish();
                }
                match ran {
                    Ok(Some(r)) => {
                        if r.failed {
                            failing.fetch_add(1, Ordering::Relaxed);
                        }
                        if let Ok(mut m) = results.lock() {
                            m.insert(seed, r);
                        }
                        done.fetch_add(1, Ordering::Relaxed);
                    }
                    Ok(None) => return,
                    Err(e) => {
                        // A branch that cannot even start (not a guest failure): stop everything.
                        if let Ok(mut f) = first_error.lock() {
                            f.get_or_insert(e);
                        }
                        stop.store(true, Ordering::SeqCst);
                        return;
                    }
                }
            });
        }
        while done.load(Ordering::Relaxed) < seeds.len() as u64 && !stopping() {
            progress.show(
                done.load(Ordering::Relaxed),
                failing.load(Ordering::Relaxed),
                false,
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    });
    progress.show(
        done.load(Ordering::Relaxed),
        failing.load(Ordering::Relaxed),
        true,
    );
    if progress.tty {
        eprintln!();
    }
    let interrupted = wio_machines::interrupt::requested();
    let results: Vec<SeedResult> = results
        .into_inner()
        .unwrap_or_default()
        .into_values()
        .collect();
    // The teacher, when it taught (not one abandoned at Ctrl-C): the branches after it
    // started with its code and their reproduce lines name it.
    question.learn_from = warm.seed.filter(|_| loaded.learned());
    let mut report = Report {
        format: REPORT_FORMAT,
        question,
        shards: (x.shard.1, vec![x.shard.0]),
        complete: !interrupted && !stop.load(Ordering::SeqCst) && results.len() == seeds.len(),
        results,
        promises: Vec::new(),
        tree: None,
    };
    report.judge_promises();
    write_report(&report, &x.report)?;
    if let Some(e) = first_error.into_inner().ok().flatten() {
        return Err(e);
    }
    if interrupted {
        eprintln!(
            "wio: interrupted; the {} finished seeds are in {}",
            report.results.len(),
            x.report.display()
        );
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_ranges_and_shards() {
        assert_eq!(
            SeedRange::parse("1..5").unwrap(),
            SeedRange { start: 1, end: 5 }
        );
        assert_eq!(
            SeedRange::parse("1..=5").unwrap(),
            SeedRange { start: 1, end: 6 }
        );
        assert_eq!(
            SeedRange::parse("7").unwrap(),
            SeedRange { start: 7, end: 8 }
        );
        for bad in [
            "",
            "5..5",
            "5..1",
            "a..b",
            "1..2..3",
            "18446744073709551615..=18446744073709551615",
        ] {
            assert!(SeedRange::parse(bad).is_err(), "{bad}");
        }
        let r = SeedRange::parse("10..20").unwrap();
        let mut all: Vec<u64> = (0..3)
            .flat_map(|i| r.shard(i, 3).collect::<Vec<_>>())
            .collect();
        all.sort_unstable();
        assert_eq!(
            all,
            (10..20).collect::<Vec<_>>(),
            "shards cover the range once"
        );
        assert_eq!(r.shard(1, 3).collect::<Vec<_>>(), vec![11, 14, 17]);
        assert_eq!(parse_shard("2/4").unwrap(), (2, 4));
        for bad in ["4/4", "1/0", "x", "1/2/3", "-1/2"] {
            assert!(parse_shard(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn quoting_keeps_commands_pasteable() {
        assert_eq!(shell_quote("a.snap"), "a.snap");
        assert_eq!(shell_quote("my snap"), "'my snap'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
    }
}
