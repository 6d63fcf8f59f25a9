//! `wio shrink`: from a world seed that breaks a promise, the smallest list of faults that
//! still breaks it.
//!
//! The seed's faults (those between nodes its `[faults]` profile drew, and the nodes' own)
//! become an explicit list; delta debugging (ddmin) removes faults while the same promise
//! still fails with the same seed (so everything else the seed decides, timing noise and
//! the programs' random numbers, stays); then each remaining fault is made shorter and
//! moved later while it still fails. Every probe is a branch of the world snapshot, run on
//! `--jobs` threads; the choice among probes of one round is by list order, never by which
//! thread finished first, so a shrink is as repeatable as a run. The result is a world
//! fault plan (`wio sim --fault-plan`), printed as a story with the line that reproduces it.
//!
//! A guided exploration's failing branch is a path through moments: its steps are replayed
//! once to its last moment, and the faults from there on (those its last seed drew) are
//! shrunk; the plan names the path, and `wio sim --from ROOT --path P --fault-plan PLAN`
//! reproduces it.

use crate::explore::path::BranchPath;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;
use wio_machines::error::NondeterminismError;
use wio_machines::error::{Result, ShrinkError, WioError};
use wio_machines::faults::plan::{Fault, FaultPlan};
use wio_machines::promises::report::Verdict;
use wio_machines::promises::Status;
use wio_world::faults::{Between, WorldFault, WorldPlan};
use wio_world::snapshot::LoadedWorld;
use wio_world::{self as world, WorldSummary};

/// Shortest fault a shrink leaves, ns.
const MIN_DURATION_NS: u64 = 1_000_000;

/// What to shrink.
pub struct Shrink {
    /// The world snapshot.
    pub from: PathBuf,
    /// The failing seed (of a path: ignored, the path's last seed is).
    pub seed: u64,
    /// The failing branch of a guided exploration, and how its steps run (the exploration's
    /// `--until` and limit); None: the seed's branch of the snapshot.
    pub path: Option<(BranchPath, world::Options)>,
    /// Every node's CPU-timing noise from the snapshot on, as the exploration ran it (None:
    /// the snapshot's).
    pub sched_noise: Option<wio_machines::machine::noise::SchedNoise>,
    /// Text of the promise that must keep failing (None: the seed's first failed one).
    pub promise: Option<String>,
    /// Probe threads.
    pub jobs: usize,
    /// Most probes.
    pub max_probes: usize,
    /// Where the minimal plan goes.
    pub out: PathBuf,
}

/// One fault of the list.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Item {
    Between(WorldFault),
    Node(String, Fault),
}

impl Item {
    fn start(&self) -> u64 {
        match self {
            Item::Between(f) => f.exact.start_ns(),
            Item::Node(_, f) => f.at_ns,
        }
    }

    fn end(&self) -> u64 {
        match self {
            Item::Between(f) => f.until_ns,
            Item::Node(_, f) => f.end_ns(),
        }
    }

    /// The same fault over [from, until).
    fn with_interval(&self, from: u64, until: u64, names: &[String]) -> Item {
        match self {
            Item::Between(f) => {
                let mut b = f.exact.clone();
                let (a, z) = b.interval_mut();
                *a = from;
                *z = until;
                Item::Between(WorldFault::of(&b, names))
            }
            Item::Node(n, f) => Item::Node(
                n.clone(),
                Fault {
                    at_ns: from,
                    duration_ns: until.saturating_sub(from),
                    ..*f
                },
            ),
        }
    }

