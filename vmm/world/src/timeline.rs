//! A world run as a picture (`wio sim --timeline FILE.svg`): a lane per node (and the
//! peer), every delivered frame as a line from its sender's lane at the time it left to
//! its receiver's lane at the time it arrived, every dropped copy as a red cross, the
//! faults between nodes as bands over the lanes they cut or slow, the nodes' own faults
//! on their lanes, the test composer's commands (a bar each on the lane of the node that
//! ran it: green exit 0, red another status, grey killed, orange still running; the
//! windows in which it held faults off as a band above the lanes), and each broken
//! promise where and when it first broke. Plain SVG, no
//! script: any browser shows it.

use super::faults::Between;
use super::summary::WorldSummary;
use std::fmt::Write;
use wio_machines::promises::Status;

/// What a run's timeline needs besides its summary (defined beside the summary, which
/// keeps it when asked: [`WorldSummary::timeline`]).
pub use super::summary::Timeline;

/// Whether a console line tells of trouble (labelled on the picture, not only a tick).
fn trouble(line: &str) -> bool {
    [
        "Error", "error", "fail", "FAIL", "timeout", "refused", "panic",
    ]
    .iter()
    .any(|w| line.contains(w))
}

const W: f64 = 1400.0;
const LEFT: f64 = 120.0;
const RIGHT: f64 = 30.0;
const TOP: f64 = 60.0;
const LANE: f64 = 80.0;

use wio_machines::timeline::escape as esc;

impl Timeline {
    /// The SVG of a run with ports `names` (nodes, then the peer) that `w` summarizes.
    pub fn svg(&self, names: &[String], w: &WorldSummary) -> String {
        let t0 = w.restored_from.as_ref().map_or(0, |r| r.virtual_ns);
        let p = Plot {
            t0,
            t1: w.virtual_ns.max(t0 + 1),
        };
        let h = TOP + LANE * names.len() as f64 + 70.0;
        let mut s = String::new();
        p.header(&mut s, h, w);
        p.world_faults(&mut s, names, w);
        p.node_faults(&mut s, w);
        p.lanes(&mut s, names);
        p.composer(&mut s, names, w);
        self.frames(&mut s, &p, names);
        self.console_lines(&mut s, &p, names);
        p.ends_and_promises(&mut s, names, w);
        p.axis(&mut s, names.len());
        s.push_str("</svg>\n");
        s
    }

    /// Frames (sent to arrived) and dropped frames.
    fn frames(&self, s: &mut String, p: &Plot, names: &[String]) {
        for (src, dst, sent, at) in &self.frames {
            let _ = writeln!(
                s,
                r##"<line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#1f77b4" stroke-opacity="0.35" stroke-width="0.7"/>"##,
                p.x(*sent),
                p.y(*src),
                p.x(*at),
                p.y(*dst)
            );
        }
        for d in &self.drops {
            let (cx, cy) = (
                p.x(d.at_ns),
                p.y(d.src) + if d.dst > d.src { 8.0 } else { -8.0 },
            );
            let _ = writeln!(
                s,
                r##"<path d="M{:.1},{:.1} l6,6 m0,-6 l-6,6" stroke="#d62728" stroke-width="1.5"><title>{} {}->{} at {:.6} s</title></path>"##,
                cx - 3.0,
                cy - 3.0,
                d.why,
                esc(names.get(d.src).map_or("?", String::as_str)),
                esc(names.get(d.dst).map_or("?", String::as_str)),
                d.at_ns as f64 / 1e9
            );
        }
    }

    /// Console lines: a tick each, trouble labelled.
    fn console_lines(&self, s: &mut String, p: &Plot, names: &[String]) {
        // Console lines: a tick each (the text on hover); trouble labelled.
        // Labels go in up to three rows under a lane, never over each other.
        let mut free: Vec<[f64; 3]> = vec![[f64::MIN; 3]; names.len()];
        for (node, at, text) in &self.lines {
            let (cx, cy) = (p.x(*at), p.y(*node));
            let bad = trouble(text);
            let _ = writeln!(
                s,
                r##"<line x1="{cx:.1}" y1="{:.1}" x2="{cx:.1}" y2="{:.1}" stroke="{}" stroke-width="1"><title>{:.6} s {}</title></line>"##,
                cy - 6.0,
                cy + 6.0,
                if bad { "#d62728" } else { "#999" },
                *at as f64 / 1e9,
                esc(text)
            );
            if !bad {
                continue;
            }
            // Without the program's own "name: " prefix.
            let body = text.split_once(": ").map_or(text.as_str(), |(_, b)| b);
            let short: String = body.chars().take(44).collect();
            let width = short.chars().count() as f64 * 5.6 + 8.0;
            if let Some(row) = (0..3).find(|r| free[*node][*r] <= cx) {
                free[*node][row] = cx + width;
                let _ = writeln!(
                    s,
                    r##"<text x="{:.1}" y="{:.1}" fill="#d62728" font-size="10">{}</text>"##,
                    cx + 2.0,
                    cy + 18.0 + 12.0 * row as f64,
                    esc(&short)
                );
            }
        }
    }
}

