//! Restoring a loaded riscv64 snapshot as a machine, any number of times: every part
//! checked as untrusted input, the branch's disk and devices re-keyed from its seed, the
//! fault plan's future re-drawn when asked.

use super::{section, MachineState, RvLoaded, EXIT_KINDS};
use crate::arch::riscv64::boot::hart_on;
use crate::arch::riscv64::bus::{BusEvent, RvBus};
use crate::arch::riscv64::clock;
use crate::arch::riscv64::cold_boot::check_drift;
use crate::arch::riscv64::engine::RiscvEngine;
use crate::arch::riscv64::layout;
use crate::arch::riscv64::machine::RvMachine;
use crate::devices::legacy::serial::Uart16550;
use crate::devices::riscv::flight_io::FlightIo;
use crate::devices::riscv::plic::Plic;
use crate::devices::riscv::sdk_port::SdkPort;
use crate::devices::virtio_slots::{VirtioEvent, VirtioSlots};
use crate::devices::vmgenid::VmGenId;
use crate::error::{Result, WioError};
use crate::faults::inject::{Injector, Replaced};
use crate::faults::plan::Targets;
use crate::machine::config::FaultRestore;
use crate::machine::console::Console;
use crate::machine::noise::{self, SchedNoise, Stalls, TimerNoise};
use crate::machine::{virtio, RunConfig};
use crate::snapshot::persist::{self, Persist};
use crate::summary::RestoredFrom;
use crate::trace::Trace;
use serde_json::json;
use std::path::Path;
use std::time::Instant;
use wio_clock::InstructionClock;
use wio_scheduler::{EventQueue, RunSeed};
use wio_virtio_devices::Block;

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
    let disk = l.disk.as_deref().map(open_disk).transpose()?;
    let mem = l.memory.map(meta.mem_base)?;
    let mut hart = restore_hart(l, &mem, &bad)?;

    let (seed, reseed) = meta.restore_seed(cfg.seed_given.then_some(cfg.seed));
    let device_cfg = RunConfig {
        link: meta.link(),
        ..cfg.clone()
    };
    let devices = restore_virtio(l, &device_cfg, disk, reseed, &bad)?;
    let events = restore_events(state, devices.len(), &bad)?;
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
    let restore = FaultRestore {
        seed: RunSeed(seed),
        reseeded: reseed.is_some(),
        now_ns,
        has: Targets {
            disk: l.disk.is_some(),
            node: true,
            ram: true,
        },
    };
    let (faults, replaced) = restore_injector(state, cfg, restore, &mut trace)?;
    let (uart, console) = restore_console(state, cfg, wall, &bad)?;
    let exits = crate::snapshot::exit_counts(&state.run.exits, &EXIT_KINDS, &bad)?;
    let mut m = RvMachine {
        engine: RiscvEngine::new(hart, clk),
        bus: RvBus {
            uart,
            rtc: state.rtc.clone(),
            plic,
            virtio: VirtioSlots::new(devices, mem.clone()),
            events,
            faults,
            quiet: Vec::new(),
            mmio_accesses: state.run.mmio_accesses,
            trace,
            now_ns: 0,
            power: state.run.power,
            upsets: Vec::new(),
            stuck: Vec::new(),
            test_request: None,
            flight: rekeyed(&state.flight, reseed, FlightIo::rekey),
            sdk_port: rekeyed(&state.sdk_port, reseed, SdkPort::rekey),
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
        restored_from: Some(restored_from(l)),
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

/// The hart on the branch's memory, in the state the snapshot keeps (its caches prepared
/// at load), counting coverage as the exploration asks.
fn restore_hart(
    l: &RvLoaded,
    mem: &crate::memory::GuestMem,
    bad: &dyn Fn(String) -> WioError,
) -> Result<wio_riscv::Hart> {
    let mut hart = hart_on(mem, l.origin.meta.mem_bytes, 0)?;
    hart.load_prepared(l.learned.get().unwrap_or(&l.hart))
        .map_err(|e| bad(format!("has a hart state this machine refuses: {e}")))?;
    hart.set_counter_bias(l.state.counters);
    match (&l.state.vector, hart.isa().vlen()) {
        (Some(v), _) => hart
            .load_vector(v)
            .map_err(|e| bad(format!("has a `vector` section this machine refuses: {e}")))?,
        (None, Some(_)) => {
            return Err(bad(
                "has no `vector` section, but its machine has the vector extension".into(),
            ))
        }
        (None, None) => {}
    }
    hart.set_coverage(l.coverage.clone());
    Ok(hart)
}

/// What the summary says the run was restored from.
fn restored_from(l: &RvLoaded) -> RestoredFrom {
    let meta = &l.origin.meta;
    RestoredFrom {
        path: l.origin.path.display().to_string(),
        virtual_ns: meta.virtual_ns,
        instructions: meta.instructions,
        seed: meta.seed,
    }
}

/// The fault injector as the snapshot left it, with the branch's own future faults when
/// its seed or profile differs (the replaced events for the queue).
fn restore_injector(
    state: &MachineState,
    cfg: &RunConfig,
    restore: FaultRestore,
    trace: &mut Trace,
) -> Result<(Injector, Option<Replaced>)> {
    let mut faults = state.faults.clone();
    let replaced = cfg.restore_faults(&mut faults, restore, trace)?;
    Ok((faults, replaced))
}

/// The UART and the console's recorder as the snapshot left them.
fn restore_console(
    state: &MachineState,
    cfg: &RunConfig,
    wall: Instant,
    bad: &dyn Fn(String) -> WioError,
) -> Result<(Uart16550, Console)> {
    let uart = Uart16550::restore((), &state.uart)
        .map_err(|e| bad(format!("has a `uart` section this machine refuses: {e}")))?;
    let console = Console::restore(Console::new(cfg.echo(), wall), &state.console)
        .map_err(|e| bad(format!("has a `console` section this machine refuses: {e}")))?;
    Ok((uart, console))
}

/// The branch's disk (its overlay over the snapshot's base image).
fn open_disk(path: &Path) -> Result<wio_virtio_devices::Disk> {
    wio_virtio_devices::Disk::open(path).map_err(|e| WioError::ArtifactFormat {
        what: "disk image",
        path: path.to_path_buf(),
        reason: e.to_string(),
    })
}

/// The event queue as the snapshot left it, checked: every device event names a device
/// the machine has (`slots` virtio slots) or a fault of its plan.
fn restore_events(
    state: &MachineState,
    slots: usize,
    bad: &dyn Fn(String) -> WioError,
) -> Result<EventQueue<BusEvent>> {
    let events = EventQueue::from_parts(state.events.events.clone(), state.events.next_seq)
        .map_err(|e| bad(format!("has an `events` section this machine refuses: {e}")))?;
    if events
        .iter()
        .any(|(_, _, ev)| !event_ok(ev, slots, &state.faults))
    {
        return Err(bad(
            "has an `events` section with a device event for an empty slot".into(),
        ));
    }
    Ok(events)
}

/// A copy of an optional device, its stream re-keyed when the branch has a seed of its own.
fn rekeyed<T: Clone>(
    device: &Option<T>,
    reseed: Option<RunSeed>,
    rekey: fn(&mut T, RunSeed),
) -> Option<T> {
    device.clone().map(|mut d| {
        if let Some(s) = reseed {
            rekey(&mut d, s);
        }
        d
    })
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
            crate::arch::riscv64::machine::arm_timer(&clk, hart, &mut timer_noise, timecmp);
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
