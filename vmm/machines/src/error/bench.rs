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
    /// `--throughput-branches` of 0.
    #[error("--throughput-branches must be at least 1")]
    ThroughputBranches,
    /// Search benchmark sizes out of range.
    #[error("--search-budget and --search-roots must be at least 1, --search-depths 1 to 8")]
    SearchSizes,
    /// `--rounds` or `--exits` of 0.
    #[error("--rounds and --exits must be at least 1")]
    RoundsExits,
}

/// A benchmark whose own guest or world did not behave as the benchmark needs (exit 107,
/// or 101 when the guest's artifacts are older than the benchmark).
#[derive(Debug, thiserror::Error)]
pub enum BenchFailure {
    /// The guest never reached a point the benchmark needs: its artifacts predate it.
    #[error(
        "the {guest} never {reached} (is its initramfs older than {needs}? re-run images/build-all-riscv64.sh)"
    )]
    StaleGuest {
        /// Which guest (`"race guest"`).
        guest: &'static str,
        /// What it never did (`"printed \"race: start\""`).
        reached: String,
        /// The program or option the benchmark needs of it (`"wio-race"`).
        needs: &'static str,
    },
    /// The guest ended before the benchmark had what it measures.
    #[error("the {guest} ended before {needed}: {how}")]
    EndedEarly {
        /// Which guest.
        guest: &'static str,
        /// What the benchmark needed of it (`"10000000000 ns"`).
        needed: String,
        /// How it ended.
        how: String,
    },
    /// A bench world ended with an error.
    #[error("the bench world ended with wio exit {code}:\n{summary}")]
    WorldFailed {
        /// Its exit code.
        code: i32,
        /// Its summary.
        summary: String,
    },
    /// A branch did not reach the point it is measured to.
    #[error("{branch} did not reach {what}")]
    BranchMissed {
        /// Which branch (`"race branch 3"`).
        branch: String,
        /// What it should have reached, and why it did not when known.
        what: String,
    },
    /// A reverse step landed elsewhere than one step back.
    #[error("reverse step from {from} landed at {landed}")]
    ReverseStep {
        /// The position stepped from.
        from: u64,
        /// Where it landed.
        landed: u64,
    },
    /// A world built into the benchmark did not parse.
    #[error("the {which} world: {source}")]
    World {
        /// Which (`"outage"`).
        which: &'static str,
        /// Why.
        #[source]
        source: super::ScenarioError,
    },
}
