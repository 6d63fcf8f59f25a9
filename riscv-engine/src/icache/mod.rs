//! The hart's caches of decoded code and of data pages: decoded instructions by virtual
//! pc ([`ICache`], [`Decoded`]), straight-line blocks of them ([`Block`], which the block
//! compiler turns into machine code), and the loads' and stores' one-page shortcuts past
//! the TLB ([`FastPages`]). Plain data with no knowledge of the hart; filling the caches
//! from memory and building blocks is in `icache::fill`. Compiled blocks read several of
//! these structures by offset (see `jit`), hence the `repr(C)` and fixed sizes.

pub(crate) mod backing;
mod fill;

use crate::csr::Priv;
use crate::jit::buffer::CodeBuffer;
use crate::predecode::Op;

/// Slots of each [`FastPages`]: 256 (8 KiB) rather than 64, since a redis node's loads
/// missed the 64-slot table five times as often (13.9 M against 2.7 M misses in 150
/// virtual s of the payment world), each miss a TLB lookup and a call out of compiled code.
pub(crate) const FAST_PAGES: usize = 256;

/// A small direct-mapped cache from virtual page to RAM offset, valid for the
/// current privilege, mstatus and satp: the loads' and stores' shortcut past
/// the TLB. Cleared whenever any of those change, by emptying the slots filled since the
/// last clear (listed in `filled`): a slot holds a page or is empty, so compiled code
/// checks one tag, not a tag and a generation.
///
/// Aligned to a cache line (and so the hart too): compiled code reads an entry at every
/// load and store, and where the table fell in the hart's layout mattered. 24 bytes more
/// in the decoded-instruction cache's struct, which moved these tables and the fields after
/// it, made the outage world's busiest minutes 1.6 times slower (10.6 s against 17.6 s,
/// its redis node's compiled code waiting in every chained jump); aligned, the same shift
/// cost 1.15 times (11.2 s against 12.8 s), and 8 or 64 bytes none.
#[derive(Debug, Clone)]
#[repr(align(64))]
pub(crate) struct FastPages {
    pub(crate) entries: [FastPage; FAST_PAGES],
    /// The slots filled since the last clear, `filled[..count]`, each once.
    filled: [u8; FAST_PAGES],
    count: usize,
}

// The entries start on a cache line (see `FastPages`).
const _: () = assert!(std::mem::offset_of!(FastPages, entries) % 64 == 0);

/// One [`FastPages`] slot. `repr(C)` and 32 bytes: compiled code reads it directly
/// (see `jit`).
#[derive(Debug, Clone, Copy)]
#[repr(C)]
pub(crate) struct FastPage {
    /// The page's virtual address ([`NO_PAGE`]: empty). Compiled code compares it with the
    /// access's address masked to the page and the access's alignment bits, so one compare
    /// also sends a misaligned access to the slow path.
    pub(crate) tag: u64,
    /// `off` minus the page's virtual address (wrapping): an access's RAM offset is its
    /// virtual address plus this, one addition in compiled code.
    pub(crate) delta: u64,
    /// RAM offset of the page.
    pub(crate) off: usize,
    /// Whether the slot is in [`FastPages::filled`] (a slot emptied by `forget` stays
    /// listed until the next clear).
    listed: bool,
}

/// [`FastPage::tag`] of an empty slot: no page address (bits 0-11 are zero in every
/// address a lookup compares, whatever the access's size).
pub(crate) const NO_PAGE: u64 = u64::MAX;

impl Default for FastPage {
    fn default() -> Self {
        FastPage {
            tag: NO_PAGE,
            delta: 0,
            off: 0,
            listed: false,
        }
    }
}

impl Default for FastPages {
    fn default() -> Self {
        FastPages {
            entries: [FastPage::default(); FAST_PAGES],
            filled: [0; FAST_PAGES],
            count: 0,
        }
    }
}

impl FastPages {
    #[inline(always)]
    pub(crate) fn get(&self, vaddr: u64) -> Option<usize> {
        let e = &self.entries[((vaddr >> 12) as usize) & (FAST_PAGES - 1)];
        (e.tag == vaddr & !0xfff).then_some(e.off)
    }

    pub(crate) fn insert(&mut self, vaddr: u64, off: usize) {
        let page = vaddr & !0xfff;
        let slot = ((vaddr >> 12) as usize) & (FAST_PAGES - 1);
        let e = &mut self.entries[slot];
        if !e.listed {
            // Each slot is listed at most once, so `count` stays within FAST_PAGES.
            self.filled[self.count] = slot as u8;
            self.count += 1;
        }
        *e = FastPage {
            tag: page,
            delta: (off as u64).wrapping_sub(page),
            off,
            listed: true,
        };
    }