    /// One line of the story.
    fn story(&self) -> String {
        let secs = |ns: u64| ns as f64 / 1e9;
        let len = self.end().saturating_sub(self.start());
        match self {
            Item::Between(f) => match &f.exact {
                Between::Partition(p) => {
                    let sides: Vec<&str> = f
                        .what
                        .split(if p.one_way { " -> " } else { " | " })
                        .collect();
                    if p.one_way {
                        format!(
                            "{:.3} s: frames from {} to {} dropped for {:.3} s (one-way partition)",
                            secs(f.from_ns),
                            sides.first().unwrap_or(&"?"),
                            sides.get(1).unwrap_or(&"?"),
                            secs(len)
                        )
                    } else {
                        format!(
                            "{:.3} s: partition {} for {:.3} s",
                            secs(f.from_ns),
                            f.what,
                            secs(len)
                        )
                    }
                }
                Between::Dependency(_) => format!(
                    "{:.3} s: {}: {} for {:.3} s",
                    secs(f.from_ns),
                    f.kind,
                    f.what,
                    secs(len)
                ),
                Between::Degrade(_) => {
                    let (link, how) = f.what.split_once(' ').unwrap_or((f.what.as_str(), ""));
                    format!(
                        "{:.3} s: link {link} degraded for {:.3} s ({})",
                        secs(f.from_ns),
                        secs(len),
                        how.replace(" ±", ", ±").replace(" ms ", " ms, ")
                    )
                }
            },
            Item::Node(n, f) => {
                // The kind's parameters as the plan writes them (an upset's register, lane
                // and bit; a crash's unflushed writes), and how long unless instant.
                let params = f.kind.params().map(|p| format!(" {p}")).unwrap_or_default();
                let span = if f.kind.is_instant() {
                    String::new()
                } else {
                    format!(" for {:.3} s", secs(len))
                };
                format!(
                    "{:.3} s: node {n}: {} ({}){params}{span}",
                    secs(f.at_ns),
                    f.kind.name(),
                    format!("{:?}", f.target).to_lowercase(),
                )
            }
        }
    }
}

/// The plan of `items` for a world of nodes `names` (every node listed when `nodes`, so
/// the nodes' own future faults are exactly the list's).
fn plan_of(items: &[Item], names: &[String], nodes: bool) -> WorldPlan {
    let mut between: Vec<WorldFault> = items
        .iter()
        .filter_map(|i| match i {
            Item::Between(f) => Some(f.clone()),
            Item::Node(..) => None,
        })
        .collect();
    between.sort_by_key(|f| f.from_ns);
    let nodes = if nodes {
        names
            .iter()
            .map(|n| {
                let mut faults: Vec<Fault> = items
                    .iter()
                    .filter_map(|i| match i {
                        Item::Node(m, f) if m == n => Some(*f),
                        _ => None,
                    })
                    .collect();
                faults.sort_by_key(|f| f.at_ns);
                (n.clone(), FaultPlan { faults })
            })
            .collect()
    } else {
        Vec::new()
    };
    WorldPlan {
        between,
        nodes,
        ..WorldPlan::default()
    }
}

/// The promise a run must keep breaking: its id and how it failed.
struct Target {
    id: String,
    status: Status,
    message: String,
}

fn failed(v: &Verdict) -> bool {
    v.status != Status::Passed
}

/// Runs probes of one world and seed.
struct Prober<'a> {
    lw: &'a LoadedWorld,
    seed: u64,
    jobs: usize,
    max: usize,
    probes: AtomicUsize,
    target: Target,
    sched_noise: Option<wio_machines::machine::noise::SchedNoise>,
    names: Vec<String>,
    nodes: bool,
    started: Instant,
}

impl Prober<'_> {
    fn run(&self, plan: Option<WorldPlan>) -> Result<WorldSummary> {
        let opts = world::Options {
            quiet: true,
            jobs: 1,
            plan,
            sched_noise: self.sched_noise,
            ..world::Options::default()
        };
        world::restore(self.lw, Some(self.seed), &opts, None)?.ok_or(WioError::NoResult {
            what: "a shrink probe",
        })
    }

    /// Whether each list still breaks the target promise (probes in parallel; results in
    /// list order).
    fn fail_many(&self, lists: &[Vec<Item>]) -> Result<Vec<bool>> {
        let budget = self.max.saturating_sub(self.probes.load(Ordering::Relaxed));
        if lists.len() > budget {
            return Err(ShrinkError::TooManyProbes { max: self.max }.into());
        }
        wio_machines::pool::map_in_order(lists, self.jobs, |items| {
            let plan = plan_of(items, &self.names, self.nodes);
            let still = self.run(Some(plan)).map(|w| {
                w.promises
                    .iter()
                    .any(|v| v.promise.id == self.target.id && v.status == self.target.status)
            })?;
            let n = self.probes.fetch_add(1, Ordering::Relaxed) + 1;
            eprintln!(
                "shrink: probe {n}: {} fault(s): {} ({:.0} s)",
                items.len(),
                if still { "still fails" } else { "holds" },
                self.started.elapsed().as_secs_f64()
            );
            Ok(still)
        })
    }

    fn fails(&self, items: &[Item]) -> Result<bool> {
        Ok(self.fail_many(&[items.to_vec()])?[0])
    }
}

