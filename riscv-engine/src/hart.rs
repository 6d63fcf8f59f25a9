//! One RV64GC hart: architectural state, CSRs, traps and interrupts, and
//! memory access through Sv39. Instruction semantics are in `exec.rs`.

use crate::bus::Bus;
use crate::csr::{addr, cause, irq, mstatus, Priv};
use crate::fpu::FpState;
use crate::mmu::{self, pte, Access, Tlb};
use crate::ram::Ram;

/// A synchronous exception: cause code and trap value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trap {
    /// xcause value (without the interrupt bit).
    pub cause: u64,
    /// xtval value.
    pub tval: u64,
}

impl Trap {
    /// An exception with `cause` and `tval`.
    pub fn new(cause: u64, tval: u64) -> Trap {
        Trap { cause, tval }
    }
}

/// Why [`Hart::run`] returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    /// The hart's clock reached the requested cycle.
    Budget,
    /// WFI with no interrupt pending: the machine may jump the clock.
    Wfi,
    /// ECALL from S-mode: an SBI call for the machine to serve (pc already past it).
    SbiCall,
}

/// misa: RV64 with A, C, D, F, I, M, S, U.
pub const MISA: u64 = (2 << 62)
    | (1 << 0)
    | (1 << 2)
    | (1 << 3)
    | (1 << 5)
    | (1 << 8)
    | (1 << 12)
    | (1 << 18)
    | (1 << 20);

/// Exceptions an SBI implementation delegates to S-mode (as OpenSBI does):
/// misaligned fetch, fetch access, illegal instruction, breakpoint, load/store
/// access, ECALL from U, and the three page faults.
pub const DEFAULT_MEDELEG: u64 = (1 << cause::INSN_MISALIGNED)
    | (1 << cause::INSN_ACCESS)
    | (1 << cause::ILLEGAL_INSN)
    | (1 << cause::BREAKPOINT)
    | (1 << cause::LOAD_MISALIGNED)
    | (1 << cause::LOAD_ACCESS)
    | (1 << cause::STORE_MISALIGNED)
    | (1 << cause::STORE_ACCESS)
    | (1 << cause::ECALL_U)
    | (1 << cause::INSN_PAGE_FAULT)
    | (1 << cause::LOAD_PAGE_FAULT)
    | (1 << cause::STORE_PAGE_FAULT);

/// The hart. Cloning it copies its RAM into a new allocation.
#[derive(Debug, Clone)]
pub struct Hart {
    /// Integer registers (x0 is kept zero).
    pub x: [u64; 32],
    /// Program counter.
    pub pc: u64,
    /// Current privilege level.
    pub prv: Priv,
    /// F/D state.
    pub fp: FpState,
    /// Guest RAM.
    pub ram: Ram,
    /// The hart's clock in cycles: one per retired instruction, plus idle jumps. Read it
    /// with [`Hart::cycles`], move it forward with [`Hart::skip_to`]; inside the crate it is a
    /// plain field because the run loop and compiled blocks (by offset) advance it.
    pub(crate) cycles: u64,
    /// Retired instructions (see [`Hart::instret`]).
    pub(crate) instret: u64,
    /// Cycles per `time` tick (the timebase divides the cycle clock).
    pub cycles_per_tick: u64,
    /// SBI timer compare value in `time` ticks (u64::MAX = off).
    pub timecmp: u64,
    pub(crate) mstatus: u64,
    pub(crate) medeleg: u64,
    pub(crate) mideleg: u64,
    pub(crate) mie: u64,
    /// Software-writable pending bits (SSIP, STIP/SEIP from M-mode software).
    pub(crate) mip_sw: u64,
    pub(crate) mtvec: u64,
    pub(crate) mepc: u64,
    pub(crate) mcause: u64,
    pub(crate) mtval: u64,
    pub(crate) mscratch: u64,
    pub(crate) mcounteren: u64,
    pub(crate) menvcfg: u64,
    pub(crate) stvec: u64,
    pub(crate) sepc: u64,
    pub(crate) scause: u64,
    pub(crate) stval: u64,
    pub(crate) sscratch: u64,
    pub(crate) scounteren: u64,
    pub(crate) senvcfg: u64,
    pub(crate) satp: u64,
    pub(crate) tlb: Tlb,
    /// LR reservation (physical address), or [`NO_RESERVATION`]. A plain integer so
    /// compiled blocks can test it.
    pub(crate) reservation: u64,
    /// Set when something may have changed which interrupt is deliverable.
    pub(crate) irq_dirty: bool,
    /// Decoded instructions by virtual pc (see [`ICache`]).
    pub(crate) icache: ICache,
    /// Recently translated RAM pages for loads.
    pub(crate) load_pages: FastPages,
    /// Recently translated RAM pages for stores (only pages already marked dirty).
    pub(crate) store_pages: FastPages,
    /// Superpage regions (virtual base, size) cached since the last full flush.
    pub(crate) superpages: Vec<(u64, u64)>,
    /// More superpages were cached than [`MAX_SUPERPAGES`]: single-page fences flush all.
    pub(crate) superpages_overflow: bool,
}

/// [`Hart::reservation`] when no LR reservation is held (no RAM address is all ones).
pub(crate) const NO_RESERVATION: u64 = u64::MAX;

/// Superpage regions tracked for single-page SFENCE.VMA.
pub(crate) const MAX_SUPERPAGES: usize = 64;

pub(crate) const FAST_PAGES: usize = 64;

/// A small direct-mapped cache from virtual page to RAM offset, valid for the
/// current privilege, mstatus and satp: the loads' and stores' shortcut past
/// the TLB. Cleared (in O(1), by generation) whenever any of those change.
#[derive(Debug, Clone)]
pub(crate) struct FastPages {
    pub(crate) entries: [FastPage; FAST_PAGES],
    pub(crate) generation: u32,
}

/// One [`FastPages`] slot. `repr(C)` and 32 bytes: compiled blocks read it directly
/// (see `jit`).
#[derive(Debug, Clone, Copy, Default)]
#[repr(C)]
pub(crate) struct FastPage {
    /// Virtual page number + 1 (0 = empty).
    pub(crate) tag: u64,
    /// The [`FastPages::generation`] the entry belongs to.
    pub(crate) generation: u32,
    /// RAM offset of the page.
    pub(crate) off: usize,
    _pad: u64,
}

impl Default for FastPages {
    fn default() -> Self {
        FastPages {
            entries: [FastPage::default(); FAST_PAGES],
            generation: 1,
        }
    }
}

impl FastPages {
    #[inline(always)]
    fn get(&self, vaddr: u64) -> Option<usize> {
        let vpn = vaddr >> 12;
        let e = &self.entries[(vpn as usize) & (FAST_PAGES - 1)];
        (e.tag == vpn + 1 && e.generation == self.generation).then_some(e.off)
    }

    pub(crate) fn insert(&mut self, vaddr: u64, off: usize) {
        let vpn = vaddr >> 12;
        self.entries[(vpn as usize) & (FAST_PAGES - 1)] = FastPage {
            tag: vpn + 1,
            generation: self.generation,
            off,
            _pad: 0,
        };
    }

    /// Forgets the shortcut for `vaddr`'s page.
    fn forget(&mut self, vaddr: u64) {
        let vpn = vaddr >> 12;
        let e = &mut self.entries[(vpn as usize) & (FAST_PAGES - 1)];
        if e.tag == vpn + 1 {
            e.tag = 0;
        }
    }

    fn clear(&mut self) {
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.entries = [FastPage::default(); FAST_PAGES];
            self.generation = 1;
        }
    }
}

pub(crate) const ICACHE_ENTRIES: usize = 1 << 16;

