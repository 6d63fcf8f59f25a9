//! Building and running one x86-64 VM from a run configuration: memory,
//! kernel loading, the KVM engine, the platform, the trace and the summary.

use crate::arch::x86_64::boot::{self, BootSpec, KernelImage, RNG_SEED_LEN};
use crate::arch::x86_64::{cpuid, layout};
use crate::engine::host::HostVirt;
use crate::engine::kvm::{KvmEngine, KvmOptions, VcpuState};
use crate::engine::CpuEngine;
use crate::error::{Result, WioError, MAX_GUEST_STATUS};
use crate::memory;
use crate::memory::GuestMem;
use crate::platform::Platform;
use crate::platform::PlatformState;
use crate::runloop::{self, Console, Ending, RunLimits, RunStats};
use crate::snapshot::plan::SnapshotAt;
use crate::snapshot::{memory_runs, DiskMeta, Meta, Snapshot};
use crate::summary::RestoredFrom;
use crate::summary::Summary;
use crate::testguest::X86_64_TEST_GUEST;
use crate::trace::hex;
use serde_json::json;
use sha2::{Digest, Sha256};
use std::path::PathBuf;
use std::time::{Duration, Instant};
use vm_memory::{GuestAddress, GuestMemoryBackend};
use wio_clock::{CostModel, VirtualTsc, DEFAULT_TSC_HZ};
use wio_scheduler::RunSeed;

/// Kernel arguments wio uses for a Linux kernel when `--cmdline` is not given:
/// they keep Linux off every host-time and host-entropy source (see DESIGN.md).
pub const DEFAULT_LINUX_CMDLINE: &str = "console=ttyS0 nokaslr norandmaps lpj=1000000 no-kvmclock noapic nolapic nosmp tsc=unstable randomize_kstack_offset=off kfence.sample_interval=0 i8042.noaux i8042.nokbd reboot=k panic=-1 random.trust_cpu=off";

/// Everything that defines a run (with the seed and the guest artifacts, the whole of its inputs).
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// The run seed.
    pub seed: u64,
    /// Kernel file; `None` runs the built-in test guest (x86-64) or a built guest (riscv64).
    pub kernel: Option<PathBuf>,
    /// Which built guest to run when no kernel is given (riscv64: "small" or "debian").
    pub guest: Option<String>,
    /// Optional initrd.
    pub initrd: Option<PathBuf>,
    /// Kernel command line; `None` picks a default for the kernel.
    pub cmdline: Option<String>,
    /// Guest memory in MiB.
    pub mem_mib: u64,
    /// Unix seconds at virtual time 0 (the RTC's date).
    pub epoch_unix: i64,
    /// Where to write the trace, if anywhere.
    pub trace: Option<PathBuf>,
    /// Virtual-time limit in ns (0 = none).
    pub max_virtual_ns: u64,
    /// Watchdog limit in wall ms.
    pub watchdog_ms: u64,
    /// Do not stream the console to stdout.
    pub quiet: bool,
    /// A disk image for a virtio-blk root disk (riscv64).
    pub disk: Option<PathBuf>,
    /// Where to write the durable disk at the end of the run.
    pub persist: Option<PathBuf>,
    /// Where to capture the simulated network's frames (riscv64).
    pub pcap: Option<PathBuf>,
    /// The simulated link (riscv64).
    pub link: wio_virtio_devices::Link,
    /// Snapshots to take on the way.
    pub snapshots: crate::snapshot::plan::SnapshotPlan,
    /// Restore this snapshot instead of booting.
    pub from: Option<PathBuf>,
    /// Whether `seed` was given (a restore without one keeps the snapshot's seed).
    pub seed_given: bool,
    /// Stop the run at the first console line containing this text (riscv64).
    pub until: Option<String>,
}

impl RunConfig {
    /// A configuration with nothing but `seed` set: the default guest, 256 MiB, epoch 0,
    /// no outputs, no console, no limits, the default link. Tools and branches start here.
    pub fn with_seed(seed: u64) -> RunConfig {
        RunConfig {
            seed,
            kernel: None,
            guest: None,
            initrd: None,
            cmdline: None,
            mem_mib: 256,
            epoch_unix: 0,
            trace: None,
            max_virtual_ns: 0,
            watchdog_ms: 5000,
            quiet: true,
            disk: None,
            persist: None,
            pcap: None,
            link: wio_virtio_devices::Link::default(),
            snapshots: Default::default(),
            from: None,
            seed_given: true,
            until: None,
        }
    }
}

