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

/// Which way a network fault acts, and which disk requests a disk error hits: the
/// devices' own types, so a plan says exactly what the devices do.
pub use wio_virtio_devices::{Direction, DiskOp, Unflushed};

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

/// What a fault does, with its parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "params", rename_all = "kebab-case")]
pub enum FaultKind {
    /// Net: frames going `direction` are dropped (a partition, both ways or one way).
    Partition {
        /// Which way.
        direction: Direction,
    },
    /// Net: each frame is lost with probability ppm / 10^6 (a drop burst).
    Loss {
        /// Parts per million.
        ppm: u64,
    },
    /// Net: each frame takes `extra_ns` longer (a delay spike).
    Delay {
        /// Extra one-way latency, ns.
        extra_ns: u64,
    },
    /// Net: each frame is duplicated with probability ppm / 10^6.
    Duplicate {
        /// Parts per million.
        ppm: u64,
    },
    /// Net: each frame gets an extra delay drawn from [0, max_ns], so frames overtake.
    Reorder {
        /// Largest extra delay, ns.
        max_ns: u64,
    },
    /// Disk: matching requests fail with an I/O error (EIO in the guest): every one while
    /// the fault is in force, or only the `nth` (1 = the first) matching request.
    Error {
        /// Which requests.
        op: DiskOp,
        /// Only this one of the matching requests fails (counted from the fault's start).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        nth: Option<u64>,
    },
    /// Disk: each sector read while the fault is in force rots with probability
    /// ppm / 10^6 (one bit flipped on the disk, seen by every later read).
    BitRot {
        /// Parts per million of sectors read.
        ppm: u64,
    },
    /// Disk: every request takes `extra_ns` longer.
    Latency {
        /// Extra latency, ns.
        extra_ns: u64,
    },
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
        #[serde(default)]
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
        #[serde(default = "one", skip_serializing_if = "is_one")]
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
}

fn one() -> u8 {
    1
}

