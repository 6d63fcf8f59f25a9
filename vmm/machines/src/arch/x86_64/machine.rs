//! One x86-64 machine on KVM: built from a run configuration (memory, kernel loading,
//! the KVM vCPU, the PC platform, the virtio devices, the trace) or restored from a
//! snapshot, and run step by step behind the [`Machine`] interface.

use super::boot::{self, BootSpec, KernelImage, RNG_SEED_LEN};
use super::host::HostVirt;
use super::kvm::{KvmEngine, KvmOptions};
use super::platform::Platform;
use super::run_loop::{self, RunStats, Step};
use super::testguest::X86_64_TEST_GUEST;
use super::{cpuid, layout};
use crate::devices::vmgenid::VmGenId;
use crate::error::{MachineError, Result, WioError};
use crate::machine::console::Console;
use crate::machine::finish::{finish_run, Counts, Parts};
use crate::machine::noise::{SchedNoise, TimerNoise};
use crate::machine::novelty::{Mark, Observed, Signal};
use crate::machine::power::{boot_stream, Power};
use crate::machine::{virtio, Arch, BootMeta, Machine, RunConfig, RunResult, Stop};
use crate::memory::{self, GuestMem};
use crate::promises::report::Promises;
use crate::promises::Ledger;
use crate::snapshot::{Meta, Snapshot};
use crate::summary::RestoredFrom;
use crate::trace::hex;
use serde_json::json;
use sha2::{Digest, Sha256};
use std::time::{Duration, Instant};
use wio_clock::{CostModel, VirtualTime, VirtualTsc, DEFAULT_TSC_HZ};
use wio_scheduler::{stream_names, RunSeed};
use wio_virtio_devices::Frame;

/// Kernel arguments wio uses for a Linux kernel when `--cmdline` is not given:
/// they keep Linux off every host-time and host-entropy source (see DESIGN.md).
pub const DEFAULT_LINUX_CMDLINE: &str = "console=ttyS0 nokaslr lpj=1000000 no-kvmclock noapic nolapic nosmp tsc=unstable randomize_kstack_offset=off kfence.sample_interval=0 i8042.noaux i8042.nokbd reboot=k panic=-1 random.trust_cpu=off";

/// Said of every booted run of a kernel other than the built-in test guest that did not
/// announce itself on the paravirt port (rule 5: detect and say so). wio's small kernel
/// (`guest-kernel/x86_64`, CONFIG_WIO_GUEST) announces itself: its TSC reads go through the
/// port and user RDTSC traps.
const RDTSC_WARNING: &str = "this kernel reads the hardware TSC (RDTSC), which KVM does not let wio intercept: what it derives from it (its CRNG: /dev/urandom, getrandom; TSC-based clocks) may differ between runs of one seed; control flow, exits and virtual time follow the seed";

/// Where an x86-64 machine can interrupt its guest, said in every summary: interrupting it
/// on an exact instruction would need a count of its retired instructions (a PMU), which
/// wio does not use yet (docs/x86_64.md, "A guest that computes without exits").
const PREEMPTION: &str = "at exits only: KVM gives wio no count of the guest's instructions, so a program computing without an exit is not interrupted (docs/x86_64.md)";

