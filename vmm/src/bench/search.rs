//! `wio bench --search`: how deep guided exploration reaches against flat, side by side.
//!
//! - Planted bugs (`images/probe/wio-planted.c`, `sdk` form: each of DEPTH stages a 1-in-16
//!   choice from the SDK's random numbers, a `sometimes` promise per stage): for each depth
//!   and root seed r (boot seed r, search seed r), the small riscv64 guest is snapshotted at
//!   the program's setup-complete,
//!   then explored flat (seeds 0..budget) and guided (budget branches, stopped after the
//!   round that first failed; the default signals for the sdk form, coverage too for the
//!   blind and timing forms); every branch ends with the program (`--until 'planted:
//!   stopped'`, the bug's branches run on to the end). Printed: the first failing branch of
//!   each (or none) and the wall time. Flat needs about 16^DEPTH branches.
//! - A moment's cost: the small guest at its workload, with 256 and 1024 MiB of RAM, keeps a
//!   moment (an in-memory snapshot); its time and the guest memory it holds.

use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Instant;
use wio_clock::VirtualTime;
use wio_machines::arch::riscv64::DEFAULT_CMDLINE;
use wio_machines::builder;
use wio_machines::error::{BenchError, BenchFailure, Result};
use wio_machines::machine::noise::SchedNoise;
use wio_machines::machine::novelty::Signal;
use wio_machines::machine::{driver, Arch, RunConfig, Stop};
use wio_search::explore::guided::{self, Guided};
use wio_search::explore::{self, Explore, SeedRange};

/// The forms of the planted bug (`wio-planted FORM DEPTH`).
pub const FORMS: [&str; 3] = ["sdk", "blind", "timing"];

/// What the planted program prints when the bug is reached (all forms).
const BUG: &str = "planted: BUG reached";
/// Where a branch that did not reach the bug ends (the console line `--until` stops at).
const STOPPED: &str = "planted: stopped";

/// A snapshot of `wio-planted FORM DEPTH` before its first choice (setup-complete; the
/// timing form, which uses no SDK, at its "planted: start" line), booted with `seed`.
fn planted_snapshot(dir: &Path, form: &str, depth: u32, seed: u64) -> Result<PathBuf> {
    use wio_machines::snapshot::plan::SnapshotAt;
    let snap = dir.join(format!("planted-{form}-{depth}-{seed}.snap"));
    let at = if form == "timing" {
        SnapshotAt::Console("planted: start".into())
    } else {
        SnapshotAt::SetupComplete
    };
    let cfg = RunConfig {
        guest: Some("small".into()),
        cmdline: Some(format!(
            "{DEFAULT_CMDLINE} wio.planted={form},{depth} wio.busy_steps=0"
        )),
        epoch_unix: 1_767_225_600,
        snapshots: wio_machines::snapshot::plan::SnapshotPlan {
            at: vec![at],
            out: snap.to_string_lossy().into_owned(),
        },
        quiet: true,
        ..RunConfig::with_seed(seed)
    };
    let wall = Instant::now();
    let run = driver::run(builder::boot(Arch::Riscv64, &cfg, wall)?, &cfg, wall);
    run.outcome?;
    if !snap.exists() {
        return Err(BenchFailure::StaleGuest {
            guest: "planted guest",
            reached: "reached its branch point".into(),
            needs: "wio-planted",
        }
        .into());
    }
    Ok(snap)
}

fn explore_opts(snap: &Path, report: PathBuf, budget: u64, jobs: usize) -> Explore {
    Explore {
        from: snap.to_path_buf(),
        disk: None,
        seeds: SeedRange {
            start: 0,
            end: budget,
        },
        shard: (0, 1),
        jobs,
        // Each branch ends with the program under test (a branch that reaches the bug
        // goes on to the end): what runs after it, the workload's shell and the shutdown,
        // only adds coverage that timing moves.
        until: Some(STOPPED.to_string()),
        matches: Vec::new(),
        fail_on: vec![BUG.to_string()],
        max_virtual_ns: 3600 * 1_000_000_000,
        report,
        sched_noise: None,
    }
}

