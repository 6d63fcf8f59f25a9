//! riscv64 snapshots: the machine state a snapshot keeps besides guest memory, loading
//! a snapshot once (state decoded and checked, hart caches built, guest memory in a
//! memfd, disk overlays shared), and restoring it any number of times as a machine.

use super::boot::hart_on;
use super::bus::{BusEvent, Power, RvBus};
use super::clock;
use super::engine::RiscvEngine;
use super::layout;
use super::machine::{check_drift, Pending, RvMachine};
use crate::devices::legacy::serial::{Uart16550, UartState};
use crate::devices::riscv::edac::Edac;
use crate::devices::riscv::flight_io::FlightIo;
use crate::devices::riscv::goldfish_rtc::GoldfishRtc;
use crate::devices::riscv::plic::Plic;
use crate::devices::riscv::sdk_port::SdkPort;
use crate::devices::virtio_slots::{VirtioEvent, VirtioSlots};
use crate::devices::vmgenid::VmGenId;
use crate::error::{Result, SnapshotError, WioError};
use crate::faults::inject::Injector;
use crate::faults::plan::Targets;
use crate::machine::config::FaultRestore;
use crate::machine::console::{Console, ConsoleState};
use crate::machine::noise::{self, SchedNoise, Stalls, StallsState, TimerNoise, TimerNoiseState};
use crate::machine::{virtio, Arch, LoadedSnapshot, Machine, RunConfig, SnapshotOrigin};
use crate::memory::layers::Layers;
use crate::promises::Ledger;
use crate::snapshot::persist::{self, Persist, StateError, StateSections};
use crate::snapshot::{memory_runs, Snapshot};
use crate::summary::RestoredFrom;
use crate::trace::{Trace, TraceState};
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;
use wio_clock::InstructionClock;
use wio_riscv::HartState;
use wio_scheduler::{EventQueue, RunSeed};
use wio_virtio_devices::{Block, TransportState};

/// Everything of the machine a snapshot keeps besides guest memory, decoded and checked
/// (each part comes from its own section: see [`MachineState::from_sections`]).
#[derive(Clone)]
pub(super) struct MachineState {
    pub(super) hart: HartState,
    pub(super) uart: UartState,
    pub(super) rtc: GoldfishRtc,
    pub(super) plic: Plic,
    pub(super) virtio: Vec<TransportState>,
    pub(super) events: EventsState,
    pub(super) faults: Injector,
    pub(super) trace: TraceState,
    pub(super) console: ConsoleState,
    pub(super) noise: TimerNoiseState,
    /// Where the CPU stalls (absent from format 7.0 and 7.1 snapshots).
    pub(super) stalls: Option<StallsState>,
    /// What the next step does first (section `pending`, present only when it does
    /// something; since format 7.2).
    pub(super) pending: Pending,
    pub(super) promises: Ledger,
    /// The machine's clock (its drift and where it was last re-keyed).
    pub(super) clock: InstructionClock,
    pub(super) run: RunState,
    /// The flight I/O board (M-mode guests).
    pub(super) flight: Option<FlightIo>,
    /// The bare-metal promise port (M-mode guests).
    pub(super) sdk_port: Option<SdkPort>,
    /// The EDAC unit (ECC memory).
    pub(super) edac: Option<Edac>,
    /// The VM generation ID (kernels; absent from format 7.0 snapshots, whose device tree
    /// does not list it).
    pub(super) vmgenid: Option<VmGenId>,
}

/// The bus's event queue as a snapshot keeps it: (virtual ns, sequence, event) and the
/// next sequence number.
#[derive(Clone, Serialize, Deserialize)]
pub(super) struct EventsState {
    pub(super) events: Vec<(u64, u64, BusEvent)>,
    pub(super) next_seq: u64,
}

/// The machine's own counters and where it stands (section `run`).
#[derive(Clone, Serialize, Deserialize)]
pub(super) struct RunState {
    pub(super) mmio_accesses: u64,
    pub(super) exits: Vec<(String, u64)>,
    pub(super) idle_ns: u64,
    pub(super) power: Power,
    pub(super) boots: u32,
    pub(super) instret_before: u64,
    pub(super) stopped_ns: u64,
    /// Where it is parked (virtual ns; see [`Machine::parked_until`]).
    pub(super) parked: Option<u64>,
}