/// One x86-64 machine, booted or restored, ready for the run loop.
pub struct X86Machine {
    pub(super) engine: KvmEngine,
    pub(super) platform: Platform,
    pub(super) console: Console,
    pub(super) stats: RunStats,
    pub(super) cost: CostModel,
    pub(super) watchdog_ms: u64,
    /// What snapshots of this machine say it is.
    pub(super) meta: Meta,
    pub(super) mem: GuestMem,
    pub(super) host: HostVirt,
    pub(super) warnings: Vec<String>,
    /// Warn at the end unless the kernel announced itself (see [`RDTSC_WARNING`]).
    pub(super) rdtsc_warning: bool,
    /// The seed the run has now.
    pub(super) seed: u64,
    pub(super) restored_from: Option<RestoredFrom>,
    /// The last step stopped for a debugger between two instructions (see `gdb`).
    pub(super) debug_paused: bool,
    /// The promises its programs made on the channel, and what became of them.
    pub(super) promises: Ledger,
    /// End the run at the first violated `always` (`--stop-on-violation`).
    pub(super) stop_on_violation: bool,
    /// The promise firsts and guidance watermarks not yet taken, when a guided exploration
    /// observes them ([`Machine::observe`]).
    pub(super) marks: Option<Observed>,
    /// How many times it booted (crash faults restart it).
    pub(super) boots: u32,
    /// Virtual ns its vCPU was stopped by node faults (paused, or off after a crash).
    pub(super) stopped_ns: u64,
    /// `shadow_unchecked` of the vCPUs of earlier boots (see `KvmEngine`).
    pub(super) shadow_unchecked_before: u64,
}

/// A path made canonical where it resolves (a restored machine finds its files from anywhere).
fn canonical(p: std::path::PathBuf) -> std::path::PathBuf {
    std::fs::canonicalize(&p).unwrap_or(p)
}

fn check_mem(mem_mib: u64) -> Result<()> {
    if !(layout::MIN_MEM_MIB..=layout::MAX_MEM_MIB).contains(&mem_mib) {
        return Err(MachineError::Mem {
            mib: mem_mib,
            arch: "x86-64",
            min: layout::MIN_MEM_MIB,
            max: layout::MAX_MEM_MIB,
        }
        .into());
    }
    Ok(())
}

/// The host's KVM flavour and what it means for this run, for the summary.
pub(super) fn host_warnings(engine: &KvmEngine, host: &HostVirt) -> Vec<String> {
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

/// How many virtio slots the machine has: rng and net, blk with a disk, and the promise
/// channel when it has one (the slot order of `virtio::devices`).
pub(super) fn virtio_slots(disk: bool, channel: virtio::Channel) -> usize {
    2 + usize::from(disk) + usize::from(channel == virtio::Channel::Sdk)
}

/// The promise channel (virtio-console with `wio.sdk` and `wio.random`) is given to Linux
/// kernels; the built-in test guest drives only the rng and has none.
fn channel_of(cfg: &RunConfig) -> virtio::Channel {
    if cfg.kernel.is_some() {
        virtio::Channel::Sdk
    } else {
        virtio::Channel::None
    }
}

/// The command line of a Linux guest without `--cmdline`: [`DEFAULT_LINUX_CMDLINE`], every
/// virtio slot (rng, net, blk with a disk and the promise channel: the slot order of
/// `virtio::devices`), and with a disk its ext4 root (`/dev/vda`, as on riscv64).
fn linux_cmdline(disk: bool) -> String {
    let slots = virtio_slots(disk, virtio::Channel::Sdk);
    let mut c = DEFAULT_LINUX_CMDLINE.to_string();
    for slot in 0..slots {
        c.push(' ');
        c.push_str(&super::platform::virtio_cmdline(slot));
    }
    if disk {
        c.push_str(" root=/dev/vda rw rootfstype=ext4 init=/init");
    }
    c
}

pub(super) fn kvm_options(cfg: &RunConfig) -> KvmOptions {
    kvm_options_ms(cfg.watchdog_ms)
}

/// The engine's options for a watchdog of `watchdog_ms` of wall time without an exit.
pub(super) fn kvm_options_ms(watchdog_ms: u64) -> KvmOptions {
    KvmOptions {
        watchdog: Duration::from_millis(watchdog_ms),
    }
}

/// A configuration that names a built x86-64 guest (`guest` without `kernel`:
/// `images/build-all-x86_64.sh`) with that guest's files in place of its name (as a built
/// riscv64 guest boots: `Builds::boot_files`), so the snapshot and every restart read them
/// by path. `None` when the configuration names no built guest.
fn with_built_guest(cfg: &RunConfig) -> Result<Option<RunConfig>> {
    let (Some(name), None) = (&cfg.guest, &cfg.kernel) else {
        return Ok(None);
    };
    let (kernel, initrd) =
        crate::machine::guests::X86_64.boot_files(name, cfg.initrd.as_ref(), cfg.disk.is_some())?;
    Ok(Some(RunConfig {
        kernel: Some(kernel),
        initrd,
        guest: None,
        ..cfg.clone()
    }))
}

/// The kernel a configuration names (else the built-in test guest) and its command line
/// (given, else Linux's default for a kernel, else none for the test guest).
fn kernel_and_cmdline(cfg: &RunConfig, has_disk: bool) -> Result<(KernelImage, String)> {
    let kernel = match &cfg.kernel {
        Some(path) => KernelImage::from_file(path)?,
        None => KernelImage {
            name: "built-in test guest".into(),
            bytes: X86_64_TEST_GUEST.to_vec(),
        },
    };
    let cmdline = cfg.kernel_cmdline(|| match cfg.kernel {
        Some(_) => linux_cmdline(has_disk),
        None => String::new(),
    });
    Ok((kernel, cmdline))
}

/// What every boot of a machine loads: the kernel, its initrd and command line, and how many
/// virtio slots the ACPI tables describe (the same as the command line, for kernels that
/// take no virtio_mmio.device=, like Debian's).
pub(super) struct BootFiles<'a> {
    pub kernel: &'a KernelImage,
    pub initrd: Option<&'a std::path::Path>,
    pub cmdline: &'a str,
    pub slots: usize,
}