/// The result of a run: its summary, and how it ended.
pub struct RunResult {
    /// The summary (always produced, even when the run failed).
    pub summary: Summary,
    /// The guest's status, or the error that ended the run.
    pub outcome: Result<u32>,
}

/// One x86-64 machine, booted or restored, ready for the run loop.
struct X86Machine {
    engine: KvmEngine,
    platform: Platform,
    stats: RunStats,
    /// What snapshots of this machine say it is.
    meta: Meta,
    mem: GuestMem,
    host: HostVirt,
    warnings: Vec<String>,
    /// The seed the run has now.
    seed: u64,
    restored_from: Option<RestoredFrom>,
}

/// Everything of an x86-64 machine a snapshot keeps besides guest memory.
#[derive(serde::Serialize, serde::Deserialize)]
struct X86State {
    vcpu: Vec<u8>,
    platform: PlatformState,
    exits: Vec<(String, u64)>,
    interrupts: u64,
    idle_ns: u64,
}

fn check_mem(mem_mib: u64) -> Result<()> {
    if !(layout::MIN_MEM_MIB..=layout::MAX_MEM_MIB).contains(&mem_mib) {
        return Err(WioError::Usage(format!(
            "--mem {mem_mib} MiB is out of range; x86-64 guests take {} to {} MiB",
            layout::MIN_MEM_MIB,
            layout::MAX_MEM_MIB
        )));
    }
    Ok(())
}

/// The host's KVM flavour and what it means for this run, for the summary.
fn host_warnings(engine: &KvmEngine, host: &HostVirt) -> Vec<String> {
    let mut warnings = Vec::new();
    let leaked = cpuid::exposed_hidden_features(&engine.cpuid_readback);
    if !leaked.is_empty() {
        warnings.push(format!(
            "KVM's CPUID table exposes {} despite wio's profile",
            leaked.join(", ")
        ));
    }
    if !host.enforces_cpuid() {
        warnings.push(format!(
            "host KVM is {}: the guest's CPUID shows host bits whatever KVM_SET_CPUID2 sets, so CPUID-dependent guest behaviour may differ on another host",
            host.name()
        ));
    }
    warnings
}

fn kvm_options(cfg: &RunConfig) -> KvmOptions {
    KvmOptions {
        watchdog: Duration::from_millis(cfg.watchdog_ms),
    }
}

