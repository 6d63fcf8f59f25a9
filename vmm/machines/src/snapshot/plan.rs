//! When a run takes snapshots (`--snapshot-at`) and where it writes them.
//!
//! Snapshots are taken between two steps of the run loop, at the first point
//! at or after the requested moment: after the engine exit at which virtual
//! time reached the requested time, the exit whose console output completed
//! the pattern's line, or the guest's own request (SBI on riscv64, the
//! paravirt port on x86-64). Taking one changes nothing in the run.

use crate::error::SnapshotError;
use std::path::PathBuf;

/// One requested snapshot point.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SnapshotAt {
    /// Virtual time in ns.
    Time(u64),
    /// The first console line containing this text.
    Console(String),
    /// The guest asks (every request, up to the number of `guest` points given).
    Guest,
    /// A program in the guest declares its setup complete (the promise channel).
    SetupComplete,
}

impl SnapshotAt {
    /// Parses `2s`, `1500ms`, `250us`, `1000ns`, `console:TEXT`, `guest` or
    /// `setup-complete`.
    pub fn parse(s: &str) -> std::result::Result<SnapshotAt, SnapshotError> {
        if s == "guest" {
            return Ok(SnapshotAt::Guest);
        }
        if s == "setup-complete" {
            return Ok(SnapshotAt::SetupComplete);
        }
        if let Some(text) = s.strip_prefix("console:") {
            if text.is_empty() {
                return Err(SnapshotError::ConsoleNoText);
            }
            return Ok(SnapshotAt::Console(text.to_string()));
        }
        parse_duration_ns(s)
            .map(SnapshotAt::Time)
            .ok_or_else(|| SnapshotError::BadPoint {
                text: s.to_string(),
            })
    }

    /// How the snapshot's metadata describes the point.
    pub fn describe(&self) -> String {
        match self {
            SnapshotAt::Time(ns) => format!("virtual time >= {ns} ns"),
            SnapshotAt::Console(t) => format!("console line containing {t:?}"),
            SnapshotAt::Guest => "guest request".into(),
            SnapshotAt::SetupComplete => "setup complete".into(),
        }
    }
}

/// Moves every text of `watch` that `line` contains to `hits` (console watches: snapshot
/// points, `--until`, `--match`).
pub fn take_matches(watch: &mut Vec<String>, hits: &mut Vec<String>, line: &str) {
    let mut i = 0;
    while i < watch.len() {
        if line.contains(watch[i].as_str()) {
            hits.push(watch.remove(i));
        } else {
            i += 1;
        }
    }
}

/// `1.5s`, `20ms`, `7us`, `100ns` or a plain number of ns.
pub fn parse_duration_ns(s: &str) -> Option<u64> {
    let (num, scale) = if let Some(n) = s.strip_suffix("ns") {
        (n, 1.0)
    } else if let Some(n) = s.strip_suffix("us") {
        (n, 1e3)
    } else if let Some(n) = s.strip_suffix("ms") {
        (n, 1e6)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1e9)
    } else {
        (s, 1.0)
    };
    if let Ok(v) = num.parse::<u64>() {
        return v.checked_mul(scale as u64);
    }
    let v: f64 = num.parse().ok()?;
    let ns = v * scale;
    (ns.is_finite() && (0.0..1.8e19).contains(&ns)).then_some(ns.round() as u64)
}

/// The run's snapshot requests.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SnapshotPlan {
    /// Points still to come, in the order given.
    pub at: Vec<SnapshotAt>,
    /// File name template: `{seed}`, `{ns}` and `{n}` (1, 2, ...) are filled in.
    pub out: String,
}

/// Default `--snapshot-out`.
pub const DEFAULT_OUT: &str = "wio-{seed}-{ns}.snap";

impl SnapshotPlan {
    /// The file for the `n`-th snapshot (1-based) at `ns` of seed `seed`.
    pub fn path(&self, n: usize, seed: u64, ns: u64) -> PathBuf {
        let mut p = self
            .out
            .replace("{seed}", &seed.to_string())
            .replace("{ns}", &ns.to_string())
            .replace("{n}", &n.to_string());
        if n > 1 && p == self.out {
            // Several snapshots and a fixed name: number them rather than overwrite.
            p = format!("{p}.{n}");
        }
        PathBuf::from(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_points() {
        assert_eq!(
            SnapshotAt::parse("2s").unwrap(),
            SnapshotAt::Time(2_000_000_000)
        );
        assert_eq!(
            SnapshotAt::parse("1.5s").unwrap(),
            SnapshotAt::Time(1_500_000_000)
        );
        assert_eq!(
            SnapshotAt::parse("20ms").unwrap(),
            SnapshotAt::Time(20_000_000)
        );
        assert_eq!(SnapshotAt::parse("7us").unwrap(), SnapshotAt::Time(7_000));
        assert_eq!(SnapshotAt::parse("100").unwrap(), SnapshotAt::Time(100));
        assert_eq!(SnapshotAt::parse("guest").unwrap(), SnapshotAt::Guest);
        assert_eq!(
            SnapshotAt::parse("console:ready now").unwrap(),
            SnapshotAt::Console("ready now".into())
        );
        for bad in ["", "console:", "-1s", "abc", "1e30s", "nan"] {
            assert!(SnapshotAt::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn names_files() {
        let p = SnapshotPlan {
            at: vec![],
            out: DEFAULT_OUT.into(),
        };
        assert_eq!(p.path(1, 7, 99), PathBuf::from("wio-7-99.snap"));
        let fixed = SnapshotPlan {
            out: "s.snap".into(),
            ..p
        };
        assert_eq!(fixed.path(1, 7, 99), PathBuf::from("s.snap"));
        assert_eq!(fixed.path(2, 7, 99), PathBuf::from("s.snap.2"));
    }
}