/// Loads `files` into `mem` for boot number `boot` (1: the first) of a machine with seed
/// `seed`: the boot RNG seed is drawn from its own stream per boot, the VM generation ID
/// from the seed.
pub(super) fn load_image(
    mem: &memory::GuestMem,
    files: &BootFiles,
    seed: RunSeed,
    boot: u32,
) -> Result<boot::BootInfo> {
    let name = boot_stream(stream_names::X86_BOOT_RNG_SEED, boot);
    let mut rng_seed = [0u8; RNG_SEED_LEN];
    seed.stream(&name).fill_bytes(&mut rng_seed);
    let acpi_slots: Vec<_> = (0..files.slots).map(super::platform::virtio_slot).collect();
    let spec = BootSpec {
        kernel: files.kernel,
        initrd: files.initrd,
        cmdline: files.cmdline,
        rng_seed,
        virtio: &acpi_slots,
        vmgenid: VmGenId::drawn(seed, 0).id(),
    };
    boot::load(mem, &spec)
}

/// The trace's first events: what was booted, where it was loaded, the noise level.
fn trace_start(
    trace: &mut crate::trace::Trace,
    cfg: &RunConfig,
    kernel_sha256: &str,
    cmdline: &str,
    info: &boot::BootInfo,
) {
    trace.event(
        0,
        "start",
        json!({
            "seed": cfg.seed,
            "arch": "x86_64",
            "mem_mib": cfg.mem_mib,
            "kernel_sha256": kernel_sha256,
            "initrd": cfg.initrd.as_ref().map(|p| p.display().to_string()),
            "cmdline": cmdline,
            "disk": virtio::disk_json(cfg),
            "epoch": cfg.epoch_unix,
            "entry": info.entry,
            "format": format!("{:?}", info.format),
            "kernel_end": info.kernel_end,
            "initrd_at": info.initrd.map(|(addr, size)| json!({ "addr": addr, "size": size })),
        }),
    );
    if cfg.sched_noise != SchedNoise::Off {
        // Only when on, so `--sched-noise off` reproduces the traces of wio before noise.
        trace.event(0, "sched-noise", json!({ "level": cfg.sched_noise.name() }));
    }
}

