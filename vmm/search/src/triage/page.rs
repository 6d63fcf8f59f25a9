//! The triage page's HTML: one self-contained file (its CSS, SVG, data and script inline;
//! nothing fetched), laid out from the model. Every text from a report goes through
//! [`escape`]; the seeds' data travels as JSON in a `<script type="application/json">`
//! whose `<` are escaped, so no report text can end the element.

use super::model::{self, Property, Tag};
use super::{svg, Extras};
use crate::explore::{Report, SeedResult};
use serde_json::json;
use std::collections::BTreeSet;
use std::fmt::Write;
use wio_machines::promises::Status;

/// Cards drawn per failure group (the seeds table lists every failing seed).
pub const MAX_CARDS: usize = 20;
/// Cards of a group shown open.
const OPEN_CARDS: usize = 2;

const CSS: &str = include_str!("page.css");
const JS: &str = include_str!("page.js");

pub use wio_machines::timeline::escape;

/// Virtual ns as seconds.
pub(super) fn secs(ns: u64) -> String {
    format!("{}.{:03} s", ns / 1_000_000_000, (ns / 1_000_000) % 1000)
}

/// The whole page.
pub fn html(report: &Report, source: &str, extras: &Extras) -> String {
    let mut s = String::with_capacity(64 * 1024 + report.results.len() * 64);
    let q = &report.question;
    let title = q.snapshot.display().to_string();
    let _ = write!(
        s,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>wio triage: {}</title><style>{CSS}</style></head><body>",
        escape(&title)
    );
    header(&mut s, report, source, extras);
    let props = model::properties(report, extras.baseline.as_ref().map(|b| &b.1));
    properties(&mut s, &props, extras);
    failures(&mut s, report, extras);
    // Each seed's fault keys, for the shared faults and the seeds table.
    let keys: Vec<BTreeSet<String>> = report.results.iter().map(model::fault_keys).collect();
    shared(&mut s, report, &keys);
    utilization(&mut s, report);
    seeds(&mut s, report, &keys);
    let _ = writeln!(s, "<script>{JS}</script></body></html>");
    s
}

fn header(s: &mut String, r: &Report, source: &str, extras: &Extras) {
    let q = &r.question;
    let failing = r.results.iter().filter(|x| x.failed).count();
    let broken = r.promises.iter().filter(|a| !a.passed).count();
    let strategy = match &q.guided {
        Some(g) => format!("guided, budget {} branches", g.budget),
        None => format!("flat, seeds {}..{}", q.seeds.start, q.seeds.end),
    };
    let _ = write!(
        s,
        "<header id=\"summary\"><h1>wio exploration of <code>{}</code></h1><div class=\"totals\"><span><b id=\"n-seeds\">{}</b> branches run</span><span class=\"{}\"><b id=\"n-failing\">{failing}</b> failing</span><span class=\"{}\"><b id=\"n-broken\">{broken}</b> of {} promises broken</span>{}</div><dl>",
        escape(&q.snapshot.display().to_string()),
        r.results.len(),
        if failing > 0 { "bad" } else { "good" },
        if broken > 0 { "bad" } else { "good" },
        r.promises.len(),
        if r.complete {
            String::new()
        } else {
            "<span class=\"bad\">incomplete: not every seed finished</span>".into()
        }
    );
    let mut row = |k: &str, v: String| {
        let _ = write!(s, "<dt>{k}</dt><dd>{v}</dd>");
    };
    row("report", format!("<code>{}</code>", escape(source)));
    row(
        "snapshot sha256",
        format!("<code>{}</code>", escape(&q.snapshot_sha256)),
    );
    row("strategy", escape(&strategy));
    if r.shards.0 > 1 {
        row("shards", format!("{} of {}", r.shards.1.len(), r.shards.0));
    }
    if let Some(u) = &q.until {
        row("until", format!("<code>{}</code>", escape(u)));
    }
    if !q.fail_on.is_empty() {
        row("fail on", escape(&q.fail_on.join(", ")));
    }
    if let Some(run) = &extras.run {
        row("host", escape(&run.host));
        row(
            "wall time",
            format!(
                "{:.1} s, {:.1} branches per minute",
                run.wall_s,
                if run.wall_s > 0.0 {
                    r.results.len() as f64 * 60.0 / run.wall_s
                } else {
                    0.0
                }
            ),
        );
    } else {
        row(
            "wall time",
            "not in the report (<code>wio explore --html</code> records it)".into(),
        );
    }
    if let Some((path, _)) = &extras.baseline {
        row(
            "baseline",
            format!("<code>{}</code>", escape(&path.display().to_string())),
        );
    }
    row("rendered by", format!("wio {}", env!("CARGO_PKG_VERSION")));
    s.push_str("</dl></header>");
}

