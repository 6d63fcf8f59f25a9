//! The hart's state as a snapshot records it, and putting it back.
//!
//! Besides the architectural registers and CSRs this keeps the hart's caches
//! (TLB, decoded instructions, load/store page shortcuts): they are not
//! architectural, but a guest that changes a page table or code without the
//! fence the architecture asks for sees them, so a restored hart must hold
//! exactly what the running one held for the two runs to stay identical. The rest of
//! the code caches (unchecked entries, blocks) are kept beside it (see `code_cache`).
//! RAM is not part of it: the machine saves and maps guest memory itself.

use crate::csr::Priv;
use crate::hart::{Hart, MAX_SUPERPAGES, NO_RESERVATION};
use crate::icache::backing::{Backing, Live, SlotMap};
use crate::icache::{Decoded, FastPages, ICache, BLOCK_ENTRIES, ICACHE_ENTRIES};
use crate::mmu::TlbEntry;
use crate::pmp::Pmp;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

mod code_cache;

pub use code_cache::{CodeCacheState, SavedBlock};

/// Why a saved hart state cannot be loaded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StateError {
    /// The state was saved from a hart with other RAM or another timebase.
    #[error("saved hart had {what} {saved:#x}, this machine has {here:#x}")]
    Mismatch {
        /// Which property differs.
        what: &'static str,
        /// The saved value.
        saved: u64,
        /// This hart's value.
        here: u64,
    },
    /// A field holds a value no running hart can have.
    #[error("saved hart state is invalid: {0}")]
    Invalid(String),
}

/// One cached decoded instruction (the decoded form is recomputed on load).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedInsn {
    /// Virtual pc.
    pub pc: u64,
    /// Privilege it was fetched at (0, 1 or 3).
    pub prv: u8,
    /// The raw RVC parcel, or 0.
    pub raw16: u16,
    /// The (expanded) instruction.
    pub insn: u32,
    /// Its length in bytes (2 or 4).
    pub len: u8,
}

/// Everything of a [`Hart`] but its RAM.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HartState {
    /// RAM base and size the hart ran with (checked on load).
    pub ram_base: u64,
    /// RAM size in bytes.
    pub ram_size: u64,
    /// Integer registers.
    pub x: [u64; 32],
    /// Program counter.
    pub pc: u64,
    /// Privilege level (0, 1 or 3).
    pub prv: u8,
    /// F registers.
    pub f: [u64; 32],
    /// fflags.
    pub fflags: u8,
    /// frm.
    pub frm: u8,
    /// Cycle clock.
    pub cycles: u64,
    /// Retired instructions.
    pub instret: u64,
    /// Cycles per `time` tick.
    pub cycles_per_tick: u64,
    /// SBI timer compare value.
    pub timecmp: u64,
    /// Cycles the timer interrupt is taken after `timecmp`.
    pub timer_delay: u64,
    /// M-mode and S-mode CSRs in a fixed order (see [`Hart::save_state`]).
    pub csrs: [u64; 20],
    /// LR reservation.
    pub reservation: Option<u64>,
    /// Whether interrupts must be re-evaluated before the next instruction.
    pub irq_dirty: bool,
    /// Valid TLB entries: (tag, page, flags).
    pub tlb: Vec<(u64, u64, u64)>,
    /// Valid decoded-instruction cache entries.
    pub icache: Vec<SavedInsn>,
    /// Superpage regions cached since the last full flush, and whether they overflowed.
    pub superpages: (Vec<(u64, u64)>, bool),
    /// Valid load shortcuts: (virtual page number + 1, RAM offset).
    pub load_pages: Vec<(u64, u64)>,
    /// Valid store shortcuts.
    pub store_pages: Vec<(u64, u64)>,
    /// M-mode is the guest's (see [`Hart::enter_firmware`]).
    pub firmware: bool,
    /// The PMP registers.
    pub pmp: Pmp,
    /// An mtimecmp write the run loop has not reported yet (see `clint`).
    pub timer_written: bool,
    /// RAM is SECDED ECC memory (see `ecc`).
    pub ecc: bool,
    /// Pending codeword errors: (word address, flipped data bits).
    pub ecc_errors: Vec<(u64, u64)>,
    /// Stuck-at bits: (byte address, mask, values).
    pub stuck: Vec<(u64, u8, u8)>,
}

