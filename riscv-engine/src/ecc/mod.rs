//! SECDED error-correcting memory: RAM as a (72, 64) code, one codeword per aligned
//! 8-byte word, the way flight computers' EDAC memory controllers protect it. Optional
//! (`Hart::set_ecc`); off, an upset flips the stored bit and software sees it.
//!
//! Model: an upset flips a bit of the stored codeword, which the data RAM does not show
//! (it keeps what software wrote); the flipped bits are kept per word here. The memory
//! controller checks a word when software touches it: one flipped bit is corrected
//! (the data was right; the corrected word is written back, clearing the error) and
//! reported to the platform as a corrected error; two or more are detected and reported
//! as uncorrectable, and the access faults (load, store or fetch access fault). A store
//! of the whole word writes a fresh codeword and clears its errors; a narrower store is a
//! read-modify-write and is checked first.
//!
//! Checked: loads, stores, AMOs and instruction fetches of the hart. Not checked: page
//! table walks and device DMA (they read the data as written). Words with errors take
//! the hart's slow access path: the one-page load/store shortcuts skip their pages, and
//! an upset drops the shortcuts and makes cached instructions be fetched again.

mod controller;

use std::collections::BTreeMap;

/// Most words with pending errors kept; upsets of further words are refused (and traced
/// as missed by the machine).
pub const MAX_ERROR_WORDS: usize = 65_536;

/// What a memory check found, for [`crate::bus::Bus::memory_error`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryError {
    /// One bit was wrong and was corrected.
    Corrected,
    /// Two or more bits were wrong: the access faults.
    Uncorrectable,
}

/// The codeword errors of ECC memory.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ecc {
    /// ECC is on.
    pub(crate) enabled: bool,
    /// Flipped bits of each word that has some (word address -> mask over its 64 data
    /// bits).
    pub(crate) errors: BTreeMap<u64, u64>,
}

/// Whether `map` (keyed by physical address) has a key in the 4 KiB page of `paddr`.
#[inline]
pub(crate) fn page_has_key<V>(map: &BTreeMap<u64, V>, paddr: u64) -> bool {
    if map.is_empty() {
        return false;
    }
    let page = paddr & !0xfff;
    map.range(page..page + 0x1000).next().is_some()
}
