//! Why a guided exploration's path (`--path SEED@NS,...,SEED`) is refused.

use super::WioError;

/// A path that does not parse, or a step of it that does not fit the snapshot (a
/// machine's or a world's).
#[derive(Debug, thiserror::Error)]
pub enum PathError {
    /// The text is not a path.
    #[error("--path {text:?}: {why}; a path is SEED@NS,...,SEED as a guided exploration's report gives it")]
    Syntax {
        /// The text as given.
        text: String,
        /// What is wrong with it.
        why: PathSyntax,
    },
    /// A step of the path failed as a usage error would (its run ended before its moment).
    #[error("step {step} of {path}: {source}")]
    Step {
        /// The step (from 1).
        step: usize,
        /// The whole path.
        path: String,
        /// Why the step failed.
        #[source]
        source: Box<WioError>,
    },
    /// A path's step is not after the snapshot it starts from.
    #[error("the path does not fit the snapshot: its step at {at_ns} ns is not after the snapshot point ({start_ns} ns)")]
    StepNotAfter {
        /// The step's time (virtual ns).
        at_ns: u64,
        /// The snapshot's point (virtual ns).
        start_ns: u64,
    },
    /// A world path's step cannot be kept: a node had ended with an error.
    #[error("the path does not fit the snapshot: seed {seed}'s world cannot be kept at {at_ns} ns (a node had ended with an error)")]
    WorldNotKept {
        /// The step's seed.
        seed: u64,
        /// The step's time (virtual ns).
        at_ns: u64,
    },
    /// A world path's step: its world ended before the step's time.
    #[error("the path does not fit the snapshot: seed {seed}'s world ended at {ended_ns} ns before its step at {at_ns} ns")]
    WorldEnded {
        /// The step's seed.
        seed: u64,
        /// When the world ended (virtual ns).
        ended_ns: u64,
        /// The step's time (virtual ns).
        at_ns: u64,
    },
    /// A path's step: its branch ended before the step's time.
    #[error("the path does not fit the snapshot: seed {seed}'s branch ended at {ended_ns} ns ({how}) before its step at {at_ns} ns")]
    BranchEnded {
        /// The step's seed.
        seed: u64,
        /// When the branch ended (virtual ns).
        ended_ns: u64,
        /// How it ended ("guest exit status 3", "at its --until line").
        how: String,
        /// The step's time (virtual ns).
        at_ns: u64,
    },
}

/// What is wrong with a path's text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathSyntax {
    /// More steps than a path takes.
    #[error("more than {max} steps")]
    TooManySteps {
        /// The most steps a path takes.
        max: usize,
    },
    /// A seed or a time is not a number.
    #[error("{what} {text:?} is not a number")]
    NotANumber {
        /// `"seed"` or `"virtual time"`.
        what: &'static str,
        /// The text.
        text: String,
    },
    /// Nothing at all.
    #[error("it is empty")]
    Empty,
    /// A step with no `@NS`.
    #[error("step {step:?} has no @NS")]
    NoTime {
        /// The step's text.
        step: String,
    },
    /// Step times that do not increase.
    #[error("its steps' times must increase ({before} ns, then {after} ns)")]
    TimesNotIncreasing {
        /// The earlier step's time.
        before: u64,
        /// The later step's time.
        after: u64,
    },
    /// The last part carries a time.
    #[error("its last part is the seed to the end, without @NS")]
    LastHasTime,
}