/// The initrd's SHA-256, when there is one.
fn initrd_sha256(cfg: &RunConfig) -> Result<Option<String>> {
    cfg.initrd
        .as_ref()
        .map(|p| {
            crate::snapshot::file_sha256(p).map_err(|source| WioError::ArtifactIo {
                what: "initrd",
                path: p.clone(),
                source,
            })
        })
        .transpose()
}

/// Builds the machine a configuration describes and loads its kernel.
pub fn boot(cfg: &RunConfig, wall: Instant) -> Result<X86Machine> {
    let built;
    let cfg = match with_built_guest(cfg)? {
        Some(c) => {
            built = c;
            &built
        }
        None => cfg,
    };
    check_mem(cfg.mem_mib)?;
    let disk = virtio::open_disk(cfg)?;
    let faults = cfg.fault_injector(super::platform::fault_targets(disk.is_some()))?;
    let (kernel, cmdline) = kernel_and_cmdline(cfg, disk.is_some())?;
    let seed = RunSeed(cfg.seed);
    let mem_bytes = cfg.mem_mib << 20;
    let mem = memory::allocate(0, mem_bytes)?;
    let channel = channel_of(cfg);
    let files = BootFiles {
        kernel: &kernel,
        initrd: cfg.initrd.as_deref(),
        cmdline: &cmdline,
        slots: virtio_slots(disk.is_some(), channel),
    };
    let info = load_image(&mem, &files, seed, 1)?;

    let trace = crate::trace::open(cfg.trace.as_ref())?;
    let host = HostVirt::detect();
    let engine = KvmEngine::new(&mem, info.entry, kvm_options(cfg))?;
    let warnings = host_warnings(&engine, &host);
    let rdtsc_warning = cfg.kernel.is_some();

    let tsc = VirtualTsc::new(DEFAULT_TSC_HZ);
    let mut platform = Platform::new(
        cfg.epoch_unix,
        mem_bytes,
        tsc,
        seed.stream(stream_names::PARAVIRT_ENTROPY),
        TimerNoise::new(cfg.sched_noise, seed),
        trace,
    );
    // virtio-rng, -net, -blk with a disk, then the promise channel of a Linux guest: Linux
    // finds them through virtio_mmio.device= or ACPI, the test guest drives the rng at the
    // first slot's address.
    let mut devices = virtio::devices(cfg, seed, disk, channel)?;
    virtio::answer_control_at_kick(&mut devices);
    platform.attach_virtio(devices, mem.clone());
    platform.plan_faults(faults);
    let kernel_sha256 = hex(&Sha256::digest(&kernel.bytes));
    trace_start(&mut platform.trace, cfg, &kernel_sha256, &cmdline, &info);
    let initrd_sha256 = initrd_sha256(cfg)?;
    Ok(X86Machine {
        engine,
        platform,
        console: Console::new(cfg.echo(), wall),
        stats: RunStats::default(),
        cost: CostModel::default(),
        watchdog_ms: cfg.watchdog_ms,
        meta: Meta {
            // Where the boot files are: a crash fault's restart loads them again.
            kernel_path: cfg.kernel.clone().map(canonical),
            initrd_path: cfg.initrd.clone().map(canonical),
            ..cfg.boot_meta(BootMeta {
                arch: Arch::X86_64,
                mem_base: 0,
                kernel_sha256,
                initrd_sha256,
                cmdline,
            })
        },
        mem,
        host,
        warnings,
        rdtsc_warning,
        seed: cfg.seed,
        restored_from: None,
        debug_paused: false,
        promises: Ledger::default(),
        stop_on_violation: cfg.stop_on_violation,
        marks: None,
        boots: 1,
        stopped_ns: 0,
        shadow_unchecked_before: 0,
    })
}

