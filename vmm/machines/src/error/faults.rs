//! Why a fault plan, a fault profile or a flux rate is refused.

/// A fault plan (JSON) that does not parse or check.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// The file is not a fault plan's JSON.
    #[error("is not a fault plan: {0}")]
    Json(#[source] serde_json::Error),
    /// More faults than a plan holds.
    #[error("faults: {count} faults; a plan holds at most {max}")]
    TooMany {
        /// How many the plan has.
        count: usize,
        /// The most a plan holds.
        max: usize,
    },
    /// One fault's field is wrong: `faults[INDEX].FIELD: REASON`.
    #[error("faults[{index}].{field}: {reason}")]
    Field {
        /// The fault's index in the plan.
        index: usize,
        /// The field's path inside the fault (`"target"`, `"params.ppm"`).
        field: &'static str,
        /// What is wrong and what would be right.
        reason: String,
    },
}

/// A fault profile (TOML) that does not parse or check.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    /// The file is not a fault profile's TOML, or names what is not a kind or a choice:
    /// one line with where (line, and the key there) and TOML's message.
    #[error("is not a fault profile: {}{}", place(*.line, .key.as_deref()), .source.message())]
    Toml {
        /// The line (from 1) TOML points at, when it points.
        line: Option<usize>,
        /// The key set on that line (`rule.kind`), when there is one.
        key: Option<String>,
        /// TOML's error (boxed: it is large, and every error that carries one is).
        #[source]
        source: Box<toml::de::Error>,
    },
    /// The window is empty.
    #[error("end_ms ({end_ms}) must be after start_ms ({start_ms})")]
    Window {
        /// Where the window starts (ms).
        start_ms: u64,
        /// Where it ends (ms).
        end_ms: u64,
    },
    /// One rule's field is wrong: `rule[INDEX].FIELD: REASON`.
    #[error("rule[{index}].{field}: {reason}")]
    Rule {
        /// The rule's index in the profile.
        index: usize,
        /// The field (`"kind"`, `"count"`).
        field: &'static str,
        /// What is wrong and what would be right.
        reason: String,
    },
    /// One rule's `rate_per_bit_s` is not a rate.
    #[error("rule[{index}].rate_per_bit_s: {source}")]
    Rate {
        /// The rule's index in the profile.
        index: usize,
        /// Why the rate is refused.
        #[source]
        source: RateError,
    },
}

/// "line L, KEY: " for a TOML error's place, as much of it as is known.
fn place(line: Option<usize>, key: Option<&str>) -> String {
    match (line, key) {
        (Some(l), Some(k)) => format!("line {l}, {k}: "),
        (Some(l), None) => format!("line {l}: "),
        (None, Some(k)) => format!("{k}: "),
        (None, None) => String::new(),
    }
}

impl ProfileError {
    /// The error TOML gives for a profile's `text`, with its line and key.
    pub fn toml(text: &str, source: toml::de::Error) -> ProfileError {
        let (line, key) = super::scenario::toml_place(text, &source);
        ProfileError::Toml {
            line,
            key,
            source: Box::new(source),
        }
    }
}

/// A flux rate (`"1.16e-12"`) that does not parse or is out of range.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("rate {text:?}: {why} (write it like \"1.16e-12\")")]
pub struct RateError {
    /// The text as given.
    pub text: String,
    /// What is wrong with it.
    pub why: &'static str,
}

/// Faults that do not fit this run (its machine or its command line).
#[derive(Debug, thiserror::Error)]
pub enum FaultsError {
    /// `--faults` is no built-in profile and no file.
    #[error("--faults {arg:?}: expected none, light, heavy or a profile file (TOML)")]
    NoProfile {
        /// The value as given.
        arg: String,
    },
    /// A plan's fault hits the disk of a run without one.
    #[error("fault plan: faults[{index}] ({kind}) hits the disk, but this run has no disk; give a DISK.img or drop the fault")]
    NoDisk {
        /// The fault's index in the plan.
        index: usize,
        /// The fault's kind.
        kind: &'static str,
    },
    /// A plan's node fault on a machine that cannot take it (upsets and stuck bits on
    /// x86-64: KVM runs the guest on memory wio cannot corrupt between two instructions).
    #[error("fault plan: faults[{index}] ({kind}) is a node fault this machine does not take: upsets and stuck bits need a riscv64 machine, whose interpreter owns every memory access (KVM runs an x86-64 guest on memory wio cannot change between two instructions); run with --arch riscv64 or drop the fault")]
    NodeFault {
        /// The fault's index in the plan.
        index: usize,
        /// The fault's kind.
        kind: &'static str,
    },
}
