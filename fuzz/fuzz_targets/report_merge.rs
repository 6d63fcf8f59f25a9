//! Hostile shard reports: `wio report merge` over the fuzzer's bytes as up to four report
//! files (split at NUL bytes, which JSON never contains), some of them missing, with and
//! without --allow-partial.
//!
//! Invariants: no panic (arithmetic included: build with debug assertions); every refusal
//! is an error value the binary turns into its documented exit code; bounded memory and
//! time (a report claiming 2^64 shards or seeds must be refused, not enumerated); a
//! merged report is consistent: its results in seed order, one per seed, each inside
//! the question's seed range and in one of the merged shards.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;
use std::sync::OnceLock;

/// A directory of this process for the report files.
fn dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("wio-fuzz-merge-{}", std::process::id()));
        std::fs::create_dir_all(&d).expect("create the report directory");
        d
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&flags, body)) = data.split_first() else {
        return;
    };
    let mut paths = Vec::new();
    for (i, part) in body.split(|&b| b == 0).take(4).enumerate() {
        let p = dir().join(format!("shard{i}.json"));
        // Bit i of the flags: this shard's file is missing.
        if flags & (1 << i) != 0 {
            let _ = std::fs::remove_file(&p);
        } else {
            std::fs::write(&p, part).expect("write a report");
        }
        paths.push(p);
    }
    let allow_partial = flags & 0x80 != 0;
    if let Ok(m) = wio_search::explore::merge(&paths, allow_partial) {
        let (count, shards) = &m.shards;
        let seeds = &m.question.seeds;
        for pair in m.results.windows(2) {
            assert!(pair[0].seed < pair[1].seed, "results out of seed order");
        }
        for r in &m.results {
            assert!(
                seeds.start <= r.seed && r.seed < seeds.end,
                "seed {} outside {}..{}",
                r.seed,
                seeds.start,
                seeds.end
            );
            assert!(
                shards.contains(&((r.seed - seeds.start) % count)),
                "seed {} of no merged shard",
                r.seed
            );
        }
        let _ = serde_json::to_string(&m);
    }
});
