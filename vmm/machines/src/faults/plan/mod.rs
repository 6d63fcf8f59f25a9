//! The fault plan: an explicit, serializable list of faults, each with a start time, a
//! duration, a target and a kind with its parameters. A run either draws its plan from
//! the seed through a profile (`super::profile`) or replays one exactly from a file;
//! either way the plan is what the run injects, what the summary lists, and what
//! shrinking will remove faults from one by one.
//!
//! JSON form (`--fault-plan FILE`, `--fault-plan-out FILE`):
//!
//! ```text
//! {"faults": [
//!   {"at_ns": 2000000000, "duration_ns": 1500000000, "target": "net",
//!    "kind": "partition", "params": {"direction": "both"}},
//!   {"at_ns": 2500000000, "duration_ns": 1000000000, "target": "disk",
//!    "kind": "error", "params": {"op": "write"}},
//!   {"at_ns": 3000000000, "target": "clock", "kind": "rtc-step", "params": {"delta_s": 3600}}
//! ]}
//! ```

use crate::error::{FaultsError, PlanError, Result, WioError};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Most faults one plan may hold.
pub const MAX_FAULTS: usize = 10_000;

/// The devices' own fault types and their parameters: a plan says exactly what the
/// devices do.
pub use wio_virtio_devices::{Direction, DiskFault, DiskOp, NetFault, Unflushed};

mod wire;

/// The part of the machine a fault hits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Target {
    /// The network device and its link.
    Net,
    /// The disk (virtio-blk).
    Disk,
    /// The wall clock the guest reads (RTC).
    Clock,
    /// The whole machine (its power, its CPU).
    Node,
}

/// The kinds of fault without their parameters: the one vocabulary of names that a plan's
/// `kind`, a profile rule's `kind` and a rule's stream (`fault-<kind>`) share, and what
/// each kind hits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// Net: see [`FaultKind::Partition`].
    Partition,
    /// Net: see [`FaultKind::Loss`].
    Loss,
    /// Net: see [`FaultKind::Delay`].
    Delay,
    /// Net: see [`FaultKind::Duplicate`].
    Duplicate,
    /// Net: see [`FaultKind::Reorder`].
    Reorder,
    /// Disk: see [`FaultKind::Error`].
    Error,
    /// Disk: see [`FaultKind::Latency`].
    Latency,
    /// Disk: see [`FaultKind::BitRot`].
    BitRot,
    /// Clock: see [`FaultKind::RtcStep`].
    RtcStep,
    /// Node: see [`FaultKind::Crash`].
    Crash,
    /// Node: see [`FaultKind::Pause`].
    Pause,
    /// Node: see [`FaultKind::Upset`].
    Upset,
    /// Node: see [`FaultKind::Stuck`].
    Stuck,
}

impl Kind {
    /// Every kind, in the order plans and profiles list them.
    pub const ALL: [Kind; 13] = [
        Kind::Partition,
        Kind::Loss,
        Kind::Delay,
        Kind::Duplicate,
        Kind::Reorder,
        Kind::Error,
        Kind::Latency,
        Kind::BitRot,
        Kind::RtcStep,
        Kind::Crash,
        Kind::Pause,
        Kind::Upset,
        Kind::Stuck,
    ];

    /// Its name in plans, profiles and stream names (as serde writes it).
    pub fn name(self) -> &'static str {
        match self {
            Kind::Partition => "partition",
            Kind::Loss => "loss",
            Kind::Delay => "delay",
            Kind::Duplicate => "duplicate",
            Kind::Reorder => "reorder",
            Kind::Error => "error",
            Kind::Latency => "latency",
            Kind::BitRot => "bit-rot",
            Kind::RtcStep => "rtc-step",
            Kind::Crash => "crash",
            Kind::Pause => "pause",
            Kind::Upset => "upset",
            Kind::Stuck => "stuck",
        }
    }

    /// The part of the machine faults of this kind hit.
    pub fn target(self) -> Target {
        match self {
            Kind::Partition | Kind::Loss | Kind::Delay | Kind::Duplicate | Kind::Reorder => {
                Target::Net
            }
            Kind::Error | Kind::Latency | Kind::BitRot => Target::Disk,
            Kind::RtcStep => Target::Clock,
            Kind::Crash | Kind::Pause | Kind::Upset | Kind::Stuck => Target::Node,
        }
    }

    /// Whether faults of this kind act at one instant (their duration is meaningless).
    pub fn is_instant(self) -> bool {
        matches!(self, Kind::RtcStep | Kind::Upset)
    }
}

