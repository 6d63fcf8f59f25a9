//! Promises: what programs in the guest say must hold, checked by wio on every run.
//!
//! Programs write JSON lines on the `wio.sdk` virtio-console port (see
//! `wio_virtio_devices::console`), in the protocol of the Antithesis SDKs, so programs
//! instrumented with those SDKs run unchanged:
//!
//! - `{"antithesis_assert": {"id", "message", "assert_type", "display_type", "hit",
//!   "must_hit", "condition", "location", "details"}}`: a promise registered at program
//!   start (`hit: false`: the catalogue, so one never reached can fail) or evaluated
//!   (`hit: true`, with its `condition`);
//! - `{"antithesis_setup": {"status": "complete", "details"}}`: setup is complete (the
//!   natural branch point);
//! - `{"antithesis_sdk": {...}}`: the SDK says who it is;
//! - `{"antithesis_guidance": {...}}`: hints the SDKs send next to numeric and grouped
//!   promises for a search that steers towards them: counted, and each evaluation's guided
//!   quantity handed to guided exploration ([`Guidance`]);
//! - `{"wio_coverage": {"module": NAME, "edge": N}}`: a coverage edge a program
//!   instrumented for the SDKs reported through wio's `libvoidstar.so` (`notify_coverage`,
//!   once per edge and process): handed to guided exploration ([`Noted::Edge`]), not kept;
//! - any other one-key object `{"NAME": details}`: an event (`send_event`).
//!
//! Verdicts (the Antithesis semantics): an `always` promise (and a reachability one,
//! whose condition says whether being reached is allowed) is violated by one evaluation
//! whose condition is false; a `sometimes` one is met by one evaluation whose condition
//! is true; a promise that must be hit (`must_hit`) and never was is unreached. Numeric
//! and grouped promises (`AlwaysGreaterThan`, `AlwaysSome`, `SometimesAll`, ...) arrive
//! from the SDKs already evaluated, as `always` or `sometimes` with their `display_type`.
//!
//! Bounds: at most [`MAX_PROMISES`] promises and [`MAX_EVENTS`] event names are tracked
//! (more are counted, not kept); details are kept for a promise's first pass and first
//! failure only, at most [`MAX_DETAILS`] bytes each. A line that is not such JSON is
//! counted as malformed, never a host error.

pub mod across;
pub mod report;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// Most promises one run tracks.
pub const MAX_PROMISES: usize = 10_000;
/// Most distinct event names one run tracks.
pub const MAX_EVENTS: usize = 1_000;
/// Most bytes of a promise's details kept (as JSON text).
pub const MAX_DETAILS: usize = 4_096;

/// How a promise is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Must hold every time it is evaluated (also reachability promises).
    Always,
    /// Must hold at least once.
    Sometimes,
}

/// The verdict on one promise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// It held (an `always` never false and reached if it had to be; a `sometimes` true at
    /// least once).
    Passed,
    /// An `always` promise was evaluated false.
    Violated,
    /// It had to be reached and never was.
    Unreached,
    /// A `sometimes` promise was reached but never true.
    Unmet,
}

/// One promise and what the run saw of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Promise {
    /// Its id (the SDKs' `id`; the message when there is none).
    pub id: String,
    /// What it says.
    pub message: String,
    /// How it is judged.
    pub kind: Kind,
    /// The SDK's name for it (`Always`, `AlwaysOrUnreachable`, `Sometimes`, `Reachable`,
    /// `Unreachable`, `AlwaysGreaterThan`, ...).
    pub display_type: String,
    /// Whether it must be reached.
    pub must_hit: bool,
    /// Evaluations with a true condition.
    pub passes: u64,
    /// Evaluations with a false condition.
    pub failures: u64,
    /// Virtual ns of the first false evaluation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_failure_ns: Option<u64>,
    /// Details of the first false evaluation (JSON text, bounded).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_failure_details: Option<String>,
    /// Virtual ns of the first true evaluation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_pass_ns: Option<u64>,
    /// Where it is in the program (the SDKs' `location`, JSON text, bounded).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
}

impl Status {
    /// How the summary and reports say it.
    pub fn name(self) -> &'static str {
        match self {
            Status::Passed => "passed",
            Status::Violated => "VIOLATED",
            Status::Unreached => "NEVER REACHED",
            Status::Unmet => "NEVER TRUE",
        }
    }
}

