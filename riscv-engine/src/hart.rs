//! One RV64GC hart: its architectural state and caches (the [`Hart`] struct), how it is
//! built and set up for a kernel, its clock and timer, and the run loop that dispatches
//! between compiled blocks, interpreted blocks and single instructions.
//!
//! The hart's behaviour lives with what it models, in `impl Hart` blocks of other modules:
//! CSR access in `csr::access`, trap entry and interrupts in `trap::entry`, Sv39
//! translation, loads and stores in `mmu::translate`, instruction fetch and block building
//! in `icache::fill`, instruction semantics in `exec`, compiled blocks in `jit`, snapshots
//! in `state`. This module imports only the types those concerns are made of (leaf
//! modules), never the modules that implement the behaviour; it calls their methods.

use crate::bus::Bus;
use crate::coverage::Coverage;
use crate::csr::{cause, irq, mstatus, Priv};
use crate::ecc::Ecc;
use crate::fpu::FpState;
use crate::icache::{Block, FastPages, ICache, BLOCK_HOT, BUILT, CONTEST, JIT_HOT};
use crate::mmu::Tlb;
use crate::pmp::Pmp;
use crate::predecode::{Kind, Op};
use crate::ram::Ram;
use crate::stuck::Stuck;
use crate::trap::Flow;

/// Re-exported from `csr`, where they now live, for existing users of `hart::`.
pub use crate::csr::{DEFAULT_MEDELEG, MISA};
/// Re-exported from `trap`, where they now live, for existing users of `hart::`.
pub use crate::trap::{Stop, Trap};

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
    /// Cycles the timer interrupt is taken after `timecmp` is reached (the machine's
    /// seeded interrupt latency; 0 = at once). See [`Hart::set_timer`].
    pub(crate) timer_delay: u64,
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
    /// A debugger's breakpoints (virtual pcs, sorted; see `debug`). Not part of the
    /// hart's state: snapshots never hold them.
    pub(crate) breakpoints: Vec<u64>,
    /// M-mode is the guest's (firmware or a bare-metal program, see
    /// [`Hart::enter_firmware`]): ECALL from S traps to M instead of stopping for wio's
    /// SBI, the timer raises MTIP (CLINT), the CLINT window answers, PMP is enforced.
    pub(crate) firmware: bool,
    /// Physical memory protection (enforced only with `firmware`).
    pub(crate) pmp: Pmp,
    /// Some PMP entry is locked, so M-mode accesses are checked too. Derived from `pmp`
    /// (see [`Hart::pmp_changed`]).
    pub(crate) pmp_locked: bool,
    /// Pages PMP allows whole, by (page, privilege, access): a memo of `pmp`'s verdicts,
    /// emptied on every PMP change (a pure cache: not part of a snapshot).
    pub(crate) pmp_pages: Box<[u64; PMP_MEMO]>,
    /// The guest wrote mtimecmp since the run loop last looked: the run returns
    /// [`Stop::TimerSet`] for the machine to add its latency.
    pub(crate) timer_written: bool,
    /// SECDED ECC on RAM and its pending codeword errors (see `ecc`).
    pub(crate) ecc: Ecc,
    /// Stuck-at bits of RAM (see `stuck`).
    pub(crate) stuck: Stuck,
    /// User-mode code coverage, when observed (see `coverage`; not part of the state).
    pub(crate) coverage: Option<Box<Coverage>>,
    /// What software wrote to mcycle and minstret, as offsets from the clock's cycles
    /// and retired instructions (the clock itself is wio's and never moves with them).
    pub(crate) counter_bias: [u64; 2],
    /// The vector unit, when the ISA has V (see `vector`).
    pub(crate) vector: Option<Box<crate::vector::unit::Vector>>,
    /// The optional extensions implemented (configuration, not state: a snapshot's
    /// machine restores with the ISA it was configured with; see [`Hart::set_isa`]).
    pub(crate) isa: crate::isa::Isa,
}