/// One decoded instruction: virtual pc, privilege it was fetched at, the
/// (expanded) instruction and its length. `pc == u64::MAX` marks an empty slot.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Decoded {
    pub(crate) pc: u64,
    /// The cache generation this entry belongs to (see [`ICache::flush`]).
    pub(crate) generation: u32,
    pub(crate) prv: Priv,
    /// The raw 16-bit parcel for RVC (reported in xtval when illegal), else 0.
    pub(crate) raw16: u16,
    pub(crate) insn: u32,
    pub(crate) len: u8,
    /// The fast-path form of `insn`.
    pub(crate) op: crate::predecode::Op,
    /// The start pc of the block that copied this entry (u64::MAX: none), and whether more
    /// than one did: replacing the entry must drop those blocks.
    pub(crate) owner: u64,
    pub(crate) shared: bool,
    /// The [`ICache::fence`] at which the entry was fetched or last found unchanged: an
    /// entry of an older one must be checked against memory before it is used again.
    pub(crate) checked: u32,
}

/// A direct-mapped cache of decoded instructions keyed by virtual pc and privilege.
///
/// It caches translations and instruction bytes together, so it must forget them
/// exactly when either may change as far as the architecture promises to the guest:
/// FENCE.I, SFENCE.VMA, satp writes and the SBI remote fences. Linux runs FENCE.I for
/// every executable page it maps and, without ASIDs, flushes everything at every
/// context switch, so forgetting is lazy: all entries become unchecked (one counter
/// increment) and each is fetched again at its next use, exactly when an emptied
/// cache would fetch it (same translation, page walk and faults), and kept if its
/// bytes are unchanged (see [`Hart::decoded`]). The guest sees the same fetches,
/// faults and instructions as with an emptied cache; only decoding, block building
/// and compiling are saved. Single-page fences drop that page's entries outright.
#[derive(Debug, Clone)]
pub(crate) struct ICache {
    pub(crate) entries: Vec<Decoded>,
    /// Entries of older generations are invalid: a flush is one increment.
    pub(crate) generation: u32,
    /// Count of FENCE.I and full flushes (never 0): entries and blocks of older ones are
    /// unchecked.
    pub(crate) fence: u32,
    /// Straight-line runs of fast instructions, by start pc (same generation rules).
    pub(crate) blocks: Vec<Block>,
    /// Pages (hashed by page number) that may hold decoded instructions checked since the
    /// last FENCE.I or full flush (tagged with [`ICache::fence`]): a single-page fence of
    /// any other page has nothing to forget here (unchecked entries are fetched again at
    /// their next use anyway).
    pub(crate) code_pages: Vec<u32>,
    /// Executable memory for compiled blocks (see `jit`).
    pub(crate) jit: crate::jit::CodeBuffer,
    /// Where [`Hart::build_block`] collects a block before comparing it with the slot's.
    pub(crate) scratch: Vec<(crate::predecode::Op, u8, u32)>,
}

/// Slots of [`ICache::code_pages`].
const CODE_PAGES: usize = 1 << 12;

impl ICache {
    /// Notes that an instruction fetched at `pc` (`len` bytes) depends on its page(s).
    #[inline]
    pub(crate) fn note_code(&mut self, pc: u64, len: u8) {
        let fence = self.fence;
        self.code_pages[((pc >> 12) as usize) & (CODE_PAGES - 1)] = fence;
        let last = pc.wrapping_add(u64::from(len) - 1);
        self.code_pages[((last >> 12) as usize) & (CODE_PAGES - 1)] = fence;
    }

    /// Whether decoded instructions may depend on the page of `vaddr`.
    #[inline]
    fn may_hold_code(&self, vaddr: u64) -> bool {
        self.code_pages[((vaddr >> 12) as usize) & (CODE_PAGES - 1)] == self.fence
    }
}

/// Most instructions in one [`Block`].
pub(crate) const BLOCK_MAX: usize = 32;
pub(crate) const BLOCK_ENTRIES: usize = 1 << 15;

/// A run of fast-path instructions within one page, ending after a jump, before an
/// instruction without a fast path, or at [`BLOCK_MAX`]; a taken conditional branch
/// leaves it early. Executing it skips the
/// per-instruction cache lookup; cycles, instret and pc still advance per instruction, and
/// it is entered only when it fits before the next deadline, so every instruction retires
/// at the same cycle as it would one by one.
#[derive(Debug, Clone)]
pub(crate) struct Block {
    pub(crate) pc: u64,
    pub(crate) generation: u32,
    pub(crate) prv: Priv,
    /// (decoded op, length, raw instruction) per instruction.
    pub(crate) ops: Vec<(crate::predecode::Op, u8, u32)>,
    /// Times pc was reached before the block was built ([`BUILT`] once built): only code
    /// that runs repeatedly is worth a block.
    pub(crate) hits: u8,
    /// Times the built block ran interpreted (up to [`crate::jit::JIT_HOT`], then it is
    /// compiled).
    pub(crate) runs: u8,
    /// The block's compiled code (0: none), valid while `code_epoch` is the code buffer's
    /// epoch; a block whose `code_epoch` matches with no code could not be compiled.
    pub(crate) code: usize,
    pub(crate) code_epoch: u64,
    /// `ops.len()`, where compiled code can read it.
    pub(crate) len: u32,
    /// The [`ICache::fence`] the block was built under (0: not runnable): a FENCE.I makes
    /// it stale until rebuilt from checked entries.
    pub(crate) fence: u32,
    /// The pc `code` was compiled for: a rebuilt block with the same pc and instructions
    /// keeps its code.
    pub(crate) code_pc: u64,
}

/// [`Block::hits`] of a built block.
pub(crate) const BUILT: u8 = u8::MAX;
/// Visits of a pc before a block is built there.
const BLOCK_HOT: u8 = 24;

impl Block {
    /// A slot that holds nothing (its instruction list allocates on first use).
    pub(crate) const EMPTY: Block = Block {
        pc: u64::MAX,
        generation: 0,
        prv: Priv::Machine,
        ops: Vec::new(),
        hits: 0,
        runs: 0,
        code: 0,
        code_epoch: 0,
        len: 0,
        fence: 0,
        code_pc: u64::MAX,
    };

    #[inline]
    pub(crate) fn slot(pc: u64) -> usize {
        ((pc >> 1) as usize) & (BLOCK_ENTRIES - 1)
    }
}