/// The sections of a riscv64 snapshot's machine state, one per component, in the order
/// written; `virtio.N` (one per slot) follow `plic`.
pub(super) mod section {
    pub const HART: &str = "hart";
    pub const CLOCK: &str = "clock";
    pub const UART: &str = "uart";
    pub const RTC: &str = "rtc";
    pub const PLIC: &str = "plic";
    pub const VIRTIO: &str = "virtio.";
    pub const EVENTS: &str = "events";
    pub const FAULTS: &str = "faults";
    pub const TRACE: &str = "trace";
    pub const CONSOLE: &str = "console";
    pub const NOISE: &str = "noise";
    pub const PROMISES: &str = "promises";
    pub const RUN: &str = "run";
    pub const FLIGHT: &str = "flight";
    pub const SDK_PORT: &str = "sdk-port";
    pub const EDAC: &str = "edac";
    /// Since format 7.1.
    pub const VMGENID: &str = "vmgenid";
    /// Since format 7.2.
    pub const STALLS: &str = "stalls";
    /// Since format 7.2: only when the next step idles the hart or fires due events.
    pub const PENDING: &str = "pending";
    /// Every fixed section name.
    pub const ALL: [&str; 18] = [
        HART, CLOCK, UART, RTC, PLIC, EVENTS, FAULTS, TRACE, CONSOLE, NOISE, PROMISES, RUN, FLIGHT,
        SDK_PORT, EDAC, VMGENID, STALLS, PENDING,
    ];
}

impl MachineState {
    /// Writes every component's state into its own section.
    fn to_sections(&self) -> std::result::Result<StateSections, StateError> {
        let mut s = StateSections::default();
        s.put(section::HART, &self.hart)?;
        s.put(section::CLOCK, &self.clock)?;
        s.put(section::UART, &self.uart)?;
        s.save(section::RTC, &self.rtc)?;
        s.save(section::PLIC, &self.plic)?;
        s.put_indexed(section::VIRTIO, &self.virtio)?;
        s.put(section::EVENTS, &self.events)?;
        s.save(section::FAULTS, &self.faults)?;
        s.put(section::TRACE, &self.trace)?;
        s.put(section::CONSOLE, &self.console)?;
        s.put(section::NOISE, &self.noise)?;
        if let Some(st) = &self.stalls {
            s.put(section::STALLS, st)?;
        }
        if self.pending != Pending::None {
            s.put(section::PENDING, &self.pending)?;
        }
        s.save(section::PROMISES, &self.promises)?;
        s.put(section::RUN, &self.run)?;
        if let Some(f) = &self.flight {
            s.save(section::FLIGHT, f)?;
        }
        if let Some(p) = &self.sdk_port {
            s.save(section::SDK_PORT, p)?;
        }
        if let Some(e) = &self.edac {
            s.save(section::EDAC, e)?;
        }
        if let Some(g) = &self.vmgenid {
            s.save(section::VMGENID, g)?;
        }
        Ok(s)
    }

    /// Reads every component's state from its section, each checked by its component;
    /// a section missing, unknown, unreadable or refused is named in the error.
    fn from_sections(s: &StateSections) -> std::result::Result<MachineState, StateError> {
        s.check_known(|name| {
            section::ALL.contains(&name) || persist::is_indexed(name, section::VIRTIO)
        })?;
        Ok(MachineState {
            hart: s.get(section::HART)?,
            clock: s.get(section::CLOCK)?,
            uart: s.get(section::UART)?,
            rtc: persist::restore(s, section::RTC, ())?,
            plic: persist::restore(s, section::PLIC, ())?,
            virtio: s.indexed(section::VIRTIO)?,
            events: s.get(section::EVENTS)?,
            faults: persist::restore(s, section::FAULTS, ())?,
            trace: s.get(section::TRACE)?,
            console: s.get(section::CONSOLE)?,
            noise: s.get(section::NOISE)?,
            stalls: s.optional(section::STALLS)?,
            pending: s.optional(section::PENDING)?.unwrap_or_default(),
            promises: persist::restore(s, section::PROMISES, ())?,
            run: s.get(section::RUN)?,
            flight: persist::restore_optional(s, section::FLIGHT, ())?,
            sdk_port: persist::restore_optional(s, section::SDK_PORT, ())?,
            edac: persist::restore_optional(s, section::EDAC, ())?,
            vmgenid: persist::restore_optional(s, section::VMGENID, ())?,
        })
    }
}

