//! What the summary and its human form say of the test composer: the template, every run
//! and how it ended, the windows in which faults were held off.

use serde::Serialize;

/// What the summary says of the composer.
#[derive(Debug, Clone, Serialize)]
pub struct ComposerReport {
    /// Every command the agents found (`NODE:TEMPLATE/NAME`).
    pub commands_found: Vec<String>,
    /// The template the seed chose (None: none had a driver, or the composer never
    /// started).
    pub template: Option<String>,
    /// When it started (setup complete and every agent reported), virtual ns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub started_ns: Option<u64>,
    /// Whether every command of the branch ended.
    pub finished: bool,
    /// Every run, in start order.
    pub runs: Vec<RunReport>,
    /// The windows in which faults were held off, virtual ns ([from, until)).
    pub quiet: Vec<(u64, u64)>,
    /// Agent lines it could not read.
    pub bad_lines: u64,
}

impl ComposerReport {
    /// Its lines in the human summary.
    pub fn human(&self) -> String {
        let secs = |ns: u64| {
            format!(
                "{}.{:03}",
                ns / 1_000_000_000,
                ns % 1_000_000_000 / 1_000_000
            )
        };
        let mut s = match (&self.template, self.started_ns) {
            (None, _) if self.commands_found.is_empty() => {
                "composer      no test commands found (/opt/antithesis/test/v1/<template>/)\n".into()
            }
            (Some(t), _) => format!(
                "composer      template {t}: {} run(s), {}\n",
                self.runs.len(),
                if self.finished { "all ended" } else { "not finished" }
            ),
            (None, Some(_)) => "composer      no template has a driver or anytime_ command: nothing ran\n".into(),
            (None, None) => format!(
                "composer      {} test command(s) found, never started: no program declared setup complete\n",
                self.commands_found.len()
            ),
        };
        for r in &self.runs {
            let end = match (r.ended_ns, r.status, r.killed) {
                (Some(t), Some(st), true) => format!("{} s, killed (status {st})", secs(t)),
                (Some(t), Some(st), false) => format!("{} s, exit {st}", secs(t)),
                (Some(t), None, _) => format!("{} s, lost: its node ended or restarted", secs(t)),
                (None, _, _) => "still running".into(),
            };
            s.push_str(&format!(
                "  run {:<3}     {} on {}: {} s .. {end}\n",
                r.run,
                r.command,
                r.node,
                secs(r.started_ns)
            ));
        }
        s
    }
}

/// One run of a command, for the summary.
#[derive(Debug, Clone, Serialize)]
pub struct RunReport {
    /// Its id (start order).
    pub run: usize,
    /// `TEMPLATE/NAME`.
    pub command: String,
    /// The node it ran on.
    pub node: String,
    /// When it started, virtual ns.
    pub started_ns: u64,
    /// When it ended, virtual ns (None: still running at the world's end).
    pub ended_ns: Option<u64>,
    /// Its exit status (128 + signal number when a signal ended it).
    pub status: Option<i32>,
    /// Whether the composer killed it (an `eventually_` command came).
    pub killed: bool,
}