/// What a fault does, with its parameters. Network and disk faults are the devices' own
/// types ([`NetFault`], [`DiskFault`]): the injector hands them to the device as they are.
/// Plans and snapshots write every kind flat, under its [`Kind`] name (see `wire`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "wire::PlanKind", from = "wire::PlanKind")]
pub enum FaultKind {
    /// Net: a fault of the network device and its link, in force for the fault's duration.
    Net(NetFault),
    /// Disk: a fault of the disk (virtio-blk), in force for the fault's duration.
    Disk(DiskFault),
    /// Clock: the RTC jumps by `delta_s` seconds (forward or back) at the fault's time.
    RtcStep {
        /// Seconds; negative steps back.
        delta_s: i64,
    },
    /// Node: the power is cut at the fault's start (memory, CPU and device state are lost;
    /// the disk keeps its flushed writes, and its unflushed ones as `unflushed` says); the
    /// machine stays off for the fault's duration while time and the network move on, then
    /// boots again, the same kernel from the same (now changed) disk.
    Crash {
        /// What happens to writes the disk had not flushed (default: lost).
        unflushed: Unflushed,
    },
    /// Node: the CPU stops for the fault's duration while time, devices and the network
    /// move on (a VM pause, a long GC or swap storm); its interrupts wait for it.
    Pause,
    /// Node: a single-event upset (radiation): one bit of guest RAM or of a register flips
    /// at the fault's time (instant), seen by the next instruction (riscv64); with `width`
    /// above 1, a multi-bit upset of that many adjacent bits from `bit` up.
    Upset {
        /// Where the bits are: `{"ram": ADDR}`, `{"x": N}`, `{"f": N}`, `"pc"` or
        /// `{"csr": NUMBER}`.
        place: UpsetPlace,
        /// The lowest bit flipped: 0-7 of a RAM byte, 0-63 of a register.
        bit: u8,
        /// How many adjacent bits flip (default 1), within the byte or register.
        width: u8,
    },
    /// Node: a stuck-at bit of guest RAM (a cell damaged by total dose or a latch-up): for
    /// the fault's duration the bit reads `value` whatever is written (riscv64).
    Stuck {
        /// The byte's guest-physical address.
        ram: u64,
        /// Which bit of it (0-7).
        bit: u8,
        /// The value it is stuck at (0 or 1).
        value: u8,
    },
}

/// Where an upset flips its bit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum UpsetPlace {
    /// The byte of guest RAM at this guest-physical address.
    Ram(u64),
    /// Integer register x1-x31 (x0 is hard-wired to zero).
    X(u8),
    /// Floating-point register f0-f31.
    F(u8),
    /// The program counter.
    Pc,
    /// A CSR by its number (those the hart has; others are traced as missed).
    Csr(u16),
    /// Vector register v0-v31 (riscv64 with the vector extension), its 64-bit lane `lane`
    /// modulo the lanes VLEN gives (a hart without vectors traces the upset as missed).
    V(u8, u8),
}

impl UpsetPlace {
    /// How many bits the place holds.
    pub fn bits(self) -> u8 {
        match self {
            UpsetPlace::Ram(_) => 8,
            _ => 64,
        }
    }
}

impl FaultKind {
    /// Its kind, without parameters.
    pub fn kind(&self) -> Kind {
        match self {
            FaultKind::Net(NetFault::Partition(_)) => Kind::Partition,
            FaultKind::Net(NetFault::Loss { .. }) => Kind::Loss,
            FaultKind::Net(NetFault::Delay { .. }) => Kind::Delay,
            FaultKind::Net(NetFault::Duplicate { .. }) => Kind::Duplicate,
            FaultKind::Net(NetFault::Reorder { .. }) => Kind::Reorder,
            FaultKind::Disk(DiskFault::Error(_) | DiskFault::ErrorNth { .. }) => Kind::Error,
            FaultKind::Disk(DiskFault::Latency { .. }) => Kind::Latency,
            FaultKind::Disk(DiskFault::BitRot { .. }) => Kind::BitRot,
            FaultKind::RtcStep { .. } => Kind::RtcStep,
            FaultKind::Crash { .. } => Kind::Crash,
            FaultKind::Pause => Kind::Pause,
            FaultKind::Upset { .. } => Kind::Upset,
            FaultKind::Stuck { .. } => Kind::Stuck,
        }
    }

