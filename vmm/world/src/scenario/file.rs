//! The scenario file as TOML says it, before any check: field for field what a user can
//! write (unknown keys refused, values with a fixed set read into enums, positions kept
//! for the errors). `check.rs` turns it into a [`Scenario`](super::Scenario).

use super::{Level, LinkSpec};
use serde::Deserialize;
use std::path::PathBuf;
use toml::Spanned;
use wio_machines::machine::noise::SchedNoise;

/// One pair's link.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PairSpec {
    pub(super) between: Spanned<[String; 2]>,
    pub(super) latency_us: Option<u64>,
    pub(super) jitter_us: Option<u64>,
    pub(super) loss_ppm: Option<u64>,
    pub(super) duplicate_ppm: Option<u64>,
}

/// One node as the file says it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct NodeSpec {
    pub(super) name: Spanned<String>,
    #[serde(default)]
    pub(super) arch: Option<Spanned<NodeArch>>,
    #[serde(default)]
    pub(super) guest: Option<String>,
    #[serde(default)]
    pub(super) kernel: Option<Spanned<PathBuf>>,
    #[serde(default)]
    pub(super) initrd: Option<Spanned<PathBuf>>,
    #[serde(default)]
    pub(super) mem_mib: Option<u64>,
    #[serde(default)]
    pub(super) run: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) faults: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) disk: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) cmdline: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) sched_noise: Option<SchedNoise>,
    #[serde(default)]
    pub(super) clock_drift_ppm: Option<Spanned<i32>>,
    /// The hart's ISA (`--isa`), e.g. "rv64gc_zba_zbb_zbs".
    #[serde(default)]
    pub(super) isa: Option<Spanned<String>>,
    /// An imported container image (`wio image import`) the node runs.
    #[serde(default)]
    pub(super) image: Option<Spanned<String>>,
    /// With `image`: replaces the image's cmd.
    #[serde(default)]
    pub(super) command: Option<Spanned<Vec<String>>>,
    /// With `image`: replaces the image's entrypoint (and drops its cmd).
    #[serde(default)]
    pub(super) entrypoint: Option<Spanned<Vec<String>>>,
    /// With `image`: NAME=VALUE entries added to (or replacing) the image's environment.
    #[serde(default)]
    pub(super) environment: Option<Spanned<Vec<String>>>,
    /// With `image`: replaces the image's user.
    #[serde(default)]
    pub(super) user: Option<Spanned<String>>,
    /// With `image`: replaces the image's working directory.
    #[serde(default)]
    pub(super) working_dir: Option<Spanned<String>>,
    /// With `image`: a health check (argv run in the image until it succeeds).
    #[serde(default)]
    pub(super) healthcheck: Option<Spanned<Vec<String>>>,
    /// With `healthcheck`: virtual ms between tries (default 1000).
    #[serde(default)]
    pub(super) healthcheck_interval_ms: Option<Spanned<u64>>,
    /// With `image`: nodes (with a health check) that must be healthy before this one starts.
    #[serde(default)]
    pub(super) wait_healthy: Option<Spanned<Vec<String>>>,
    /// With `image`: host files or folders copied into it.
    #[serde(default)]
    pub(super) files: Option<Spanned<Vec<FileSpec>>>,
    /// With `image`: folders made in it (volumes).
    #[serde(default)]
    pub(super) dirs: Option<Spanned<Vec<String>>>,
    /// With `image`: compose's restart policy (no, always, unless-stopped, on-failure[:N]).
    #[serde(default)]
    pub(super) restart: Option<Spanned<String>>,
    /// The networks it is on (default: `default`); nodes reach each other through one.
    #[serde(default)]
    pub(super) networks: Option<Spanned<Vec<String>>>,
}

/// A host file or folder an image node gets.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FileSpec {
    pub(super) source: PathBuf,
    pub(super) target: String,
    #[serde(default)]
    pub(super) read_only: bool,
}

/// A node's `arch` as the file says it: the names `wio run --arch` takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub(super) enum NodeArch {
    #[serde(rename = "riscv64", alias = "riscv")]
    Riscv64,
    #[serde(rename = "x86_64", alias = "x86-64", alias = "amd64")]
    X86_64,
}

/// `[faults] profile` as the file says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(super) enum ProfileName {
    None,
    Light,
    Heavy,
}

impl ProfileName {
    /// The level it draws at (None: no drawn faults).
    pub(super) fn level(self) -> Option<Level> {
        match self {
            ProfileName::None => None,
            ProfileName::Light => Some(Level::Light),
            ProfileName::Heavy => Some(Level::Heavy),
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PartitionSpec {
    pub(super) at_ms: u64,
    pub(super) duration_ms: u64,
    pub(super) groups: Spanned<Vec<Vec<String>>>,
    #[serde(default)]
    pub(super) one_way: bool,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct DegradeSpec {
    pub(super) at_ms: u64,
    pub(super) duration_ms: u64,
    #[serde(default)]
    pub(super) between: Option<Spanned<[String; 2]>>,
    #[serde(default)]
    pub(super) latency_us: u64,
    #[serde(default)]
    pub(super) jitter_us: u64,
    #[serde(default)]
    pub(super) loss_ppm: u64,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PeerSpec {
    #[serde(default)]
    pub(super) name: Option<Spanned<String>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FaultsSpec {
    pub(super) profile: ProfileName,
    #[serde(default)]
    pub(super) after_ms: u64,
    #[serde(default)]
    pub(super) until_ms: Option<Spanned<u64>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct File {
    #[serde(default)]
    pub(super) end_when_done: Option<Spanned<Vec<String>>>,
    #[serde(default)]
    pub(super) faults: Option<FaultsSpec>,
    #[serde(default)]
    pub(super) peer: Option<PeerSpec>,
    #[serde(default)]
    pub(super) max_virtual_secs: Option<u64>,
    #[serde(default)]
    pub(super) link: Option<LinkSpec>,
    #[serde(default)]
    pub(super) links: Vec<PairSpec>,
    #[serde(default)]
    pub(super) node: Vec<NodeSpec>,
    #[serde(default)]
    pub(super) partition: Vec<PartitionSpec>,
    #[serde(default)]
    pub(super) degrade: Vec<DegradeSpec>,
    #[serde(default)]
    pub(super) dependency: Vec<super::dependency::DependencySpec>,
}
