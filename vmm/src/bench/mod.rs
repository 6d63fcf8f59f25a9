//! `wio bench`: figures for the run loop, measured side by side in one process.
//!
//! - Exit overhead: the test guest performs N port writes (`bench=N`); the
//!   full run loop (devices, clock, trace) and a bare KVM_RUN loop run the same
//!   guest, alternating, and the ratio of their exit rates is the VMM's cost.
//! - Idle speed: the test guest sleeps S virtual seconds with HLT (`idle=S`);
//!   virtual seconds per wall second shows what clock jumps buy.

mod debugger;
mod outage;
mod payments;
mod race;
mod search;
mod sim;
mod snapshots;

use crate::cli::BenchArgs;
use serde_json::json;
use std::time::{Duration, Instant};
use wio_machines::arch::x86_64::boot::{self, BootSpec, KernelImage};
use wio_machines::arch::x86_64::kvm::{KvmEngine, KvmOptions};
use wio_machines::arch::x86_64::testguest::X86_64_TEST_GUEST;
use wio_machines::devices::legacy::debug_exit::DEBUG_EXIT_PORT;
use wio_machines::error::{BenchError, Result, WioError};
use wio_machines::machine::{driver, Arch, RunConfig};
use wio_machines::memory;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Wall seconds of one boot of Debian's riscv64 kernel (seed 3) to its workload's end,
/// quiet, with timing noise `noise` and user-mode code coverage counted or not (the race
/// and search figures compare such boots).
fn debian_boot_secs(
    noise: wio_machines::machine::noise::SchedNoise,
    coverage: bool,
) -> Result<f64> {
    let cfg = RunConfig {
        guest: Some("debian".into()),
        epoch_unix: 1_767_225_600,
        sched_noise: noise,
        quiet: true,
        ..RunConfig::with_seed(3)
    };
    let wall = Instant::now();
    let mut m = wio_machines::builder::boot(Arch::Riscv64, &cfg, wall)?;
    if coverage {
        m.observe(&[wio_machines::machine::novelty::Signal::Coverage]);
    }
    driver::run(m, &cfg, wall).outcome?;
    Ok(wall.elapsed().as_secs_f64())
}

fn config(cmdline: String) -> RunConfig {
    RunConfig {
        cmdline: Some(cmdline),
        mem_mib: 64,
        watchdog_ms: 60_000,
        ..RunConfig::with_seed(1)
    }
}

/// Full run loop: (exits, wall seconds).
fn full_run(cmdline: &str) -> Result<(u64, f64, u64)> {
    let start = Instant::now();
    let cfg = config(cmdline.to_string());
    let r = driver::run(
        wio_machines::builder::boot(Arch::X86_64, &cfg, start)?,
        &cfg,
        start,
    );
    let wall = start.elapsed().as_secs_f64();
    r.outcome?;
    Ok((r.summary.exits.values().sum(), wall, r.summary.virtual_ns))
}

/// Bare KVM_RUN loop on the same guest: (exits, wall seconds).
fn bare_run(cmdline: &str) -> Result<(u64, f64)> {
    let mem = memory::allocate(0, 64 << 20)?;
    let kernel = KernelImage {
        name: "built-in test guest".into(),
        bytes: X86_64_TEST_GUEST.to_vec(),
    };
    let info = boot::load(
        &mem,
        &BootSpec {
            kernel: &kernel,
            initrd: None,
            cmdline,
            rng_seed: [0; 32],
            virtio: &[],
            vmgenid: [0; wio_machines::devices::vmgenid::ID_LEN],
        },
    )?;
    let mut engine = KvmEngine::new(
        &mem,
        info.entry,
        KvmOptions {
            watchdog: Duration::from_secs(60),
        },
    )?;
    let start = Instant::now();
    let exits = engine.run_bare_until_port(DEBUG_EXIT_PORT)?;
    Ok((exits, start.elapsed().as_secs_f64()))
}

/// MIPS of the RISC-V interpreter on a compute loop (integer ALU, loads,
/// stores and branches in S-mode with Sv39 off), with no devices involved.
fn riscv_compute_mips(instructions: u64) -> f64 {
    use wio_riscv::{Hart, NoDevices, Ram};
    // loop: addi t0,t0,1; xor t1,t1,t0; sd t1,0(sp); ld t2,0(sp); add t3,t3,t2; slli t4,t0,3;
    //       srli t4,t4,1; bne t0,a0,loop   (a0 = a huge bound, so it never exits)
    let program: [u32; 8] = [
        0x0012_8293,
        0x0053_4333,
        0x0061_3023,
        0x0001_3383,
        0x007e_0e33,
        0x0032_9e93,
        0x001e_de93,
        0xfea2_92e3,
    ];
    let base = 0x8000_0000;
    let mut ram = Ram::new(base, 1 << 20);
    let bytes: Vec<u8> = program.iter().flat_map(|w| w.to_le_bytes()).collect();
    ram.load(base, &bytes);
    let mut hart = Hart::new(ram, base, 100);
    hart.enter_supervisor(base, u64::MAX, 0);
    hart.x[2] = base + 0x8_0000;
    let start = Instant::now();
    hart.run(&mut NoDevices, instructions);
    let secs = start.elapsed().as_secs_f64();
    hart.instret() as f64 / secs / 1e6
}