/// The first failing result's number, if any.
fn first_failing(r: &explore::Report) -> Option<u64> {
    r.results.iter().find(|s| s.failed).map(|s| s.seed)
}

/// What one moment of the small guest costs.
struct MomentCost {
    /// A moment of a booted machine (its memory copied whole): ms, bytes.
    whole: (f64, u64),
    /// A moment of a branch restored from the first and run 0.1 virtual s on (the pages it
    /// wrote, layered over its parent's): ms, bytes of its own layer.
    layered: (f64, u64),
}

/// Runs `m` to virtual time `ns` (an error if it ends before).
fn run_to(m: &mut dyn wio_machines::machine::Machine, ns: u64) -> Result<()> {
    let at = VirtualTime::from_ns(ns);
    loop {
        match m.run_until(at) {
            Stop::Limit => return Ok(()),
            Stop::End(e) => {
                return Err(BenchFailure::EndedEarly {
                    guest: "small guest",
                    needed: format!("{ns} ns"),
                    how: format!("{e:?}"),
                }
                .into())
            }
            _ => {}
        }
    }
}

/// One moment of the small guest with `mem_mib` of RAM at 2 virtual s (its workload
/// running), and one of a branch of it (another seed) at 2.1 s: medians of 3 takes each.
fn moment_cost(mem_mib: u64) -> Result<MomentCost> {
    let cfg = RunConfig {
        guest: Some("small".into()),
        mem_mib,
        epoch_unix: 1_767_225_600,
        quiet: true,
        ..RunConfig::with_seed(1)
    };
    let wall = Instant::now();
    let mut m = builder::boot(Arch::Riscv64, &cfg, wall)?;
    run_to(m.as_mut(), 2_000_000_000)?;
    let take = |m: &mut dyn wio_machines::machine::Machine, cfg: &RunConfig| -> Result<_> {
        let (mut ms, mut last) = (Vec::new(), None);
        for _ in 0..3 {
            let t = Instant::now();
            let l = m.moment(cfg)?;
            ms.push(t.elapsed().as_secs_f64() * 1e3);
            last = Some(l);
        }
        Ok((super::median(ms), last.expect("three moments")))
    };
    let (whole_ms, root) = take(m.as_mut(), &cfg)?;
    let branch_cfg = RunConfig {
        seed: 2,
        seed_given: true,
        ..cfg.clone()
    };
    let mut b = root.restore(&branch_cfg, wall)?;
    run_to(b.as_mut(), 2_100_000_000)?;
    let (layered_ms, child) = take(b.as_mut(), &branch_cfg)?;
    let own = child.resident_bytes().saturating_sub(root.resident_bytes());
    Ok(MomentCost {
        whole: (whole_ms, root.resident_bytes()),
        layered: (layered_ms, own),
    })
}

/// What `--search` measures.
pub struct SearchBench<'a> {
    /// Forms of the planted bug.
    pub forms: &'a [String],
    /// Depths.
    pub depths: &'a [u32],
    /// Root snapshots per depth.
    pub roots: u64,
    /// Branches per exploration.
    pub budget: u64,
    /// Whether to explore flat too.
    pub flat: bool,
    /// Worker threads.
    pub jobs: usize,
    /// Rounds of the coverage-cost boots.
    pub rounds: u32,
}

