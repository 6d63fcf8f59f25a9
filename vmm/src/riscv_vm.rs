//! Building and running one riscv64 VM on wio's interpreter: RAM, the
//! device tree, kernel and initrd, the UART and PLIC, SBI, and the run loop.
//!
//! Time is the hart's cycle count (one instruction = one virtual ns); WFI
//! jumps it to the next timer deadline, so idle time costs nothing.

use crate::arch::riscv64::{boot, fdt, layout};
use crate::devices::legacy::serial::{Uart16550, UartState};
use crate::devices::riscv::goldfish_rtc::GoldfishRtc;
use crate::devices::riscv::plic::Plic;
use crate::devices::virtio_slots::{Scheduled, VirtioEvent, VirtioSlots};
use crate::engine::riscv::RiscvEngine;
use crate::engine::{CpuEngine, Exit, ExitHandler};
use crate::error::{Result, WioError, MAX_GUEST_STATUS};
use crate::memory::GuestMem;
use crate::sbi::{self, SbiEffect};
use crate::snapshot::plan::SnapshotAt;
use crate::snapshot::sha::ResumableSha256;
use crate::snapshot::{file_sha256, memory_runs, DiskMeta, Meta, Snapshot};
use crate::summary::{Marker, Summary};
use crate::trace::{hex, Trace, TraceState};
use crate::vm::{RunConfig, RunResult};
use serde::{Deserialize, Serialize};
use serde_json::json;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;
use vm_memory::{GuestAddress, GuestMemoryBackend};
use wio_riscv::{Hart, HartState, Ram};
use wio_scheduler::EventQueue;
use wio_scheduler::RunSeed;
use wio_virtio_devices::Block;

/// Kernel arguments used when `--cmdline` is not given.
/// ASLR stays on: its randomness comes from the device tree's rng-seed, so it is a function
/// of the seed like every other guest-visible value.
pub const DEFAULT_CMDLINE: &str =
    "console=ttyS0 earlycon=sbi kfence.sample_interval=0 panic=-1 random.trust_cpu=off";

/// Console lines whose first appearance the summary times (virtual and wall).
pub const MARKERS: [&str; 3] = [
    "Run /init as init process",
    "wio-init: start",
    "wio-init: done",
];

/// Virtual ns a run slice may last before the loop flushes the console and checks limits.
const SLICE_NS: u64 = 20_000_000;

/// The console line a riscv64 guest prints to report its exit status before powering off.
pub const STATUS_MARKER: &str = "wio-init: done status=";

/// The devices behind the hart.
struct RvBus {
    uart: Uart16550,
    rtc: GoldfishRtc,
    plic: Plic,
    /// virtio-mmio slots in use (slot i raises PLIC source i + 1).
    virtio: VirtioSlots,
    /// Device completions and timers at their virtual times.
    events: EventQueue<VirtioEvent>,
    mmio_accesses: u64,
    trace: Trace,
    /// Virtual time of the access being served (reported by the engine).
    now_ns: u64,
}

/// PLIC source of virtio slot `slot`.
fn virtio_irq(slot: usize) -> u32 {
    slot as u32 + 1
}

fn in_window(addr: u64, base: u64, size: u64) -> bool {
    (base..base + size).contains(&addr)
}

fn le(data: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    let n = data.len().min(8);
    b[..n].copy_from_slice(&data[..n]);
    u64::from_le_bytes(b)
}

impl RvBus {
    fn uart_irq(&mut self) {
        if self.uart.take_irq() {
            self.plic.pulse(layout::UART_IRQ);
        }
    }

    fn virtio_slot(addr: u64) -> Option<(usize, u64)> {
        in_window(
            addr,
            layout::VIRTIO_BASE,
            u64::from(layout::VIRTIO_SLOTS) * layout::VIRTIO_SIZE,
        )
        .then(|| {
            let rel = addr - layout::VIRTIO_BASE;
            (
                (rel / layout::VIRTIO_SIZE) as usize,
                rel % layout::VIRTIO_SIZE,
            )
        })
    }

    fn update_virtio_line(&mut self, slot: usize) {
        self.plic
            .set_level(virtio_irq(slot), self.virtio.interrupt_level(slot));
    }

    fn schedule(&mut self, events: Scheduled) {
        for (due, ev) in events {
            // Devices bound their requests and timers (queue sizes, inbox limit): overflow is a wio bug.
            self.events
                .push(due, ev)
                .expect("device event queue overflow");
        }
    }

    /// Performs every device event due at `now_ns`, in (time, sequence) order.
    fn fire_due_events(&mut self, now_ns: u64) {
        while let Some(ev) = self.events.pop_due(now_ns) {
            let (slot, next) = self
                .virtio
                .fire(ev.event, ev.time_ns, now_ns, &mut self.trace);
            self.schedule(next);
            self.update_virtio_line(slot);
        }
    }
}

impl ExitHandler for RvBus {
    fn pio_read(&mut self, _port: u16, data: &mut [u8]) {
        data.fill(0xff); // RISC-V has no port I/O
    }

    fn pio_write(&mut self, _port: u16, _data: &[u8]) {}

    fn mmio_claims(&self, addr: u64) -> bool {
        in_window(addr, layout::RTC_BASE, layout::RTC_SIZE)
            || in_window(addr, layout::UART_BASE, layout::UART_SIZE)
            || in_window(addr, layout::PLIC_BASE, layout::PLIC_SIZE)
            || in_window(
                addr,
                layout::VIRTIO_BASE,
                u64::from(layout::VIRTIO_SLOTS) * layout::VIRTIO_SIZE,
            )
    }

