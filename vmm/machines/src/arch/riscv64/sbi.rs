//! wio's implementation of the RISC-V Supervisor Binary Interface: what
//! OpenSBI or KVM would serve to a supervisor kernel. Extensions: BASE, TIME,
//! IPI, RFENCE, HSM, SRST, DBCN, and the legacy console/timer/shutdown calls.

use wio_riscv::Hart;

/// Extension IDs.
pub mod eid {
    /// Legacy set_timer.
    pub const LEGACY_SET_TIMER: u64 = 0x00;
    /// Legacy console_putchar.
    pub const LEGACY_PUTCHAR: u64 = 0x01;
    /// Legacy console_getchar.
    pub const LEGACY_GETCHAR: u64 = 0x02;
    /// Legacy shutdown.
    pub const LEGACY_SHUTDOWN: u64 = 0x08;
    /// Base.
    pub const BASE: u64 = 0x10;
    /// Timer.
    pub const TIME: u64 = 0x5449_4d45;
    /// Inter-processor interrupts.
    pub const IPI: u64 = 0x73_5049;
    /// Remote fences.
    pub const RFENCE: u64 = 0x5246_4e43;
    /// Hart state management.
    pub const HSM: u64 = 0x48_534d;
    /// System reset.
    pub const SRST: u64 = 0x5352_5354;
    /// Debug console.
    pub const DBCN: u64 = 0x4442_434e;
    /// wio's own extension, in the firmware-specific range (0x0A000000-0x0AFFFFFF):
    /// function 0 asks for a snapshot here (a0 = a tag for the report). It always
    /// succeeds, snapshot or not, so the guest runs the same either way.
    pub const WIO: u64 = 0x0A57_494F;
}

/// Function of the WIO extension: "snapshot here".
pub const WIO_SNAPSHOT_HERE: u64 = 0;

/// SBI error codes.
pub mod err {
    /// Success.
    pub const SUCCESS: i64 = 0;
    /// Not supported.
    pub const NOT_SUPPORTED: i64 = -2;
    /// Invalid parameter.
    pub const INVALID_PARAM: i64 = -3;
    /// Already available.
    pub const ALREADY_AVAILABLE: i64 = -6;
}

/// SBI implementation ID wio reports ("wio" in ASCII; not a registered ID).
pub const IMPL_ID: u64 = 0x77_696f;

/// What a call asks of the machine beyond its return value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SbiEffect {
    /// Nothing more.
    None,
    /// Bytes for the console.
    Console(Vec<u8>),
    /// Power off: `failure` when the reason was "system failure".
    Shutdown {
        /// Reset reason was system failure.
        failure: bool,
    },
    /// Reboot requested.
    Reboot,
    /// Retentive suspend: idle like WFI.
    Suspend,
    /// The guest asks for a snapshot at this point (WIO extension), with its tag.
    SnapshotHere(u64),
    /// The guest set its timer to this `time` value (already set, with no extra latency;
    /// the machine may add its seeded latency).
    SetTimer(u64),
}

/// One served call, for the trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SbiCall {
    /// Extension ID.
    pub eid: u64,
    /// Function ID.
    pub fid: u64,
    /// Returned error.
    pub error: i64,
}

fn supported(ext: u64) -> bool {
    matches!(
        ext,
        eid::BASE
            | eid::TIME
            | eid::IPI
            | eid::RFENCE
            | eid::HSM
            | eid::SRST
            | eid::DBCN
            | eid::WIO
            | eid::LEGACY_SET_TIMER
            | eid::LEGACY_PUTCHAR
            | eid::LEGACY_GETCHAR
            | eid::LEGACY_SHUTDOWN
    )
}

