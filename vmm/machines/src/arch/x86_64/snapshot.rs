//! x86-64 snapshots: the machine state a snapshot keeps besides guest memory (the vCPU,
//! the platform's devices a section each, the console and the run's counters), loading a
//! snapshot once (guest memory in a memfd, the disk checked once), and restoring it any
//! number of times as a machine.

use super::host::HostVirt;
use super::kvm::{KvmEngine, VcpuState};
use super::machine::{host_warnings, kvm_options, X86Machine};
use super::platform::{self, Platform};
use super::run_loop::RunStats;
use super::{acpi, layout};
use crate::devices::vmgenid::VmGenId;
use crate::error::{MemoryError, Result, SnapshotError, WioError};
use crate::machine::config::FaultRestore;
use crate::machine::console::{Console, ConsoleState};
use crate::machine::noise::{SchedNoise, TimerNoise};
use crate::machine::{virtio, Arch, LoadedSnapshot, Machine, RunConfig, SnapshotOrigin};
use crate::memory;
use crate::promises::Ledger;
use crate::snapshot::persist::{self, Persist, StateSections};
use crate::snapshot::{memory_runs, Snapshot};
use crate::summary::RestoredFrom;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Instant;
use vm_memory::{Bytes, GuestAddress, GuestMemoryBackend};
use wio_clock::{CostModel, VirtualTsc, DEFAULT_TSC_HZ};
use wio_scheduler::{stream_names, RunSeed};

/// The sections of an x86-64 snapshot besides the platform's ([`platform::section`]).
mod section {
    pub const VCPU: &str = "vcpu";
    pub const CONSOLE: &str = "console";
    pub const RUN: &str = "run";
    pub const BOOTS: &str = "boots";
    /// The run's promises (machines with the promise channel only: its presence says the
    /// machine has one).
    pub const PROMISES: &str = "promises";
}

/// The machine's own counters (section `run`).
#[derive(Serialize, Deserialize)]
struct RunState {
    exits: Vec<(String, u64)>,
    interrupts: u64,
    idle_ns: u64,
    /// The machine booted a kernel (not the test guest): it warns at the end unless the
    /// kernel announced itself (the announcement is in the platform's `paravirt` section).
    rdtsc_warning: bool,
}

/// What node faults and the vCPUs did to the run so far (section `boots`, written only when
/// there is something to say: another boot, stopped time, or unchecked windows).
#[derive(Serialize, Deserialize, Default)]
struct BootsState {
    /// How many times it booted after the first (crash faults restart it).
    restarts: u32,
    /// Virtual ns its vCPU was stopped by node faults.
    stopped_ns: u64,
    /// Interrupt windows taken unchecked by its vCPUs (see `KvmEngine::shadow_unchecked`).
    shadow_unchecked: u64,
}

/// Refuses a section no x86-64 machine writes.
fn known(name: &str) -> bool {
    [
        section::VCPU,
        section::CONSOLE,
        section::RUN,
        section::BOOTS,
        section::PROMISES,
    ]
    .contains(&name)
        || platform::section::ALL.contains(&name)
        || crate::snapshot::persist::is_indexed(name, platform::section::VIRTIO)
}

