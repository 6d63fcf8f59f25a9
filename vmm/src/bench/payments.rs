//! `wio bench --payments`: the payment scenario's whole search (images/payments). For each
//! planted bug, the seeds explored until the first violation (from the setup-complete
//! world snapshot, 2 workers), then the shrink of that seed (probes, wall time, faults
//! before and after); for the correct build, the same budget of seeds must all pass;
//! world branches per minute throughout. With `--payments-roots N`, side by side for each
//! bug: branches to the first violation of N flat explorations (seed ranges N apart) and of
//! N guided ones (search seeds 0..N, moments of the whole world). With `--throughput`, only
//! how fast branches of the correct build run, and where one branch's time goes.

use serde_json::json;
use std::path::Path;
use std::time::Instant;
use wio_machines::error::{BenchFailure, Result};
use wio_machines::machine::novelty::Signal;
use wio_search::explore::guided::{self, Guided};
use wio_search::explore::{Explore, SeedRange};
use wio_search::shrink;
use wio_world::snapshot::LoadedWorld;
use wio_world::{self as world, scenario::Scenario};

/// The scenario (built into wio: it names only the built `payments` disk).
const WORLD: &str = include_str!("../../../images/payments/world.toml");
/// Seeds explored in parallel between checks for a violation.
const BATCH: u64 = 8;

/// The world snapshot at setup complete of the build with `bug`, in `dir`.
fn snapshot(dir: &Path, bug: &str) -> Result<LoadedWorld> {
    let mut s =
        Scenario::parse_in(WORLD, Path::new(".")).map_err(|source| BenchFailure::World {
            which: "payments",
            source,
        })?;
    s.add_node_args(&format!("payments=wio.bug={bug}"))?;
    let path = dir.join(format!("{bug}.snap"));
    let opts = world::Options {
        quiet: true,
        jobs: 2,
        snapshot: Some((world::SnapWhen::SetupComplete, path.clone())),
        until: Some("client: p0:".into()),
        ..world::Options::default()
    };
    world::run(&s, 1, &opts)?;
    LoadedWorld::load(&path)
}

/// Runs seeds `from..from+n` on 2 workers; returns the failing ones (as `wio explore`
/// judges a seed), sorted.
fn run_seeds(lw: &LoadedWorld, from: u64, n: u64) -> Result<Vec<u64>> {
    let seeds: Vec<u64> = (from..from + n).collect();
    let opts = world::Options {
        quiet: true,
        jobs: 1,
        ..world::Options::default()
    };
    let failed = wio_machines::pool::map_in_order(&seeds, 2, |seed| {
        Ok(world::restore(lw, Some(*seed), &opts, None)?.is_some_and(|w| w.seed_failed()))
    })?;
    Ok(seeds
        .into_iter()
        .zip(failed)
        .filter_map(|(s, f)| f.then_some(s))
        .collect())
}

/// The first failing seed of `start..start + budget`, run in batches of [`BATCH`], and the
/// seeds run to find it.
fn first_failing(lw: &LoadedWorld, start: u64, budget: u64) -> Result<(Option<u64>, u64)> {
    let mut first = None;
    let mut from = start;
    while first.is_none() && from < start + budget {
        let n = BATCH.min(start + budget - from);
        first = run_seeds(lw, from, n)?.first().copied();
        from += n;
    }
    Ok((first, from - start))
}

/// Seeds between two flat samples of `--payments-roots` (ranges that never overlap): the
/// guided explorer's, so flat sample `r` runs the seeds search seed `r` branches the root
/// with, in the same order.
const FLAT_STRIDE: u64 = wio_search::explore::frontier::ROOT_SEED_STRIDE;