/// Whether each list of a round still fails, in list order.
type FailMany<'a, T> = dyn Fn(&[Vec<T>]) -> Result<Vec<bool>> + 'a;

/// `items` split into `n` chunks of nearly equal length.
fn chunks<T: Clone>(items: &[T], n: usize) -> Vec<Vec<T>> {
    let mut out = Vec::new();
    let mut start = 0;
    for k in 0..n {
        let end = items.len() * (k + 1) / n;
        out.push(items[start..end].to_vec());
        start = end;
    }
    out
}

/// Delta debugging: a 1-minimal sublist of `items` that still fails.
fn ddmin<T: Clone>(fail_many: &FailMany<T>, items: Vec<T>) -> Result<Vec<T>> {
    if fail_many(&[Vec::new()])?[0] {
        return Ok(Vec::new());
    }
    let mut c = items;
    let mut n = 2usize;
    while c.len() >= 2 {
        let parts = chunks(&c, n);
        let r = fail_many(&parts)?;
        if let Some(i) = r.iter().position(|f| *f) {
            c = parts[i].clone();
            n = 2;
            continue;
        }
        if n > 2 {
            let complements: Vec<Vec<T>> = (0..n)
                .map(|i| {
                    parts
                        .iter()
                        .enumerate()
                        .filter(|(j, _)| *j != i)
                        .flat_map(|(_, v)| v.clone())
                        .collect()
                })
                .collect();
            let r = fail_many(&complements)?;
            if let Some(i) = r.iter().position(|f| *f) {
                c = complements[i].clone();
                n = (n - 1).max(2);
                continue;
            }
        }
        if n >= c.len() {
            break;
        }
        n = (2 * n).min(c.len());
    }
    Ok(c)
}

/// Each fault as short as it can be (halvings tried together), then as late as it can be
/// before `limit` (the original faults' last end), while the list still fails.
fn tighten(p: &Prober, mut c: Vec<Item>, limit: u64) -> Result<Vec<Item>> {
    for i in 0..c.len() {
        let (from, until) = (c[i].start(), c[i].end());
        let len = until - from;
        let shorter: Vec<u64> = (1..=4)
            .map(|k| len >> k)
            .filter(|l| *l >= MIN_DURATION_NS)
            .collect();
        let lists: Vec<Vec<Item>> = shorter
            .iter()
            .map(|l| {
                let mut v = c.clone();
                v[i] = c[i].with_interval(from, from + l, &p.names);
                v
            })
            .collect();
        let r = p.fail_many(&lists)?;
        // The shortest that still fails.
        if let Some(k) = (0..lists.len()).rev().find(|k| r[*k]) {
            c = lists[k].clone();
        }
        let (from, until) = (c[i].start(), c[i].end());
        let slack = limit.saturating_sub(until);
        let shifts: Vec<u64> = (0..3)
            .map(|k| slack >> (k + 1))
            .filter(|s| *s >= MIN_DURATION_NS)
            .collect();
        let lists: Vec<Vec<Item>> = shifts
            .iter()
            .map(|s| {
                let mut v = c.clone();
                v[i] = c[i].with_interval(from + s, until + s, &p.names);
                v
            })
            .collect();
        let r = p.fail_many(&lists)?;
        // The latest that still fails.
        if let Some(k) = (0..lists.len()).find(|k| r[*k]) {
            c = lists[k].clone();
        }
    }
    Ok(c)
}

/// What a shrink did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// Faults of the seed after the snapshot.
    pub before: usize,
    /// Faults of the minimal plan.
    pub after: usize,
    /// Probes run.
    pub probes: usize,
}

