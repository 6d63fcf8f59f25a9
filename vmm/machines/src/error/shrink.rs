//! Why `wio shrink` or `wio verify` cannot run as asked.

use std::path::PathBuf;

/// A shrink or a verification whose inputs do not fit.
#[derive(Debug, thiserror::Error)]
pub enum ShrinkError {
    /// `--from` is not a world snapshot.
    #[error("{} is not a world snapshot: `wio shrink` shrinks the faults of worlds (wio sim --snapshot-at)", .from.display())]
    NotAWorld {
        /// The snapshot given.
        from: PathBuf,
    },
    /// The shrink would need more probes than `--max-probes`.
    #[error("the shrink needs more than --max-probes {max} probes; raise it")]
    TooManyProbes {
        /// The limit.
        max: usize,
    },
    /// `--promise` matches no promise of the world.
    #[error("the world states no promise containing {text:?}")]
    NoSuchPromise {
        /// The text looked for.
        text: String,
    },
    /// The branch breaks no promise.
    #[error("{branch} breaks no promise from {}: nothing to shrink", .from.display())]
    NothingBroken {
        /// The branch ("seed 7", "path 7@1000,3").
        branch: String,
        /// The snapshot it runs from.
        from: PathBuf,
    },
    /// The branch keeps the promise asked for.
    #[error("{branch} keeps the promise {promise:?}: nothing to shrink")]
    PromiseKept {
        /// The branch.
        branch: String,
        /// The promise's message.
        promise: String,
    },
    /// `wio verify` given a single machine's report.
    #[error("{} is a report of a single machine: `wio verify` re-runs worlds", .path.display())]
    SingleMachine {
        /// The report.
        path: PathBuf,
    },
    /// `wio verify` given a plan without a seed.
    #[error("{} names no seed (plans `wio shrink` writes do)", .path.display())]
    NoSeed {
        /// The plan.
        path: PathBuf,
    },
    /// `wio verify` given nothing to re-run.
    #[error("nothing to verify: the reports have no failing seed and no --plan was given")]
    NothingToVerify,
}
