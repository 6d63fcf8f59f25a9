//! What a machine saw for the first time in its run, for guided exploration: each
//! (promise, condition) pair its programs evaluated, and each console line shape (the line
//! with its digits masked). A machine reports these marks only once it is asked to observe
//! ([`crate::machine::Machine::observe`]); they are functions of the run alone, so a branch
//! marks the same things at the same step boundaries every time it runs.
//!
//! The explorer keeps the marks of the whole exploration; a branch whose marks are new
//! there keeps a moment (an in-memory snapshot) to branch from again.

use crate::promises::Guidance;
use crate::trace::fnv1a;
use std::collections::{BTreeMap, BTreeSet};

/// Which signal a mark comes from.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Signal {
    /// A promise evaluated with a condition for the first time.
    Promise,
    /// A console line of a new shape.
    Console,
    /// User-mode code coverage seen by the engine: an edge whose hit count reached a new
    /// bucket (riscv64; see `wio_riscv::coverage`).
    Coverage,
    /// Coverage edges that programs instrumented for the Antithesis SDKs report through
    /// `libvoidstar.so`'s `notify_coverage` (`{"wio_coverage": {"module", "edge"}}` lines
    /// on the promise channel): free when no program reports any.
    SdkCoverage,
}

impl Signal {
    /// The name reports and `--signals` use.
    pub fn name(self) -> &'static str {
        match self {
            Signal::Promise => "promises",
            Signal::Console => "console",
            Signal::Coverage => "coverage",
            Signal::SdkCoverage => "sdk-coverage",
        }
    }

    /// Every signal, in the order `--signals` lists them.
    pub const ALL: [Signal; 4] = [
        Signal::Promise,
        Signal::Console,
        Signal::Coverage,
        Signal::SdkCoverage,
    ];
}

/// One thing a run saw for the first time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mark {
    /// Its signal.
    pub signal: Signal,
    /// Its identity within the signal (a hash of what it is).
    pub key: u64,
    /// How much a moment earns for it (the explorer's energy).
    pub weight: u32,
    /// What it is, for reports (bounded).
    pub what: String,
}

/// What a machine's promise channel observed for guided exploration: the marks not yet
/// taken, each guidance record's watermark in this run, and the SDK coverage edges seen.
#[derive(Debug, Default)]
pub struct Observed {
    /// Marks not yet taken.
    pub marks: Vec<Mark>,
    /// Whether promise firsts and guidance make marks ([`Signal::Promise`]).
    pub promises: bool,
    /// Whether SDK coverage edges make marks ([`Signal::SdkCoverage`]).
    pub sdk_edges: bool,
    /// The furthest bucket each guidance record's quantity reached in this run.
    watermarks: BTreeMap<String, u64>,
    /// SDK coverage edges seen in this run (their mark keys): each process reports an
    /// edge once, and another process of the run may report it again.
    edges: BTreeSet<u64>,
}

/// Most SDK coverage edges one run remembers (beyond it, new ones are not marked).
pub const MAX_SDK_EDGES: usize = 1 << 16;

/// Buckets per power of two of a guidance quantity (its score's bits below are dropped).
const GUIDANCE_BUCKET_SHIFT: u32 = 49;
/// Most guidance records one run keeps watermarks of.
const MAX_GUIDANCE: usize = 1024;

impl Observed {
    /// From now on `observed` (a machine's, created on first need) makes marks of what its
    /// promise channel sees of `signals`: promise firsts and guidance, SDK coverage edges.
    pub fn watch(observed: &mut Option<Observed>, signals: &[Signal]) {
        if signals.contains(&Signal::Promise) {
            observed.get_or_insert_with(Observed::default).promises = true;
        }
        if signals.contains(&Signal::SdkCoverage) {
            observed.get_or_insert_with(Observed::default).sdk_edges = true;
        }
    }

    /// The marks `observed` made since the last call.
    pub fn take(observed: &mut Option<Observed>) -> Vec<Mark> {
        observed
            .as_mut()
            .map(|o| std::mem::take(&mut o.marks))
            .unwrap_or_default()
    }

    /// An evaluation of a guidance record: a mark when its quantity went further (its
    /// direction) than the run had taken it, into a new bucket (8 per power of two), as a
    /// numeric watermark that improves.
    pub fn guidance(&mut self, g: &Guidance) {
        let bucket = g.score >> GUIDANCE_BUCKET_SHIFT;
        let room = self.watermarks.len() < MAX_GUIDANCE;
        let better = match self.watermarks.get_mut(&g.id) {
            Some(w) if *w >= bucket => false,
            Some(w) => {
                *w = bucket;
                true
            }
            None if room => {
                self.watermarks.insert(g.id.clone(), bucket);
                true
            }
            None => false,
        };
        if better {
            self.marks.push(Mark::guidance(&g.id, &g.message, bucket));
        }
    }