impl Promise {
    /// A promise nothing has evaluated yet.
    pub fn new(
        id: String,
        message: String,
        kind: Kind,
        display_type: String,
        must_hit: bool,
        location: Option<String>,
    ) -> Promise {
        Promise {
            id,
            message,
            kind,
            display_type,
            must_hit,
            passes: 0,
            failures: 0,
            first_failure_ns: None,
            first_failure_details: None,
            first_pass_ns: None,
            location,
        }
    }

    /// Notes one evaluation at `now_ns` (`details` made and kept for the first false one
    /// only); returns whether it is the first with this condition.
    pub fn evaluate(
        &mut self,
        now_ns: u64,
        condition: bool,
        details: impl FnOnce() -> Option<String>,
    ) -> bool {
        if condition {
            self.passes += 1;
            let first = self.first_pass_ns.is_none();
            self.first_pass_ns.get_or_insert(now_ns);
            first
        } else {
            self.failures += 1;
            if self.first_failure_ns.is_some() {
                return false;
            }
            self.first_failure_ns = Some(now_ns);
            self.first_failure_details = details();
            true
        }
    }

    /// Its verdict after the run.
    pub fn status(&self) -> Status {
        match self.kind {
            Kind::Always if self.failures > 0 => Status::Violated,
            Kind::Always if self.must_hit && self.passes == 0 => Status::Unreached,
            Kind::Always => Status::Passed,
            Kind::Sometimes if self.passes > 0 => Status::Passed,
            Kind::Sometimes if self.failures == 0 && self.must_hit => Status::Unreached,
            Kind::Sometimes if self.failures == 0 => Status::Passed,
            Kind::Sometimes => Status::Unmet,
        }
    }
}

/// Everything a run's guest programs said, as the summary and snapshots keep it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ledger {
    /// Promises by id.
    pub promises: BTreeMap<String, Promise>,
    /// Events (`send_event`) by name: how many.
    pub events: BTreeMap<String, u64>,
    /// Virtual ns when a program said its setup was complete (the first time).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub setup_complete_ns: Option<u64>,
    /// SDKs that introduced themselves (`antithesis_sdk` lines, JSON text, bounded).
    pub sdks: Vec<String>,
    /// Guidance records (`antithesis_guidance`) the SDKs sent (guided exploration steers by
    /// them, see [`Guidance`]).
    #[serde(default)]
    pub guidance: u64,
    /// Lines that were not JSON objects of the protocol.
    pub malformed: u64,
    /// Promises or event names beyond the bounds, not kept.
    pub dropped: u64,
}

/// What one line did, for the machine (which may stop the run or snapshot there).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Noted {
    /// Nothing the machine acts on.
    Nothing,
    /// An `always` promise was just evaluated false for the first time: its id.
    Violation(String),
    /// Setup was just declared complete.
    SetupComplete,
    /// A promise was evaluated with this condition for the first time in the run (not an
    /// `always` false: that is a [`Noted::Violation`]); guided exploration's signal.
    First {
        /// Its id.
        id: String,
        /// The condition.
        condition: bool,
    },
    /// A guidance record was evaluated (`hit`): its guided quantity, for guided exploration.
    Guidance(Guidance),
    /// An instrumented program reported coverage edge `edge` of `module` (`wio_coverage`).
    Edge {
        /// The program or library (its symbol file's name, as `init_coverage_module` got it).
        module: String,
        /// The edge's index in the module.
        edge: u64,
    },
}

/// One evaluation of a guidance record: which, and how good its guided quantity is.
///
/// The SDKs send numeric guidance (`guidance_data: {left, right}`, from the
/// `always_greater_than` family: the quantity is `left - right`) and boolean guidance
/// (`guidance_data: {NAME: bool, ...}`, from `always_some` and `sometimes_all`: the count of
/// true ones), with `maximize` saying which way the search should push it. `score` orders
/// evaluations of one record, higher is further that way: the quantity (negated when it is
/// minimized) as an order-preserving integer of its IEEE bits, so nothing depends on the
/// host's floating-point library.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Guidance {
    /// The record's id.
    pub id: String,
    /// Its message.
    pub message: String,
    /// Higher is further in the direction the search should push the quantity.
    pub score: u64,
}

/// `v`'s IEEE bits as an integer that orders as `v` does (NaN excluded).
fn ordered(v: f64) -> u64 {
    let bits = v.to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | 1 << 63
    }
}

