//! Single-event upsets and stuck bits on the riscv64 hart: the fault events fire in the
//! bus, which queues what they hit; this applies them to the hart's RAM, registers and
//! CSRs before it runs on, and traces each with the value before and after.

use super::bus::RvBus;
use crate::faults::plan::UpsetPlace;
use serde_json::json;
use wio_riscv::Hart;

/// Fires the bus's events due at `now_ns`, applies the upsets they queued, and lets the
/// hart see the interrupts they raised: what every part of the run loop does once virtual
/// time reached a device event (a step, an idle hart, a stall, a stopped machine).
pub(super) fn fire_due(hart: &mut Hart, bus: &mut RvBus, now_ns: u64) {
    bus.fire_due_events(now_ns);
    apply_upsets(hart, bus, now_ns);
    hart.poke_interrupts();
}

/// Flips the bits of the upsets the fault events just fired (single-event upsets): the
/// next instruction sees them. Each is a trace line with the value before and after.
fn apply_upsets(hart: &mut Hart, bus: &mut RvBus, now_ns: u64) {
    for (place, bit, width) in std::mem::take(&mut bus.upsets) {
        // The plan check keeps bit + width within the place's bits.
        let mask = (u64::MAX >> (64 - u32::from(width.clamp(1, 64)))) << bit;
        let flipped = match place {
            UpsetPlace::Ram(addr) if hart.ecc() => {
                // ECC memory: the codeword changes, the data does not (see wio_riscv::ecc).
                let line = match hart.ecc_upset(addr, bit, width) {
                    Some(n) => {
                        json!({ "at": { "ram": addr }, "bit": bit, "width": width, "ecc": { "word_errors": n } })
                    }
                    None => {
                        json!({ "at": place, "bit": bit, "width": width, "missed": "no such RAM, or too many words with errors" })
                    }
                };
                bus.trace.event(now_ns, "upset", line);
                continue;
            }
            UpsetPlace::Ram(addr) => hart
                .flip_ram_bits(addr, mask as u8)
                .map(|(b, a)| (json!({ "ram": addr }), u64::from(b), u64::from(a))),
            UpsetPlace::X(r) => {
                let r = usize::from(r & 31).max(1);
                hart.x[r] ^= mask;
                Some((json!({ "x": r }), hart.x[r] ^ mask, hart.x[r]))
            }
            UpsetPlace::F(r) => {
                let r = usize::from(r & 31);
                hart.fp.f[r] ^= mask;
                Some((json!({ "f": r }), hart.fp.f[r] ^ mask, hart.fp.f[r]))
            }
            UpsetPlace::Pc => {
                hart.pc ^= mask;
                Some((json!("pc"), hart.pc ^ mask, hart.pc))
            }
            UpsetPlace::Csr(c) => hart
                .flip_csr_bits(c, mask)
                .map(|(b, a)| (json!({ "csr": c }), b, a)),
            UpsetPlace::V(r, lane) => hart
                .flip_vreg_bits(r, lane, mask)
                .map(|(l, b, a)| (json!({ "v": r, "lane": l }), b, a)),
        };
        let line = match flipped {
            Some((at, before, after)) => {
                json!({ "at": at, "bit": bit, "width": width, "before": before, "after": after })
            }
            None => {
                json!({ "at": place, "bit": bit, "width": width, "missed": "no such RAM or CSR" })
            }
        };
        bus.trace.event(now_ns, "upset", line);
    }
    for (addr, bit, value) in std::mem::take(&mut bus.stuck) {
        let line = match value {
            Some(v) => match hart.stick_bit(addr, bit, v) {
                Some((before, after)) => {
                    json!({ "ram": addr, "bit": bit, "value": u8::from(v), "before": before, "after": after })
                }
                None => {
                    json!({ "ram": addr, "bit": bit, "value": u8::from(v), "missed": "no such RAM, or too many stuck bytes" })
                }
            },
            None => {
                hart.release_bit(addr, bit);
                json!({ "ram": addr, "bit": bit, "released": true })
            }
        };
        bus.trace.event(now_ns, "stuck", line);
    }
}

#[cfg(test)]
mod tests {
    use super::super::layout;
    use super::super::machine::RvMachine;
    use crate::faults::plan::FaultPlan;
    use crate::faults::FaultSource;
    use crate::machine::{guests, Machine, RunConfig, Stop};
    use std::time::Instant;
    use wio_clock::VirtualTime;

