//! `wio`: a deterministic hypervisor. Every source of nondeterminism a guest
//! can see (time, entropy, interrupt timing, I/O completion) derives from one
//! 64-bit seed, so every run is reproducible with `wio run --seed N`.

use clap::Parser;
use cli::{Cli, Command, ExploreArgs, ReportCommand, RunArgs, SnapshotCommand};
use error::{exit_code, WioError};
use machine::{Arch, RunConfig};
use std::time::Instant;
use wio_machines::{builder, error, faults, machine, snapshot, trace};
use wio_search::{explore, shrink, verify};
use wio_world as world;

mod bench;
mod cli;
mod host_link;
mod image;
mod rerun;
mod sim;
mod snapshot_info;

/// `wio run`: checks the flags, builds the run's configuration, boots (or restores, or
/// replays a path, or serves gdb) and runs the machine to its end.
fn run_command(args: &RunArgs) -> Result<i32, WioError> {
    let max_virtual_ns = check_run_flags(args)?;
    let arch = run_arch(args)?;
    let mut cfg = run_config(args, max_virtual_ns)?;
    check_run_arch(args, arch)?;
    if let Some(reference) = &args.image {
        image::configure_run(&mut cfg, reference, &args.image_args)?;
    }
    host_link::for_machine(args, arch, &mut cfg)?;
    let wall = Instant::now();
    let result = match &args.gdb {
        Some(addr) => {
            if !args.snapshot_at.is_empty() || args.pcap.is_some() {
                return Err(WioError::Usage(
                    "--gdb runs without --snapshot-at and --pcap (a debugger moves the run back and forth); drop them".into(),
                ));
            }
            builder::debug(arch, &cfg, wall, addr)?
        }
        None => match (&args.path, &args.from) {
            (Some(text), Some(from)) => run_path(text, from, &cfg, args.sched_noise, wall)?,
            (None, Some(from)) if args.learn_from.is_some() => run_learned(
                args.learn_from.unwrap_or_default(),
                from,
                &cfg,
                args.sched_noise,
                wall,
            )?,
            _ => {
                let machine = builder::start(arch, &cfg, wall)?;
                wio_machines::sandbox::enter()?;
                machine::driver::run(machine, &cfg, wall)
            }
        },
    };
    run_outcome(args, result)
}

/// What `wio run` prints and writes at its end (the summary, `--summary-json`), and its
/// exit code: the guest's status, clamped to the guest range.
fn run_outcome(args: &RunArgs, result: machine::RunResult) -> Result<i32, WioError> {
    if !args.no_summary {
        eprint!("{}", result.summary.human());
    }
    if let Some(path) = &args.summary_json {
        wio_machines::summary::write_json(&result.summary, path, "summary")?;
    }
    if let Some(path) = &args.timeline {
        let svg = wio_machines::timeline::svg(&result.summary);
        std::fs::write(path, svg).map_err(|source| WioError::Output {
            what: "timeline",
            path: path.clone(),
            source,
        })?;
        eprintln!("wio: timeline drawn in {}", path.display());
    }
    match result.outcome {
        Ok(status) => {
            if status > error::MAX_GUEST_STATUS {
                eprintln!(
                    "wio: guest status {status} is above {}; exiting with {}",
                    error::MAX_GUEST_STATUS,
                    error::MAX_GUEST_STATUS
                );
            }
            Ok(status.min(error::MAX_GUEST_STATUS) as i32)
        }
        Err(e) => Err(e),
    }
}