/// Exit kinds the summary counts (snapshots name them; they must be static for the summary).
pub(super) const EXIT_KINDS: [&str; 4] = ["wfi", "sbi", "mmio", "mtimecmp"];

impl RvMachine {
    /// The machine's state as a snapshot; `reason` says why it was taken.
    pub(super) fn capture(&mut self, reason: String) -> Result<Snapshot> {
        let mut snap = self.capture_state(reason)?;
        snap.memory = memory_runs(self.engine.hart.ram.bytes());
        Ok(snap)
    }

    /// [`RvMachine::capture`] without the guest memory (left empty).
    fn capture_state(&mut self, reason: String) -> Result<Snapshot> {
        let virtio = self
            .bus
            .virtio
            .save_states()
            .map_err(SnapshotError::Devices)?;
        let state = MachineState {
            hart: self.engine.hart.save_state(),
            uart: self.bus.uart.save(),
            rtc: self.bus.rtc.clone(),
            flight: self.bus.flight.clone(),
            sdk_port: self.bus.sdk_port.clone(),
            edac: self.bus.edac.clone(),
            vmgenid: self.bus.vmgenid.clone(),
            plic: self.bus.plic.clone(),
            virtio,
            events: EventsState {
                events: self
                    .bus
                    .events
                    .iter()
                    .map(|(t, s, e)| (t, s, e.clone()))
                    .collect(),
                next_seq: self.bus.events.next_seq(),
            },
            faults: self.bus.faults.clone(),
            trace: self.bus.trace.save(),
            console: self.console.save(),
            noise: self.noise.save(),
            stalls: Some(self.stalls.save()),
            pending: self.pending,
            promises: self.promises.clone(),
            clock: self.engine.clock,
            run: RunState {
                mmio_accesses: self.bus.mmio_accesses,
                exits: self
                    .exits
                    .iter()
                    .map(|(k, v)| (k.to_string(), *v))
                    .collect(),
                idle_ns: self.idle_ns,
                power: self.bus.power,
                boots: self.boots,
                instret_before: self.instret_before,
                stopped_ns: self.stopped_ns,
                parked: self.parked.map(wio_clock::VirtualTime::as_ns),
            },
        };
        if let Some(d) = self.meta.disk.as_mut().filter(|d| d.sha256.is_empty()) {
            d.sha256 =
                crate::snapshot::file_sha256(&d.path).map_err(|source| WioError::ArtifactIo {
                    what: "disk image",
                    path: d.path.clone(),
                    source,
                })?;
        }
        let mut meta = self.meta.clone();
        meta.seed = self.seed;
        meta.virtual_ns = self.now().as_ns();
        meta.instructions = Some(self.instructions());
        meta.reason = reason;
        Ok(Snapshot {
            meta,
            state: state.to_sections().map_err(|source| SnapshotError::State {
                what: "machine",
                source,
            })?,
            memory: Vec::new(),
            sha256: String::new(),
        })
    }
}