thread_local! {
    /// Caches of harts dropped on this thread, for the next hart it creates: allocating
    /// and initialising a cache (several MiB) dominated the cost of a branch. A reused
    /// cache starts a new generation, so none of its entries or blocks can match; the only
    /// thing carried over is compiled code, which a block reuses only for the same pc and
    /// instructions (see `Hart::build_block`). So which cache a hart gets changes nothing
    /// it computes.
    static SPARE_CACHES: std::cell::RefCell<Vec<ICache>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// Most caches kept per thread.
const SPARE_CACHES_MAX: usize = 2;

impl Default for ICache {
    fn default() -> Self {
        let spare = SPARE_CACHES
            .try_with(|s| s.try_borrow_mut().ok().and_then(|mut s| s.pop()))
            .ok()
            .flatten();
        if let Some(mut c) = spare {
            c.flush();
            return c;
        }
        ICache {
            entries: vec![
                Decoded {
                    pc: u64::MAX,
                    generation: 0,
                    prv: Priv::Machine,
                    raw16: 0,
                    insn: 0,
                    len: 0,
                    op: crate::predecode::Op::SLOW,
                    owner: u64::MAX,
                    shared: false,
                    checked: 0,
                };
                ICACHE_ENTRIES
            ],
            generation: 1,
            fence: 1,
            blocks: vec![Block::EMPTY; BLOCK_ENTRIES],
            code_pages: vec![0; CODE_PAGES],
            jit: crate::jit::CodeBuffer::default(),
            scratch: Vec::with_capacity(BLOCK_MAX),
        }
    }
}

impl Drop for ICache {
    /// Keeps the cache for the thread's next hart (see [`SPARE_CACHES`]) when there is room.
    fn drop(&mut self) {
        if self.entries.len() != ICACHE_ENTRIES || self.blocks.len() != BLOCK_ENTRIES {
            return; // the empty stand-in left behind below
        }
        let _ = SPARE_CACHES.try_with(|s| {
            if let Ok(mut s) = s.try_borrow_mut() {
                if s.len() < SPARE_CACHES_MAX {
                    let empty = ICache {
                        entries: Vec::new(),
                        generation: 1,
                        fence: 1,
                        blocks: Vec::new(),
                        code_pages: Vec::new(),
                        jit: crate::jit::CodeBuffer::default(),
                        scratch: Vec::new(),
                    };
                    s.push(std::mem::replace(self, empty));
                }
            }
        });
    }
}

impl ICache {
    #[inline]
    pub(crate) fn slot(pc: u64) -> usize {
        ((pc >> 1) as usize) & (ICACHE_ENTRIES - 1)
    }

    /// FENCE.I or a full flush: every entry and block must be checked against memory
    /// (fetched again) before its next use.
    pub(crate) fn uncheck_all(&mut self) {
        self.fence = self.fence.wrapping_add(1);
        if self.fence == 0 {
            // After 2^32 fences old `checked` values could match again: flush instead.
            self.flush();
            self.fence = 1;
        }
    }

    /// Forgets everything (in O(1): entries of older generations never match).
    pub(crate) fn flush(&mut self) {
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            // After 2^32 flushes, clear for real so no stale entry can match again.
            for e in self.entries.iter_mut() {
                e.pc = u64::MAX;
            }
            self.blocks.iter_mut().for_each(|b| b.pc = u64::MAX);
            self.code_pages.iter_mut().for_each(|g| *g = 0);
            self.generation = 1;
        }
    }
}

impl Hart {
    /// Turns the block compiler on (the default on x86-64 hosts) or off. Either way the
    /// hart computes exactly the same thing; off, every block is interpreted (for
    /// comparisons, and as an escape hatch). Dropping compiled code is immediate.
    pub fn set_compiling(&mut self, on: bool) {
        let jit = &mut self.icache.jit;
        jit.enabled = on && cfg!(all(target_arch = "x86_64", target_os = "linux"));
        if !jit.enabled {
            jit.drop_code();
        }
    }

    /// Whether hot blocks are being compiled.
    pub fn compiling(&self) -> bool {
        self.icache.jit.enabled
    }

    /// A hart in M-mode at `pc` with `ram`; the clock ticks `time` every `cycles_per_tick` cycles.
    pub fn new(ram: Ram, pc: u64, cycles_per_tick: u64) -> Hart {
        assert!(cycles_per_tick > 0, "the timebase must divide the clock");
        Hart {
            x: [0; 32],
            pc,
            prv: Priv::Machine,
            fp: FpState::default(),
            ram,
            cycles: 0,
            instret: 0,
            cycles_per_tick,
            timecmp: u64::MAX,
            mstatus: (2 << 32) | (2 << 34), // UXL = SXL = 64
            medeleg: 0,
            mideleg: 0,
            mie: 0,
            mip_sw: 0,
            mtvec: 0,
            mepc: 0,
            mcause: 0,
            mtval: 0,
            mscratch: 0,
            mcounteren: 0,
            menvcfg: 0,
            stvec: 0,
            sepc: 0,
            scause: 0,
            stval: 0,
            sscratch: 0,
            scounteren: 0,
            senvcfg: 0,
            satp: 0,
            tlb: Tlb::default(),
            reservation: NO_RESERVATION,
            irq_dirty: true,
            icache: ICache::default(),
            load_pages: FastPages::default(),
            store_pages: FastPages::default(),
            superpages: Vec::new(),
            superpages_overflow: false,
        }
    }

    /// Forgets the one-page load/store shortcuts; called whenever a translation
    /// or its permission may change (TLB flush, privilege change, mstatus write).
    #[inline]
    fn forget_data_pages(&mut self) {
        self.load_pages.clear();
        self.store_pages.clear();
    }

    /// Puts the hart where an SBI implementation leaves it for a supervisor
    /// kernel: S-mode, S-level interrupts and the usual exceptions delegated,
    /// counters readable from S and U, FP enabled (clean).
    pub fn enter_supervisor(&mut self, pc: u64, a0: u64, a1: u64) {
        self.prv = Priv::Supervisor;
        self.pc = pc;
        self.x[10] = a0;
        self.x[11] = a1;
        self.medeleg = DEFAULT_MEDELEG;
        self.mideleg = irq::S_MASK;
        self.mcounteren = 0x7;
        // OpenSBI also opens cycle/time/instret to U-mode; kernels without a PMU driver rely
        // on it for the vDSO's rdtime.
        self.scounteren = 0x7;
        self.mie = irq::S_MASK;
        self.mstatus = (self.mstatus & !mstatus::FS) | (1 << mstatus::FS_SHIFT);
        self.irq_dirty = true;
    }

    /// The hart's clock: cycles so far (one per retired instruction, plus idle jumps).
    #[inline]
    pub fn cycles(&self) -> u64 {
        self.cycles
    }

    /// Instructions retired so far.
    #[inline]
    pub fn instret(&self) -> u64 {
        self.instret
    }

    /// Moves the clock forward to `cycle` (an idle hart jumping to its next event) and
    /// returns how many cycles were skipped. Time never moves backwards: a `cycle` that is
    /// not in the future changes nothing and returns 0.
    pub fn skip_to(&mut self, cycle: u64) -> u64 {
        if cycle <= self.cycles {
            return 0;
        }
        let skipped = cycle - self.cycles;
        self.cycles = cycle;
        skipped
    }

    /// The `time` CSR: ticks of the timebase.
    #[inline]
    pub fn time(&self) -> u64 {
        self.cycles / self.cycles_per_tick
    }

    /// Cycle at which `time` reaches `timecmp` (u64::MAX when the timer is off).
    pub fn timer_deadline(&self) -> u64 {
        self.timecmp.saturating_mul(self.cycles_per_tick)
    }

    /// Sets the timer compare value (SBI set_timer); clears the pending timer until it fires.
    pub fn set_timecmp(&mut self, value: u64) {
        self.timecmp = value;
        self.irq_dirty = true;
    }

    /// Sets or clears the supervisor software interrupt (SBI IPI to self).
    pub fn set_ssip(&mut self, on: bool) {
        if on {
            self.mip_sw |= irq::SSI;
        } else {
            self.mip_sw &= !irq::SSI;
        }
        self.irq_dirty = true;
    }

    /// Tells the hart that device state changed (a PLIC line moved).
    pub fn poke_interrupts(&mut self) {
        self.irq_dirty = true;
    }

    /// Flushes cached translations and decoded instructions (SBI remote fences to self).
    /// Decoded instructions are only unchecked (see [`ICache`]): each is fetched again,
    /// through a fresh page walk, at its next use, and kept if its bytes are unchanged.
    pub fn flush_tlb(&mut self) {
        self.tlb.flush();
        self.icache.uncheck_all();
        self.forget_data_pages();
        self.superpages.clear();
        self.superpages_overflow = false;
    }