/// `wio run`'s flags that are wrong whatever the guest: returns the virtual-time limit in ns.
fn check_run_flags(args: &RunArgs) -> Result<u64, WioError> {
    let max_virtual_ns = args
        .max_virtual_secs
        .checked_mul(1_000_000_000)
        .ok_or_else(|| WioError::Usage("--max-virtual-secs is too large".into()))?;
    if args.net_loss_ppm > 1_000_000 || args.net_dup_ppm > 1_000_000 {
        return Err(WioError::Usage(
            "--net-loss-ppm and --net-dup-ppm are parts per million (0 to 1000000)".into(),
        ));
    }
    if args.watchdog_ms == 0 {
        return Err(WioError::Usage("--watchdog-ms must be at least 1".into()));
    }
    if args.persist.is_some() && args.disk.is_none() && args.from.is_none() {
        return Err(WioError::Usage(
            "--persist writes the disk at the end of the run; it needs a DISK.img".into(),
        ));
    }
    Ok(max_virtual_ns)
}

/// The architecture of the run: the snapshot's with `--from` (a different `--arch` is an
/// error), else `--arch`, else x86-64.
fn run_arch(args: &RunArgs) -> Result<Arch, WioError> {
    Ok(match (&args.from, args.arch) {
        (Some(from), arch) => {
            let snap_arch = builder::snapshot_arch(from)?;
            if arch.is_some_and(|a| a != snap_arch) {
                return Err(WioError::Usage(format!(
                    "{} is a snapshot of a {} guest; drop --arch or pass --arch {}",
                    from.display(),
                    snap_arch.name(),
                    snap_arch.name()
                )));
            }
            snap_arch
        }
        // An imported image is a riscv64 machine.
        (None, None) if args.image.is_some() => Arch::Riscv64,
        (None, arch) => arch.unwrap_or(Arch::X86_64),
    })
}

/// The run's configuration from its flags (reading the fault plan or profile they name).
fn run_config(args: &RunArgs, max_virtual_ns: u64) -> Result<RunConfig, WioError> {
    let epoch_unix = args.epoch;
    let plan = snapshot::plan::SnapshotPlan {
        at: args.snapshot_at.clone(),
        out: args.snapshot_out.clone(),
    };
    let until = args.until.clone();
    Ok(RunConfig {
        until,
        net_port: false,
        composer: false,
        mac: None,
        capture_console: false,
        sched_noise: args.sched_noise.unwrap_or_default(),
        sched_noise_given: args.sched_noise.is_some(),
        stop_on_violation: args.stop_on_violation,
        judge_promises: true,
        clock_drift_ppm: args.clock_drift_ppm,
        faults: match (&args.fault_plan, &args.faults) {
            (Some(path), _) => faults::FaultSource::Plan(faults::plan::FaultPlan::read(path)?),
            (None, Some(profile)) => {
                faults::FaultSource::Profile(faults::profile::Profile::from_arg(profile)?)
            }
            (None, None) => faults::FaultSource::None,
        },
        fault_plan_out: args.fault_plan_out.clone(),
        host: None,
        seed: args.seed.unwrap_or(0),
        seed_given: args.seed.is_some(),
        from: args.from.clone(),
        snapshots: plan,
        kernel: args.kernel.clone(),
        guest: args.guest.clone(),
        initrd: args.initrd.clone(),
        firmware: args.firmware.clone(),
        ecc: args.ecc,
        isa: run_isa(args)?,
        cmdline: args.cmdline.clone(),
        append: args.append.clone(),
        mem_mib: args.mem,
        epoch_unix,
        trace: args.trace.clone(),
        max_virtual_ns,
        watchdog_ms: args.watchdog_ms,
        quiet: args.quiet,
        disk: args.disk.clone(),
        persist: args.persist.clone(),
        pcap: args.pcap.clone(),
        link: wio_virtio_devices::Link {
            latency_ns: args.net_latency_us.saturating_mul(1000),
            jitter_ns: args.net_jitter_us.saturating_mul(1000),
            loss_ppm: args.net_loss_ppm,
            duplicate_ppm: args.net_dup_ppm,
        },
    })
}