fn priv_bits(p: Priv) -> u8 {
    p as u8
}

fn priv_from(b: u8) -> Result<Priv, StateError> {
    match b {
        0 => Ok(Priv::User),
        1 => Ok(Priv::Supervisor),
        3 => Ok(Priv::Machine),
        _ => Err(StateError::Invalid(format!("privilege level {b}"))),
    }
}

impl Hart {
    fn csr_array(&self) -> [u64; 20] {
        [
            self.mstatus,
            self.medeleg,
            self.mideleg,
            self.mie,
            self.mip_sw,
            self.mtvec,
            self.mepc,
            self.mcause,
            self.mtval,
            self.mscratch,
            self.mcounteren,
            self.menvcfg,
            self.stvec,
            self.sepc,
            self.scause,
            self.stval,
            self.sscratch,
            self.scounteren,
            self.senvcfg,
            self.satp,
        ]
    }

    /// The hart's state without its RAM, for a snapshot.
    pub fn save_state(&self) -> HartState {
        let tlb = self
            .tlb
            .entries
            .iter()
            .filter(|e| e.tag != 0 && e.generation == self.tlb.generation)
            .map(|e| (e.tag, e.page, e.flags))
            .collect();
        // Through the restored snapshot's entries for slots not reached since (see
        // `icache::backing`).
        let ic = &self.icache;
        let icache = ic
            .entries_view()
            .filter(|d| d.checked == ic.fence)
            .map(|d| SavedInsn::of(&d))
            .collect();
        let pages = |p: &FastPages| {
            // Saved as (virtual page number + 1, RAM offset), as format 7 always has.
            p.valid()
                .map(|(page, off)| ((page >> 12) + 1, off as u64))
                .collect()
        };
        HartState {
            ram_base: self.ram.base(),
            ram_size: self.ram.size(),
            x: self.x,
            pc: self.pc,
            prv: priv_bits(self.prv),
            f: self.fp.f,
            fflags: self.fp.fflags,
            frm: self.fp.frm,
            cycles: self.cycles,
            instret: self.instret,
            cycles_per_tick: self.cycles_per_tick,
            timecmp: self.timecmp,
            timer_delay: self.timer_delay,
            csrs: self.csr_array(),
            reservation: (self.reservation != NO_RESERVATION).then_some(self.reservation),
            irq_dirty: self.irq_dirty,
            tlb,
            icache,
            superpages: (self.superpages.clone(), self.superpages_overflow),
            load_pages: pages(&self.load_pages),
            store_pages: pages(&self.store_pages),
            firmware: self.firmware,
            pmp: self.pmp.clone(),
            timer_written: self.timer_written,
            ecc: self.ecc.enabled,
            ecc_errors: self.ecc_errors(),
            stuck: self.stuck_bits(),
        }
    }

    /// Puts a saved state into this hart (whose RAM the machine has already filled).
    /// Checks everything it can first and changes nothing when it refuses.
    pub fn load_state(&mut self, s: &HartState) -> Result<(), StateError> {
        let prepared = s.prepare(self.isa)?;
        self.load_prepared(&prepared)
    }