/// The plot's geometry: virtual time t0..t1 across, a lane per node down.
struct Plot {
    t0: u64,
    t1: u64,
}

impl Plot {
    /// The x of virtual time `t` (clamped to the plot).
    fn x(&self, t: u64) -> f64 {
        let plot = W - LEFT - RIGHT;
        LEFT + (t.clamp(self.t0, self.t1) - self.t0) as f64 / (self.t1 - self.t0) as f64 * plot
    }

    /// The y of lane `i`'s middle.
    fn y(&self, i: usize) -> f64 {
        TOP + LANE * i as f64 + LANE / 2.0
    }

    /// The SVG element, its background and the title line.
    fn header(&self, s: &mut String, h: f64, w: &WorldSummary) {
        let (t0, t1) = (self.t0, self.t1);
        let _ = writeln!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{h}" viewBox="0 0 {W} {h}" font-family="sans-serif" font-size="12">"#
        );
        let _ = writeln!(s, r#"<rect width="{W}" height="{h}" fill="white"/>"#);
        let _ = writeln!(
            s,
            r#"<text x="{LEFT}" y="24" font-size="15" font-weight="bold">wio sim: seed {} · world trace {} · {:.3} virtual s</text>"#,
            w.seed,
            &w.world_trace_hash[..16.min(w.world_trace_hash.len())],
            (t1 - t0) as f64 / 1e9
        );
    }

    /// Faults between nodes: bands over the lanes they touch.
    fn world_faults(&self, s: &mut String, names: &[String], w: &WorldSummary) {
        for f in &w.faults {
            let (x0, x1) = (
                self.x(f.from_ns),
                self.x(f.until_ns).max(self.x(f.from_ns) + 1.0),
            );
            let (lanes, colour): (Vec<usize>, &str) = match &f.exact {
                Between::Partition(p) => {
                    let side = |g: usize| -> Vec<usize> {
                        (0..names.len())
                            .filter(|i| p.group_of.get(*i).copied().flatten() == Some(g))
                            .collect()
                    };
                    let (a, b) = (side(0), side(1));
                    (if a.len() <= b.len() { a } else { b }, "#d62728")
                }
                Between::Degrade(d) => (
                    d.between
                        .map_or_else(|| (0..names.len()).collect(), |(a, b)| vec![a, b]),
                    "#ff7f0e",
                ),
                // The peer serves the dependencies: its lane (the last port).
                Between::Dependency(_) => (vec![names.len().saturating_sub(1)], "#9467bd"),
            };
            for i in lanes {
                let _ = writeln!(
                    s,
                    r#"<rect x="{x0:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{colour}" fill-opacity="0.18"><title>{} {} {:.3}-{:.3} s</title></rect>"#,
                    self.y(i) - LANE * 0.4,
                    x1 - x0,
                    LANE * 0.8,
                    esc(&f.kind),
                    esc(&f.what),
                    f.from_ns as f64 / 1e9,
                    f.until_ns as f64 / 1e9
                );
            }
            let _ = writeln!(
                s,
                r#"<text x="{x0:.1}" y="{:.1}" fill="{colour}" font-size="10">{} {}</text>"#,
                TOP - 6.0,
                esc(&f.kind),
                esc(&f.what)
            );
        }
    }

    /// The nodes' own faults.
    fn node_faults(&self, s: &mut String, w: &WorldSummary) {
        for (i, (_, n)) in w.nodes.iter().enumerate() {
            for a in &n.faults {
                let f = &a.fault;
                let (x0, x1) = (
                    self.x(f.at_ns),
                    self.x(f.end_ns()).max(self.x(f.at_ns) + 2.0),
                );
                let _ = writeln!(
                    s,
                    r##"<rect x="{x0:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="#9467bd" fill-opacity="0.3"><title>{}</title></rect>"##,
                    self.y(i) - LANE * 0.3,
                    x1 - x0,
                    LANE * 0.6,
                    esc(f.kind.name())
                );
            }
        }
    }