/// [`Hart::reservation`] when no LR reservation is held (no RAM address is all ones).
pub(crate) const NO_RESERVATION: u64 = u64::MAX;

/// Entries of the PMP page memo.
pub(crate) const PMP_MEMO: usize = 256;

/// Superpage regions tracked for single-page SFENCE.VMA.
pub(crate) const MAX_SUPERPAGES: usize = 64;

impl Hart {
    /// Turns the block compiler on (the default on x86-64 hosts) or off. Either way the
    /// hart computes exactly the same thing; off, every block is interpreted (for
    /// comparisons, and as an escape hatch). Dropping compiled code is immediate.
    pub fn set_compiling(&mut self, on: bool) {
        let jit = &mut self.icache.jit;
        jit.enabled = on && cfg!(all(target_arch = "x86_64", target_os = "linux"));
        if !jit.enabled {
            jit.drop_code();
            self.icache.drop_stale_code();
        }
    }

    /// Whether hot blocks are being compiled.
    pub fn compiling(&self) -> bool {
        self.icache.jit.enabled
    }

    /// Sets the optional extensions the hart implements (plain RV64GC by default). Every
    /// decoded instruction and block is dropped, since what an encoding means changed.
    pub fn set_isa(&mut self, isa: crate::isa::Isa) {
        if isa != self.isa {
            self.isa = isa;
            self.icache.flush();
            self.vector = isa
                .vlen()
                .map(|vlen| Box::new(crate::vector::unit::Vector::new(vlen)));
        }
    }

    /// The optional extensions the hart implements.
    pub fn isa(&self) -> crate::isa::Isa {
        self.isa
    }

    /// The offsets software's writes to mcycle and minstret put between those counters
    /// and the clock's cycles and retired instructions (zero until it writes one). Not in
    /// [`crate::HartState`]: a snapshot keeps it in a section of its own only when set.
    pub fn counter_bias(&self) -> [u64; 2] {
        self.counter_bias
    }

    /// Sets what [`Hart::counter_bias`] returns (a snapshot's restore).
    pub fn set_counter_bias(&mut self, bias: [u64; 2]) {
        self.counter_bias = bias;
    }

    /// Starts (or, with None, stops) counting user-mode code coverage from `from` (an
    /// empty map, or the counts a run had so far). Changes nothing the guest can see.
    pub fn set_coverage(&mut self, from: Option<Coverage>) {
        self.coverage = from.map(Box::new);
    }

    /// The coverage counted so far, if it is being counted.
    pub fn coverage(&self) -> Option<&Coverage> {
        self.coverage.as_deref()
    }