    /// Forgets the shortcut for `vaddr`'s page.
    pub(crate) fn forget(&mut self, vaddr: u64) {
        let e = &mut self.entries[((vaddr >> 12) as usize) & (FAST_PAGES - 1)];
        if e.tag == vaddr & !0xfff {
            e.tag = NO_PAGE;
        }
    }

    /// The valid shortcuts: (virtual page, RAM offset).
    pub(crate) fn valid(&self) -> impl Iterator<Item = (u64, usize)> + '_ {
        self.entries
            .iter()
            .filter(|e| e.tag != NO_PAGE)
            .map(|e| (e.tag, e.off))
    }

    /// Empties every slot (those filled since the last clear: a trap or return touches a
    /// few dozen at most).
    pub(crate) fn clear(&mut self) {
        for &slot in &self.filled[..self.count] {
            let e = &mut self.entries[usize::from(slot)];
            e.tag = NO_PAGE;
            e.listed = false;
        }
        self.count = 0;
    }
}

/// Slots of the decoded-instruction cache: one per 2-byte pc in a 2 MiB window of
/// code, direct-mapped. Large programs need the window: CPython running its own JSON tests
/// re-decoded 249 M instructions with 2^16 slots and 92 M with 2^18, against 3 M with 2^20
/// (6.6 G instructions in all); the empty table costs nothing until touched (see
/// [`ICache::empty_entries`]).
pub(crate) const ICACHE_ENTRIES: usize = 1 << 20;

/// One decoded instruction: virtual pc, privilege it was fetched at, the
/// (expanded) instruction and its length. A slot is empty when its generation is 0 (a
/// slot never written: all zero bytes, see [`ICache::empty_entries`]) or its pc is
/// `u64::MAX` (an entry forgotten).
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
    pub(crate) op: Op,
    /// The start pc of the block that copied this entry (u64::MAX: none), and whether more
    /// than one did: replacing the entry must drop those blocks.
    pub(crate) owner: u64,
    pub(crate) shared: bool,
    /// The [`ICache::fence`] at which the entry was fetched or last found unchanged: an
    /// entry of an older one must be checked against memory before it is used again.
    pub(crate) checked: u32,
}

// 2^20 slots of 48 bytes: the table's size in the docs (riscv-engine/README.md).
const _: () = assert!(std::mem::size_of::<Decoded>() == 48);

impl Decoded {
    /// Whether the entry holds the instruction at `pc`, fetched at `prv`, in cache
    /// generation `generation` (checked since the last fence or not).
    #[inline(always)]
    pub(crate) fn holds(&self, pc: u64, generation: u32, prv: Priv) -> bool {
        self.pc == pc && self.generation == generation && self.prv == prv
    }