    /// Remembers that a superpage translation covering [base, base + size) was cached
    /// (its 4 KiB pieces may sit anywhere in the caches).
    fn note_superpage(&mut self, base: u64, size: u64) {
        if self.superpages.iter().any(|&(b, s)| b == base && s == size) {
            return;
        }
        if self.superpages.len() < MAX_SUPERPAGES {
            self.superpages.push((base, size));
        } else {
            self.superpages_overflow = true;
        }
    }

    /// SFENCE.VMA for one virtual address: forgets what the caches hold for its page (TLB
    /// entry, decoded instructions and blocks in it, the instruction that ends in it, the
    /// load/store shortcuts). When a cached superpage covers the address, its pieces could be
    /// anywhere, so everything is flushed instead.
    pub fn flush_tlb_page(&mut self, vaddr: u64) {
        if self.superpages_overflow
            || self
                .superpages
                .iter()
                .any(|&(b, s)| vaddr.wrapping_sub(b) < s)
        {
            self.flush_tlb();
            return;
        }
        let page = vaddr & !0xfff;
        self.tlb.invalidate(vaddr >> 12);
        self.load_pages.forget(vaddr);
        self.store_pages.forget(vaddr);
        if !self.icache.may_hold_code(vaddr) {
            // Most single-page fences follow a page fault on data: no decoded code to forget.
            return;
        }
        let first = ICache::slot(page);
        for k in 0..2048 {
            let e = &mut self.icache.entries[(first + k) & (ICACHE_ENTRIES - 1)];
            if e.pc >> 12 == page >> 12 {
                e.pc = u64::MAX;
            }
        }
        // A 4-byte instruction starting 2 bytes before the page was fetched through it too.
        let before = page.wrapping_sub(2);
        let e = &mut self.icache.entries[ICache::slot(before)];
        if e.pc == before {
            e.pc = u64::MAX;
        }
        let first = Block::slot(page);
        for k in 0..2048 {
            let b = &mut self.icache.blocks[(first + k) & (BLOCK_ENTRIES - 1)];
            if b.pc >> 12 == page >> 12 {
                b.pc = u64::MAX;
            }
        }
    }

    /// The effective mip: software bits, the timer, and the external line.
    pub fn mip(&self, bus: &dyn Bus) -> u64 {
        self.mip_with(bus.external_interrupt())
    }

    /// The effective mip given the external line's level.
    pub fn mip_with(&self, external: bool) -> u64 {
        let mut mip = self.mip_sw;
        if self.time() >= self.timecmp {
            mip |= irq::STI;
        }
        if external {
            mip |= irq::SEI;
        }
        mip
    }

    /// The interrupt to take now, if any (highest priority first).
    pub fn pending_interrupt(&self, bus: &dyn Bus) -> Option<u64> {
        self.pending_interrupt_with(bus.external_interrupt())
    }

    /// The interrupt to take now given the external line's level, if any.
    pub fn pending_interrupt_with(&self, external: bool) -> Option<u64> {
        let pending = self.mip_with(external) & self.mie;
        if pending == 0 {
            return None;
        }
        let m_enabled = self.prv < Priv::Machine || self.mstatus & mstatus::MIE != 0;
        let s_enabled = self.prv < Priv::Supervisor
            || (self.prv == Priv::Supervisor && self.mstatus & mstatus::SIE != 0);
        let m = if m_enabled {
            pending & !self.mideleg
        } else {
            0
        };
        let s = if s_enabled && self.prv != Priv::Machine {
            pending & self.mideleg
        } else {
            0
        };
        for set in [m, s] {
            for bit in [11u64, 3, 7, 9, 1, 5] {
                if set & (1 << bit) != 0 {
                    return Some(bit);
                }
            }
        }
        None
    }

    /// Enters the trap handler for exception or interrupt `cause` (interrupt bit included).
    pub fn take_trap(&mut self, cause: u64, tval: u64) {
        let interrupt = cause & cause::INTERRUPT != 0;
        let code = cause & !cause::INTERRUPT;
        let deleg = if interrupt {
            self.mideleg
        } else {
            self.medeleg
        };
        let epc = self.pc;
        if self.prv <= Priv::Supervisor && code < 64 && (deleg >> code) & 1 != 0 {
            self.scause = cause;
            self.sepc = epc;
            self.stval = tval;
            let mut s = self.mstatus;
            s = if s & mstatus::SIE != 0 {
                s | mstatus::SPIE
            } else {
                s & !mstatus::SPIE
            };
            s = if self.prv == Priv::Supervisor {
                s | mstatus::SPP
            } else {
                s & !mstatus::SPP
            };
            s &= !mstatus::SIE;
            self.mstatus = s;
            self.prv = Priv::Supervisor;
            self.pc = trap_vector(self.stvec, interrupt, code);
        } else {
            self.mcause = cause;
            self.mepc = epc;
            self.mtval = tval;
            let mut s = self.mstatus;
            s = if s & mstatus::MIE != 0 {
                s | mstatus::MPIE
            } else {
                s & !mstatus::MPIE
            };
            s = (s & !mstatus::MPP) | ((self.prv as u64) << mstatus::MPP_SHIFT);
            s &= !mstatus::MIE;
            self.mstatus = s;
            self.prv = Priv::Machine;
            self.pc = trap_vector(self.mtvec, interrupt, code);
        }
        self.irq_dirty = true;
        self.forget_data_pages();
    }

    // ---- address translation and memory ----

    fn effective_priv(&self, access: Access) -> Priv {
        if access != Access::Exec && self.mstatus & mstatus::MPRV != 0 {
            Priv::from_bits(self.mstatus >> mstatus::MPP_SHIFT)
        } else {
            self.prv
        }
    }

    fn page_fault(access: Access, vaddr: u64) -> Trap {
        let cause = match access {
            Access::Exec => cause::INSN_PAGE_FAULT,
            Access::Load => cause::LOAD_PAGE_FAULT,
            Access::Store => cause::STORE_PAGE_FAULT,
        };
        Trap::new(cause, vaddr)
    }

    fn access_fault(access: Access, addr: u64) -> Trap {
        let cause = match access {
            Access::Exec => cause::INSN_ACCESS,
            Access::Load => cause::LOAD_ACCESS,
            Access::Store => cause::STORE_ACCESS,
        };
        Trap::new(cause, addr)
    }

    /// Translates a virtual address to a physical one for `access`.
    #[inline]
    pub fn translate(&mut self, vaddr: u64, access: Access) -> Result<u64, Trap> {
        let prv = self.effective_priv(access);
        if prv == Priv::Machine || self.satp >> 60 == 0 {
            return Ok(vaddr);
        }
        let vpn = vaddr >> 12;
        if let Some(e) = self.tlb.lookup(vpn) {
            let sum = self.mstatus & mstatus::SUM != 0;
            let mxr = self.mstatus & mstatus::MXR != 0;
            if mmu::permits(e.flags, access, prv == Priv::Supervisor, sum, mxr)
                && (access != Access::Store || e.flags & pte::D != 0)
            {
                return Ok(e.page | (vaddr & 0xfff));
            }
        }
        self.walk(vaddr, access, prv)
    }

