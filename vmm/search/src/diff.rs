//! `wio diff A B`: two runs compared structurally, trace by trace (a machine's trace file,
//! or a folder `wio sim --trace-dir` wrote: the world's trace and each node's). Two traces
//! are structurally equal when they hold the same events in the same order, each with
//! the same fields, leaving out what only chains them (`n`, `prev`); on request also their
//! virtual times (`t`, and the exit digests `io`, which fold times in) or their payloads
//! (every field but the event's kind). The first difference of each trace is reported with
//! its virtual time and the events before it, and a count by kind of what differs. The
//! `seed` fields (what the run was asked for, not what it did) are never compared.

use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use wio_machines::error::{Result, WioError};

/// What a comparison leaves out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ignore {
    /// Virtual times (`t`) and exit digests (`io`).
    pub times: bool,
    /// Everything but each event's kind (`ev`).
    pub payloads: bool,
    /// When not empty: only events of these kinds are compared (`console`, ...).
    pub only: Vec<String>,
}

/// One trace of a run: its name (the file's stem) and its events.
#[derive(Debug, Clone)]
pub struct Trace {
    /// `world`, a node's name, or the machine trace file's stem.
    pub name: String,
    /// Its lines, parsed.
    pub events: Vec<Value>,
}

/// Where two traces part.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Divergence {
    /// The first differing event's index (from 0).
    pub index: usize,
    /// Its virtual time, ns (A's, or B's when A has none there).
    pub at_ns: Option<u64>,
    /// A's event there (None: A ended).
    pub a: Option<Value>,
    /// B's event there (None: B ended).
    pub b: Option<Value>,
    /// The events both had just before it.
    pub before: Vec<Value>,
}

/// One trace compared.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TraceDiff {
    /// Its name.
    pub name: String,
    /// Events in A (None: A has no such trace).
    pub a_events: Option<usize>,
    /// Events in B (None: B has no such trace).
    pub b_events: Option<usize>,
    /// Where they part (None: structurally equal, or one side missing).
    pub first: Option<Divergence>,
    /// Event kinds whose counts differ: kind -> (in A, in B).
    pub kinds: BTreeMap<String, (usize, usize)>,
}

impl TraceDiff {
    /// Whether both sides hold it and it is structurally equal.
    pub fn equal(&self) -> bool {
        self.a_events.is_some() && self.b_events.is_some() && self.first.is_none()
    }
}

/// Two runs compared.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Diff {
    /// Whether every trace is structurally equal.
    pub equal: bool,
    /// Each trace, by name.
    pub traces: Vec<TraceDiff>,
}

/// Reads a run's traces: a trace file, or every `*.jsonl` of a folder (by name).
pub fn load(path: &Path) -> Result<Vec<Trace>> {
    let io = |source| WioError::ArtifactIo {
        what: "trace",
        path: path.to_path_buf(),
        source,
    };
    let files: Vec<PathBuf> = if path.is_dir() {
        let mut v: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(io)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
            .collect();
        v.sort();
        if v.is_empty() {
            return Err(WioError::ArtifactFormat {
                what: "trace folder",
                path: path.to_path_buf(),
                reason: "holds no trace (*.jsonl); write one with wio sim --trace-dir or wio run --trace".into(),
            });
        }
        v
    } else {
        vec![path.to_path_buf()]
    };
    files.iter().map(|f| read(f)).collect()
}

fn read(path: &Path) -> Result<Trace> {
    let text = std::fs::read_to_string(path).map_err(|source| WioError::ArtifactIo {
        what: "trace",
        path: path.to_path_buf(),
        source,
    })?;
    let events = text
        .lines()
        .enumerate()
        .map(|(i, l)| {
            let v: Value = serde_json::from_str(l).map_err(|e| WioError::ArtifactFormat {
                what: "trace",
                path: path.to_path_buf(),
                reason: format!("line {} is not JSON ({e})", i + 1),
            })?;
            if v.get("ev").and_then(Value::as_str).is_none() {
                return Err(WioError::ArtifactFormat {
                    what: "trace",
                    path: path.to_path_buf(),
                    reason: format!("line {} is not a trace event (no \"ev\")", i + 1),
                });
            }
            Ok(v)
        })
        .collect::<Result<Vec<_>>>()?;
    let name = path
        .file_stem()
        .map_or_else(|| "trace".into(), |s| s.to_string_lossy().into_owned());
    Ok(Trace { name, events })
}

