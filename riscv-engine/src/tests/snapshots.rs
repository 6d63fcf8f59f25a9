//! Saved state: a restored hart continues identically, and a snapshot is refused by a
//! machine it was not taken on.

use super::*;

#[test]
fn saved_state_continues_identically_even_with_stale_translations() {
    let mut h = hart_with(&[ld(2, 1, 0), addi(2, 2, 1), sd(2, 1, 0), jal(0, -12)]);
    h.enter_supervisor(BASE, 0, 0);
    sv39(&mut h, pte::V | pte::R | pte::W | pte::A | pte::D);
    h.x[1] = 0x4000_0000;
    run(&mut h, 1001);
    let saved = h.save_state();
    assert!(!saved.tlb.is_empty() && !saved.icache.is_empty());
    let mut copy = Hart::new(h.ram.clone(), 0, 10);
    copy.load_state(&saved).unwrap();
    assert_eq!(copy.save_state(), saved);
    // Remap the data page without SFENCE.VMA: the architecture lets both harts keep their
    // cached translation, and a restored hart must do what the original does.
    let leaf = (((BASE + 0x30000) >> 12) << 10) | pte::V | pte::R | pte::W | pte::A | pte::D;
    for hart in [&mut h, &mut copy] {
        assert!(hart.ram.load(BASE + 0x20_2000, &leaf.to_le_bytes()));
        run(hart, 1000);
    }
    assert_eq!(h.save_state(), copy.save_state());
    assert_eq!(h.ram.bytes(), copy.ram.bytes());
    let counter = |h: &Hart, a| u64::from_le_bytes(h.ram.slice(a, 8).unwrap().try_into().unwrap());
    assert_eq!(
        counter(&h, BASE + 0x10000),
        500,
        "the cached translation was used"
    );
    assert_eq!(counter(&h, BASE + 0x30000), 0);
}

#[test]
fn saved_state_is_refused_by_another_machine() {
    let h = hart_with(&[NOP]);
    let saved = h.save_state();
    let mut other = Hart::new(Ram::new(BASE, 8 << 20), BASE, 10);
    assert!(matches!(
        other.load_state(&saved),
        Err(crate::state::StateError::Mismatch {
            what: "RAM size",
            ..
        })
    ));
    let mut bad = saved.clone();
    bad.prv = 2;
    let mut same = hart_with(&[NOP]);
    assert!(same.load_state(&bad).is_err());
    assert_eq!(same.save_state(), saved, "a refused state changes nothing");
}