/// Builds the machine a configuration describes and loads its kernel.
fn boot(cfg: &RunConfig) -> Result<X86Machine> {
    check_mem(cfg.mem_mib)?;
    let disk = crate::virtio_setup::open_disk(cfg)?;
    let kernel = match &cfg.kernel {
        Some(path) => KernelImage::from_file(path)?,
        None => KernelImage {
            name: "built-in test guest".into(),
            bytes: X86_64_TEST_GUEST.to_vec(),
        },
    };
    let cmdline = match (&cfg.cmdline, &cfg.kernel) {
        (Some(c), _) => c.clone(),
        (None, Some(_)) => format!(
            "{DEFAULT_LINUX_CMDLINE} {}",
            crate::platform::virtio_cmdline(0)
        ),
        (None, None) => String::new(),
    };
    let seed = RunSeed(cfg.seed);
    let mut rng_seed = [0u8; RNG_SEED_LEN];
    seed.stream("x86-boot-rng-seed").fill_bytes(&mut rng_seed);

    let mem_bytes = cfg.mem_mib << 20;
    let mem = memory::allocate(0, mem_bytes)?;
    let spec = BootSpec {
        kernel: &kernel,
        initrd: cfg.initrd.as_deref(),
        cmdline: &cmdline,
        rng_seed,
    };
    let info = boot::load(&mem, &spec)?;

    let trace = crate::trace::open(cfg.trace.as_ref())?;
    let host = HostVirt::detect();
    let engine = KvmEngine::new(&mem, info.entry, kvm_options(cfg))?;
    let warnings = host_warnings(&engine, &host);

    let tsc = VirtualTsc::new(DEFAULT_TSC_HZ);
    let mut platform = Platform::new(
        cfg.epoch_unix,
        mem_bytes,
        tsc,
        seed.stream("paravirt-entropy"),
        trace,
    );
    // virtio-rng, -net (and -blk with a disk) in slots 0, 1, 2: Linux finds them through
    // virtio_mmio.device=, the test guest drives the rng at the first slot's address.
    platform.attach_virtio(crate::virtio_setup::devices(cfg, seed, disk)?, mem.clone());
    let kernel_sha256 = hex(&Sha256::digest(&kernel.bytes));
    platform.trace.event(
        0,
        "start",
        json!({
            "seed": cfg.seed,
            "arch": "x86_64",
            "mem_mib": cfg.mem_mib,
            "kernel_sha256": kernel_sha256,
            "initrd": cfg.initrd.as_ref().map(|p| p.display().to_string()),
            "cmdline": cmdline,
            "disk": crate::virtio_setup::disk_json(cfg),
            "epoch": cfg.epoch_unix,
            "entry": info.entry,
            "format": format!("{:?}", info.format),
            "kernel_end": info.kernel_end,
            "initrd_at": info.initrd.map(|(addr, size)| json!({ "addr": addr, "size": size })),
        }),
    );
    let initrd_sha256 = match &cfg.initrd {
        Some(p) => {
            Some(
                crate::snapshot::file_sha256(p).map_err(|source| WioError::ArtifactIo {
                    what: "initrd",
                    path: p.clone(),
                    source,
                })?,
            )
        }
        None => None,
    };
    Ok(X86Machine {
        engine,
        platform,
        stats: RunStats::default(),
        meta: Meta {
            arch: "x86_64".into(),
            wio_version: env!("CARGO_PKG_VERSION").into(),
            seed: cfg.seed,
            virtual_ns: 0,
            instructions: None,
            reason: String::new(),
            mem_base: 0,
            mem_bytes,
            kernel_sha256,
            initrd_sha256,
            cmdline,
            epoch_unix: cfg.epoch_unix,
            disk: cfg.disk.as_ref().map(|p| DiskMeta {
                path: std::fs::canonicalize(p).unwrap_or_else(|_| p.clone()),
                len: std::fs::metadata(p).map(|m| m.len()).unwrap_or(0),
                sha256: String::new(),
            }),
            link: Meta::link_fields(&cfg.link),
        },
        mem,
        host,
        warnings,
        seed: cfg.seed,
        restored_from: None,
    })
}

/// A machine in the state the snapshot at `path` recorded, run with `cfg`'s seed,
/// outputs and limits (see `riscv_vm::RvMachine::restore` for the seed rules).
/// An x86-64 snapshot read, checked and ready to restore any number of times (guest
/// memory in a memfd each restore maps copy-on-write; the disk checked once).
pub struct X86Loaded {
    /// Where it was read from.
    pub path: PathBuf,
    /// What it is of.
    pub meta: Meta,
    machine: Vec<u8>,
    memfd: std::fs::File,
    disk: Option<PathBuf>,
    /// The file's checksum.
    pub sha256: String,
}

impl X86Loaded {
    /// Reads and checks `path`; `cfg.disk`, if given, must be the snapshot's base image.
    pub fn load(path: &std::path::Path, cfg: &RunConfig) -> Result<X86Loaded> {
        let snap = Snapshot::read(path)?;
        let meta = snap.meta;
        crate::snapshot::check_machine(
            &meta,
            path,
            "x86_64",
            0,
            layout::MIN_MEM_MIB..=layout::MAX_MEM_MIB,
        )?;
        let disk = crate::riscv_vm::restore_disk(&meta, cfg)?;
        let memfd = memory::snapshot_memfd(meta.mem_bytes, &snap.memory)?;
        Ok(X86Loaded {
            path: path.to_path_buf(),
            meta,
            machine: snap.machine,
            memfd,
            disk,
            sha256: snap.sha256,
        })
    }
}

