//! Fault profiles: how a run draws its fault plan from the seed (`--faults
//! none|light|heavy|FILE.toml`). A profile is a time window and a list of rules, one per
//! fault kind; each rule draws its faults (how many, when, how long, with which
//! parameters) from its own stream (`fault-<kind>`, `fault-<kind>-<n>` for a kind's
//! later rules), so removing a rule or a fault never shifts another's draws and the
//! workload's randomness stays apart.
//!
//! TOML form:
//!
//! ```text
//! after = "boot"           # or "setup-complete": the window counts from the moment a
//!                          # program declares its setup complete (no fault before)
//! start_ms = 1000          # faults start at or after 1 s of virtual time
//! end_ms = 30000           # ... and before 30 s
//! [[rule]]
//! kind = "partition"       # partition loss delay duplicate reorder error latency bit-rot
//!                          # rtc-step crash pause upset
//! count = [0, 2]           # how many: drawn in [0, 2]
//! duration_ms = [200, 2000]
//! choices = ["both", "to-guest", "from-guest"]   # partition: directions; error: read write
//!                          # any; crash: what unflushed writes do, lost torn kept; upset:
//!                          # where, ram x f pc v
//! [[rule]]
//! kind = "loss"
//! count = [1, 1]
//! duration_ms = [100, 1000]
//! value = [100000, 500000] # loss, duplicate, bit-rot: ppm; delay, latency, reorder: ns;
//!                          # rtc-step: s; error: the n-th request fails (0: all of them);
//!                          # upset: a bit address (physical address x 8 + bit) for ram,
//!                          # any range for x, f, pc, v (register, lane and bit come from
//!                          # it; default: all of them)
//! # crash: duration_ms is the time the machine stays off before it boots again
//! ```

use super::flux;
use super::plan::{
    Direction, DiskFault, DiskOp, Fault, FaultKind, FaultPlan, Kind, NetFault, Targets, Unflushed,
    UpsetPlace,
};
use crate::error::{FaultsError, ProfileError, Result, WioError};
use serde::{Deserialize, Serialize};
use std::path::Path;
use wio_scheduler::{stream_names, RunSeed};

/// Most faults one rule may draw.
pub const MAX_COUNT: u64 = 1_000;

/// Where a profile's window is counted from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum After {
    /// The boot (virtual time 0).
    #[default]
    Boot,
    /// The moment a program in the guest declares its setup complete (the promise
    /// channel): no fault before it, the window counted from it.
    SetupComplete,
}

/// A profile: a window of virtual time and the rules that draw faults in it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// What the window is counted from (`after = "setup-complete"`: faults only once a
    /// program declared its setup complete).
    #[serde(default)]
    pub after: After,
    /// Faults start at or after this virtual time, ms.
    #[serde(default = "default_start_ms")]
    pub start_ms: u64,
    /// ... and before this one, ms.
    #[serde(default = "default_end_ms")]
    pub end_ms: u64,
    /// One rule per kind of fault (a kind may have several).
    #[serde(default, rename = "rule")]
    pub rules: Vec<Rule>,
}

fn default_start_ms() -> u64 {
    1_000
}

fn default_end_ms() -> u64 {
    60_000
}

/// How one kind of fault is drawn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// The fault kind (`partition`, `loss`, `delay`, `duplicate`, `reorder`, `error`,
    /// `latency`, `bit-rot`, `rtc-step`, `crash`, `pause`, `upset`, `stuck`).
    pub kind: Kind,
    /// How many faults, drawn uniformly in [min, max] (default [0, 1]; not with
    /// `rate_per_bit_s`).
    #[serde(default)]
    pub count: Option<[u64; 2]>,
    /// Each fault's duration in ms, drawn in [min, max] (ignored for `rtc-step`).
    #[serde(default = "default_duration")]
    pub duration_ms: [u64; 2],
    /// The kind's number, drawn in [min, max]: ppm (loss, duplicate, bit-rot), ns (delay,
    /// latency, reorder), seconds (rtc-step, may be negative) or which request fails
    /// (error: 0 = every matching one); for an upset, its place: RAM bit addresses, or
    /// any range for registers (default: every bit of the registers it chooses; RAM has
    /// no default). Default [0, 0] for the other kinds; see [`Rule::value`].
    #[serde(default)]
    pub value: Option<[i64; 2]>,
    /// The kind's choices, one drawn per fault: directions (partition), ops (error), what
    /// happens to unflushed writes (crash), places (upset) or stuck values (stuck); which
    /// a kind takes is [`Choice::of`].
    #[serde(default)]
    pub choices: Vec<Choice>,
    /// `upset` only: upsets arrive at this rate per bit per virtual second (decimal text,
    /// "1.16e-12"), over the bits the rule aims at (its `value` range of RAM bits, or
    /// every bit of the registers it chooses), instead of a drawn count: see `flux`.
    #[serde(default)]
    pub rate_per_bit_s: Option<String>,
    /// With `rate_per_bit_s`: an acceleration factor, as a beam test accelerates the
    /// fluence of the orbit (default 1).
    #[serde(default)]
    pub flux: Option<u64>,
}

