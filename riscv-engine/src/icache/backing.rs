//! A snapshot's code caches behind a restored hart's: the decoded instructions and blocks
//! a restore puts back are not copied into the hart's tables (tens of thousands of entries
//! scattered over 57 MiB, most of which a short branch never reaches) but looked up the
//! first time the hart reaches their slot. A slot not written since the restore (its
//! generation is older than the cache's) stands for the snapshot's entry; reaching it
//! copies that entry in ([`ICache::touch_entry`], [`ICache::touch_block`]), so a restore
//! costs what its branch uses. Every path that reads a slot beyond a hit touches it first;
//! a full flush (a new generation) or a change of ISA retires the backing. One backing is
//! shared, read-only, by every hart restored from the same prepared state.

use super::{Decoded, ICache, BLOCK_ENTRIES, BUILT, ICACHE_ENTRIES, JIT_HOT};
use crate::csr::Priv;
use crate::predecode::Op;
use std::sync::Arc;

/// Items by slot: a bitmap of the slots that hold one, each word's count of the set bits
/// before it, and the items in slot order (a lookup is a bit test and a population count).
#[derive(Debug)]
pub(crate) struct SlotMap<T> {
    bits: Vec<u64>,
    before: Vec<u32>,
    items: Vec<T>,
}

impl<T> SlotMap<T> {
    /// From (slot, item) in increasing slot order, each slot below `slots` once.
    pub(crate) fn from_sorted(slots: usize, sorted: impl IntoIterator<Item = (usize, T)>) -> Self {
        let words = slots.div_ceil(64);
        let mut bits = vec![0u64; words];
        let mut items = Vec::new();
        let mut last = None;
        for (slot, item) in sorted {
            assert!(
                slot < slots && last < Some(slot),
                "slots in increasing order"
            );
            last = Some(slot);
            bits[slot / 64] |= 1 << (slot % 64);
            items.push(item);
        }
        let mut before = Vec::with_capacity(words);
        let mut n = 0u32;
        for w in &bits {
            before.push(n);
            n += w.count_ones();
        }
        SlotMap {
            bits,
            before,
            items,
        }
    }

    #[inline]
    pub(crate) fn get(&self, slot: usize) -> Option<&T> {
        let word = *self.bits.get(slot / 64)?;
        let bit = 1u64 << (slot % 64);
        if word & bit == 0 {
            return None;
        }
        let rank = self.before[slot / 64] + (word & (bit - 1)).count_ones();
        self.items.get(rank as usize)
    }

    /// The slots in `first..first + n` (wrapping at the end) that hold an item, found word
    /// by word.
    fn slots_in(&self, first: usize, n: usize) -> impl Iterator<Item = usize> + '_ {
        let total = self.bits.len() * 64;
        (0..n.div_ceil(64) + 1).flat_map(move |k| {
            let w = (first / 64 + k) % self.bits.len();
            set_bits(self.bits[w])
                .map(move |b| w * 64 + b)
                .filter(move |&s| (s + total - first) % total < n)
        })
    }

    /// The items with their slots, in slot order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (usize, &T)> + '_ {
        let slots = self
            .bits
            .iter()
            .enumerate()
            .flat_map(|(w, &word)| set_bits(word).map(move |b| w * 64 + b));
        slots.zip(self.items.iter())
    }

    /// The slots in `first..first + n` (wrapping) whose item's pc (`pc_of`) lies in `page`.
    fn slots_in_page<'a>(
        &'a self,
        (first, n): (usize, usize),
        page: u64,
        pc_of: impl Fn(&T) -> u64 + 'a,
    ) -> impl Iterator<Item = usize> + 'a {
        self.slots_in(first, n)
            .filter(move |&slot| self.get(slot).is_some_and(|t| pc_of(t) >> 12 == page >> 12))
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }
}

/// The set bits of `word`, lowest first: one step per set bit (a restore walks the 2^20-bit
/// map of a snapshot's entries; testing every bit took 7 % of an idle-heavy exploration).
fn set_bits(mut word: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (word != 0).then(|| {
            let b = word.trailing_zeros() as usize;
            word &= word - 1;
            b
        })
    })
}

/// A saved block, its instructions copied from the saved entries.
#[derive(Debug, Clone)]
pub(crate) struct BackedBlock {
    pub(crate) pc: u64,
    pub(crate) prv: Priv,
    pub(crate) ops: Vec<(Op, u8, u32)>,
    /// Checked at the snapshot's last FENCE.I or full flush.
    pub(crate) checked: bool,
    /// [`super::Block::hits`]: [`BUILT`], or the visits a slot counting toward a block has had
    /// (no instructions then).
    pub(crate) hits: u8,
    /// [`super::Block::contest`].
    pub(crate) contest: u8,
}

/// What a block slot holds for the current generation, as a snapshot keeps it (see
/// [`ICache::block_view`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct BlockView {
    pub(crate) pc: u64,
    pub(crate) prv: Priv,
    pub(crate) len: usize,
    /// Runnable as it is (built and checked since the last fence); a slot still counting
    /// visits is not.
    pub(crate) checked: bool,
    pub(crate) hits: u8,
    pub(crate) contest: u8,
}