    fn mmio_read(&mut self, addr: u64, data: &mut [u8]) {
        self.mmio_accesses += 1;
        let word = data.len() == 4;
        let v = if in_window(addr, layout::RTC_BASE, layout::RTC_SIZE) && word {
            u64::from(self.rtc.read(addr - layout::RTC_BASE, self.now_ns))
        } else if in_window(addr, layout::UART_BASE, 8) {
            let v = u64::from(self.uart.read((addr - layout::UART_BASE) as u8));
            self.uart_irq();
            v
        } else if in_window(addr, layout::PLIC_BASE, layout::PLIC_SIZE) && word {
            u64::from(self.plic.read(addr - layout::PLIC_BASE))
        } else if let Some((slot, offset)) =
            Self::virtio_slot(addr).filter(|(slot, _)| *slot < self.virtio.len())
        {
            self.virtio.read(slot, offset, data);
            let v = le(data);
            self.trace.fold(3, addr, v, self.now_ns);
            return;
        } else {
            // The rest of the UART window, odd-sized accesses, and empty virtio-mmio slots
            // (no magic value: no device there) read as zero.
            0
        };
        let bytes = v.to_le_bytes();
        let n = data.len().min(8);
        data[..n].copy_from_slice(&bytes[..n]);
        self.trace.fold(3, addr, v, self.now_ns);
    }

    fn mmio_write(&mut self, addr: u64, data: &[u8]) {
        self.mmio_accesses += 1;
        let value = le(data);
        self.trace.fold(4, addr, value, self.now_ns);
        let word = data.len() == 4;
        if in_window(addr, layout::RTC_BASE, layout::RTC_SIZE) && word {
            self.rtc
                .write(addr - layout::RTC_BASE, value as u32, self.now_ns);
        } else if in_window(addr, layout::UART_BASE, 8) {
            self.uart
                .write((addr - layout::UART_BASE) as u8, value as u8);
            self.uart_irq();
        } else if in_window(addr, layout::PLIC_BASE, layout::PLIC_SIZE) && word {
            self.plic.write(addr - layout::PLIC_BASE, value as u32);
        } else if let Some((slot, offset)) =
            Self::virtio_slot(addr).filter(|(slot, _)| *slot < self.virtio.len())
        {
            let next = self.virtio.write(slot, offset, data, self.now_ns);
            self.schedule(next);
            self.update_virtio_line(slot);
        }
    }

    fn external_interrupt(&self) -> bool {
        self.plic.interrupt_pending()
    }

    fn set_time(&mut self, now_ns: u64) {
        self.now_ns = now_ns;
    }

    fn next_event_ns(&self) -> u64 {
        self.events.peek_time().unwrap_or(u64::MAX)
    }
}

/// Collects console output into lines for the trace, the status marker and stdout.
struct ConsoleSink {
    line: Vec<u8>,
    digest: ResumableSha256,
    quiet: bool,
    status: Option<u32>,
    markers: Vec<Marker>,
    wall: Instant,
    /// Snapshot patterns still waiting for their line.
    watch: Vec<String>,
    /// Patterns whose line has appeared since the loop last looked.
    watch_hits: Vec<String>,
}

/// The console as a snapshot keeps it.
#[derive(Clone, Serialize, Deserialize)]
struct ConsoleState {
    line: Vec<u8>,
    digest: ResumableSha256,
    status: Option<u32>,
    markers: Vec<(String, u64, u64)>,
}

impl ConsoleSink {
    fn push(&mut self, bytes: &[u8], now: u64, trace: &mut Trace) {
        if bytes.is_empty() {
            return;
        }
        self.digest.update(bytes);
        if !self.quiet {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(bytes);
            let _ = out.flush();
        }
        for &b in bytes {
            self.line.push(b);
            if b == b'\n' || self.line.len() >= 4096 {
                self.flush_line(now, trace);
            }
        }
    }

    fn flush_line(&mut self, now: u64, trace: &mut Trace) {
        if self.line.is_empty() {
            return;
        }
        let text = String::from_utf8_lossy(&self.line).into_owned();
        self.line.clear();
        for m in MARKERS {
            if text.contains(m) && !self.markers.iter().any(|k| k.line == m) {
                let wall_ns = self.wall.elapsed().as_nanos() as u64;
                self.markers.push(Marker {
                    line: m.to_string(),
                    virtual_ns: now,
                    wall_ns,
                });
            }
        }
        crate::snapshot::plan::take_matches(&mut self.watch, &mut self.watch_hits, &text);
        if let Some(rest) = text
            .find(STATUS_MARKER)
            .map(|i| &text[i + STATUS_MARKER.len()..])
        {
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            if let Ok(s) = digits.parse() {
                self.status = Some(s);
            }
        }
        trace.event(now, "console", json!({ "text": text }));
    }

    fn save_state(&self) -> ConsoleState {
        ConsoleState {
            line: self.line.clone(),
            digest: self.digest.clone(),
            status: self.status,
            markers: self
                .markers
                .iter()
                .map(|m| (m.line.clone(), m.virtual_ns, m.wall_ns))
                .collect(),
        }
    }
}

/// What one step of the run loop came to.
enum Step {
    /// Go on.
    Continue,
    /// The guest asked for a snapshot here (SBI WIO call, with its tag).
    GuestSnapshot(u64),
    /// The run ended.
    End(Result<u32>),
}

/// Everything of the machine a snapshot keeps besides guest memory.
#[derive(Clone, Serialize, Deserialize)]
struct MachineState {
    hart: HartState,
    uart: UartState,
    rtc: GoldfishRtc,
    plic: Plic,
    virtio: Vec<Vec<u8>>,
    events: Vec<(u64, u64, VirtioEvent)>,
    next_seq: u64,
    mmio_accesses: u64,
    trace: TraceState,
    console: ConsoleState,
    exits: Vec<(String, u64)>,
    idle_ns: u64,
}

/// Exit kinds the summary counts (snapshots name them; they must be static for the summary).
const EXIT_KINDS: [&str; 3] = ["wfi", "sbi", "mmio"];