/// The evaluation a guidance record `body` carries; None for a registration (`hit: false`),
/// a record without an id, or data that is not numeric or boolean guidance.
fn guidance_of(body: &Value) -> Option<Guidance> {
    if body.get("hit").and_then(Value::as_bool) != Some(true) {
        return None;
    }
    let id = body.get("id").and_then(Value::as_str)?;
    let data = body.get("guidance_data")?;
    let quantity = match body.get("guidance_type").and_then(Value::as_str)? {
        "numeric" => data.get("left")?.as_f64()? - data.get("right")?.as_f64()?,
        "boolean" => data
            .as_object()?
            .values()
            .filter(|v| v.as_bool() == Some(true))
            .count() as f64,
        _ => return None,
    };
    if quantity.is_nan() {
        return None;
    }
    let maximize = body
        .get("maximize")
        .and_then(Value::as_bool)
        .unwrap_or(true);
    Some(Guidance {
        id: bounded_id(id),
        message: body
            .get("message")
            .and_then(Value::as_str)
            .map_or_else(|| bounded_id(id), bounded_id),
        score: ordered(if maximize { quantity } else { -quantity }),
    })
}

/// An id or message of at most 256 bytes (cut at a character boundary).
fn bounded_id(s: &str) -> String {
    let mut cut = s.len().min(256);
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    s[..cut].to_string()
}

/// `value` as bounded JSON text.
fn bounded(value: &Value) -> String {
    let mut text = value.to_string();
    if text.len() > MAX_DETAILS {
        let mut cut = MAX_DETAILS;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push_str("...");
    }
    text
}

impl Ledger {
    /// Takes one line written at `now_ns`.
    pub fn note(&mut self, now_ns: u64, line: &[u8]) -> Noted {
        let Ok(Value::Object(map)) = serde_json::from_slice::<Value>(line) else {
            self.malformed += 1;
            return Noted::Nothing;
        };
        if map.len() != 1 {
            self.malformed += 1;
            return Noted::Nothing;
        }
        let Some((key, body)) = map.into_iter().next() else {
            self.malformed += 1;
            return Noted::Nothing;
        };
        match key.as_str() {
            "antithesis_assert" => self.assertion(now_ns, &body),
            "antithesis_setup" => {
                let complete = body.get("status").and_then(Value::as_str) == Some("complete");
                if complete && self.setup_complete_ns.is_none() {
                    self.setup_complete_ns = Some(now_ns);
                    return Noted::SetupComplete;
                }
                Noted::Nothing
            }
            "antithesis_guidance" => {
                self.guidance += 1;
                guidance_of(&body).map_or(Noted::Nothing, Noted::Guidance)
            }
            "wio_coverage" => {
                let module = body.get("module").and_then(Value::as_str);
                let edge = body.get("edge").and_then(Value::as_u64);
                match (module, edge) {
                    (Some(m), Some(edge)) if m.len() <= 256 => Noted::Edge {
                        module: m.to_string(),
                        edge,
                    },
                    _ => {
                        self.malformed += 1;
                        Noted::Nothing
                    }
                }
            }
            "antithesis_sdk" => {
                if self.sdks.len() < 16 {
                    self.sdks.push(bounded(&body));
                } else {
                    self.dropped += 1;
                }
                Noted::Nothing
            }
            _ => {
                if let Some(n) = self.events.get_mut(&key) {
                    *n += 1;
                } else if self.events.len() < MAX_EVENTS && key.len() <= 256 {
                    self.events.insert(key, 1);
                } else {
                    self.dropped += 1;
                }
                Noted::Nothing
            }
        }
    }