    fn walk(&mut self, vaddr: u64, access: Access, prv: Priv) -> Result<u64, Trap> {
        // Sv39: bits 63..39 must equal bit 38.
        let top = (vaddr as i64) >> 38;
        if top != 0 && top != -1 {
            return Err(Self::page_fault(access, vaddr));
        }
        let mut table = (self.satp & ((1 << 44) - 1)) << 12;
        for level in (0..3).rev() {
            let vpn_i = (vaddr >> (12 + 9 * level)) & 0x1ff;
            let pte_addr = table + vpn_i * 8;
            let off = self
                .ram
                .offset(pte_addr, 8)
                .ok_or_else(|| Self::access_fault(access, vaddr))?;
            let mut entry = self.ram.read_at(off, 8);
            if entry & pte::V == 0
                || (entry & pte::R == 0 && entry & pte::W != 0)
                || entry & pte::RESERVED != 0
            {
                return Err(Self::page_fault(access, vaddr));
            }
            let ppn = (entry >> 10) & ((1 << 44) - 1);
            if entry & (pte::R | pte::X) == 0 {
                if level == 0 {
                    return Err(Self::page_fault(access, vaddr));
                }
                table = ppn << 12;
                continue;
            }
            // Leaf: superpages must be aligned.
            if level > 0 && ppn & ((1 << (9 * level)) - 1) != 0 {
                return Err(Self::page_fault(access, vaddr));
            }
            let sum = self.mstatus & mstatus::SUM != 0;
            let mxr = self.mstatus & mstatus::MXR != 0;
            if !mmu::permits(entry, access, prv == Priv::Supervisor, sum, mxr) {
                return Err(Self::page_fault(access, vaddr));
            }
            let wanted = pte::A | if access == Access::Store { pte::D } else { 0 };
            if entry & wanted != wanted {
                entry |= wanted;
                self.ram.write_at(off, 8, entry);
            }
            let page_mask = (1u64 << (12 + 9 * level)) - 1;
            let phys_page = ((ppn << 12) & !page_mask) | (vaddr & page_mask & !0xfff);
            // A clean page is cached without D so the first store walks again and sets it.
            self.tlb.insert(vaddr >> 12, phys_page, entry);
            if level > 0 {
                self.note_superpage(vaddr & !page_mask, page_mask + 1);
            }
            return Ok(phys_page | (vaddr & 0xfff));
        }
        Err(Self::page_fault(access, vaddr))
    }

    /// Reads `size` bytes at physical `paddr` from RAM or a device.
    #[inline]
    fn read_phys(
        &mut self,
        bus: &mut dyn Bus,
        paddr: u64,
        size: u8,
        access: Access,
    ) -> Result<u64, Trap> {
        if let Some(off) = self.ram.offset(paddr, u64::from(size)) {
            return Ok(self.ram.read_at(off, size));
        }
        self.irq_dirty = true;
        bus.mmio_read(paddr, size, self.cycles)
            .ok_or_else(|| Self::access_fault(access, paddr))
    }

    #[inline]
    fn write_phys(
        &mut self,
        bus: &mut dyn Bus,
        paddr: u64,
        size: u8,
        value: u64,
    ) -> Result<(), Trap> {
        if let Some(off) = self.ram.offset(paddr, u64::from(size)) {
            self.ram.write_at(off, size, value);
            if self.reservation != NO_RESERVATION && self.reservation >> 3 == paddr >> 3 {
                self.reservation = NO_RESERVATION;
            }
            return Ok(());
        }
        self.irq_dirty = true;
        if bus.mmio_write(paddr, size, value, self.cycles) {
            Ok(())
        } else {
            Err(Self::access_fault(Access::Store, paddr))
        }
    }

    /// Loads `size` bytes at virtual `vaddr` (misaligned accesses are supported).
    #[inline(always)]
    pub fn load(&mut self, bus: &mut dyn Bus, vaddr: u64, size: u8) -> Result<u64, Trap> {
        // Fast path: same page as the last load, access within the page.
        if (vaddr & 0xfff) + u64::from(size) <= 0x1000 {
            if let Some(page) = self.load_pages.get(vaddr) {
                return Ok(self.ram.read_at(page + (vaddr & 0xfff) as usize, size));
            }
        }
        self.load_slow(bus, vaddr, size)
    }

    #[inline(never)]
    fn load_slow(&mut self, bus: &mut dyn Bus, vaddr: u64, size: u8) -> Result<u64, Trap> {
        if (vaddr & 0xfff) + u64::from(size) <= 0x1000 {
            let p = self.translate(vaddr, Access::Load)?;
            if let Some(off) = self.ram.offset(p & !0xfff, 0x1000) {
                self.load_pages.insert(vaddr, off);
            }
            return self.read_phys(bus, p, size, Access::Load);
        }
        let mut v = 0u64;
        for i in 0..u64::from(size) {
            let p = self.translate(vaddr.wrapping_add(i), Access::Load)?;
            v |= self.read_phys(bus, p, 1, Access::Load)? << (8 * i);
        }
        Ok(v)
    }

    /// Stores the low `size` bytes of `value` at virtual `vaddr`.
    #[inline(always)]
    pub fn store(
        &mut self,
        bus: &mut dyn Bus,
        vaddr: u64,
        size: u8,
        value: u64,
    ) -> Result<(), Trap> {
        // Fast path: same (dirty) page as the last store, no LR reservation to break.
        if (vaddr & 0xfff) + u64::from(size) <= 0x1000 && self.reservation == NO_RESERVATION {
            if let Some(page) = self.store_pages.get(vaddr) {
                self.ram
                    .write_at(page + (vaddr & 0xfff) as usize, size, value);
                return Ok(());
            }
        }
        self.store_slow(bus, vaddr, size, value)
    }

    #[inline(never)]
    fn store_slow(
        &mut self,
        bus: &mut dyn Bus,
        vaddr: u64,
        size: u8,
        value: u64,
    ) -> Result<(), Trap> {
        if (vaddr & 0xfff) + u64::from(size) <= 0x1000 {
            let p = self.translate(vaddr, Access::Store)?;
            if let Some(off) = self.ram.offset(p & !0xfff, 0x1000) {
                self.store_pages.insert(vaddr, off);
            }
            return self.write_phys(bus, p, size, value);
        }
        // Translate every byte first so a fault leaves memory untouched.
        let mut phys = [0u64; 8];
        for (i, slot) in phys.iter_mut().enumerate().take(usize::from(size)) {
            *slot = self.translate(vaddr.wrapping_add(i as u64), Access::Store)?;
        }
        for (i, &p) in phys.iter().enumerate().take(usize::from(size)) {
            self.write_phys(bus, p, 1, value >> (8 * i))?;
        }
        Ok(())
    }

    /// Translates an AMO/LR/SC address: must be naturally aligned and in RAM.
    pub(crate) fn amo_address(
        &mut self,
        vaddr: u64,
        size: u8,
        access: Access,
    ) -> Result<usize, Trap> {
        if !vaddr.is_multiple_of(u64::from(size)) {
            let c = if access == Access::Load {
                cause::LOAD_MISALIGNED
            } else {
                cause::STORE_MISALIGNED
            };
            return Err(Trap::new(c, vaddr));
        }
        let p = self.translate(vaddr, access)?;
        self.ram
            .offset(p, u64::from(size))
            .ok_or_else(|| Self::access_fault(access, p))
    }

