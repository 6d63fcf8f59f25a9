//! Why a world's scenario file does not parse or check.

use std::path::PathBuf;

/// A scenario that does not parse or check: the file (when read from one), the line and
/// the field (when the error is about one place) and what is wrong.
///
/// Shown as `scenario FILE: line N: REASON`; the reason names the field (`node.name "a" is
/// used twice`), and `field` gives its key path for programs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{}{reason}", file_prefix(.file), line_prefix(.line))]
pub struct ScenarioError {
    /// The scenario file, when the text came from one.
    pub file: Option<PathBuf>,
    /// The line (from 1) the error is about, when it is about one place.
    pub line: Option<usize>,
    /// The key path of the field (`"node.name"`, `"links.between"`), when known.
    pub field: Option<String>,
    /// What is wrong and what would be right.
    pub reason: String,
}

fn file_prefix(file: &Option<PathBuf>) -> String {
    file.as_ref()
        .map(|f| format!("scenario {}: ", f.display()))
        .unwrap_or_default()
}

fn line_prefix(line: &Option<usize>) -> String {
    line.map(|n| format!("line {n}: ")).unwrap_or_default()
}

impl ScenarioError {
    /// An error about `field` as a whole (every `[[node]]`, every link), no one line.
    pub fn about(field: &str, reason: impl Into<String>) -> ScenarioError {
        ScenarioError {
            file: None,
            line: None,
            field: Some(field.to_string()),
            reason: reason.into(),
        }
    }

    /// An error about `field` at byte `offset` of the scenario's `text`.
    pub fn at_offset(
        text: &str,
        offset: usize,
        field: &str,
        reason: impl Into<String>,
    ) -> ScenarioError {
        ScenarioError {
            file: None,
            line: Some(line_of(text, offset)),
            field: Some(field.to_string()),
            reason: reason.into(),
        }
    }

    /// The error TOML gives for `text`: its message, its line and the key path there
    /// (which the reason starts with, as the checks' own reasons do: `node.sched_noise:
    /// unknown variant ...`).
    pub fn toml(text: &str, e: &toml::de::Error) -> ScenarioError {
        let (line, field) = toml_place(text, e);
        let reason = match &field {
            Some(f) => format!("{f}: {}", e.message()),
            None => e.message().to_string(),
        };
        ScenarioError {
            file: None,
            line,
            field,
            reason,
        }
    }

    /// The same error, read from `file`.
    pub fn in_file(mut self, file: impl Into<PathBuf>) -> ScenarioError {
        self.file = Some(file.into());
        self
    }
}

/// A `--node-args NAME=ARGS` value that does not fit the scenario.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NodeArgsError {
    /// No `=` between the name and the arguments.
    #[error("--node-args {arg:?}: expected NAME=ARGS, e.g. payments=wio.bug=receipt-no-retry")]
    NoEquals {
        /// The value as given.
        arg: String,
    },
    /// The scenario has no node of that name.
    #[error("--node-args {arg:?}: the scenario has no node {name:?}")]
    NoNode {
        /// The value as given.
        arg: String,
        /// The node it names.
        name: String,
    },
    /// Nothing after the `=`.
    #[error("--node-args {arg:?}: no arguments")]
    NoArgs {
        /// The value as given.
        arg: String,
    },
}

/// Where a TOML error for `text` points: its line and the key path there, as far as known
/// (scenarios and fault profiles both say it).
pub(crate) fn toml_place(text: &str, e: &toml::de::Error) -> (Option<usize>, Option<String>) {
    let at = e.span().map(|s| s.start);
    (
        at.map(|o| line_of(text, o)),
        at.and_then(|o| key_path_at(text, o)),
    )
}

/// The line (from 1) of byte `offset` of `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// The key path at `offset` as far as the text shows it: the last table header before the
/// offset's line (`[[node]]` → `node`) and the key the line sets (`name = ...` →
/// `node.name`). For TOML errors, which name no field.
fn key_path_at(text: &str, offset: usize) -> Option<String> {
    let start = text[..offset.min(text.len())]
        .rfind('\n')
        .map_or(0, |i| i + 1);
    let line = text[start..].lines().next().unwrap_or_default();
    let key = line
        .split_once('=')
        .map(|(k, _)| k.trim())
        .filter(|k| !k.is_empty() && !k.starts_with(['#', '[']));
    let table = text[..start]
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with('['))
        .map(|l| l.trim_matches(['[', ']']).trim());
    match (table, key) {
        (Some(t), Some(k)) => Some(format!("{t}.{k}")),
        (None, Some(k)) => Some(k.to_string()),
        (Some(t), None) => Some(t.to_string()),
        (None, None) => None,
    }
}