/// Serves the SBI call in the hart's a0-a7 and writes a0/a1 back.
pub fn handle(hart: &mut Hart) -> (SbiCall, SbiEffect) {
    let ext = hart.x[17];
    let fid = hart.x[16];
    let a = [hart.x[10], hart.x[11], hart.x[12]];
    if let Some(effect) = legacy(hart, ext, a) {
        let call = SbiCall {
            eid: ext,
            fid,
            error: 0,
        };
        return (call, effect);
    }
    let answer = match ext {
        eid::BASE => base(fid, a),
        eid::WIO if fid == WIO_SNAPSHOT_HERE => Answer::effect(SbiEffect::SnapshotHere(a[0])),
        eid::TIME if fid == 0 => {
            hart.set_timecmp(a[0]);
            Answer::effect(SbiEffect::SetTimer(a[0]))
        }
        eid::IPI if fid == 0 => {
            // hart_mask a0 relative to hart_mask_base a1 (all ones = every hart).
            let hits_hart0 = a[1] == u64::MAX || (a[1] == 0 && a[0] & 1 != 0);
            if hits_hart0 {
                hart.set_ssip(true);
            }
            Answer::value(0)
        }
        eid::RFENCE => match fid {
            0..=2 => {
                hart.flush_tlb();
                Answer::value(0)
            }
            _ => Answer::error(err::NOT_SUPPORTED),
        },
        eid::HSM => hsm(fid, a),
        eid::SRST if fid == 0 => srst(a),
        eid::DBCN => dbcn(hart, fid, a),
        _ => Answer::error(err::NOT_SUPPORTED),
    };
    hart.x[10] = answer.error as u64;
    hart.x[11] = answer.value;
    let call = SbiCall {
        eid: ext,
        fid,
        error: answer.error,
    };
    (call, answer.effect)
}

/// What an SBI call answers (a0: the error, a1: the value) and asks of the machine.
struct Answer {
    error: i64,
    value: u64,
    effect: SbiEffect,
}

impl Answer {
    /// Success with `value`.
    fn value(value: u64) -> Answer {
        Answer {
            error: err::SUCCESS,
            value,
            effect: SbiEffect::None,
        }
    }

    /// Success that asks the machine for `effect`.
    fn effect(effect: SbiEffect) -> Answer {
        Answer {
            error: err::SUCCESS,
            value: 0,
            effect,
        }
    }

    /// The SBI error `error`.
    fn error(error: i64) -> Answer {
        Answer {
            error,
            value: 0,
            effect: SbiEffect::None,
        }
    }
}

/// The legacy (v0.1) calls wio serves, which return only a0 (set here, or left as the
/// shutdown leaves it); None for any other extension.
fn legacy(hart: &mut Hart, ext: u64, a: [u64; 3]) -> Option<SbiEffect> {
    match ext {
        eid::LEGACY_SET_TIMER => {
            hart.set_timecmp(a[0]);
            hart.x[10] = 0;
            Some(SbiEffect::SetTimer(a[0]))
        }
        eid::LEGACY_SHUTDOWN => Some(SbiEffect::Shutdown { failure: false }),
        eid::LEGACY_PUTCHAR => {
            hart.x[10] = 0;
            Some(SbiEffect::Console(vec![a[0] as u8]))
        }
        eid::LEGACY_GETCHAR => {
            hart.x[10] = u64::MAX;
            Some(SbiEffect::None)
        }
        _ => None,
    }
}

/// The base extension: versions, IDs and which extensions are there.
fn base(fid: u64, a: [u64; 3]) -> Answer {
    match fid {
        0 => Answer::value(2 << 24), // SBI 2.0
        1 => Answer::value(IMPL_ID),
        2 => Answer::value(1),
        3 => Answer::value(u64::from(supported(a[0]))),
        4..=6 => Answer::value(0),
        _ => Answer::error(err::NOT_SUPPORTED),
    }
}