fn properties(s: &mut String, rows: &[Property], extras: &Extras) {
    s.push_str("<section id=\"properties\"><h2>Properties</h2>");
    if rows.is_empty() {
        s.push_str("<p>No promise was stated in any branch (programs state them through the Antithesis SDKs; see docs/promises.md).</p></section>");
        return;
    }
    let _ = write!(
        s,
        "<table id=\"properties-table\"><thead><tr><th>verdict</th>{}<th>promise</th><th>kind</th><th>passed</th><th>violated</th><th>unreached</th><th>first failing seed</th></tr></thead><tbody>",
        if extras.baseline.is_some() {
            "<th>vs baseline</th>"
        } else {
            ""
        }
    );
    for p in rows {
        let a = &p.promise;
        let verdict = if p.tag == Some(Tag::Gone) {
            "gone"
        } else if a.passed {
            "passed"
        } else if a.seeds_violated > 0 {
            "violated"
        } else {
            "unmet"
        };
        let mut tags = String::new();
        if let Some(t) = p.tag {
            let _ = write!(
                tags,
                "<span class=\"tag {}\">{}</span>",
                t.word().to_lowercase(),
                t.word()
            );
        }
        if p.rare {
            tags.push_str("<span class=\"tag rare\">Rare</span>");
        }
        let first = a
            .first_failing_seed
            .as_ref()
            .map(|(seed, _)| format!("<a href=\"#seed-{seed}\">{seed}</a>"))
            .unwrap_or_default();
        let _ = write!(
            s,
            "<tr class=\"{verdict}\" data-verdict=\"{verdict}\" data-id=\"{}\"><td class=\"verdict\">{verdict}</td>{}<td>{}{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{first}</td></tr>",
            escape(&a.id),
            if extras.baseline.is_some() {
                format!("<td>{tags}</td>")
            } else {
                String::new()
            },
            escape(&a.message),
            if extras.baseline.is_none() && p.rare {
                " <span class=\"tag rare\">Rare</span>"
            } else {
                ""
            },
            escape(&a.display_type),
            a.seeds_passed,
            a.seeds_violated,
            a.seeds_unreached,
        );
        if let Some(why) = &a.why {
            let _ = write!(
                s,
                "<tr class=\"why\"><td></td><td colspan=\"7\">{}</td></tr>",
                escape(why)
            );
        }
    }
    s.push_str("</tbody></table></section>");
}