fn is_one(w: &u8) -> bool {
    *w == 1
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
            FaultKind::Partition { .. } => Kind::Partition,
            FaultKind::Loss { .. } => Kind::Loss,
            FaultKind::Delay { .. } => Kind::Delay,
            FaultKind::Duplicate { .. } => Kind::Duplicate,
            FaultKind::Reorder { .. } => Kind::Reorder,
            FaultKind::Error { .. } => Kind::Error,
            FaultKind::Latency { .. } => Kind::Latency,
            FaultKind::BitRot { .. } => Kind::BitRot,
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

/// serde for [`FaultKind`] in snapshots: externally tagged and every field always written
/// (postcard can decode neither the plan's adjacently tagged JSON form nor skipped fields).
#[derive(Serialize, Deserialize)]
#[serde(remote = "FaultKind")]
enum FaultKindState {
    Partition {
        direction: Direction,
    },
    Loss {
        ppm: u64,
    },
    Delay {
        extra_ns: u64,
    },
    Duplicate {
        ppm: u64,
    },
    Reorder {
        max_ns: u64,
    },
    Error {
        op: DiskOp,
        nth: Option<u64>,
    },
    BitRot {
        ppm: u64,
    },
    Latency {
        extra_ns: u64,
    },
    RtcStep {
        delta_s: i64,
    },
    Crash {
        unflushed: Unflushed,
    },
    Pause,
    Upset {
        place: UpsetPlace,
        bit: u8,
        width: u8,
    },
    Stuck {
        ram: u64,
        bit: u8,
        value: u8,
    },
}

/// serde for [`Fault`] in snapshots (its kind not flattened).
#[derive(Serialize, Deserialize)]
#[serde(remote = "Fault")]
struct FaultState {
    at_ns: u64,
    duration_ns: u64,
    target: Target,
    #[serde(with = "FaultKindState")]
    kind: FaultKind,
}

/// A fault as a snapshot keeps it (plain data, postcard).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedFault(#[serde(with = "FaultState")] pub Fault);

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
    /// Whether it can take node faults (crash and restart, pause): riscv64 machines can.
    pub node: bool,
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
                FaultKind::Loss { ppm }
                | FaultKind::Duplicate { ppm }
                | FaultKind::BitRot { ppm }
                    if ppm > 1_000_000 =>
                {
                    return Err(bad(
                        i,
                        "params.ppm",
                        format!("{ppm} is above 1000000 (parts per million)"),
                    ));
                }
                FaultKind::Error { nth: Some(0), .. } => {
                    return Err(bad(
                        i,
                        "params.nth",
                        "0; the first matching request is 1".into(),
                    ));
                }
                FaultKind::Upset { place, bit, width } => {
                    let bits = place.bits();
                    let (what, ok) = match place {
                        UpsetPlace::Ram(_) => ("a RAM byte", true),
                        UpsetPlace::X(r) => ("x registers", (1..32).contains(&r)),
                        UpsetPlace::F(r) => ("f registers", r < 32),
                        UpsetPlace::Pc => ("pc", true),
                        UpsetPlace::Csr(c) => ("a CSR", c < 0x1000),
                    };
                    if !ok {
                        return Err(bad(
                            i,
                            "params",
                            format!("{what}: x1-x31, f0-f31, CSRs 0-0xfff (x0 never changes)"),
                        ));
                    }
                    if bit >= bits {
                        return Err(bad(
                            i,
                            "params.bit",
                            format!("{bit}; {what} has bits 0-{}", bits - 1),
                        ));
                    }
                    if width == 0 || u16::from(bit) + u16::from(width) > u16::from(bits) {
                        return Err(bad(
                            i,
                            "params.width",
                            format!("{width} bits from bit {bit} do not fit {what} ({bits} bits)"),
                        ));
                    }
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
            .find(|(_, f)| f.target == Target::Node && !has.node)
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

fn target_name(t: Target) -> &'static str {
    match t {
        Target::Net => "net",
        Target::Disk => "disk",
        Target::Clock => "clock",
        Target::Node => "node",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One vocabulary: a kind's name is the one serde writes for it, alone and as a
    /// fault's `kind` tag, and a fault's kind, target and instantness agree with its kind.
    #[test]
    fn kinds_name_themselves_as_plans_write_them() {
        let one_of_each = [
            FaultKind::Partition {
                direction: Direction::Both,
            },
            FaultKind::Loss { ppm: 1 },
            FaultKind::Delay { extra_ns: 1 },
            FaultKind::Duplicate { ppm: 1 },
            FaultKind::Reorder { max_ns: 1 },
            FaultKind::Error {
                op: DiskOp::Read,
                nth: None,
            },
            FaultKind::Latency { extra_ns: 1 },
            FaultKind::BitRot { ppm: 1 },
            FaultKind::RtcStep { delta_s: 1 },
            FaultKind::Crash {
                unflushed: Unflushed::Lost,
            },
            FaultKind::Pause,
            FaultKind::Upset {
                place: UpsetPlace::Pc,
                bit: 0,
                width: 1,
            },
            FaultKind::Stuck {
                ram: 0,
                bit: 0,
                value: 1,
            },
        ];
        let kinds: Vec<Kind> = one_of_each.iter().map(FaultKind::kind).collect();
        assert_eq!(kinds, Kind::ALL, "one fault of each kind, in order");
        for f in one_of_each {
            let k = f.kind();
            assert_eq!(serde_json::to_value(k).unwrap(), k.name());
            assert_eq!(serde_json::to_value(f).unwrap()["kind"], k.name());
            assert_eq!(serde_json::from_value::<Kind>(k.name().into()).unwrap(), k);
            assert_eq!((f.target(), f.is_instant()), (k.target(), k.is_instant()));
        }
    }

    /// A plan holding one fault of each kind, with every optional parameter given once.
    const EVERY_KIND: &str = r#"{"faults": [
  {"at_ns":1,"duration_ns":2,"target":"net","kind":"partition","params":{"direction":"to-guest"}},
  {"at_ns":3,"duration_ns":4,"target":"net","kind":"loss","params":{"ppm":5}},
  {"at_ns":6,"duration_ns":7,"target":"net","kind":"delay","params":{"extra_ns":8}},
  {"at_ns":9,"duration_ns":10,"target":"net","kind":"duplicate","params":{"ppm":11}},
  {"at_ns":12,"duration_ns":13,"target":"net","kind":"reorder","params":{"max_ns":14}},
  {"at_ns":15,"duration_ns":16,"target":"disk","kind":"error","params":{"op":"write"}},
  {"at_ns":17,"duration_ns":18,"target":"disk","kind":"error","params":{"op":"read","nth":19}},
  {"at_ns":20,"duration_ns":21,"target":"disk","kind":"bit-rot","params":{"ppm":22}},
  {"at_ns":23,"duration_ns":24,"target":"disk","kind":"latency","params":{"extra_ns":25}},
  {"at_ns":26,"duration_ns":0,"target":"clock","kind":"rtc-step","params":{"delta_s":-27}},
  {"at_ns":28,"duration_ns":29,"target":"node","kind":"crash","params":{"unflushed":"torn"}},
  {"at_ns":30,"duration_ns":31,"target":"node","kind":"pause"},
  {"at_ns":32,"duration_ns":0,"target":"node","kind":"upset","params":{"place":{"ram":33},"bit":4,"width":2}},
  {"at_ns":34,"duration_ns":0,"target":"node","kind":"upset","params":{"place":"pc","bit":5}},
  {"at_ns":35,"duration_ns":36,"target":"node","kind":"stuck","params":{"ram":37,"bit":6,"value":1}}
]}
"#;

    /// The two forms a fault is written in do not move: a plan's JSON (files users keep,
    /// reports) and a snapshot's postcard bytes (older snapshots restore). The bytes were
    /// written by the build before the plan's kinds took the devices' own types.
    #[test]
    fn plan_json_and_snapshot_bytes_stay_the_same() {
        let plan: FaultPlan = serde_json::from_str(EVERY_KIND).unwrap();
        plan.check().unwrap();
        assert_eq!(plan.to_json(), EVERY_KIND);
        let saved: Vec<SavedFault> = plan.faults.iter().copied().map(SavedFault).collect();
        let bytes = postcard::to_stdvec(&saved).unwrap();
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            hex,
            "0f010200000103040001050607000208090a00030b0c0d00040e0f100105010011120105000113141501061617180107191a000208351c1d0309011e1f030a2000030b002104022200030b0305012324030c250601"
        );
        let back: Vec<SavedFault> = postcard::from_bytes(&bytes).unwrap();
        assert_eq!(back, saved);
    }

    fn parse(text: &str) -> std::result::Result<FaultPlan, String> {
        let plan: FaultPlan = serde_json::from_str(text).map_err(|e| e.to_string())?;
        plan.check().map_err(|e| e.to_string())?;
        Ok(plan)
    }

    #[test]
    fn plans_round_trip_and_bad_ones_name_the_field() {
        let text = r#"{"faults": [
            {"at_ns": 3000000000, "target": "clock", "kind": "rtc-step", "params": {"delta_s": -60}},
            {"at_ns": 2000000000, "duration_ns": 5, "target": "net", "kind": "partition", "params": {"direction": "from-guest"}},
            {"at_ns": 1, "duration_ns": 7, "target": "disk", "kind": "error", "params": {"op": "any"}}
        ]}"#;
        let mut plan = parse(text).unwrap();
        plan.sort();
        assert_eq!(
            plan.faults[0].kind,
            FaultKind::Error {
                op: DiskOp::Any,
                nth: None
            }
        );
        assert_eq!(plan.faults[2].kind, FaultKind::RtcStep { delta_s: -60 });
        assert_eq!(parse(&plan.to_json()).unwrap(), plan);
        assert_eq!(
            parse(&FaultPlan::default().to_json()).unwrap(),
            FaultPlan::default()
        );

        let bad = [
            (
                r#"{"faults": [{"at_ns": 1, "target": "disk", "kind": "partition", "params": {"direction": "both"}}]}"#,
                "faults[0].target",
            ),
            (
                r#"{"faults": [{"at_ns": 1, "target": "net", "kind": "loss", "params": {"ppm": 2000000}}]}"#,
                "faults[0].params.ppm",
            ),
            (
                r#"{"faults": [{"at_ns": 1, "duration_ns": 3, "target": "clock", "kind": "rtc-step", "params": {"delta_s": 1}}]}"#,
                "faults[0].duration_ns",
            ),
            (
                r#"{"faults": [{"at_ns": 1, "target": "net", "kind": "meteor", "params": {}}]}"#,
                "meteor",
            ),
            (
                r#"{"faults": [{"target": "net", "kind": "loss", "params": {"ppm": 1}}]}"#,
                "at_ns",
            ),
            (
                r#"{"faults": [{"at_ns": 1, "target": "net", "kind": "partition", "params": {"direction": "sideways"}}]}"#,
                "sideways",
            ),
            (r#"{"fault": []}"#, "fault"),
        ];
        for (text, field) in bad {
            let e = parse(text).unwrap_err();
            assert!(e.contains(field), "{text}: {e}");
        }
    }

    #[test]
    fn disk_faults_need_a_disk() {
        let plan = parse(
            r#"{"faults": [{"at_ns": 1, "target": "disk", "kind": "latency", "params": {"extra_ns": 5}}]}"#,
        )
        .unwrap();
        let e = plan
            .check_targets(Targets {
                disk: false,
                node: true,
            })
            .unwrap_err();
        assert!(e.to_string().contains("no disk"), "{e}");
        plan.check_targets(Targets {
            disk: true,
            node: false,
        })
        .unwrap();
        let crash = parse(
            r#"{"faults": [{"at_ns": 1, "duration_ns": 9, "target": "node", "kind": "crash", "params": {}}]}"#,
        )
        .unwrap();
        let e = crash
            .check_targets(Targets {
                disk: true,
                node: false,
            })
            .unwrap_err();
        assert!(e.to_string().contains("--arch riscv64"), "{e}");
    }

    #[test]
    fn node_and_new_disk_kinds_parse_with_their_defaults() {
        let plan = parse(
            r#"{"faults": [
            {"at_ns": 5, "duration_ns": 9, "target": "node", "kind": "crash", "params": {}},
            {"at_ns": 6, "duration_ns": 9, "target": "node", "kind": "crash", "params": {"unflushed": "torn"}},
            {"at_ns": 7, "duration_ns": 9, "target": "node", "kind": "pause"},
            {"at_ns": 8, "duration_ns": 9, "target": "disk", "kind": "error", "params": {"op": "write", "nth": 3}},
            {"at_ns": 9, "duration_ns": 9, "target": "disk", "kind": "bit-rot", "params": {"ppm": 1000000}}
        ]}"#,
        )
        .unwrap();
        let kinds: Vec<FaultKind> = plan.faults.iter().map(|f| f.kind).collect();
        assert_eq!(
            kinds,
            vec![
                FaultKind::Crash {
                    unflushed: Unflushed::Lost
                },
                FaultKind::Crash {
                    unflushed: Unflushed::Torn
                },
                FaultKind::Pause,
                FaultKind::Error {
                    op: DiskOp::Write,
                    nth: Some(3)
                },
                FaultKind::BitRot { ppm: 1_000_000 },
            ]
        );
        assert_eq!(parse(&plan.to_json()).unwrap(), plan);
        for (text, field) in [
            (
                r#"{"faults": [{"at_ns": 1, "target": "disk", "kind": "error", "params": {"op": "read", "nth": 0}}]}"#,
                "faults[0].params.nth",
            ),
            (
                r#"{"faults": [{"at_ns": 1, "target": "disk", "kind": "bit-rot", "params": {"ppm": 1000001}}]}"#,
                "faults[0].params.ppm",
            ),
            (
                r#"{"faults": [{"at_ns": 1, "target": "node", "kind": "crash", "params": {"unflushed": "maybe"}}]}"#,
                "maybe",
            ),
            (
                r#"{"faults": [{"at_ns": 1, "target": "disk", "kind": "pause"}]}"#,
                "faults[0].target",
            ),
        ] {
            let e = parse(text).unwrap_err();
            assert!(e.contains(field), "{text}: {e}");
        }
    }
}
