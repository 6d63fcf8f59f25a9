//! A seed of an exploration report run again with its trace written (`wio diff --report`):
//! by the result's own `reproduce` command, so whatever kind of branch it was (a machine's,
//! a world's, a guided branch's path) comes back the way the report says to bring it back.

use std::path::{Path, PathBuf};
use wio_machines::error::WioError;

/// A seed of `wio diff --report` as the command line gave it.
pub(crate) fn seed_arg(seed: &Path) -> Result<u64, WioError> {
    let text = seed.to_string_lossy();
    text.parse().map_err(|_| {
        WioError::Usage(format!(
            "wio diff --report: {text:?} is not a seed of the report (a number)"
        ))
    })
}

/// Runs seed `n` of the report at `report` again, its trace going under `out`; returns the
/// trace (a `wio run --trace` file or a `wio sim --trace-dir` folder).
pub(crate) fn seed_trace(report: &Path, n: u64, out: &Path) -> Result<PathBuf, WioError> {
    let bad = |reason: String| WioError::ArtifactFormat {
        what: "exploration report",
        path: report.to_path_buf(),
        reason,
    };
    let r = wio_search::explore::read_report(report)?;
    let result = r.results.iter().find(|x| x.seed == n).ok_or_else(|| {
        let (lo, hi) = (
            r.results.first().map_or(0, |x| x.seed),
            r.results.last().map_or(0, |x| x.seed),
        );
        bad(format!(
            "has no seed {n} (its {} results are seeds {lo} to {hi})",
            r.results.len()
        ))
    })?;
    let words = wio_world::scenario::shell_split(&result.reproduce)
        .ok()
        .filter(|w| w.len() > 2 && w[0] == "wio" && (w[1] == "run" || w[1] == "sim"))
        .ok_or_else(|| {
            bad(format!(
                "seed {n}'s reproduce line {:?} is not a wio run or wio sim command",
                result.reproduce
            ))
        })?;
    std::fs::create_dir_all(out).map_err(|source| WioError::Output {
        what: "wio diff's scratch folder",
        path: out.to_path_buf(),
        source,
    })?;
    let (flag, trace) = if words[1] == "sim" {
        ("--trace-dir", out.join("traces"))
    } else {
        ("--trace", out.join("trace.jsonl"))
    };
    let exe = std::env::current_exe().map_err(|source| WioError::Host {
        what: "finding the wio binary",
        source,
    })?;
    eprintln!("wio: seed {n} again: {}", result.reproduce);
    let summary = out.join("summary.json");
    let o = std::process::Command::new(exe)
        .args(&words[1..])
        .arg(flag)
        .arg(&trace)
        .arg("--summary-json")
        .arg(&summary)
        .arg("--quiet")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .output()
        .map_err(|source| WioError::Host {
            what: "running a seed of the report again",
            source,
        })?;
    if !trace.exists() {
        let e = String::from_utf8_lossy(&o.stderr);
        let last = e.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("");
        return Err(bad(format!(
            "seed {n} run again wrote no trace (run it where the exploration ran: the snapshot's path is as it was given): {last}"
        )));
    }
    // The run again should be the report's run: say so when it is not (another build, or
    // a determinism failure), never compare something else silently.
    let again = std::fs::read_to_string(&summary)
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|v| {
            v.get("world_trace_hash")
                .or_else(|| v.get("trace_hash"))
                .and_then(|h| h.as_str().map(str::to_string))
        })
        .unwrap_or_default();
    if again != result.trace_hash {
        eprintln!(
            "wio: warning: seed {n} ran differently from the report (trace {}, the report has {}): another build or guest, or a run that is not deterministic",
            &again[..again.len().min(16)],
            &result.trace_hash[..result.trace_hash.len().min(16)]
        );
    }
    Ok(trace)
}

#[cfg(test)]
mod tests {
    use wio_world::scenario::shell_split as split;

    #[test]
    fn reproduce_lines_split_as_a_shell_would() {
        assert_eq!(
            split("wio sim --from 'my snap'\\''s.snap' --seed 3 --until 'console:a b'").unwrap(),
            [
                "wio",
                "sim",
                "--from",
                "my snap's.snap",
                "--seed",
                "3",
                "--until",
                "console:a b"
            ]
        );
        assert!(split("wio run --from 'open").is_err());
    }
}
