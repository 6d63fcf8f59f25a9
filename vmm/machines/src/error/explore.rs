//! Why an exploration (`wio explore`, `wio report merge`) cannot run as asked.

use std::path::PathBuf;

/// An exploration's options, reports or checkpoint that do not fit.
#[derive(Debug, thiserror::Error)]
pub enum ExploreError {
    /// `--seeds` is not a seed range.
    #[error("--seeds {text:?}: expected A..B (B excluded), A..=B (B included) or one seed")]
    BadSeeds {
        /// The value as given.
        text: String,
    },
    /// `--seeds` is an empty range.
    #[error("--seeds {text:?} is empty")]
    EmptySeeds {
        /// The value as given.
        text: String,
    },
    /// `--seeds` covers more seeds than one exploration takes.
    #[error("--seeds {text:?} has more than {max} seeds; split it with --shard")]
    TooManySeeds {
        /// The value as given.
        text: String,
        /// The most seeds an exploration takes.
        max: u64,
    },
    /// `--shard` is not `i/N`.
    #[error("--shard {text:?}: expected i/N with 0 <= i < N, e.g. 0/4 ... 3/4 (Kubernetes: $JOB_COMPLETION_INDEX/N)")]
    BadShard {
        /// The value as given.
        text: String,
    },
    /// `--shard` splits into more shards than an exploration takes.
    #[error("--shard {text:?}: at most {max} shards")]
    TooManyShards {
        /// The value as given.
        text: String,
        /// The most shards.
        max: u64,
    },
    /// `--budget` out of range.
    #[error("--budget {budget}: a guided exploration runs 1 to {max} branches")]
    Budget {
        /// The budget given.
        budget: u64,
        /// The largest budget.
        max: u64,
    },
    /// `--signals` names something that is no signal.
    #[error("--signals {text:?}: {part:?} is not a signal; they are {known} (or all)")]
    BadSignal {
        /// The value as given.
        text: String,
        /// The part that is no signal.
        part: String,
        /// The signals there are, comma-separated.
        known: String,
    },
    /// `--resume` finds no checkpoint.
    #[error("--resume: there is no checkpoint {} (the exploration finished, or never wrote one); start without --resume", .path.display())]
    NoCheckpoint {
        /// Where it was looked for.
        path: PathBuf,
    },
    /// `--resume` finds the checkpoint of another exploration.
    #[error("--resume: {} is the checkpoint of another exploration (snapshot, budget, search seed, signals or options differ); give the same options, or start without --resume", .path.display())]
    OtherCheckpoint {
        /// The checkpoint.
        path: PathBuf,
    },
    /// A baseline (`wio report html --baseline`) that states none of the report's promises.
    #[error("{} is a baseline of another exploration: it states none of the promises of {} (a baseline is an earlier exploration of the same service, such as the build before a fix)", .baseline.display(), .report.display())]
    UnrelatedBaseline {
        /// The baseline.
        baseline: PathBuf,
        /// The report.
        report: PathBuf,
    },
    /// A guided exploration's report given to `report merge`.
    #[error("{} is a guided exploration's report (--budget): it is one search, not a shard; only flat explorations (--seeds with --shard) merge", .path.display())]
    GuidedShard {
        /// The report.
        path: PathBuf,
    },
    /// Reports of different explorations given to `report merge`.
    #[error("{} is a report of another exploration (snapshot, seeds, --until, --match, --fail-on or shard count differ)", .path.display())]
    OtherExploration {
        /// The report that differs from the first.
        path: PathBuf,
    },
    /// Shards missing from a merge without `--allow-partial`.
    #[error("shard(s) {} of {count} are missing; merge what is there with --allow-partial (the result is marked incomplete)", join(.missing))]
    MissingShards {
        /// The missing shards.
        missing: Vec<u64>,
        /// The shard count.
        count: u64,
    },
    /// A path that `--slurm` needs absolute cannot be made so.
    #[error("cannot make {} absolute: {source}", .path.display())]
    Absolute {
        /// The path.
        path: PathBuf,
        /// What the host said.
        #[source]
        source: std::io::Error,
    },
    /// `sbatch` cannot be run.
    #[error("cannot run sbatch ({0}): --slurm needs a Slurm login node (sbatch, squeue on PATH)")]
    Sbatch(#[source] std::io::Error),
    /// `sbatch` refused the job array.
    #[error("sbatch refused the array: {stderr}")]
    SbatchRefused {
        /// What sbatch said.
        stderr: String,
    },
    /// A disk given with a world snapshot.
    #[error("a world snapshot names its nodes' disks itself; drop the disk argument")]
    WorldDisk,
    /// `--signals` empty for a guided exploration.
    #[error(
        "--signals is empty: a guided exploration needs at least one signal (promises, console)"
    )]
    NoSignals,
    /// `--shard` given to a guided exploration.
    #[error("--shard splits a flat exploration's seeds; a guided exploration is one search (drop --shard)")]
    GuidedShardFlag,
    /// `--slurm` task count out of range.
    #[error("--slurm takes 1 to 100000 tasks")]
    SlurmTasks,
    /// `report merge` given no report.
    #[error("no reports to merge")]
    NoReports,
}

fn join(list: &[u64]) -> String {
    list.iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}