    /// Whether RAM at offset `at` still holds the instruction's bytes (the 16-bit parcel of
    /// an RVC instruction, the 32-bit word otherwise): what checking a cached instruction
    /// against memory compares.
    #[inline]
    pub(crate) fn same_in(&self, ram: &crate::ram::Ram, at: usize) -> bool {
        if self.len == 2 {
            ram.read_at(at, 2) as u16 == self.raw16
        } else {
            self.len == 4 && ram.read_at(at, 4) as u32 == self.insn
        }
    }
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
/// bytes are unchanged (see [`crate::hart::Hart::decoded`]). The guest sees the same fetches,
/// faults and instructions as with an emptied cache; only decoding, block building
/// and compiling are saved. Single-page fences drop that page's entries outright.
///
/// `repr(C)`: `generation` and `fence` are one aligned 64-bit word, which compiled code
/// compares with a block's own pair in one instruction (see `jit::chain`).
#[derive(Debug)]
#[repr(C)]
pub(crate) struct ICache {
    /// Entries of older generations are invalid: a flush is one increment.
    pub(crate) generation: u32,
    /// Count of FENCE.I and full flushes (never 0): entries and blocks of older ones are
    /// unchecked.
    pub(crate) fence: u32,
    pub(crate) entries: Vec<Decoded>,
    /// Straight-line runs of fast instructions, by start pc (same generation rules).
    pub(crate) blocks: Vec<Block>,
    /// Pages (hashed by page number) that may hold decoded instructions checked since the
    /// last FENCE.I or full flush (tagged with [`ICache::fence`]): a single-page fence of
    /// any other page has nothing to forget here (unchecked entries are fetched again at
    /// their next use anyway). See [`CodePage`].
    pub(crate) code_pages: Vec<CodePage>,
    /// Executable memory for compiled blocks (see `jit`).
    pub(crate) jit: CodeBuffer,
    /// Where [`crate::hart::Hart::build_block`] collects a block before comparing it with the slot's.
    pub(crate) scratch: Vec<(Op, u8, u32)>,
    /// The restored snapshot's entries and blocks, for slots not written since (see
    /// `backing`).
    pub(crate) backing: Option<backing::Live>,
}

impl Clone for ICache {
    /// A copy with a code buffer of its own (a new epoch, see `CodeBuffer::clone`): its
    /// blocks keep their instructions but none of the original's compiled code.
    fn clone(&self) -> Self {
        let mut c = ICache {
            generation: self.generation,
            fence: self.fence,
            entries: self.entries.clone(),
            blocks: self.blocks.clone(),
            code_pages: self.code_pages.clone(),
            jit: self.jit.clone(),
            scratch: Vec::with_capacity(MAX_BLOCK),
            backing: self.backing.clone(),
        };
        c.drop_stale_code();
        c
    }
}

/// Slots of [`ICache::code_pages`].
pub(crate) const CODE_PAGES: usize = 1 << 12;

/// A slot of [`ICache::code_pages`]: the [`ICache::fence`] at which a page hashed to it was
/// last marked, and which page that was, or [`CodePage::ANY`] when several were (or a
/// restored mark named none). The page number matters: the kernel's text alone covers
/// every slot, so by slot alone nearly every single-page fence of a user page (one after
/// each page fault) looked like one of code and scanned 2,048 entries and 2,048 blocks
/// that held nothing of that page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CodePage {
    pub(crate) fence: u32,
    pub(crate) page: u64,
}

impl CodePage {
    /// `page` of a slot marked for more than one page (or for pages not known).
    pub(crate) const ANY: u64 = u64::MAX;
    /// A slot never marked (fence 0 is never current).
    pub(crate) const NONE: CodePage = CodePage {
        fence: 0,
        page: CodePage::ANY,
    };
}

impl ICache {
    /// Notes that an instruction fetched at `pc` (`len` bytes) depends on its page(s).
    #[inline]
    pub(crate) fn note_code(&mut self, pc: u64, len: u8) {
        self.mark_code_page(pc >> 12);
        let last = pc.wrapping_add(u64::from(len) - 1);
        if last >> 12 != pc >> 12 {
            self.mark_code_page(last >> 12);
        }
    }

    /// Marks page number `page` (of a virtual address) as holding code checked since the
    /// last fence.
    #[inline]
    pub(crate) fn mark_code_page(&mut self, page: u64) {
        let fence = self.fence;
        let m = &mut self.code_pages[(page as usize) & (CODE_PAGES - 1)];
        if m.fence != fence {
            *m = CodePage { fence, page };
        } else if m.page != page {
            m.page = CodePage::ANY;
        }
    }

    /// Marks slot `slot` of the page marks as holding code of a page not known (a
    /// snapshot's code-cache section keeps only the slots, see `state::code_cache`).
    pub(crate) fn mark_code_slot(&mut self, slot: usize) {
        self.code_pages[slot] = CodePage {
            fence: self.fence,
            page: CodePage::ANY,
        };
    }

    /// Whether decoded instructions may depend on the page of `vaddr`.
    #[inline]
    pub(crate) fn may_hold_code(&self, vaddr: u64) -> bool {
        let page = vaddr >> 12;
        let m = self.code_pages[(page as usize) & (CODE_PAGES - 1)];
        m.fence == self.fence && (m.page == page || m.page == CodePage::ANY)
    }
}

/// Whether an instruction of `len` bytes at `pc` may belong to a run of cached
/// instructions (a block, or the entries a fetch checks together) that starts at `start`:
/// all of it in the same page (a 4-byte instruction in the page's last two bytes crosses
/// into the next page; a compressed one there does not).
#[inline]
pub(crate) fn in_run_page(start: u64, pc: u64, len: u8) -> bool {
    same_page(start, pc) && (pc & 0xfff) + u64::from(len) <= 0x1000
}

/// Whether `pc` is in `start`'s page.
#[inline]
pub(crate) fn same_page(start: u64, pc: u64) -> bool {
    pc >> 12 == start >> 12
}

