//! The hart's code caches as a snapshot keeps them beyond [`HartState::icache`]: the decoded
//! instructions a FENCE.I or full flush left unchecked, the built blocks and the pages that
//! may hold checked code. With them a restored hart starts with exactly the caches the
//! running one had (warm branches: no branch decodes, builds or compiles again what its
//! parent already had), where [`HartState`] alone gives it only the instructions checked
//! since the last fence and no block.
//!
//! Why the guest cannot tell: an unchecked entry is fetched and compared at its next use
//! exactly as an emptied cache fetches (see `Hart::decoded`); a block is a copy of cache
//! entries and runs exactly as they would one by one (see `Hart::build_block`); a block
//! left stale by a fence is fetched again as a whole when next entered (see
//! `Hart::recheck_block`), as it is in the run that took the snapshot. What a restore
//! installs is a function of the snapshot alone, so a branch's result cannot depend on
//! which branch ran before it; and since a restored hart holds what the running one held,
//! a branch continues as the uninterrupted run does even for code the architecture leaves
//! open (a rewrite of its own next instructions without a fence). Compiled code is not
//! kept: a restored block reuses the code its slot holds when pc and instructions match
//! (a cache the thread's previous hart left, see `icache::SPARE_CACHES`), and is compiled
//! at its first run otherwise. A restore copies nothing of these into the hart's tables:
//! they back its slots until first reached (see `icache::backing`).

use super::{priv_bits, priv_from, HartState, SavedInsn, StateError};
use crate::hart::Hart;
use crate::icache::backing::{BackedBlock, CHECKED};
use crate::icache::{
    in_run_page, Block, Decoded, ICache, BLOCK_ENTRIES, BLOCK_HOT, BUILT, CODE_PAGES, CONTEST,
    MAX_BLOCK,
};
use crate::predecode::Kind;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One slot of the block table: a built block (its instructions are the cache's entries
/// from `pc` on, since a block copies them, so where it starts and how many it holds say
/// all), or a pc counting visits toward one. The counts are kept too: when a block is built
/// decides whether later instructions are fetched with it or one by one, which code that
/// rewrites itself without a fence can tell apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedBlock {
    /// Virtual pc of its first instruction.
    pub pc: u64,
    /// Privilege it was built (or is counted) at (0, 1 or 3).
    pub prv: u8,
    /// Instructions in it (0: no block starts here, its first instruction has no fast path;
    /// always 0 for a slot still counting).
    pub len: u8,
    /// Checked since the last FENCE.I or full flush (runnable as it is); otherwise it is
    /// fetched again as a whole when next entered. False for a slot still counting.
    pub checked: bool,
    /// Visits of `pc` so far, below `icache::BLOCK_HOT`; 255 for a built block.
    pub hits: u8,
    /// Visits of other pcs the built block has outlasted (see `icache::CONTEST`).
    pub contest: u8,
}

impl SavedBlock {
    /// Whether its `i`th instruction, at `pc`, `len` bytes long and of kind `kind`, is one
    /// `Hart::build_block` puts there in a block of privilege `prv`: allowed in a block,
    /// within the block's page, and a jump only last (see `Kind::ends_block`). A restore
    /// refuses a saved block breaking this; a learned one is left out.
    fn may_hold(&self, prv: crate::csr::Priv, i: u8, pc: u64, len: u8, kind: Kind) -> bool {
        kind.in_block(prv)
            && (i + 1 == self.len || !kind.ends_block())
            && in_run_page(self.pc, pc, len)
    }
}

/// The code caches beyond [`HartState`] (a snapshot's `code-cache` section).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CodeCacheState {
    /// Decoded instructions not checked since the last FENCE.I or full flush.
    pub unchecked: Vec<SavedInsn>,
    /// Built blocks.
    pub blocks: Vec<SavedBlock>,
    /// Slots of the table of pages that may hold checked code (hashed by page number) that
    /// are marked for the current fence.
    pub code_pages: Vec<u16>,
}