impl RvMachine {
    /// Its state kept in memory as a loaded snapshot (a guided exploration's moment), with
    /// the code coverage counted so far.
    ///
    /// Its guest memory is kept copy-on-write where it can be: the pages written since the
    /// restore, as one more layer over those the machine's memory is a view of (see
    /// [`Layers`]); else (no such view, or too many layers) copied whole.
    pub(super) fn keep_moment(&mut self, cfg: &RunConfig) -> Result<Box<dyn LoadedSnapshot>> {
        // WIO_MOMENTS=copy copies every moment's memory whole (same results, more memory):
        // for comparisons and as an escape hatch should the layers be suspected.
        let copy = std::env::var_os("WIO_MOMENTS").is_some_and(|v| v == "copy");
        let layered = match &self.memory_view {
            Some(view) if !copy => view.with_written(self.engine.hart.ram.bytes())?,
            _ => None,
        };
        let disk = self.meta.disk.as_ref().map(|d| d.path.clone());
        let from = cfg.from.clone().unwrap_or_else(|| "moment".into());
        let mut l = match layered {
            Some(memory) => {
                let snap = self.capture_state("moment".into())?;
                RvLoaded::from_own_layers(snap, &from, cfg, disk, memory)?
            }
            None => RvLoaded::from_own_snapshot(self.capture("moment".into())?, &from, cfg, disk)?,
        };
        // The counts go with the moment; what was fresh was taken at this boundary (or, in
        // a replay, never observed): the moment's children start with nothing fresh.
        l.coverage = self.engine.hart.coverage().cloned().map(|mut c| {
            c.take_fresh();
            c
        });
        Ok(Box::new(l))
    }
}

/// A snapshot read, checked and ready to restore any number of times: its state
/// decoded, its guest memory in memfds that every restore maps copy-on-write (one for a
/// snapshot; a moment's are layered over its parent's, see [`Layers`]), its
/// disk (if any) checked once to be the image the snapshot was taken on.
pub struct RvLoaded {
    origin: SnapshotOrigin,
    state: MachineState,
    memory: Layers,
    /// The verified base disk image.
    disk: Option<PathBuf>,
    /// Disk overlays by virtio slot, shared by every restore (copy-on-write per chunk).
    overlays: Vec<(usize, wio_virtio_devices::block::Overlay)>,
    /// The hart state checked and its caches built once.
    hart: wio_riscv::PreparedHart,
    /// A guided exploration's moment: the code coverage its branch had counted, which
    /// every restore counts on from (not part of the state: files never hold it).
    pub(super) coverage: Option<wio_riscv::Coverage>,
}

impl RvLoaded {
    /// Reads and checks `path`; `cfg.disk`, if given, must be the snapshot's base image.
    pub fn load(path: &Path, cfg: &RunConfig) -> Result<RvLoaded> {
        RvLoaded::from_snapshot(Snapshot::read(path)?, path, cfg)
    }

    /// Checks and prepares a snapshot already read (`path` names it in errors and
    /// summaries: a world snapshot's node is `WORLD.snap#NAME`).
    pub fn from_snapshot(snap: Snapshot, path: &Path, cfg: &RunConfig) -> Result<RvLoaded> {
        RvLoaded::prepare(snap, path, cfg, None, None)
    }

    /// A snapshot this process just took of its own machine (a debugger's checkpoint),
    /// whose base disk image (`disk`) is the one the machine runs on: not hashed again.
    pub(super) fn from_own_snapshot(
        snap: Snapshot,
        path: &Path,
        cfg: &RunConfig,
        disk: Option<PathBuf>,
    ) -> Result<RvLoaded> {
        RvLoaded::prepare(snap, path, cfg, Some(disk), None)
    }

    /// `snap` (whose memory is left empty) with its guest memory as `memory`: a
    /// guided exploration's moment kept copy-on-write.
    pub(super) fn from_own_layers(
        snap: Snapshot,
        path: &Path,
        cfg: &RunConfig,
        disk: Option<PathBuf>,
        memory: Layers,
    ) -> Result<RvLoaded> {
        RvLoaded::prepare(snap, path, cfg, Some(disk), Some(memory))
    }