/// The hart's ISA from `--isa` and `--vlen` (alone, rv64gcv at that VLEN).
fn run_isa(args: &RunArgs) -> Result<wio_riscv::Isa, WioError> {
    let Some(vlen) = args.vlen else {
        return Ok(args.isa.unwrap_or_default());
    };
    let isa = match args.isa {
        Some(isa) if isa.vlen().is_none() => {
            return Err(WioError::Usage(format!(
                "--vlen sets the vector length, but --isa {isa} has no vector extension: add v \
                 (e.g. --isa rv64gcv, or rv64gcv_zba_zbb_zbs)"
            )))
        }
        Some(isa) => isa,
        None => wio_riscv::Isa::RV64GC,
    };
    isa.with_vector(vlen)
        .map_err(|e| WioError::Usage(format!("--vlen {vlen}: {e}")))
}

/// `wio run`'s flags that only one architecture takes, and the two that exclude each other.
fn check_run_arch(args: &RunArgs, arch: Arch) -> Result<(), WioError> {
    if args.ecc && arch != Arch::Riscv64 {
        return Err(WioError::Usage(
            "--ecc models ECC memory on riscv64 machines; use it with --arch riscv64".into(),
        ));
    }
    if (args.isa.is_some() || args.vlen.is_some()) && arch != Arch::Riscv64 {
        return Err(WioError::Usage(
            "--isa and --vlen choose a riscv64 hart's extensions; use them with --arch riscv64"
                .into(),
        ));
    }
    if args.firmware.is_some() && arch != Arch::Riscv64 {
        return Err(WioError::Usage(
            "--firmware starts M-mode firmware on a riscv64 machine; use it with --arch riscv64"
                .into(),
        ));
    }
    if args.image.is_some()
        && (arch != Arch::Riscv64 || args.guest.as_deref().is_some_and(|g| g != "small"))
    {
        return Err(WioError::Usage(
            "--image runs on the small riscv64 kernel; drop --arch and --guest (or pass --arch riscv64 --guest small)"
                .into(),
        ));
    }
    if args.guest.is_some() && args.kernel.is_some() {
        return Err(WioError::Usage(
            "--guest and --kernel both choose the guest; pass one of them".into(),
        ));
    }
    Ok(())
}

/// `wio run --from ROOT --path P`: the path's steps through their moments (quiet, as the
/// exploration ran them), then its last seed to the end with the run's outputs.
fn run_path(
    text: &str,
    from: &std::path::Path,
    cfg: &RunConfig,
    sched_noise: Option<machine::noise::SchedNoise>,
    wall: Instant,
) -> Result<machine::RunResult, WioError> {
    let path = explore::path::BranchPath::parse(text)?;
    let root = builder::load(from, cfg)?;
    wio_machines::sandbox::enter()?;
    let b = machine::driver::BranchRun {
        until: cfg.until.as_deref(),
        watch: &[],
        limit_ns: cfg.max_virtual_ns,
        sched_noise,
    };
    let cancel = std::sync::atomic::AtomicBool::new(false);
    let moment = path.last_moment(root.as_ref(), &b, &cancel)?;
    if moment.is_none() && !path.steps.is_empty() {
        return Err(WioError::Interrupted(0));
    }
    let cfg = RunConfig {
        seed: path.seed,
        seed_given: true,
        ..cfg.clone()
    };
    let l = moment.as_deref().unwrap_or(root.as_ref());
    let machine = l.restore(&cfg, wall)?;
    Ok(machine::driver::run(machine, &cfg, wall))
}

/// `wio run --from SNAP --learn-from TEACHER`: the branch of seed TEACHER first (quiet, as
/// the exploration ran it) so the snapshot learns its code, then the run's own seed from
/// the snapshot, starting with that code, with the run's outputs.
fn run_learned(
    teacher: u64,
    from: &std::path::Path,
    cfg: &RunConfig,
    sched_noise: Option<machine::noise::SchedNoise>,
    wall: Instant,
) -> Result<machine::RunResult, WioError> {
    let l = builder::load(from, cfg)?;
    wio_machines::sandbox::enter()?;
    let cancel = std::sync::atomic::AtomicBool::new(false);
    let b = machine::driver::BranchRun {
        until: cfg.until.as_deref(),
        watch: &[],
        limit_ns: cfg.max_virtual_ns,
        sched_noise,
    };
    let taught = machine::driver::run_branch_as(l.as_ref(), teacher, &b, &cancel, true)?;
    if taught.is_none() {
        return Err(WioError::Interrupted(0));
    }
    if !l.learned() {
        return Err(WioError::Usage(format!(
            "--learn-from: {} keeps no code to learn (riscv64 machine snapshots do); drop it",
            from.display()
        )));
    }
    let machine = l.restore(cfg, wall)?;
    Ok(machine::driver::run(machine, cfg, wall))
}