/// Scheduler events per wall second: push events at seeded times, then pop them all in order.
fn scheduler_events_per_s(n: u64) -> f64 {
    let mut rng = wio_scheduler::RunSeed(1).stream("bench");
    let mut q = wio_scheduler::EventQueue::new();
    let start = Instant::now();
    let mut now = 0u64;
    let mut popped = 0u64;
    for i in 0..n {
        // Keep a realistic few hundred events pending: push one, pop what is due.
        if q.push(now + rng.below(1_000_000), i).is_err() {
            break;
        }
        now += 2_000;
        while q.pop_due(now).is_some() {
            popped += 1;
        }
    }
    while q.pop_next().is_some() {
        popped += 1;
    }
    popped as f64 / start.elapsed().as_secs_f64()
}

/// Runs the benchmarks and prints the figures.
pub fn run(args: &BenchArgs) -> Result<()> {
    if args.throughput && args.throughput_branches == 0 {
        return Err(BenchError::ThroughputBranches.into());
    }
    println!(
        "scheduler                  {:>12.0} events/s (push + pop in time order)",
        scheduler_events_per_s(2_000_000)
    );
    let mips: Vec<f64> = (0..args.rounds)
        .map(|_| riscv_compute_mips(200_000_000))
        .collect();
    println!(
        "riscv64 interpreter        {:>12.1} MIPS on a compute loop (goal >= 300)",
        median(mips.clone())
    );
    let snapshot_doc = if args.snapshots {
        Some(snapshots::figures()?)
    } else {
        None
    };
    let race_doc = if args.race {
        Some(race::figures(args.race_branches, args.rounds)?)
    } else {
        None
    };
    let sim_doc = if args.sim {
        Some(sim::figures(args.sim_day_secs)?)
    } else {
        None
    };
    let payments_doc = if args.payments && args.throughput {
        let loop_mips = median(mips.clone());
        Some(payments::throughput(args.throughput_branches, loop_mips)?)
    } else if args.payments {
        Some(payments::figures(args.payments_seeds, args.payments_roots)?)
    } else {
        None
    };
    let outage_doc = if args.outage {
        Some(outage::figures()?)
    } else {
        None
    };
    let debugger_doc = if args.debugger {
        Some(debugger::figures(args.rounds)?)
    } else {
        None
    };
    let search_doc = if args.search {
        let jobs = std::thread::available_parallelism().map_or(1, usize::from);
        Some(search::figures(&search::SearchBench {
            forms: &args.search_forms,
            depths: &args.search_depths,
            roots: args.search_roots,
            budget: args.search_budget,
            flat: !args.search_guided_only,
            jobs,
            rounds: args.rounds,
        })?)
    } else {
        None
    };
    if args.riscv_only {
        if let Some(path) = &args.json {
            write_json(
                path,
                &json!({ "riscv_compute_mips": median(mips), "snapshots": snapshot_doc, "race": race_doc, "sim": sim_doc, "payments": payments_doc, "outage": outage_doc, "debugger": debugger_doc, "search": search_doc }),
            )?;
        }
        return Ok(());
    }
    if args.rounds == 0 || args.exits == 0 {
        return Err(BenchError::RoundsExits.into());
    }
    let cmd = format!("bench={}", args.exits);
    let mut full_rates = Vec::new();
    let mut bare_rates = Vec::new();
    for round in 1..=args.rounds {
        eprintln!(
            "bench: round {round}/{}: {} port-I/O exits, full loop then bare loop…",
            args.rounds, args.exits
        );
        let (fe, fw, _) = full_run(&cmd)?;
        let (be, bw) = bare_run(&cmd)?;
        full_rates.push(fe as f64 / fw);
        bare_rates.push(be as f64 / bw);
    }
    let full = median(full_rates);
    let bare = median(bare_rates);
    let ratio = full / bare;
    println!("exit rate, full run loop   {:>12.0} exits/s", full);
    println!("exit rate, bare KVM_RUN    {:>12.0} exits/s", bare);
    println!(
        "ratio full/bare            {:>12.3}  (VMM overhead per exit {:.1}%, goal < 10%)",
        ratio,
        (1.0 / ratio - 1.0) * 100.0
    );

    eprintln!(
        "bench: idle guest sleeping {} virtual seconds…",
        args.idle_secs
    );
    let (_, wall, virt_ns) = full_run(&format!("idle={}", args.idle_secs))?;
    let speed = virt_ns as f64 / 1e9 / wall;
    println!(
        "idle speed                 {:>12.0} virtual s per wall s (goal >= 1000)",
        speed
    );
    if let Some(path) = &args.json {
        let doc = json!({
            "full_exits_per_s": full, "bare_exits_per_s": bare, "ratio": ratio,
            "idle_virtual_s_per_wall_s": speed, "exits": args.exits, "idle_secs": args.idle_secs, "rounds": args.rounds,
            "riscv_compute_mips": median(mips), "snapshots": snapshot_doc, "race": race_doc, "sim": sim_doc,
            "payments": payments_doc, "outage": outage_doc, "debugger": debugger_doc, "search": search_doc,
        });
        write_json(path, &doc)?;
    }
    Ok(())
}

fn write_json(path: &std::path::Path, doc: &serde_json::Value) -> Result<()> {
    std::fs::write(path, doc.to_string()).map_err(|source| WioError::Output {
        what: "bench json",
        path: path.to_path_buf(),
        source,
    })
}