/// Runs the search figures and prints them; returns them as JSON.
pub fn figures(b: &SearchBench) -> Result<serde_json::Value> {
    let SearchBench {
        forms,
        depths,
        roots,
        budget,
        flat: with_flat,
        jobs,
        rounds,
    } = *b;
    if budget == 0 || roots == 0 || depths.is_empty() || depths.iter().any(|d| !(1..=8).contains(d))
    {
        return Err(BenchError::SearchSizes.into());
    }
    if let Some(f) = forms.iter().find(|f| !FORMS.contains(&f.as_str())) {
        return Err(BenchError::SearchForm {
            form: f.clone(),
            known: FORMS.join(", "),
        }
        .into());
    }
    let dir = crate::scratch_dir("wio-bench-search", "bench folder")?;
    let mut rows = Vec::new();
    println!("planted bug                first failing branch of {budget}, flat / guided (wall s)");
    for form in forms {
        for &depth in depths {
            for root in 1..=roots {
                eprintln!(
                    "bench: search, {form} form, depth {depth}, root seed {root}: {}…",
                    if with_flat {
                        "flat then guided"
                    } else {
                        "guided"
                    }
                );
                let snap = planted_snapshot(&dir, form, depth, root)?;
                let t = Instant::now();
                let flat = with_flat
                    .then(|| {
                        explore::explore(&explore_opts(&snap, dir.join("flat.json"), budget, jobs))
                    })
                    .transpose()?;
                let flat_s = t.elapsed().as_secs_f64();
                let t = Instant::now();
                let g = Guided {
                    budget,
                    // The root's boot seed changes little of what follows its snapshot (every
                    // branch re-keys its streams), so each root also gets its own search seed.
                    search_seed: root,
                    // The default signals for the sdk form; coverage too for the others, where
                    // nothing else can show progress.
                    signals: if form == "sdk" {
                        vec![Signal::Promise, Signal::Console]
                    } else {
                        Signal::ALL.to_vec()
                    },
                    max_memory: 4096 << 20,
                    stop_at_failure: true,
                    checkpoint_secs: u64::MAX,
                    resume: false,
                };
                let guided = guided::explore(
                    &explore_opts(&snap, dir.join("guided.json"), budget, jobs),
                    &g,
                )?;
                let guided_s = t.elapsed().as_secs_f64();
                let (f, gd) = (
                    flat.as_ref().and_then(first_failing),
                    first_failing(&guided),
                );
                let show = |v: Option<u64>| v.map_or_else(|| "none".to_string(), |b| b.to_string());
                println!(
                "  {form:<6} depth {depth}, root seed {root} {:>6} ({flat_s:.0} s) / {:>6} ({guided_s:.0} s), guided tree depth {}",
                if flat.is_some() { show(f) } else { "-".to_string() },
                show(gd),
                guided.tree.as_ref().map_or(0, |t| t.moments.iter().map(|m| m.depth).max().unwrap_or(0))
            );
                rows.push(json!({
                    "form": form, "depth": depth, "root_seed": root, "budget": budget,
                    "flat_first_failing": f, "flat_s": flat.is_some().then_some(flat_s),
                    "guided_first_failing": gd, "guided_s": guided_s,
                }));
                let _ = std::fs::remove_file(&snap);
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    let mut moments = Vec::new();
    for mem in [256, 1024] {
        let c = moment_cost(mem)?;
        let mib = |b: u64| b as f64 / (1 << 20) as f64;
        println!(
            "moment of the small guest  {:>8.1} ms, {:.1} MiB held, with {mem} MiB of RAM (copied whole)",
            c.whole.0,
            mib(c.whole.1)
        );
        println!(
            "  a branch's, 0.1 s on     {:>8.1} ms, {:.2} MiB held (the pages it wrote)",
            c.layered.0,
            mib(c.layered.1)
        );
        moments.push(json!({
            "mem_mib": mem, "ms": c.whole.0, "bytes": c.whole.1,
            "branch_ms": c.layered.0, "branch_bytes": c.layered.1,
        }));
    }
    let (mut with, mut without) = (Vec::new(), Vec::new());
    for round in 1..=rounds.max(1) {
        eprintln!(
            "bench: Debian boot, round {round}/{}: coverage off then on…",
            rounds.max(1)
        );
        without.push(super::debian_boot_secs(SchedNoise::default(), false)?);
        with.push(super::debian_boot_secs(SchedNoise::default(), true)?);
    }
    let (with, without) = (super::median(with), super::median(without));
    println!(
        "Debian boot wall time       {with:>8.2} s with coverage / {without:.2} s without = {:.3} (goal < 1.10)",
        with / without
    );
    Ok(
        json!({ "planted": rows, "moments": moments, "coverage_debian_boot": { "with_s": with, "without_s": without, "ratio": with / without } }),
    )
}