    /// The part of the machine this kind hits.
    pub fn target(&self) -> Target {
        self.kind().target()
    }

    /// Its name in plans and profiles.
    pub fn name(&self) -> &'static str {
        self.kind().name()
    }

    /// Whether the fault acts at one instant (its duration is meaningless).
    pub fn is_instant(&self) -> bool {
        self.kind().is_instant()
    }

    /// Its parameters as a plan writes them (`{"bit":57,"place":{"v":[8,49]}}`), or None
    /// for a kind that takes none.
    pub fn params(&self) -> Option<serde_json::Value> {
        let mut plan = serde_json::to_value(self).ok()?;
        plan.get_mut("params").map(serde_json::Value::take)
    }
}

/// One fault of a plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fault {
    /// Virtual ns when it starts.
    pub at_ns: u64,
    /// How long it lasts, ns (0 for instant kinds).
    #[serde(default)]
    pub duration_ns: u64,
    /// The part of the machine it hits (must match the kind).
    pub target: Target,
    /// What it does.
    #[serde(flatten)]
    pub kind: FaultKind,
}

impl Fault {
    /// When it ends (its start for instant kinds).
    pub fn end_ns(&self) -> u64 {
        self.at_ns.saturating_add(self.duration_ns)
    }
}

/// A fault as a snapshot keeps it (plain data, postcard; see `wire`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedFault(#[serde(with = "wire::saved")] pub Fault);

/// A run's fault plan, in start-time order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultPlan {
    /// The faults.
    pub faults: Vec<Fault>,
}

/// What a machine has, for checking a plan against it.
#[derive(Debug, Clone, Copy)]
pub struct Targets {
    /// Whether it has a disk.
    pub disk: bool,
    /// Whether it can take crash (power cut and restart) and pause faults: riscv64 machines
    /// and x86-64 machines can.
    pub node: bool,
    /// Whether it can take faults in its RAM (upsets, stuck bits): riscv64 machines can.
    pub ram: bool,
}

impl Targets {
    /// Whether a machine with these targets takes faults of `kind`.
    pub fn take(&self, kind: Kind) -> bool {
        match kind {
            Kind::Upset | Kind::Stuck => self.ram,
            k => match k.target() {
                Target::Disk => self.disk,
                Target::Node => self.node,
                Target::Net | Target::Clock => true,
            },
        }
    }
}

