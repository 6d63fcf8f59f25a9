//! Upset rules: where their places are drawn (RAM bit ranges, registers, vector lanes).

use super::*;

/// An upset rule draws bits inside its bit-address range (RAM) or registers x1-x31,
/// the same for the same seed, and adding it shifts no other rule's faults.
#[test]
fn vector_register_upsets_draw_a_register_a_lane_and_a_bit() {
    let p: Profile = toml::from_str(
        "[[rule]]\nkind = \"upset\"\ncount = [40, 40]\nvalue = [0, 131071]\nchoices = [\"v\"]\n",
    )
    .unwrap();
    p.check().unwrap();
    let plan = p.draw(
        RunSeed(4),
        Targets {
            disk: false,
            node: true,
            ram: true,
        },
    );
    plan.check().unwrap();
    let places: Vec<(u8, u8, u8)> = plan
        .faults
        .iter()
        .map(|f| match f.kind {
            FaultKind::Upset {
                place: UpsetPlace::V(r, lane),
                bit,
                ..
            } => (r, lane, bit),
            _ => panic!("{f:?}"),
        })
        .collect();
    assert_eq!(places.len(), 40);
    assert!(places
        .iter()
        .all(|&(r, lane, bit)| r < 32 && lane < 64 && bit < 64));
    // Drawn across registers and lanes, not all in one.
    assert!(places.iter().any(|p| p.0 != places[0].0) && places.iter().any(|p| p.1 != places[0].1));
}

/// A register upset rule without `value` aims at every bit of its registers (the
/// default range is a whole number of each chosen register file); a RAM one without
/// `value` is refused, naming what to give.
#[test]
fn register_upsets_without_a_value_cover_every_register_and_ram_needs_one() {
    let p: Profile = toml::from_str(
        "[[rule]]\nkind = \"upset\"\ncount = [600, 600]\nchoices = [\"v\", \"x\"]\n",
    )
    .unwrap();
    p.check().unwrap();
    assert_eq!(p.rules[0].value(), [0, 31 * 32 * 64 * 64 - 1]);
    let plan = p.draw(
        RunSeed(2),
        Targets {
            disk: false,
            node: true,
            ram: true,
        },
    );
    let (mut vregs, mut xregs, mut bits) = ([false; 32], [false; 32], [false; 64]);
    for f in &plan.faults {
        match f.kind {
            FaultKind::Upset {
                place: UpsetPlace::V(r, _),
                bit,
                ..
            } => {
                vregs[usize::from(r)] = true;
                bits[usize::from(bit)] = true;
            }
            FaultKind::Upset {
                place: UpsetPlace::X(r),
                ..
            } => xregs[usize::from(r)] = true,
            _ => panic!("{f:?}"),
        }
    }
    assert!(vregs.iter().all(|&b| b), "every vector register is hit");
    assert!(xregs[1..].iter().all(|&b| b), "every x register is hit");
    assert!(bits.iter().all(|&b| b), "every bit position is hit");
    for ram in ["", "choices = [\"ram\"]\n", "choices = [\"ram\", \"x\"]\n"] {
        let p: Profile = toml::from_str(&format!(
            "[[rule]]\nkind = \"upset\"\ncount = [1, 1]\n{ram}"
        ))
        .unwrap();
        let e = p.check().unwrap_err().to_string();
        assert!(
            e.contains("rule[0].value") && e.contains("bit address"),
            "{e}"
        );
    }
}

#[test]
fn upset_rules_draw_places_from_their_own_stream() {
    let base: Profile =
        toml::from_str("[[rule]]\nkind = \"pause\"\ncount = [2, 2]\nduration_ms = [10, 20]\n")
            .unwrap();
    let with: Profile = toml::from_str(
        "[[rule]]\nkind = \"pause\"\ncount = [2, 2]\nduration_ms = [10, 20]\n\
         [[rule]]\nkind = \"upset\"\ncount = [50, 50]\nvalue = [17179869184, 17181966335]\n\
         [[rule]]\nkind = \"upset\"\ncount = [20, 20]\nvalue = [0, 100000]\nchoices = [\"x\"]\n",
    )
    .unwrap();
    with.check().unwrap();
    let has = Targets {
        disk: false,
        node: true,
        ram: true,
    };
    let a = with.draw(RunSeed(9), has);
    a.check().unwrap();
    assert_eq!(a, with.draw(RunSeed(9), has));
    let mut ram = 0;
    for f in &a.faults {
        match f.kind {
            FaultKind::Upset {
                place: UpsetPlace::Ram(addr),
                bit,
                ..
            } => {
                ram += 1;
                assert!(
                    (0x8000_0000..0x8004_0000).contains(&addr) && bit < 8,
                    "{f:?}"
                );
            }
            FaultKind::Upset {
                place: UpsetPlace::X(r),
                bit,
                ..
            } => assert!((1..32).contains(&r) && bit < 64),
            FaultKind::Pause => {}
            _ => panic!("{f:?}"),
        }
    }
    assert_eq!(ram, 50);
    let pauses = |p: &FaultPlan| {
        p.faults
            .iter()
            .filter(|f| f.kind == FaultKind::Pause)
            .copied()
            .collect::<Vec<_>>()
    };
    assert_eq!(pauses(&a), pauses(&base.draw(RunSeed(9), has)));
    assert!(
        toml::from_str::<Profile>("[[rule]]\nkind = \"upset\"\nchoices = [\"csr\"]\n").is_err()
    );
}
