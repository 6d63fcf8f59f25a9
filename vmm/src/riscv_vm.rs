//! Building and running one riscv64 VM on wio's interpreter: RAM, the
//! device tree, kernel and initrd, the UART and PLIC, SBI, and the run loop.
//!
//! Time is the hart's cycle count (one instruction = one virtual ns); WFI
//! jumps it to the next timer deadline, so idle time costs nothing.

use crate::arch::riscv64::{boot, fdt, layout};
use crate::devices::legacy::serial::Uart16550;
use crate::devices::riscv::goldfish_rtc::GoldfishRtc;
use crate::devices::riscv::plic::Plic;
use crate::devices::virtio_slots::{Scheduled, VirtioEvent, VirtioSlots};
use crate::engine::riscv::RiscvEngine;
use crate::engine::{CpuEngine, Exit, ExitHandler};
use crate::error::{Result, WioError, MAX_GUEST_STATUS};
use crate::sbi::{self, SbiEffect};
use crate::summary::{Marker, Summary};
use crate::trace::{hex, Trace};
use crate::vm::{RunConfig, RunResult};
use serde_json::json;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;
use vm_memory::{GuestAddress, GuestMemoryBackend};
use wio_riscv::{Hart, Ram};
use wio_scheduler::EventQueue;
use wio_scheduler::RunSeed;

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
struct ConsoleSink<'a> {
    line: Vec<u8>,
    digest: Sha256,
    out: Option<&'a mut dyn Write>,
    status: Option<u32>,
    markers: Vec<Marker>,
    wall: Instant,
}