impl X86Machine {
    /// The machine's state as a snapshot; `reason` says why it was taken.
    pub(super) fn capture(&mut self, reason: String) -> Result<Snapshot> {
        let vcpu = self.engine.save_vcpu()?;
        let internal = |source| SnapshotError::State {
            what: "machine",
            source,
        };
        let mut state = StateSections::default();
        state.put(section::VCPU, &vcpu).map_err(internal)?;
        self.platform
            .save_sections(&mut state)
            .map_err(SnapshotError::Sections)?;
        state
            .put(section::CONSOLE, &self.console.save())
            .map_err(internal)?;
        let stats = &self.stats;
        state
            .put(
                section::RUN,
                &RunState {
                    exits: stats
                        .exits
                        .iter()
                        .map(|(k, v)| (k.to_string(), *v))
                        .collect(),
                    interrupts: stats.interrupts,
                    idle_ns: stats.idle_ns,
                    rdtsc_warning: self.rdtsc_warning,
                },
            )
            .map_err(internal)?;
        let boots = BootsState {
            restarts: self.boots.saturating_sub(1),
            stopped_ns: self.stopped_ns,
            shadow_unchecked: self.shadow_unchecked_before + self.engine.shadow_unchecked,
        };
        if boots.restarts > 0 || boots.stopped_ns > 0 || boots.shadow_unchecked > 0 {
            state.put(section::BOOTS, &boots).map_err(internal)?;
        }
        if self.platform.has_channel() {
            state
                .save(section::PROMISES, &self.promises)
                .map_err(internal)?;
        }
        if let Some(d) = self.meta.disk.as_mut().filter(|d| d.sha256.is_empty()) {
            d.sha256 =
                crate::snapshot::file_sha256(&d.path).map_err(|source| WioError::ArtifactIo {
                    what: "disk image",
                    path: d.path.clone(),
                    source,
                })?;
        }
        let host = self
            .mem
            .get_host_address(GuestAddress(0))
            .map_err(|source| MemoryError::HostAddress { source })?;
        // SAFETY: `host` is the start of the single mapping of `mem_bytes` bytes `mem` owns;
        // the vCPU is stopped (this runs between two KVM_RUNs on this thread) and the devices
        // run on this thread too, so nothing writes guest memory while it is read.
        let bytes = unsafe { std::slice::from_raw_parts(host, self.meta.mem_bytes as usize) };
        let mut m = self.meta.clone();
        m.seed = self.seed;
        m.virtual_ns = self.platform.clock.now_ns();
        m.reason = reason;
        Ok(Snapshot {
            meta: m,
            state,
            memory: memory_runs(bytes),
            sha256: String::new(),
        })
    }
}

/// An x86-64 snapshot read, checked and ready to restore any number of times (guest
/// memory in a memfd each restore maps copy-on-write; the disk checked once).
pub struct X86Loaded {
    origin: SnapshotOrigin,
    state: StateSections,
    vcpu: VcpuState,
    memfd: std::fs::File,
    disk: Option<PathBuf>,
}

impl X86Loaded {
    /// Reads and checks `path`; `cfg.disk`, if given, must be the snapshot's base image.
    pub fn load(path: &Path, cfg: &RunConfig) -> Result<X86Loaded> {
        X86Loaded::from_snapshot(Snapshot::read(path)?, path, cfg)
    }

    /// Checks `snap`, read from `path` (or from a world snapshot, whose node it is), and
    /// loads it; `cfg.disk`, if given, must be the snapshot's base image.
    pub fn from_snapshot(snap: Snapshot, path: &Path, cfg: &RunConfig) -> Result<X86Loaded> {
        X86Loaded::prepare(snap, path, cfg, None)
    }

    /// `snap`, read from `path` or taken in memory; `own_disk`: the machine that took it
    /// runs on that base disk image, which is then not read and hashed again.
    fn prepare(
        snap: Snapshot,
        path: &Path,
        cfg: &RunConfig,
        own_disk: Option<Option<PathBuf>>,
    ) -> Result<X86Loaded> {
        let meta = snap.meta;
        crate::snapshot::check_machine(
            &meta,
            path,
            Arch::X86_64.name(),
            0,
            layout::MIN_MEM_MIB..=layout::MAX_MEM_MIB,
        )?;
        let bad = |e: crate::snapshot::persist::StateError| WioError::ArtifactFormat {
            what: "snapshot",
            path: path.to_path_buf(),
            reason: e.to_string(),
        };
        snap.state.check_known(known).map_err(bad)?;
        let vcpu = snap.state.get(section::VCPU).map_err(bad)?;
        let disk = match own_disk {
            Some(disk) => disk,
            None => virtio::restore_disk(&meta, cfg)?,
        };
        let memfd = memory::snapshot_memfd(meta.mem_bytes, &snap.memory)?;
        Ok(X86Loaded {
            origin: SnapshotOrigin {
                path: path.to_path_buf(),
                meta,
                sha256: snap.sha256,
            },
            state: snap.state,
            vcpu,
            memfd,
            disk,
        })
    }
}