impl X86Machine {
    /// Takes the lines programs wrote on the promise channel's `wio.sdk` port into the
    /// run's ledger (see `machine::sdk::drain`); the stop the driver must see, if any.
    fn drain_promises(&mut self) -> Option<Stop> {
        let setup_before = self.promises.setup_complete_ns;
        let drained = self.platform.drain_promises(
            &mut self.promises,
            self.stop_on_violation,
            self.marks.as_mut(),
        );
        if let (None, Some(t)) = (setup_before, self.promises.setup_complete_ns) {
            // A fault profile counted from setup-complete draws its faults now.
            self.platform.on_setup_complete(RunSeed(self.seed), t);
        }
        drained
    }

    /// The engine (a debugger's registers, breakpoints and single steps).
    pub(super) fn engine_mut(&mut self) -> &mut KvmEngine {
        &mut self.engine
    }

    /// Guest memory.
    pub(super) fn memory(&self) -> &GuestMem {
        &self.mem
    }
}

impl Machine for X86Machine {
    fn seed(&self) -> u64 {
        self.seed
    }

    fn now(&self) -> VirtualTime {
        self.platform.clock.time()
    }

    fn run_until(&mut self, limit: VirtualTime) -> Stop {
        if self.platform.power != Power::On {
            let stop = self.step_unpowered(limit);
            return match self.drain_promises() {
                Some(Stop::End(outcome)) => Stop::End(outcome),
                _ => stop,
            };
        }
        let step = run_loop::step(
            &mut self.engine,
            &mut self.platform,
            &mut self.console,
            &mut self.stats,
            &self.cost,
            self.watchdog_ms,
            limit,
            std::mem::take(&mut self.debug_paused),
        );
        match step {
            Step::End(outcome) => return Stop::End(outcome),
            Step::Debug => {
                self.debug_paused = true;
                return Stop::Yield;
            }
            Step::Continue => {}
        }
        let drained = self.drain_promises();
        if let Some(Stop::End(outcome)) = drained {
            return Stop::End(outcome);
        }
        // KVM cannot stop on an exact instruction: the limit is noticed at the first exit
        // at or after it.
        if self.now() >= limit {
            return Stop::Limit;
        }
        if std::mem::take(&mut self.platform.snapshot_request) {
            return Stop::GuestSnapshot(None);
        }
        drained.unwrap_or(Stop::Yield)
    }

    fn console(&mut self) -> &mut Console {
        &mut self.console
    }

    fn parked_until(&self) -> Option<VirtualTime> {
        self.stats.parked.map(VirtualTime::from_ns)
    }

    fn take_frames(&mut self) -> Vec<Frame> {
        self.platform.take_frames()
    }

    fn deliver_frame(&mut self, mut frame: Frame) -> Result<()> {
        // In a world the machine stops at its first exit at or after a quantum boundary, so
        // a frame due just after the boundary may find it a little past its time: it arrives
        // now instead (the node's time at each boundary is a function of its execution, so
        // this is the same in every run; see docs/worlds.md, x86-64 nodes).
        frame.at_ns = frame.at_ns.max(self.now().as_ns());
        self.platform
            .deliver_frame(frame)
            .map_err(|source| crate::error::WorldError::Port { source })
            .map_err(Into::into)
    }

    fn snapshot(&mut self, reason: String) -> Result<Snapshot> {
        self.capture(reason)
    }

    fn moment(&mut self, cfg: &RunConfig) -> Result<Box<dyn crate::machine::LoadedSnapshot>> {
        self.keep_moment(cfg)
    }

    fn observe(&mut self, signals: &[Signal]) {
        if signals.contains(&Signal::Console) {
            self.console.observe_shapes();
        }
        Observed::watch(&mut self.marks, signals);
    }

    fn take_marks(&mut self) -> Vec<Mark> {
        let mut marks = Observed::take(&mut self.marks);
        marks.extend(self.console.take_shape_marks());
        marks
    }