    /// The test composer's runs and quiet windows.
    fn composer(&self, s: &mut String, names: &[String], w: &WorldSummary) {
        let Some(c) = &w.composer else {
            return;
        };
        for (from, until) in &c.quiet {
            let (x0, x1) = (self.x(*from), self.x(*until).max(self.x(*from) + 2.0));
            let _ = writeln!(
                s,
                r##"<rect x="{x0:.1}" y="{:.1}" width="{:.1}" height="8" fill="#2ca02c" fill-opacity="0.35"><title>faults held off (test composer)</title></rect>"##,
                TOP - 14.0,
                x1 - x0
            );
        }
        for r in &c.runs {
            let Some(lane) = names.iter().position(|n| *n == r.node) else {
                continue;
            };
            let end = r.ended_ns.unwrap_or(self.t1);
            let (x0, x1) = (
                self.x(r.started_ns),
                self.x(end).max(self.x(r.started_ns) + 2.0),
            );
            let (color, how) = match (r.status, r.killed) {
                (Some(0), _) => ("#2ca02c", "exit 0".to_string()),
                (Some(st), true) => ("#7f7f7f", format!("killed ({st})")),
                (Some(st), false) => ("#d62728", format!("exit {st}")),
                (None, _) if r.ended_ns.is_some() => ("#8c564b", "lost with its node".to_string()),
                (None, _) => ("#ff7f0e", "still running".to_string()),
            };
            let _ = writeln!(
                s,
                r##"<rect x="{x0:.1}" y="{:.1}" width="{:.1}" height="6" fill="{color}"><title>run {}: {} ({how})</title></rect>"##,
                self.y(lane) + 8.0 + (r.run % 3) as f64 * 8.0,
                x1 - x0,
                r.run,
                esc(&r.command)
            );
        }
    }

    /// A lane per node, with its name.
    fn lanes(&self, s: &mut String, names: &[String]) {
        for (i, name) in names.iter().enumerate() {
            let _ = writeln!(
                s,
                r##"<line x1="{LEFT}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#444" stroke-width="1.5"/><text x="10" y="{:.1}" font-size="14">{}</text>"##,
                self.y(i),
                W - RIGHT,
                self.y(i),
                self.y(i) + 5.0,
                esc(name)
            );
        }
    }

    /// Node ends and broken promises.
    fn ends_and_promises(&self, s: &mut String, names: &[String], w: &WorldSummary) {
        let t1 = self.t1;
        for (i, (_, n)) in w.nodes.iter().enumerate() {
            let _ = writeln!(
                s,
                r##"<circle cx="{:.1}" cy="{:.1}" r="4" fill="#444"><title>ended at {:.3} s</title></circle>"##,
                self.x(n.virtual_ns),
                self.y(i),
                n.virtual_ns as f64 / 1e9
            );
        }
        let mut row = 0.0;
        for v in w.promises.iter().filter(|v| v.status != Status::Passed) {
            let at = v.promise.first_failure_ns.unwrap_or(t1);
            let lane = v
                .promise
                .first_failure_details
                .as_deref()
                .and_then(|d| d.strip_prefix("on "))
                .and_then(|d| {
                    names
                        .iter()
                        .position(|n| d.split(':').next() == Some(n.as_str()))
                })
                .unwrap_or(0);
            let (cx, cy) = (self.x(at), self.y(lane));
            let _ = writeln!(
                s,
                r##"<circle cx="{cx:.1}" cy="{cy:.1}" r="8" fill="none" stroke="#d62728" stroke-width="3"/><text x="{:.1}" y="{:.1}" fill="#d62728" font-weight="bold" text-anchor="end">{} {} {:?}</text>"##,
                cx - 12.0,
                cy - 14.0 - row,
                v.status.name(),
                esc(&v.promise.display_type),
                esc(&v.promise.message)
            );
            if let Some(d) = &v.promise.first_failure_details {
                let _ = writeln!(
                    s,
                    r##"<text x="{:.1}" y="{:.1}" fill="#d62728" font-size="11" text-anchor="end">{}</text>"##,
                    cx - 12.0,
                    cy + 20.0 + row,
                    esc(d)
                );
            }
            row += 14.0;
        }
    }

    /// The time axis and the legend.
    fn axis(&self, s: &mut String, lanes: usize) {
        let (t0, t1) = (self.t0, self.t1);
        let span = (t1 - t0) as f64 / 1e9;
        let step = [
            0.001, 0.01, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 300.0, 600.0, 3600.0,
        ]
        .into_iter()
        .find(|st| span / st <= 14.0)
        .unwrap_or(3600.0);
        let axis = TOP + LANE * lanes as f64 + 10.0;
        let first = (t0 as f64 / 1e9 / step).ceil() as u64;
        let mut k = first;
        while (k as f64) * step <= t1 as f64 / 1e9 {
            let t = ((k as f64) * step * 1e9) as u64;
            let _ = writeln!(
                s,
                r##"<line x1="{0:.1}" y1="{1:.1}" x2="{0:.1}" y2="{2:.1}" stroke="#bbb"/><text x="{0:.1}" y="{3:.1}" text-anchor="middle" fill="#555">{4} s</text>"##,
                self.x(t),
                TOP - 2.0,
                axis,
                axis + 14.0,
                (k as f64 * step * 1000.0).round() / 1000.0
            );
            k += 1;
        }
        let _ = writeln!(
            s,
            r##"<text x="{LEFT}" y="{:.1}" fill="#555">blue: frames (sent → arrived) · red ×: dropped · red band: partition (smaller side) · orange band: degraded link · purple: a node's own fault · ● node ended · ◯ promise broken</text>"##,
            axis + 40.0
        );
    }
}