impl Hart {
    /// The code caches beyond [`Hart::save_state`], for a snapshot.
    pub fn save_code_cache(&self) -> CodeCacheState {
        let ic = &self.icache;
        let unchecked = ic
            .entries_view()
            .filter(|d| d.checked != ic.fence)
            .map(|d| SavedInsn::of(&d))
            .collect();
        let blocks = (0..BLOCK_ENTRIES)
            .filter_map(|slot| ic.block_view(slot))
            .map(|v| SavedBlock {
                pc: v.pc,
                prv: priv_bits(v.prv),
                len: v.len as u8,
                checked: v.checked,
                hits: v.hits,
                contest: v.contest,
            })
            .collect();
        let code_pages = (0..CODE_PAGES)
            .filter(|&i| ic.code_pages[i].fence == ic.fence)
            .map(|i| i as u16)
            .collect();
        CodeCacheState {
            unchecked,
            blocks,
            code_pages,
        }
    }
}

impl HartState {
    /// Adds the saved code caches to the cache entries `prepare` collected by slot
    /// (unchecked entries, and each block's owner marks on the entries it copies), and
    /// builds the blocks from the entries. Refuses blocks whose instructions the entries do
    /// not hold: a block is always a copy of entries the cache still holds.
    pub(super) fn prepare_code(
        &self,
        code: &CodeCacheState,
        isa: crate::isa::Isa,
        by_slot: &mut BTreeMap<usize, Decoded>,
    ) -> Result<Vec<(usize, BackedBlock)>, StateError> {
        if code.unchecked.len() > crate::icache::ICACHE_ENTRIES
            || code.blocks.len() > BLOCK_ENTRIES
            || code.code_pages.len() > CODE_PAGES
            || code
                .code_pages
                .iter()
                .any(|&i| usize::from(i) >= CODE_PAGES)
        {
            return Err(StateError::Invalid(
                "more code-cache entries than slots".into(),
            ));
        }
        for d in &code.unchecked {
            let mut entry = d.decode(isa)?;
            entry.checked = 0;
            if by_slot.insert(ICache::slot(d.pc), entry).is_some() {
                return Err(StateError::Invalid(format!(
                    "decoded instruction at {:#x} saved twice",
                    d.pc
                )));
            }
        }
        let mut blocks: BTreeMap<usize, BackedBlock> = BTreeMap::new();
        for b in &code.blocks {
            let prv = priv_from(b.prv)?;
            let bad = || StateError::Invalid(format!("block at {:#x}", b.pc));
            let built = b.hits == BUILT;
            if usize::from(b.len) > MAX_BLOCK
                || b.pc == u64::MAX
                || b.pc & 1 != 0
                || b.contest > CONTEST
                || !built && (b.len != 0 || b.checked || b.hits == 0 || b.hits >= BLOCK_HOT)
            {
                return Err(bad());
            }
            let mut ops = Vec::with_capacity(usize::from(b.len));
            let mut pc = b.pc;
            for i in 0..b.len {
                let e = by_slot
                    .get_mut(&ICache::slot(pc))
                    .filter(|e| e.pc == pc && e.prv == prv)
                    .filter(|e| b.may_hold(prv, i, pc, e.len, e.op.kind))
                    .ok_or_else(bad)?;
                if b.checked && e.checked != CHECKED {
                    return Err(bad());
                }
                if e.owner != u64::MAX && e.owner != b.pc {
                    e.shared = true;
                }
                e.owner = b.pc;
                ops.push((e.op, e.len, e.insn));
                pc = pc.wrapping_add(u64::from(e.len));
            }
            let slot = Block::slot(b.pc);
            let block = BackedBlock {
                pc: b.pc,
                prv,
                ops,
                checked: b.checked,
                hits: b.hits,
                contest: b.contest,
            };
            if blocks.insert(slot, block).is_some() {
                return Err(StateError::Invalid(format!(
                    "two blocks in the slot of {:#x}",
                    b.pc
                )));
            }
        }
        Ok(blocks.into_iter().collect())
    }
}

impl SavedInsn {
    pub(super) fn of(d: &Decoded) -> SavedInsn {
        SavedInsn {
            pc: d.pc,
            prv: priv_bits(d.prv),
            raw16: d.raw16,
            insn: d.insn,
            len: d.len,
        }
    }

    /// The cache entry, checked ([`CHECKED`]) and owned by no block.
    pub(super) fn decode(&self, isa: crate::isa::Isa) -> Result<Decoded, StateError> {
        if self.len != 2 && self.len != 4 || self.pc == u64::MAX {
            return Err(StateError::Invalid(format!(
                "decoded instruction at {:#x}",
                self.pc
            )));
        }
        Ok(Decoded {
            pc: self.pc,
            generation: 0,
            prv: priv_from(self.prv)?,
            raw16: self.raw16,
            insn: self.insn,
            len: self.len,
            op: crate::predecode::decode(self.insn, isa),
            owner: u64::MAX,
            shared: false,
            checked: CHECKED,
        })
    }
}

