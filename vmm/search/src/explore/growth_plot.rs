//! A guided exploration's coverage growth as a picture (written beside its report as
//! `REPORT.growth.svg`): the marks known after each branch, the plateau (when nothing new
//! came for long: see `guided::plateau`) shaded, and a red tick at each failing branch.
//! Plain SVG, no script: any browser shows it. Host arithmetic only places lines on the
//! picture; nothing of it reaches a guest, a trace or a report.

use std::fmt::Write;

const W: f64 = 900.0;
const H: f64 = 360.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 50.0;
/// Most points drawn (a longer growth is sampled evenly, its last point kept).
const MAX_POINTS: usize = 2000;

/// The SVG of `growth` (marks known after each branch), with its plateau (from the branch
/// `plateau_since`) and the numbers of the `failing` branches.
pub fn svg(growth: &[u64], plateau_since: Option<u64>, failing: &[u64]) -> String {
    let n = growth.len().max(1) as f64;
    let top = growth.iter().copied().max().unwrap_or(0).max(1) as f64;
    let (pw, ph) = (W - LEFT - RIGHT, H - TOP - BOTTOM);
    let x = |b: f64| LEFT + b / n * pw;
    let y = |v: f64| TOP + ph - v / top * ph;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r##"<rect width="{W}" height="{H}" fill="#fff"/>"##);
    let _ = writeln!(
        s,
        r#"<text x="{LEFT}" y="22" font-size="14">Coverage growth: marks known after each branch ({} branches, {} marks{})</text>"#,
        growth.len(),
        growth.last().copied().unwrap_or(0),
        plateau_since.map_or(String::new(), |p| format!(", plateau since branch {p}"))
    );
    if let Some(p) = plateau_since {
        let x0 = x(p as f64);
        let _ = writeln!(
            s,
            r##"<rect x="{x0:.1}" y="{TOP}" width="{:.1}" height="{ph}" fill="#eee"/><text x="{:.1}" y="{:.1}" fill="#777">plateau</text>"##,
            (LEFT + pw - x0).max(0.0),
            x0 + 4.0,
            TOP + 14.0
        );
    }
    for b in failing {
        let xb = x(*b as f64 + 0.5);
        let _ = writeln!(
            s,
            r##"<line x1="{xb:.1}" y1="{TOP}" x2="{xb:.1}" y2="{:.1}" stroke="#d22" stroke-width="1"><title>branch {b} failed</title></line>"##,
            TOP + ph
        );
    }
    let step = growth.len().div_ceil(MAX_POINTS).max(1);
    let mut points: Vec<(usize, u64)> = growth.iter().copied().enumerate().step_by(step).collect();
    if let Some(last) = growth.len().checked_sub(1) {
        if points.last().map(|p| p.0) != Some(last) {
            points.push((last, growth[last]));
        }
    }
    let mut path = String::new();
    for (i, (b, v)) in points.iter().enumerate() {
        let _ = write!(
            path,
            "{}{:.1},{:.1}",
            if i == 0 { "M" } else { " L" },
            x(*b as f64 + 1.0),
            y(*v as f64)
        );
    }
    let _ = writeln!(
        s,
        r##"<path d="{path}" fill="none" stroke="#25a" stroke-width="1.5"/>"##
    );
    // Axes and their ends' labels.
    let _ = writeln!(
        s,
        r##"<line x1="{LEFT}" y1="{0:.1}" x2="{1:.1}" y2="{0:.1}" stroke="#000"/><line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{0:.1}" stroke="#000"/>"##,
        TOP + ph,
        LEFT + pw
    );
    let _ = writeln!(
        s,
        r#"<text x="{LEFT}" y="{:.1}">0</text><text x="{:.1}" y="{:.1}" text-anchor="end">{} branches</text><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text><text x="{:.1}" y="{:.1}" text-anchor="end">0</text>"#,
        TOP + ph + 18.0,
        LEFT + pw,
        TOP + ph + 18.0,
        growth.len(),
        LEFT - 6.0,
        TOP + 4.0,
        top as u64,
        LEFT - 6.0,
        TOP + ph
    );
    s.push_str("</svg>\n");
    s
}

/// Where the plot of a report at `report` goes: `REPORT.growth.svg` (the report's
/// extension replaced).
pub fn path_for(report: &std::path::Path) -> std::path::PathBuf {
    report.with_extension("growth.svg")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plot_shows_growth_plateau_and_failures() {
        let growth: Vec<u64> = (0..5000u64).map(|b| (b * 10).min(20_000)).collect();
        let s = svg(&growth, Some(2000), &[17, 4000]);
        assert!(s.starts_with("<svg") && s.trim_end().ends_with("</svg>"));
        assert!(s.contains("5000 branches, 20000 marks, plateau since branch 2000"));
        assert_eq!(s.matches("failed</title>").count(), 2);
        // Sampled: at most MAX_POINTS + 1 points, the last one kept.
        let path = s.lines().find(|l| l.starts_with("<path")).unwrap();
        assert!(path.matches(" L").count() <= MAX_POINTS);
        assert!(path.contains(&format!("{:.1},", LEFT + (W - LEFT - RIGHT))));
        // Nothing to plot is still a picture.
        assert!(svg(&[], None, &[]).contains("0 branches"));
        assert_eq!(
            path_for(std::path::Path::new("out/r.json")),
            std::path::PathBuf::from("out/r.growth.svg")
        );
    }
}
