//! Filling the decoded-instruction cache and building blocks: fetching an instruction
//! through the MMU and decoding it (keeping an entry a FENCE.I left unchecked if its bytes
//! are unchanged), dropping the blocks that copied a replaced entry, and building and
//! re-checking blocks from the cache's entries. The cache structures are in the parent
//! module.

use super::backing::touch_in;
use super::{in_run_page, same_page, Block, Decoded, ICache, BLOCK_HOT, BUILT, MAX_BLOCK};
use crate::bus::Bus;
use crate::csr::cause;
use crate::hart::Hart;
use crate::mmu::Access;
use crate::trap::Trap;

/// Most entries [`Hart::check_run`] finds unchanged after one fetch.
const RUN_CHECK: usize = 64;

/// Whether straight-line code ends after an instruction of this kind (for
/// [`Hart::check_run`]): a jump, a branch, or one without a fast path (a trap, a CSR
/// access), after which what runs next is elsewhere as often as not.
fn ends_run(kind: crate::predecode::Kind) -> bool {
    use crate::predecode::Kind;
    matches!(
        kind,
        Kind::Slow
            | Kind::Csr
            | Kind::Jal
            | Kind::Jalr
            | Kind::Beq
            | Kind::Bne
            | Kind::Blt
            | Kind::Bge
            | Kind::Bltu
            | Kind::Bgeu
    )
}