impl X86Machine {
    /// Its state kept in memory as a loaded snapshot (a guided exploration's moment): the
    /// state a snapshot file would hold, its guest memory copied into a memfd, its disk the
    /// one it runs on (not hashed again).
    pub(super) fn keep_moment(&mut self, cfg: &RunConfig) -> Result<Box<dyn LoadedSnapshot>> {
        let disk = self.meta.disk.as_ref().map(|d| d.path.clone());
        let from = cfg.from.clone().unwrap_or_else(|| "moment".into());
        let snap = self.capture("moment".into())?;
        Ok(Box::new(X86Loaded::prepare(snap, &from, cfg, Some(disk))?))
    }
}

impl LoadedSnapshot for X86Loaded {
    fn origin(&self) -> &SnapshotOrigin {
        &self.origin
    }

    fn restore(&self, cfg: &RunConfig, wall: Instant) -> Result<Box<dyn Machine>> {
        Ok(Box::new(restore(self, cfg, wall)?))
    }
}

/// A branch with a seed of its own is a new generation of the machine: a new ID where the
/// ACPI tables say, and the Generic Event Device's interrupt, so the kernel reseeds its
/// CRNG before its programs draw from it again (a kernel without the driver leaves the
/// line masked and never reads the bytes). Traced with the re-keying.
fn new_generation(
    platform: &mut Platform,
    mem: &memory::GuestMem,
    from: u64,
    RunSeed(s): RunSeed,
    now: u64,
) -> Result<()> {
    platform
        .trace
        .event(now, "reseed", json!({ "from": from, "seed": s }));
    let g = VmGenId::drawn(RunSeed(s), now);
    mem.write_slice(&g.id(), GuestAddress(layout::VMGENID_ADDR))
        .map_err(|source| MemoryError::Write {
            what: "the VM generation ID",
            addr: layout::VMGENID_ADDR,
            source,
        })?;
    platform.pic.raise(acpi::VMGENID_IRQ);
    platform
        .trace
        .event(now, "vmgenid", json!({ "id": crate::trace::hex(&g.id()) }));
    Ok(())
}

/// The platform's fault injector after the restore: its future re-drawn or replaced as
/// `restore` asks, the queue's fault events with it.
fn restore_faults(platform: &mut Platform, cfg: &RunConfig, restore: FaultRestore) -> Result<()> {
    let mut faults = std::mem::take(&mut platform.faults);
    let replaced = cfg.restore_faults(&mut faults, restore, &mut platform.trace)?;
    platform.faults = faults;
    if let Some(r) = &replaced {
        platform.replace_fault_events(r);
    }
    Ok(())
}

