//! The machine side of the promise channel: after each step, the lines programs wrote on
//! `wio.sdk` go into the run's ledger of promises, folded into the trace (length and
//! hash, at the virtual time each was written), and what they mean for the run comes
//! back: a violated `always` (traced; the end of the run with `--stop-on-violation`) or
//! setup declared complete (a snapshot point).

use super::novelty::{Mark, Observed};
use super::Stop;
use crate::error::WioError;
use crate::promises::{Ledger, Noted};
use crate::trace::{fnv1a, fold, Trace};
use serde_json::json;
use wio_virtio_devices::console::Line;
use wio_virtio_devices::Console;

/// Takes the channel's waiting lines into `ledger`. Returns the stop the driver must
/// see, if any: the run's end at a violation when `stop_on_violation`, else setup
/// complete. With `marks`, each (promise, condition) first seen in the run is added there,
/// and each guidance quantity pushed further than before ([`Observed::guidance`]).
pub fn drain(
    console: &mut Console,
    ledger: &mut Ledger,
    trace: &mut Trace,
    stop_on_violation: bool,
    marks: Option<&mut Observed>,
) -> Option<Stop> {
    if !console.has_lines() {
        return None;
    }
    note_lines(
        console.take_lines(),
        ledger,
        trace,
        stop_on_violation,
        marks,
    )
}

/// The mark of promise `id`'s first evaluation with `condition`.
fn mark_of(ledger: &Ledger, id: &str, condition: bool) -> Option<Mark> {
    let p = ledger.promises.get(id)?;
    let rare = p.kind == crate::promises::Kind::Sometimes || p.display_type == "Reachable";
    Some(Mark::promise(id, &p.message, rare, condition))
}

/// Takes `lines` (virtual time written, text) of a promise channel into `ledger` (and
/// first evaluations into `marks`), as [`drain`] does (bare-metal guests write them through `devices::riscv::sdk_port`).
pub fn note_lines(
    lines: Vec<Line>,
    ledger: &mut Ledger,
    trace: &mut Trace,
    stop_on_violation: bool,
    mut marks: Option<&mut Observed>,
) -> Option<Stop> {
    let mut stop = None;
    for (t, line) in lines {
        trace.fold(fold::SDK_LINE, line.len() as u64, fnv1a(&line), t);
        match ledger.note(t, &line) {
            Noted::Nothing => {}
            Noted::Guidance(g) => {
                if let Some(o) = marks.as_deref_mut().filter(|o| o.promises) {
                    o.guidance(&g);
                }
            }
            Noted::Edge { module, edge } => {
                if let Some(o) = marks.as_deref_mut() {
                    o.sdk_edge(&module, edge);
                }
            }
            Noted::First { id, condition } => {
                if let (Some(o), Some(mark)) = (
                    marks.as_deref_mut().filter(|o| o.promises),
                    mark_of(ledger, &id, condition),
                ) {
                    o.marks.push(mark);
                }
            }
            Noted::Violation(id) => {
                if let (Some(o), Some(mut mark)) =
                    (marks.as_deref_mut(), mark_of(ledger, &id, false))
                {
                    // Known, but worth no moment: every branch from after a violation fails
                    // the same way (whatever the signals: it ends the branch's moments).
                    mark.weight = 0;
                    o.marks.push(mark);
                }
                let p = &ledger.promises[&id];
                trace.event(
                    t,
                    "promise-violated",
                    json!({ "id": id, "message": p.message, "details": p.first_failure_details }),
                );
                if stop_on_violation && !matches!(stop, Some(Stop::End(_))) {
                    stop = Some(Stop::End(Err(WioError::Promise {
                        count: 1,
                        first: format!(
                            "VIOLATED {} {:?} (--stop-on-violation)",
                            p.display_type, p.message
                        ),
                    })));
                }
            }
            Noted::SetupComplete => {
                trace.event(t, "setup-complete", json!({}));
                stop.get_or_insert(Stop::SetupComplete);
            }
        }
    }
    stop
}
