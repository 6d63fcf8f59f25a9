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

#[test]
fn sstatus_writes_keep_the_data_shortcuts_unless_sum_or_mxr_change() {
    // S-mode with SUM reads a user page (its shortcut is filled), disables interrupts
    // (csrci sstatus, SIE: Linux's local_irq_disable) and reads it again through the
    // shortcut, then clears SUM (csrc sstatus, x5): the next read must fault, as a read
    // without the shortcut does.
    let csr = |f3: u32, rs1: u32| i(0x73, 0, f3, rs1, 0x100);
    let mut h = hart_with(&[ld(2, 1, 0), csr(7, 2), ld(3, 1, 0), csr(3, 5), ld(4, 1, 0)]);
    h.enter_supervisor(BASE, 0, 0);
    h.stvec = BASE + 0x100;
    sv39(&mut h, pte::V | pte::R | pte::U | pte::A);
    assert!(h.ram.load(BASE + 0x10000, &42u64.to_le_bytes()));
    h.mstatus |= mstatus::SUM | mstatus::SIE;
    h.x[1] = 0x4000_0000;
    h.x[5] = mstatus::SUM;
    run(&mut h, 2);
    assert_eq!(h.mstatus & mstatus::SIE, 0);
    assert!(
        h.load_pages.get(0x4000_0000).is_some(),
        "an SIE write keeps the shortcut"
    );
    run(&mut h, 1);
    assert_eq!((h.x[2], h.x[3], h.scause), (42, 42, 0));
    run(&mut h, 2);
    assert_eq!(
        h.scause,
        cause::LOAD_PAGE_FAULT,
        "without SUM the user page faults"
    );
    assert_eq!((h.x[4], h.pc), (0, BASE + 0x100));
}