/// Most instructions in one [`Block`].
pub(crate) const MAX_BLOCK: usize = 32;
/// Slots of the block table, direct-mapped by start pc (a 256 KiB window). With 2^15,
/// CPython's JSON tests found a block's slot held by another pc at 43 % of their 527 M
/// lookups; with 2^17 (and the larger decoded cache above), at 7 M of 63 M. A Linux node
/// running CPython holds the kernel's, CPython's and libc's hot code in one table: the
/// payment world's Python nodes ran 7.4 % of their instructions interpreted one by one
/// with 2^17 slots (blocks evicted by another pc's and warmed up again) and 4.2 % with
/// 2^19, but 2^19 costs 26 MiB more per hart and its gain in wall time (a few percent on
/// the outage world, none on idle branches) could not be told from this host's noise.
/// (Both figures are from before [`CONTEST`]; with it, 2^17 slots give 4.5-5.7 %.)
pub(crate) const BLOCK_ENTRIES: usize = 1 << 17;

/// A run of fast-path instructions within one page, ending after a jump, before an
/// instruction without a fast path, or at [`MAX_BLOCK`]; a taken conditional branch
/// leaves it early. Executing it skips the
/// per-instruction cache lookup; cycles, instret and pc still advance per instruction, and
/// it is entered only when it fits before the next deadline, so every instruction retires
/// at the same cycle as it would one by one.
///
/// `repr(C)`, the fields compiled code reads first: `generation` and `fence` form one
/// aligned 64-bit word, compared with the cache's pair in one instruction (see
/// `jit::chain`).
#[derive(Debug, Clone)]
#[repr(C)]
pub(crate) struct Block {
    pub(crate) pc: u64,
    pub(crate) generation: u32,
    /// The [`ICache::fence`] the block was built under (0: not runnable): a FENCE.I makes
    /// it stale until rebuilt from checked entries.
    pub(crate) fence: u32,
    /// The block's compiled code (0: none). Nonzero only while `code_epoch` is the code
    /// buffer's epoch: a buffer that starts over clears every block's (see
    /// [`ICache::drop_stale_code`]), so a chained jump need not compare epochs.
    pub(crate) code: usize,
    /// `ops.len()`, where compiled code can read it.
    pub(crate) len: u32,
    pub(crate) prv: Priv,
    /// (decoded op, length, raw instruction) per instruction.
    pub(crate) ops: Vec<(Op, u8, u32)>,
    /// Times pc was reached before the block was built ([`BUILT`] once built): only code
    /// that runs repeatedly is worth a block.
    pub(crate) hits: u8,
    /// Times the built block ran interpreted (up to [`JIT_HOT`], then it is
    /// compiled).
    pub(crate) runs: u8,
    /// The id of the snapshot backing whose block `ops` was copied from, unchanged since
    /// (0: none; see `backing::Backing::id`): a later restore of the same backing keeps the
    /// slot's code without comparing the instructions.
    pub(crate) filled_from: u32,
    /// The code buffer epoch `code` was compiled under; a block whose `code_epoch`
    /// matches with no code could not be compiled.
    pub(crate) code_epoch: u64,
    /// The pc `code` was compiled for: a rebuilt block with the same pc and instructions
    /// keeps its code.
    pub(crate) code_pc: u64,
    /// Visits of other pcs to this slot while it held this built block, counted over its
    /// whole stay (its own visits do not reset the count): the block gives the slot up at
    /// the visit after the [`CONTEST`]th (see `Hart::run`).
    pub(crate) contest: u8,
}

// Compiled code reads (generation, fence) as one aligned word in both (see `jit::chain`).
const _: () = {
    use std::mem::offset_of;
    assert!(offset_of!(Block, fence) == offset_of!(Block, generation) + 4);
    assert!(offset_of!(Block, generation) % 8 == 0);
    assert!(offset_of!(ICache, fence) == offset_of!(ICache, generation) + 4);
    assert!(offset_of!(ICache, generation) % 8 == 0);
};

/// Visits of other pcs a built block outlasts before one of them takes its slot: code run
/// once (a kernel path, a rare branch of a library) no longer throws out a hot block that
/// then has to be warmed up, built and compiled again; an intruder that stays hot wins.
pub(crate) const CONTEST: u8 = 8;

/// [`Block::hits`] of a built block.
pub(crate) const BUILT: u8 = u8::MAX;
/// Visits of a pc before a block is built there.
pub(crate) const BLOCK_HOT: u8 = 24;