fn restore(l: &X86Loaded, cfg: &RunConfig) -> Result<X86Machine> {
    let path = &l.path;
    let bad = |reason: String| WioError::ArtifactFormat {
        what: "snapshot",
        path: path.to_path_buf(),
        reason,
    };
    let meta = l.meta.clone();
    let state: X86State = postcard::from_bytes(&l.machine)
        .map_err(|e| bad(format!("has unreadable machine state: {e}")))?;
    let vcpu: VcpuState = postcard::from_bytes(&state.vcpu)
        .map_err(|e| bad(format!("has unreadable vCPU state: {e}")))?;
    let disk = match &l.disk {
        Some(p) => {
            let mut c = cfg.clone();
            c.disk = Some(p.clone());
            crate::virtio_setup::open_disk(&c)?
        }
        None => None,
    };
    let mem = memory::map_private(0, meta.mem_bytes, &l.memfd)?;
    let host = HostVirt::detect();
    let engine = KvmEngine::restore(&mem, &vcpu, kvm_options(cfg))?;
    let warnings = host_warnings(&engine, &host);
    let (seed, reseed) = meta.restore_seed(cfg);
    let trace = crate::trace::open(cfg.trace.as_ref())?;
    let mut platform = Platform::new(
        meta.epoch_unix,
        meta.mem_bytes,
        VirtualTsc::new(DEFAULT_TSC_HZ),
        RunSeed(meta.seed).stream("paravirt-entropy"),
        trace,
    );
    platform.attach_virtio(
        crate::virtio_setup::devices(&meta.device_config(cfg), RunSeed(meta.seed), disk)?,
        mem.clone(),
    );
    platform
        .load_state(state.platform, reseed)
        .map_err(|e| bad(format!("has a platform state this machine refuses: {e}")))?;
    if let Some(RunSeed(s)) = reseed {
        let now = platform.clock.now_ns();
        platform
            .trace
            .event(now, "reseed", json!({ "from": meta.seed, "seed": s }));
    }
    let mut exits = std::collections::BTreeMap::new();
    for (k, v) in state.exits {
        let kind = wio_clock::ExitCost::ALL
            .iter()
            .map(|c| c.name())
            .find(|n| *n == k)
            .ok_or_else(|| bad(format!("counts an unknown exit kind {k:?}")))?;
        exits.insert(kind, v);
    }
    Ok(X86Machine {
        engine,
        platform,
        stats: RunStats {
            exits,
            interrupts: state.interrupts,
            idle_ns: state.idle_ns,
        },
        restored_from: Some(RestoredFrom {
            path: path.display().to_string(),
            virtual_ns: meta.virtual_ns,
            instructions: None,
            seed: meta.seed,
        }),
        meta,
        mem,
        host,
        warnings,
        seed,
    })
}

/// The machine's state as a snapshot (between two exits).
fn snapshot(
    engine: &mut dyn CpuEngine,
    platform: &mut Platform,
    stats: &RunStats,
    meta: &mut Meta,
    seed: u64,
    mem: &GuestMem,
    reason: String,
) -> Result<Snapshot> {
    let vcpu = engine.save_state()?;
    let platform_state = platform
        .save_state()
        .map_err(|e| WioError::Usage(format!("cannot snapshot: {e}")))?;
    let state = X86State {
        vcpu,
        platform: platform_state,
        exits: stats
            .exits
            .iter()
            .map(|(k, v)| (k.to_string(), *v))
            .collect(),
        interrupts: stats.interrupts,
        idle_ns: stats.idle_ns,
    };
    if let Some(d) = meta.disk.as_mut().filter(|d| d.sha256.is_empty()) {
        d.sha256 =
            crate::snapshot::file_sha256(&d.path).map_err(|source| WioError::ArtifactIo {
                what: "disk image",
                path: d.path.clone(),
                source,
            })?;
    }
    let host = mem
        .get_host_address(GuestAddress(0))
        .map_err(|e| WioError::Internal(format!("guest memory host address: {e}")))?;
    // SAFETY: `host` is the start of the single mapping of `mem_bytes` bytes `mem` owns; the
    // vCPU is stopped (this runs between two KVM_RUNs on this thread) and the devices run on
    // this thread too, so nothing writes guest memory while it is read.
    let bytes = unsafe { std::slice::from_raw_parts(host, meta.mem_bytes as usize) };
    let mut m = meta.clone();
    m.seed = seed;
    m.virtual_ns = platform.clock.now_ns();
    m.reason = reason;
    Ok(Snapshot {
        meta: m,
        machine: postcard::to_stdvec(&state)
            .map_err(|e| WioError::Internal(format!("machine state encodes: {e}")))?,
        memory: memory_runs(bytes),
        sha256: String::new(),
    })
}

