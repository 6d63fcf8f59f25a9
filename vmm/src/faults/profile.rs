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
//!                          # where, ram x f pc
//! [[rule]]
//! kind = "loss"
//! count = [1, 1]
//! duration_ms = [100, 1000]
//! value = [100000, 500000] # loss, duplicate, bit-rot: ppm; delay, latency, reorder: ns;
//!                          # rtc-step: s; error: the n-th request fails (0: all of them);
//!                          # upset: a bit address (physical address x 8 + bit) for ram,
//!                          # any range for x, f, pc (register and bit come from it)
//! # crash: duration_ms is the time the machine stays off before it boots again
//! ```

use super::flux;
use super::plan::{
    Direction, DiskOp, Fault, FaultKind, FaultPlan, Target, Targets, Unflushed, UpsetPlace,
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
    /// `latency`, `bit-rot`, `rtc-step`, `crash`, `pause`).
    pub kind: String,
    /// How many faults, drawn uniformly in [min, max] (default [0, 1]; not with
    /// `rate_per_bit_s`).
    #[serde(default)]
    pub count: Option<[u64; 2]>,
    /// Each fault's duration in ms, drawn in [min, max] (ignored for `rtc-step`).
    #[serde(default = "default_duration")]
    pub duration_ms: [u64; 2],
    /// The kind's number, drawn in [min, max]: ppm (loss, duplicate, bit-rot), ns (delay,
    /// latency, reorder), seconds (rtc-step, may be negative) or which request fails
    /// (error: 0 = every matching one).
    #[serde(default)]
    pub value: [i64; 2],
    /// The kind's choices, one drawn per fault: directions (partition), ops (error) or
    /// what happens to unflushed writes (crash).
    #[serde(default)]
    pub choices: Vec<String>,
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

    /// The bits an upset rule aims at (RAM bits of its range, or the registers' bits).
    fn upset_bits(&self) -> u64 {
        match self.choices.first().map(String::as_str) {
            Some("x") => 31 * 64,
            Some("f") => 32 * 64,
            Some("pc") => 64,
            _ => self.value[1].abs_diff(self.value[0]).saturating_add(1),
        }
    }
}

fn default_duration() -> [u64; 2] {
    [100, 1_000]
}

const KINDS: [&str; 13] = [
    "partition",
    "loss",
    "delay",
    "duplicate",
    "reorder",
    "error",
    "latency",
    "bit-rot",
    "rtc-step",
    "crash",
    "pause",
    "upset",
    "stuck",
];

fn rule(
    kind: &str,
    count: [u64; 2],
    duration_ms: [u64; 2],
    value: [i64; 2],
    choices: &[&str],
) -> Rule {
    Rule {
        kind: kind.into(),
        count: Some(count),
        duration_ms,
        value,
        choices: choices.iter().map(|c| c.to_string()).collect(),
        rate_per_bit_s: None,
        flux: None,
    }
}