impl FaultPlan {
    /// Checks the plan's own consistency: targets match kinds, parameters are in range,
    /// at most [`MAX_FAULTS`]. Errors name the fault (its index) and the field.
    pub fn check(&self) -> std::result::Result<(), PlanError> {
        if self.faults.len() > MAX_FAULTS {
            return Err(PlanError::TooMany {
                count: self.faults.len(),
                max: MAX_FAULTS,
            });
        }
        let bad = |index, field, reason| PlanError::Field {
            index,
            field,
            reason,
        };
        for (i, f) in self.faults.iter().enumerate() {
            let want = f.kind.target();
            if f.target != want {
                return Err(bad(
                    i,
                    "target",
                    format!(
                        "a {:?} fault hits {:?}, not {:?}",
                        f.kind.name(),
                        target_name(want),
                        target_name(f.target)
                    ),
                ));
            }
            match f.kind {
                FaultKind::Net(NetFault::Loss { ppm } | NetFault::Duplicate { ppm })
                | FaultKind::Disk(DiskFault::BitRot { ppm })
                    if ppm > 1_000_000 =>
                {
                    return Err(bad(
                        i,
                        "params.ppm",
                        format!("{ppm} is above 1000000 (parts per million)"),
                    ));
                }
                FaultKind::Disk(DiskFault::ErrorNth { nth: 0, .. }) => {
                    return Err(bad(
                        i,
                        "params.nth",
                        "0; the first matching request is 1".into(),
                    ));
                }
                FaultKind::Upset { place, bit, width } => {
                    check_upset(place, bit, width)
                        .map_err(|(field, reason)| bad(i, field, reason))?;
                }
                FaultKind::Stuck { bit, value, .. } if bit > 7 || value > 1 => {
                    return Err(bad(i, "params", format!("bit {bit}, value {value}; a stuck bit is bit 0-7 of a RAM byte, stuck at 0 or 1"
                    )));
                }
                FaultKind::Stuck { .. } if f.duration_ns == 0 => {
                    return Err(bad(i, "duration_ns", "0; a stuck bit lasts its duration (give a long one for a permanent defect)".into()));
                }
                FaultKind::RtcStep { delta_s } if delta_s.unsigned_abs() > 100 * 365 * 86_400 => {
                    return Err(bad(
                        i,
                        "params.delta_s",
                        format!("{delta_s} is more than a century"),
                    ));
                }
                _ => {}
            }
            if f.kind.is_instant() && f.duration_ns != 0 {
                return Err(bad(
                    i,
                    "duration_ns",
                    format!(
                        "a {:?} fault is instant; leave duration_ns out",
                        f.kind.name()
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Refuses faults aimed at a part the machine does not have.
    pub fn check_targets(&self, has: Targets) -> Result<()> {
        if let Some((i, f)) = self
            .faults
            .iter()
            .enumerate()
            .find(|(_, f)| f.target == Target::Disk && !has.disk)
        {
            return Err(FaultsError::NoDisk {
                index: i,
                kind: f.kind.name(),
            }
            .into());
        }
        if let Some((i, f)) = self
            .faults
            .iter()
            .enumerate()
            .find(|(_, f)| f.target == Target::Node && !has.take(f.kind.kind()))
        {
            return Err(FaultsError::NodeFault {
                index: i,
                kind: f.kind.name(),
            }
            .into());
        }
        Ok(())
    }

    /// Sorts the faults by start time (stable: faults starting together keep their order).
    pub fn sort(&mut self) {
        self.faults.sort_by_key(|f| f.at_ns);
    }

    /// Reads and checks a plan file (JSON).
    pub fn read(path: &Path) -> Result<FaultPlan> {
        let text = std::fs::read_to_string(path).map_err(|source| WioError::ArtifactIo {
            what: "fault plan",
            path: path.to_path_buf(),
            source,
        })?;
        let bad = |source| WioError::FaultPlan {
            path: path.to_path_buf(),
            source,
        };
        let mut plan: FaultPlan =
            serde_json::from_str(&text).map_err(|e| bad(PlanError::Json(e)))?;
        plan.check().map_err(bad)?;
        plan.sort();
        Ok(plan)
    }

    /// The plan as JSON (one fault a line, for people and for diffs).
    pub fn to_json(&self) -> String {
        let mut out = String::from("{\"faults\": [");
        for (i, f) in self.faults.iter().enumerate() {
            out.push_str(if i == 0 { "\n  " } else { ",\n  " });
            // A fault is plain data with string keys: encoding it as JSON cannot fail.
            out.push_str(&serde_json::to_string(f).expect("a fault encodes as JSON"));
        }
        out.push_str(if self.faults.is_empty() {
            "]}\n"
        } else {
            "\n]}\n"
        });
        out
    }

    /// Writes the plan to `path`.
    pub fn write(&self, path: &Path) -> Result<()> {
        std::fs::write(path, self.to_json()).map_err(|source| WioError::Output {
            what: "fault plan",
            path: path.to_path_buf(),
            source,
        })
    }
}

/// Checks an upset's place, lowest bit and width: the field at fault and why.
fn check_upset(
    place: UpsetPlace,
    bit: u8,
    width: u8,
) -> std::result::Result<(), (&'static str, String)> {
    let bits = place.bits();
    let (what, ok) = match place {
        UpsetPlace::Ram(_) => ("a RAM byte", true),
        UpsetPlace::X(r) => ("x registers", (1..32).contains(&r)),
        UpsetPlace::F(r) => ("f registers", r < 32),
        UpsetPlace::Pc => ("pc", true),
        UpsetPlace::Csr(c) => ("a CSR", c < 0x1000),
        UpsetPlace::V(r, lane) => ("v registers", r < 32 && lane < 64),
    };
    if !ok {
        return Err((
            "params",
            format!("{what}: x1-x31, f0-f31, v0-v31 (lanes 0-63), CSRs 0-0xfff (x0 never changes)"),
        ));
    }
    if bit >= bits {
        return Err((
            "params.bit",
            format!("{bit}; {what} has bits 0-{}", bits - 1),
        ));
    }
    if width == 0 || u16::from(bit) + u16::from(width) > u16::from(bits) {
        return Err((
            "params.width",
            format!("{width} bits from bit {bit} do not fit {what} ({bits} bits)"),
        ));
    }
    Ok(())
}

fn target_name(t: Target) -> &'static str {
    match t {
        Target::Net => "net",
        Target::Disk => "disk",
        Target::Clock => "clock",
        Target::Node => "node",
    }
}

#[cfg(test)]
mod tests;
