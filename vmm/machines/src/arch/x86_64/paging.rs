//! Identity-mapping boot page tables (2 MiB pages) so the guest can start in long mode.

use super::layout::{IDENTITY_MAP_GIB, PDPT_ADDR, PD_ADDR, PML4_ADDR};
use crate::memory::GuestMem;
use vm_memory::{Bytes, GuestAddress};

const PRESENT_WRITABLE: u64 = 0x3;
const PAGE_SIZE_2M: u64 = 0x80;

/// Writes PML4, PDPT and page directories mapping the first [`IDENTITY_MAP_GIB`] GiB 1:1.
pub fn write_identity_map(mem: &GuestMem) -> Result<(), vm_memory::GuestMemoryError> {
    mem.write_obj(PDPT_ADDR | PRESENT_WRITABLE, GuestAddress(PML4_ADDR))?;
    for gib in 0..IDENTITY_MAP_GIB {
        let pd = PD_ADDR + gib * 0x1000;
        mem.write_obj(pd | PRESENT_WRITABLE, GuestAddress(PDPT_ADDR + gib * 8))?;
        for i in 0..512u64 {
            let phys = (gib << 30) | (i << 21);
            mem.write_obj(
                phys | PRESENT_WRITABLE | PAGE_SIZE_2M,
                GuestAddress(pd + i * 8),
            )?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_two_mib_pages_identity() {
        let mem = GuestMem::from_ranges(&[(GuestAddress(0), 0x10_0000)]).unwrap();
        write_identity_map(&mem).unwrap();
        let pml4: u64 = mem.read_obj(GuestAddress(PML4_ADDR)).unwrap();
        assert_eq!(pml4 & !0xfff, PDPT_ADDR);
        let pd1_entry3: u64 = mem
            .read_obj(GuestAddress(PD_ADDR + 0x1000 + 3 * 8))
            .unwrap();
        assert_eq!(pd1_entry3 & !0xfff, (1 << 30) | (3 << 21));
        assert_eq!(pd1_entry3 & PAGE_SIZE_2M, PAGE_SIZE_2M);
    }
}