/// One failing seed's card.
fn card(s: &mut String, r: &SeedResult, open: bool, extras: &Extras) {
    let _ = write!(
        s,
        "<details class=\"failure\" id=\"seed-{}\" data-seed=\"{}\"{}><summary>seed {} · ended {} at {}{} · {} fault(s)</summary>",
        r.seed,
        r.seed,
        if open { " open" } else { "" },
        r.seed,
        escape(&r.ended),
        secs(r.virtual_ns),
        r.exit_status
            .map(|x| format!(", status {x}"))
            .unwrap_or_default(),
        r.faults.len() + r.world_faults.len()
    );
    let _ = write!(
        s,
        "<div class=\"repro\"><code>{}</code><button class=\"copy\" data-copy=\"{}\">copy</button></div>",
        escape(&r.reproduce),
        escape(&r.reproduce)
    );
    if let Some(e) = &r.error {
        let _ = write!(s, "<p class=\"error\">{}</p>", escape(e));
    }
    let violated: Vec<_> = r
        .promises
        .iter()
        .filter(|p| p.status == Status::Violated)
        .collect();
    if !violated.is_empty() {
        s.push_str("<ul class=\"promises\">");
        for p in violated {
            let _ = write!(
                s,
                "<li><b>{}</b> {} false {} time(s){}{}</li>",
                escape(&p.display_type),
                escape(&p.message),
                p.failures,
                p.first_failure_ns
                    .map(|t| format!(", first at {}", secs(t)))
                    .unwrap_or_default(),
                p.first_failure_details
                    .as_ref()
                    .map(|d| format!(" <code class=\"details\">{}</code>", escape(d)))
                    .unwrap_or_default()
            );
        }
        s.push_str("</ul>");
    }
    if !r.faults.is_empty() || !r.world_faults.is_empty() {
        s.push_str("<table class=\"faults\"><thead><tr><th>fault</th><th>from</th><th>until</th><th>where</th></tr></thead><tbody>");
        for a in &r.faults {
            let _ = write!(
                s,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(a.fault.kind.name()),
                secs(a.fault.at_ns),
                secs(a.fault.end_ns()),
                escape(a.node.as_deref().unwrap_or("the machine"))
            );
        }
        for w in &r.world_faults {
            let _ = write!(
                s,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(&w.kind),
                secs(w.from_ns),
                secs(w.until_ns),
                escape(&w.what)
            );
        }
        s.push_str("</tbody></table>");
    }
    if let Some(p) = extras.shrunk.iter().find(|p| p.seed == r.seed) {
        let _ = write!(
            s,
            "<h4>minimal faults (<code>{}</code>, from wio shrink): {}</h4><ul class=\"shrunk\">",
            escape(&p.file),
            p.faults.len()
        );
        for f in &p.faults {
            let _ = write!(s, "<li>{}</li>", escape(f));
        }
        s.push_str("</ul>");
    }
    if let Some(t) = extras.timelines.iter().find(|t| t.seed == r.seed) {
        if !t.lines.is_empty() {
            s.push_str("<h4>console around the failure</h4><pre class=\"console\">");
            for l in &t.lines {
                s.push_str(&escape(l));
                s.push('\n');
            }
            s.push_str("</pre>");
        }
        let _ = write!(
            s,
            "<h4>timeline</h4><div class=\"timeline\">{}</div>",
            t.svg
        );
    }
    s.push_str("</details>");
}

fn failures(s: &mut String, r: &Report, extras: &Extras) {
    s.push_str("<section id=\"failures\"><h2>Failures</h2>");
    let groups = model::failures(r);
    if groups.is_empty() {
        s.push_str("<p class=\"good\">No branch failed.</p></section>");
        return;
    }
    for (key, seeds) in groups {
        let _ = write!(
            s,
            "<div class=\"group\"><h3>{} <span class=\"count\">{} seed(s)</span></h3>",
            escape(&key),
            seeds.len()
        );
        for (i, x) in seeds.iter().take(MAX_CARDS).enumerate() {
            card(s, x, i < OPEN_CARDS, extras);
        }
        if seeds.len() > MAX_CARDS {
            let _ = write!(
                s,
                "<p class=\"more\">and {} more: the seeds table below lists them.</p>",
                seeds.len() - MAX_CARDS
            );
        }
        s.push_str("</div>");
    }
    s.push_str("</section>");
}

fn shared(s: &mut String, r: &Report, keys: &[BTreeSet<String>]) {
    s.push_str("<section id=\"shared\"><h2>What the failing seeds share</h2>");
    let (rows, failing, passing) = model::shared_faults(r, keys);
    if rows.is_empty() || failing == 0 {
        s.push_str(
            "<p>Nothing to compare: no failing seed, or no fault in any branch.</p></section>",
        );
        return;
    }
    s.push_str("<p>Each fault kind and where it hit: in how many failing and passing seeds it happened (the most over-represented in failing seeds first: a first hint of cause, not a proof).</p>");
    s.push_str(&svg::shared_bars(&rows, failing, passing));
    s.push_str("<table id=\"shared-table\"><thead><tr><th>fault</th><th>failing seeds</th><th>passing seeds</th></tr></thead><tbody>");
    let pct = |n: u64, of: u64| (n * 100).checked_div(of).unwrap_or(0);
    for x in &rows {
        let _ = write!(
            s,
            "<tr><td>{}</td><td>{} ({}%)</td><td>{} ({}%)</td></tr>",
            escape(&x.key),
            x.failing,
            pct(x.failing, failing),
            x.passing,
            pct(x.passing, passing)
        );
    }
    s.push_str("</tbody></table></section>");
}