/// Exit code of an exploration: 0 when every seed and every promise passed, 1 when some
/// failed, 130 when interrupted (the report still has the finished seeds).
fn exit_for(r: &explore::Report) -> i32 {
    if !r.complete {
        130
    } else if r.results.iter().any(|s| s.failed) || r.promise_failed() {
        1
    } else {
        0
    }
}

/// A scratch folder of this process (`NAME-PID` in the temporary folder), created; `what`
/// names it in the error. Its user removes it when done.
pub(crate) fn scratch_dir(name: &str, what: &'static str) -> Result<std::path::PathBuf, WioError> {
    let dir = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|source| WioError::Output {
        what,
        path: dir.clone(),
        source,
    })?;
    Ok(dir)
}

/// `--jobs`: the number given (at least 1), or the host's cores.
fn jobs_or_cores(jobs: Option<usize>) -> Result<usize, WioError> {
    match jobs {
        Some(0) => Err(WioError::Usage("--jobs must be at least 1".into())),
        Some(j) => Ok(j),
        None => Ok(std::thread::available_parallelism().map_or(1, |n| n.get())),
    }
}

fn shrink_command(args: &cli::ShrinkArgs) -> Result<i32, WioError> {
    // The failing branch: (snapshot, seed, path with the exploration's --until and limit).
    let (from, seed, path, sched_noise) = match (&args.report, &args.from) {
        (Some(r), _) => {
            let report = explore::read_report(r)?;
            let result = match args.seed {
                Some(s) => report.results.iter().find(|x| x.seed == s),
                None => Some(report.results.iter().find(|x| x.failed).ok_or_else(|| {
                    WioError::Usage(format!("{} has no failing seed to shrink", r.display()))
                })?),
            };
            let q = &report.question;
            if q.guided.is_some() && result.is_none() {
                return Err(WioError::Usage(format!(
                    "{} is a guided exploration's report and has no branch {}",
                    r.display(),
                    args.seed.unwrap_or(0)
                )));
            }
            let seed = args.seed.or(result.map(|x| x.seed)).unwrap_or(0);
            let path = match result.and_then(|x| x.path.as_ref()) {
                Some(p) => Some((
                    explore::path::BranchPath::parse(p)?,
                    explore::path::world_steps(q.until.clone(), q.max_virtual_ns, q.sched_noise),
                )),
                None => None,
            };
            (q.snapshot.clone(), seed, path, q.sched_noise)
        }
        (None, Some(f)) => match &args.path {
            Some(p) => {
                let path = explore::path::BranchPath::parse(p)?;
                let seed = path.seed;
                let steps = explore::path::world_steps(args.until.clone(), 0, args.sched_noise);
                (f.clone(), seed, Some((path, steps)), args.sched_noise)
            }
            None => (
                f.clone(),
                args.seed.ok_or_else(|| {
                    WioError::Usage("wio shrink --from needs --seed (or --path)".into())
                })?,
                None,
                args.sched_noise,
            ),
        },
        (None, None) => {
            return Err(WioError::Usage(
                "wio shrink needs --from WORLD.snap --seed S, or --report REPORT.json".into(),
            ))
        }
    };
    let jobs = jobs_or_cores(args.jobs)?;
    shrink::shrink(&shrink::Shrink {
        out: args
            .out
            .clone()
            .unwrap_or_else(|| std::path::PathBuf::from(format!("shrink-{seed}.json"))),
        from,
        seed,
        path,
        sched_noise,
        promise: args.promise.clone(),
        jobs,
        max_probes: args.max_probes,
    })
    .map(|_| 0)
}