/// A rule's count when it gives none.
const DEFAULT_COUNT: [u64; 2] = [0, 1];

impl Rule {
    /// How many faults the rule draws, [min, max].
    pub fn count(&self) -> [u64; 2] {
        self.count.unwrap_or(DEFAULT_COUNT)
    }

    /// The rule's value range: the one it gives, or its default (every bit of an upset's
    /// registers: a range whose length is a multiple of each chosen register file's
    /// size, so that register, lane and bit are drawn uniformly; [0, 0] otherwise).
    pub fn value(&self) -> [i64; 2] {
        if let Some(v) = self.value {
            return v;
        }
        if self.kind != Kind::Upset || self.choices.is_empty() {
            return [0, 0];
        }
        self.choices
            .iter()
            .try_fold(1, |len, c| c.register_space().map(|space| lcm(len, space)))
            .map_or([0, 0], |len| [0, len as i64 - 1])
    }

    /// The bits an upset rule aims at (RAM bits of its range, or the registers' bits).
    fn upset_bits(&self) -> u64 {
        match self.choices.first() {
            Some(Choice::X) => 31 * 64,
            Some(Choice::F) => 32 * 64,
            Some(Choice::Pc) => 64,
            // The vector registers at the X280's VLEN (the plan is drawn before the machine
            // is known; a lane past a smaller VLEN wraps onto one it has).
            Some(Choice::V) => 32 * u64::from(wio_riscv::Isa::DEFAULT_VLEN),
            _ => {
                let [lo, hi] = self.value();
                hi.abs_diff(lo).saturating_add(1)
            }
        }
    }
}

/// The least common multiple of two register-file sizes (small powers of two and 31).
fn lcm(a: u64, b: u64) -> u64 {
    let (mut x, mut y) = (a, b);
    while y != 0 {
        (x, y) = (y, x % y);
    }
    a / x * b
}

fn default_duration() -> [u64; 2] {
    [100, 1_000]
}

/// What a rule's `choices` may list. Which a kind takes is [`Choice::of`]; each names the
/// device's or the plan's own value it draws (see [`Profile::draw_from`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Choice {
    /// partition: both ways.
    Both,
    /// partition: frames to the guest.
    ToGuest,
    /// partition: frames from the guest.
    FromGuest,
    /// error: reads.
    Read,
    /// error: writes.
    Write,
    /// error: any request.
    Any,
    /// crash: unflushed writes are lost.
    Lost,
    /// crash: unflushed writes are torn.
    Torn,
    /// crash: unflushed writes are kept.
    Kept,
    /// upset: a bit of RAM.
    Ram,
    /// upset: an integer register.
    X,
    /// upset: a floating-point register.
    F,
    /// upset: the pc.
    Pc,
    /// upset: a vector register (a 64-bit lane of it).
    V,
    /// stuck: at 0.
    #[serde(rename = "0")]
    Zero,
    /// stuck: at 1.
    #[serde(rename = "1")]
    One,
}

impl Choice {
    /// For an upset place that is a register file, how many values name its places
    /// (register x 64-bit lane x bit, see [`upset`]); None for RAM and non-upset choices.
    fn register_space(self) -> Option<u64> {
        match self {
            Choice::X => Some(31 * 64),
            Choice::F => Some(32 * 64),
            Choice::Pc => Some(64),
            Choice::V => Some(32 * 64 * 64),
            _ => None,
        }
    }