    /// A RAM byte well above what the small guest touches by then.
    const ADDR: u64 = layout::RAM_BASE + (200 << 20);
    const AT_NS: u64 = 50_000_000;

    fn byte(m: &RvMachine) -> u8 {
        let mut b = [0u8];
        assert_eq!(m.engine.hart.debug_read(ADDR, &mut b, false), 1);
        b[0]
    }

    /// A planned upset flips its bit exactly at its time: not at the last instruction
    /// boundary before it, and from the first one at or after it on; traced. Two runs give
    /// the same trace; the x0 register and bit 8 of a byte are refused by the plan check.
    #[test]
    fn a_planned_bit_flip_is_seen_exactly_at_its_time() {
        if let Err(e) = guests::built_guest("small") {
            wio_require::skip(
                "a_planned_bit_flip_is_seen_exactly_at_its_time",
                wio_require::Capability::RiscvGuests,
                &format!("no built small riscv64 guest: {e}"),
            );
            return;
        }
        let plan: FaultPlan = serde_json::from_str(&format!(
            r#"{{"faults":[{{"at_ns":{AT_NS},"target":"node","kind":"upset","params":{{"place":{{"ram":{ADDR}}},"bit":3}}}},
                {{"at_ns":{},"target":"node","kind":"upset","params":{{"place":{{"f":5}},"bit":62}}}},
                {{"at_ns":{},"target":"node","kind":"upset","params":{{"place":{{"ram":{ADDR}}},"bit":5,"width":3}}}},
                {{"at_ns":{},"target":"node","kind":"upset","params":{{"place":{{"csr":832}},"bit":4,"width":2}}}}]}}"#,
            AT_NS + 1_000_000,
            AT_NS + 1_500_000,
            AT_NS + 1_500_000
        ))
        .expect("a plan with upsets");
        assert!(plan.check().is_ok(), "{:?}", plan.check());
        let cfg = RunConfig {
            guest: Some("small".into()),
            epoch_unix: 1_767_225_600,
            faults: FaultSource::Plan(plan),
            ..RunConfig::with_seed(4)
        };
        let run = || {
            let mut m = RvMachine::boot(&cfg, Instant::now()).unwrap();
            let upto = |m: &mut RvMachine, t: u64| loop {
                match m.run_until(VirtualTime::from_ns(t)) {
                    Stop::Limit => break,
                    Stop::End(e) => panic!("the guest ended early: {e:?}"),
                    _ => {}
                }
            };
            upto(&mut m, AT_NS - 1);
            let before = byte(&m);
            assert!(m.now().as_ns() < AT_NS);
            upto(&mut m, AT_NS);
            assert_eq!(byte(&m), before ^ 8, "flipped at {} ns", m.now().as_ns());
            let f5 = m.engine.hart.fp.f[5];
            upto(&mut m, AT_NS + 1_000_000);
            assert_eq!(m.engine.hart.fp.f[5], f5 ^ (1 << 62));
            // A multi-bit upset (bits 5-7) and two bits of mscratch (0x340).
            let (b, mscratch) = (byte(&m), m.engine.hart.debug_csr(0x340).unwrap());
            upto(&mut m, AT_NS + 1_500_000);
            assert_eq!(byte(&m), b ^ 0b1110_0000);
            assert_eq!(m.engine.hart.debug_csr(0x340), Some(mscratch ^ 0b11_0000));
            upto(&mut m, AT_NS + 2_000_000);
            m.bus.trace.hash_hex()
        };
        assert_eq!(run(), run(), "same seed, same upsets, same trace");
        for bad in [
            r#"{"place":{"x":0},"bit":1}"#,
            r#"{"place":{"ram":0},"bit":8}"#,
            r#"{"place":"pc","bit":64}"#,
            r#"{"place":{"ram":0},"bit":6,"width":3}"#,
            r#"{"place":{"x":3},"bit":0,"width":0}"#,
            r#"{"place":{"csr":4096},"bit":0}"#,
        ] {
            let plan: FaultPlan = serde_json::from_str(&format!(
                r#"{{"faults":[{{"at_ns":1,"target":"node","kind":"upset","params":{bad}}}]}}"#
            ))
            .unwrap();
            assert!(plan.check().is_err(), "{bad}");
        }
    }
}