    /// The decoded instruction at pc, from the cache or fetched and expanded.
    /// `Err` carries the fetch fault or, for an illegal RVC parcel, an
    /// illegal-instruction trap with the parcel as tval.
    #[inline]
    pub(crate) fn decoded(&mut self, bus: &mut dyn Bus) -> Result<Decoded, Trap> {
        let pc = self.pc;
        let slot = ICache::slot(pc);
        let e = self.icache.entries[slot];
        let fence = self.icache.fence;
        let raw = if e.pc == pc && e.generation == self.icache.generation && e.prv == self.prv {
            if e.checked == fence {
                return Ok(e);
            }
            // Unchecked since a FENCE.I: fetch exactly as a flushed cache would (same
            // translation, same faults) and keep the entry if the bytes are the same.
            let raw = self.fetch(bus)?;
            let same = if raw & 3 != 3 {
                e.len == 2 && e.raw16 == raw as u16
            } else {
                e.len == 4 && e.insn == raw
            };
            if same {
                self.icache.entries[slot].checked = fence;
                self.icache.note_code(pc, e.len);
                return Ok(self.icache.entries[slot]);
            }
            raw
        } else {
            self.fetch(bus)?
        };
        let (insn, len, raw16) = if raw & 3 != 3 {
            match crate::rvc::expand(raw as u16) {
                Some(i) => (i, 2, raw as u16),
                None => return Err(Trap::new(cause::ILLEGAL_INSN, u64::from(raw & 0xffff))),
            }
        } else {
            (raw, 4, 0)
        };
        let d = Decoded {
            pc,
            generation: self.icache.generation,
            prv: self.prv,
            raw16,
            insn,
            len,
            op: crate::predecode::decode(insn),
            owner: u64::MAX,
            shared: false,
            checked: fence,
        };
        // The entry being replaced may back blocks: they must not outlive it (the next
        // fetch of that pc reads memory again, and a block would not).
        let old = self.icache.entries[slot];
        // (An entry a single-page fence emptied had its page's blocks dropped with it.)
        if old.owner != u64::MAX && old.generation == self.icache.generation && old.pc != u64::MAX {
            if old.shared {
                self.forget_blocks_covering(old.pc);
            } else {
                let b = &mut self.icache.blocks[Block::slot(old.owner)];
                if b.pc == old.owner {
                    b.pc = u64::MAX;
                }
            }
        }
        self.icache.entries[slot] = d;
        self.icache.note_code(pc, len);
        Ok(d)
    }

    /// Fetches the instruction at pc: returns (32-bit instruction or expanded RVC, its length).
    #[inline]
    pub(crate) fn fetch(&mut self, bus: &mut dyn Bus) -> Result<u32, Trap> {
        let pc = self.pc;
        let p = self.translate(pc, Access::Exec)?;
        let lo = self.fetch_phys(bus, p, pc)?;
        if lo & 3 != 3 {
            return Ok(lo);
        }
        let hi = if pc & 0xfff == 0xffe {
            let p2 = self.translate(pc + 2, Access::Exec)?;
            self.fetch_phys(bus, p2, pc + 2)?
        } else {
            self.fetch_phys(bus, p + 2, pc + 2)?
        };
        Ok(lo | (hi << 16))
    }

    #[inline]
    fn fetch_phys(&mut self, _bus: &mut dyn Bus, paddr: u64, vaddr: u64) -> Result<u32, Trap> {
        match self.ram.offset(paddr, 2) {
            Some(off) => Ok(self.ram.read_at(off, 2) as u32),
            None => Err(Trap::new(cause::INSN_ACCESS, vaddr)),
        }
    }

    // ---- CSRs ----

    fn fs_off(&self) -> bool {
        self.mstatus & mstatus::FS == 0
    }

    /// Marks the FP state dirty (any write to an f register or fcsr).
    #[inline]
    pub(crate) fn fs_dirty(&mut self) {
        self.mstatus |= mstatus::FS_DIRTY;
    }

    fn sstatus_sd(&self, value: u64) -> u64 {
        if self.mstatus & mstatus::FS == mstatus::FS_DIRTY {
            value | mstatus::SD
        } else {
            value & !mstatus::SD
        }
    }

    fn counter_allowed(&self, bit: u64) -> bool {
        match self.prv {
            Priv::Machine => true,
            Priv::Supervisor => self.mcounteren & bit != 0,
            Priv::User => self.mcounteren & bit != 0 && self.scounteren & bit != 0,
        }
    }

    /// Reads CSR `csr`, checking privilege; `bus` supplies the external interrupt line for mip/sip.
    pub(crate) fn csr_read(&self, csr: u16, bus: &dyn Bus) -> Result<u64, ()> {
        if (csr >> 8) & 3 > self.prv as u16 {
            return Err(());
        }
        let v = match csr {
            addr::FFLAGS | addr::FRM | addr::FCSR if self.fs_off() => return Err(()),
            addr::FFLAGS => u64::from(self.fp.fflags),
            addr::FRM => u64::from(self.fp.frm),
            addr::FCSR => u64::from(self.fp.fflags) | (u64::from(self.fp.frm) << 5),
            addr::CYCLE if self.counter_allowed(1) => self.cycles,
            addr::TIME if self.counter_allowed(2) => self.time(),
            addr::INSTRET if self.counter_allowed(4) => self.instret,
            addr::SSTATUS => self.sstatus_sd(self.mstatus & mstatus::SSTATUS_MASK),
            addr::SIE => self.mie & self.mideleg,
            addr::STVEC => self.stvec,
            addr::SCOUNTEREN => self.scounteren,
            addr::SENVCFG => self.senvcfg,
            addr::SSCRATCH => self.sscratch,
            addr::SEPC => self.sepc,
            addr::SCAUSE => self.scause,
            addr::STVAL => self.stval,
            addr::SIP => self.mip(bus) & self.mideleg,
            addr::SATP => {
                if self.prv == Priv::Supervisor && self.mstatus & mstatus::TVM != 0 {
                    return Err(());
                }
                self.satp
            }
            addr::MVENDORID | addr::MARCHID | addr::MIMPID | addr::MHARTID | addr::MCONFIGPTR => 0,
            addr::MSTATUS => self.sstatus_sd(self.mstatus),
            addr::MISA => MISA,
            addr::MEDELEG => self.medeleg,
            addr::MIDELEG => self.mideleg,
            addr::MIE => self.mie,
            addr::MTVEC => self.mtvec,
            addr::MCOUNTEREN => self.mcounteren,
            addr::MENVCFG => self.menvcfg,
            addr::MSCRATCH => self.mscratch,
            addr::MEPC => self.mepc,
            addr::MCAUSE => self.mcause,
            addr::MTVAL => self.mtval,
            addr::MIP => self.mip(bus),
            addr::MCYCLE => self.cycles,
            addr::MINSTRET => self.instret,
            _ => return Err(()),
        };
        Ok(v)
    }

