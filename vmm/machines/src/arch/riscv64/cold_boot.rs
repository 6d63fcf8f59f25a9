//! A riscv64 machine booted cold from its configuration: the memory size and clock
//! drift checked, the kernel, initrd and firmware read, memory, hart and devices made,
//! the image loaded and the boot traced. (Loading the image and building the device tree
//! are `boot`'s; a machine that reboots after a power cut reuses its image, see `power`.)

use super::boot::{fdt_rng_seed, hart_on, BootImage, Placement};
use super::bus::{Power, RvBus};
use super::clock;
use super::engine::RiscvEngine;
use super::layout;
use super::machine::{Pending, RvMachine, DEFAULT_CMDLINE};
use crate::devices::legacy::serial::Uart16550;
use crate::devices::riscv::edac::Edac;
use crate::devices::riscv::flight_io::FlightIo;
use crate::devices::riscv::goldfish_rtc::GoldfishRtc;
use crate::devices::riscv::plic::Plic;
use crate::devices::riscv::sdk_port::SdkPort;
use crate::devices::virtio_slots::VirtioSlots;
use crate::devices::vmgenid::VmGenId;
use crate::error::{MachineError, Result, WioError};
use crate::faults::{self, plan::Targets};
use crate::machine::console::Console;
use crate::machine::noise::{self, SchedNoise, Stalls, TimerNoise};
use crate::machine::{guests, virtio, Arch, BootMeta, RunConfig};
use crate::promises::Ledger;
use crate::snapshot::Meta;
use crate::trace::{hex, Trace};
use serde_json::json;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;
use wio_scheduler::{EventQueue, RunSeed};

/// Checks a fixed clock drift a configuration gives.
pub(super) fn check_drift(ppm: i32) -> Result<()> {
    if ppm.abs() > wio_clock::MAX_DRIFT_PPM {
        return Err(MachineError::Drift {
            ppm,
            max: wio_clock::MAX_DRIFT_PPM,
        }
        .into());
    }
    Ok(())
}

/// Checks the memory size a configuration asks for.
fn check_mem(cfg: &RunConfig) -> Result<()> {
    if !(layout::MIN_MEM_MIB..=layout::MAX_MEM_MIB).contains(&cfg.mem_mib) {
        return Err(MachineError::Mem {
            mib: cfg.mem_mib,
            arch: "riscv64",
            min: layout::MIN_MEM_MIB,
            max: layout::MAX_MEM_MIB,
        }
        .into());
    }
    Ok(())
}

/// What a boot reads from the host before it builds the machine: the kernel, the initrd
/// (with a root disk, a built guest boots from the disk instead of its initramfs; an
/// explicit `--initrd` wins), the command line, and the firmware if any.
struct Artifacts {
    kernel_path: PathBuf,
    kernel: Vec<u8>,
    initrd_path: Option<PathBuf>,
    initrd: Option<Vec<u8>>,
    cmdline: String,
    firmware: Option<(PathBuf, Vec<u8>)>,
}

impl Artifacts {
    fn read(cfg: &RunConfig, has_disk: bool) -> Result<Artifacts> {
        let (kernel_path, initrd_path) = match &cfg.kernel {
            Some(k) => (k.clone(), cfg.initrd.clone()),
            None => guests::RISCV64.boot_files(
                cfg.guest.as_deref().unwrap_or("small"),
                cfg.initrd.as_ref(),
                has_disk,
            )?,
        };
        let kernel = std::fs::read(&kernel_path).map_err(|source| WioError::ArtifactIo {
            what: "kernel",
            path: kernel_path.clone(),
            source,
        })?;
        let initrd = match &initrd_path {
            Some(p) => {
                let bytes = std::fs::read(p).map_err(|source| WioError::ArtifactIo {
                    what: "initrd",
                    path: p.clone(),
                    source,
                })?;
                crate::initrd::check(p, &bytes)?;
                Some(bytes)
            }
            None => None,
        };
        let cmdline = cfg.kernel_cmdline(|| {
            if has_disk {
                format!("{DEFAULT_CMDLINE} root=/dev/vda rw rootfstype=ext4 init=/init")
            } else {
                DEFAULT_CMDLINE.to_string()
            }
        });

        let firmware = match &cfg.firmware {
            Some(p) => Some((
                p.clone(),
                std::fs::read(p).map_err(|source| WioError::ArtifactIo {
                    what: "firmware",
                    path: p.clone(),
                    source,
                })?,
            )),
            None => None,
        };
        Ok(Artifacts {
            kernel_path,
            kernel,
            initrd_path,
            initrd,
            cmdline,
            firmware,
        })
    }
}

