//! A single machine's run as a picture (`wio run --timeline FILE`): over virtual time, a
//! lane per fault target (the machine, its disk, its network, its clock) with each applied
//! fault as a band, a lane of console markers, a lane of promise events (each promise's
//! first true evaluation, and its first false one with its details), and the run's end
//! (exit status or error). Plain SVG drawn from the run's summary; host arithmetic only
//! places shapes, nothing of it reaches a guest, a trace or a hash.

use crate::faults::plan::Target;
use crate::promises::Status;
use crate::summary::Summary;
use std::fmt::Write;

const W: f64 = 1200.0;
const LEFT: f64 = 120.0;
const RIGHT: f64 = 30.0;
const TOP: f64 = 60.0;
const LANE: f64 = 56.0;
/// Most promise events labelled (the others are still drawn).
const MAX_LABELS: usize = 24;

/// `s` with the characters XML and HTML give a meaning escaped, for text and attribute
/// values: the one escaping of every picture and page wio draws.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A label's anchor at `x`: its end near the right edge, so it stays on the picture.
fn anchor(x: f64) -> &'static str {
    if x > W - 220.0 {
        "end"
    } else {
        "start"
    }
}

/// The lanes, top to bottom.
const LANES: [&str; 6] = ["machine", "disk", "network", "clock", "console", "promises"];

fn lane_of(t: Target) -> usize {
    match t {
        Target::Node => 0,
        Target::Disk => 1,
        Target::Net => 2,
        Target::Clock => 3,
    }
}