/// Branches to the first violation of `lw` (its file at `snap`): of flat explorations of
/// the seed ranges from `r * FLAT_STRIDE`, and of guided explorations with search seed `r`,
/// for `r` in `0..roots`, each of at most `budget` branches (None: none in the budget).
fn flat_against_guided(
    dir: &Path,
    snap: &Path,
    lw: &LoadedWorld,
    roots: u64,
    budget: u64,
) -> Result<Vec<serde_json::Value>> {
    let mut rows = Vec::new();
    for r in 0..roots {
        let t = Instant::now();
        let start = r * FLAT_STRIDE;
        let flat = first_failing(lw, start, budget)?.0.map(|s| s - start + 1);
        let flat_s = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let x = Explore {
            from: snap.to_path_buf(),
            disk: None,
            seeds: SeedRange {
                start: 0,
                end: budget,
            },
            shard: (0, 1),
            jobs: 2,
            until: None,
            matches: Vec::new(),
            fail_on: Vec::new(),
            max_virtual_ns: 0,
            report: dir.join("guided.json"),
            sched_noise: None,
        };
        let g = Guided {
            budget,
            search_seed: r,
            signals: vec![Signal::Promise, Signal::Console],
            max_memory: 4096 << 20,
            stop_at_failure: true,
            checkpoint_secs: u64::MAX,
            resume: false,
        };
        let report = guided::explore(&x, &g)?;
        let guided = report.results.iter().find(|s| s.failed).map(|s| s.seed + 1);
        let depth = report
            .tree
            .as_ref()
            .and_then(|t| t.moments.iter().map(|m| m.depth).max())
            .unwrap_or(0);
        let guided_s = t.elapsed().as_secs_f64();
        let show = |v: Option<u64>| v.map_or_else(|| "none".to_string(), |b| b.to_string());
        println!(
            "  root {r}: flat {:>5} branches ({flat_s:.0} s) / guided {:>5} ({guided_s:.0} s, tree depth {depth}, {} branches run)",
            show(flat),
            show(guided),
            report.results.len()
        );
        rows.push(json!({
            "root": r, "flat_branches_to_first": flat, "flat_s": flat_s,
            "guided_branches_to_first": guided, "guided_s": guided_s,
            "guided_branches_run": report.results.len(), "guided_tree_depth": depth,
        }));
    }
    Ok(rows)
}

