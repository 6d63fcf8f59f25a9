//! Checking a report read from a file: it must be one `wio explore` could have written,
//! so `report merge` never takes a result outside its seeds nor enumerates an absurd
//! shard list (found by fuzzing `report merge`).

use super::{Report, MAX_SEEDS, MAX_SHARDS};
use wio_machines::error::ReportCheckError;

impl Report {
    /// Why the report cannot be one `wio explore` wrote, if it cannot: an empty or
    /// oversized seed range or shard count, a shard index out of range or given twice, a
    /// result out of seed order, outside the seed range or of a shard the report does not
    /// cover.
    pub fn check(&self) -> std::result::Result<(), ReportCheckError> {
        let seeds = self.question.seeds;
        if seeds.end <= seeds.start || seeds.end - seeds.start > MAX_SEEDS {
            return Err(ReportCheckError::SeedRange {
                start: seeds.start,
                end: seeds.end,
                max: MAX_SEEDS,
            });
        }
        let (count, shards) = &self.shards;
        if !(1..=MAX_SHARDS).contains(count) {
            return Err(ReportCheckError::ShardCount {
                count: *count,
                max: MAX_SHARDS,
            });
        }
        let mut covered = std::collections::BTreeSet::new();
        for &i in shards {
            if i >= *count || !covered.insert(i) {
                return Err(ReportCheckError::Shard {
                    index: i,
                    count: *count,
                });
            }
        }
        let mut last = None;
        for r in &self.results {
            if last.is_some_and(|l| r.seed <= l) {
                return Err(ReportCheckError::SeedOrder { seed: r.seed });
            }
            last = Some(r.seed);
            if !(seeds.start..seeds.end).contains(&r.seed) {
                return Err(ReportCheckError::SeedOutside {
                    seed: r.seed,
                    start: seeds.start,
                    end: seeds.end,
                });
            }
            if !covered.contains(&((r.seed - seeds.start) % count)) {
                return Err(ReportCheckError::SeedShard { seed: r.seed });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::*;

    /// Reports no exploration could write are refused on reading (found by fuzzing
    /// `report merge`: a result outside the seed range was merged, and a claimed shard
    /// count of 2^64 - 1 would have been enumerated).
    #[test]
    fn impossible_reports_are_refused() {
        let report = |seeds: (u64, u64), shards: (u64, &[u64]), results: &[u64]| {
            let results: Vec<String> = results
                .iter()
                .map(|s| {
                    format!(
                        r#"{{"seed":{s},"ended":"exit","exit_status":0,"error":null,"matched":[],"virtual_ns":1,"trace_hash":"x","failed":false,"reproduce":"wio run --seed {s}"}}"#
                    )
                })
                .collect();
            let text = format!(
                r#"{{"format":1,"question":{{"snapshot":"s","snapshot_sha256":"x","seeds":{{"start":{},"end":{}}},"until":null,"matches":[],"fail_on":[],"max_virtual_ns":1}},"shards":[{},{:?}],"complete":true,"results":[{}]}}"#,
                seeds.0,
                seeds.1,
                shards.0,
                shards.1,
                results.join(",")
            );
            serde_json::from_str::<Report>(&text).expect("parses")
        };
        assert_eq!(report((0, 4), (2, &[1]), &[1, 3]).check(), Ok(()));
        assert_eq!(report((0, 4), (1, &[0]), &[]).check(), Ok(()));
        for (bad, why) in [
            (report((0, 2), (1, &[0]), &[5]), "outside"),
            (report((2, 2), (1, &[0]), &[]), "seed range"),
            (report((0, u64::MAX), (1, &[0]), &[]), "seed range"),
            (report((0, 4), (u64::MAX, &[0]), &[]), "shards"),
            (report((0, 4), (0, &[]), &[]), "shards"),
            (report((0, 4), (2, &[2]), &[]), "out of range"),
            (report((0, 4), (2, &[1, 1]), &[]), "twice"),
            (report((0, 4), (2, &[1]), &[3, 1]), "out of order"),
            (report((0, 4), (2, &[1]), &[1, 1]), "out of order"),
            (report((0, 4), (2, &[1]), &[2]), "does not cover"),
        ] {
            let e = bad.check().expect_err(why);
            assert!(e.to_string().contains(why), "{e:?} should say {why:?}");
        }
        assert!(parse_shard("0/1000001").is_err());
    }
}