fn explore_command(args: &ExploreArgs) -> Result<i32, WioError> {
    let started = std::time::Instant::now();
    let strategy = match (args.strategy, &args.seeds, args.budget) {
        (Some(cli::Strategy::Flat), None, _) => {
            return Err(WioError::Usage(
                "--strategy flat explores the seeds of --seeds A..B; give them (or --budget N for a guided exploration)".into(),
            ))
        }
        (Some(cli::Strategy::Guided), Some(_), _) | (Some(cli::Strategy::Guided), _, None) => {
            return Err(WioError::Usage(
                "--strategy guided runs --budget N branches of its own choosing; give --budget instead of --seeds".into(),
            ))
        }
        (Some(s), _, _) => s,
        (None, Some(_), _) => cli::Strategy::Flat,
        (None, None, _) => cli::Strategy::Guided,
    };
    let seeds = args.seeds.unwrap_or(explore::SeedRange {
        start: 0,
        end: args.budget.unwrap_or(1).max(1),
    });
    let shard = args.shard.unwrap_or((0, 1));
    let jobs = jobs_or_cores(args.jobs)?;
    let max_virtual_ns = args
        .max_virtual_secs
        .checked_mul(1_000_000_000)
        .ok_or_else(|| WioError::Usage("--max-virtual-secs is too large".into()))?;
    let x = explore::Explore {
        from: args.from.clone(),
        disk: args.disk.clone(),
        seeds,
        shard,
        jobs,
        until: args.until.clone(),
        matches: args.matches.clone(),
        fail_on: args.fail_on.clone(),
        max_virtual_ns,
        report: args.report.clone(),
        sched_noise: args.sched_noise,
    };
    let report = match (strategy, args.slurm) {
        (cli::Strategy::Guided, Some(_)) => {
            return Err(WioError::Usage(
                "--slurm spreads a flat exploration's seeds over a cluster; a guided exploration runs here (drop --slurm)".into(),
            ))
        }
        (cli::Strategy::Guided, None) => {
            let g = explore::guided::Guided {
                budget: args.budget.unwrap_or(0),
                search_seed: args.search_seed,
                signals: explore::guided::parse_signals(&args.signals)?,
                max_memory: args.max_memory.checked_mul(1 << 20).ok_or_else(|| {
                    WioError::Usage("--max-memory is too large".into())
                })?,
                stop_at_failure: false,
                checkpoint_secs: args.checkpoint_secs,
                resume: args.resume,
            };
            explore::guided::explore(&x, &g)?
        }
        (cli::Strategy::Flat, Some(tasks)) => {
            explore::slurm::explore(&x, tasks, jobs, &args.sbatch_arg)?
        }
        (cli::Strategy::Flat, None) => explore::explore(&x)?,
    };
    explore::print_table(&report);
    eprintln!("wio: report written to {}", args.report.display());
    if report.tree.is_some() {
        eprintln!(
            "wio: coverage growth plotted in {}",
            explore::growth_plot::path_for(&args.report).display()
        );
    }
    if let Some(path) = &args.html {
        // The exploration's own time (not the branches run again for the timelines).
        let run = wio_search::triage::RunInfo {
            host: wio_search::triage::host(),
            wall_s: started.elapsed().as_secs_f64(),
        };
        wio_search::triage::draw(&report, &args.report, path, None, Some(run), true)?;
        eprintln!("wio: triage page written to {}", path.display());
    }
    if let Some(path) = &args.junit {
        explore::write_junit(&report, path, args.html.as_deref())?;
        eprintln!("wio: JUnit XML written to {}", path.display());
    }
    Ok(match exit_for(&report) {
        1 if args.exit_zero => 0,
        code => code,
    })
}