    fn prepare(
        snap: Snapshot,
        path: &Path,
        cfg: &RunConfig,
        known_disk: Option<Option<PathBuf>>,
        memory: Option<Layers>,
    ) -> Result<RvLoaded> {
        let bad = |reason: String| WioError::ArtifactFormat {
            what: "snapshot",
            path: path.to_path_buf(),
            reason,
        };
        let meta = snap.meta;
        crate::snapshot::check_machine(
            &meta,
            path,
            Arch::Riscv64.name(),
            layout::RAM_BASE,
            layout::MIN_MEM_MIB..=layout::MAX_MEM_MIB,
        )?;
        let mut state = MachineState::from_sections(&snap.state).map_err(|e| bad(e.to_string()))?;
        let mut overlays = Vec::new();
        for (slot, saved) in state.virtio.iter_mut().enumerate() {
            if let Some(overlay) = saved.take_block_overlay().map_err(|e| {
                bad(format!(
                    "has a `{}{slot}` section this machine refuses: {e}",
                    section::VIRTIO
                ))
            })? {
                overlays.push((slot, overlay));
            }
        }
        let hart = state
            .hart
            .prepare()
            .map_err(|e| bad(format!("has a hart state this machine refuses: {e}")))?;
        let from_file = known_disk.is_none();
        let disk = match known_disk {
            Some(disk) => disk,
            None => virtio::restore_disk(&meta, cfg)?,
        };
        // A snapshot file's pages are an exploration's root layer (see `Layers::own_bytes`).
        let memory = match memory {
            Some(m) => m,
            None => Layers::from_runs(meta.mem_bytes, &snap.memory, from_file)?,
        };
        Ok(RvLoaded {
            coverage: None,
            hart,
            origin: SnapshotOrigin {
                path: path.to_path_buf(),
                meta,
                sha256: snap.sha256,
            },
            state,
            memory,
            disk,
            overlays,
        })
    }
}

impl LoadedSnapshot for RvLoaded {
    fn origin(&self) -> &SnapshotOrigin {
        &self.origin
    }

    fn restore(&self, cfg: &RunConfig, wall: Instant) -> Result<Box<dyn Machine>> {
        Ok(Box::new(restore(self, cfg, wall)?))
    }

    fn resident_bytes(&self) -> u64 {
        self.memory.own_bytes()
    }
}

fn event_ok(ev: &BusEvent, slots: usize, faults: &Injector) -> bool {
    match ev {
        BusEvent::Virtio(VirtioEvent::Complete(slot, _, _) | VirtioEvent::Timer(slot, _)) => {
            *slot < slots
        }
        BusEvent::Fault(index, _) => faults.has(*index),
        BusEvent::Watchdog(_) => true,
    }
}