impl Profile {
    /// A built-in profile by name: `none`, `light` or `heavy`.
    pub fn builtin(name: &str) -> Option<Profile> {
        let dirs = ["both", "to-guest", "from-guest"];
        let rules = match name {
            "none" => Vec::new(),
            "light" => vec![
                rule("partition", [0, 1], [200, 2_000], [0, 0], &dirs),
                rule("loss", [0, 1], [100, 1_000], [100_000, 500_000], &[]),
                rule("delay", [0, 1], [100, 1_000], [1_000_000, 50_000_000], &[]),
                rule("error", [0, 1], [100, 1_000], [0, 0], &["read", "write"]),
                rule(
                    "latency",
                    [0, 1],
                    [100, 1_000],
                    [1_000_000, 20_000_000],
                    &[],
                ),
                rule("rtc-step", [0, 1], [0, 0], [-300, 300], &[]),
                rule("pause", [0, 1], [10, 500], [0, 0], &[]),
            ],
            "heavy" => vec![
                rule("partition", [1, 3], [500, 5_000], [0, 0], &dirs),
                rule("loss", [1, 3], [200, 3_000], [200_000, 1_000_000], &[]),
                rule("delay", [1, 3], [200, 3_000], [5_000_000, 500_000_000], &[]),
                rule("duplicate", [0, 2], [200, 2_000], [100_000, 500_000], &[]),
                rule(
                    "reorder",
                    [0, 2],
                    [200, 2_000],
                    [1_000_000, 20_000_000],
                    &[],
                ),
                rule(
                    "error",
                    [1, 3],
                    [200, 3_000],
                    [0, 0],
                    &["read", "write", "any"],
                ),
                rule(
                    "latency",
                    [1, 3],
                    [200, 3_000],
                    [5_000_000, 200_000_000],
                    &[],
                ),
                rule("rtc-step", [1, 2], [0, 0], [-86_400, 86_400], &[]),
                rule("bit-rot", [0, 1], [200, 3_000], [1, 10_000], &[]),
                rule("pause", [0, 2], [100, 3_000], [0, 0], &[]),
                rule(
                    "crash",
                    [0, 1],
                    [10, 2_000],
                    [0, 0],
                    &["lost", "torn", "kept"],
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
        let p: Profile = toml::from_str(&text).map_err(|e| bad(ProfileError::Toml(e)))?;
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
            if !KINDS.contains(&r.kind.as_str()) {
                return Err(at(
                    "kind",
                    format!("unknown kind {:?}; kinds: {}", r.kind, KINDS.join(", ")),
                ));
            }
            let [lo, hi] = r.count();
            if lo > hi || hi > MAX_COUNT {
                return Err(at(
                    "count",
                    format!("[{lo}, {hi}] must be [min, max] with max <= {MAX_COUNT}"),
                ));
            }
            if r.rate_per_bit_s.is_some() || r.flux.is_some() {
                if r.kind != "upset" {
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
                        "a rate applies to one place: choose one of ram, x, f, pc".into(),
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
            if r.value[0] > r.value[1] {
                return Err(at("value", "min above max".into()));
            }
            let positive = r.kind != "rtc-step";
            if positive && r.value[0] < 0 {
                return Err(at("value", format!("must not be negative for {}", r.kind)));
            }
            if matches!(r.kind.as_str(), "loss" | "duplicate" | "bit-rot") && r.value[1] > 1_000_000
            {
                return Err(at("value", "ppm above 1000000".into()));
            }
            let allowed: &[&str] = match r.kind.as_str() {
                "partition" => &["both", "to-guest", "from-guest"],
                "error" => &["read", "write", "any"],
                "crash" => &["lost", "torn", "kept"],
                "upset" => &["ram", "x", "f", "pc"],
                "stuck" => &["0", "1"],
                _ => &[],
            };
            if allowed.is_empty() && !r.choices.is_empty() {
                return Err(at("choices", format!("{} takes no choices", r.kind)));
            }
            if let Some(c) = r.choices.iter().find(|c| !allowed.contains(&c.as_str())) {
                return Err(at(
                    "choices",
                    format!("{c:?} is not one of {}", allowed.join(", ")),
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
        let mut seen: Vec<&str> = Vec::new();
        for r in &self.rules {
            let n = seen.iter().filter(|k| **k == r.kind).count();
            seen.push(&r.kind);
            let mut s = seed.stream(&stream_names::fault(&r.kind, n));
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
            for i in 0..count {
                let at_ns = origin_ns.saturating_add(match &timed {
                    Some(times) => times[i as usize],
                    None => s.range_inclusive(lo_ns, hi_ns - 1),
                });
                let duration_ns = s.range_inclusive(r.duration_ms[0], r.duration_ms[1]) * 1_000_000;
                let span = r.value[1].abs_diff(r.value[0]);
                let value = r.value[0].saturating_add_unsigned(s.range_inclusive(0, span));
                let choice = s.below(r.choices.len().max(1) as u64) as usize;
                let pick = r.choices.get(choice).map(String::as_str);
                let v = value.unsigned_abs();
                let kind = match r.kind.as_str() {
                    "partition" => FaultKind::Partition {
                        direction: match pick {
                            Some("to-guest") => Direction::ToGuest,
                            Some("from-guest") => Direction::FromGuest,
                            _ => Direction::Both,
                        },
                    },
                    "loss" => FaultKind::Loss { ppm: v },
                    "delay" => FaultKind::Delay { extra_ns: v },
                    "duplicate" => FaultKind::Duplicate { ppm: v },
                    "reorder" => FaultKind::Reorder { max_ns: v },
                    "error" => FaultKind::Error {
                        op: match pick {
                            Some("read") => DiskOp::Read,
                            Some("write") => DiskOp::Write,
                            _ => DiskOp::Any,
                        },
                        nth: (v > 0).then_some(v),
                    },
                    "latency" => FaultKind::Latency { extra_ns: v },
                    "bit-rot" => FaultKind::BitRot { ppm: v },
                    "crash" => FaultKind::Crash {
                        unflushed: match pick {
                            Some("torn") => Unflushed::Torn,
                            Some("kept") => Unflushed::Kept,
                            _ => Unflushed::Lost,
                        },
                    },
                    "pause" => FaultKind::Pause,
                    "upset" => upset(pick, v),
                    "stuck" => FaultKind::Stuck {
                        ram: v / 8,
                        bit: (v % 8) as u8,
                        value: u8::from(pick == Some("1")),
                    },
                    _ => FaultKind::RtcStep { delta_s: value },
                };
                let missing = match kind.target() {
                    Target::Disk => !has.disk,
                    Target::Node => !has.node,
                    Target::Net | Target::Clock => false,
                };
                if missing {
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
/// for a register its number and bit (x1-x31, f0-f31; the pc's bit).
fn upset(pick: Option<&str>, v: u64) -> FaultKind {
    let (place, bit) = match pick {
        Some("x") => (UpsetPlace::X(1 + (v % 31) as u8), (v / 31) % 64),
        Some("f") => (UpsetPlace::F((v % 32) as u8), (v / 32) % 64),
        Some("pc") => (UpsetPlace::Pc, v % 64),
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

    #[test]
    fn profiles_draw_from_the_seed_and_one_rule_never_shifts_another() {
        let heavy = Profile::builtin("heavy").unwrap();
        heavy.check().unwrap();
        let all = Targets {
            disk: true,
            node: true,
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
            .filter(|f| !matches!(f.kind, FaultKind::Partition { .. }))
            .copied()
            .collect();
        assert_eq!(b.faults, no_partitions);
        // Without a disk, disk rules draw nothing; without node faults, node rules neither.
        let bare = heavy.draw(
            RunSeed(1),
            Targets {
                disk: false,
                node: false,
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
            ("[[rule]]\nkind = \"meteor\"\n", "rule[0].kind"),
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
                "rule[0].choices",
            ),
            (
                "[[rule]]\nkind = \"delay\"\nchoices = [\"both\"]\n",
                "rule[0].choices",
            ),
        ];
        for (text, field) in bad {
            let p: Profile = toml::from_str(text).unwrap();
            let e = p.check().unwrap_err().to_string();
            assert!(e.contains(field), "{text}: {e}");
        }
        let e = toml::from_str::<Profile>("[[rule]]\nkind = \"loss\"\ncolour = 1\n").unwrap_err();
        assert!(e.to_string().contains("colour"), "{e}");
    }
}

#[cfg(test)]
mod upset_tests {
    use super::*;

    /// An upset rule draws bits inside its bit-address range (RAM) or registers x1-x31,
    /// the same for the same seed, and adding it shifts no other rule's faults.
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
        let bad: Profile =
            toml::from_str("[[rule]]\nkind = \"upset\"\nchoices = [\"csr\"]\n").unwrap();
        assert!(bad.check().is_err());
    }
}