impl BlockView {
    /// A slot holding `len` instructions from `pc` on at `prv`, with (visits, contest)
    /// counts `counts`; `current`: built or checked under the cache's FENCE.I count. A
    /// slot still counting visits holds no instructions and is not runnable; a built one
    /// with none ("no block starts here") cannot go stale.
    fn of(pc: u64, prv: Priv, len: usize, (hits, contest): (u8, u8), current: bool) -> Self {
        let built = hits == BUILT;
        BlockView {
            pc,
            prv,
            len: if built { len } else { 0 },
            checked: built && (len == 0 || current),
            hits,
            contest,
        }
    }
}

/// The caches a snapshot keeps, prepared: entries (with [`Decoded::checked`] set to
/// [`CHECKED`] or 0, owner marks set for the blocks here) and blocks, by slot.
#[derive(Debug)]
pub(crate) struct Backing {
    /// Unique in the process (0 once 2^32 - 1 have been made: such a backing's blocks are
    /// always compared), see [`super::Block::filled_from`].
    pub(crate) id: u32,
    pub(crate) entries: SlotMap<Decoded>,
    pub(crate) blocks: SlotMap<BackedBlock>,
}

impl Backing {
    pub(crate) fn new(entries: SlotMap<Decoded>, blocks: SlotMap<BackedBlock>) -> Backing {
        static MADE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let n = MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Backing {
            id: u32::try_from(n).unwrap_or(0),
            entries,
            blocks,
        }
    }
}

/// [`Decoded::checked`] of a backing entry that was checked (unchecked ones hold 0).
pub(crate) const CHECKED: u32 = 1;

/// A backing in use by a hart: the cache generation it stands for and the FENCE.I count
/// at the restore (what "checked" meant then).
#[derive(Debug, Clone)]
pub(crate) struct Live {
    pub(crate) backing: Arc<Backing>,
    pub(crate) generation: u32,
    pub(crate) fence: u32,
}

impl Live {
    /// The fence count a restored item holds: the restore's when it was checked, any other
    /// otherwise.
    fn fence_of(&self, checked: bool) -> u32 {
        if checked {
            self.fence
        } else {
            self.fence.wrapping_sub(1)
        }
    }

    /// The snapshot's entry for `slot`, as the cache would hold it.
    #[inline]
    pub(crate) fn entry(&self, slot: usize) -> Option<Decoded> {
        self.backing.entries.get(slot).map(|d| Decoded {
            generation: self.generation,
            checked: self.fence_of(d.checked == CHECKED),
            ..*d
        })
    }
}

impl ICache {
    /// The backing, while it stands for the cache's generation.
    #[inline]
    pub(crate) fn live(&self) -> Option<&Live> {
        self.backing
            .as_ref()
            .filter(|l| l.generation == self.generation)
    }

    /// Copies the snapshot's entry into `slot` if the slot was not written since the restore.
    #[inline]
    pub(crate) fn touch_entry(&mut self, slot: usize) {
        touch_in(&mut self.entries, &self.backing, self.generation, slot);
    }

    /// The entry `slot` holds for the current generation, the snapshot's included.
    pub(crate) fn entry_view(&self, slot: usize) -> Option<Decoded> {
        let e = self.entries[slot];
        if e.generation == self.generation {
            return (e.pc != u64::MAX).then_some(e);
        }
        self.live().and_then(|l| l.entry(slot))
    }