/// Hart state management for the one hart: it is started; it may suspend (retentive).
fn hsm(fid: u64, a: [u64; 3]) -> Answer {
    match fid {
        0 if a[0] == 0 => Answer::error(err::ALREADY_AVAILABLE),
        0 => Answer::error(err::INVALID_PARAM),
        2 if a[0] == 0 => Answer::value(0), // STARTED
        2 => Answer::error(err::INVALID_PARAM),
        3 if a[0] as u32 == 0 => Answer::effect(SbiEffect::Suspend),
        _ => Answer::error(err::NOT_SUPPORTED),
    }
}

/// System reset: a shutdown (a failure when the reason says so) or a reboot.
fn srst(a: [u64; 3]) -> Answer {
    match (a[0] as u32, a[1] as u32) {
        (0, reason) => Answer::effect(SbiEffect::Shutdown {
            failure: reason == 1,
        }),
        (1 | 2, _) => Answer::effect(SbiEffect::Reboot),
        _ => Answer::error(err::INVALID_PARAM),
    }
}

/// The debug console: writes from physical memory or one byte; reads find no input, ever
/// (host keystrokes would break determinism).
fn dbcn(hart: &Hart, fid: u64, a: [u64; 3]) -> Answer {
    match fid {
        0 => {
            // console_write(num_bytes, base_lo, base_hi): physical memory.
            let len = a[0].min(4096);
            match hart.ram.slice(a[1], len) {
                Some(bytes) => Answer {
                    error: err::SUCCESS,
                    value: len,
                    effect: SbiEffect::Console(bytes.to_vec()),
                },
                None => Answer::error(err::INVALID_PARAM),
            }
        }
        1 => Answer::value(0),
        2 => Answer::effect(SbiEffect::Console(vec![a[0] as u8])),
        _ => Answer::error(err::NOT_SUPPORTED),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wio_riscv::Ram;

    fn hart() -> Hart {
        Hart::new(Ram::new(0x8000_0000, 1 << 20), 0x8000_0000, 100)
    }

    fn call(h: &mut Hart, ext: u64, fid: u64, args: &[u64]) -> SbiEffect {
        h.x[17] = ext;
        h.x[16] = fid;
        for (i, a) in args.iter().enumerate() {
            h.x[10 + i] = *a;
        }
        handle(h).1
    }

    #[test]
    fn base_reports_version_and_probes() {
        let mut h = hart();
        call(&mut h, eid::BASE, 0, &[]);
        assert_eq!((h.x[10], h.x[11]), (0, 2 << 24));
        call(&mut h, eid::BASE, 3, &[eid::DBCN]);
        assert_eq!(h.x[11], 1);
        call(&mut h, eid::BASE, 3, &[0x1234]);
        assert_eq!(h.x[11], 0);
        call(&mut h, 0x0abc_def0, 0, &[]);
        assert_eq!(h.x[10] as i64, err::NOT_SUPPORTED);
    }

    #[test]
    fn timer_and_reset() {
        let mut h = hart();
        call(&mut h, eid::TIME, 0, &[12345]);
        assert_eq!(h.timecmp, 12345);
        assert_eq!(
            call(&mut h, eid::SRST, 0, &[0, 1]),
            SbiEffect::Shutdown { failure: true }
        );
        assert_eq!(
            call(&mut h, eid::SRST, 0, &[0, 0]),
            SbiEffect::Shutdown { failure: false }
        );
        assert_eq!(call(&mut h, eid::SRST, 0, &[1, 0]), SbiEffect::Reboot);
    }

    #[test]
    fn debug_console_reads_guest_memory() {
        let mut h = hart();
        h.ram.load(0x8000_1000, b"hello");
        assert_eq!(
            call(&mut h, eid::DBCN, 0, &[5, 0x8000_1000, 0]),
            SbiEffect::Console(b"hello".to_vec())
        );
        assert_eq!(h.x[11], 5);
        call(&mut h, eid::DBCN, 0, &[5, 0x10, 0]);
        assert_eq!(h.x[10] as i64, err::INVALID_PARAM);
    }
}