impl Hart {
    /// The decoded instruction at pc, from the cache or fetched and expanded.
    /// `Err` carries the fetch fault or, for an illegal RVC parcel, an
    /// illegal-instruction trap with the parcel as tval.
    #[inline]
    pub(crate) fn decoded(&mut self, bus: &mut dyn Bus) -> Result<Decoded, Trap> {
        let pc = self.pc;
        let slot = ICache::slot(pc);
        self.icache.touch_entry(slot);
        let e = self.icache.entries[slot];
        let fence = self.icache.fence;
        let raw = if e.holds(pc, self.icache.generation, self.prv) {
            if e.checked == fence {
                return Ok(e);
            }
            // Unchecked since a FENCE.I: fetch exactly as a flushed cache would (same
            // translation, same faults) and keep the entry if the bytes are the same.
            let paddr = self.translate(pc, Access::Exec)?;
            let raw = self.fetch_translated(bus, paddr)?;
            let same = if raw & 3 != 3 {
                e.len == 2 && e.raw16 == raw as u16
            } else {
                e.len == 4 && e.insn == raw
            };
            if same {
                self.icache.entries[slot].checked = fence;
                self.icache.note_code(pc, e.len);
                if !ends_run(e.op.kind) {
                    self.check_run(pc, pc.wrapping_add(u64::from(e.len)), paddr);
                }
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
            op: crate::predecode::decode(insn, self.isa),
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
                self.icache.touch_block(Block::slot(old.owner));
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

    /// The RAM offset of the page holding physical `paddr`, when cached instructions of
    /// that page may be checked against memory together (`recheck_block`, `check_run`): in
    /// RAM, executable in whole under the PMP now, and holding no word the memory
    /// controller must check. None: fetch its instructions one by one.
    fn code_page(&mut self, paddr: u64) -> Option<usize> {
        let page = paddr & !0xfff;
        let offset = self.ram.offset(page, 0x1000)?;
        (self.pmp_allows(page, 0x1000, Access::Exec, self.prv) && !self.ecc_page(paddr))
            .then_some(offset)
    }

    /// After the unchecked entry at `fetched` (the next one at `next`) was fetched again,
    /// unchanged, from physical `paddr`: the entries that follow it in its page, as far as
    /// each is held for this pc and privilege, unchecked and unchanged in memory, up to the
    /// end of the straight-line code ([`ends_run`]) and at most [`RUN_CHECK`], count as
    /// fetched again too. Straight-line code runs next, and each of these would otherwise
    /// be fetched alone (its own translation, lookup and compare through the run loop's
    /// slow path: 14.9 M times in a Debian boot).
    /// Like [`Hart::recheck_block`] this fetches nothing new: the page was translated for
    /// this fetch, and a page whose access the PMP limits or whose words the memory
    /// controller must check is left to the fetches one by one. The instructions are thus
    /// compared when the first of the run is fetched rather than each when it runs; the
    /// two differ only for code that rewrites a later instruction of its page without a
    /// fence, where the architecture leaves the outcome open.
    #[inline(never)]
    fn check_run(&mut self, fetched: u64, next: u64, paddr: u64) {
        let Some(page) = self.code_page(paddr) else {
            return;
        };
        let ICache {
            entries,
            generation,
            fence,
            backing,
            ..
        } = &mut self.icache;
        let mut pc = next;
        for _ in 0..RUN_CHECK {
            if !same_page(fetched, pc) {
                break;
            }
            let slot = ICache::slot(pc);
            touch_in(entries, backing, *generation, slot);
            let e = &mut entries[slot];
            // Within the fetched instruction's page, none crossing into the next.
            if !e.holds(pc, *generation, self.prv)
                || e.checked == *fence
                || !in_run_page(fetched, pc, e.len)
            {
                break;
            }
            if !e.same_in(&self.ram, page + (pc & 0xfff) as usize) {
                break;
            }
            e.checked = *fence;
            // Up to the end of the straight-line code (checking past it would mostly be work
            // thrown away).
            if ends_run(e.op.kind) {
                break;
            }
            pc = pc.wrapping_add(u64::from(e.len));
        }
        // (The page is the fetched instruction's, marked already.)
    }

    /// Fetches the instruction at pc: returns (32-bit instruction or expanded RVC, its length).
    #[inline]
    pub(crate) fn fetch(&mut self, bus: &mut dyn Bus) -> Result<u32, Trap> {
        let p = self.translate(self.pc, Access::Exec)?;
        self.fetch_translated(bus, p)
    }

    /// [`Hart::fetch`] with pc already translated to `p`.
    #[inline]
    fn fetch_translated(&mut self, bus: &mut dyn Bus, p: u64) -> Result<u32, Trap> {
        let pc = self.pc;
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
    fn fetch_phys(&mut self, bus: &mut dyn Bus, paddr: u64, vaddr: u64) -> Result<u32, Trap> {
        if !self.pmp_allows(paddr, 2, Access::Exec, self.prv) {
            return Err(Trap::new(cause::INSN_ACCESS, vaddr));
        }
        if self.ram.offset(paddr, 2).is_some()
            && self.ecc_access(bus, paddr, 2, Access::Exec).is_err()
        {
            return Err(Trap::new(cause::INSN_ACCESS, vaddr));
        }
        match self.ram.offset(paddr, 2) {
            Some(off) => Ok(self.ram.read_at(off, 2) as u32),
            None => Err(Trap::new(cause::INSN_ACCESS, vaddr)),
        }
    }

    /// Drops the blocks that may hold a copy of the instruction at `pc` (those starting up to
    /// a block's length before it): its cache entry is being replaced.
    #[inline]
    pub(crate) fn forget_blocks_covering(&mut self, pc: u64) {
        let span = (MAX_BLOCK as u64) * 4;
        let mut start = pc.saturating_sub(span - 2);
        loop {
            self.icache.touch_block(Block::slot(start));
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
    pub(crate) fn recheck_block(&mut self, slot: usize) {
        let start = self.icache.blocks[slot].pc;
        let fence = self.icache.fence;
        let page = self
            .translate(start, Access::Exec)
            .ok()
            .and_then(|paddr| self.code_page(paddr));
        let Some(page) = page else {
            // Fetch one by one (taking the fetch's trap, or checking each word).
            self.icache.blocks[slot].hits = BLOCK_HOT - 2;
            return;
        };
        let ICache {
            entries,
            blocks,
            generation,
            backing,
            ..
        } = &mut self.icache;
        let block = &mut blocks[slot];
        let mut pc = start;
        for &(_, len, _) in block.ops.iter() {
            touch_in(entries, backing, *generation, ICache::slot(pc));
            let e = &entries[ICache::slot(pc)];
            let same = e.holds(pc, *generation, self.prv)
                && e.len == len
                && e.same_in(&self.ram, page + (pc & 0xfff) as usize);
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

    /// Builds the block starting at pc into `slot` from what the decoded-instruction cache
    /// holds (within pc's page); the block ends at the first instruction it lacks (lacking
    /// the first, it stays unbuilt until the next visit, see below). Blocks are
    /// a pure copy of cache entries (replacing an entry a block copied drops that block, see
    /// [`Hart::decoded`]), so they change nothing the guest can observe; snapshots keep
    /// them all the same (see `state::code_cache`), so a restored hart is warm.
    #[inline(never)]
    pub(crate) fn build_block(&mut self, slot: usize) {
        let start = self.pc;
        let ICache {
            entries,
            blocks,
            generation,
            fence,
            jit,
            scratch,
            backing,
            ..
        } = &mut self.icache;
        let ops = scratch;
        ops.clear();
        let mut pc = start;
        // Whether the cache lacks the first instruction (absent, or unchecked since the
        // last FENCE.I or full flush), rather than holding one without a fast path.
        let mut lacks_first = false;
        while ops.len() < MAX_BLOCK && same_page(start, pc) {
            // Only instructions the decoded-instruction cache holds now, checked since the
            // last FENCE.I: building a block fetches nothing, so it leaves the TLB, the
            // cache and memory as they were.
            touch_in(entries, backing, *generation, ICache::slot(pc));
            let e = &mut entries[ICache::slot(pc)];
            let held = e.holds(pc, *generation, self.prv) && e.checked == *fence;
            if !held || !e.op.kind.in_block(self.prv) {
                lacks_first = ops.is_empty() && !held;
                break;
            }
            // All of it in the page (a compressed instruction in its last two bytes is).
            if !in_run_page(start, pc, e.len) {
                break;
            }
            if e.owner != u64::MAX && e.owner != start {
                e.shared = true;
            }
            e.owner = start;
            let d = *e;
            ops.push((d.op, d.len, d.insn));
            pc = pc.wrapping_add(u64::from(d.len));
            if d.op.kind.ends_block() {
                break;
            }
        }
        let block = &mut blocks[slot];
        if lacks_first {
            // Not "no block starts here": the visit that is building runs its first
            // instruction one by one, which fetches it (after a full flush, at every
            // context switch of a Linux guest without ASIDs, that is often), and the next
            // visit builds again. Built empty instead, the block stayed empty for good and
            // the code after it ran one instruction at a time: in the payment world's
            // Python nodes, 62 % of the runs of instructions interpreted one by one began
            // at such a block.
            block.hits = BLOCK_HOT - 1;
            return;
        }
        // Compiled code depends only on the start pc and the instructions: a block rebuilt
        // with the same ones (after a FENCE.I or a flush that changed neither) keeps it.
        // (A block's nonzero code is always of the buffer's epoch: `ICache::drop_stale_code`.)
        debug_assert!(block.code == 0 || block.code_epoch == jit.epoch);
        let keep = block.code != 0 && block.code_pc == start && block.ops == *ops;
        // The slot's instruction list keeps its allocation from build to build.
        std::mem::swap(&mut block.ops, ops);
        block.filled_from = 0;
        block.pc = start;
        block.generation = *generation;
        block.prv = self.prv;
        block.hits = BUILT;
        block.contest = 0;
        block.fence = *fence;
        block.len = block.ops.len() as u32;
        block.renew_code(keep, 0);
    }
}