    /// Edge `edge` of module `module`, reported by an instrumented program: a mark the first
    /// time this run sees it (when SDK coverage is observed).
    pub fn sdk_edge(&mut self, module: &str, edge: u64) {
        if !self.sdk_edges {
            return;
        }
        let mark = Mark::sdk_edge(module, edge);
        if self.edges.len() < MAX_SDK_EDGES && self.edges.insert(mark.key) {
            self.marks.push(mark);
        }
    }
}

/// Energy of a `sometimes` or `reachable` promise first true: what a user marked as a
/// rare state worth reaching.
pub const WEIGHT_SOMETIMES: u32 = 32;
/// Energy of any other (promise, condition) pair first seen.
pub const WEIGHT_PROMISE: u32 = 16;
/// Energy of a guidance record's quantity pushed further than the run had pushed it, into
/// a new bucket.
pub const WEIGHT_GUIDANCE: u32 = 8;
/// Energy of a console line of a new shape.
pub const WEIGHT_CONSOLE: u32 = 4;
/// Energy of new code coverage (an edge, or an edge's hit count in a new bucket).
pub const WEIGHT_COVERAGE: u32 = 4;
/// Longest `what` kept.
const MAX_WHAT: usize = 120;
/// Most line shapes one run remembers (beyond it, new shapes are not marked).
pub const MAX_SHAPES: usize = 4096;

fn bounded(mut s: String) -> String {
    if s.len() > MAX_WHAT {
        let mut cut = MAX_WHAT;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        s.push_str("...");
    }
    s
}

impl Mark {
    /// Promise `id` (with `message`) evaluated with `condition` for the first time in the
    /// run; `rare` for a `sometimes` or `reachable` promise (true is what its author hoped
    /// to see).
    pub fn promise(id: &str, message: &str, rare: bool, condition: bool) -> Mark {
        let mut key_text = Vec::with_capacity(id.len() + 2);
        key_text.extend_from_slice(id.as_bytes());
        key_text.extend_from_slice(if condition { b"\0t" } else { b"\0f" });
        Mark {
            signal: Signal::Promise,
            key: fnv1a(&key_text),
            weight: if condition && rare {
                WEIGHT_SOMETIMES
            } else {
                WEIGHT_PROMISE
            },
            what: bounded(format!("promise {message:?} {condition}")),
        }
    }

    /// The mark of a console line's shape.
    pub fn console(line: &str) -> Mark {
        let shape = shape(line);
        Mark {
            signal: Signal::Console,
            key: fnv1a(shape.as_bytes()),
            weight: WEIGHT_CONSOLE,
            what: bounded(format!("console {shape:?}")),
        }
    }

    /// The mark of guidance record `id` (with `message`) whose quantity reached `bucket`
    /// (see [`Observed::guidance`]).
    pub fn guidance(id: &str, message: &str, bucket: u64) -> Mark {
        let mut key_text = b"guidance\0".to_vec();
        key_text.extend_from_slice(id.as_bytes());
        key_text.extend_from_slice(&bucket.to_le_bytes());
        Mark {
            signal: Signal::Promise,
            key: fnv1a(&key_text),
            weight: WEIGHT_GUIDANCE,
            what: bounded(format!("guidance {message:?} further (bucket {bucket:#x})")),
        }
    }

    /// The mark as node `node` (named `name`) of a world saw it: its console shapes and its
    /// code coverage are its own (the same line or edge on another node is another behaviour
    /// of the world); a promise holds across the world, so promise marks stay as they are.
    pub fn of_node(mut self, node: usize, name: &str) -> Mark {
        if self.signal != Signal::Promise {
            let mut bytes = self.key.to_le_bytes().to_vec();
            bytes.extend_from_slice(&(node as u64).to_le_bytes());
            self.key = fnv1a(&bytes);
            self.what = bounded(format!("{name}: {}", self.what));
        }
        self
    }

    /// The mark of a coverage counter that reached a new bucket (`wio_riscv::coverage`:
    /// edge index << 4 | bucket).
    pub fn edge(fresh: u32) -> Mark {
        Mark {
            signal: Signal::Coverage,
            key: u64::from(fresh),
            weight: WEIGHT_COVERAGE,
            what: format!("edge {:#06x} hit {}", fresh >> 4, bucket_name(fresh & 0xf)),
        }
    }

    /// The mark of edge `edge` of module `module` reported through the SDK's
    /// `notify_coverage` (module: the program's or library's name; edge: its index there).
    pub fn sdk_edge(module: &str, edge: u64) -> Mark {
        let mut key_text = b"sdk-edge\0".to_vec();
        key_text.extend_from_slice(module.as_bytes());
        key_text.push(0);
        key_text.extend_from_slice(&edge.to_le_bytes());
        Mark {
            signal: Signal::SdkCoverage,
            key: fnv1a(&key_text),
            weight: WEIGHT_COVERAGE,
            what: bounded(format!("sdk edge {module}:{edge}")),
        }
    }

    /// Its identity across the exploration.
    pub fn id(&self) -> (Signal, u64) {
        (self.signal, self.key)
    }
}