    /// Puts a prepared state into this hart: the cheap half of [`Hart::load_state`], for
    /// restoring one snapshot many times (the caches are copied, not rebuilt).
    pub fn load_prepared(&mut self, p: &PreparedHart) -> Result<(), StateError> {
        let s = &p.state;
        for (what, saved, here) in [
            ("RAM base", s.ram_base, self.ram.base()),
            ("RAM size", s.ram_size, self.ram.size()),
            ("cycles per tick", s.cycles_per_tick, self.cycles_per_tick),
        ] {
            if saved != here {
                return Err(StateError::Mismatch { what, saved, here });
            }
        }
        self.x = s.x;
        self.pc = s.pc;
        self.prv = p.prv;
        self.fp.f = s.f;
        self.fp.fflags = s.fflags;
        self.fp.frm = s.frm;
        self.cycles = s.cycles;
        self.instret = s.instret;
        self.timecmp = s.timecmp;
        self.timer_delay = s.timer_delay;
        let c = s.csrs;
        self.mstatus = c[0];
        self.medeleg = c[1];
        self.mideleg = c[2];
        self.mie = c[3];
        self.mip_sw = c[4];
        self.mtvec = c[5];
        self.mepc = c[6];
        self.mcause = c[7];
        self.mtval = c[8];
        self.mscratch = c[9];
        self.mcounteren = c[10];
        self.menvcfg = c[11];
        self.stvec = c[12];
        self.sepc = c[13];
        self.scause = c[14];
        self.stval = c[15];
        self.sscratch = c[16];
        self.scounteren = c[17];
        self.senvcfg = c[18];
        self.satp = c[19];
        self.reservation = s.reservation.unwrap_or(NO_RESERVATION);
        self.irq_dirty = s.irq_dirty;
        self.tlb = p.tlb.clone();
        // A new cache generation drops every entry and block this hart held (in O(1));
        // then only the saved entries and blocks are written, so a restore costs what the
        // snapshot cached, not the cache's size (see `code_cache` for the blocks).
        // (Gives the hart the vector unit its ISA has, or takes it away.)
        self.set_isa(p.isa);
        // Kept beside the state, when set (see `Hart::counter_bias`); the restore that
        // has it sets it after this.
        self.counter_bias = [0; 2];
        // Likewise the vector unit's state (a section of its own): reset first.
        if let Some(v) = self.vector.as_deref_mut() {
            v.reset();
        }
        let icache = &mut self.icache;
        icache.flush();
        if p.warm {
            // The snapshot's entries and blocks back the new generation's slots until
            // reached (see `icache::backing`).
            icache.backing = Some(Live {
                backing: p.backing.clone(),
                generation: icache.generation,
                fence: icache.fence,
            });
        } else {
            // Only the checked entries: copied in now (a short branch reaches most of them;
            // measured faster than looking them up as reached).
            let (generation, fence) = (icache.generation, icache.fence);
            for (slot, d) in p.backing.entries.iter() {
                icache.entries[slot] = Decoded {
                    generation,
                    checked: fence,
                    ..*d
                };
            }
        }
        for &page in &p.code_pages {
            icache.mark_code_page(page);
        }
        for &i in &p.code_slots {
            icache.mark_code_slot(usize::from(i));
        }
        self.load_pages = p.load_pages.clone();
        self.store_pages = p.store_pages.clone();
        self.superpages = s.superpages.0.clone();
        self.superpages_overflow = s.superpages.1;
        self.firmware = s.firmware;
        self.pmp = s.pmp.clone();
        self.pmp.compile();
        self.pmp_pages.fill(0);
        self.pmp_locked = self.pmp.any_locked();
        self.timer_written = s.timer_written;
        // Checked by `prepare`; set as they were (the caches were restored as they were,
        // and held no shortcut into these words' pages).
        self.ecc.enabled = s.ecc;
        self.ecc.errors = s.ecc_errors.iter().copied().collect();
        self.stuck.bytes = s.stuck.iter().map(|&(a, m, v)| (a, (m, v & m))).collect();
        Ok(())
    }
}

/// A saved hart state, checked and with its caches built: restoring it into a hart
/// ([`Hart::load_prepared`]) copies them instead of decoding every cached instruction again.
#[derive(Debug, Clone)]
pub struct PreparedHart {
    state: HartState,
    prv: Priv,
    /// The decoded instructions and blocks, by cache slot.
    backing: Arc<Backing>,
    /// The pages that may hold checked code, to mark: by page number (the pages of the
    /// checked entries), or only by slot of the table of marks (what a code-cache section
    /// keeps).
    code_pages: Vec<u64>,
    code_slots: Vec<u16>,
    /// Prepared with the code caches (see `code_cache`): the hart is restored warm.
    warm: bool,
    tlb: crate::mmu::Tlb,
    load_pages: FastPages,
    store_pages: FastPages,
    /// The ISA the instructions were decoded for.
    isa: crate::isa::Isa,
}

impl HartState {
    /// Checks the state and builds its caches (everything but the RAM checks, which need
    /// the hart) for a hart implementing `isa` (the machine's configuration: what the
    /// cached instructions decode to depends on it, and the hart it is loaded into takes
    /// it).
    pub fn prepare(&self, isa: crate::isa::Isa) -> Result<PreparedHart, StateError> {
        self.prepare_with(isa, None)
    }