/// The figures, printed and as JSON; `budget` seeds at most per bug; `roots` flat and
/// guided explorations side by side per bug (0: none).
pub fn figures(budget: u64, roots: u64) -> Result<serde_json::Value> {
    let dir = crate::scratch_dir("wio-bench-payments", "bench folder")?;
    let result = (|| {
        let mut docs = Vec::new();
        let mut seeds_run = 0u64;
        let mut seeds_wall = 0f64;
        let mut first_found: Vec<u64> = Vec::new();
        for bug in ["receipt-no-retry", "no-idempotency"] {
            eprintln!("bench: payments, bug {bug}: booting the world to setup complete…");
            let lw = snapshot(&dir, bug)?;
            let side_by_side = if roots > 0 {
                println!("payments {bug}: branches to the first violation, flat / guided");
                flat_against_guided(&dir, &dir.join(format!("{bug}.snap")), &lw, roots, budget)?
            } else {
                Vec::new()
            };
            let t = Instant::now();
            let (first, from) = first_failing(&lw, 0, budget)?;
            let wall = t.elapsed().as_secs_f64();
            seeds_run += from;
            seeds_wall += wall;
            let Some(seed) = first else {
                println!("payments {bug:<17} no violation in {budget} seeds ({wall:.0} s)");
                docs.push(json!({ "bug": bug, "first_violation_seed": null, "seeds": from, "flat_against_guided": side_by_side }));
                continue;
            };
            first_found.push(seed);
            let t = Instant::now();
            let out = shrink::shrink(&shrink::Shrink {
                from: dir.join(format!("{bug}.snap")),
                seed,
                path: None,
                sched_noise: None,
                promise: None,
                jobs: 2,
                max_probes: 400,
                out: dir.join(format!("{bug}-shrink.json")),
            })?;
            let shrink_wall = t.elapsed().as_secs_f64();
            println!(
                "payments {bug:<17} first violation at seed {seed} ({} seed(s) to it; {from} explored in {wall:.0} s); shrink {} -> {} fault(s) in {} probes, {shrink_wall:.0} s",
                seed + 1, out.before, out.after, out.probes
            );
            docs.push(json!({
                "bug": bug, "first_violation_seed": seed, "seeds": from, "explore_wall_s": wall,
                "shrink_faults_before": out.before, "shrink_faults_after": out.after,
                "shrink_probes": out.probes, "shrink_wall_s": shrink_wall,
                "flat_against_guided": side_by_side,
            }));
        }
        // The correct build over the seeds the bugs needed (at least 32).
        let n = first_found
            .iter()
            .map(|s| s + 1)
            .max()
            .unwrap_or(0)
            .max(32)
            .min(budget);
        eprintln!("bench: payments, bug none: {n} seeds must all pass…");
        let lw = snapshot(&dir, "none")?;
        let t = Instant::now();
        let failing = run_seeds(&lw, 0, n)?;
        let wall = t.elapsed().as_secs_f64();
        seeds_run += n;
        seeds_wall += wall;
        println!(
            "payments none              {} of {n} seeds fail ({wall:.0} s)",
            failing.len()
        );
        let per_minute = seeds_run as f64 * 60.0 / seeds_wall.max(1e-9);
        println!("payments branches/minute   {per_minute:>12.1} (4-node world, 2 workers)");
        Ok(json!({
            "bugs": docs, "none_seeds": n, "none_failing": failing,
            "branches_per_minute": per_minute,
        }))
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result
}

/// Workers `throughput` runs branches on (fewer when there are fewer branches).
const THROUGHPUT_WORKERS: usize = 2;

/// `--payments --throughput`: `branches` branches (seeds 1000 on) of the correct build from
/// its setup-complete snapshot on [`THROUGHPUT_WORKERS`] workers (one for one branch):
/// branches per minute, guest instructions and virtual time per branch, effective MIPS per
/// worker against `loop_mips` (the compute loop's), and one branch's wall time by part:
/// restore (every node restored), run and end (to the world's end, each node summarised
/// and freed: a world frees a node's machine as it takes its summary) and what follows the
/// world's summary (the host threads joined).
/// `branches` is at least 1 (`bench::run` refuses 0 before measuring anything).
pub fn throughput(branches: u64, loop_mips: f64) -> Result<serde_json::Value> {
    let dir = crate::scratch_dir("wio-bench-throughput", "bench folder")?;
    let result = (|| {
        eprintln!("bench: payments throughput: booting the world to setup complete…");
        let lw = snapshot(&dir, "none")?;
        let at: Vec<u64> = lw
            .nodes
            .iter()
            .map(|n| n.meta().instructions.unwrap_or(0))
            .collect();
        let opts = world::Options {
            quiet: true,
            jobs: 1,
            ..world::Options::default()
        };
        let seeds: Vec<u64> = (1000..1000 + branches).collect();
        let workers = wio_machines::pool::threads(THROUGHPUT_WORKERS, seeds.len());
        let w_s = if workers == 1 { "" } else { "s" };
        let b_s = if seeds.len() == 1 { "" } else { "es" };
        eprintln!("bench: payments throughput: {branches} branch{b_s} on {workers} worker{w_s}…");
        let t = Instant::now();
        // Per branch: (instructions, virtual ns, restore ns, run ns, end ns).
        let runs = wio_machines::pool::map_in_order(&seeds, workers, |seed| {
            let outer = Instant::now();
            let Some(w) = world::restore(&lw, Some(*seed), &opts, None)? else {
                return Err(BenchFailure::BranchMissed {
                    branch: format!("payments seed {seed}"),
                    what: "it was cancelled".into(),
                }
                .into());
            };
            let total = outer.elapsed().as_nanos() as u64;
            let instructions: u64 = w
                .nodes
                .iter()
                .zip(&at)
                .map(|((_, s), at)| s.instructions.unwrap_or(0).saturating_sub(*at))
                .sum();
            Ok((
                instructions,
                w.virtual_ns.saturating_sub(lw.state.at_ns),
                w.start_wall_ns,
                w.wall_ns.saturating_sub(w.start_wall_ns),
                total.saturating_sub(w.wall_ns),
            ))
        })?;
        let secs = t.elapsed().as_secs_f64();
        let n = runs.len().max(1) as f64;
        let mean =
            |f: fn(&(u64, u64, u64, u64, u64)) -> u64| runs.iter().map(f).sum::<u64>() as f64 / n;
        let (instructions, virtual_ns) = (mean(|r| r.0), mean(|r| r.1));
        let [restore, run, end] = [mean(|r| r.2), mean(|r| r.3), mean(|r| r.4)].map(|ns| ns / 1e6);
        let per_minute = n * 60.0 / secs.max(1e-9);
        let mips = instructions / ((restore + run + end) * 1e3).max(1e-9);
        println!(
            "payments throughput        {per_minute:>12.1} branches/minute (4-node world from setup complete, {workers} worker{w_s}, {branches} branch{b_s} of the correct build)"
        );
        println!(
            "  one branch               {:>12.1} M instructions over {:.1} virtual s: {mips:.0} MIPS per worker ({:.0} % of the compute loop's {loop_mips:.0})",
            instructions / 1e6,
            virtual_ns / 1e9,
            100.0 * mips / loop_mips.max(1e-9),
        );
        println!(
            "  one branch, by part      {:>12.0} ms: restore {restore:.1} ms, run and end {run:.0} ms (each node run, summarised and freed), after the summary {end:.2} ms",
            restore + run + end
        );
        Ok(json!({
            "branches": branches, "workers": workers, "branches_per_minute": per_minute,
            "instructions": instructions, "virtual_ns": virtual_ns, "mips_per_worker": mips,
            "compute_loop_mips": loop_mips,
            "cost_ms": { "restore": restore, "run_and_end": run, "after_summary": end },
        }))
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result
}