/// Runs one x86-64 VM to its end: booted from its configuration or restored from
/// `cfg.from`, taking the snapshots `cfg.snapshots` asks for on the way.
pub fn run(cfg: &RunConfig) -> Result<RunResult> {
    let wall = Instant::now();
    let mut m = match &cfg.from {
        Some(path) => restore(&X86Loaded::load(path, cfg)?, cfg)?,
        None => boot(cfg)?,
    };
    let cost = CostModel::default();
    let limits = RunLimits {
        max_virtual_ns: cfg.max_virtual_ns,
        watchdog_ms: cfg.watchdog_ms,
    };
    let mut stdout = std::io::stdout();
    let mut console = if cfg.quiet {
        Console::Quiet
    } else {
        Console::Stream(&mut stdout)
    };
    let mut plan = cfg.snapshots.clone();
    let mut taken = 0usize;
    m.platform.watch = plan
        .at
        .iter()
        .filter_map(|a| match a {
            SnapshotAt::Console(t) => Some(t.clone()),
            _ => None,
        })
        .collect();
    let (meta, seed, mem) = (&mut m.meta, m.seed, &m.mem);
    let mut hook = |engine: &mut dyn CpuEngine, platform: &mut Platform, stats: &RunStats| {
        let now = platform.clock.now_ns();
        let guest = std::mem::take(&mut platform.snapshot_request);
        let due = if guest {
            plan.at
                .iter()
                .position(|a| *a == SnapshotAt::Guest)
                .map(|i| plan.at.remove(i).describe())
        } else {
            None
        };
        let due = due.or_else(|| {
            plan.at
                .iter()
                .position(|a| matches!(a, SnapshotAt::Time(t) if now >= *t))
                .map(|i| plan.at.remove(i).describe())
        });
        let due = due.or_else(|| {
            if platform.watch_hits.is_empty() {
                return None;
            }
            let text = platform.watch_hits.remove(0);
            plan.at.retain(|a| *a != SnapshotAt::Console(text.clone()));
            Some(SnapshotAt::Console(text).describe())
        });
        let Some(reason) = due else { return Ok(()) };
        taken += 1;
        let path = plan.path(taken, seed, now);
        let started = Instant::now();
        let snap = snapshot(engine, platform, stats, meta, seed, mem, reason.clone())?;
        let bytes = snap.write(&path)?;
        eprintln!(
            "wio: snapshot {} at {now} ns ({reason}): {} MiB in {} ms; restore with: wio run --from {}",
            path.display(),
            bytes >> 20,
            started.elapsed().as_millis(),
            path.display()
        );
        Ok(())
    };
    let ending = runloop::run(
        &mut m.engine,
        &mut m.platform,
        &cost,
        limits,
        &mut console,
        &mut m.stats,
        &mut hook,
    );

    Ok(finish(m, cfg, ending, wall))
}

