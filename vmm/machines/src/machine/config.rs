//! What defines a run: its configuration (with the seed and the guest artifacts, the whole
//! of its inputs) and what it produces (its summary and outcome).

use super::console::Echo;
use super::Arch;
use crate::error::Result;
use crate::faults::inject::{Injector, Replaced};
use crate::snapshot::plan::SnapshotPlan;
use crate::snapshot::{DiskMeta, Meta};
use crate::summary::Summary;
use std::path::PathBuf;

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
    /// M-mode firmware (riscv64: e.g. OpenSBI's fw_dynamic.bin) started before the
    /// kernel instead of wio's built-in SBI.
    pub firmware: Option<PathBuf>,
    /// riscv64: RAM is SECDED ECC memory with an EDAC unit.
    pub ecc: bool,
    /// riscv64: the hart's optional extensions beyond RV64GC (`--isa`).
    pub isa: wio_riscv::Isa,
    /// Kernel command line; `None` picks a default for the kernel.
    pub cmdline: Option<String>,
    /// Arguments added at the end of the command line, the default one or `cmdline`
    /// (`--append`: `wio.NAME=VALUE` settings for the workload without restating the rest).
    pub append: Option<String>,
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
    pub snapshots: SnapshotPlan,
    /// Restore this snapshot instead of booting.
    pub from: Option<PathBuf>,
    /// Whether `seed` was given (a restore without one keeps the snapshot's seed).
    pub seed_given: bool,
    /// Stop the run at the first console line containing this text.
    pub until: Option<String>,
    /// Give the machine a network port instead of the built-in peer: its guest's frames
    /// leave through [`super::Machine::take_frames`] and others come in through
    /// [`super::Machine::deliver_frame`] (machines of one simulation share a network so).
    pub net_port: bool,
    /// Give the promise channel a third port, `wio.composer`: the test composer's line
    /// protocol with the guest's agent (image nodes of a world; see
    /// [`super::Machine::take_composer_lines`]).
    pub composer: bool,
    /// The network device's MAC address (`None`: the default one); machines sharing a
    /// simulated switch each have their own.
    pub mac: Option<[u8; 6]>,
    /// Keep the console's lines for the caller instead of printing them (a world prints
    /// them prefixed with the node's name).
    pub capture_console: bool,
    /// CPU-timing noise from the seed (a restored run keeps its snapshot's unless
    /// `sched_noise_given`).
    pub sched_noise: super::noise::SchedNoise,
    /// The command line gave `--sched-noise`: a restored run takes that level from the
    /// snapshot point on.
    pub sched_noise_given: bool,
    /// End the run at the first violated `always` promise.
    pub stop_on_violation: bool,
    /// Whether failed promises fail the run (false: a world judges its nodes' promises
    /// together, so a promise one node states and another meets is not a failure).
    pub judge_promises: bool,
    /// A fixed clock drift in ppm (riscv64: its oscillator against virtual time), in
    /// place of the one the seed draws from the noise level. A restore given one keeps it
    /// (or re-keys to it) whatever the seed; without one, a re-seeded restore draws anew.
    pub clock_drift_ppm: Option<i32>,
    /// Where the fault plan comes from. A restored run keeps its snapshot's plan when
    /// this is `None` (re-drawing its future from the snapshot's profile when the seed
    /// changes); a profile or plan replaces the snapshot's future faults.
    pub faults: crate::faults::FaultSource,
    /// Where to write the fault plan the run drew or was given (a restored run: the
    /// plan it goes on with, the snapshot's past faults and its own future ones).
    pub fault_plan_out: Option<PathBuf>,
    /// The host link the network's peer serves (`wio run --net host`), if any.
    pub host: Option<crate::hostlink::SharedLink>,
}

impl RunConfig {
    /// The fault injector of a machine booted from this configuration (with a disk or
    /// not), its plan written to `fault_plan_out` when asked.
    pub fn fault_injector(&self, has: crate::faults::plan::Targets) -> Result<Injector> {
        let injector = self
            .faults
            .injector(wio_scheduler::RunSeed(self.seed), has)?;
        self.write_fault_plan(&injector)?;
        Ok(injector)
    }

    /// The faults of a machine restored at `now_ns` from a snapshot whose injector is
    /// `injector`, now running with `seed` (`reseeded`: not the snapshot's): see
    /// [`crate::faults::on_restore`]. Returns the replacement, if the plan changed, for
    /// the machine to swap the events of its queue; writes the plan the run goes on
    /// with to `fault_plan_out` when asked.
    pub fn restore_faults(
        &self,
        injector: &mut Injector,
        restore: FaultRestore,
        trace: &mut crate::trace::Trace,
    ) -> Result<Option<Replaced>> {
        let r = crate::faults::on_restore(
            injector,
            &self.faults,
            restore.seed,
            restore.reseeded,
            restore.now_ns,
            restore.has,
            trace,
        )?;
        self.write_fault_plan(injector)?;
        Ok(r)
    }

