//! `wio bench --snapshots`: snapshots of the small riscv64 guest taken during its
//! workload, their capture and write time and size, branch creation latency, and
//! branches per minute for three kinds of branch (idle-heavy, network, compute-heavy).

use serde_json::json;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;
use wio_clock::VirtualTime;
use wio_machines::arch::riscv64::DEFAULT_CMDLINE;
use wio_machines::builder;
use wio_machines::error::{BenchFailure, Result, WioError};
use wio_machines::machine::{driver, Arch, LoadedSnapshot, RunConfig, Stop};

/// Snapshot figures, printed and returned as JSON.
pub fn figures() -> Result<serde_json::Value> {
    let dir = crate::scratch_dir("wio-bench", "bench folder")?;
    let jobs = std::thread::available_parallelism().map_or(1, |n| n.get());
    eprintln!("bench: snapshots of the small riscv64 guest ({jobs} worker threads)…");
    let f = measure(&dir, jobs, 60, 200);
    let _ = std::fs::remove_dir_all(&dir);
    let f = f?;
    let pct = |p: f64| f.restore_us[((f.restore_us.len() - 1) as f64 * p) as usize];
    println!(
        "snapshot capture           {:>12.1} ms ({} MiB guest; state and memory scan)",
        f.capture_ms, f.mem_mib
    );
    println!(
        "snapshot write             {:>12.1} ms, {:.1} MiB file (non-zero pages, checksummed, fsynced)",
        f.write_ms,
        f.file_bytes as f64 / (1 << 20) as f64
    );
    println!(
        "snapshot load              {:>12.1} ms (read, verify, memfd)",
        f.load_ms
    );
    println!(
        "branch creation            {:>12.0} us median, {:.0} us p90 ({} MiB guest, goal <= 1000 us)",
        pct(0.5),
        pct(0.9),
        f.mem_mib
    );
    let mut kinds = Vec::new();
    for (i, k) in f.branches.iter().enumerate() {
        println!(
            "branches per minute        {:>12.0} on {jobs} threads: {}, {} instructions and {:.3} virtual s each{}",
            k.per_minute,
            k.name,
            k.instructions,
            k.virtual_ns as f64 / 1e9,
            if i == 0 { " (goal >= 2000)" } else { "" }
        );
        let [restore, run, end] = k.cost_us;
        let total = restore + run + end;
        println!(
            "  one branch, by part      {:>12.0} us: restore {restore:.0} us, run {run:.0} us ({:.0} MIPS), end {end:.0} us (summary, trace hash, memory freed)",
            total,
            k.instructions as f64 / run.max(1.0),
        );
        kinds.push(json!({
            "branch": k.name, "per_minute": k.per_minute, "instructions": k.instructions,
            "virtual_ns": k.virtual_ns,
            "cost_us": { "restore": restore, "run": run, "end": end },
        }));
    }
    Ok(json!({
        "mem_mib": f.mem_mib, "capture_ms": f.capture_ms, "write_ms": f.write_ms,
        "file_bytes": f.file_bytes, "load_ms": f.load_ms,
        "restore_us_median": pct(0.5), "restore_us_p90": pct(0.9),
        "branches": kinds, "threads": jobs,
    }))
}

/// Figures of `wio bench --snapshots` (see [`bench_snapshots`]).
pub struct SnapshotFigures {
    /// Guest RAM in MiB.
    pub mem_mib: u64,
    /// Capturing the machine state and scanning memory, ms (median of the snapshots).
    pub capture_ms: f64,
    /// Writing the file (encode, checksum, write, fsync, rename), ms (median).
    pub write_ms: f64,
    /// File size in bytes (median).
    pub file_bytes: u64,
    /// Reading, checking and preparing a snapshot for restores, ms.
    pub load_ms: f64,
    /// Branch creation (restore from a loaded snapshot) latencies in µs, sorted.
    pub restore_us: Vec<f64>,
    /// Per branch kind.
    pub branches: Vec<BranchKind>,
}