/// Ends a run: closes the trace, carries out `--persist`, and builds the summary.
fn finish(mut m: X86Machine, cfg: &RunConfig, ending: Result<Ending>, wall: Instant) -> RunResult {
    let platform = &mut m.platform;
    let outcome: Result<u32> = ending.map(|Ending::GuestStatus(s)| s);
    let now = platform.clock.now_ns();
    let outcome = crate::trace::close(
        &mut platform.trace,
        now,
        outcome,
        json!({}),
        cfg.trace.as_ref(),
    );
    let (disk, outcome) = crate::virtio_setup::finish_disk(platform.virtio_devices(), cfg, outcome);
    let exit_status = outcome.as_ref().ok().copied();
    let summary = Summary {
        seed: m.seed,
        arch: "x86_64",
        virtual_ns: now,
        wall_ns: wall.elapsed().as_nanos() as u64,
        exits: m.stats.exits,
        interrupts: m.stats.interrupts,
        instructions: None,
        markers: Vec::new(),
        disk,
        idle_ns: m.stats.idle_ns,
        trace_hash: platform.trace.hash_hex(),
        trace_lines: platform.trace.lines(),
        console_sha256: platform.console_sha256(),
        exit_status,
        stopped_at: None,
        restored_from: m.restored_from,
        wio_exit_code: match &outcome {
            Ok(s) => (*s).min(MAX_GUEST_STATUS) as i32,
            Err(e) => e.exit_code(),
        },
        error: outcome.as_ref().err().map(|e| e.to_string()),
        host: m.host.name(),
        warnings: m.warnings,
    };
    RunResult { summary, outcome }
}

/// Runs one branch of an x86-64 snapshot with `seed` (no outputs; console kept in memory
/// to look for `watch` texts) to its end or `limit_ns`; `cancel` abandons it (None).
pub fn run_branch(
    l: &X86Loaded,
    seed: u64,
    watch: &[String],
    limit_ns: u64,
    cancel: &std::sync::atomic::AtomicBool,
) -> Result<Option<crate::riscv_vm::BranchEnd>> {
    let wall = Instant::now();
    let cfg = RunConfig {
        mem_mib: l.meta.mem_bytes >> 20,
        epoch_unix: l.meta.epoch_unix,
        max_virtual_ns: limit_ns,
        from: Some(l.path.clone()),
        ..RunConfig::with_seed(seed)
    };
    let mut m = restore(l, &cfg)?;
    let mut console_bytes: Vec<u8> = Vec::new();
    let mut console = Console::Stream(&mut console_bytes);
    let mut cancelled = false;
    let mut hook = |_: &mut dyn CpuEngine, _: &mut Platform, _: &RunStats| {
        if cancel.load(std::sync::atomic::Ordering::Relaxed) {
            cancelled = true;
            return Err(WioError::Internal("branch cancelled".into()));
        }
        Ok(())
    };
    let ending = runloop::run(
        &mut m.engine,
        &mut m.platform,
        &CostModel::default(),
        RunLimits {
            max_virtual_ns: limit_ns,
            watchdog_ms: cfg.watchdog_ms,
        },
        &mut console,
        &mut m.stats,
        &mut hook,
    );
    if cancelled {
        return Ok(None);
    }
    let text = String::from_utf8_lossy(&console_bytes);
    let matched = watch
        .iter()
        .filter(|w| text.lines().any(|line| line.contains(w.as_str())))
        .cloned()
        .collect();
    let summary = finish(m, &cfg, ending, wall).summary;
    Ok(Some(crate::riscv_vm::BranchEnd {
        summary,
        matched,
        stopped_at_until: false,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kvm_usable() -> bool {
        let ok = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/kvm")
            .is_ok();
        if !ok {
            eprintln!("SKIPPED: vm tests: /dev/kvm cannot be opened read-write on this host");
        }
        ok
    }

    fn config(kernel: Option<PathBuf>) -> RunConfig {
        RunConfig {
            kernel,
            cmdline: Some(String::new()),
            mem_mib: 64,
            max_virtual_ns: 60_000_000_000,
            watchdog_ms: 10_000,
            ..RunConfig::with_seed(5)
        }
    }

    #[test]
    fn bzimage_and_elf_of_the_test_guest_behave_identically() {
        if !kvm_usable() {
            return;
        }
        let dir = std::env::temp_dir().join(format!("wio-vm-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let bz = dir.join("bzImage");
        std::fs::write(&bz, crate::testguest::X86_64_TEST_GUEST_BZIMAGE).unwrap();
        let elf = run(&config(None)).unwrap();
        let bzimage = run(&config(Some(bz))).unwrap();
        assert_eq!(elf.outcome.unwrap(), 0);
        assert_eq!(bzimage.outcome.unwrap(), 0);
        assert_eq!(elf.summary.console_sha256, bzimage.summary.console_sha256);
        assert_eq!(elf.summary.virtual_ns, bzimage.summary.virtual_ns);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