    /// The counters that reached a new bucket since the last call (see
    /// [`Coverage::take_fresh`]; nothing when coverage is off).
    pub fn take_coverage(&mut self) -> Vec<u32> {
        self.coverage
            .as_deref_mut()
            .map(Coverage::take_fresh)
            .unwrap_or_default()
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
            timer_delay: 0,
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
            breakpoints: Vec::new(),
            firmware: false,
            pmp: Pmp::default(),
            pmp_locked: false,
            pmp_pages: Box::new([0; PMP_MEMO]),
            timer_written: false,
            ecc: Ecc::default(),
            stuck: Stuck::default(),
            coverage: None,
            counter_bias: [0; 2],
            vector: None,
            isa: crate::isa::Isa::RV64GC,
        }
    }

    /// Puts the hart where reset leaves it for an M-mode guest (firmware such as
    /// OpenSBI, or a bare-metal program): M-mode at `pc` with a0 = hart id 0, `a1` (the
    /// device tree) and `a2` (fw_dynamic's info, or 0). From here on the guest's M-mode
    /// owns the machine: ECALLs from S trap to it, the timer is the CLINT's (MTIP), and
    /// PMP is enforced.
    pub fn enter_firmware(&mut self, pc: u64, a1: u64, a2: u64) {
        self.prv = Priv::Machine;
        self.pc = pc;
        self.x[10] = 0;
        self.x[11] = a1;
        self.x[12] = a2;
        self.firmware = true;
        self.pmp_changed();
        self.irq_dirty = true;
    }

    /// Recomputes whether M-mode accesses are PMP-checked, and drops every cached
    /// translation, page shortcut and decoded instruction (what they allowed may have
    /// changed).
    pub(crate) fn pmp_changed(&mut self) {
        self.pmp_locked = self.pmp.any_locked();
        self.pmp_pages.fill(0);
        self.flush_tlb();
    }

    /// A fault changed how RAM behaves under the hart's caches (an ECC error, a stuck
    /// bit): drops the load/store shortcuts (accesses to such pages must take the slow,
    /// checking path) and makes cached instructions be fetched, and checked, again.
    pub(crate) fn memory_faulted(&mut self) {
        self.forget_data_pages();
        self.icache.uncheck_all();
    }

    /// Forgets the one-page load/store shortcuts; called whenever a translation
    /// or its permission may change (TLB flush, privilege change, mstatus write).
    #[inline]
    pub(crate) fn forget_data_pages(&mut self) {
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

    /// Executes a block (see [`Block`]): stops early at a trap, a taken jump (its last
    /// instruction anyway) or when an instruction may have changed which interrupt is
    /// deliverable (an MMIO access).
    #[inline]
    fn exec_block(&mut self, bus: &mut dyn Bus, ops: &[(Op, u8, u32)]) {
        for (op, len, _) in ops.iter() {
            let pc = self.pc;
            let len = u64::from(*len);
            if op.kind == Kind::Csr {
                self.cycles += 1;
                match self.csr_in_block(bus, op.csr_insn()) {
                    Ok(leave) => {
                        self.pc = pc.wrapping_add(len);
                        self.instret += 1;
                        if leave {
                            return;
                        }
                    }
                    Err(t) => {
                        self.take_trap(t.cause, t.tval);
                        return;
                    }
                }
                continue;
            }
            if op.kind.needs_fpu() && !self.fpu_on() {
                // Its illegal-instruction trap reports the instruction's bytes, which only
                // `step` has (it never stops the run for these instructions).
                let _ = self.step(bus);
                return;
            }
            self.cycles += 1;
            match self.exec_fast(bus, op, len) {
                Ok(Flow::Next) => {
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

    /// Executes the instruction at `pc` when the decoded-instruction cache holds it as a
    /// fast one: Some(true) when it fell through to the next instruction, Some(false)
    /// after a jump or a trap (fast ops never stop the run loop); None when it must take
    /// the slow path ([`Hart::step`]).
    #[inline(always)]
    pub(crate) fn exec_cached(&mut self, bus: &mut dyn Bus, pc: u64) -> Option<bool> {
        let slot = ICache::slot(pc);
        // A slot not written since a warm restore: the snapshot's entry first, so the
        // instruction runs here as it does in the hart that took the snapshot (through
        // `step` it would leave the next pc to count as a block start).
        self.icache.touch_entry(slot);
        let e = &self.icache.entries[slot];
        if !e.holds(pc, self.icache.generation, self.prv)
            || e.checked != self.icache.fence
            || self.general_only(e.op.kind)
        {
            return None;
        }
        let op = e.op;
        let len = u64::from(e.len);
        self.cycles += 1;
        Some(match self.exec_fast(bus, &op, len) {
            Ok(Flow::Next) => {
                self.pc = pc.wrapping_add(len);
                self.instret += 1;
                true
            }
            Ok(_) => {
                self.instret += 1;
                false
            }
            Err(t) => {
                self.take_trap(t.cause, t.tval);
                false
            }
        })
    }

    /// The run loop's step between chunks: Err(Budget) when the clock reached
    /// `until_cycles` or the bus's next device event, Err(TimerSet) after a CLINT mtimecmp
    /// write; else takes a pending interrupt and returns where the chunk ends: exactly
    /// where the timer fires, so the timer interrupt lands on the same instruction in
    /// every run.
    #[inline(always)]
    pub(crate) fn next_chunk(&mut self, bus: &mut dyn Bus, until_cycles: u64) -> Result<u64, Stop> {
        if self.timer_written {
            self.timer_written = false;
            return Err(Stop::TimerSet);
        }
        let until_cycles = until_cycles.min(bus.next_event_cycle());
        if self.cycles >= until_cycles {
            return Err(Stop::Budget);
        }
        if let Some(code) = self.pending_interrupt(bus) {
            self.take_trap(cause::INTERRUPT | code, 0);
        }
        self.irq_dirty = false;
        let deadline = self.timer_deadline();
        Ok(if deadline > self.cycles {
            until_cycles.min(deadline)
        } else {
            until_cycles
        })
    }

    /// Runs until the clock reaches `until_cycles` (or the bus's next device event),
    /// WFI idles, or an SBI call needs serving.
    pub fn run(&mut self, bus: &mut dyn Bus, until_cycles: u64) -> Stop {
        if !self.breakpoints.is_empty() {
            return self.run_debug(bus, until_cycles);
        }
        loop {
            let chunk_end = match self.next_chunk(bus, until_cycles) {
                Ok(end) => end,
                Err(stop) => return stop,
            };
            // Set after a single fast instruction that fell through: the next pc is the
            // middle of a run of instructions, not where a block would start, so the block
            // table (visit counts) is not consulted for it.
            let mut sequential = false;
            while self.cycles < chunk_end && !self.irq_dirty {
                let pc = self.pc;
                // Fastest path: a block of pre-decoded instructions starting here.
                if !sequential {
                    // A control-flow target: user-mode coverage counts it, and then runs
                    // user blocks one at a time (compiled code would chain past this loop).
                    let mut covered = false;
                    if let Some(c) = self.coverage.as_deref_mut() {
                        if self.prv == Priv::User {
                            c.hit(pc, self.satp);
                            covered = true;
                        } else {
                            c.away();
                        }
                    }
                    let bslot = Block::slot(pc);
                    // A slot not written since a warm restore: the snapshot's block first,
                    // if it kept one for this slot (see `icache::backing`).
                    self.icache.touch_block(bslot);
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
                                // Counted coverage: compiled code runs this block only (a
                                // chunk that ends now lets no block chain after it), so the
                                // next target comes back here to be counted.
                                let chain_end = if covered { 0 } else { chunk_end };
                                if b.code_epoch == epoch {
                                    if b.code != 0 {
                                        let code = b.code;
                                        self.run_compiled(bus, code, chain_end);
                                        continue;
                                    }
                                } else if b.runs < JIT_HOT {
                                    b.runs += 1;
                                } else if self.compile_block(bslot, pc) {
                                    // Run it now: coming round again would count this
                                    // target twice.
                                    let code = self.icache.blocks[bslot].code;
                                    self.run_compiled(bus, code, chain_end);
                                    continue;
                                }
                                let b = &self.icache.blocks[bslot];
                                let ops: *const [(Op, u8, u32)] = b.ops.as_slice();
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
                    } else if b.hits == BUILT
                        && b.generation == generation
                        && !b.ops.is_empty()
                        && b.contest < CONTEST
                    {
                        // Another pc's built block holds the slot: this visit runs one by
                        // one and counts against it (see `CONTEST`).
                        b.contest += 1;
                    } else {
                        b.count_from(pc, generation, self.prv, 1);
                    }
                }
                // Fast path: a cached, pre-decoded common instruction.
                if let Some(fell_through) = self.exec_cached(bus, pc) {
                    sequential = fell_through;
                    continue;
                }
                sequential = false;
                if let Some(stop) = self.step(bus) {
                    return stop;
                }
            }
        }
    }
}
