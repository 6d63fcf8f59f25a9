//! `wio sim` (a world run, its host link and its trace folder), `wio diff` (two runs
//! compared structurally) and `wio verify --golden` (a recorded run against this build).

use crate::cli;
use crate::error::WioError;
use wio_search::{diff, explore};
use wio_world as world;

pub(crate) fn sim_command(args: &cli::SimArgs) -> Result<i32, WioError> {
    let plan = args
        .fault_plan
        .as_deref()
        .map(world::faults::WorldPlan::read)
        .transpose()?;
    let p = plan.as_ref();
    // Said when the command line gives a value other than the plan records.
    fn overrides<T: PartialEq>(what: &str, given: Option<&T>, recorded: Option<&T>) {
        if matches!((given, recorded), (Some(g), Some(r)) if g != r) {
            eprintln!("wio: {what} as given, not as the fault plan records it");
        }
    }
    overrides(
        "--sched-noise",
        args.sched_noise.as_ref(),
        p.and_then(|p| p.sched_noise.as_ref()),
    );
    overrides(
        "--until",
        args.until.as_ref(),
        p.and_then(|p| p.until.as_ref()),
    );
    let opts = world::Options {
        gdb: args.gdb.clone(),
        quiet: args.quiet,
        jobs: args.jobs,
        watchdog_ms: args.watchdog_ms,
        pcap_dir: args.pcap_dir.clone(),
        snapshot: match &args.snapshot_at {
            Some(at) => Some((
                world::SnapWhen::from_at(at.clone())?,
                args.snapshot_out.clone(),
            )),
            None => None,
        },
        // A shrunk plan records how its branch ran; what the command line says wins.
        until: args
            .until
            .clone()
            .or_else(|| p.and_then(|p| p.until.clone())),
        timeline: args.timeline.clone(),
        max_virtual_ns: args
            .max_virtual_secs
            .map(|s| {
                s.checked_mul(1_000_000_000)
                    .ok_or_else(|| WioError::Usage("--max-virtual-secs is too large".into()))
            })
            .transpose()?
            .or_else(|| p.and_then(|p| p.max_virtual_ns)),
        sched_noise: args.sched_noise.or_else(|| p.and_then(|p| p.sched_noise)),
        plan: plan.clone(),
        host: crate::host_link::spec(
            args.net.as_deref(),
            &args.allow,
            args.record.as_deref(),
            args.replay.as_deref(),
        )?,
        trace_dir: args.trace_dir.clone(),
        ..world::Options::default()
    };
    if opts.host.is_some() && args.from.is_some() {
        return Err(WioError::Usage(
            "--net host and --replay start a world from its scenario; a world snapshot keeps its recorded host link's tape and replays it by itself (leave out --net, --allow and --replay with --from)".into(),
        ));
    }
    // A replay runs with its tape's seed unless told otherwise (and then checks it).
    let tape_seed = match &args.replay {
        Some(p) if args.seed.is_none() => Some(world::hostlink::tape::Tape::read(p)?.head.seed),
        _ => None,
    };
    let seed = args.seed.or(tape_seed);
    let summary = match (&args.from, &args.scenario) {
        (Some(from), _) => {
            let loaded = world::snapshot::LoadedWorld::load(from)?;
            let (moment, seed) = match &args.path {
                Some(text) => {
                    let path = explore::path::BranchPath::parse(text)?;
                    // The steps as the exploration ran them: quiet, to the same ends.
                    let steps = world::Options {
                        jobs: opts.jobs,
                        max_virtual_ns: opts.max_virtual_ns,
                        ..explore::path::world_steps(opts.until.clone(), 0, opts.sched_noise)
                    };
                    let cancel = std::sync::atomic::AtomicBool::new(false);
                    let moment = path.last_world_moment(&loaded, &steps, &cancel)?;
                    (moment, Some(path.seed))
                }
                None => (None, args.seed),
            };
            world::restore(moment.as_ref().unwrap_or(&loaded), seed, &opts, None)?.ok_or(
                WioError::NoResult {
                    what: "the world run",
                },
            )?
        }
        (None, Some(path)) => world::run(
            &scenario_with_args(path, &args.node_args)?,
            seed.unwrap_or(0),
            &opts,
        )?,
        (None, None) => {
            return Err(WioError::Usage(
                "wio sim needs a scenario file or --from WORLD.snap".into(),
            ))
        }
    };
    if !args.no_summary {
        eprint!("{}", summary.human());
    }
    if let Some(path) = &args.summary_json {
        wio_machines::summary::write_json(&summary, path, "summary")?;
    }
    if let Some(dir) = &args.trace_dir {
        golden_manifest(args, seed, &opts, &summary, dir)?;
    }
    Ok(summary.wio_exit_code)
}

/// How to run a `--trace-dir` folder's run again (`DIR/golden.json`): the scenario or
/// snapshot (absolute paths), the seed, the options that change what happens, the tape.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct Golden {
    wio_golden: u32,
    scenario: Option<std::path::PathBuf>,
    from: Option<std::path::PathBuf>,
    seed: Option<u64>,
    node_args: Vec<String>,
    fault_plan: Option<std::path::PathBuf>,
    until: Option<String>,
    max_virtual_ns: Option<u64>,
    tape: Option<std::path::PathBuf>,
    world_trace_hash: String,
}

fn absolute(p: &std::path::Path) -> std::path::PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