/// Runs the shrink; prints the story and writes the plan.
pub fn shrink(x: &Shrink) -> Result<Outcome> {
    let started = Instant::now();
    if !LoadedWorld::is_world(&x.from) {
        return Err(ShrinkError::NotAWorld {
            from: x.from.clone(),
        }
        .into());
    }
    let root = LoadedWorld::load(&x.from)?;
    let (moment, seed, branch) = start_point(x, &root)?;
    let lw = moment.as_ref().unwrap_or(&root);
    let names: Vec<String> = lw
        .state
        .scenario
        .nodes
        .iter()
        .map(|n| n.name.clone())
        .collect();
    let at = lw.state.at_ns;
    let mut p = Prober {
        lw,
        seed,
        jobs: x.jobs,
        max: x.max_probes,
        probes: AtomicUsize::new(0),
        target: Target {
            id: String::new(),
            status: Status::Passed,
            message: String::new(),
        },
        sched_noise: x.sched_noise,
        names: names.clone(),
        nodes: false,
        started,
    };
    eprintln!("shrink: running {branch} from {}…", x.from.display());
    let base = p.run(None)?;
    let target = broken_promise(&base, x, &branch)?;
    p.target = Target {
        id: target.promise.id.clone(),
        status: target.status,
        message: target.promise.message.clone(),
    };
    let items = fault_items(&base, at);
    p.nodes = items.iter().any(|i| matches!(i, Item::Node(..)));
    let limit = items.iter().map(Item::end).max().unwrap_or(at);
    eprintln!(
        "shrink: {branch} breaks {} {:?} ({}) with {} fault(s) after {}; shrinking on {} threads…",
        target.promise.display_type,
        p.target.message,
        p.target.status.name(),
        items.len(),
        if x.path.is_some() {
            "its last moment"
        } else {
            "the snapshot"
        },
        x.jobs
    );
    // The explicit list must break the promise as the drawn faults did.
    if !p.fails(&items)? {
        return Err(WioError::Nondeterminism(
            NondeterminismError::ExplicitFaults {
                branch: branch.to_string(),
                message: p.target.message.clone(),
            },
        ));
    }
    let minimal = ddmin(&|lists: &[Vec<Item>]| p.fail_many(lists), items.clone())?;
    let minimal = tighten(&p, minimal, limit)?;
    let plan = minimal_plan(x, &p, &minimal, seed);
    plan.write(&x.out)?;
    // The story, from the minimal plan's own run, drawn beside the plan.
    let svg = x.out.with_extension("svg");
    let last = story_run(x, lw, seed, plan, &svg)?;
    report(
        x,
        (&branch, seed),
        &p,
        (&items, &minimal),
        &last,
        (started, &svg),
    );
    Ok(Outcome {
        before: items.len(),
        after: minimal.len(),
        probes: p.probes.load(Ordering::Relaxed),
    })
}

/// Where the shrink starts: the snapshot, or the last moment of the failing path (replayed
/// to it); the seed the failing branch runs from there; and how it is named in messages
/// (its seed, or its path).
fn start_point(x: &Shrink, root: &LoadedWorld) -> Result<(Option<LoadedWorld>, u64, String)> {
    match &x.path {
        Some((path, steps)) => {
            eprintln!(
                "shrink: replaying path {path} from {} to its last moment…",
                x.from.display()
            );
            let cancel = AtomicBool::new(false);
            let moment = path.last_world_moment(root, steps, &cancel)?;
            Ok((moment, path.seed, format!("path {path}")))
        }
        None => Ok((None, x.seed, format!("seed {}", x.seed))),
    }
}

/// The plan of the minimal fault list, with what a replay needs to run the branch as the
/// shrink did: its seed or path, noise level, `--until` and time limit, and the promise.
fn minimal_plan(x: &Shrink, p: &Prober, minimal: &[Item], seed: u64) -> WorldPlan {
    let mut plan = plan_of(minimal, &p.names, p.nodes);
    plan.seed = Some(seed);
    plan.path = x.path.as_ref().map(|(path, _)| path.to_string());
    plan.sched_noise = x.sched_noise;
    if let Some((_, steps)) = &x.path {
        plan.until.clone_from(&steps.until);
        plan.max_virtual_ns = steps.max_virtual_ns;
    }
    plan.promise = Some(p.target.message.clone());
    plan
}

/// The minimal plan's own run from `lw`, its timeline drawn to `svg`.
fn story_run(
    x: &Shrink,
    lw: &LoadedWorld,
    seed: u64,
    plan: WorldPlan,
    svg: &Path,
) -> Result<WorldSummary> {
    let options = world::Options {
        quiet: true,
        jobs: 1,
        plan: Some(plan),
        timeline: Some(svg.to_path_buf()),
        sched_noise: x.sched_noise,
        ..world::Options::default()
    };
    world::restore(lw, Some(seed), &options, None)?.ok_or(WioError::NoResult {
        what: "the shrink's last run",
    })
}

