//! riscv64 snapshots: the machine state a snapshot keeps besides guest memory, loading
//! a snapshot once (state decoded and checked, hart caches built, guest memory in a
//! memfd, disk overlays shared), and restoring it any number of times as a machine.

use super::bus::{BusEvent, Power};
use super::layout;
use super::machine::{Pending, RvMachine};
use crate::devices::legacy::serial::UartState;
use crate::devices::riscv::edac::Edac;
use crate::devices::riscv::flight_io::FlightIo;
use crate::devices::riscv::goldfish_rtc::GoldfishRtc;
use crate::devices::riscv::plic::Plic;
use crate::devices::riscv::sdk_port::SdkPort;
use crate::devices::vmgenid::VmGenId;
use crate::error::{Result, SnapshotError, WioError};
use crate::faults::inject::Injector;
use crate::machine::console::ConsoleState;
use crate::machine::noise::{StallsState, TimerNoiseState};
use crate::machine::{
    virtio, Arch, LearnedCode, LoadedSnapshot, Machine, RunConfig, SnapshotOrigin,
};
use crate::memory::layers::Layers;
use crate::promises::Ledger;
use crate::snapshot::persist::{self, Persist, StateError, StateSections};
use crate::snapshot::{memory_runs, Snapshot};
use crate::trace::TraceState;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Instant;
use wio_clock::InstructionClock;
use wio_riscv::{CodeCacheState, HartState};
use wio_virtio_devices::TransportState;

mod restore;
pub use restore::restore;

/// Everything of the machine a snapshot keeps besides guest memory, decoded and checked
/// (each part comes from its own section: see [`MachineState::from_sections`]).
#[derive(Clone)]
pub(super) struct MachineState {
    pub(super) hart: HartState,
    /// The hart's code caches beyond `hart`: unchecked decoded instructions and blocks
    /// (section `code-cache`, since format 7.6, written under WIO_WARM_CACHES=1; files
    /// without it restore with cold caches).
    pub(super) code_cache: Option<CodeCacheState>,
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
    /// What the guest wrote to mcycle and minstret (see `Hart::counter_bias`): section
    /// `counters`, present only when it wrote one (since format 7.4).
    pub(super) counters: [u64; 2],
    /// The vector unit's state (section `vector`, present for harts with the vector
    /// extension; since format 7.4).
    pub(super) vector: Option<wio_riscv::VectorState>,
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
    /// Since format 7.4: only when the guest wrote mcycle or minstret.
    pub const COUNTERS: &str = "counters";
    /// Since format 7.4: only for harts with the vector extension.
    pub const VECTOR: &str = "vector";
    /// Since format 7.6.
    pub const CODE_CACHE: &str = "code-cache";
    /// Every fixed section name.
    pub const ALL: [&str; 21] = [
        HART, CLOCK, UART, RTC, PLIC, EVENTS, FAULTS, TRACE, CONSOLE, NOISE, PROMISES, RUN, FLIGHT,
        SDK_PORT, EDAC, VMGENID, STALLS, PENDING, COUNTERS, VECTOR, CODE_CACHE,
    ];
}

impl MachineState {
    /// Writes every component's state into its own section.
    fn to_sections(&self) -> std::result::Result<StateSections, StateError> {
        let mut s = StateSections::default();
        s.put(section::HART, &self.hart)?;
        if let Some(c) = &self.code_cache {
            s.put(section::CODE_CACHE, c)?;
        }
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
        if self.counters != [0; 2] {
            s.put(section::COUNTERS, &self.counters)?;
        }
        if let Some(v) = &self.vector {
            s.put(section::VECTOR, v)?;
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
            code_cache: s.optional(section::CODE_CACHE)?,
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
            counters: s.optional(section::COUNTERS)?.unwrap_or_default(),
            vector: s.optional(section::VECTOR)?,
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
            // Only for warm restores: a scan of both cache tables and about a fifth more
            // snapshot, which cold restores would not use.
            code_cache: warm_caches().then(|| self.engine.hart.save_code_cache()),
            uart: self.bus.uart.save(),
            rtc: self.bus.rtc.clone(),
            flight: self.bus.flight.clone(),
            sdk_port: self.bus.sdk_port.clone(),
            edac: self.bus.edac.clone(),
            vmgenid: self.bus.vmgenid.clone(),
            counters: self.engine.hart.counter_bias(),
            vector: self.engine.hart.save_vector(),
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
    /// The same with what a branch learned (see [`LoadedSnapshot::learn`]): restores start
    /// with it once it is set.
    pub(super) learned: std::sync::OnceLock<wio_riscv::PreparedHart>,
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
        // The code caches go into the prepared hart when asked for (not kept twice).
        let code = state.code_cache.take().filter(|_| warm_caches());
        let hart = state
            .hart
            .prepare_with(meta.isa, code.as_ref())
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
            learned: std::sync::OnceLock::new(),
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

    fn populate_written(&self) {
        self.memory.populate_written();
    }

    fn learn(&self, code: LearnedCode) -> Result<bool> {
        let Ok(code) = code.0.downcast::<CodeCacheState>() else {
            return Ok(false);
        };
        if self.learned.get().is_some() {
            return Ok(false);
        }
        let isa = self.origin.meta.isa;
        let merged = self.state.hart.with_learned(&code, isa);
        let prepared = self
            .state
            .hart
            .prepare_with(isa, Some(&merged))
            .map_err(|e| WioError::from(crate::error::InternalError::LearnedCode(e)))?;
        Ok(self.learned.set(prepared).is_ok())
    }

    fn learned(&self) -> bool {
        self.learned.get().is_some()
    }
}

/// WIO_WARM_CACHES=1: snapshots keep the hart's code caches (section `code-cache`:
/// unchecked decoded instructions and blocks) and restores start with them (looked up as
/// the hart reaches them) instead of only the decoded instructions checked since the last
/// fence. Same
/// results (a test compares every branch's trace both ways); not the default, since it is
/// not faster yet (measured side by side: idle branches 4 % faster, payment branches 4 to
/// 6 % slower, see docs/snapshots.md).
fn warm_caches() -> bool {
    std::env::var_os("WIO_WARM_CACHES").is_some_and(|v| !v.is_empty() && v != "0")
}