/// Whether the subcommand runs guests under the sandbox (see `wio_machines::sandbox`), or
/// None when it runs no guest loop.
fn sandbox_policy(cli: &Cli) -> Option<wio_machines::sandbox::Policy> {
    use wio_machines::sandbox::{Off, Policy};
    let off = match &cli.command {
        Command::Run(a) if a.gdb.is_some() => Some(Off::Gdb),
        Command::Sim(a) if a.gdb.is_some() => Some(Off::Gdb),
        Command::Sim(a) if a.net.is_some() && a.replay.is_none() => Some(Off::HostLink),
        Command::Run(a) if a.net.is_some() => Some(Off::HostLink),
        Command::Explore(a) if a.slurm.is_some() => Some(Off::Slurm),
        Command::Run(_)
        | Command::Sim(_)
        | Command::Explore(_)
        | Command::Shrink(_)
        | Command::Verify(_) => None,
        _ => return None,
    };
    Some(match off {
        Some(why) => Policy::Off(why),
        None if cli.no_sandbox => Policy::Off(Off::Flag),
        None => Policy::On,
    })
}

/// The command line, parsed; a bad one ends wio here (exit 100, help and version 0).
fn parse_cli() -> Cli {
    match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if e.kind() == clap::error::ErrorKind::ValueValidation => {
            // One line, as wio's other errors: the flag, the value and what it expects.
            let text = e.to_string();
            let first = text.lines().next().unwrap_or_default();
            eprintln!(
                "wio: error: {}",
                first.strip_prefix("error: ").unwrap_or(first)
            );
            std::process::exit(exit_code::USAGE);
        }
        Err(e) => {
            let code = match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => 0,
                _ => exit_code::USAGE,
            };
            let _ = e.print();
            std::process::exit(code);
        }
    }
}

/// Installs the one Ctrl-C and SIGTERM handler.
fn install_interrupts(cli: &Cli) -> wio_machines::error::Result<()> {
    // Ctrl-C and SIGTERM, one handler for every subcommand (see wio_machines::interrupt): a run
    // ends at its next step with the trace and summary written, a world at its next
    // quantum with every node's summary, an exploration with the finished seeds' report;
    // the other subcommands end by the signal as without a handler.
    let ending = match &cli.command {
        Command::Run(_) | Command::Sim(_) | Command::Explore(_) => {
            wio_machines::interrupt::Ending::Polled
        }
        _ => wio_machines::interrupt::Ending::Default,
    };
    wio_machines::interrupt::install(ending).map_err(|source| WioError::Host {
        what: "installing the Ctrl-C and SIGTERM handler",
        source,
    })
}

/// Arms the sandbox for subcommands that run guests (it is entered after their setup),
/// with the test probe `WIO_SANDBOX_PROBE` names; a probe it does not know is a usage error.
fn arm_sandbox(cli: &Cli) -> wio_machines::error::Result<()> {
    if let Some(policy) = sandbox_policy(cli) {
        use wio_machines::sandbox::Probe;
        let probe = match std::env::var("WIO_SANDBOX_PROBE").as_deref() {
            Err(_) => Probe::None,
            Ok("socket") => Probe::Socket,
            Ok("fds") => Probe::Fds,
            Ok(other) => {
                return Err(WioError::Usage(format!(
                    "WIO_SANDBOX_PROBE={other}: the probes are \"socket\" and \"fds\" (test hooks); unset it"
                )))
            }
        };
        wio_machines::sandbox::arm(policy, probe);
    }
    Ok(())
}