    fn write_fault_plan(&self, injector: &Injector) -> Result<()> {
        match &self.fault_plan_out {
            Some(path) => injector.plan().write(path),
            None => Ok(()),
        }
    }

    /// A configuration with nothing but `seed` set: the default guest, 256 MiB, epoch 0,
    /// no outputs, no console, no limits, the default link. Tools and branches start here.
    pub fn with_seed(seed: u64) -> RunConfig {
        RunConfig {
            seed,
            kernel: None,
            guest: None,
            initrd: None,
            firmware: None,
            ecc: false,
            isa: wio_riscv::Isa::default(),
            cmdline: None,
            append: None,
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
            net_port: false,
            composer: false,
            mac: None,
            capture_console: false,
            sched_noise: super::noise::SchedNoise::default(),
            sched_noise_given: false,
            stop_on_violation: false,
            judge_promises: true,
            clock_drift_ppm: None,
            faults: crate::faults::FaultSource::None,
            fault_plan_out: None,
            host: None,
        }
    }
}

impl RunConfig {
    /// The kernel command line: `cmdline` if given, else `default()`, then `append`.
    pub fn kernel_cmdline(&self, default: impl FnOnce() -> String) -> String {
        let base = self.cmdline.clone().unwrap_or_else(default);
        match self.append.as_deref().map(str::trim) {
            Some(extra) if !extra.is_empty() && base.is_empty() => extra.to_string(),
            Some(extra) if !extra.is_empty() => format!("{base} {extra}"),
            _ => base,
        }
    }
}

/// Where a restored machine stands, for [`RunConfig::restore_faults`].
#[derive(Debug, Clone, Copy)]
pub struct FaultRestore {
    /// The seed it runs with.
    pub seed: wio_scheduler::RunSeed,
    /// Whether that is another seed than the snapshot's.
    pub reseeded: bool,
    /// Its virtual time.
    pub now_ns: u64,
    /// What it has (disk faults are drawn only with a disk, node faults only where the
    /// machine takes them).
    pub has: crate::faults::plan::Targets,
}

/// What a booted machine's snapshots say it is, before time, seed and reason are filled in.
pub struct BootMeta {
    /// The machine's architecture.
    pub arch: Arch,
    /// Guest-physical base of RAM.
    pub mem_base: u64,
    /// SHA-256 of the kernel it booted.
    pub kernel_sha256: String,
    /// SHA-256 of its initrd.
    pub initrd_sha256: Option<String>,
    /// The kernel command line it booted with.
    pub cmdline: String,
}

impl RunConfig {
    /// Where the guest's console goes besides the trace.
    pub fn echo(&self) -> Echo {
        if self.capture_console {
            Echo::Capture
        } else if self.quiet {
            Echo::Quiet
        } else {
            Echo::Stdout
        }
    }

    /// The metadata of a machine booted from this configuration (its disk hashed only
    /// when a snapshot is taken, so runs that take none do not pay for it).
    pub fn boot_meta(&self, boot: BootMeta) -> Meta {
        Meta {
            arch: boot.arch.name().into(),
            wio_version: env!("CARGO_PKG_VERSION").into(),
            seed: self.seed,
            virtual_ns: 0,
            instructions: None,
            reason: String::new(),
            mem_base: boot.mem_base,
            mem_bytes: self.mem_mib << 20,
            kernel_sha256: boot.kernel_sha256,
            initrd_sha256: boot.initrd_sha256,
            cmdline: boot.cmdline,
            epoch_unix: self.epoch_unix,
            disk: self.disk.as_ref().map(|p| DiskMeta {
                path: std::fs::canonicalize(p).unwrap_or_else(|_| p.clone()),
                len: std::fs::metadata(p).map(|m| m.len()).unwrap_or(0),
                sha256: String::new(),
            }),
            link: Meta::link_fields(&self.link),
            kernel_path: None,
            initrd_path: None,
            firmware_path: None,
            firmware_sha256: None,
            ecc: false,
            isa: wio_riscv::Isa::default(),
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

#[cfg(test)]
mod tests {
    use super::RunConfig;

    #[test]
    fn appended_arguments_follow_the_default_or_the_given_command_line() {
        let mut cfg = RunConfig::with_seed(1);
        assert_eq!(
            cfg.kernel_cmdline(|| "console=ttyS0".into()),
            "console=ttyS0"
        );
        cfg.append = Some(" wio.promises=demo ".into());
        assert_eq!(
            cfg.kernel_cmdline(|| "console=ttyS0".into()),
            "console=ttyS0 wio.promises=demo"
        );
        assert_eq!(cfg.kernel_cmdline(String::new), "wio.promises=demo");
        cfg.cmdline = Some("quiet".into());
        assert_eq!(
            cfg.kernel_cmdline(|| unreachable!("--cmdline was given")),
            "quiet wio.promises=demo"
        );
        cfg.append = Some("  ".into());
        assert_eq!(cfg.kernel_cmdline(String::new), "quiet");
    }
}