/// The boot's first trace events: `start` (seed, memory, the images' hashes, the command
/// line, where things were placed), and for M-mode guests `m-mode` (only for them, so the
/// traces of supervisor kernels stay as they were).
fn trace_boot(
    trace: &mut Trace,
    cfg: &RunConfig,
    image: &BootImage,
    placement: &Placement,
    pc: u64,
    (kernel_sha256, initrd_sha256, firmware_sha256): (&str, &Option<String>, &Option<String>),
) {
    trace.event(
        0,
        "start",
        json!({
            "seed": cfg.seed,
            "arch": "riscv64",
            "mem_mib": cfg.mem_mib,
            "kernel_sha256": kernel_sha256,
            "initrd_sha256": initrd_sha256,
            "cmdline": image.cmdline,
            "disk": virtio::disk_json(cfg),
            "entry": placement.entry,
            "kernel_end": placement.kernel_end,
            "initrd_at": placement.initrd.map(|(start, end)| json!({ "start": start, "end": end })),
            "fdt": placement.fdt_addr,
        }),
    );
    if image.m_mode() {
        // Only for M-mode guests, so the traces of supervisor kernels stay as they were.
        trace.event(
            0,
            "m-mode",
            json!({
                "firmware_sha256": firmware_sha256,
                "bare_metal": image.bare_metal(),
                "pc": pc,
            }),
        );
    }
}

/// The devices of a machine booting `image`: powered on, at time 0, nothing pending;
/// the M-mode devices for an M-mode guest, the EDAC unit with `--ecc`.
fn booting_bus(
    cfg: &RunConfig,
    image: &BootImage,
    seed: RunSeed,
    virtio: VirtioSlots,
    faults: faults::inject::Injector,
    trace: Trace,
    vmgenid: Option<VmGenId>,
) -> RvBus {
    RvBus {
        uart: Uart16550::default(),
        rtc: GoldfishRtc::new(cfg.epoch_unix.max(0) as u64),
        plic: Plic::default(),
        virtio,
        events: EventQueue::new(),
        faults,
        quiet: Vec::new(),
        mmio_accesses: 0,
        trace,
        now_ns: 0,
        power: Power::On,
        upsets: Vec::new(),
        stuck: Vec::new(),
        test_request: None,
        flight: image.m_mode().then(|| FlightIo::new(seed)),
        sdk_port: image.m_mode().then(|| SdkPort::new(seed)),
        edac: cfg.ecc.then(Edac::default),
        vmgenid,
    }
}

/// The clock drift of a booting machine (`--clock-drift-ppm`, else drawn from the seed at
/// the noise level), checked and traced.
fn drift_at_boot(cfg: &RunConfig, seed: RunSeed, trace: &mut Trace) -> Result<i32> {
    let drift = cfg
        .clock_drift_ppm
        .unwrap_or_else(|| noise::drift_ppm(cfg.sched_noise, seed));
    check_drift(drift)?;
    if cfg.sched_noise != SchedNoise::Off {
        // Only when on, so `--sched-noise off` reproduces the traces of wio before noise.
        trace.event(0, "sched-noise", json!({ "level": cfg.sched_noise.name() }));
    }
    if cfg.sched_noise != SchedNoise::Off || cfg.clock_drift_ppm.is_some() {
        trace.event(0, "clock-drift", json!({ "ppm": drift }));
    }
    Ok(drift)
}