/// A machine in the state `l` recorded, run with `cfg`'s seed, outputs and limits.
pub fn restore(l: &X86Loaded, cfg: &RunConfig, wall: Instant) -> Result<X86Machine> {
    let path = &l.origin.path;
    let bad = |reason: String| WioError::ArtifactFormat {
        what: "snapshot",
        path: path.to_path_buf(),
        reason,
    };
    let meta = l.origin.meta.clone();
    let run: RunState = l.state.get(section::RUN).map_err(|e| bad(e.to_string()))?;
    let boots: BootsState = l
        .state
        .optional(section::BOOTS)
        .map_err(|e| bad(e.to_string()))?
        .unwrap_or_default();
    let saved_console: ConsoleState = l
        .state
        .get(section::CONSOLE)
        .map_err(|e| bad(e.to_string()))?;
    let disk = match &l.disk {
        Some(p) => virtio::open_disk(&RunConfig {
            disk: Some(p.clone()),
            ..cfg.clone()
        })?,
        None => None,
    };
    let mem = memory::map_private(0, meta.mem_bytes, &l.memfd)?;
    let host = HostVirt::detect();
    let engine = KvmEngine::restore(&mem, &l.vcpu, kvm_options(cfg))?;
    let warnings = host_warnings(&engine, &host);
    let (seed, reseed) = meta.restore_seed(cfg.seed_given.then_some(cfg.seed));
    let trace = crate::trace::open(cfg.trace.as_ref())?;
    let mut platform = Platform::new(
        meta.epoch_unix,
        meta.mem_bytes,
        VirtualTsc::new(DEFAULT_TSC_HZ),
        RunSeed(meta.seed).stream(stream_names::PARAVIRT_ENTROPY),
        // Replaced by the snapshot's (level and stream) in load_sections.
        TimerNoise::new(SchedNoise::Off, RunSeed(meta.seed)),
        trace,
    );
    let device_cfg = RunConfig {
        link: meta.link(),
        ..cfg.clone()
    };
    let promises: Option<Ledger> = persist::restore_optional(&l.state, section::PROMISES, ())
        .map_err(|e| bad(e.to_string()))?;
    let channel = if promises.is_some() {
        virtio::Channel::Sdk
    } else {
        virtio::Channel::None
    };
    let mut devices = virtio::devices(&device_cfg, RunSeed(meta.seed), disk, channel)?;
    virtio::answer_control_at_kick(&mut devices);
    platform.attach_virtio(devices, mem.clone());
    platform
        .load_sections(&l.state, reseed)
        .map_err(|e| bad(e.to_string()))?;
    let now = platform.clock.now_ns();
    if let Some(s) = reseed {
        new_generation(&mut platform, &mem, meta.seed, s, now)?;
    }
    // `--sched-noise` on a restore: that level from here on, drawn from the run's seed.
    if cfg.sched_noise_given && cfg.sched_noise != platform.noise_level() {
        let from = platform.noise_level();
        platform.trace.event(
            now,
            "sched-noise",
            json!({ "level": cfg.sched_noise.name(), "from": from.name() }),
        );
        platform.set_noise(TimerNoise::new(cfg.sched_noise, RunSeed(seed)));
    }
    let restore = FaultRestore {
        seed: RunSeed(seed),
        reseeded: reseed.is_some(),
        now_ns: now,
        has: platform::fault_targets(meta.disk.is_some()),
    };
    restore_faults(&mut platform, cfg, restore)?;
    let console = Console::restore(Console::new(cfg.echo(), wall), &saved_console)
        .map_err(|e| bad(format!("has a `console` section this machine refuses: {e}")))?;
    let known = wio_clock::ExitCost::ALL.map(|c| c.name());
    let exits = crate::snapshot::exit_counts(&run.exits, &known, &bad)?;
    Ok(X86Machine {
        engine,
        platform,
        console,
        stats: RunStats {
            exits,
            interrupts: run.interrupts,
            idle_ns: run.idle_ns,
            parked: None,
        },
        cost: CostModel::default(),
        watchdog_ms: cfg.watchdog_ms,
        restored_from: Some(RestoredFrom {
            path: path.display().to_string(),
            virtual_ns: meta.virtual_ns,
            instructions: None,
            seed: meta.seed,
        }),
        debug_paused: false,
        meta,
        mem,
        host,
        warnings,
        rdtsc_warning: run.rdtsc_warning,
        seed,
        promises: promises.unwrap_or_default(),
        stop_on_violation: cfg.stop_on_violation,
        marks: None,
        boots: boots.restarts.saturating_add(1),
        stopped_ns: boots.stopped_ns,
        shadow_unchecked_before: boots.shadow_unchecked,
    })
}