/// An event as compared: without `n`, `prev` and `seed`, and what `ignore` leaves out.
fn shape(v: &Value, ignore: &Ignore) -> Value {
    let Value::Object(map) = v else {
        return v.clone();
    };
    let mut out = serde_json::Map::new();
    for (k, x) in map {
        let keep = match k.as_str() {
            // What chains the lines, and the seed the run was asked for: two seeds' runs
            // are compared by what they did.
            "n" | "prev" | "seed" => false,
            "ev" => true,
            "t" => !ignore.times,
            "io" => !ignore.times && !ignore.payloads,
            _ => !ignore.payloads,
        };
        if keep {
            out.insert(k.clone(), x.clone());
        }
    }
    Value::Object(out)
}

fn kind(v: &Value) -> String {
    v.get("ev")
        .and_then(Value::as_str)
        .unwrap_or("?")
        .to_string()
}

/// Compares two traces of one name (`context` events before the first difference).
fn compare(
    name: &str,
    a: Option<&Trace>,
    b: Option<&Trace>,
    ignore: &Ignore,
    context: usize,
) -> TraceDiff {
    let (Some(a), Some(b)) = (a, b) else {
        return TraceDiff {
            name: name.to_string(),
            a_events: a.map(|t| t.events.len()),
            b_events: b.map(|t| t.events.len()),
            first: None,
            kinds: BTreeMap::new(),
        };
    };
    // The events compared (`--only`), borrowed.
    fn kept<'t>(t: &'t Trace, only: &[String]) -> Vec<&'t Value> {
        t.events
            .iter()
            .filter(|v| only.is_empty() || only.contains(&kind(v)))
            .collect()
    }
    let (ka, kb) = (kept(a, &ignore.only), kept(b, &ignore.only));
    let sa: Vec<Value> = ka.iter().map(|v| shape(v, ignore)).collect();
    let sb: Vec<Value> = kb.iter().map(|v| shape(v, ignore)).collect();
    let first = (0..sa.len().max(sb.len()))
        .find(|&i| sa.get(i) != sb.get(i))
        .map(|i| Divergence {
            index: i,
            at_ns: ka
                .get(i)
                .or(kb.get(i))
                .and_then(|v| v.get("t"))
                .and_then(Value::as_u64),
            a: sa.get(i).cloned(),
            b: sb.get(i).cloned(),
            before: sa[i.saturating_sub(context)..i].to_vec(),
        });
    let mut counts: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for v in &ka {
        counts.entry(kind(v)).or_default().0 += 1;
    }
    for v in &kb {
        counts.entry(kind(v)).or_default().1 += 1;
    }
    counts.retain(|_, (x, y)| x != y);
    TraceDiff {
        name: name.to_string(),
        a_events: Some(ka.len()),
        b_events: Some(kb.len()),
        first,
        kinds: counts,
    }
}

/// Compares two runs' traces, trace by trace (by name).
pub fn diff(a: &[Trace], b: &[Trace], ignore: &Ignore, context: usize) -> Diff {
    let mut names: Vec<&str> = a.iter().chain(b).map(|t| t.name.as_str()).collect();
    names.sort();
    names.dedup();
    // Two single files of different names are one trace each: compare them as one.
    if a.len() == 1 && b.len() == 1 && a[0].name != b[0].name {
        let d = compare(&a[0].name, Some(&a[0]), Some(&b[0]), ignore, context);
        return Diff {
            equal: d.equal(),
            traces: vec![d],
        };
    }
    let traces: Vec<TraceDiff> = names
        .iter()
        .map(|n| {
            compare(
                n,
                a.iter().find(|t| t.name == *n),
                b.iter().find(|t| t.name == *n),
                ignore,
                context,
            )
        })
        .collect();
    Diff {
        equal: traces.iter().all(TraceDiff::equal),
        traces,
    }
}

