//! Stuck-at bits of RAM: memory cells that read 0 or 1 whatever software writes (a cell
//! damaged by radiation's total dose or a latch-up, until the fault ends). The forced
//! value is kept in RAM itself, so loads and instruction fetches see it at full speed;
//! every store the hart makes to a byte with stuck bits forces them again, which is why
//! stores to such pages take the slow path (no store shortcut). Device DMA writes are not
//! forced (documented limitation), nor does the ECC check see stuck bits (they are
//! modelled in the data, not in the codeword).

mod cells;

use std::collections::BTreeMap;

/// Most bytes with stuck bits kept at once.
pub const MAX_STUCK_BYTES: usize = 65_536;

/// Stuck bits: byte address -> (mask of stuck bits, their values).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stuck {
    pub(crate) bytes: BTreeMap<u64, (u8, u8)>,
}
