//! Sv39 translation: the walk sets accessed and dirty bits, and permission faults.

use super::*;

#[test]
fn sv39_walk_sets_accessed_and_dirty() {
    let mut h = hart_with(&[ld(2, 1, 0), sd(2, 1, 8)]);
    h.enter_supervisor(BASE, 0, 0);
    sv39(&mut h, pte::V | pte::R | pte::W);
    h.x[1] = 0x4000_0000;
    assert!(h.ram.load(BASE + 0x10000, &77u64.to_le_bytes()));
    run(&mut h, 1);
    assert_eq!(h.x[2], 77);
    let leaf = u64::from_le_bytes(
        h.ram
            .slice(BASE + 0x20_2000, 8)
            .unwrap()
            .try_into()
            .unwrap(),
    );
    assert_ne!(leaf & pte::A, 0);
    assert_eq!(leaf & pte::D, 0, "a load does not dirty the page");
    run(&mut h, 1);
    let leaf = u64::from_le_bytes(
        h.ram
            .slice(BASE + 0x20_2000, 8)
            .unwrap()
            .try_into()
            .unwrap(),
    );
    assert_ne!(
        leaf & pte::D,
        0,
        "the store set D through the TLB's clean entry"
    );
    assert_eq!(h.ram.slice(BASE + 0x10008, 1).unwrap(), &[77]);
}

#[test]
fn sv39_permission_faults() {
    // Store to a read-only page.
    let mut h = hart_with(&[sd(2, 1, 0)]);
    h.enter_supervisor(BASE, 0, 0);
    h.stvec = BASE + 0x100;
    sv39(&mut h, pte::V | pte::R);
    h.x[1] = 0x4000_0010;
    run(&mut h, 1);
    assert_eq!(h.scause, cause::STORE_PAGE_FAULT);
    assert_eq!(h.stval, 0x4000_0010);
    // User page from S-mode without SUM.
    let mut h = hart_with(&[ld(2, 1, 0)]);
    h.enter_supervisor(BASE, 0, 0);
    h.stvec = BASE + 0x100;
    sv39(&mut h, pte::V | pte::R | pte::U);
    h.x[1] = 0x4000_0000;
    run(&mut h, 1);
    assert_eq!(h.scause, cause::LOAD_PAGE_FAULT);
    // With SUM it works.
    let mut h = hart_with(&[ld(2, 1, 0)]);
    h.enter_supervisor(BASE, 0, 0);
    sv39(&mut h, pte::V | pte::R | pte::U);
    h.mstatus |= mstatus::SUM;
    h.x[1] = 0x4000_0000;
    run(&mut h, 1);
    assert_eq!(h.scause, 0);
    // Non-canonical address.
    let mut h = hart_with(&[ld(2, 1, 0)]);
    h.enter_supervisor(BASE, 0, 0);
    h.stvec = BASE + 0x100;
    sv39(&mut h, pte::V | pte::R);
    h.x[1] = 0x0000_8000_0000_0000;
    run(&mut h, 1);
    assert_eq!(h.scause, cause::LOAD_PAGE_FAULT);
}