/// Throughput and cost of one kind of branch ([`BENCH_BRANCHES`]).
pub struct BranchKind {
    /// What the branch does.
    pub name: &'static str,
    /// Branches per minute on all worker threads.
    pub per_minute: f64,
    /// Guest instructions per branch.
    pub instructions: u64,
    /// Virtual ns per branch.
    pub virtual_ns: u64,
    /// Mean wall time per branch of each part, µs: restore, run, end (see
    /// `machine::BranchCost`).
    pub cost_us: [f64; 3],
}

/// The branches `wio bench --snapshots` times: (name, snapshot at, branch until).
/// The guest boots with `wio.idle=1`, which adds a one-second sleep to its workload.
pub const BENCH_BRANCHES: [(&str, &str, &str); 3] = [
    (
        "idle-heavy (sleep 1 s)",
        "workload: idle start",
        "workload: idle done",
    ),
    (
        "network (3 pings, 1 s apart)",
        "workload: idle done",
        "workload: net:",
    ),
    (
        "compute-heavy (busy loops)",
        "workload: date",
        "workload: worker B step 1",
    ),
];

/// Branches per minute from `l` to the console line `until` on `jobs` threads
/// (`branches` in all), with each branch's mean instructions, virtual ns, and restore, run
/// and end costs in µs.
fn throughput(
    l: &dyn LoadedSnapshot,
    until: &str,
    jobs: usize,
    branches: usize,
) -> Result<(f64, u64, u64, [f64; 3])> {
    use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
    let next = AtomicUsize::new(0);
    let cancel = AtomicBool::new(false);
    let instructions = AtomicU64::new(0);
    let virtual_ns = AtomicU64::new(0);
    let parts_us = [AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0)];
    let failure: std::sync::Mutex<Option<WioError>> = std::sync::Mutex::new(None);
    let t = Instant::now();
    // As `wio explore` runs them: the first branch alone, and the snapshot learns its code;
    // the others start warm (see explore's `warm` module).
    let taught = AtomicBool::new(false);
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= branches {
                    return;
                }
                while i > 0 && !taught.load(Ordering::Acquire) && !cancel.load(Ordering::Relaxed) {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
                let b = driver::BranchRun {
                    until: Some(until),
                    watch: &[],
                    limit_ns: 0,
                    sched_noise: None,
                };
                let ran = driver::run_branch_as(l, 1000 + i as u64, &b, &cancel, i == 0);
                if i == 0 {
                    taught.store(true, Ordering::Release);
                }
                match ran {
                    Ok(Some(end)) if end.stopped_at_until => {
                        let n = end.summary.instructions.unwrap_or(0)
                            - l.meta().instructions.unwrap_or(0);
                        instructions.fetch_add(n, Ordering::Relaxed);
                        virtual_ns.fetch_add(
                            end.summary.virtual_ns - l.meta().virtual_ns,
                            Ordering::Relaxed,
                        );
                        let c = end.cost;
                        for (sum, part) in parts_us.iter().zip([c.restore, c.run, c.end]) {
                            sum.fetch_add(part.as_micros() as u64, Ordering::Relaxed);
                        }
                    }
                    Ok(other) => {
                        let why = other.map_or("cancelled".into(), |e| {
                            format!("{:?} {:?}", e.summary.exit_status, e.summary.error)
                        });
                        if let Ok(mut f) = failure.lock() {
                            f.get_or_insert(
                                BenchFailure::BranchMissed {
                                    branch: "a bench branch".into(),
                                    what: format!("{until:?}: {why}"),
                                }
                                .into(),
                            );
                        }
                        return;
                    }
                    Err(e) => {
                        if let Ok(mut f) = failure.lock() {
                            f.get_or_insert(e);
                        }
                        return;
                    }
                }
            });
        }
    });
    if let Some(e) = failure.into_inner().ok().flatten() {
        return Err(e);
    }
    let secs = t.elapsed().as_secs_f64();
    let n = branches.max(1) as u64;
    Ok((
        branches as f64 / secs * 60.0,
        instructions.load(Ordering::Relaxed) / n,
        virtual_ns.load(Ordering::Relaxed) / n,
        parts_us.map(|p| p.load(Ordering::Relaxed) as f64 / n as f64),
    ))
}

