//! The triage page's two charts, as inline SVG: the faults failing seeds share (bars) and
//! the distinct behaviours found against branches run (lines). Host arithmetic only places
//! shapes on a picture; nothing of it reaches a guest, a trace or a report.

use super::model::Shared;
use super::page::escape;
use std::fmt::Write;

/// Most points a line is drawn with (a longer series is sampled evenly, its last kept).
const MAX_POINTS: usize = 500;
/// Most fault keys in the bar chart (the table has them all).
pub const MAX_BARS: usize = 12;

/// Bars: for the first [`MAX_BARS`] keys, the share of failing seeds (red) and of passing
/// seeds (grey) that had the fault.
pub fn shared_bars(rows: &[Shared], failing: u64, passing: u64) -> String {
    let rows = &rows[..rows.len().min(MAX_BARS)];
    let (label_w, bar_w, row_h) = (340.0, 360.0, 30.0);
    let h = 40.0 + row_h * rows.len() as f64;
    let w = label_w + bar_w + 90.0;
    let mut s = String::new();
    let _ = write!(
        s,
        r##"<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" aria-label="faults in failing and passing seeds"><text x="0" y="16" class="legend"><tspan fill="#c62828">■</tspan> failing seeds ({failing}) <tspan fill="#9e9e9e">■</tspan> passing seeds ({passing})</text>"##
    );
    let pct = |n: u64, of: u64| {
        if of == 0 {
            0.0
        } else {
            n as f64 / of as f64
        }
    };
    for (i, r) in rows.iter().enumerate() {
        let y = 30.0 + row_h * i as f64;
        let (f, p) = (pct(r.failing, failing), pct(r.passing, passing));
        let _ = write!(
            s,
            r##"<text x="{}" y="{}" text-anchor="end">{}</text><rect x="{label_w}" y="{y}" width="{:.1}" height="11" fill="#c62828"/><rect x="{label_w}" y="{}" width="{:.1}" height="11" fill="#9e9e9e"/><text x="{}" y="{}">{:.0}% / {:.0}%</text>"##,
            label_w - 8.0,
            y + 15.0,
            escape(&r.key),
            f * bar_w,
            y + 12.0,
            p * bar_w,
            label_w + bar_w + 6.0,
            y + 15.0,
            f * 100.0,
            p * 100.0
        );
    }
    s.push_str("</svg>");
    s
}

/// Evenly sampled (index, value) points of `v`, its last point kept.
fn sample(v: &[u64]) -> Vec<(usize, u64)> {
    if v.len() <= MAX_POINTS {
        return v.iter().copied().enumerate().collect();
    }
    let step = v.len().div_ceil(MAX_POINTS);
    let mut out: Vec<(usize, u64)> = (0..v.len()).step_by(step).map(|i| (i, v[i])).collect();
    if out.last().map(|(i, _)| *i) != Some(v.len() - 1) {
        out.push((v.len() - 1, v[v.len() - 1]));
    }
    out
}

/// Lines: each series (its name, colour and values after each branch) against branches run.
pub fn growth_lines(series: &[(&str, &str, &[u64])]) -> String {
    let (w, h, left, bottom, top) = (760.0, 280.0, 60.0, 40.0, 30.0);
    let n = series.iter().map(|s| s.2.len()).max().unwrap_or(0).max(1) as f64;
    let high = series
        .iter()
        .flat_map(|s| s.2.iter().copied())
        .max()
        .unwrap_or(0)
        .max(1) as f64;
    let (pw, ph) = (w - left - 20.0, h - top - bottom);
    let mut s = String::new();
    let _ = write!(
        s,
        r##"<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" aria-label="distinct behaviours against branches run"><line x1="{left}" y1="{}" x2="{}" y2="{}" stroke="#555"/><line x1="{left}" y1="{top}" x2="{left}" y2="{}" stroke="#555"/><text x="{left}" y="{}" >0</text><text x="{}" y="{}" text-anchor="end">{} branches</text><text x="{}" y="{}" text-anchor="end">{}</text>"##,
        top + ph,
        left + pw,
        top + ph,
        top + ph,
        h - 12.0,
        left + pw,
        h - 12.0,
        n as u64,
        left - 6.0,
        top + 4.0,
        high as u64
    );
    for (k, (name, colour, values)) in series.iter().enumerate() {
        let pts: Vec<String> = sample(values)
            .into_iter()
            .map(|(i, v)| {
                format!(
                    "{:.1},{:.1}",
                    left + (i + 1) as f64 / n * pw,
                    top + ph - v as f64 / high * ph
                )
            })
            .collect();
        let last = values.last().copied().unwrap_or(0);
        let _ = write!(
            s,
            r##"<polyline fill="none" stroke="{colour}" stroke-width="2" points="{}"/><text x="{}" y="16" fill="{colour}">{} ({last})</text>"##,
            pts.join(" "),
            left + 260.0 * k as f64,
            escape(name)
        );
    }
    s.push_str("</svg>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_series_are_sampled_and_keep_their_last_point() {
        let v: Vec<u64> = (0..100_000).collect();
        let p = sample(&v);
        assert!(p.len() <= MAX_POINTS + 1, "{}", p.len());
        assert_eq!(p.last(), Some(&(99_999, 99_999)));
        assert_eq!(sample(&[3, 4]), vec![(0, 3), (1, 4)]);
        let svg = growth_lines(&[("traces", "#1565c0", &v)]);
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
        assert!(svg.contains("traces (99999)"));
    }
}