/// One riscv64 machine: the hart on its engine, the devices, the console and the counters.
pub struct RvMachine {
    engine: RiscvEngine,
    bus: RvBus,
    console: ConsoleSink,
    exits: BTreeMap<&'static str, u64>,
    idle_ns: u64,
    /// The seed the run has now (the snapshot's, or the one it was re-keyed with).
    seed: u64,
    /// What snapshots of this machine say it is (time, seed and reason filled in per snapshot).
    meta: Meta,
    /// The guest memory the hart and the devices share.
    mem: GuestMem,
    /// The snapshot this machine was restored from.
    restored_from: Option<crate::summary::RestoredFrom>,
}

/// Checks the memory size a configuration asks for.
fn check_mem(cfg: &RunConfig) -> Result<()> {
    if !(layout::MIN_MEM_MIB..=layout::MAX_MEM_MIB).contains(&cfg.mem_mib) {
        return Err(WioError::Usage(format!(
            "--mem {} MiB is out of range; riscv64 guests take {} to {} MiB",
            cfg.mem_mib,
            layout::MIN_MEM_MIB,
            layout::MAX_MEM_MIB
        )));
    }
    Ok(())
}

/// A hart whose RAM is `mem` (which stays mapped as long as the hart lives).
fn hart_on(mem: &GuestMem, mem_bytes: u64, entry: u64) -> Result<Hart> {
    let host = mem
        .get_host_address(GuestAddress(layout::RAM_BASE))
        .map_err(|e| WioError::Internal(format!("guest RAM host address: {e}")))?;
    // SAFETY: `host` points at the single mapping of `mem_bytes` bytes that `mem` owns; the
    // clone handed to Ram keeps it mapped for the hart's lifetime, and the hart and the
    // devices access it only through raw pointers / vm-memory, never through held references.
    let ram = unsafe {
        Ram::from_raw(
            layout::RAM_BASE,
            host,
            mem_bytes as usize,
            Box::new(mem.clone()),
        )
    };
    let mut hart = Hart::new(ram, entry, layout::CYCLES_PER_TICK);
    // WIO_NO_JIT=1 interprets every block (same results, slower): for comparisons and as
    // an escape hatch should the block compiler be suspected.
    if std::env::var_os("WIO_NO_JIT").is_some_and(|v| !v.is_empty() && v != "0") {
        hart.set_compiling(false);
    }
    Ok(hart)
}

fn new_console(cfg: &RunConfig, wall: Instant) -> ConsoleSink {
    ConsoleSink {
        line: Vec::new(),
        digest: ResumableSha256::default(),
        quiet: cfg.quiet,
        status: None,
        markers: Vec::new(),
        wall,
        watch: cfg
            .snapshots
            .at
            .iter()
            .filter_map(|a| match a {
                SnapshotAt::Console(t) => Some(t.clone()),
                _ => None,
            })
            .collect(),
        watch_hits: Vec::new(),
    }
}