/// A machine in the state `l` recorded, run with `cfg` (its seed, outputs and
/// limits; the guest and its devices come from the snapshot). With a seed other than
/// the snapshot's, every stream is re-keyed from that seed: the past is shared, the
/// future differs. The fault plan's future is re-drawn or replaced as
/// [`crate::faults::on_restore`] says (same seed, no fault flag: untouched). Guest
/// memory is a private copy-on-write mapping of the loaded snapshot's pages, so a
/// restore costs what the run then writes.
///
/// What a re-seeded restore changes for the guest, measured on the small guest (seed 1,
/// snapshot at `console:wio-init: start`, 91.7 ms, before the workload reads any random
/// bytes; restored with seeds 1, 7 and 8, default light timing noise, no faults):
///
/// - Differ from the first event on: every device completion and timer (the first
///   virtio-rng completion lands at 94.14 / 94.17 / 94.16 ms), every WFI wake-up (all 519
///   at other times), hence timer-interrupt timing, ping round trips (0.269 0.138 0.130 /
///   0.263 0.155 0.145 / 0.257 0.151 0.148 ms), CLOCK_MONOTONIC at the probe (2.117616500
///   / 2.117634400 / 2.117638600 s), the run's length (2,227,710,456 / 2,227,705,834 ns).
/// - Differ later: the probe's `getrandom` bytes at about 2.1 s (`3d 74 93 82 ..` /
///   `3e 7d 77 13 ..` / `96 81 0c c9 ..`) and its ASLR addresses (stack, brk, mmap):
///   by then the kernel has reseeded its CRNG from the input pool, into which the new
///   interrupt timings (the `time` CSR, virtual time here) and hwrng bytes were mixed.
/// - Differ at once, through the VM generation ID: a re-seeded restore draws a new ID and
///   pulses its interrupt, and the kernel reseeds its CRNG before the workload reads it
///   (`random: crng reseeded due to virtual machine fork`): the 16 `/dev/urandom` bytes
///   read 2.5 ms after the restore (snapshot of seed 3 at 96.0 ms, restored with seeds 1, 7,
///   8: `c2 e4 ec df ..` / `60 c5 74 7d ..` / `3b 54 a3 cf ..`; before the device every seed
///   read the same bytes).
/// - Stay the same: the first 16 `/dev/hwrng` bytes (`de 4b 41 de ..`): they were already
///   in guest memory (the virtio-rng driver keeps a request's bytes buffered ahead of
///   reads), although the device's own stream is re-keyed (later requests get the new
///   seed's bytes). Whatever the guest drew before the snapshot (KASLR, stack canaries,
///   hash seeds, running processes' AT_RANDOM) necessarily stays: the seed changes the
///   future's inputs, not the state it starts from.
///
/// The same seed twice gives the same trace hash; seed 1 continues the original run
/// bit for bit.
pub fn restore(l: &RvLoaded, cfg: &RunConfig, wall: Instant) -> Result<RvMachine> {
    let bad = |reason: String| WioError::ArtifactFormat {
        what: "snapshot",
        path: l.origin.path.clone(),
        reason,
    };
    let meta = &l.origin.meta;
    // Borrowed: a branch copies only the small parts it owns (restores must be cheap).
    let state = &l.state;
    let disk =
        match &l.disk {
            Some(path) => Some(wio_virtio_devices::Disk::open(path).map_err(|e| {
                WioError::ArtifactFormat {
                    what: "disk image",
                    path: path.clone(),
                    reason: e.to_string(),
                }
            })?),
            None => None,
        };
    let mem = l.memory.map(meta.mem_base)?;
    let mut hart = hart_on(&mem, meta.mem_bytes, 0)?;
    hart.load_prepared(&l.hart)
        .map_err(|e| bad(format!("has a hart state this machine refuses: {e}")))?;
    hart.set_coverage(l.coverage.clone());

    let (seed, reseed) = meta.restore_seed(cfg.seed_given.then_some(cfg.seed));
    let device_cfg = RunConfig {
        link: meta.link(),
        ..cfg.clone()
    };
    let devices = restore_virtio(l, &device_cfg, disk, reseed, &bad)?;
    let events = EventQueue::from_parts(state.events.events.clone(), state.events.next_seq)
        .map_err(|e| bad(format!("has an `events` section this machine refuses: {e}")))?;
    if events
        .iter()
        .any(|(_, _, ev)| !event_ok(ev, devices.len(), &state.faults))
    {
        return Err(bad(
            "has an `events` section with a device event for an empty slot".into(),
        ));
    }
    let now_ns = clock::now(&state.clock, &hart).as_ns();
    let trace = crate::trace::open(cfg.trace.as_ref())?;
    let mut trace = persist::infallible(Trace::restore(trace, &state.trace));
    let Rekeyed {
        noise: timer_noise,
        clock: clk,
        plic,
        vmgenid,
        stalls,
    } = rekey(
        state,
        cfg,
        (meta.seed, seed, reseed),
        &mut hart,
        now_ns,
        &mut trace,
    )?;
    let mut faults = state.faults.clone();
    let replaced = cfg.restore_faults(
        &mut faults,
        FaultRestore {
            seed: RunSeed(seed),
            reseeded: reseed.is_some(),
            now_ns,
            has: Targets {
                disk: l.disk.is_some(),
                node: true,
            },
        },
        &mut trace,
    )?;
    let uart = Uart16550::restore((), &state.uart)
        .map_err(|e| bad(format!("has a `uart` section this machine refuses: {e}")))?;
    let console = Console::restore(Console::new(cfg.echo(), wall), &state.console)
        .map_err(|e| bad(format!("has a `console` section this machine refuses: {e}")))?;
    let exits = exit_counts(&state.run.exits, &bad)?;
    let mut m = RvMachine {
        engine: RiscvEngine::new(hart, clk),
        bus: RvBus {
            uart,
            rtc: state.rtc.clone(),
            plic,
            virtio: VirtioSlots::new(devices, mem.clone()),
            events,
            faults,
            mmio_accesses: state.run.mmio_accesses,
            trace,
            now_ns: 0,
            power: state.run.power,
            upsets: Vec::new(),
            stuck: Vec::new(),
            test_request: None,
            flight: state.flight.clone().map(|mut b| {
                if let Some(s) = reseed {
                    b.rekey(s);
                }
                b
            }),
            sdk_port: state.sdk_port.clone().map(|mut p| {
                if let Some(s) = reseed {
                    p.rekey(s);
                }
                p
            }),
            edac: state.edac.clone(),
            vmgenid,
        },
        console,
        exits,
        idle_ns: state.run.idle_ns,
        noise: timer_noise,
        stalls,
        pending: state.pending,
        seed,
        meta: meta.clone(),
        restored_from: Some(RestoredFrom {
            path: l.origin.path.display().to_string(),
            virtual_ns: meta.virtual_ns,
            instructions: meta.instructions,
            seed: meta.seed,
        }),
        image: None,
        boots: state.run.boots.max(1),
        instret_before: state.run.instret_before,
        stopped_ns: state.run.stopped_ns,
        promises: state.promises.clone(),
        stop_on_violation: cfg.stop_on_violation,
        parked: state.run.parked.map(wio_clock::VirtualTime::from_ns),
        slice_until: None,
        debug_paused: false,
        marks: None,
        memory_view: Some(l.memory.clone()),
    };
    m.bus.now_ns = m.engine.now().as_ns();
    if let Some(r) = &replaced {
        m.bus.replace_fault_events(r);
    }
    Ok(m)
}