    fn assertion(&mut self, now_ns: u64, body: &Value) -> Noted {
        let text = |k: &str| body.get(k).and_then(Value::as_str);
        let flag = |k: &str| body.get(k).and_then(Value::as_bool);
        let (Some(message), Some(assert_type), Some(hit)) =
            (text("message"), text("assert_type"), flag("hit"))
        else {
            self.malformed += 1;
            return Noted::Nothing;
        };
        let kind = match assert_type {
            "always" | "reachability" => Kind::Always,
            "sometimes" => Kind::Sometimes,
            _ => {
                self.malformed += 1;
                return Noted::Nothing;
            }
        };
        let id = text("id").unwrap_or(message);
        if id.len() > 1024 || message.len() > 4096 {
            self.dropped += 1;
            return Noted::Nothing;
        }
        if !self.promises.contains_key(id) {
            if self.promises.len() >= MAX_PROMISES {
                self.dropped += 1;
                return Noted::Nothing;
            }
            self.promises.insert(
                id.to_string(),
                Promise::new(
                    id.to_string(),
                    message.to_string(),
                    kind,
                    text("display_type").unwrap_or(assert_type).to_string(),
                    flag("must_hit").unwrap_or(kind == Kind::Sometimes),
                    body.get("location").map(bounded),
                ),
            );
        }
        let Some(p) = self.promises.get_mut(id) else {
            return Noted::Nothing;
        };
        if !hit {
            return Noted::Nothing; // the catalogue entry
        }
        let details = || body.get("details").filter(|d| !d.is_null()).map(bounded);
        let condition = flag("condition").unwrap_or(false);
        if !p.evaluate(now_ns, condition, details) {
            return Noted::Nothing;
        }
        if !condition && p.kind == Kind::Always {
            Noted::Violation(p.id.clone())
        } else {
            Noted::First {
                id: p.id.clone(),
                condition,
            }
        }
    }
}

/// serde for [`Promise`] in snapshots: every field, always (postcard cannot skip the
/// optional fields the summary's JSON leaves out).
#[derive(Serialize, Deserialize)]
#[serde(remote = "Promise")]
struct PromiseState {
    id: String,
    message: String,
    kind: Kind,
    display_type: String,
    must_hit: bool,
    passes: u64,
    failures: u64,
    first_failure_ns: Option<u64>,
    first_failure_details: Option<String>,
    first_pass_ns: Option<u64>,
    location: Option<String>,
}

/// One promise as a snapshot keeps it.
#[derive(Serialize, Deserialize)]
pub struct SavedPromise(#[serde(with = "PromiseState")] Promise);

/// What a snapshot keeps of a [`Ledger`]: every field, plain data.
#[derive(Serialize, Deserialize)]
pub struct LedgerState {
    promises: Vec<SavedPromise>,
    events: Vec<(String, u64)>,
    setup_complete_ns: Option<u64>,
    sdks: Vec<String>,
    guidance: u64,
    malformed: u64,
    dropped: u64,
}

/// Why a saved ledger is refused.
#[derive(Debug, thiserror::Error)]
pub enum LedgerStateError {
    /// More than a run keeps.
    #[error("{promises} promises and {events} events, more than a run keeps ({MAX_PROMISES} and {MAX_EVENTS})")]
    Bounds {
        /// Promises saved.
        promises: usize,
        /// Event names saved.
        events: usize,
    },
    /// Two promises with one id.
    #[error("promise {0:?} is saved twice")]
    Duplicate(String),
}

impl crate::snapshot::persist::Persist for Ledger {
    type State = LedgerState;
    type Args<'a> = ();
    type Error = LedgerStateError;

    fn save(&self) -> LedgerState {
        LedgerState {
            promises: self.promises.values().cloned().map(SavedPromise).collect(),
            events: self.events.iter().map(|(k, v)| (k.clone(), *v)).collect(),
            setup_complete_ns: self.setup_complete_ns,
            sdks: self.sdks.clone(),
            guidance: self.guidance,
            malformed: self.malformed,
            dropped: self.dropped,
        }
    }

    /// Checks the bounds a run keeps and that promise ids are unique.
    fn restore(_: (), s: &LedgerState) -> Result<Ledger, LedgerStateError> {
        if s.promises.len() > MAX_PROMISES || s.events.len() > MAX_EVENTS {
            return Err(LedgerStateError::Bounds {
                promises: s.promises.len(),
                events: s.events.len(),
            });
        }
        let mut promises = BTreeMap::new();
        for SavedPromise(p) in &s.promises {
            if promises.insert(p.id.clone(), p.clone()).is_some() {
                return Err(LedgerStateError::Duplicate(p.id.clone()));
            }
        }
        Ok(Ledger {
            promises,
            events: s.events.iter().cloned().collect(),
            setup_complete_ns: s.setup_complete_ns,
            sdks: s.sdks.clone(),
            guidance: s.guidance,
            malformed: s.malformed,
            dropped: s.dropped,
        })
    }
}

#[cfg(test)]
mod tests;