    fn finish(
        self: Box<Self>,
        cfg: &RunConfig,
        outcome: Result<u32>,
        wall: Instant,
        until: Option<&str>,
    ) -> RunResult {
        let mut m = *self;
        if m.rdtsc_warning && !m.platform.paravirt.announced() {
            m.warnings.push(RDTSC_WARNING.to_string());
        }
        let shadow_unchecked = m.shadow_unchecked_before + m.engine.shadow_unchecked;
        if shadow_unchecked > 0 {
            m.warnings.push(format!(
                "KVM refused to single-step, so {} interrupt window(s) reported right after an STI were taken where KVM reported them; on nested virtualization that loses the STI shadow (QEMU's emulated SVM) such a window can land one instruction early, and the run may then differ from another of the same seed",
                shadow_unchecked
            ));
        }
        let promises = m
            .platform
            .has_channel()
            .then(|| Promises::new(&m.promises, m.platform.channel_stats()));
        let platform = &mut m.platform;
        run_loop::drain_console(platform, &mut m.console);
        let now = platform.clock.now_ns();
        let applied = platform.faults.applied().to_vec();
        let (trace, devices) = platform.trace_and_devices();
        finish_run(
            cfg,
            now,
            outcome,
            until,
            json!({}),
            Parts {
                console: &mut m.console,
                trace,
                devices,
            },
            Counts {
                isa: None,
                seed: m.seed,
                arch: Arch::X86_64,
                exits: m.stats.exits,
                interrupts: Some(m.stats.interrupts),
                instructions: None,
                idle_ns: m.stats.idle_ns,
                restored_from: m.restored_from,
                host: m.host.name(),
                warnings: m.warnings,
                preemption: Some(PREEMPTION),
                wall,
                faults: applied,
                restarts: m.boots.saturating_sub(1),
                stopped_ns: m.stopped_ns,
                promises,
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_and_the_acpi_tables_announce_the_same_slots() {
        // rng, net, blk and the promise channel; without a disk the channel takes slot 2.
        let c = linux_cmdline(true);
        assert!(c.contains(" virtio_mmio.device=4K@0xd0000000:5 virtio_mmio.device=4K@0xd0001000:6 virtio_mmio.device=4K@0xd0002000:7 virtio_mmio.device=4K@0xd0003000:11 root=/dev/vda"), "{c}");
        let c = linux_cmdline(false);
        assert!(c.ends_with(" virtio_mmio.device=4K@0xd0002000:7"), "{c}");
        let s = super::super::platform::virtio_slot(2);
        assert_eq!((s.base, s.size, s.irq), (0xd000_2000, 0x1000, 7));
        let s = super::super::platform::virtio_slot(3);
        assert_eq!((s.base, s.size, s.irq), (0xd000_3000, 0x1000, 11));
    }

    /// Whether /dev/kvm opens read-write; skips `test` if not.
    fn kvm_usable(test: &str) -> bool {
        let ok = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/kvm")
            .is_ok();
        if !ok {
            wio_require::skip(
                test,
                wio_require::Capability::Kvm,
                "/dev/kvm cannot be opened read-write (run on a KVM host, as root or in the kvm group)",
            );
        }
        ok
    }

    fn run(cfg: &RunConfig) -> RunResult {
        let wall = Instant::now();
        let m = boot(cfg, wall).unwrap();
        crate::machine::driver::run(Box::new(m), cfg, wall)
    }

    fn config(kernel: Option<std::path::PathBuf>) -> RunConfig {
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
        if !kvm_usable("bzimage_and_elf_of_the_test_guest_behave_identically") {
            return;
        }
        let dir = std::env::temp_dir().join(format!("wio-vm-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let bz = dir.join("bzImage");
        std::fs::write(&bz, super::super::testguest::X86_64_TEST_GUEST_BZIMAGE).unwrap();
        let elf = run(&config(None));
        let bzimage = run(&config(Some(bz)));
        assert_eq!(elf.outcome.unwrap(), 0);
        assert_eq!(bzimage.outcome.unwrap(), 0);
        assert_eq!(elf.summary.console_sha256, bzimage.summary.console_sha256);
        assert_eq!(elf.summary.virtual_ns, bzimage.summary.virtual_ns);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