/// What a booted machine's snapshots record of how it was booted: its artifacts' paths
/// (canonical where they resolve) and SHA-256s, its command line.
fn boot_meta(
    cfg: &RunConfig,
    (kernel_path, initrd_path): (PathBuf, Option<PathBuf>),
    (kernel_sha256, initrd_sha256, firmware_sha256): (String, Option<String>, Option<String>),
    cmdline: String,
) -> Meta {
    let canonical = |p: PathBuf| std::fs::canonicalize(&p).unwrap_or(p);
    Meta {
        kernel_path: Some(canonical(kernel_path)),
        initrd_path: initrd_path.map(canonical),
        firmware_path: cfg.firmware.clone().map(canonical),
        firmware_sha256,
        ecc: cfg.ecc,
        isa: cfg.isa,
        ..cfg.boot_meta(BootMeta {
            arch: Arch::Riscv64,
            mem_base: layout::RAM_BASE,
            kernel_sha256,
            initrd_sha256,
            cmdline,
        })
    }
}

impl RvMachine {
    /// Builds the machine a configuration describes and boots its kernel.
    pub fn boot(cfg: &RunConfig, wall: Instant) -> Result<RvMachine> {
        check_mem(cfg)?;
        let disk = virtio::open_disk(cfg)?;
        let faults = cfg.fault_injector(Targets {
            disk: disk.is_some(),
            node: true,
            ram: true,
        })?;
        let Artifacts {
            kernel_path,
            kernel,
            initrd_path,
            initrd,
            cmdline,
            firmware,
        } = Artifacts::read(cfg, disk.is_some())?;
        let trace = crate::trace::open(cfg.trace.as_ref())?;

        let mem_bytes = cfg.mem_mib << 20;
        let mem = crate::memory::allocate(layout::RAM_BASE, mem_bytes)?;
        let mut hart = hart_on(&mem, mem_bytes, 0)?;
        let seed = RunSeed(cfg.seed);
        let devices = virtio::devices(cfg, seed, disk, virtio::Channel::Sdk)?;
        let image = BootImage {
            kernel_path: kernel_path.clone(),
            kernel,
            initrd: initrd_path.clone().zip(initrd),
            cmdline: cmdline.clone(),
            virtio_slots: devices.len(),
            firmware,
            ecc: cfg.ecc,
            isa: cfg.isa,
        };
        // Kernels (with wio's SBI or a firmware) get a VM generation ID, so the CRNG of every
        // branch of a snapshot is reseeded; a bare-metal program reads no device tree.
        let vmgenid = (!image.bare_metal()).then(|| VmGenId::drawn(seed, 0));
        let placement = image.load_into(
            &mut hart,
            mem_bytes,
            &fdt_rng_seed(seed, 1),
            vmgenid.is_some(),
        )?;
        let hart_pc = hart.pc;
        let kernel = &image.kernel;
        let initrd = image.initrd.as_ref().map(|(_, b)| b);
        let kernel_sha256 = hex(&Sha256::digest(kernel));
        let initrd_sha256 = initrd.as_ref().map(|b| hex(&Sha256::digest(b)));
        let firmware_sha256 = image
            .firmware
            .as_ref()
            .map(|(_, b)| hex(&Sha256::digest(b)));
        let virtio = VirtioSlots::new(devices, mem.clone());
        let mut bus = booting_bus(cfg, &image, seed, virtio, faults, trace, vmgenid);
        trace_boot(
            &mut bus.trace,
            cfg,
            &image,
            &placement,
            hart_pc,
            (&kernel_sha256, &initrd_sha256, &firmware_sha256),
        );
        bus.schedule_faults();
        let drift = drift_at_boot(cfg, seed, &mut bus.trace)?;
        Ok(RvMachine {
            engine: RiscvEngine::new(hart, clock::drifting(drift)?),
            bus,
            console: Console::new(cfg.echo(), wall),
            exits: BTreeMap::new(),
            idle_ns: 0,
            noise: TimerNoise::new(cfg.sched_noise, seed),
            stalls: Stalls::new(cfg.sched_noise, seed, 0),
            pending: Pending::None,
            seed: cfg.seed,
            meta: boot_meta(
                cfg,
                (kernel_path, initrd_path),
                (kernel_sha256, initrd_sha256, firmware_sha256),
                cmdline,
            ),
            restored_from: None,
            image: Some(Arc::new(image)),
            boots: 1,
            instret_before: 0,
            stopped_ns: 0,
            promises: Ledger::default(),
            stop_on_violation: cfg.stop_on_violation,
            parked: None,
            slice_until: None,
            debug_paused: false,
            marks: None,
            memory_view: None,
        })
    }
}