/// Measures snapshots on the small guest: snapshots taken during its workload (see
/// [`BENCH_BRANCHES`]), their capture and write time and size, branch creation latency
/// (`restores` restores), and branches per minute on `jobs` threads (`branches` each).
fn measure(
    dir: &std::path::Path,
    jobs: usize,
    branches: usize,
    restores: usize,
) -> Result<SnapshotFigures> {
    let wall = Instant::now();
    let mut cfg = RunConfig {
        guest: Some("small".into()),
        cmdline: Some(format!("{DEFAULT_CMDLINE} wio.idle=1")),
        epoch_unix: 1_767_225_600,
        watchdog_ms: 0,
        ..RunConfig::with_seed(1)
    };
    let mut m = builder::boot(Arch::Riscv64, &cfg, wall)?;
    m.console().watch = BENCH_BRANCHES.iter().map(|b| b.1.to_string()).collect();
    let mut capture = Vec::new();
    let mut write = Vec::new();
    let mut sizes = Vec::new();
    let mut paths: BTreeMap<String, PathBuf> = BTreeMap::new();
    while paths.len() < BENCH_BRANCHES.len() {
        if let Stop::End(outcome) = m.run_until(VirtualTime::MAX) {
            return Err(BenchFailure::EndedEarly {
                guest: "bench guest",
                needed: "its snapshot points (is the initramfs older than wio.idle?)".into(),
                how: format!("{outcome:?}"),
            }
            .into());
        }
        while let Some(hit) = m.console().watch_hits.pop() {
            let t = Instant::now();
            let snap = m.snapshot(hit.clone())?;
            capture.push(t.elapsed().as_secs_f64() * 1e3);
            let path = dir.join(format!("bench-{}.snap", paths.len()));
            let t = Instant::now();
            sizes.push(snap.write(&path)?);
            write.push(t.elapsed().as_secs_f64() * 1e3);
            paths.insert(hit, path);
        }
    }
    drop(m);
    let mut loaded = Vec::new();
    let mut load_ms = 0.0;
    for (_, from, _) in BENCH_BRANCHES {
        let t = Instant::now();
        loaded.push(builder::load(&paths[from], &cfg)?);
        load_ms = t.elapsed().as_secs_f64() * 1e3;
    }

    cfg.from = Some(paths[BENCH_BRANCHES[0].1].clone());
    let mut restore_us = Vec::new();
    for i in 0..restores {
        cfg.seed = i as u64;
        let t = Instant::now();
        let m = loaded[0].restore(&cfg, wall)?;
        restore_us.push(t.elapsed().as_secs_f64() * 1e6);
        drop(m);
    }
    restore_us.sort_by(f64::total_cmp);

    let mut results = Vec::new();
    for (l, (name, _, until)) in loaded.iter().zip(BENCH_BRANCHES) {
        // As `wio explore` does: later branches get the pages the first ones wrote at once.
        l.populate_written();
        let (per_minute, instructions, virtual_ns, cost_us) =
            throughput(l.as_ref(), until, jobs, branches)?;
        results.push(BranchKind {
            name,
            per_minute,
            instructions,
            virtual_ns,
            cost_us,
        });
    }
    for p in paths.values() {
        let _ = std::fs::remove_file(p);
    }
    capture.sort_by(f64::total_cmp);
    write.sort_by(f64::total_cmp);
    sizes.sort_unstable();
    Ok(SnapshotFigures {
        mem_mib: cfg.mem_mib,
        capture_ms: capture[capture.len() / 2],
        write_ms: write[write.len() / 2],
        file_bytes: sizes[sizes.len() / 2],
        load_ms,
        restore_us,
        branches: results,
    })
}