/// The machine's virtio devices as the snapshot left them (re-keyed with `reseed`), with
/// the branch's disk overlays in their slots.
fn restore_virtio(
    l: &RvLoaded,
    device_cfg: &RunConfig,
    disk: Option<wio_virtio_devices::Disk>,
    reseed: Option<RunSeed>,
    bad: &dyn Fn(String) -> WioError,
) -> Result<Vec<wio_virtio_devices::MmioTransport>> {
    let state = &l.state;
    let snapshot_seed = l.origin.meta.seed;
    let mut devices = virtio::devices(
        device_cfg,
        RunSeed(snapshot_seed),
        disk,
        virtio::Channel::Sdk,
    )?;
    if devices.len() != state.virtio.len() {
        return Err(bad(format!(
            "has {} virtio devices where this machine has {}",
            state.virtio.len(),
            devices.len()
        )));
    }
    for (slot, (t, saved)) in devices.iter_mut().zip(&state.virtio).enumerate() {
        t.load_state(saved, reseed).map_err(|e| {
            bad(format!(
                "has a `{}{slot}` section this machine refuses: {e}",
                section::VIRTIO
            ))
        })?;
    }
    for (slot, overlay) in &l.overlays {
        let block = devices
            .get_mut(*slot)
            .and_then(|t| t.device_mut().as_any_mut().downcast_mut::<Block>())
            .ok_or_else(|| {
                bad(format!(
                    "has a disk overlay for slot {slot}, which holds no disk"
                ))
            })?;
        block.disk_mut().set_overlay(overlay.clone());
    }
    Ok(devices)
}

/// What a restore re-keys when the branch has its own seed, noise level or drift.
struct Rekeyed {
    noise: TimerNoise,
    clock: InstructionClock,
    plic: Plic,
    vmgenid: Option<VmGenId>,
    stalls: Stalls,
}