fn utilization(s: &mut String, r: &Report) {
    s.push_str("<section id=\"utilization\"><h2>Behaviours found</h2><p>Distinct behaviours after each branch: when the lines flatten, the search has stopped finding new ones.</p>");
    let (traces, conditions) = model::utilization(r);
    s.push_str(&svg::growth_lines(&[
        ("distinct traces", "#1565c0", &traces),
        ("promise conditions seen", "#2e7d32", &conditions),
    ]));
    if let Some(t) = &r.tree {
        let failing: Vec<u64> = r
            .results
            .iter()
            .filter(|x| x.failed)
            .map(|x| x.seed)
            .collect();
        let _ = write!(
            s,
            "<h3>Coverage (guided)</h3><div class=\"growth\">{}</div>",
            crate::explore::growth_plot::svg(&t.growth, t.plateau_since, &failing)
        );
    }
    s.push_str("</section>");
}

fn seeds(s: &mut String, r: &Report, per_seed: &[BTreeSet<String>]) {
    // Fault keys and broken promises by index, so each row is a few numbers.
    let keys: Vec<String> = per_seed
        .iter()
        .flatten()
        .cloned()
        .collect::<BTreeSet<String>>()
        .into_iter()
        .collect();
    let broken: Vec<&str> = r
        .promises
        .iter()
        .filter(|a| a.seeds_violated > 0)
        .map(|a| a.id.as_str())
        .collect();
    let rows: Vec<serde_json::Value> = r
        .results
        .iter()
        .zip(per_seed)
        .map(|(x, k)| {
            let fk: Vec<usize> = k
                .iter()
                .filter_map(|key| keys.binary_search(key).ok())
                .collect();
            let bp: Vec<usize> = x
                .promises
                .iter()
                .filter(|p| p.status == Status::Violated)
                .filter_map(|p| broken.iter().position(|b| *b == p.id))
                .collect();
            let hash: String = x.trace_hash.chars().take(12).collect();
            let mut row = json!([x.seed, u8::from(x.failed), hash, x.virtual_ns, fk, bp]);
            if x.failed {
                if let Some(a) = row.as_array_mut() {
                    a.push(json!(model::broke(x)));
                    a.push(json!(x.reproduce));
                }
            }
            row
        })
        .collect();
    let messages: Vec<&str> = broken
        .iter()
        .filter_map(|id| r.promises.iter().find(|a| a.id == *id))
        .map(|a| a.message.as_str())
        .collect();
    let data = json!({ "keys": keys, "promises": messages, "rows": rows });
    // No `<` inside the element: a report's text cannot close it.
    let text = data.to_string().replace('<', "\\u003c");
    let _ = write!(
        s,
        "<section id=\"seeds\"><h2>Seeds</h2><form class=\"filters\" onsubmit=\"return false\"><label>verdict <select id=\"f-verdict\"><option value=\"\">all</option><option value=\"1\">failing</option><option value=\"0\">passing</option></select></label> <label>promise <select id=\"f-promise\"><option value=\"\">any</option></select></label> <label>node <select id=\"f-node\"><option value=\"\">any</option></select></label> <label>fault <select id=\"f-fault\"><option value=\"\">any</option></select></label> <label>search <input id=\"f-search\" type=\"search\" placeholder=\"seed or trace hash\"></label></form><p id=\"seeds-count\"></p><table id=\"seeds-table\"><thead><tr><th>seed</th><th>verdict</th><th>what broke</th><th>virtual time</th><th>faults</th><th>trace</th></tr></thead><tbody></tbody></table><div class=\"pager\"><button id=\"prev\">previous</button> <span id=\"page\"></span> <button id=\"next\">next</button></div><script type=\"application/json\" id=\"seed-data\">{text}</script></section>"
    );
}
