//! Why a report read from a file cannot be one `wio explore` wrote.

/// What is impossible about a report (its Display follows "report FILE: ").
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReportCheckError {
    /// The seed range is empty or larger than an exploration takes.
    #[error("has seed range {start}..{end} (non-empty, at most {max} seeds)")]
    SeedRange {
        /// First seed.
        start: u64,
        /// One past the last seed.
        end: u64,
        /// The most seeds an exploration takes.
        max: u64,
    },
    /// The shard count is 0 or larger than an exploration splits into.
    #[error("has {count} shards (1 to {max})")]
    ShardCount {
        /// The claimed count.
        count: u64,
        /// The most shards an exploration splits into.
        max: u64,
    },
    /// A shard index is out of range or listed twice.
    #[error("lists shard {index} of {count} twice or out of range")]
    Shard {
        /// The shard index.
        index: u64,
        /// The shard count.
        count: u64,
    },
    /// A result's seed is not after the one before.
    #[error("has seed {seed} out of order or twice")]
    SeedOrder {
        /// The seed.
        seed: u64,
    },
    /// A result's seed is outside the report's seed range.
    #[error("has seed {seed} outside its seeds {start}..{end}")]
    SeedOutside {
        /// The seed.
        seed: u64,
        /// First seed of the range.
        start: u64,
        /// One past the last seed of the range.
        end: u64,
    },
    /// A result's seed belongs to a shard the report does not cover.
    #[error("has seed {seed} of a shard it does not cover")]
    SeedShard {
        /// The seed.
        seed: u64,
    },
}