    /// Writes CSR `csr` (the caller checked it is not read-only).
    pub(crate) fn csr_write(&mut self, csr: u16, value: u64) -> Result<(), ()> {
        if (csr >> 8) & 3 > self.prv as u16 || csr >> 10 == 3 {
            return Err(());
        }
        match csr {
            addr::FFLAGS | addr::FRM | addr::FCSR if self.fs_off() => return Err(()),
            addr::FFLAGS => {
                self.fp.fflags = (value & 0x1f) as u8;
                self.fs_dirty();
            }
            addr::FRM => {
                self.fp.frm = (value & 7) as u8;
                self.fs_dirty();
            }
            addr::FCSR => {
                self.fp.fflags = (value & 0x1f) as u8;
                self.fp.frm = ((value >> 5) & 7) as u8;
                self.fs_dirty();
            }
            addr::SSTATUS => {
                let mask = mstatus::SSTATUS_MASK & mstatus::WRITABLE;
                self.mstatus = (self.mstatus & !mask) | (value & mask);
                self.irq_dirty = true;
                self.forget_data_pages();
            }
            addr::SIE => {
                self.mie = (self.mie & !self.mideleg) | (value & self.mideleg);
                self.irq_dirty = true;
            }
            addr::STVEC => self.stvec = value & !2,
            addr::SCOUNTEREN => self.scounteren = value & 7,
            addr::SENVCFG => self.senvcfg = value & 1,
            addr::SSCRATCH => self.sscratch = value,
            addr::SEPC => self.sepc = value & !1,
            addr::SCAUSE => self.scause = value,
            addr::STVAL => self.stval = value,
            addr::SIP => {
                // Only SSIP is writable from S-mode.
                let mask = irq::SSI & self.mideleg;
                self.mip_sw = (self.mip_sw & !mask) | (value & mask);
                self.irq_dirty = true;
            }
            addr::SATP => {
                if self.prv == Priv::Supervisor && self.mstatus & mstatus::TVM != 0 {
                    return Err(());
                }
                // Bare and Sv39 only, no ASID bits; other modes leave satp unchanged.
                let mode = value >> 60;
                if mode == 0 || mode == 8 {
                    self.satp = value & ((0xf << 60) | ((1 << 44) - 1));
                    self.flush_tlb();
                }
            }
            addr::MSTATUS => {
                self.mstatus = (self.mstatus & !mstatus::WRITABLE) | (value & mstatus::WRITABLE);
                // MPP = 2 is reserved: keep it legal.
                if (self.mstatus >> mstatus::MPP_SHIFT) & 3 == 2 {
                    self.mstatus &= !mstatus::MPP;
                }
                self.irq_dirty = true;
                self.flush_tlb();
            }
            addr::MISA => {}
            addr::MEDELEG => self.medeleg = value & DEFAULT_MEDELEG,
            addr::MIDELEG => {
                self.mideleg = value & irq::S_MASK;
                self.irq_dirty = true;
            }
            addr::MIE => {
                self.mie = value & irq::ALL;
                self.irq_dirty = true;
            }
            addr::MTVEC => self.mtvec = value & !2,
            addr::MCOUNTEREN => self.mcounteren = value & 7,
            addr::MENVCFG => self.menvcfg = value & 1,
            addr::MSCRATCH => self.mscratch = value,
            addr::MEPC => self.mepc = value & !1,
            addr::MCAUSE => self.mcause = value,
            addr::MTVAL => self.mtval = value,
            addr::MIP => {
                let mask = irq::SSI | irq::STI | irq::SEI;
                self.mip_sw = (self.mip_sw & !mask) | (value & mask);
                self.irq_dirty = true;
            }
            addr::MCYCLE | addr::MINSTRET => {} // the clock is wio's: writes are ignored
            _ => return Err(()),
        }
        Ok(())
    }

    /// SRET/MRET bookkeeping.
    pub(crate) fn xret(&mut self, machine: bool) {
        let s = self.mstatus;
        if machine {
            let mpp = Priv::from_bits(s >> mstatus::MPP_SHIFT);
            let mut n = if s & mstatus::MPIE != 0 {
                s | mstatus::MIE
            } else {
                s & !mstatus::MIE
            };
            n |= mstatus::MPIE;
            n &= !mstatus::MPP;
            if mpp != Priv::Machine {
                n &= !mstatus::MPRV;
            }
            self.mstatus = n;
            self.prv = mpp;
            self.pc = self.mepc;
        } else {
            let spp = if s & mstatus::SPP != 0 {
                Priv::Supervisor
            } else {
                Priv::User
            };
            let mut n = if s & mstatus::SPIE != 0 {
                s | mstatus::SIE
            } else {
                s & !mstatus::SIE
            };
            n |= mstatus::SPIE;
            n &= !mstatus::SPP;
            n &= !mstatus::MPRV;
            self.mstatus = n;
            self.prv = spp;
            self.pc = self.sepc;
        }
        self.irq_dirty = true;
        self.forget_data_pages();
    }

    /// Drops the blocks that may hold a copy of the instruction at `pc` (those starting up to
    /// a block's length before it): its cache entry is being replaced.
    #[inline]
    pub(crate) fn forget_blocks_covering(&mut self, pc: u64) {
        let span = (BLOCK_MAX as u64) * 4;
        let mut start = pc.saturating_sub(span - 2);
        loop {
            let b = &mut self.icache.blocks[Block::slot(start)];
            if b.pc == start {
                b.pc = u64::MAX;
            }
            if start >= pc {
                break; // (checked before stepping: no wrap-around near u64::MAX)
            }
            start += 2;
        }
    }

    /// Executes a block (see [`Block`]): stops early at a trap, a taken jump (its last
    /// instruction anyway) or when an instruction may have changed which interrupt is
    /// deliverable (an MMIO access).
    #[inline]
    fn exec_block(&mut self, bus: &mut dyn Bus, ops: &[(crate::predecode::Op, u8, u32)]) {
        for (op, len, _) in ops.iter() {
            let pc = self.pc;
            let len = u64::from(*len);
            self.cycles += 1;
            match self.exec_fast(bus, op, len) {
                Ok(crate::exec::Flow::Next) => {
                    self.pc = pc.wrapping_add(len);
                    self.instret += 1;
                }
                Ok(_) => {
                    self.instret += 1;
                    return;
                }
                Err(t) => {
                    self.take_trap(t.cause, t.tval);
                    return;
                }
            }
            if self.irq_dirty {
                return;
            }
        }
    }

    /// Brings a block that went stale (FENCE.I or a full flush) back: its page is
    /// translated for execution as the fetch of its first instruction would (same walk,
    /// same accessed bit), and if that succeeds and every instruction's bytes in memory
    /// are still those cached, the block and its cache entries count as fetched again.
    /// Otherwise nothing changes (no trap is taken here): this visit runs the
    /// instructions one by one, checking each, and the next rebuilds the block. The instructions are thus fetched together when the
    /// block is entered rather than one by one as they run; the two differ only for code
    /// that rewrites a later instruction of its own block, or the page tables of its own
    /// code, without a fence, where the architecture leaves the outcome open.
    #[inline(never)]
    fn recheck_block(&mut self, slot: usize) {
        let start = self.icache.blocks[slot].pc;
        let fence = self.icache.fence;
        let Ok(paddr) = self.translate(start, Access::Exec) else {
            self.icache.blocks[slot].hits = BLOCK_HOT - 2;
            return;
        };
        let Some(page) = self.ram.offset(paddr & !0xfff, 0x1000) else {
            self.icache.blocks[slot].hits = BLOCK_HOT - 2;
            return;
        };
        let ICache {
            entries,
            blocks,
            generation,
            ..
        } = &mut self.icache;
        let block = &mut blocks[slot];
        let mut pc = start;
        for &(_, len, _) in block.ops.iter() {
            let e = &entries[ICache::slot(pc)];
            let at = page + (pc & 0xfff) as usize;
            let same = e.pc == pc
                && e.generation == *generation
                && e.prv == self.prv
                && e.len == len
                && if len == 2 {
                    self.ram.read_at(at, 2) as u16 == e.raw16
                } else {
                    self.ram.read_at(at, 4) as u32 == e.insn
                };
            if !same {
                // Run one by one this time (checking each), rebuild on the next visit.
                block.hits = BLOCK_HOT - 2;
                return;
            }
            pc = pc.wrapping_add(u64::from(len));
        }
        block.fence = fence;
        let mut pc = start;
        for &(_, len, _) in block.ops.iter() {
            entries[ICache::slot(pc)].checked = fence;
            pc = pc.wrapping_add(u64::from(len));
        }
        self.icache.note_code(start, 2);
    }

    /// Runs a compiled block (see `jit`): the same effect as [`Hart::exec_block`] on the
    /// block's instructions, followed by as many compiled blocks as this loop would run
    /// next before `chunk_end` (compiled blocks chain to their successors).
    #[inline]
    fn run_compiled(&mut self, bus: &mut dyn Bus, code: usize, chunk_end: u64) {
        let blocks = self.icache.blocks.as_ptr();
        let hart: *mut Hart = self;
        let mut ctx = crate::jit::Ctx {
            hart,
            bus: bus as *mut dyn Bus,
            blocks,
            chunk_end,
        };
        // SAFETY: `code` is the entry of a block compiled into this hart's code buffer
        // under its current epoch (so still mapped and unchanged), generated for the
        // `extern "sysv64" fn(*mut Hart, *mut Ctx)` signature; it accesses the hart only
        // through `hart` and the bus through `ctx` while we hold both exclusively.
        unsafe {
            let f: crate::jit::BlockFn = std::mem::transmute::<usize, crate::jit::BlockFn>(code);
            f(hart, &mut ctx);
        }
    }