fn absolute(p: &std::path::Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

impl RvMachine {
    /// Builds the machine a configuration describes and boots its kernel.
    pub fn boot(cfg: &RunConfig, wall: Instant) -> Result<RvMachine> {
        check_mem(cfg)?;
        let disk = crate::virtio_setup::open_disk(cfg)?;
        let (kernel_path, initrd_path) = match &cfg.kernel {
            Some(k) => (k.clone(), cfg.initrd.clone()),
            None => {
                let (kernel, initrd) = built_guest(cfg.guest.as_deref().unwrap_or("small"))?;
                // With a root disk, the built guest boots from it instead of its initramfs.
                (
                    kernel,
                    if disk.is_some() {
                        cfg.initrd.clone()
                    } else {
                        initrd
                    },
                )
            }
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
        let cmdline = cfg.cmdline.clone().unwrap_or_else(|| {
            if disk.is_some() {
                format!("{DEFAULT_CMDLINE} root=/dev/vda rw rootfstype=ext4 init=/init")
            } else {
                DEFAULT_CMDLINE.to_string()
            }
        });

        let trace = crate::trace::open(cfg.trace.as_ref())?;

        let mem_bytes = cfg.mem_mib << 20;
        let mem = crate::memory::allocate(layout::RAM_BASE, mem_bytes)?;
        let mut hart = hart_on(&mem, mem_bytes, 0)?;
        let placement = boot::load(
            &mut hart.ram,
            &kernel_path,
            &kernel,
            initrd_path.as_ref().zip(initrd.as_deref()),
        )?;
        let seed = RunSeed(cfg.seed);
        let mut rng_seed = [0u8; 64];
        seed.stream("riscv-fdt-rng-seed").fill_bytes(&mut rng_seed);
        let virtio_count = if disk.is_some() { 3 } else { 2 };
        let virtio_nodes: Vec<(u32, u32)> = (0..virtio_count)
            .map(|slot| (slot as u32, virtio_irq(slot)))
            .collect();
        let blob = fdt::build(&fdt::FdtSpec {
            mem_bytes,
            bootargs: &cmdline,
            initrd: placement.initrd,
            rng_seed: &rng_seed,
            virtio: &virtio_nodes,
        })?;
        if blob.len() as u64 > boot::FDT_MAX || !hart.ram.load(placement.fdt_addr, &blob) {
            return Err(WioError::Internal("device tree does not fit".into()));
        }
        hart.enter_supervisor(placement.entry, 0, placement.fdt_addr);
        let kernel_sha256 = hex(&Sha256::digest(&kernel));
        let initrd_sha256 = initrd.as_ref().map(|b| hex(&Sha256::digest(b)));
        let disk_meta = cfg.disk.as_ref().map(|p| DiskMeta {
            path: absolute(p),
            len: std::fs::metadata(p).map(|m| m.len()).unwrap_or(0),
            // Hashed when a snapshot is taken (only runs that snapshot pay for it).
            sha256: String::new(),
        });
        let mut bus = RvBus {
            uart: Uart16550::default(),
            rtc: GoldfishRtc::new(cfg.epoch_unix.max(0) as u64),
            plic: Plic::default(),
            virtio: VirtioSlots::new(crate::virtio_setup::devices(cfg, seed, disk)?, mem.clone()),
            events: EventQueue::new(),
            mmio_accesses: 0,
            trace,
            now_ns: 0,
        };
        bus.trace.event(
            0,
            "start",
            json!({
                "seed": cfg.seed,
                "arch": "riscv64",
                "mem_mib": cfg.mem_mib,
                "kernel_sha256": kernel_sha256,
                "initrd_sha256": initrd_sha256,
                "cmdline": cmdline,
                "disk": crate::virtio_setup::disk_json(cfg),
                "entry": placement.entry,
                "kernel_end": placement.kernel_end,
                "initrd_at": placement.initrd.map(|(start, end)| json!({ "start": start, "end": end })),
                "fdt": placement.fdt_addr,
            }),
        );
        Ok(RvMachine {
            engine: RiscvEngine::new(hart),
            bus,
            console: new_console(cfg, wall),
            exits: BTreeMap::new(),
            idle_ns: 0,
            seed: cfg.seed,
            meta: Meta {
                arch: "riscv64".into(),
                wio_version: env!("CARGO_PKG_VERSION").into(),
                seed: cfg.seed,
                virtual_ns: 0,
                instructions: None,
                reason: String::new(),
                mem_base: layout::RAM_BASE,
                mem_bytes,
                kernel_sha256,
                initrd_sha256,
                cmdline,
                epoch_unix: cfg.epoch_unix,
                disk: disk_meta,
                link: Meta::link_fields(&cfg.link),
            },
            mem,
            restored_from: None,
        })
    }

    /// Virtual ns now.
    pub fn now_ns(&self) -> u64 {
        self.engine.hart.cycles * layout::NS_PER_CYCLE
    }

    /// Runs the hart to its next exit (or `limit_ns`) and serves it.
    fn step(&mut self, limit_ns: u64) -> Step {
        let until = self.engine.now_ns().saturating_add(SLICE_NS).min(limit_ns);
        self.engine.set_deadline(until);
        let exit = match self.engine.run(&mut self.bus) {
            Ok(exit) => exit,
            Err(e) => return Step::End(Err(e)),
        };
        let bus = &mut self.bus;
        let console = &mut self.console;
        let hart = &mut self.engine.hart;
        let now = hart.cycles * layout::NS_PER_CYCLE;
        if bus.events.peek_time().is_some_and(|t| t <= now) {
            bus.fire_due_events(now);
            hart.poke_interrupts();
        }
        let out = bus.uart.take_output();
        console.push(&out, now, &mut bus.trace);
        match exit {
            Exit::Budget => {
                if now >= limit_ns {
                    return Step::End(Err(WioError::TimeLimit {
                        limit_ns: if limit_ns == u64::MAX { 0 } else { limit_ns },
                    }));
                }
            }
            Exit::Halt => {
                *self.exits.entry("wfi").or_insert(0) += 1;
                if let Some(e) = idle(hart, bus, &mut self.idle_ns) {
                    return Step::End(Err(e));
                }
            }
            Exit::Hypercall => {
                *self.exits.entry("sbi").or_insert(0) += 1;
                let (call, effect) = sbi::handle(hart);
                bus.trace.fold(5, call.eid, call.fid, call.error as u64);
                match effect {
                    SbiEffect::None => {}
                    SbiEffect::Console(bytes) => console.push(&bytes, now, &mut bus.trace),
                    SbiEffect::SnapshotHere(tag) => return Step::GuestSnapshot(tag),
                    SbiEffect::Suspend => {
                        if let Some(e) = idle(hart, bus, &mut self.idle_ns) {
                            return Step::End(Err(e));
                        }
                    }
                    SbiEffect::Shutdown { failure } => {
                        console.flush_line(now, &mut bus.trace);
                        return Step::End(Ok(console.status.unwrap_or(u32::from(failure))));
                    }
                    SbiEffect::Reboot => {
                        return Step::End(Err(WioError::GuestCrash(format!(
                            "guest requested a reboot (SBI system reset) at pc {:#x}; a Linux panic with panic=-1 ends here",
                            hart.pc
                        ))))
                    }
                }
            }
            other => {
                return Step::End(Err(WioError::Internal(format!(
                    "the RISC-V engine returned {other:?}"
                ))))
            }
        }
        Step::Continue
    }

    /// The machine's state as a snapshot; `reason` says why it was taken.
    pub fn snapshot(&mut self, reason: String) -> Result<Snapshot> {
        let mut virtio = Vec::new();
        for (slot, t) in self.bus.virtio.devices().iter().enumerate() {
            virtio.push(t.save_state().map_err(|e| {
                WioError::Usage(format!("cannot snapshot virtio slot {slot}: {e}"))
            })?);
        }
        let state = MachineState {
            hart: self.engine.hart.save_state(),
            uart: self.bus.uart.save_state(),
            rtc: self.bus.rtc.clone(),
            plic: self.bus.plic.clone(),
            virtio,
            events: self
                .bus
                .events
                .iter()
                .map(|(t, s, e)| (t, s, e.clone()))
                .collect(),
            next_seq: self.bus.events.next_seq(),
            mmio_accesses: self.bus.mmio_accesses,
            trace: self.bus.trace.save_state(),
            console: self.console.save_state(),
            exits: self
                .exits
                .iter()
                .map(|(k, v)| (k.to_string(), *v))
                .collect(),
            idle_ns: self.idle_ns,
        };
        if let Some(d) = self.meta.disk.as_mut().filter(|d| d.sha256.is_empty()) {
            d.sha256 = file_sha256(&d.path).map_err(|source| WioError::ArtifactIo {
                what: "disk image",
                path: d.path.clone(),
                source,
            })?;
        }
        let mut meta = self.meta.clone();
        meta.seed = self.seed;
        meta.virtual_ns = self.now_ns();
        meta.instructions = Some(self.engine.hart.instret);
        meta.reason = reason;
        Ok(Snapshot {
            meta,
            machine: postcard::to_stdvec(&state)
                .map_err(|e| WioError::Internal(format!("machine state encodes: {e}")))?,
            memory: memory_runs(self.engine.hart.ram.bytes()),
            sha256: String::new(),
        })
    }

    /// A machine in the state `l` recorded, run with `cfg` (its seed, outputs and
    /// limits; the guest and its devices come from the snapshot). With a seed other than
    /// the snapshot's, every stream is re-keyed from that seed: the past is shared, the
    /// future differs. Guest memory is a private copy-on-write mapping of the loaded
    /// snapshot's pages, so a restore costs what the run then writes.
    pub fn restore(l: &LoadedSnapshot, cfg: &RunConfig, wall: Instant) -> Result<RvMachine> {
        let bad = |reason: String| WioError::ArtifactFormat {
            what: "snapshot",
            path: l.path.clone(),
            reason,
        };
        let meta = &l.meta;
        // Borrowed: a branch copies only the small parts it owns (restores must be cheap).
        let state = &l.state;
        let disk = match &l.disk {
            Some(path) => Some(wio_virtio_devices::Disk::open(path).map_err(|e| {
                WioError::ArtifactFormat {
                    what: "disk image",
                    path: path.clone(),
                    reason: e.to_string(),
                }
            })?),
            None => None,
        };
        let mem = crate::memory::map_private(meta.mem_base, meta.mem_bytes, &l.memfd)?;
        let mut hart = hart_on(&mem, meta.mem_bytes, 0)?;
        hart.load_prepared(&l.hart)
            .map_err(|e| bad(format!("has a hart state this machine refuses: {e}")))?;

        let (seed, reseed) = meta.restore_seed(cfg);
        let mut devices =
            crate::virtio_setup::devices(&meta.device_config(cfg), RunSeed(meta.seed), disk)?;
        if devices.len() != state.virtio.len() {
            return Err(bad(format!(
                "has {} virtio devices where this machine has {}",
                state.virtio.len(),
                devices.len()
            )));
        }
        for (slot, (t, saved)) in devices.iter_mut().zip(&state.virtio).enumerate() {
            t.load_state(saved, reseed)
                .map_err(|e| bad(format!("virtio slot {slot}: {e}")))?;
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
        let events = EventQueue::from_parts(state.events.clone(), state.next_seq)
            .map_err(|e| bad(format!("has a bad device event queue: {e}")))?;
        if events
            .iter()
            .any(|(_, _, ev)| !event_slot_ok(ev, devices.len()))
        {
            return Err(bad("has a device event for an empty slot".into()));
        }
        let mut trace = crate::trace::open(cfg.trace.as_ref())?;
        trace.load_state(&state.trace);
        if let Some(RunSeed(s)) = reseed {
            // The branch's trace says where its future was re-keyed.
            trace.event(
                hart.cycles * layout::NS_PER_CYCLE,
                "reseed",
                json!({ "from": meta.seed, "seed": s }),
            );
        }
        let uart = Uart16550::from_state(&state.uart).map_err(bad)?;
        if !state.console.digest.is_valid() {
            return Err(bad("has an invalid console digest".into()));
        }
        let mut console = new_console(cfg, wall);
        console.line = state.console.line.clone();
        console.digest = state.console.digest.clone();
        console.status = state.console.status;
        console.markers = state
            .console
            .markers
            .iter()
            .map(|(line, virtual_ns, wall_ns)| Marker {
                line: line.clone(),
                virtual_ns: *virtual_ns,
                wall_ns: *wall_ns,
            })
            .collect();
        let mut exits = BTreeMap::new();
        for (k, v) in &state.exits {
            let kind = EXIT_KINDS
                .iter()
                .find(|e| **e == k)
                .ok_or_else(|| bad(format!("counts an unknown exit kind {k:?}")))?;
            exits.insert(*kind, *v);
        }
        let mut m = RvMachine {
            engine: RiscvEngine::new(hart),
            bus: RvBus {
                uart,
                rtc: state.rtc.clone(),
                plic: state.plic.clone(),
                virtio: VirtioSlots::new(devices, mem.clone()),
                events,
                mmio_accesses: state.mmio_accesses,
                trace,
                now_ns: 0,
            },
            console,
            exits,
            idle_ns: state.idle_ns,
            seed,
            meta: meta.clone(),
            mem,
            restored_from: Some(crate::summary::RestoredFrom {
                path: l.path.display().to_string(),
                virtual_ns: meta.virtual_ns,
                instructions: meta.instructions,
                seed: meta.seed,
            }),
        };
        m.bus.now_ns = m.now_ns();
        Ok(m)
    }

    /// Ends the run: closes the trace, carries out `--persist`, and builds the summary.
    /// With `until`, the run stopped at that console text (no guest status; exit code 0).
    fn finish(
        mut self,
        cfg: &RunConfig,
        outcome: Result<u32>,
        wall: Instant,
        until: Option<&str>,
    ) -> RunResult {
        let now = self.now_ns();
        let hart = &self.engine.hart;
        self.console.flush_line(now, &mut self.bus.trace);
        let mut exits = self.exits;
        exits.insert("mmio", self.bus.mmio_accesses);
        let outcome = match until {
            Some(text) => {
                self.bus.trace.event(
                    now,
                    "until",
                    json!({ "text": text, "instret": hart.instret }),
                );
                match self.bus.trace.finish() {
                    Ok(()) => outcome,
                    Err(source) => Err(WioError::Output {
                        what: "trace",
                        path: cfg.trace.clone().unwrap_or_default(),
                        source,
                    }),
                }
            }
            None => crate::trace::close(
                &mut self.bus.trace,
                now,
                outcome,
                json!({ "instret": hart.instret }),
                cfg.trace.as_ref(),
            ),
        };
        let wall_ns = wall.elapsed().as_nanos() as u64;
        let (disk, outcome) =
            crate::virtio_setup::finish_disk(self.bus.virtio.devices(), cfg, outcome);
        let summary = Summary {
            seed: self.seed,
            arch: "riscv64",
            virtual_ns: now,
            wall_ns,
            exits,
            interrupts: 0,
            instructions: Some(hart.instret),
            markers: self.console.markers,
            disk,
            idle_ns: self.idle_ns,
            trace_hash: self.bus.trace.hash_hex(),
            trace_lines: self.bus.trace.lines(),
            console_sha256: hex(&self.console.digest.digest()),
            exit_status: outcome.as_ref().ok().copied().filter(|_| until.is_none()),
            stopped_at: until.map(str::to_string),
            restored_from: self.restored_from,
            wio_exit_code: match &outcome {
                Ok(s) => (*s).min(MAX_GUEST_STATUS) as i32,
                Err(e) => e.exit_code(),
            },
            error: outcome.as_ref().err().map(|e| e.to_string()),
            host: "interpreter",
            warnings: Vec::new(),
        };
        drop(self.mem);
        RunResult { summary, outcome }
    }
}

/// A snapshot read, checked and ready to restore any number of times: its state
/// decoded, its guest memory in a memfd that every restore maps copy-on-write, its
/// disk (if any) checked once to be the image the snapshot was taken on.
pub struct LoadedSnapshot {
    /// Where it was read from.
    pub path: PathBuf,
    /// What it is of.
    pub meta: Meta,
    state: MachineState,
    memfd: std::fs::File,
    /// The verified base disk image.
    disk: Option<PathBuf>,
    /// Disk overlays by virtio slot, shared by every restore (copy-on-write per chunk).
    overlays: Vec<(usize, wio_virtio_devices::block::Overlay)>,
    /// The hart state checked and its caches built once.
    hart: wio_riscv::PreparedHart,
    /// The file's checksum (names the snapshot in reports).
    pub sha256: String,
}

impl LoadedSnapshot {
    /// Reads and checks `path`; `cfg.disk`, if given, must be the snapshot's base image.
    pub fn load(path: &std::path::Path, cfg: &RunConfig) -> Result<LoadedSnapshot> {
        let snap = Snapshot::read(path)?;
        let bad = |reason: String| WioError::ArtifactFormat {
            what: "snapshot",
            path: path.to_path_buf(),
            reason,
        };
        let meta = snap.meta;
        crate::snapshot::check_machine(
            &meta,
            path,
            "riscv64",
            layout::RAM_BASE,
            layout::MIN_MEM_MIB..=layout::MAX_MEM_MIB,
        )?;
        let mut state: MachineState = postcard::from_bytes(&snap.machine)
            .map_err(|e| bad(format!("has unreadable machine state: {e}")))?;
        let mut overlays = Vec::new();
        for (slot, saved) in state.virtio.iter_mut().enumerate() {
            if let Some((stripped, overlay)) =
                wio_virtio_devices::MmioTransport::split_block_overlay(saved)
                    .map_err(|e| bad(format!("virtio slot {slot}: {e}")))?
            {
                *saved = stripped;
                overlays.push((slot, overlay));
            }
        }
        let hart = state
            .hart
            .prepare()
            .map_err(|e| bad(format!("has a hart state this machine refuses: {e}")))?;
        let disk = restore_disk(&meta, cfg)?;
        let memfd = crate::memory::snapshot_memfd(meta.mem_bytes, &snap.memory)?;
        Ok(LoadedSnapshot {
            hart,
            path: path.to_path_buf(),
            meta,
            state,
            memfd,
            disk,
            overlays,
            sha256: snap.sha256,
        })
    }
}

fn event_slot_ok(ev: &VirtioEvent, slots: usize) -> bool {
    match ev {
        VirtioEvent::Complete(slot, _, _) | VirtioEvent::Timer(slot, _) => *slot < slots,
    }
}

/// The disk a restored machine runs on: the one given, or the snapshot's, checked to be
/// the very bytes the snapshot's overlay was written on.
pub(crate) fn restore_disk(meta: &Meta, cfg: &RunConfig) -> Result<Option<PathBuf>> {
    let Some(saved) = &meta.disk else {
        if let Some(p) = cfg.disk.as_ref().or(cfg.persist.as_ref()) {
            return Err(WioError::Usage(format!(
                "the snapshot has no disk; drop {} from the command line",
                p.display()
            )));
        }
        return Ok(None);
    };
    let path = cfg.disk.clone().unwrap_or_else(|| saved.path.clone());
    let mut c = cfg.clone();
    c.disk = Some(path.clone());
    crate::virtio_setup::open_disk(&c).map_err(|e| {
        WioError::Usage(format!(
            "{e} (the snapshot was taken on {}; pass that image as DISK.img)",
            saved.path.display()
        ))
    })?;
    let sha = file_sha256(&path).map_err(|source| WioError::ArtifactIo {
        what: "disk image",
        path: path.clone(),
        source,
    })?;
    if sha != saved.sha256 {
        return Err(WioError::ArtifactFormat {
            what: "disk image",
            path,
            reason: format!(
                "is not the base image the snapshot was taken on (its SHA-256 is {}, the snapshot's {}); pass the original image",
                &sha[..16],
                &saved.sha256[..saved.sha256.len().min(16)]
            ),
        });
    }
    Ok(Some(path))
}

/// Runs one riscv64 VM to its end: booted from its configuration, or restored from
/// `cfg.from`; taking the snapshots `cfg.snapshots` asks for on the way.
pub fn run(cfg: &RunConfig) -> Result<RunResult> {
    let wall = Instant::now();
    let mut m = match &cfg.from {
        Some(path) => RvMachine::restore(&LoadedSnapshot::load(path, cfg)?, cfg, wall)?,
        None => RvMachine::boot(cfg, wall)?,
    };
    let limit_ns = if cfg.max_virtual_ns == 0 {
        u64::MAX
    } else {
        cfg.max_virtual_ns
    };
    let mut plan = cfg.snapshots.clone();
    let mut taken = 0usize;
    if let Some(u) = &cfg.until {
        m.console.watch.push(u.clone());
    }
    let mut until_hit = None;
    let outcome = loop {
        let step = m.step(limit_ns);
        if let Some(u) = cfg.until.as_deref() {
            if let Some(i) = m.console.watch_hits.iter().position(|h| h == u) {
                m.console.watch_hits.remove(i);
                until_hit = Some(u);
                break Ok(0);
            }
        }
        let now = m.now_ns();
        let due: Option<String> = match &step {
            Step::End(_) => None,
            Step::GuestSnapshot(tag) => {
                plan.at
                    .iter()
                    .position(|a| *a == SnapshotAt::Guest)
                    .map(|i| {
                        plan.at.remove(i);
                        format!("guest request (tag {tag})")
                    })
            }
            Step::Continue => {
                if let Some(i) = plan
                    .at
                    .iter()
                    .position(|a| matches!(a, SnapshotAt::Time(t) if now >= *t))
                {
                    Some(plan.at.remove(i).describe())
                } else if !m.console.watch_hits.is_empty() {
                    let text = m.console.watch_hits.remove(0);
                    plan.at.retain(|a| *a != SnapshotAt::Console(text.clone()));
                    Some(SnapshotAt::Console(text).describe())
                } else {
                    None
                }
            }
        };
        if let Step::End(outcome) = step {
            break outcome;
        }
        if let Some(reason) = due {
            taken += 1;
            let path = plan.path(taken, m.seed, now);
            let started = Instant::now();
            let snap = m.snapshot(reason.clone())?;
            let bytes = snap.write(&path)?;
            eprintln!(
                "wio: snapshot {} at {now} ns ({reason}): {} MiB in {} ms; restore with: wio run --from {}",
                path.display(),
                bytes >> 20,
                started.elapsed().as_millis(),
                path.display()
            );
        }
    };
    Ok(m.finish(cfg, outcome, wall, until_hit))
}

/// WFI or suspend: jump the clock to the timer deadline. Returns an error when nothing can ever wake the hart.
fn idle(hart: &mut Hart, bus: &mut RvBus, idle_ns: &mut u64) -> Option<WioError> {
    let external = bus.plic.interrupt_pending();
    if hart.pending_interrupt_with(external).is_some() || external {
        return None;
    }
    let timer = hart.timer_deadline();
    let device = bus
        .events
        .peek_time()
        .map_or(u64::MAX, |t| t.div_ceil(layout::NS_PER_CYCLE));
    let wake = timer.min(device);
    if wake == u64::MAX {
        return Some(WioError::GuestCrash(format!(
            "guest waits for an interrupt (WFI at pc {:#x}) with no timer armed and no device pending: it can never wake up",
            hart.pc
        )));
    }
    if wake > hart.cycles {
        let skipped = wake - hart.cycles;
        *idle_ns += skipped * layout::NS_PER_CYCLE;
        hart.cycles = wake;
        let now = hart.cycles * layout::NS_PER_CYCLE;
        bus.trace.event(
            now,
            "wfi",
            json!({ "idle_ns": skipped * layout::NS_PER_CYCLE }),
        );
    }
    let now = hart.cycles * layout::NS_PER_CYCLE;
    bus.fire_due_events(now);
    hart.poke_interrupts();
    None
}

/// How one branch of an exploration ended.
pub struct BranchEnd {
    /// The run's summary (trace hash, virtual time, status or error).
    pub summary: Summary,
    /// The console texts (of those watched) that appeared, in order.
    pub matched: Vec<String>,
    /// Whether the branch stopped at its `until` text rather than at its end.
    pub stopped_at_until: bool,
}

/// Runs one branch: restores `l` with `seed` (hash-only trace, no console, no outputs) and
/// runs it to its end, to `until` (a console text), or to `limit_ns` of virtual time.
/// `watch` are console texts to report; `cancel` abandons the branch (None is returned).
pub fn run_branch(
    l: &LoadedSnapshot,
    seed: u64,
    until: Option<&str>,
    watch: &[String],
    limit_ns: u64,
    cancel: &std::sync::atomic::AtomicBool,
) -> Result<Option<BranchEnd>> {
    let wall = Instant::now();
    let cfg = RunConfig {
        mem_mib: l.meta.mem_bytes >> 20,
        epoch_unix: l.meta.epoch_unix,
        max_virtual_ns: limit_ns,
        watchdog_ms: 0,
        from: Some(l.path.clone()),
        until: until.map(str::to_string),
        ..RunConfig::with_seed(seed)
    };
    let mut m = RvMachine::restore(l, &cfg, wall)?;
    m.console.watch = watch.to_vec();
    if let Some(u) = until {
        m.console.watch.push(u.to_string());
    }
    let limit = if limit_ns == 0 { u64::MAX } else { limit_ns };
    let mut stopped_at_until = false;
    let outcome = loop {
        if cancel.load(std::sync::atomic::Ordering::Relaxed) {
            return Ok(None);
        }
        if let Step::End(outcome) = m.step(limit) {
            break outcome;
        }
        if until.is_some_and(|u| m.console.watch_hits.iter().any(|h| h == u)) {
            stopped_at_until = true;
            break Ok(0);
        }
    };
    let mut matched: Vec<String> = m
        .console
        .watch_hits
        .iter()
        .filter(|h| watch.contains(h))
        .cloned()
        .collect();
    matched.dedup();
    let end = m.finish(&cfg, outcome, wall, until.filter(|_| stopped_at_until));
    Ok(Some(BranchEnd {
        summary: end.summary,
        matched,
        stopped_at_until,
    }))
}

/// The riscv64 guests built by `images/build-all-riscv64.sh`, by name.
pub const GUESTS: [(&str, &str, &str); 2] = [
    ("small", "RISCV64_SMALL_IMAGE", "RISCV64_SMALL_INITRAMFS"),
    ("debian", "RISCV64_DEBIAN_IMAGE", "RISCV64_DEBIAN_INITRAMFS"),
];

/// The cache folder.
fn cache_dir() -> Result<PathBuf> {
    std::env::var_os("WIO_CACHE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/wio")))
        .ok_or_else(|| WioError::Usage("cannot find the wio cache: set WIO_CACHE or HOME".into()))
}

/// Kernel and initramfs of the named built guest ("small", the default, or "debian").
pub fn built_guest(name: &str) -> Result<(PathBuf, Option<PathBuf>)> {
    let (_, kernel_key, initrd_key) =
        GUESTS.iter().find(|(n, _, _)| *n == name).ok_or_else(|| {
            WioError::Usage(format!(
                "unknown --guest {name:?}; riscv64 guests: small, debian"
            ))
        })?;
    let cache = cache_dir()?;
    let manifest = cache.join("riscv64-guests.env");
    let text = std::fs::read_to_string(&manifest).map_err(|_| {
        WioError::Usage(format!(
            "no riscv64 guests built in {}: run images/build-all-riscv64.sh once (about 7 minutes; seconds when cached), or pass --kernel Image [--initrd FILE]",
            cache.display()
        ))
    })?;
    let get = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix('='))
            .map(|v| PathBuf::from(v.trim()))
    };
    let stale = || {
        WioError::Usage(format!(
            "{} is incomplete; re-run images/build-all-riscv64.sh",
            manifest.display()
        ))
    };
    let kernel = get(kernel_key).ok_or_else(stale)?;
    let initrd = get(initrd_key).ok_or_else(stale)?;
    if !kernel.exists() || !initrd.exists() {
        return Err(WioError::Usage(format!(
            "the cached {name} guest is gone from {}; re-run images/build-all-riscv64.sh",
            cache.display()
        )));
    }
    Ok((kernel, Some(initrd)))
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
    /// Per branch kind: (name, branches per minute, instructions per branch, virtual ns per branch).
    pub branches: Vec<(&'static str, f64, u64, u64)>,
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

/// Measures snapshots on the small guest: snapshots taken during its workload (see
/// [`BENCH_BRANCHES`]), their capture and write time and size, branch creation latency
/// (`restores` restores), and branches per minute on `jobs` threads (`branches` each).
pub fn bench_snapshots(
    dir: &std::path::Path,
    jobs: usize,
    branches: usize,
    restores: usize,
) -> Result<SnapshotFigures> {
    let wall = Instant::now();
    let mut cfg = crate::vm::RunConfig {
        guest: Some("small".into()),
        cmdline: Some(format!("{DEFAULT_CMDLINE} wio.idle=1")),
        epoch_unix: 1_767_225_600,
        watchdog_ms: 0,
        ..crate::vm::RunConfig::with_seed(1)
    };
    let mut m = RvMachine::boot(&cfg, wall)?;
    m.console.watch = BENCH_BRANCHES.iter().map(|b| b.1.to_string()).collect();
    let mut capture = Vec::new();
    let mut write = Vec::new();
    let mut sizes = Vec::new();
    let mut paths: BTreeMap<String, PathBuf> = BTreeMap::new();
    while paths.len() < BENCH_BRANCHES.len() {
        if let Step::End(outcome) = m.step(u64::MAX) {
            return Err(WioError::Internal(format!(
                "the bench guest ended before its snapshot points (is the initramfs older than wio.idle?): {outcome:?}"
            )));
        }
        while let Some(hit) = m.console.watch_hits.pop() {
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
        loaded.push(LoadedSnapshot::load(&paths[from], &cfg)?);
        load_ms = t.elapsed().as_secs_f64() * 1e3;
    }

    cfg.from = Some(paths[BENCH_BRANCHES[0].1].clone());
    let mut restore_us = Vec::new();
    for i in 0..restores {
        cfg.seed = i as u64;
        let t = Instant::now();
        let m = RvMachine::restore(&loaded[0], &cfg, wall)?;
        restore_us.push(t.elapsed().as_secs_f64() * 1e6);
        drop(m);
    }
    restore_us.sort_by(f64::total_cmp);

    let throughput = |l: &LoadedSnapshot, until: &str| -> Result<(f64, u64, u64)> {
        use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
        let next = AtomicUsize::new(0);
        let cancel = AtomicBool::new(false);
        let instructions = AtomicU64::new(0);
        let virtual_ns = AtomicU64::new(0);
        let failure: std::sync::Mutex<Option<WioError>> = std::sync::Mutex::new(None);
        let t = Instant::now();
        std::thread::scope(|s| {
            for _ in 0..jobs.max(1) {
                s.spawn(|| loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= branches {
                        return;
                    }
                    match run_branch(l, 1000 + i as u64, Some(until), &[], 0, &cancel) {
                        Ok(Some(end)) if end.stopped_at_until => {
                            let n = end.summary.instructions.unwrap_or(0)
                                - l.meta.instructions.unwrap_or(0);
                            instructions.fetch_add(n, Ordering::Relaxed);
                            virtual_ns.fetch_add(
                                end.summary.virtual_ns - l.meta.virtual_ns,
                                Ordering::Relaxed,
                            );
                        }
                        Ok(other) => {
                            let why = other.map_or("cancelled".into(), |e| {
                                format!("{:?} {:?}", e.summary.exit_status, e.summary.error)
                            });
                            if let Ok(mut f) = failure.lock() {
                                f.get_or_insert(WioError::Internal(format!(
                                    "bench branch did not reach {until:?}: {why}"
                                )));
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
        ))
    };
    let mut results = Vec::new();
    for (l, (name, _, until)) in loaded.iter().zip(BENCH_BRANCHES) {
        let (per_min, insns, ns) = throughput(l, until)?;
        results.push((name, per_min, insns, ns));
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
