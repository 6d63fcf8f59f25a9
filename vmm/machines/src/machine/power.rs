//! Whether a machine's CPU runs, as node faults leave it, on either architecture: a pause
//! stops it while virtual time and the devices go on; a crash cuts the power until the
//! fault ends, then the machine boots again from its disk. The architectures carry out
//! what each change means for their CPU and devices; the changes themselves are here, once.

use crate::error::{MachineError, RestartWhy, Result, WioError};
use crate::faults::inject::Effect;
use crate::trace::{hex, Trace};
use serde::{Deserialize, Serialize};
use serde_json::json;
use sha2::{Digest, Sha256};
use std::path::PathBuf;
use wio_virtio_devices::Unflushed;

/// Whether the CPU runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Power {
    /// Running.
    #[default]
    On,
    /// Stopped by this many pause faults in force (time and devices go on).
    Paused(u32),
    /// Off after a power cut, until the crash fault ends.
    Off,
    /// The power is back: the machine boots before the CPU runs again.
    Booting,
}

impl Power {
    /// The state after a fault's edge `effect`, and the power cut to carry out now (what
    /// becomes of the disk's unflushed writes), if the power goes off at this edge. Edges
    /// that meet a machine already off change nothing (a pause, or a second crash, while it
    /// is off); effects other than node faults' leave the state as it is.
    pub fn after(self, effect: &Effect) -> (Power, Option<Unflushed>) {
        let next = match (effect, self) {
            (Effect::Pause, Power::On) => Power::Paused(1),
            (Effect::Pause, Power::Paused(n)) => Power::Paused(n.saturating_add(1)),
            (Effect::Resume, Power::Paused(n)) if n > 1 => Power::Paused(n - 1),
            (Effect::Resume, Power::Paused(_)) => Power::On,
            (Effect::PowerOff(unflushed), Power::On | Power::Paused(_)) => {
                return (Power::Off, Some(*unflushed))
            }
            (Effect::PowerOn, Power::Off) => Power::Booting,
            (_, p) => p,
        };
        (next, None)
    }
}

/// Writes a power cut's `power-off` trace line at `now_ns`: the requests in flight it
/// dropped, the chunks of unflushed writes the disk held (None without a disk) and what
/// became of them.
pub fn trace_power_off(
    trace: &mut Trace,
    now_ns: u64,
    dropped: usize,
    cached: Option<usize>,
    unflushed: Unflushed,
) {
    trace.event(
        now_ns,
        "power-off",
        json!({ "requests_dropped": dropped, "unflushed_chunks": cached, "unflushed": unflushed }),
    );
}

/// The stream a machine's boot number `boot` (1: the first) draws its boot entropy from:
/// `name` for the first boot, `name/boot-N` after a crash's restart, so a restart never
/// repeats the first boot's entropy and adding restarts shifts no other stream.
pub fn boot_stream(name: &str, boot: u32) -> String {
    if boot <= 1 {
        name.to_string()
    } else {
        wio_scheduler::stream_names::sub(name, &format!("boot-{boot}"))
    }
}

/// A boot file (`what`: "kernel", "initrd", "firmware") read again for the boot after a
/// crash, from where the run or its snapshot says it was, and checked against the SHA-256
/// the machine first booted with: (its path, its bytes).
pub fn restart_file(
    what: &'static str,
    path: Option<&PathBuf>,
    sha256: &str,
) -> Result<(PathBuf, Vec<u8>)> {
    let gone = |why| -> WioError {
        MachineError::RestartNeeds {
            what,
            path: path.cloned(),
            why,
        }
        .into()
    };
    let Some(p) = path else {
        return Err(gone(RestartWhy::NoPath));
    };
    let bytes = std::fs::read(p).map_err(|e| gone(RestartWhy::Unreadable(e)))?;
    if hex(&Sha256::digest(&bytes)) != sha256 {
        return Err(gone(RestartWhy::Changed));
    }
    Ok((p.clone(), bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pauses_nest_a_crash_cuts_once_and_the_power_comes_back_as_a_boot() {
        let (p, cut) = Power::On.after(&Effect::Pause);
        assert_eq!((p, cut), (Power::Paused(1), None));
        let (p, _) = p.after(&Effect::Pause);
        let (p, _) = p.after(&Effect::Resume);
        assert_eq!(p, Power::Paused(1), "one pause is still in force");
        let (p, cut) = p.after(&Effect::PowerOff(Unflushed::Lost));
        assert_eq!((p, cut), (Power::Off, Some(Unflushed::Lost)));
        // A second crash or a pause while off changes nothing; the end of the pause neither.
        assert_eq!(
            p.after(&Effect::PowerOff(Unflushed::Kept)),
            (Power::Off, None)
        );
        assert_eq!(p.after(&Effect::Pause), (Power::Off, None));
        assert_eq!(p.after(&Effect::Resume), (Power::Off, None));
        assert_eq!(p.after(&Effect::PowerOn), (Power::Booting, None));
        assert_eq!(Power::On.after(&Effect::RtcStep(5)), (Power::On, None));
        assert_eq!(Power::On.after(&Effect::Resume), (Power::On, None));
    }
}