    /// [`HartState::prepare`] with the code caches a snapshot kept beside the state (see
    /// `code_cache`): the hart it is loaded into starts with the decoded instructions and
    /// blocks the running hart had, not only the instructions checked since the last fence.
    pub fn prepare_with(
        &self,
        isa: crate::isa::Isa,
        code: Option<&CodeCacheState>,
    ) -> Result<PreparedHart, StateError> {
        let s = self;
        let prv = priv_from(s.prv)?;
        let ram_end = s.ram_base.saturating_add(s.ram_size);
        if s.ecc_errors.len() > crate::ecc::MAX_ERROR_WORDS
            || s.ecc_errors.iter().any(|&(a, m)| {
                a % 8 != 0 || m == 0 || a < s.ram_base || a.saturating_add(8) > ram_end
            })
        {
            return Err(StateError::Invalid("ECC error words".into()));
        }
        if s.stuck.len() > crate::stuck::MAX_STUCK_BYTES
            || s.stuck
                .iter()
                .any(|&(a, m, _)| m == 0 || a < s.ram_base || a >= ram_end)
        {
            return Err(StateError::Invalid("stuck-at bits".into()));
        }
        if s.x[0] != 0 || s.fflags > 0x1f || s.frm > 7 {
            return Err(StateError::Invalid("x0, fflags or frm out of range".into()));
        }
        let tlb_slots = crate::mmu::Tlb::default().entries.len();
        if s.tlb.len() > tlb_slots
            || s.icache.len() > ICACHE_ENTRIES
            || s.load_pages.len() > FastPages::default().entries.len()
            || s.store_pages.len() > FastPages::default().entries.len()
        {
            return Err(StateError::Invalid("more cache entries than slots".into()));
        }
        // By slot, as the cache would hold them (a later entry for a slot replaces one
        // before it); generation and FENCE.I count are set when loaded into a hart.
        let mut by_slot = std::collections::BTreeMap::new();
        for d in &s.icache {
            by_slot.insert(ICache::slot(d.pc), d.decode(isa)?);
        }
        let (blocks, code_pages, code_slots) = match code {
            Some(c) => (
                s.prepare_code(c, isa, &mut by_slot)?,
                Vec::new(),
                c.code_pages.clone(),
            ),
            None => {
                // A snapshot from before format 7.6, or taken cold: the pages of the
                // checked entries.
                let mut marked = std::collections::BTreeSet::new();
                for d in by_slot.values() {
                    let last = d.pc.wrapping_add(u64::from(d.len) - 1);
                    marked.extend([d.pc >> 12, last >> 12]);
                }
                (Vec::new(), marked.into_iter().collect(), Vec::new())
            }
        };
        let backing = Arc::new(Backing::new(
            SlotMap::from_sorted(ICACHE_ENTRIES, by_slot),
            SlotMap::from_sorted(BLOCK_ENTRIES, blocks),
        ));
        if s.superpages.0.len() > MAX_SUPERPAGES {
            return Err(StateError::Invalid("too many superpage regions".into()));
        }
        let mut pages = [FastPages::default(), FastPages::default()];
        for (p, saved) in pages.iter_mut().zip([&s.load_pages, &s.store_pages]) {
            for &(tag, off) in saved.iter() {
                if tag == 0 || off.saturating_add(4096) > s.ram_size || off % 4096 != 0 {
                    return Err(StateError::Invalid(format!(
                        "page shortcut at RAM offset {off:#x}"
                    )));
                }
                p.insert((tag - 1) << 12, off as usize);
            }
        }
        let mut tlb = crate::mmu::Tlb::default();
        for &(tag, page, flags) in &s.tlb {
            if tag == 0 {
                return Err(StateError::Invalid("empty TLB tag".into()));
            }
            tlb.insert(tag - 1, page, flags);
        }
        debug_assert!(tlb.entries.iter().all(|e: &TlbEntry| e.generation <= 1));
        let [load_pages, store_pages] = pages;
        Ok(PreparedHart {
            state: s.clone(),
            prv,
            backing,
            code_pages,
            code_slots,
            warm: code.is_some(),
            tlb,
            isa,
            load_pages,
            store_pages,
        })
    }
}