/// The promise the branch breaks: the one `--promise` names, else its first violated
/// one, else its first that failed another way; an error when it holds.
fn broken_promise<'a>(base: &'a WorldSummary, x: &Shrink, branch: &str) -> Result<&'a Verdict> {
    let target = match &x.promise {
        Some(text) => base
            .promises
            .iter()
            .find(|v| v.promise.message.contains(text.as_str()))
            .ok_or_else(|| ShrinkError::NoSuchPromise { text: text.clone() })?,
        None => base
            .promises
            .iter()
            .find(|v| v.status == Status::Violated)
            .or_else(|| base.promises.iter().find(|v| failed(v)))
            .ok_or_else(|| ShrinkError::NothingBroken {
                branch: branch.to_string(),
                from: x.from.clone(),
            })?,
    };
    if !failed(target) {
        return Err(ShrinkError::PromiseKept {
            branch: branch.to_string(),
            promise: target.promise.message.clone(),
        }
        .into());
    }
    Ok(target)
}

/// The faults of the branch's run from `at` on (the world's and each node's), in the order
/// they start: what the shrink takes away from.
fn fault_items(base: &WorldSummary, at: u64) -> Vec<Item> {
    let mut items: Vec<Item> = base
        .faults
        .iter()
        .filter(|f| f.exact.start_ns() >= at)
        .cloned()
        .map(Item::Between)
        .collect();
    for (name, s) in &base.nodes {
        for a in s.faults.iter().filter(|a| a.fault.at_ns >= at) {
            items.push(Item::Node(name.clone(), a.fault));
        }
    }
    items.sort_by_key(Item::start);
    items
}

/// Prints what the shrink found: the minimal faults and their story, when the promise
/// broke in the minimal plan's own run (`last`), and the command that reproduces it.
fn report(
    x: &Shrink,
    (branch, seed): (&str, u64),
    p: &Prober,
    (items, minimal): (&[Item], &[Item]),
    last: &WorldSummary,
    (started, svg): (Instant, &Path),
) {
    let verdict = last.promises.iter().find(|v| v.promise.id == p.target.id);
    println!(
        "minimal plan: {} fault(s) (from {}) in {} probes, {:.1} s; {branch} still breaks {:?}",
        minimal.len(),
        items.len(),
        p.probes.load(Ordering::Relaxed),
        started.elapsed().as_secs_f64(),
        p.target.message
    );
    if minimal.is_empty() {
        println!("  no fault needed: the seed's timing alone (noise, the programs' random numbers) breaks it");
    }
    for i in minimal {
        println!("  {}", i.story());
    }
    if let Some(v) = verdict {
        let when = v.promise.first_failure_ns.map_or_else(
            || format!("by the end ({:.3} s)", last.virtual_ns as f64 / 1e9),
            |t| format!("{:.3} s", t as f64 / 1e9),
        );
        println!(
            "  {when}: {} {:?} {}{}",
            v.promise.display_type,
            v.promise.message,
            v.status.name(),
            v.promise
                .first_failure_details
                .as_ref()
                .map(|d| format!(" ({d})"))
                .unwrap_or_default()
        );
    }
    println!(
        "reproduce: wio sim --from {} {} --fault-plan {}",
        x.from.display(),
        match &x.path {
            Some((path, _)) => format!("--path {path}"),
            None => format!("--seed {seed}"),
        },
        x.out.display()
    );
    eprintln!(
        "wio: minimal plan written to {}, its timeline to {}",
        x.out.display(),
        svg.display()
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ddmin over numbers where the failure needs `need` all present: it finds exactly them,
    /// in at most n² probes (ddmin's worst case), never by trying every subset.
    #[test]
    fn ddmin_finds_the_faults_that_matter() {
        for (n, need) in [
            (8usize, vec![3usize, 7]),
            (13, vec![0]),
            (5, vec![]),
            (20, vec![2, 11, 19]),
        ] {
            let probes = std::cell::Cell::new(0usize);
            let fail_many = |lists: &[Vec<usize>]| -> Result<Vec<bool>> {
                probes.set(probes.get() + lists.len());
                Ok(lists
                    .iter()
                    .map(|l| need.iter().all(|x| l.contains(x)))
                    .collect())
            };
            let got = ddmin(&fail_many, (0..n).collect()).unwrap();
            assert_eq!(got, need, "n {n}");
            assert!(
                probes.get() <= n * n,
                "{} probes for {n} items",
                probes.get()
            );
        }
    }

    #[test]
    fn chunks_cover_the_list_in_order() {
        let v: Vec<u8> = (0..7).collect();
        for n in 1..=7 {
            let c = chunks(&v, n);
            assert_eq!(c.len(), n);
            assert_eq!(c.concat(), v);
            assert!(c.iter().all(|x| !x.is_empty()));
        }
    }
}