/// How a coverage bucket reads: its count (1 to 8), or its range of counts.
fn bucket_name(b: u32) -> String {
    match b {
        0..=8 => b.to_string(),
        9 => "9-15".into(),
        10 => "16-31".into(),
        11 => "32-63".into(),
        12 => "64-127".into(),
        _ => "128+".into(),
    }
}

/// A line's shape: line ends trimmed, every run of ASCII digits one `#`, so counters,
/// times and addresses do not make every line new.
pub fn shape(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut in_digits = false;
    for c in line.trim_end_matches(['\r', '\n']).chars() {
        if c.is_ascii_digit() {
            if !in_digits {
                out.push('#');
            }
            in_digits = true;
        } else {
            in_digits = false;
            out.push(c);
        }
    }
    out
}

/// The console's side of observing: the shapes this run printed, and the new ones not yet
/// taken.
#[derive(Debug, Default)]
pub struct ShapeWatch {
    seen: BTreeSet<u64>,
    fresh: Vec<Mark>,
}

impl ShapeWatch {
    /// Notes a completed line.
    pub fn line(&mut self, text: &str) {
        if self.seen.len() >= MAX_SHAPES {
            return;
        }
        let mark = Mark::console(text);
        if self.seen.insert(mark.key) {
            self.fresh.push(mark);
        }
    }

    /// The new shapes since the last call, in the order they were printed.
    pub fn take(&mut self) -> Vec<Mark> {
        std::mem::take(&mut self.fresh)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sdk_edges_are_marked_once_a_run_and_only_when_observed() {
        let mut off = Observed::default();
        off.sdk_edge("prog", 1);
        assert!(off.marks.is_empty(), "not observed: no mark");
        let mut o = Observed {
            sdk_edges: true,
            ..Observed::default()
        };
        o.sdk_edge("prog", 1);
        o.sdk_edge("prog", 1);
        o.sdk_edge("prog", 2);
        o.sdk_edge("lib", 1);
        let keys: Vec<u64> = o.marks.iter().map(|m| m.key).collect();
        assert_eq!(
            keys.len(),
            3,
            "another process's report of a known edge is no mark"
        );
        assert_eq!(o.marks[0].what, "sdk edge prog:1");
        assert!(o.marks.iter().all(|m| m.signal == Signal::SdkCoverage));
        assert_ne!(keys[0], keys[2], "modules are told apart");
    }

    #[test]
    fn shapes_mask_digits_and_marks_are_distinct() {
        assert_eq!(
            shape("race: counter=1234 of 20000000\n"),
            "race: counter=# of #"
        );
        assert_eq!(shape("at 0x80200000"), "at #x#");
        assert_eq!(
            Mark::console("n=1\n").key,
            Mark::console("n=99").key,
            "one shape"
        );
        assert_ne!(Mark::console("a").key, Mark::console("b").key);
        let t = Mark::promise("p", "p", true, true);
        let f = Mark::promise("p", "p", true, false);
        assert_ne!(t.key, f.key);
        assert_eq!(t.weight, WEIGHT_SOMETIMES);
        assert_eq!(f.weight, WEIGHT_PROMISE);
        assert_eq!(Mark::promise("p", "p", false, true).weight, WEIGHT_PROMISE);
        let mut w = ShapeWatch::default();
        for l in ["x 1", "x 2", "y", "x 3"] {
            w.line(l);
        }
        let fresh: Vec<String> = w.take().into_iter().map(|m| m.what).collect();
        assert_eq!(fresh, vec!["console \"x #\"", "console \"y\""]);
        assert!(w.take().is_empty());
        assert!(Mark::console(&"z".repeat(500)).what.len() < 200);
        assert_eq!(Mark::edge(0x12349).what, "edge 0x1234 hit 9-15");
        assert_ne!(Mark::edge(0x12349).id(), Mark::edge(0x12348).id());
    }

    /// A guidance record marks only when its quantity goes further than the run had taken
    /// it, into a new bucket; each bucket is its own mark.
    #[test]
    fn guidance_watermarks_mark_improvements_only() {
        let g = |score: u64| Guidance {
            id: "lag".into(),
            message: "lag".into(),
            score,
        };
        let b = 1u64 << GUIDANCE_BUCKET_SHIFT;
        let mut o = Observed::default();
        for (score, marks) in [
            (10 * b, 1),
            (10 * b + 1, 1),
            (9 * b, 1),
            (12 * b, 2),
            (11 * b, 2),
        ] {
            o.guidance(&g(score));
            assert_eq!(o.marks.len(), marks, "score {score:#x}");
        }
        assert_ne!(o.marks[0].key, o.marks[1].key);
        assert_eq!(o.marks[1], Mark::guidance("lag", "lag", 12));
        assert_eq!(o.marks[0].signal, Signal::Promise);
        assert_eq!(o.marks[0].weight, WEIGHT_GUIDANCE);
        let mut other = Observed::default();
        other.guidance(&Guidance {
            id: "other".into(),
            ..g(10 * b)
        });
        assert_ne!(other.marks[0].key, o.marks[0].key, "records differ");
    }
}
