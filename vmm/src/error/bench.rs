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
}
