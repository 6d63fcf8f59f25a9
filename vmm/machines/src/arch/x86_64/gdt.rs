//! The boot GDT and its conversion to KVM segment registers.
//!
//! Flat 64-bit code and data segments, plus a TSS descriptor because VMX
//! refuses to enter a guest whose TR is unusable.

use kvm_bindings::kvm_segment;

/// Selector index of the code segment.
pub const CODE_INDEX: u16 = 1;
/// Selector index of the data segment.
pub const DATA_INDEX: u16 = 2;
/// Selector index of the TSS.
pub const TSS_INDEX: u16 = 3;

/// Builds a GDT entry from flags (the 12 bits of access byte and granularity nibble), base and limit.
pub const fn entry(flags: u16, base: u32, limit: u32) -> u64 {
    ((base as u64 & 0xff00_0000) << 32)
        | ((base as u64 & 0x00ff_ffff) << 16)
        | (limit as u64 & 0x0000_ffff)
        | ((limit as u64 & 0x000f_0000) << 32)
        | ((flags as u64 & 0xf0ff) << 40)
}

/// The boot GDT: null, 64-bit code, data, TSS.
pub const BOOT_GDT: [u64; 4] = [
    0,
    entry(0xa09b, 0, 0xfffff),
    entry(0xc093, 0, 0xfffff),
    entry(0x808b, 0, 0xfffff),
];

/// Decodes GDT entry `index` of `entry_bits` into the segment register KVM expects.
pub fn segment(index: u16, entry_bits: u64) -> kvm_segment {
    let base = ((entry_bits >> 16) & 0x00ff_ffff) | ((entry_bits >> 32) & 0xff00_0000);
    let raw_limit = ((entry_bits & 0xffff) | ((entry_bits >> 32) & 0xf_0000)) as u32;
    let g = ((entry_bits >> 55) & 1) as u8;
    let limit = if g == 1 {
        (raw_limit << 12) | 0xfff
    } else {
        raw_limit
    };
    kvm_segment {
        base,
        limit,
        selector: index * 8,
        type_: ((entry_bits >> 40) & 0xf) as u8,
        present: ((entry_bits >> 47) & 1) as u8,
        dpl: ((entry_bits >> 45) & 3) as u8,
        db: ((entry_bits >> 54) & 1) as u8,
        s: ((entry_bits >> 44) & 1) as u8,
        l: ((entry_bits >> 53) & 1) as u8,
        g,
        avl: ((entry_bits >> 52) & 1) as u8,
        unusable: if (entry_bits >> 47) & 1 == 0 { 1 } else { 0 },
        padding: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_segment_is_64_bit_ring_0() {
        let cs = segment(CODE_INDEX, BOOT_GDT[CODE_INDEX as usize]);
        assert_eq!(cs.selector, 8);
        assert_eq!(cs.l, 1);
        assert_eq!(cs.db, 0);
        assert_eq!(cs.dpl, 0);
        assert_eq!(cs.present, 1);
        assert_eq!(cs.type_, 0xb);
        assert_eq!(cs.limit, 0xffff_ffff);
    }

    #[test]
    fn entry_round_trips_base_and_limit() {
        let e = entry(0x008b, 0x1234_5678, 0x67);
        let s = segment(TSS_INDEX, e);
        assert_eq!(s.base, 0x1234_5678);
        assert_eq!(s.limit, 0x67);
        assert_eq!(s.g, 0);
        let paged = segment(TSS_INDEX, entry(0x808b, 0, 0x67));
        assert_eq!(paged.g, 1);
        assert_eq!(paged.limit, 0x67fff);
    }
}
