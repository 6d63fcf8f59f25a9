//! What a run reports of its promises: each with its verdict, in the summary JSON and in
//! the human summary, and the channel's counters (what a hostile guest did shows here).

use super::{Ledger, Promise, Status};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use wio_virtio_devices::console::ConsoleStats;

/// One promise with its verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    /// The verdict.
    pub status: Status,
    /// The promise and what was seen of it.
    #[serde(flatten)]
    pub promise: Promise,
}

/// The promises of a run, for the summary.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Promises {
    /// Each promise, by id order.
    pub list: Vec<Verdict>,
    /// Events by name: how many.
    pub events: BTreeMap<String, u64>,
    /// Virtual ns when setup was declared complete.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub setup_complete_ns: Option<u64>,
    /// SDKs that introduced themselves.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sdks: Vec<String>,
    /// Guidance records the SDKs sent (counted, not used).
    pub guidance: u64,
    /// Lines that were not protocol JSON.
    pub malformed: u64,
    /// Promises or events beyond the bounds.
    pub dropped: u64,
    /// The channel's counters (lines, overlong and dropped lines, random requests).
    pub channel: ConsoleStats,
}

impl Promises {
    /// The report of `ledger` over a channel that counted `channel`.
    pub fn new(ledger: &Ledger, channel: ConsoleStats) -> Promises {
        Promises {
            list: ledger
                .promises
                .values()
                .map(|p| Verdict {
                    status: p.status(),
                    promise: p.clone(),
                })
                .collect(),
            events: ledger.events.clone(),
            setup_complete_ns: ledger.setup_complete_ns,
            sdks: ledger.sdks.clone(),
            guidance: ledger.guidance,
            malformed: ledger.malformed,
            dropped: ledger.dropped,
            channel,
        }
    }

    /// The human summary's lines.
    pub fn human(&self) -> String {
        let mut s = String::new();
        for v in &self.list {
            let p = &v.promise;
            let verdict = v.status.name();
            s.push_str(&format!(
                "promise       {verdict} {} {:?} ({} true, {} false)",
                p.display_type, p.message, p.passes, p.failures
            ));
            if let Some(t) = p.first_failure_ns {
                s.push_str(&format!(
                    "; first false at {}.{:09} s",
                    t / 1_000_000_000,
                    t % 1_000_000_000
                ));
            }
            if let Some(d) = &p.first_failure_details {
                s.push_str(&format!(" {d}"));
            }
            s.push('\n');
        }
        let c = &self.channel;
        if self.malformed + self.dropped + c.overlong_lines + c.dropped_lines + c.random_refused > 0
        {
            s.push_str(&format!(
                "sdk channel   {} lines: {} malformed, {} overlong, {} dropped (flood), {} beyond bounds; {} random bytes refused\n",
                c.lines, self.malformed, c.overlong_lines, c.dropped_lines, self.dropped, c.random_refused
            ));
        }
        s
    }
}