impl Hart {
    /// Everything this hart has decoded and built, as a code cache that restores of the
    /// snapshot it started from may begin with (see [`HartState::with_learned`]): every
    /// decoded instruction of the current generation, checked or not, and every built
    /// block (slots still counting visits are left out). Nothing in it is marked checked:
    /// it describes memory as this hart found it, which another branch's may not be.
    pub fn learned_code(&self) -> CodeCacheState {
        let ic = &self.icache;
        let unchecked = ic.entries_view().map(|d| SavedInsn::of(&d)).collect();
        let blocks = (0..BLOCK_ENTRIES)
            .filter_map(|slot| ic.block_view(slot))
            .filter(|v| v.hits == BUILT)
            .map(|v| SavedBlock {
                pc: v.pc,
                prv: priv_bits(v.prv),
                len: v.len as u8,
                checked: false,
                hits: BUILT,
                contest: v.contest,
            })
            .collect();
        CodeCacheState {
            unchecked,
            blocks,
            code_pages: Vec::new(),
        }
    }
}

impl HartState {
    /// The code cache a restore of this state starts with when it also takes what another
    /// run from the same state learned (`learned`, from [`Hart::learned_code`]): this
    /// state's own checked instructions stay as they are (a learned instruction for one of
    /// their slots is left out), every learned instruction is unchecked (fetched and
    /// compared at its first use, exactly as an emptied cache fetches it) and every learned
    /// block stale (fetched again as a whole when first entered, see `Hart::recheck_block`);
    /// a learned block whose instructions the merged entries do not all hold is left out.
    /// The code-page marks are those of this state's checked instructions, as a restore
    /// without a code cache computes them.
    pub fn with_learned(&self, learned: &CodeCacheState, isa: crate::isa::Isa) -> CodeCacheState {
        let mut own: BTreeMap<usize, &SavedInsn> = BTreeMap::new();
        for d in &self.icache {
            own.insert(ICache::slot(d.pc), d);
        }
        let mut code_pages: Vec<u16> = own
            .values()
            .flat_map(|d| {
                let last = d.pc.wrapping_add(u64::from(d.len.max(1)) - 1);
                [d.pc >> 12, last >> 12]
            })
            .map(|page| (page as usize & (CODE_PAGES - 1)) as u16)
            .collect();
        code_pages.sort_unstable();
        code_pages.dedup();
        let mut merged: BTreeMap<usize, &SavedInsn> = BTreeMap::new();
        let mut unchecked = Vec::new();
        for d in &learned.unchecked {
            let slot = ICache::slot(d.pc);
            if own.contains_key(&slot) || merged.contains_key(&slot) {
                continue;
            }
            merged.insert(slot, d);
            unchecked.push(d.clone());
        }
        let held = |pc: u64| {
            let slot = ICache::slot(pc);
            own.get(&slot).or_else(|| merged.get(&slot)).copied()
        };
        let mut slots = std::collections::BTreeSet::new();
        let blocks = learned
            .blocks
            .iter()
            .filter(|b| b.hits == BUILT && usize::from(b.len) <= MAX_BLOCK)
            .filter(|b| slots.insert(Block::slot(b.pc)))
            .filter(|b| {
                // Each instruction held at the block's privilege and one the block may hold
                // there (the merged entries may hold another program's code at its pcs).
                let mut pc = b.pc;
                (0..b.len).all(|i| {
                    let Some(d) = held(pc).filter(|d| d.pc == pc && d.prv == b.prv) else {
                        return false;
                    };
                    let kind = crate::predecode::decode(d.insn, isa).kind;
                    let ok = priv_from(d.prv).is_ok_and(|prv| b.may_hold(prv, i, pc, d.len, kind));
                    pc = pc.wrapping_add(u64::from(d.len));
                    ok
                })
            })
            .map(|b| SavedBlock {
                checked: false,
                ..*b
            })
            .collect();
        CodeCacheState {
            unchecked,
            blocks,
            code_pages,
        }
    }
}