/// The timing a restore goes on with, in this order (each change traced): the re-seed,
/// a new noise level, a new VM generation ID (and its interrupt), a new clock drift, the
/// armed timer's latency drawn again, and the CPU stalls from the branch point.
fn rekey(
    state: &MachineState,
    cfg: &RunConfig,
    (snapshot_seed, seed, reseed): (u64, u64, Option<RunSeed>),
    hart: &mut wio_riscv::Hart,
    now_ns: u64,
    trace: &mut Trace,
) -> Result<Rekeyed> {
    let mut timer_noise = persist::infallible(TimerNoise::restore(reseed, &state.noise));
    let mut clk = state.clock;
    if let Some(RunSeed(s)) = reseed {
        // The branch's trace says where its future was re-keyed.
        trace.event(
            now_ns,
            "reseed",
            json!({ "from": snapshot_seed, "seed": s }),
        );
    }
    // `--sched-noise` on a restore: that level from here on, drawn from the run's seed.
    let noise_changed = cfg.sched_noise_given && cfg.sched_noise != timer_noise.level();
    if noise_changed {
        trace.event(
            now_ns,
            "sched-noise",
            json!({ "level": cfg.sched_noise.name(), "from": timer_noise.level().name() }),
        );
        timer_noise = TimerNoise::new(cfg.sched_noise, RunSeed(seed));
    }
    // A branch is a new generation of the machine: a new ID, and its interrupt, so the
    // kernel reseeds its CRNG before its programs draw from it again.
    let mut plic = state.plic.clone();
    let vmgenid = match (&state.vmgenid, reseed) {
        (Some(_), Some(seed)) => {
            let g = VmGenId::drawn(seed, now_ns);
            plic.pulse(layout::VMGENID_IRQ);
            trace.event(
                now_ns,
                "vmgenid",
                json!({ "id": crate::trace::hex(&g.id()) }),
            );
            Some(g)
        }
        (g, _) => g.clone(),
    };
    // The new seed's drift from here on (the snapshot's level: off stays 0 and untraced),
    // or the fixed drift the configuration gives.
    let level = timer_noise.level();
    let new_ppm = match (cfg.clock_drift_ppm, reseed) {
        (Some(ppm), _) => (ppm != state.clock.drift_ppm()).then_some(ppm),
        (None, Some(seed)) if level != SchedNoise::Off => Some(noise::drift_ppm(level, seed)),
        // A new level (with or without a new seed): that level's drift for the run's seed
        // (off: none).
        (None, _) if noise_changed => Some(noise::drift_ppm(level, RunSeed(seed))),
        (None, _) => None,
    };
    if let Some(ppm) = new_ppm {
        check_drift(ppm)?;
        clk = clock::rekeyed(&clk, hart, ppm)?;
        trace.event(
            now_ns,
            "clock-drift",
            json!({ "ppm": ppm, "from_ppm": state.clock.drift_ppm() }),
        );
    }
    // A branch draws the latency of a timer the guest armed before the branch point again:
    // the interrupt has not happened, so when it lands is the branch's future (else every
    // branch of a moment kept during a sleep wakes on the same instruction).
    if reseed.is_some() && hart.timecmp != u64::MAX {
        let due = hart.timecmp.saturating_mul(layout::CYCLES_PER_TICK);
        if due > hart.cycles() {
            let timecmp = hart.timecmp;
            super::machine::arm_timer(&clk, hart, &mut timer_noise, timecmp);
        }
    }
    // Stalls: the snapshot's go on for its own seed; a branch (another seed) or another
    // level draws its own from the branch point. A snapshot without them (older than
    // format 7.2) goes on without stalls.
    let instructions = state.run.instret_before.saturating_add(hart.instret());
    let stalls = match (reseed, &state.stalls) {
        (Some(s), _) => Stalls::branched(level, s, instructions, now_ns),
        (None, _) if noise_changed => Stalls::new(level, RunSeed(seed), instructions),
        (None, Some(st)) => persist::infallible(Stalls::restore((), st)),
        (None, None) => Stalls::none(RunSeed(seed)),
    };
    Ok(Rekeyed {
        noise: timer_noise,
        clock: clk,
        plic,
        vmgenid,
        stalls,
    })
}

/// The exit counts a snapshot's `run` section keeps, by the names wio counts.
fn exit_counts(
    saved: &[(String, u64)],
    bad: &dyn Fn(String) -> WioError,
) -> Result<BTreeMap<&'static str, u64>> {
    let mut exits = BTreeMap::new();
    for (k, v) in saved {
        let kind = EXIT_KINDS.iter().find(|e| **e == k).ok_or_else(|| {
            bad(format!(
                "has a `run` section that counts an unknown exit kind {k:?}"
            ))
        })?;
        exits.insert(*kind, *v);
    }
    Ok(exits)
}