/// Runs the subcommand; its exit code, or the error that ends it.
fn dispatch(cli: &Cli) -> wio_machines::error::Result<i32> {
    match &cli.command {
        Command::Run(args) => run_command(args),
        Command::Bench(args) => bench::run(args).map(|()| 0),
        Command::Explore(args) => explore_command(args),
        Command::Sim(args) => sim::sim_command(args),
        Command::Shrink(args) => shrink_command(args),
        Command::Diff(args) => sim::diff_command(args),
        Command::Verify(args) if args.golden.is_some() => {
            sim::verify_golden(args.golden.as_deref().unwrap_or(std::path::Path::new(".")))
        }
        Command::Verify(args) => jobs_or_cores(args.jobs).and_then(|jobs| {
            verify::verify(&verify::Verify {
                from: args.from.clone().unwrap_or_default(),
                reports: args.report.clone(),
                plans: args.plan.clone(),
                jobs,
            })
        }),
        Command::Image(cmd) => image::run(cmd),
        Command::Snapshot(SnapshotCommand::Info { file, json }) => {
            if world::snapshot::LoadedWorld::is_world(file) {
                snapshot_info::world(file, *json)
            } else {
                snapshot::Snapshot::read(file).and_then(|s| snapshot_info::machine(file, &s, *json))
            }
        }
        Command::Report(ReportCommand::Merge {
            reports,
            out,
            allow_partial,
        }) => explore::merge(reports, *allow_partial).and_then(|r| {
            explore::write_report(&r, out)?;
            explore::print_table(&r);
            eprintln!("wio: merged report written to {}", out.display());
            Ok(exit_for(&r))
        }),
        Command::Report(ReportCommand::Html {
            report,
            out,
            baseline,
            no_timelines,
        }) => report_html(report, out.as_deref(), baseline.as_deref(), !*no_timelines),
        Command::Completions { shell } => {
            use clap::CommandFactory;
            clap_complete::generate(*shell, &mut Cli::command(), "wio", &mut std::io::stdout());
            Ok(0)
        }
        Command::VerifyTrace { file } => std::fs::read_to_string(file)
            .map_err(|source| WioError::ArtifactIo {
                what: "trace",
                path: file.clone(),
                source,
            })
            .and_then(|text| {
                trace::verify(&text).map_err(|source| WioError::TraceInvalid {
                    path: file.clone(),
                    source,
                })
            })
            .map(|hash| {
                println!("{hash}");
                0
            }),
    }
}

/// `wio report html`: the triage page of a report.
fn report_html(
    report: &std::path::Path,
    out: Option<&std::path::Path>,
    baseline: Option<&std::path::Path>,
    timelines: bool,
) -> Result<i32, WioError> {
    let r = explore::read_report(report)?;
    let baseline = match baseline {
        Some(b) => {
            let old = explore::read_report(b)?;
            wio_search::triage::check_baseline(&r, report, &old, b)?;
            Some((b.to_path_buf(), old))
        }
        None => None,
    };
    let path = out
        .map(std::path::Path::to_path_buf)
        .unwrap_or_else(|| report.with_extension("html"));
    let bytes = wio_search::triage::draw(&r, report, &path, baseline, None, timelines)?;
    eprintln!(
        "wio: triage page written to {} ({} KiB; open it in a browser)",
        path.display(),
        bytes >> 10
    );
    Ok(0)
}

fn main() {
    // A file-size limit (ulimit -f) should make a write fail with EFBIG, which wio reports
    // and cleans up after (a snapshot's partial file is removed), not kill the process.
    use nix::sys::signal::{signal, SigHandler, Signal};
    // SAFETY: setting a signal's disposition to "ignore" has no handler to be unsafe in.
    let _ = unsafe { signal(Signal::SIGXFSZ, SigHandler::SigIgn) };
    let cli = parse_cli();
    // A test hook for ci/docs_commands.py: the command line parsed (every flag known, every
    // value of the right form), nothing run.
    if std::env::var_os("WIO_PARSE_ONLY").is_some() {
        std::process::exit(0);
    }
    let result = install_interrupts(&cli)
        .and_then(|()| arm_sandbox(&cli))
        .and_then(|()| dispatch(&cli));
    match result {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("wio: error: {e}");
            std::process::exit(e.exit_code());
        }
    }
}