    /// Every entry the cache holds for the current generation, the snapshot's included, in
    /// slot order.
    pub(crate) fn entries_view(&self) -> impl Iterator<Item = Decoded> + '_ {
        let live = self.live().is_some();
        let generation = self.generation;
        self.entries
            .iter()
            .enumerate()
            .filter_map(move |(slot, e)| {
                if e.generation == generation {
                    (e.pc != u64::MAX).then_some(*e)
                } else if live {
                    self.entry_view(slot)
                } else {
                    None
                }
            })
    }

    /// Copies the snapshot's block into `slot` if the slot was not written since the
    /// restore. A slot whose compiled code is for the same pc and instructions keeps it, as
    /// a rebuilt block does; otherwise the block is compiled at its first run (it was hot
    /// in the run that took the snapshot).
    #[inline]
    pub(crate) fn touch_block(&mut self, slot: usize) {
        if self.blocks[slot].generation != self.generation && self.backing.is_some() {
            self.fill_block(slot);
        }
    }

    #[inline(never)]
    #[cold]
    fn fill_block(&mut self, slot: usize) {
        let generation = self.generation;
        let epoch = self.jit.epoch;
        let Some(l) = self.backing.as_ref().filter(|l| l.generation == generation) else {
            return;
        };
        let Some(p) = l.backing.blocks.get(slot) else {
            return;
        };
        let fence = l.fence_of(p.checked);
        let b = &mut self.blocks[slot];
        debug_assert!(b.code == 0 || b.code_epoch == epoch);
        // The slot's instructions are this block's when it was filled from this backing
        // and not rebuilt since (`filled_from`); compared otherwise.
        let same = l.backing.id != 0 && b.filled_from == l.backing.id;
        let keep = b.code != 0 && b.code_pc == p.pc && (same || b.ops == p.ops);
        b.filled_from = l.backing.id;
        if !keep {
            // (Kept code means the slot holds these very instructions already.)
            b.ops.clone_from(&p.ops);
        }
        b.pc = p.pc;
        b.generation = generation;
        b.prv = p.prv;
        b.hits = p.hits;
        b.contest = p.contest;
        // Any count but the current one makes it stale (0 included: see `Hart::run`); a
        // slot still counting visits is not runnable.
        b.fence = if p.hits == BUILT { fence } else { 0 };
        b.len = b.ops.len() as u32;
        b.renew_code(keep, JIT_HOT);
    }

    /// What a single-page fence does to the slots the snapshot backs: of `first..first + n`
    /// (entries, then blocks; wrapping), each slot not reached since the restore whose
    /// backing item lies in `page` is emptied for the current generation (the fence forgets
    /// it, as it forgets the page's reached slots); the others stay as they are. A scan of
    /// the backing's bitmap, not a lookup per slot, and nothing copied in.
    pub(crate) fn forget_backed(
        &mut self,
        page: u64,
        entries: (usize, usize),
        blocks: (usize, usize),
    ) {
        let generation = self.generation;
        let Some(l) = self.live().cloned() else {
            return;
        };
        for slot in l.backing.entries.slots_in_page(entries, page, |d| d.pc) {
            let e = &mut self.entries[slot];
            if e.generation != generation {
                e.generation = generation;
                e.pc = u64::MAX;
            }
        }
        for slot in l.backing.blocks.slots_in_page(blocks, page, |p| p.pc) {
            let b = &mut self.blocks[slot];
            if b.generation != generation {
                let prv = b.prv;
                b.count_from(u64::MAX, generation, prv, 0);
            }
        }
    }

    /// The block `slot` holds for the current generation, the snapshot's included, as
    /// (start pc, privilege, instruction count, checked since the last fence).
    pub(crate) fn block_view(&self, slot: usize) -> Option<BlockView> {
        let b = &self.blocks[slot];
        if b.generation == self.generation {
            return (b.pc != u64::MAX && b.hits > 0).then(|| {
                BlockView::of(
                    b.pc,
                    b.prv,
                    b.ops.len(),
                    (b.hits, b.contest),
                    b.fence == self.fence,
                )
            });
        }
        let l = self.live()?;
        let p = l.backing.blocks.get(slot)?;
        let current = l.fence_of(p.checked) == self.fence;
        Some(BlockView::of(
            p.pc,
            p.prv,
            p.ops.len(),
            (p.hits, p.contest),
            current,
        ))
    }
}

// The slot maps are built for the caches' sizes.
const _: () = assert!(ICACHE_ENTRIES.is_multiple_of(64) && BLOCK_ENTRIES.is_multiple_of(64));

/// [`ICache::touch_entry`] on the cache's parts, for code that holds them borrowed apart.
/// Without a backing (every cold restore and boot) it is one test, inlined: the fetch and
/// block-checking loops call it per instruction.
#[inline(always)]
pub(crate) fn touch_in(
    entries: &mut [Decoded],
    backing: &Option<Live>,
    generation: u32,
    slot: usize,
) {
    if let Some(l) = backing {
        if entries[slot].generation != generation {
            touch_backed(entries, l, generation, slot);
        }
    }
}

#[inline(never)]
#[cold]
fn touch_backed(entries: &mut [Decoded], l: &Live, generation: u32, slot: usize) {
    if l.generation == generation {
        if let Some(d) = l.entry(slot) {
            entries[slot] = d;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slot_map_finds_exactly_its_slots() {
        let slots: Vec<usize> = (0..5000)
            .map(|i| i * i % 65_536)
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        let m = SlotMap::from_sorted(65_536, slots.iter().map(|&s| (s, s * 3)));
        assert_eq!(m.len(), slots.len());
        for s in 0..65_536 {
            assert_eq!(
                m.get(s).copied(),
                slots.binary_search(&s).ok().map(|_| s * 3),
                "slot {s}"
            );
        }
        assert!(m.get(1 << 20).is_none());
        // Ranges, wrapping at the end.
        for (first, n) in [(0, 2048), (100, 2048), (65_536 - 1000, 2048), (63, 64)] {
            let want: std::collections::BTreeSet<usize> = slots
                .iter()
                .copied()
                .filter(|&s| (s + 65_536 - first) % 65_536 < n)
                .collect();
            let got: std::collections::BTreeSet<usize> = m.slots_in(first, n).collect();
            assert_eq!(got, want, "{first} {n}");
        }
        assert!(m
            .iter()
            .map(|(s, &v)| (s, v))
            .eq(slots.iter().map(|&s| (s, s * 3))));
    }
}