/// The SVG of the run `s` summarizes.
pub fn svg(s: &Summary) -> String {
    let t0 = s.restored_from.as_ref().map_or(0, |r| r.virtual_ns);
    let t1 = s.virtual_ns.max(t0 + 1);
    let pw = W - LEFT - RIGHT;
    let x = |ns: u64| LEFT + (ns.clamp(t0, t1) - t0) as f64 / (t1 - t0) as f64 * pw;
    let y = |lane: usize| TOP + LANE * lane as f64 + LANE / 2.0;
    let h = TOP + LANE * LANES.len() as f64 + 60.0;
    let mut o = String::new();
    let _ = writeln!(
        o,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{h}" viewBox="0 0 {W} {h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(o, r#"<rect width="{W}" height="{h}" fill="white"/>"#);
    let end = match (&s.error, s.exit_status) {
        (Some(e), _) => format!("error: {e}"),
        (None, Some(st)) => format!("exit status {st}"),
        (None, None) => s
            .stopped_at
            .as_ref()
            .map_or("stopped".into(), |l| format!("stopped at {l:?}")),
    };
    let _ = writeln!(
        o,
        r#"<text x="{LEFT}" y="24" font-size="15" font-weight="bold">wio run: seed {} · {} · trace {} · {:.3} virtual s · {}</text>"#,
        s.seed,
        s.arch,
        escape(&s.trace_hash.chars().take(16).collect::<String>()),
        (t1 - t0) as f64 / 1e9,
        escape(&end)
    );
    for (i, name) in LANES.iter().enumerate() {
        let yy = y(i);
        let _ = writeln!(
            o,
            r##"<text x="12" y="{}">{name}</text><line x1="{LEFT}" y1="{yy}" x2="{}" y2="{yy}" stroke="#555"/>"##,
            yy + 4.0,
            LEFT + pw
        );
    }
    // Faults: a band from start to end (instant kinds a tick), named.
    for a in &s.faults {
        let f = &a.fault;
        let lane = lane_of(f.kind.target());
        let (x0, x1) = (x(f.at_ns), x(f.end_ns()).max(x(f.at_ns) + 2.0));
        let _ = writeln!(
            o,
            r##"<rect x="{x0:.1}" y="{}" width="{:.1}" height="{}" fill="#ef6c00" fill-opacity="0.35"><title>{} from {:.3} s to {:.3} s</title></rect><text x="{x0:.1}" y="{}" fill="#ef6c00" font-size="10">{}</text>"##,
            y(lane) - LANE / 3.0,
            x1 - x0,
            LANE / 1.5,
            escape(f.kind.name()),
            f.at_ns as f64 / 1e9,
            f.end_ns() as f64 / 1e9,
            y(lane) - LANE / 3.0 - 2.0,
            escape(f.kind.name())
        );
    }
    // Console markers.
    for (k, m) in s.markers.iter().enumerate() {
        let xx = x(m.virtual_ns);
        let yy = y(4);
        let _ = writeln!(
            o,
            r##"<line x1="{xx:.1}" y1="{}" x2="{xx:.1}" y2="{}" stroke="#1565c0" stroke-width="2"/><text x="{xx:.1}" y="{}" fill="#1565c0" font-size="10" text-anchor="{}">{}</text>"##,
            yy - 10.0,
            yy + 10.0,
            yy + 22.0 + 10.0 * (k % 2) as f64,
            anchor(xx),
            escape(&m.line)
        );
    }
    // Promise events: first true (green dot), first false (red ring), labelled.
    let mut labels = 0;
    for v in s.promises.iter().flat_map(|p| p.list.iter()) {
        let p = &v.promise;
        let yy = y(5);
        if let Some(t) = p.first_pass_ns {
            let _ = writeln!(
                o,
                r##"<circle cx="{:.1}" cy="{yy}" r="4" fill="#2e7d32"><title>{} first true at {:.3} s</title></circle>"##,
                x(t),
                escape(&p.message),
                t as f64 / 1e9
            );
        }
        if let Some(t) = p.first_failure_ns.filter(|_| v.status == Status::Violated) {
            let _ = writeln!(
                o,
                r##"<circle cx="{:.1}" cy="{yy}" r="7" fill="none" stroke="#c62828" stroke-width="2"><title>{} first false at {:.3} s{}</title></circle>"##,
                x(t),
                escape(&p.message),
                t as f64 / 1e9,
                p.first_failure_details
                    .as_ref()
                    .map(|d| format!(": {}", escape(d)))
                    .unwrap_or_default()
            );
            if labels < MAX_LABELS {
                let _ = writeln!(
                    o,
                    r##"<text x="{:.1}" y="{}" fill="#c62828" font-size="11" text-anchor="{}">VIOLATED {}</text>"##,
                    x(t) + 9.0,
                    yy + 18.0 + 12.0 * (labels % 3) as f64,
                    anchor(x(t) + 9.0),
                    escape(&p.message)
                );
                labels += 1;
            }
        }
    }
    // The end.
    let _ = writeln!(
        o,
        r##"<line x1="{0:.1}" y1="{TOP}" x2="{0:.1}" y2="{1}" stroke="#000" stroke-dasharray="4 3"/>"##,
        x(t1),
        TOP + LANE * LANES.len() as f64
    );
    // The time axis.
    let axis = TOP + LANE * LANES.len() as f64 + 18.0;
    for k in 0..=5u64 {
        let t = t0 + (t1 - t0) * k / 5;
        let _ = writeln!(
            o,
            r#"<text x="{:.1}" y="{axis}" text-anchor="middle">{:.3} s</text>"#,
            x(t),
            t as f64 / 1e9
        );
    }
    let _ = writeln!(
        o,
        r##"<text x="{LEFT}" y="{}" font-size="11" fill="#555">orange: applied faults · blue: console markers · green dot: a promise's first true · red ring: an always promise violated · dashed: the end</text>"##,
        axis + 22.0
    );
    o.push_str("</svg>\n");
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_is_drawn_with_its_markers_faults_and_end() {
        let trace = crate::trace::Trace::new();
        let mut s = Summary::synthetic(5, 2_000_000_000, &trace, String::new(), Some(3));
        s.markers.push(crate::summary::Marker {
            line: "wio-init: start".into(),
            virtual_ns: 500_000_000,
            wall_ns: 0,
        });
        let svg = svg(&s);
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains("wio-init: start"));
        assert!(svg.contains("exit status 3"));
        for lane in LANES {
            assert!(svg.contains(&format!(">{lane}</text>")), "{lane}");
        }
    }
}