    /// Builds the block starting at pc into `slot` from what the decoded-instruction cache
    /// holds (within pc's page); the block ends at the first instruction it lacks. Blocks are
    /// a pure copy of cache entries (replacing an entry a block copied drops that block, see
    /// [`Hart::decoded`]), so they change nothing the guest can observe and snapshots need
    /// not keep them.
    #[inline(never)]
    fn build_block(&mut self, slot: usize) {
        use crate::predecode::Kind;
        let start = self.pc;
        let ICache {
            entries,
            blocks,
            generation,
            fence,
            jit,
            scratch,
            ..
        } = &mut self.icache;
        let ops = scratch;
        ops.clear();
        let mut pc = start;
        while ops.len() < BLOCK_MAX && pc >> 12 == start >> 12 && pc & 0xfff <= 0xffc {
            // Only instructions the decoded-instruction cache holds now, checked since the
            // last FENCE.I: building a block fetches nothing, so it leaves the TLB, the
            // cache and memory as they were.
            let e = &mut entries[ICache::slot(pc)];
            if e.pc != pc
                || e.generation != *generation
                || e.prv != self.prv
                || e.checked != *fence
                || e.op.kind == Kind::Slow
            {
                break;
            }
            if e.owner != u64::MAX && e.owner != start {
                e.shared = true;
            }
            e.owner = start;
            let d = *e;
            ops.push((d.op, d.len, d.insn));
            pc = pc.wrapping_add(u64::from(d.len));
            // Conditional branches do not end a block: a taken one leaves it early.
            if matches!(d.op.kind, Kind::Jal | Kind::Jalr) {
                break;
            }
        }
        let block = &mut blocks[slot];
        // Compiled code depends only on the start pc and the instructions: a block rebuilt
        // with the same ones (after a FENCE.I or a flush that changed neither) keeps it.
        let keep = block.code != 0
            && block.code_epoch == jit.epoch
            && block.code_pc == start
            && block.ops == *ops;
        // The slot's instruction list keeps its allocation from build to build.
        std::mem::swap(&mut block.ops, ops);
        block.pc = start;
        block.generation = *generation;
        block.prv = self.prv;
        block.hits = BUILT;
        block.fence = *fence;
        block.len = block.ops.len() as u32;
        if !keep {
            block.runs = 0;
            block.code = 0;
            block.code_epoch = 0;
            block.code_pc = u64::MAX;
        }
    }

    /// Runs until the clock reaches `until_cycles` (or the bus's next device event),
    /// WFI idles, or an SBI call needs serving.
    pub fn run(&mut self, bus: &mut dyn Bus, until_cycles: u64) -> Stop {
        loop {
            let until_cycles = until_cycles.min(bus.next_event_cycle());
            if self.cycles >= until_cycles {
                return Stop::Budget;
            }
            if let Some(code) = self.pending_interrupt(bus) {
                self.take_trap(cause::INTERRUPT | code, 0);
            }
            self.irq_dirty = false;
            // Run in a chunk that ends exactly where the timer fires, so the timer
            // interrupt lands on the same instruction in every run.
            let deadline = self.timer_deadline();
            let chunk_end = if deadline > self.cycles {
                until_cycles.min(deadline)
            } else {
                until_cycles
            };
            // Set after a single fast instruction that fell through: the next pc is the
            // middle of a run of instructions, not where a block would start, so the block
            // table (visit counts) is not consulted for it.
            let mut sequential = false;
            while self.cycles < chunk_end && !self.irq_dirty {
                let pc = self.pc;
                // Fastest path: a block of pre-decoded instructions starting here.
                if !sequential {
                    let bslot = Block::slot(pc);
                    let generation = self.icache.generation;
                    let fence = self.icache.fence;
                    let mut b = &mut self.icache.blocks[bslot];
                    if b.pc == pc && b.generation == generation && b.prv == self.prv {
                        if b.hits == BUILT && b.fence != fence {
                            if b.ops.is_empty() {
                                // "No block starts here" copied nothing: it cannot go stale.
                                b.fence = fence;
                            } else {
                                // Stale after a FENCE.I or full flush: fetch it again as a
                                // whole (or count visits again, see `recheck_block`).
                                self.recheck_block(bslot);
                                b = &mut self.icache.blocks[bslot];
                            }
                        }
                        // A built block with no instructions remembers that none starts here.
                        if b.hits == BUILT && b.fence == fence {
                            if !b.ops.is_empty() && self.cycles + b.ops.len() as u64 <= chunk_end {
                                let epoch = self.icache.jit.epoch;
                                if b.code_epoch == epoch {
                                    if b.code != 0 {
                                        let code = b.code;
                                        self.run_compiled(bus, code, chunk_end);
                                        continue;
                                    }
                                } else if b.runs < crate::jit::JIT_HOT {
                                    b.runs += 1;
                                } else {
                                    let ICache { blocks, jit, .. } = &mut self.icache;
                                    let b = &mut blocks[bslot];
                                    b.code = crate::jit::compile(jit, pc, &b.ops).unwrap_or(0);
                                    b.code_epoch = jit.epoch;
                                    b.code_pc = pc;
                                    if b.code != 0 {
                                        continue;
                                    }
                                }
                                let b = &self.icache.blocks[bslot];
                                let ops: *const [(crate::predecode::Op, u8, u32)] =
                                    b.ops.as_slice();
                                // SAFETY: `ops` points into the block cache, which only slow
                                // instructions, traps' callers and cache fills change; a block
                                // holds fast instructions only and ends at a trap, so the list
                                // stays alive and unchanged while it runs.
                                self.exec_block(bus, unsafe { &*ops });
                                continue;
                            }
                        } else if b.hits.saturating_add(1) >= BLOCK_HOT {
                            self.build_block(bslot);
                        } else {
                            b.hits += 1;
                        }
                    } else {
                        b.pc = pc;
                        b.generation = generation;
                        b.prv = self.prv;
                        b.hits = 1;
                        // Not runnable (nor reachable by chained jumps) until built; the old
                        // code stays only for `build_block` to reuse if pc and instructions match.
                        b.fence = 0;
                    }
                }
                sequential = false;
                // Fast path: a cached, pre-decoded common instruction.
                let e = &self.icache.entries[ICache::slot(pc)];
                if e.pc == pc
                    && e.generation == self.icache.generation
                    && e.prv == self.prv
                    && e.checked == self.icache.fence
                    && e.op.kind != crate::predecode::Kind::Slow
                {
                    let op = e.op;
                    let len = u64::from(e.len);
                    self.cycles += 1;
                    match self.exec_fast(bus, &op, len) {
                        Ok(crate::exec::Flow::Next) => {
                            self.pc = pc.wrapping_add(len);
                            self.instret += 1;
                            sequential = true;
                        }
                        // Fast ops only continue or jump; they never stop the loop.
                        Ok(_) => self.instret += 1,
                        Err(t) => self.take_trap(t.cause, t.tval),
                    }
                    continue;
                }
                if let Some(stop) = self.step(bus) {
                    return stop;
                }
            }
        }
    }
}

fn trap_vector(tvec: u64, interrupt: bool, code: u64) -> u64 {
    let base = tvec & !3;
    if interrupt && tvec & 3 == 1 {
        base + 4 * code
    } else {
        base
    }
}