impl Diff {
    /// The comparison in words: a paragraph per trace.
    pub fn human(&self) -> String {
        let mut s = String::new();
        let secs = |t: Option<u64>| {
            t.map_or_else(|| "?".to_string(), |t| format!("{:.6} s", t as f64 / 1e9))
        };
        for t in &self.traces {
            match (t.a_events, t.b_events) {
                (Some(n), None) => s.push_str(&format!("{}: only in A ({n} events)\n", t.name)),
                (None, Some(n)) => s.push_str(&format!("{}: only in B ({n} events)\n", t.name)),
                (Some(a), Some(b)) => match &t.first {
                    None => s.push_str(&format!("{}: same ({a} events)\n", t.name)),
                    Some(d) => {
                        s.push_str(&format!(
                            "{}: {a} events in A, {b} in B; first difference at event {} ({}):\n",
                            t.name,
                            d.index,
                            secs(d.at_ns)
                        ));
                        for v in &d.before {
                            s.push_str(&format!("     {v}\n"));
                        }
                        let side = |v: &Option<Value>| {
                            v.as_ref()
                                .map_or_else(|| "(ended)".to_string(), Value::to_string)
                        };
                        s.push_str(&format!("  A: {}\n  B: {}\n", side(&d.a), side(&d.b)));
                        if !t.kinds.is_empty() {
                            let k: Vec<String> = t
                                .kinds
                                .iter()
                                .map(|(k, (x, y))| format!("{k} {x}/{y}"))
                                .collect();
                            s.push_str(&format!(
                                "  event kinds that differ (A/B): {}\n",
                                k.join(", ")
                            ));
                        }
                    }
                },
                (None, None) => {}
            }
        }
        s.push_str(if self.equal {
            "structurally equal\n"
        } else {
            "different\n"
        });
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn t(name: &str, events: Vec<Value>) -> Trace {
        Trace {
            name: name.into(),
            events,
        }
    }

    #[test]
    fn traces_compare_by_structure_and_name_where_they_part() {
        let a = vec![
            t("world", vec![json!({"n":0,"t":0,"ev":"world","prev":"x"})]),
            t(
                "c",
                vec![
                    json!({"n":0,"t":5,"ev":"console","text":"GET /a","prev":"p"}),
                    json!({"n":1,"t":9,"ev":"exit","code":0,"io":"ab/2","prev":"q"}),
                ],
            ),
        ];
        let mut b = a.clone();
        b[1].events[1]["t"] = json!(10);
        b[1].events[1]["io"] = json!("cd/2");
        b[1].events[0]["prev"] = json!("other chain");
        let d = diff(&a, &b, &Ignore::default(), 2);
        assert!(!d.equal);
        let c = &d.traces[0];
        assert_eq!((c.name.as_str(), c.first.as_ref().unwrap().index), ("c", 1));
        assert_eq!(c.first.as_ref().unwrap().before.len(), 1);
        assert!(
            d.human()
                .contains("first difference at event 1 (0.000000 s)"),
            "{}",
            d.human()
        );
        let times = Ignore {
            times: true,
            ..Ignore::default()
        };
        assert!(
            diff(&a, &b, &times, 2).equal,
            "only times and digests differ"
        );
        // A changed payload: seen unless payloads are ignored.
        b[1].events[0]["text"] = json!("GET /b");
        assert!(!diff(&a, &b, &times, 2).equal);
        let kinds = Ignore {
            times: true,
            payloads: true,
            ..Ignore::default()
        };
        assert!(diff(&a, &b, &kinds, 2).equal);
        // Only the exits compared: the changed console line is not looked at.
        let exits = Ignore {
            times: true,
            only: vec!["exit".into()],
            ..Ignore::default()
        };
        assert!(diff(&a, &b, &exits, 2).equal);
        // A missing event, and a trace one side lacks.
        b[1].events.pop();
        let d = diff(&a, &b, &kinds, 2);
        assert!(d.traces[0].first.as_ref().unwrap().b.is_none());
        assert_eq!(d.traces[0].kinds.get("exit"), Some(&(1, 0)));
        let d = diff(&a, &a[..1], &Ignore::default(), 2);
        assert!(!d.equal && d.human().contains("c: only in A"));
    }
}
