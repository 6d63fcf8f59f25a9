//! Why a guided exploration's path (`--path SEED@NS,...,SEED`) is refused.

use super::WioError;

/// A path that does not parse, or a step of it that does not fit the snapshot.
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