/// Times a built block runs interpreted before it is compiled. Blocks are built only
/// where execution arrived often (see [`BLOCK_HOT`]), so most built blocks are worth
/// compiling soon: warming up after a restore or in a short-lived process dominated.
pub(crate) const JIT_HOT: u8 = 2;

impl Block {
    /// A slot that holds nothing (its instruction list allocates on first use).
    pub(crate) const EMPTY: Block = Block {
        pc: u64::MAX,
        generation: 0,
        fence: 0,
        code: 0,
        len: 0,
        prv: Priv::Machine,
        ops: Vec::new(),
        hits: 0,
        runs: 0,
        filled_from: 0,
        code_epoch: 0,
        code_pc: u64::MAX,
        contest: 0,
    };

    #[inline]
    pub(crate) fn slot(pc: u64) -> usize {
        ((pc >> 1) as usize) & (BLOCK_ENTRIES - 1)
    }

    /// Makes the slot count visits toward a block at `pc` (`u64::MAX`: toward none) for
    /// `generation`, `hits` so far: not runnable (nor reachable by chained jumps) until
    /// built. Its old code stays, only for a rebuild of the same pc and instructions (see
    /// `Hart::build_block`). What `Hart::run` does when a pc takes the slot, and a
    /// single-page fence to a slot the snapshot backs (`backing`).
    #[inline]
    pub(crate) fn count_from(&mut self, pc: u64, generation: u32, prv: Priv, hits: u8) {
        self.pc = pc;
        self.generation = generation;
        self.prv = prv;
        self.hits = hits;
        self.contest = 0;
        self.fence = 0;
    }

    /// Drops the slot's compiled code unless `keep` (it was compiled for the start pc and
    /// instructions the slot holds now), counting `runs` interpreted runs as done (it is
    /// compiled after [`JIT_HOT`]). What building a block and copying one in from a
    /// snapshot's backing do after installing its instructions.
    #[inline]
    pub(crate) fn renew_code(&mut self, keep: bool, runs: u8) {
        if !keep {
            self.runs = runs;
            self.code = 0;
            self.code_epoch = 0;
            self.code_pc = u64::MAX;
        }
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
const MAX_SPARE_CACHES: usize = 2;

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
            entries: ICache::empty_entries(),
            generation: 1,
            fence: 1,
            blocks: ICache::empty_blocks(),
            code_pages: vec![CodePage::NONE; CODE_PAGES],
            jit: CodeBuffer::default(),
            scratch: Vec::with_capacity(MAX_BLOCK),
            backing: None,
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
                if s.len() < MAX_SPARE_CACHES {
                    let empty = ICache {
                        entries: Vec::new(),
                        generation: 1,
                        fence: 1,
                        blocks: Vec::new(),
                        code_pages: Vec::new(),
                        jit: CodeBuffer::default(),
                        scratch: Vec::new(),
                        backing: None,
                    };
                    self.backing = None;
                    s.push(std::mem::replace(self, empty));
                }
            }
        });
    }
}

impl ICache {
    /// [`BLOCK_ENTRIES`] empty slots. The table (11 MiB) is written whole here, so it asks
    /// the host for huge pages first: a chained jump's read of a slot missed the TLB as
    /// often as the cache. Advice only: without it only the speed changes.
    fn empty_blocks() -> Vec<Block> {
        let mut blocks: Vec<Block> = Vec::with_capacity(BLOCK_ENTRIES);
        advise_huge(
            blocks.as_mut_ptr().cast(),
            BLOCK_ENTRIES * std::mem::size_of::<Block>(),
        );
        blocks.resize(BLOCK_ENTRIES, Block::EMPTY);
        blocks
    }

    /// [`ICACHE_ENTRIES`] empty slots, as zero pages the host maps on first touch: a
    /// machine pays in memory only for the slots its code reaches (a large program such as
    /// CPython touches most of the 48 MiB, a small guest a few MiB), and a new machine does
    /// not write the whole table before it starts.
    fn empty_entries() -> Vec<Decoded> {
        let layout = std::alloc::Layout::array::<Decoded>(ICACHE_ENTRIES)
            .expect("the decoded-instruction table's size fits a Layout");
        // SAFETY: the layout has a non-zero size. All zero bytes are a valid `Decoded`
        // (integers 0, `shared` false, `prv` Priv::User = 0 and `op.kind` Kind::Slow = 0,
        // both `repr(u8)`), an empty slot since generation 0 is never the cache's (see
        // `flush`). The pointer comes from the global allocator with `Decoded`'s layout for
        // exactly ICACHE_ENTRIES elements, which is what `Vec::from_raw_parts` requires.
        unsafe {
            let p = std::alloc::alloc_zeroed(layout).cast::<Decoded>();
            if p.is_null() {
                std::alloc::handle_alloc_error(layout);
            }
            Vec::from_raw_parts(p, ICACHE_ENTRIES, ICACHE_ENTRIES)
        }
    }

