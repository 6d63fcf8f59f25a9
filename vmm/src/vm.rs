//! Building and running one x86-64 VM from a run configuration: memory,
//! kernel loading, the KVM engine, the platform, the trace and the summary.

use crate::arch::x86_64::boot::{self, BootSpec, KernelImage, RNG_SEED_LEN};
use crate::arch::x86_64::{cpuid, layout};
use crate::engine::host::HostVirt;
use crate::engine::kvm::{KvmEngine, KvmOptions};
use crate::error::{Result, WioError, MAX_GUEST_STATUS};
use crate::memory;
use crate::platform::Platform;
use crate::runloop::{self, Console, Ending, RunLimits, RunStats};
use crate::summary::Summary;
use crate::testguest::X86_64_TEST_GUEST;
use crate::trace::hex;
use serde_json::json;
use sha2::{Digest, Sha256};
use std::path::PathBuf;
use std::time::{Duration, Instant};
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

/// The result of a run: its summary, and how it ended.
pub struct RunResult {
    /// The summary (always produced, even when the run failed).
    pub summary: Summary,
    /// The guest's status, or the error that ended the run.
    pub outcome: Result<u32>,
}

/// Runs one x86-64 VM to its end.
pub fn run(cfg: &RunConfig) -> Result<RunResult> {
    let wall = Instant::now();
    if !(layout::MIN_MEM_MIB..=layout::MAX_MEM_MIB).contains(&cfg.mem_mib) {
        return Err(WioError::Usage(format!(
            "--mem {} MiB is out of range; x86-64 guests take {} to {} MiB",
            cfg.mem_mib,
            layout::MIN_MEM_MIB,
            layout::MAX_MEM_MIB
        )));
    }
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
    let options = KvmOptions {
        watchdog: Duration::from_millis(cfg.watchdog_ms),
    };
    let mut engine = KvmEngine::new(&mem, info.entry, options)?;
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

    let tsc = VirtualTsc::new(DEFAULT_TSC_HZ);
    let mut platform = Platform::new(
        cfg.epoch_unix,
        mem_bytes,
        tsc,
        seed.stream("paravirt-entropy"),
        trace,
    );
    // virtio-rng in slot 0 (Linux finds it through virtio_mmio.device=, the test guest knows the address).
    // virtio-rng, -net (and -blk with a disk) in slots 0, 1, 2: Linux finds them through
    // virtio_mmio.device=, the test guest drives the rng at the first slot's address.
    platform.attach_virtio(crate::virtio_setup::devices(cfg, seed, disk)?, mem.clone());
    platform.trace.event(
        0,
        "start",
        json!({
            "seed": cfg.seed,
            "arch": "x86_64",
            "mem_mib": cfg.mem_mib,
            "kernel_sha256": hex(&Sha256::digest(&kernel.bytes)),
            "initrd": cfg.initrd.as_ref().map(|p| p.display().to_string()),
            "cmdline": cmdline,
            "disk": cfg.disk.as_ref().map(|p| json!({
                "name": p.file_name().map(|n| n.to_string_lossy().into_owned()),
                "bytes": std::fs::metadata(p).map(|m| m.len()).unwrap_or(0),
            })),
            "epoch": cfg.epoch_unix,
            "entry": info.entry,
            "format": format!("{:?}", info.format),
            "kernel_end": info.kernel_end,
            "initrd_at": info.initrd.map(|(addr, size)| json!({ "addr": addr, "size": size })),
        }),
    );

    let cost = CostModel::default();
    let limits = RunLimits {
        max_virtual_ns: cfg.max_virtual_ns,
        watchdog_ms: cfg.watchdog_ms,
    };
    let mut stats = RunStats::default();
    let mut stdout = std::io::stdout();
    let mut console = if cfg.quiet {
        Console::Quiet
    } else {
        Console::Stream(&mut stdout)
    };
    let ending = runloop::run(
        &mut engine,
        &mut platform,
        &cost,
        limits,
        &mut console,
        &mut stats,
    );

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
        seed: cfg.seed,
        arch: "x86_64",
        virtual_ns: now,
        wall_ns: wall.elapsed().as_nanos() as u64,
        exits: stats.exits,
        interrupts: stats.interrupts,
        instructions: None,
        markers: Vec::new(),
        disk,
        idle_ns: stats.idle_ns,
        trace_hash: platform.trace.hash_hex(),
        trace_lines: platform.trace.lines(),
        console_sha256: platform.console_sha256(),
        exit_status,
        stopped_at: None,
        restored_from: None,
        wio_exit_code: match &outcome {
            Ok(s) => (*s).min(MAX_GUEST_STATUS) as i32,
            Err(e) => e.exit_code(),
        },
        error: outcome.as_ref().err().map(|e| e.to_string()),
        host: host.name(),
        warnings,
    };
    Ok(RunResult { summary, outcome })
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
            seed: 5,
            kernel,
            guest: None,
            initrd: None,
            cmdline: Some(String::new()),
            mem_mib: 64,
            epoch_unix: 0,
            trace: None,
            max_virtual_ns: 60_000_000_000,
            watchdog_ms: 10_000,
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
