//! Which seeds an exploration runs: a seed range (`A..B`, `A..=B` or one seed) and the
//! shard (`i/N`) of it a task takes.

use serde::{Deserialize, Serialize};
use wio_machines::error::{ExploreError, Result, WioError};

/// Most seeds one exploration (or shard) may cover.
pub const MAX_SEEDS: u64 = 100_000_000;

/// A seed range: `A..B` (B excluded), `A..=B` (B included) or one seed `A`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeedRange {
    /// First seed.
    pub start: u64,
    /// One past the last seed.
    pub end: u64,
}

impl SeedRange {
    /// Parses the `--seeds` syntax.
    pub fn parse(s: &str) -> Result<SeedRange> {
        let bad = || -> WioError { ExploreError::BadSeeds { text: s.into() }.into() };
        let num = |t: &str| t.trim().parse::<u64>().map_err(|_| bad());
        let (start, end) = if let Some((a, b)) = s.split_once("..=") {
            (num(a)?, num(b)?.checked_add(1).ok_or_else(bad)?)
        } else if let Some((a, b)) = s.split_once("..") {
            (num(a)?, num(b)?)
        } else {
            let a = num(s)?;
            (a, a.checked_add(1).ok_or_else(bad)?)
        };
        if end <= start {
            return Err(ExploreError::EmptySeeds { text: s.into() }.into());
        }
        if end - start > MAX_SEEDS {
            return Err(ExploreError::TooManySeeds {
                text: s.into(),
                max: MAX_SEEDS,
            }
            .into());
        }
        Ok(SeedRange { start, end })
    }

    /// The seeds of shard `index` of `count`.
    pub fn shard(&self, index: u64, count: u64) -> impl Iterator<Item = u64> + '_ {
        (self.start..self.end).filter(move |s| (s - self.start) % count == index)
    }
}

/// Most shards an exploration is split into (a report claiming more is refused, so a
/// merge never enumerates an absurd shard list).
pub const MAX_SHARDS: u64 = 1_000_000;

/// Parses `i/N` (0 <= i < N).
pub fn parse_shard(s: &str) -> Result<(u64, u64)> {
    let bad = || -> WioError { ExploreError::BadShard { text: s.into() }.into() };
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let (i, n): (u64, u64) = (
        i.trim().parse().map_err(|_| bad())?,
        n.trim().parse().map_err(|_| bad())?,
    );
    if n == 0 || i >= n {
        return Err(bad());
    }
    if n > MAX_SHARDS {
        return Err(ExploreError::TooManyShards {
            text: s.into(),
            max: MAX_SHARDS,
        }
        .into());
    }
    Ok((i, n))
}