    #[inline]
    pub(crate) fn slot(pc: u64) -> usize {
        ((pc >> 1) as usize) & (ICACHE_ENTRIES - 1)
    }

    /// FENCE.I or a full flush: every entry and block must be checked against memory
    /// (fetched again) before its next use.
    pub(crate) fn uncheck_all(&mut self) {
        self.fence = self.fence.wrapping_add(1);
        if self.fence == 0 {
            // After 2^32 fences old `checked` values could match again: flush instead (which
            // moves the count on to 1 and forgets every code-page mark).
            self.flush();
        }
    }

    /// Keeps the invariant that a block's nonzero `code` lives in the code buffer's
    /// current epoch: called when the epoch changed (the buffer started over, compiling was
    /// turned off, or the cache is a clone with a buffer of its own), it clears the code of
    /// every block compiled under another. A walk of the block table (9 MiB), which only
    /// these rare events pay; in exchange every chained jump between compiled blocks skips
    /// an epoch comparison.
    pub(crate) fn drop_stale_code(&mut self) {
        let epoch = self.jit.epoch;
        for b in self
            .blocks
            .iter_mut()
            .filter(|b| b.code != 0 && b.code_epoch != epoch)
        {
            b.code = 0;
        }
    }

    /// Forgets everything (in O(1): entries of older generations never match).
    pub(crate) fn flush(&mut self) {
        self.backing = None;
        self.generation = self.generation.wrapping_add(1);
        // The code-page marks are by FENCE.I count (see `note_code`): moved on too, so no
        // page of what the cache held before still counts as holding code (a restored or
        // reused cache would otherwise keep the marks of whatever ran on it before, and its
        // snapshots list them).
        self.fence = self.fence.wrapping_add(1);
        // (The count reaches 1 again only by wrapping: uncheck_all's, or this one's.)
        if self.generation == 0 || self.fence <= 1 {
            // After 2^32 flushes or fences, clear for real so no stale entry or mark can
            // match again.
            for e in self.entries.iter_mut() {
                e.pc = u64::MAX;
            }
            self.blocks.iter_mut().for_each(|b| b.pc = u64::MAX);
            self.code_pages.iter_mut().for_each(|g| *g = CodePage::NONE);
            self.generation = 1;
            self.fence = 1;
        }
    }
}

/// Bytes the host backs with one huge page where it can (x86-64 Linux).
const HUGE_PAGE: usize = 2 << 20;

/// Asks the host to back the whole huge pages within `len` bytes at `p` (allocated, not
/// yet written) with huge pages.
#[cfg(target_os = "linux")]
fn advise_huge(p: *mut u8, len: usize) {
    let start = (p as usize).next_multiple_of(HUGE_PAGE);
    let end = (p as usize + len) & !(HUGE_PAGE - 1);
    if end > start {
        // SAFETY: advice on whole pages inside one live allocation the caller owns; it
        // changes no contents and no mapping.
        unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) };
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge(_: *mut u8, _: usize) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_shortcuts_are_emptied_by_a_clear_however_often_they_were_refilled() {
        let mut p = FastPages::default();
        // Fill, forget and refill the same slots many times: each stays listed once.
        for round in 0..1000u64 {
            let vaddr = (round % 300) << 12;
            p.insert(vaddr, 0x1000);
            assert_eq!(p.get(vaddr + 8), Some(0x1000));
            if round % 3 == 0 {
                p.forget(vaddr);
                assert_eq!(p.get(vaddr), None);
            }
            assert!(p.count <= FAST_PAGES);
        }
        assert!(p.valid().count() > 0);
        p.clear();
        assert_eq!(p.valid().count(), 0);
        assert!((0..300u64).all(|i| p.get(i << 12).is_none()));
        // A cleared table fills again as a new one does.
        p.insert(0x7000, 0x2000);
        assert_eq!(p.valid().collect::<Vec<_>>(), vec![(0x7000, 0x2000)]);
    }
}