    /// The choices `kind` takes (none for kinds that take none).
    pub fn of(kind: Kind) -> &'static [Choice] {
        match kind {
            Kind::Partition => &[Choice::Both, Choice::ToGuest, Choice::FromGuest],
            Kind::Error => &[Choice::Read, Choice::Write, Choice::Any],
            Kind::Crash => &[Choice::Lost, Choice::Torn, Choice::Kept],
            Kind::Upset => &[Choice::Ram, Choice::X, Choice::F, Choice::Pc, Choice::V],
            Kind::Stuck => &[Choice::Zero, Choice::One],
            _ => &[],
        }
    }

    /// Its name in profiles.
    pub fn name(self) -> &'static str {
        match self {
            Choice::Both => "both",
            Choice::ToGuest => "to-guest",
            Choice::FromGuest => "from-guest",
            Choice::Read => "read",
            Choice::Write => "write",
            Choice::Any => "any",
            Choice::Lost => "lost",
            Choice::Torn => "torn",
            Choice::Kept => "kept",
            Choice::Ram => "ram",
            Choice::X => "x",
            Choice::F => "f",
            Choice::Pc => "pc",
            Choice::V => "v",
            Choice::Zero => "0",
            Choice::One => "1",
        }
    }
}

fn rule(
    kind: Kind,
    count: [u64; 2],
    duration_ms: [u64; 2],
    value: [i64; 2],
    choices: &[Choice],
) -> Rule {
    Rule {
        kind,
        count: Some(count),
        duration_ms,
        value: Some(value),
        choices: choices.to_vec(),
        rate_per_bit_s: None,
        flux: None,
    }
}

impl Profile {
    /// A built-in profile by name: `none`, `light` or `heavy`.
    pub fn builtin(name: &str) -> Option<Profile> {
        use Choice::*;
        let dirs = [Both, ToGuest, FromGuest];
        let rules = match name {
            "none" => Vec::new(),
            "light" => vec![
                rule(Kind::Partition, [0, 1], [200, 2_000], [0, 0], &dirs),
                rule(Kind::Loss, [0, 1], [100, 1_000], [100_000, 500_000], &[]),
                rule(
                    Kind::Delay,
                    [0, 1],
                    [100, 1_000],
                    [1_000_000, 50_000_000],
                    &[],
                ),
                rule(Kind::Error, [0, 1], [100, 1_000], [0, 0], &[Read, Write]),
                rule(
                    Kind::Latency,
                    [0, 1],
                    [100, 1_000],
                    [1_000_000, 20_000_000],
                    &[],
                ),
                rule(Kind::RtcStep, [0, 1], [0, 0], [-300, 300], &[]),
                rule(Kind::Pause, [0, 1], [10, 500], [0, 0], &[]),
            ],
            "heavy" => vec![
                rule(Kind::Partition, [1, 3], [500, 5_000], [0, 0], &dirs),
                rule(Kind::Loss, [1, 3], [200, 3_000], [200_000, 1_000_000], &[]),
                rule(
                    Kind::Delay,
                    [1, 3],
                    [200, 3_000],
                    [5_000_000, 500_000_000],
                    &[],
                ),
                rule(
                    Kind::Duplicate,
                    [0, 2],
                    [200, 2_000],
                    [100_000, 500_000],
                    &[],
                ),
                rule(
                    Kind::Reorder,
                    [0, 2],
                    [200, 2_000],
                    [1_000_000, 20_000_000],
                    &[],
                ),
                rule(
                    Kind::Error,
                    [1, 3],
                    [200, 3_000],
                    [0, 0],
                    &[Read, Write, Any],
                ),
                rule(
                    Kind::Latency,
                    [1, 3],
                    [200, 3_000],
                    [5_000_000, 200_000_000],
                    &[],
                ),
                rule(Kind::RtcStep, [1, 2], [0, 0], [-86_400, 86_400], &[]),
                rule(Kind::BitRot, [0, 1], [200, 3_000], [1, 10_000], &[]),
                rule(Kind::Pause, [0, 2], [100, 3_000], [0, 0], &[]),
                rule(
                    Kind::Crash,
                    [0, 1],
                    [10, 2_000],
                    [0, 0],
                    &[Lost, Torn, Kept],
                ),
            ],
            _ => return None,
        };
        Some(Profile {
            after: After::Boot,
            start_ms: default_start_ms(),
            end_ms: default_end_ms(),
            rules,
        })
    }