fn golden_manifest(
    args: &cli::SimArgs,
    seed: Option<u64>,
    opts: &world::Options,
    summary: &world::WorldSummary,
    dir: &std::path::Path,
) -> Result<(), WioError> {
    if args.net.is_some() && args.record.is_none() {
        eprintln!("wio: {}: traces written; no golden.json: a live host link cannot be run again (record it with --record TAPE)", dir.display());
        return Ok(());
    }
    let g = Golden {
        wio_golden: 1,
        scenario: args.scenario.as_deref().map(absolute),
        from: args.from.as_deref().map(absolute),
        seed: Some(summary.seed).or(seed),
        node_args: args.node_args.clone(),
        fault_plan: args.fault_plan.as_deref().map(absolute),
        until: opts.until.clone(),
        max_virtual_ns: opts.max_virtual_ns,
        tape: args
            .record
            .as_deref()
            .or(args.replay.as_deref())
            .map(absolute),
        world_trace_hash: summary.world_trace_hash.clone(),
    };
    wio_machines::summary::write_json(&g, &dir.join("golden.json"), "golden run")
}

/// `wio diff A B`.
pub(crate) fn diff_command(args: &cli::DiffArgs) -> Result<i32, WioError> {
    let (a, b) = match &args.report {
        None => (diff::load(&args.a)?, diff::load(&args.b)?),
        Some(report) => {
            use crate::rerun::{seed_arg, seed_trace};
            let (sa, sb) = (seed_arg(&args.a)?, seed_arg(&args.b)?);
            let scratch = crate::scratch_dir("wio-diff", "wio diff's scratch folder")?;
            let runs = seed_trace(report, sa, &scratch.join("a"))
                .and_then(|a| Ok((a, seed_trace(report, sb, &scratch.join("b"))?)));
            let loaded = runs.and_then(|(a, b)| Ok((diff::load(&a)?, diff::load(&b)?)));
            let _ = std::fs::remove_dir_all(&scratch);
            loaded?
        }
    };
    let ignore = diff::Ignore {
        times: args.ignore_times,
        payloads: args.ignore_payloads,
        only: args.only.clone(),
    };
    let d = diff::diff(&a, &b, &ignore, args.context);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&d).unwrap_or_default());
    } else {
        print!("{}", d.human());
    }
    Ok(if d.equal { 0 } else { 1 })
}

/// `wio verify --golden DIR`: the golden run again with this build, compared.
pub(crate) fn verify_golden(dir: &std::path::Path) -> Result<i32, WioError> {
    let path = dir.join("golden.json");
    let text = std::fs::read_to_string(&path).map_err(|source| WioError::ArtifactIo {
        what: "golden run",
        path: path.clone(),
        source,
    })?;
    let g: Golden = serde_json::from_str(&text).map_err(|e| WioError::ArtifactFormat {
        what: "golden run",
        path: path.clone(),
        reason: format!(
            "is not a golden run's golden.json ({e}); write one with wio sim --trace-dir"
        ),
    })?;
    let plan = g
        .fault_plan
        .as_deref()
        .map(world::faults::WorldPlan::read)
        .transpose()?;
    let again = crate::scratch_dir("wio-golden", "golden run's scratch folder")?;
    let opts = world::Options {
        quiet: true,
        jobs: 1,
        until: g.until.clone(),
        max_virtual_ns: g.max_virtual_ns,
        plan,
        host: g.tape.clone().map(|t| world::HostSpec {
            replay: Some(t),
            ..world::HostSpec::default()
        }),
        trace_dir: Some(again.clone()),
        ..world::Options::default()
    };
    eprintln!(
        "wio: running the golden run {} again with this build",
        dir.display()
    );
    let run = match (&g.scenario, &g.from) {
        (Some(p), _) => scenario_with_args(p, &g.node_args)
            .and_then(|s| world::run(&s, g.seed.unwrap_or(0), &opts)),
        (None, Some(f)) => world::snapshot::LoadedWorld::load(f)
            .and_then(|l| world::restore(&l, g.seed, &opts, None))
            .and_then(|w| {
                w.ok_or(WioError::NoResult {
                    what: "the golden run",
                })
            }),
        (None, None) => Err(WioError::ArtifactFormat {
            what: "golden run",
            path,
            reason: "names neither a scenario nor a snapshot".into(),
        }),
    };
    // The scratch traces go whatever happened.
    let result = run.and_then(|summary| Ok((summary, diff::load(dir)?, diff::load(&again)?)));
    let _ = std::fs::remove_dir_all(&again);
    let (summary, golden, this) = result?;
    let d = diff::diff(&golden, &this, &diff::Ignore::default(), 3);
    print!("{}", d.human());
    if d.equal {
        eprintln!(
            "wio: golden run {}: the same run (world trace {})",
            dir.display(),
            &summary.world_trace_hash[..16.min(summary.world_trace_hash.len())]
        );
        Ok(0)
    } else {
        eprintln!("wio: golden run {}: this build runs it differently (above: where each trace first parts)", dir.display());
        Ok(1)
    }
}

/// The scenario at `path` with `--node-args` values added.
fn scenario_with_args(
    path: &std::path::Path,
    node_args: &[String],
) -> Result<world::scenario::Scenario, WioError> {
    let mut s = world::scenario::Scenario::read(path)?;
    for arg in node_args {
        s.add_node_args(arg)?;
    }
    Ok(s)
}