impl ConsoleSink<'_> {
    fn push(&mut self, bytes: &[u8], now: u64, trace: &mut Trace) {
        if bytes.is_empty() {
            return;
        }
        self.digest.update(bytes);
        if let Some(out) = self.out.as_mut() {
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
}

/// Runs one riscv64 VM to its end.
pub fn run(cfg: &RunConfig) -> Result<RunResult> {
    let wall = Instant::now();
    if !(layout::MIN_MEM_MIB..=layout::MAX_MEM_MIB).contains(&cfg.mem_mib) {
        return Err(WioError::Usage(format!(
            "--mem {} MiB is out of range; riscv64 guests take {} to {} MiB",
            cfg.mem_mib,
            layout::MIN_MEM_MIB,
            layout::MAX_MEM_MIB
        )));
    }
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
    let host = mem
        .get_host_address(GuestAddress(layout::RAM_BASE))
        .map_err(|e| WioError::Internal(format!("guest RAM host address: {e}")))?;
    // SAFETY: `host` points at the single mapping of `mem_bytes` bytes that `mem` owns; the
    // clone handed to Ram keeps it mapped for the hart's lifetime, and the hart and the
    // devices access it only through raw pointers / vm-memory, never through held references.
    let mut ram = unsafe {
        Ram::from_raw(
            layout::RAM_BASE,
            host,
            mem_bytes as usize,
            Box::new(mem.clone()),
        )
    };
    let placement = boot::load(
        &mut ram,
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
    if blob.len() as u64 > boot::FDT_MAX || !ram.load(placement.fdt_addr, &blob) {
        return Err(WioError::Internal("device tree does not fit".into()));
    }

    let mut hart = Hart::new(ram, placement.entry, layout::CYCLES_PER_TICK);
    hart.enter_supervisor(placement.entry, 0, placement.fdt_addr);
    let mut engine = RiscvEngine::new(hart);
    let mut bus = RvBus {
        uart: Uart16550::default(),
        rtc: GoldfishRtc::new(cfg.epoch_unix.max(0) as u64),
        plic: Plic::default(),
        virtio: VirtioSlots::new(crate::virtio_setup::devices(cfg, seed, disk)?, mem),
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
            "kernel_sha256": hex(&Sha256::digest(&kernel)),
            "initrd_sha256": initrd.as_ref().map(|b| hex(&Sha256::digest(b))),
            "cmdline": cmdline,
            "disk": cfg.disk.as_ref().map(|p| json!({
                "name": p.file_name().map(|n| n.to_string_lossy().into_owned()),
                "bytes": std::fs::metadata(p).map(|m| m.len()).unwrap_or(0),
            })),
            "entry": placement.entry,
            "kernel_end": placement.kernel_end,
            "initrd_at": placement.initrd.map(|(start, end)| json!({ "start": start, "end": end })),
            "fdt": placement.fdt_addr,
        }),
    );

    let mut stdout = std::io::stdout();
    let mut console = ConsoleSink {
        line: Vec::new(),
        digest: Sha256::new(),
        out: if cfg.quiet { None } else { Some(&mut stdout) },
        status: None,
        markers: Vec::new(),
        wall,
    };
    let mut exits: BTreeMap<&'static str, u64> = BTreeMap::new();
    let mut idle_ns = 0u64;
    let limit_ns = if cfg.max_virtual_ns == 0 {
        u64::MAX
    } else {
        cfg.max_virtual_ns
    };

    let outcome: Result<u32> = loop {
        let until = engine.now_ns().saturating_add(SLICE_NS).min(limit_ns);
        engine.set_deadline(until);
        let exit = match engine.run(&mut bus) {
            Ok(exit) => exit,
            Err(e) => break Err(e),
        };
        let hart = &mut engine.hart;
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
                    break Err(WioError::TimeLimit {
                        limit_ns: cfg.max_virtual_ns,
                    });
                }
            }
            Exit::Halt => {
                *exits.entry("wfi").or_insert(0) += 1;
                if let Some(e) = idle(hart, &mut bus, &mut idle_ns) {
                    break Err(e);
                }
            }
            Exit::Hypercall => {
                *exits.entry("sbi").or_insert(0) += 1;
                let (call, effect) = sbi::handle(hart);
                bus.trace.fold(5, call.eid, call.fid, call.error as u64);
                match effect {
                    SbiEffect::None => {}
                    SbiEffect::Console(bytes) => console.push(&bytes, now, &mut bus.trace),
                    SbiEffect::Suspend => {
                        if let Some(e) = idle(hart, &mut bus, &mut idle_ns) {
                            break Err(e);
                        }
                    }
                    SbiEffect::Shutdown { failure } => {
                        console.flush_line(now, &mut bus.trace);
                        break Ok(console.status.unwrap_or(u32::from(failure)));
                    }
                    SbiEffect::Reboot => {
                        break Err(WioError::GuestCrash(format!(
                            "guest requested a reboot (SBI system reset) at pc {:#x}; a Linux panic with panic=-1 ends here",
                            hart.pc
                        )))
                    }
                }
            }
            other => {
                break Err(WioError::Internal(format!(
                    "the RISC-V engine returned {other:?}"
                )))
            }
        }
    };
    let hart = &engine.hart;
    let now = hart.cycles * layout::NS_PER_CYCLE;
    console.flush_line(now, &mut bus.trace);
    exits.insert("mmio", bus.mmio_accesses);
    let outcome = crate::trace::close(
        &mut bus.trace,
        now,
        outcome,
        json!({ "instret": hart.instret }),
        cfg.trace.as_ref(),
    );
    let wall_ns = wall.elapsed().as_nanos() as u64;
    let (disk, outcome) = crate::virtio_setup::finish_disk(bus.virtio.devices(), cfg, outcome);
    let summary = Summary {
        seed: cfg.seed,
        arch: "riscv64",
        virtual_ns: now,
        wall_ns,
        exits,
        interrupts: 0,
        instructions: Some(hart.instret),
        markers: console.markers,
        disk,
        idle_ns,
        trace_hash: bus.trace.hash_hex(),
        trace_lines: bus.trace.lines(),
        console_sha256: hex(&console.digest.clone().finalize()),
        exit_status: outcome.as_ref().ok().copied(),
        wio_exit_code: match &outcome {
            Ok(s) => (*s).min(MAX_GUEST_STATUS) as i32,
            Err(e) => e.exit_code(),
        },
        error: outcome.as_ref().err().map(|e| e.to_string()),
        host: "interpreter",
        warnings: Vec::new(),
    };
    Ok(RunResult { summary, outcome })
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