    /// `none`, `light`, `heavy`, or a TOML file (checked; errors name the field).
    pub fn from_arg(arg: &str) -> Result<Profile> {
        if let Some(p) = Profile::builtin(arg) {
            return Ok(p);
        }
        let path = Path::new(arg);
        if !path.exists() {
            return Err(FaultsError::NoProfile {
                arg: arg.to_string(),
            }
            .into());
        }
        let text = std::fs::read_to_string(path).map_err(|source| WioError::ArtifactIo {
            what: "fault profile",
            path: path.to_path_buf(),
            source,
        })?;
        let bad = |source| WioError::FaultProfile {
            path: path.to_path_buf(),
            source,
        };
        let p: Profile = toml::from_str(&text).map_err(|e| bad(ProfileError::toml(&text, e)))?;
        p.check().map_err(bad)?;
        Ok(p)
    }

    /// Checks ranges and names; errors name the rule and the field.
    pub fn check(&self) -> std::result::Result<(), ProfileError> {
        if self.end_ms <= self.start_ms {
            return Err(ProfileError::Window {
                start_ms: self.start_ms,
                end_ms: self.end_ms,
            });
        }
        for (i, r) in self.rules.iter().enumerate() {
            let at = |field, reason| ProfileError::Rule {
                index: i,
                field,
                reason,
            };
            let [lo, hi] = r.count();
            if lo > hi || hi > MAX_COUNT {
                return Err(at(
                    "count",
                    format!("[{lo}, {hi}] must be [min, max] with max <= {MAX_COUNT}"),
                ));
            }
            if r.rate_per_bit_s.is_some() || r.flux.is_some() {
                if r.kind != Kind::Upset {
                    return Err(at("rate_per_bit_s", "only upset rules take a rate".into()));
                }
                let Some(text) = &r.rate_per_bit_s else {
                    return Err(at("flux", "flux needs rate_per_bit_s".into()));
                };
                if r.count.is_some() {
                    return Err(at("count", "give a count or a rate, not both".into()));
                }
                if r.choices.len() > 1 {
                    return Err(at(
                        "choices",
                        "a rate applies to one place: choose one of ram, x, f, pc, v".into(),
                    ));
                }
                let rate = flux::parse_rate(text)
                    .map_err(|source| ProfileError::Rate { index: i, source })?;
                let accel = r.flux.unwrap_or(1);
                if accel == 0 {
                    return Err(at("flux", "must be at least 1".into()));
                }
                if flux::slot_chance(rate, r.upset_bits(), accel).is_none() {
                    return Err(at("rate_per_bit_s", format!("{text} x {} bits x flux {accel} is one upset per ms or more; lower the rate or the flux", r.upset_bits())));
                }
            }
            if r.duration_ms[0] > r.duration_ms[1] {
                return Err(at("duration_ms", "min above max".into()));
            }
            let value = r.value();
            if r.kind == Kind::Upset && r.value.is_none() && value == [0, 0] {
                return Err(at(
                    "value",
                    "an upset in ram needs the bits it aims at: [first, last] bit address \
                     (physical address x 8 + bit)"
                        .into(),
                ));
            }
            if value[0] > value[1] {
                return Err(at("value", "min above max".into()));
            }
            let positive = r.kind != Kind::RtcStep;
            if positive && value[0] < 0 {
                return Err(at(
                    "value",
                    format!("must not be negative for {}", r.kind.name()),
                ));
            }
            if matches!(r.kind, Kind::Loss | Kind::Duplicate | Kind::BitRot) && value[1] > 1_000_000
            {
                return Err(at("value", "ppm above 1000000".into()));
            }
            let allowed = Choice::of(r.kind);
            if allowed.is_empty() && !r.choices.is_empty() {
                return Err(at("choices", format!("{} takes no choices", r.kind.name())));
            }
            if let Some(c) = r.choices.iter().find(|c| !allowed.contains(c)) {
                let names: Vec<&str> = allowed.iter().map(|c| c.name()).collect();
                return Err(at(
                    "choices",
                    format!(
                        "{:?} is not a choice of {}: {}",
                        c.name(),
                        r.kind.name(),
                        names.join(", ")
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Draws the plan from `seed` for a machine booted now: the window counted from the
    /// boot, or no fault yet for a profile counted from setup-complete (drawn then, see
    /// [`Profile::draw_from`]).
    pub fn draw(&self, seed: RunSeed, has: Targets) -> FaultPlan {
        match self.after {
            After::Boot => self.draw_from(seed, has, 0),
            After::SetupComplete => FaultPlan::default(),
        }
    }

    /// Draws the plan from `seed` with the window counted from `origin_ns`; faults for a
    /// part the machine does not have are skipped (`has`). Every fault draws the same
    /// number of values whatever its kind, from its rule's own stream.
    pub fn draw_from(&self, seed: RunSeed, has: Targets, origin_ns: u64) -> FaultPlan {
        let mut plan = FaultPlan::default();
        let mut seen: Vec<Kind> = Vec::new();
        for r in &self.rules {
            let n = seen.iter().filter(|k| **k == r.kind).count();
            seen.push(r.kind);
            let mut s = seed.stream(&stream_names::fault(r.kind.name(), n));
            let (lo_ns, hi_ns) = (self.start_ms * 1_000_000, self.end_ms * 1_000_000);
            // A rate (checked by `check`) gives the times; else a drawn count, each
            // fault's time drawn in the window.
            let timed: Option<Vec<u64>> = r.rate_per_bit_s.as_deref().map(|text| {
                let chance = flux::parse_rate(text)
                    .ok()
                    .and_then(|rate| flux::slot_chance(rate, r.upset_bits(), r.flux.unwrap_or(1)))
                    .unwrap_or((0, 1));
                flux::draw_times(&mut s, lo_ns, hi_ns, chance, MAX_COUNT)
            });
            let count = match &timed {
                Some(times) => times.len() as u64,
                None => s.range_inclusive(r.count()[0], r.count()[1]),
            };
            let [lo, hi] = r.value();
            for i in 0..count {
                let at_ns = origin_ns.saturating_add(match &timed {
                    Some(times) => times[i as usize],
                    None => s.range_inclusive(lo_ns, hi_ns - 1),
                });
                let duration_ns = s.range_inclusive(r.duration_ms[0], r.duration_ms[1]) * 1_000_000;
                let value = lo.saturating_add_unsigned(s.range_inclusive(0, hi.abs_diff(lo)));
                let choice = s.below(r.choices.len().max(1) as u64) as usize;
                let pick = r.choices.get(choice).copied();
                let v = value.unsigned_abs();
                let kind = match r.kind {
                    Kind::Partition => FaultKind::Net(NetFault::Partition(match pick {
                        Some(Choice::ToGuest) => Direction::ToGuest,
                        Some(Choice::FromGuest) => Direction::FromGuest,
                        _ => Direction::Both,
                    })),
                    Kind::Loss => FaultKind::Net(NetFault::Loss { ppm: v }),
                    Kind::Delay => FaultKind::Net(NetFault::Delay { extra_ns: v }),
                    Kind::Duplicate => FaultKind::Net(NetFault::Duplicate { ppm: v }),
                    Kind::Reorder => FaultKind::Net(NetFault::Reorder { max_ns: v }),
                    Kind::Error => {
                        let op = match pick {
                            Some(Choice::Read) => DiskOp::Read,
                            Some(Choice::Write) => DiskOp::Write,
                            _ => DiskOp::Any,
                        };
                        FaultKind::Disk(match v {
                            0 => DiskFault::Error(op),
                            nth => DiskFault::ErrorNth { op, nth },
                        })
                    }
                    Kind::Latency => FaultKind::Disk(DiskFault::Latency { extra_ns: v }),
                    Kind::BitRot => FaultKind::Disk(DiskFault::BitRot { ppm: v }),
                    Kind::Crash => FaultKind::Crash {
                        unflushed: match pick {
                            Some(Choice::Torn) => Unflushed::Torn,
                            Some(Choice::Kept) => Unflushed::Kept,
                            _ => Unflushed::Lost,
                        },
                    },
                    Kind::Pause => FaultKind::Pause,
                    Kind::Upset => upset(pick, v),
                    Kind::Stuck => FaultKind::Stuck {
                        ram: v / 8,
                        bit: (v % 8) as u8,
                        value: u8::from(pick == Some(Choice::One)),
                    },
                    Kind::RtcStep => FaultKind::RtcStep { delta_s: value },
                };
                if !has.take(kind.kind()) {
                    continue;
                }
                plan.faults.push(Fault {
                    at_ns,
                    duration_ns: if kind.is_instant() { 0 } else { duration_ns },
                    target: kind.target(),
                    kind,
                });
            }
        }
        plan.sort();
        plan
    }
}

/// The upset a drawn `value` names: for RAM a bit address (physical address x 8 + bit),
/// for a register its number and bit (x1-x31, f0-f31; the pc's bit; v0-v31 with a 64-bit
/// lane and its bit).
fn upset(pick: Option<Choice>, v: u64) -> FaultKind {
    let (place, bit) = match pick {
        Some(Choice::X) => (UpsetPlace::X(1 + (v % 31) as u8), (v / 31) % 64),
        Some(Choice::F) => (UpsetPlace::F((v % 32) as u8), (v / 32) % 64),
        Some(Choice::Pc) => (UpsetPlace::Pc, v % 64),
        Some(Choice::V) => (
            UpsetPlace::V((v % 32) as u8, ((v / 32) % 64) as u8),
            (v / 2048) % 64,
        ),
        _ => (UpsetPlace::Ram(v / 8), v % 8),
    };
    FaultKind::Upset {
        place,
        bit: bit as u8,
        width: 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::faults::plan::Target;

    #[test]
    fn profiles_draw_from_the_seed_and_one_rule_never_shifts_another() {
        let heavy = Profile::builtin("heavy").unwrap();
        heavy.check().unwrap();
        let all = Targets {
            disk: true,
            node: true,
            ram: true,
        };
        let a = heavy.draw(RunSeed(1), all);
        assert_eq!(a, heavy.draw(RunSeed(1), all));
        assert_ne!(a, heavy.draw(RunSeed(2), all));
        assert!(a.faults.len() >= 8, "{a:?}");
        a.check().unwrap();
        // Dropping the partition rule removes partitions and shifts nothing else.
        let mut fewer = heavy.clone();
        fewer.rules.remove(0);
        let b = fewer.draw(RunSeed(1), all);
        let no_partitions: Vec<Fault> = a
            .faults
            .iter()
            .filter(|f| !matches!(f.kind, FaultKind::Net(NetFault::Partition(_))))
            .copied()
            .collect();
        assert_eq!(b.faults, no_partitions);
        // Without a disk, disk rules draw nothing; without node faults, node rules neither.
        let bare = heavy.draw(
            RunSeed(1),
            Targets {
                disk: false,
                node: false,
                ram: false,
            },
        );
        assert!(bare
            .faults
            .iter()
            .all(|f| f.target != Target::Disk && f.target != Target::Node));
        let with: Vec<Fault> = a
            .faults
            .iter()
            .filter(|f| f.target != Target::Disk && f.target != Target::Node)
            .copied()
            .collect();
        assert_eq!(bare.faults, with, "skipping a part shifts no other draw");
        assert!(Profile::builtin("none")
            .unwrap()
            .draw(RunSeed(1), all)
            .faults
            .is_empty());
    }

    #[test]
    fn bad_profiles_name_the_field() {
        let bad = [
            ("end_ms = 5\nstart_ms = 10\n", "end_ms"),
            ("[[rule]]\nkind = \"meteor\"\n", "unknown variant `meteor`"),
            (
                "[[rule]]\nkind = \"loss\"\nvalue = [0, 2000000]\n",
                "rule[0].value",
            ),
            (
                "[[rule]]\nkind = \"loss\"\ncount = [3, 1]\n",
                "rule[0].count",
            ),
            (
                "[[rule]]\nkind = \"partition\"\nchoices = [\"up\"]\n",
                "choices = [\"up\"]",
            ),
            (
                "[[rule]]\nkind = \"partition\"\nchoices = [\"read\"]\n",
                "rule[0].choices: \"read\" is not a choice of partition: both, to-guest, from-guest",
            ),
            (
                "[[rule]]\nkind = \"delay\"\nchoices = [\"both\"]\n",
                "rule[0].choices",
            ),
        ];
        // Names that are not a kind or a choice are refused as the file is read (the TOML
        // error shows the line); the rest by `check`, naming the rule and the field.
        for (text, field) in bad {
            let e = match toml::from_str::<Profile>(text) {
                Ok(p) => p.check().unwrap_err().to_string(),
                Err(e) => e.to_string(),
            };
            assert!(e.contains(field), "{text}: {e}");
        }
        // Every kind's choices are named in messages as the file writes them.
        for kind in Kind::ALL {
            for c in Choice::of(kind) {
                assert_eq!(serde_json::to_value(c).unwrap(), c.name(), "{kind:?}");
            }
        }
        let e = toml::from_str::<Profile>("[[rule]]\nkind = \"loss\"\ncolour = 1\n").unwrap_err();
        assert!(e.to_string().contains("colour"), "{e}");
    }
}

#[cfg(test)]
mod upset_tests;
