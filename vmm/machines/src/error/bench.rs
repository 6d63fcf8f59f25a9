//! Why a benchmark (`wio bench`) cannot run as asked.

/// A benchmark option that does not fit.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// `--search-forms` names a form the planted guest does not have.
    #[error("--search-forms: {form:?} is not a form of wio-planted ({known})")]
    SearchForm {
        /// The form named.
        form: String,
        /// The forms there are, comma-separated.
        known: String,
    },
    /// `--race-branches` of 0.
    #[error("--race-branches must be at least 1")]
    RaceBranches,
    /// Search benchmark sizes out of range.
    #[error("--search-budget and --search-roots must be at least 1, --search-depths 1 to 8")]
    SearchSizes,
    /// `--rounds` or `--exits` of 0.
    #[error("--rounds and --exits must be at least 1")]
    RoundsExits,
}
