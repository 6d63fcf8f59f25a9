//! Compose files (`wio sim compose.yaml`): the common subset of the Compose specification,
//! translated into a world scenario (one image node per service), then checked as a TOML
//! scenario is, with every error's line mapped back to the compose file.
//!
//! Taken: `services` with `image` (an imported name, or an image archive or OCI layout
//! path, imported on the way), `command` and `entrypoint` (a list, or a string split as a
//! shell would without running one), `environment` (a list or a map), `env_file`, `user`,
//! `working_dir`, `restart`, `hostname` (when it is the service's name: nodes are found by it),
//! `healthcheck` (test and interval), `depends_on` (a list, or the conditions
//! `service_started` and `service_healthy`: the node then waits for the other's check),
//! `networks` (at the top level, names with `driver`, `internal`, `attachable` or `labels`
//! ignored; in a service, a list or a mapping without options: services reach each other
//! through a network they share; see `scenario/networks.rs`), `volumes` (a bind
//! mount's host files are copied into the node, read-only when asked; a named or
//! anonymous volume is a folder of the node's own disk, so one service's only); `x-wio` at the top
//! (`max_virtual_secs`, `end_when_done`, and the tables `link` and `faults` of a TOML
//! world) and in a service (`mem_mib`, `faults`,
//! `sched_noise`, `clock_drift_ppm`, `cmdline`); other `x-` keys are ignored, as the spec
//! says. Ignored with a warning, being safe to ignore in a closed world: `ports`,
//! `expose`, `container_name`, `labels`, `logging`, `tty`, `stdin_open`, `init`, `stop_signal`, `stop_grace_period`, `version`, `name`. Anything
//! else is an error naming the key and its line.
//!
//! Variables (`$VAR`, `${VAR}`, `${VAR:-default}`, `${VAR-default}`; `$$` is a `$`) take
//! their values from the `.env` file beside the compose file, never from wio's own
//! environment: a world is a function of its files and its seed. A variable neither there
//! nor defaulted is an error.

use std::collections::BTreeMap;
use std::path::Path;
use toml::Value;
use wio_machines::error::ScenarioError;

use saphyr::{LoadableYamlNode, MarkedYaml, Scalar, YamlData};
use text::{parse_env, read_env_file, split};

mod networks;
mod options;
mod text;

pub use text::split as shell_split;

type Result<T> = std::result::Result<T, ScenarioError>;

/// A compose file as a TOML scenario: its text, the compose line each TOML line came
/// from, and the warnings to print.
#[derive(Debug)]
pub(super) struct Translated {
    pub(super) toml: String,
    pub(super) lines: Vec<usize>,
    pub(super) warnings: Vec<String>,
}

/// Service keys wio ignores with a warning, and why that is safe.
const IGNORED: &[(&str, &str)] = &[
    ("ports", "a world has no host network"),
    ("expose", "every node reaches every port of the others"),
    ("container_name", "nodes are named by their service"),
    ("labels", "labels change nothing a guest sees"),
    ("logging", "the console is the log"),
    ("tty", "the console is the terminal"),
    ("stdin_open", "the console is the terminal"),
    ("init", "wio's launcher is the machine's init"),
    ("stop_signal", "a world stops all its machines at once"),
    (
        "stop_grace_period",
        "a world stops all its machines at once",
    ),
];

struct Tr<'a> {
    base: &'a Path,
    vars: BTreeMap<String, String>,
    /// Named volumes the file declares, and the service that uses each (a volume is a
    /// folder of one node's disk: two machines cannot share it).
    volumes: BTreeMap<String, Option<String>>,
    /// Networks the file declares (at the top level), and their lines.
    networks: BTreeMap<String, usize>,
    toml: String,
    lines: Vec<usize>,
    warnings: Vec<String>,
}

fn line(n: &MarkedYaml) -> usize {
    n.span.start.line()
}

fn err(line: usize, field: &str, reason: String) -> ScenarioError {
    ScenarioError {
        file: None,
        line: Some(line),
        field: Some(field.to_string()),
        reason,
    }
}

/// The entries of a mapping with string keys, in file order.
fn entries<'a, 'b>(
    n: &'b MarkedYaml<'a>,
    field: &str,
) -> Result<Vec<(String, &'b MarkedYaml<'a>, usize)>> {
    match &n.data {
        YamlData::Mapping(m) => m
            .iter()
            .map(|(k, v)| match &k.data {
                YamlData::Value(Scalar::String(s)) => Ok((s.to_string(), v, line(k))),
                _ => Err(err(line(k), field, format!("{field}: keys are names"))),
            })
            .collect(),
        _ => Err(err(
            line(n),
            field,
            format!("{field} is a mapping (key: value lines)"),
        )),
    }
}

/// Whether a YAML value is empty: `name:` or `name: {}` (a declaration without options).
fn empty(v: &MarkedYaml) -> bool {
    match &v.data {
        YamlData::Value(Scalar::Null) => true,
        YamlData::Mapping(m) => m.is_empty(),
        _ => false,
    }
}

/// A scalar as text (numbers and booleans as YAML writes them), or None.
fn scalar(n: &MarkedYaml) -> Option<String> {
    match &n.data {
        YamlData::Value(Scalar::String(s)) => Some(s.to_string()),
        YamlData::Value(Scalar::Integer(i)) => Some(i.to_string()),
        YamlData::Value(Scalar::Boolean(b)) => Some(b.to_string()),
        YamlData::Value(Scalar::FloatingPoint(f)) => Some(f.to_string()),
        _ => None,
    }
}

impl Tr<'_> {
    fn emit(&mut self, compose_line: usize, text: String) {
        self.toml.push_str(&text);
        self.toml.push('\n');
        self.lines.push(compose_line);
    }

    fn emit_value(&mut self, compose_line: usize, key: &str, v: Value) {
        self.emit(compose_line, format!("{key} = {v}"));
    }

    /// A string value with its variables replaced.
    fn string(&self, n: &MarkedYaml, field: &str) -> Result<String> {
        let s = scalar(n).ok_or_else(|| err(line(n), field, format!("{field} is a string")))?;
        self.interpolate(&s, line(n), field)
    }

    fn interpolate(&self, s: &str, at: usize, field: &str) -> Result<String> {
        let mut out = String::new();
        let mut rest = s;
        while let Some(i) = rest.find('$') {
            out.push_str(&rest[..i]);
            rest = &rest[i + 1..];
            if let Some(r) = rest.strip_prefix('$') {
                out.push('$');
                rest = r;
                continue;
            }
            let (name, default, after) = if let Some(r) = rest.strip_prefix('{') {
                let end = r
                    .find('}')
                    .ok_or_else(|| err(at, field, format!("{field}: an unclosed ${{ in {s:?}")))?;
                let inner = &r[..end];
                let (name, default) = match inner.find([':', '-']) {
                    Some(j) => {
                        let d = inner[j..].trim_start_matches(':');
                        let d = d.strip_prefix('-').ok_or_else(|| {
                            err(at, field, format!("{field}: ${{{inner}}}: wio takes ${{VAR}}, ${{VAR:-default}} and ${{VAR-default}}"))
                        })?;
                        (&inner[..j], Some(d))
                    }
                    None => (inner, None),
                };
                (name, default, &r[end + 1..])
            } else {
                let end = rest
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(rest.len());
                (&rest[..end], None, &rest[end..])
            };
            if name.is_empty() {
                return Err(err(
                    at,
                    field,
                    format!("{field}: a lone $ in {s:?} (write $$ for a $)"),
                ));
            }
            match (self.vars.get(name), default) {
                (Some(v), _) => out.push_str(v),
                (None, Some(d)) => out.push_str(d),
                (None, None) => {
                    return Err(err(
                        at,
                        field,
                        format!("{field}: ${name} is not set in the .env file beside the compose file (wio never reads its own environment into a world); set it there, give a default (${{{name}:-value}}), or write $$ for a $"),
                    ))
                }
            }
            rest = after;
        }
        out.push_str(rest);
        Ok(out)
    }

    /// A list of strings, or a string split as a shell would.
    fn words(&self, n: &MarkedYaml, field: &str) -> Result<Vec<String>> {
        match &n.data {
            YamlData::Sequence(items) => items.iter().map(|i| self.string(i, field)).collect(),
            _ => {
                let s = self.string(n, field)?;
                split(&s).map_err(|why| err(line(n), field, format!("{field}: {why}")))
            }
        }
    }

    fn service(
        &mut self,
        name: &str,
        name_line: usize,
        svc: &MarkedYaml,
        services: &[String],
    ) -> Result<()> {
        self.emit(name_line, "[[node]]".into());
        self.emit_value(name_line, "name", Value::String(name.into()));
        let mut env: Vec<(String, String)> = Vec::new();
        let mut env_file: Vec<(String, String)> = Vec::new();
        let mut has_image = false;
        let mut started_only = false;
        let f = |k: &str| format!("services.{name}.{k}");
        for (key, v, at) in entries(svc, &f(""))? {
            match key.as_str() {
                "image" => {
                    has_image = true;
                    let reference = self.image(v, &f("image"))?;
                    self.emit_value(at, "image", Value::String(reference));
                }
                "command" | "entrypoint" => {
                    let words = self.words(v, &f(&key))?;
                    self.emit_value(
                        at,
                        &key,
                        Value::Array(words.into_iter().map(Value::String).collect()),
                    );
                }
                "user" | "working_dir" | "restart" => {
                    let s = self.string(v, &f(&key))?;
                    self.emit_value(at, &key, Value::String(s));
                }
                "environment" => env = self.environment(v, &f("environment"))?,
                "env_file" => {
                    let files = match &v.data {
                        YamlData::Sequence(items) => items
                            .iter()
                            .map(|i| self.string(i, &f("env_file")))
                            .collect::<Result<Vec<_>>>()?,
                        _ => vec![self.string(v, &f("env_file"))?],
                    };
                    for file in files {
                        env_file.extend(read_env_file(&self.base.join(&file)).map_err(|why| {
                            err(
                                at,
                                &f("env_file"),
                                format!("{}: {file}: {why}", f("env_file")),
                            )
                        })?);
                    }
                }
                "hostname" => {
                    let h = self.string(v, &f("hostname"))?;
                    if h != name {
                        return Err(err(at, &f("hostname"), format!("{}: {h:?} differs from the service's name; nodes are found by their service's name, so leave hostname out", f("hostname"))));
                    }
                }
                "depends_on" => {
                    // (service, its line, whether to wait until it is healthy)
                    let deps: Vec<(String, usize, bool)> = match &v.data {
                        YamlData::Sequence(items) => items
                            .iter()
                            .map(|i| Ok((self.string(i, &f("depends_on"))?, line(i), false)))
                            .collect::<Result<_>>()?,
                        _ => entries(v, &f("depends_on"))?
                            .into_iter()
                            .map(|(k, opts, l)| Ok((k, l, self.condition(opts, &f("depends_on"))?)))
                            .collect::<Result<_>>()?,
                    };
                    let mut wait = Vec::new();
                    for (d, l, healthy) in deps {
                        if !services.contains(&d) {
                            return Err(err(
                                l,
                                &f("depends_on"),
                                format!("{}: no service {d:?}", f("depends_on")),
                            ));
                        }
                        if healthy {
                            wait.push(Value::String(d));
                        } else {
                            started_only = true;
                        }
                    }
                    if !wait.is_empty() {
                        self.emit_value(at, "wait_healthy", Value::Array(wait));
                    }
                }
                "healthcheck" => self.healthcheck(v, &f("healthcheck"))?,
                "networks" => self.service_networks(name, v, at)?,
                "volumes" => self.volumes(name, v, at)?,
                "platform" => {
                    let p = self.string(v, &f("platform"))?;
                    if p != wio_images::select::PLATFORM {
                        return Err(err(
                            at,
                            &f("platform"),
                            format!("{}: {p}: wio runs linux/riscv64 images", f("platform")),
                        ));
                    }
                }
                "x-wio" => self.x_wio_node(v, &f("x-wio"))?,
                k if k.starts_with("x-") => {}
                k => match IGNORED.iter().find(|(i, _)| *i == k) {
                    Some((_, why)) => self
                        .warnings
                        .push(format!("services.{name}.{k} (line {at}) is ignored: {why}")),
                    None => {
                        return Err(err(at, &f(k), format!("{} is not supported by wio (yet); remove it, or see docs/images.md for the keys wio takes", f(k))));
                    }
                },
            }
        }
        if started_only {
            self.warnings.push(format!("services.{name}.depends_on: the nodes of a world boot together, so a dependency without condition: service_healthy is only started, not ready; the service must retry until it answers (as under compose)"));
        }
        if !has_image {
            return Err(err(name_line, &f("image"), format!("services.{name} has no image (wio runs images: build one, then name it or its archive here)")));
        }
        // env_file first, environment over it (as compose does).
        let mut all: Vec<(String, String)> = env_file;
        for (k, v) in env {
            all.retain(|(x, _)| *x != k);
            all.push((k, v));
        }
        if !all.is_empty() {
            let list = all
                .into_iter()
                .map(|(k, v)| Value::String(format!("{k}={v}")))
                .collect();
            self.emit_value(name_line, "environment", Value::Array(list));
        }
        Ok(())
    }

    /// `image`: an archive or layout path (imported now) or an imported image's name.
    fn image(&self, v: &MarkedYaml, field: &str) -> Result<String> {
        let s = self.string(v, field)?;
        let p = self.base.join(&s);
        let is_source = p.is_file() || p.join("oci-layout").is_file();
        if !is_source {
            return Ok(s);
        }
        let opts = wio_images::ImportOptions {
            path: p,
            ..wio_images::ImportOptions::default()
        };
        let imported = wio_images::import(&opts, &mut |step| eprintln!("wio: image {s}: {step}"))
            .map_err(|e| err(line(v), field, format!("{field}: {e}")))?;
        Ok(imported.record.id)
    }

    fn environment(&self, v: &MarkedYaml, field: &str) -> Result<Vec<(String, String)>> {
        let pair = |s: String, at: usize| {
            match s.split_once('=') {
            Some((k, v)) => Ok((k.to_string(), v.to_string())),
            None => Err(err(at, field, format!("{field}: {s:?} has no value (wio never passes its own environment in): write {s}=VALUE"))),
        }
        };
        match &v.data {
            YamlData::Sequence(items) => items
                .iter()
                .map(|i| pair(self.string(i, field)?, line(i)))
                .collect(),
            _ => entries(v, field)?
                .into_iter()
                .map(|(k, val, at)| match val.data {
                    YamlData::Value(Scalar::Null) => pair(k, at),
                    _ => Ok((k, self.string(val, field)?)),
                })
                .collect(),
        }
    }

    fn x_wio_node(&mut self, v: &MarkedYaml, field: &str) -> Result<()> {
        for (key, val, at) in entries(v, field)? {
            match key.as_str() {
                "mem_mib" | "clock_drift_ppm" => {
                    let n = scalar(val).and_then(|s| s.parse::<i64>().ok()).ok_or_else(|| err(at, field, format!("{field}.{key} is a number")))?;
                    self.emit_value(at, &key, Value::Integer(n));
                }
                "faults" | "sched_noise" | "cmdline" => {
                    let s = self.string(val, field)?;
                    self.emit_value(at, &key, Value::String(s));
                }
                k => return Err(err(at, field, format!("{field}.{k}: wio takes mem_mib, faults, sched_noise, clock_drift_ppm, cmdline"))),
            }
        }
        Ok(())
    }
}

/// Translates compose `text` (its folder `base`, for paths and `.env`).
pub(super) fn translate(text: &str, base: &Path) -> Result<Translated> {
    let docs = MarkedYaml::load_from_str(text).map_err(|e| {
        err(
            e.marker().line(),
            "compose",
            format!("not YAML: {}", e.info()),
        )
    })?;
    let [doc] = docs.as_slice() else {
        return Err(ScenarioError::about(
            "compose",
            "a compose file is one YAML document",
        ));
    };
    let vars = match std::fs::read_to_string(base.join(".env")) {
        Ok(t) => {
            parse_env(&t).map_err(|why| ScenarioError::about("compose", format!(".env: {why}")))?
        }
        Err(_) => BTreeMap::new(),
    };
    let mut tr = Tr {
        base,
        vars,
        volumes: BTreeMap::new(),
        networks: BTreeMap::new(),
        toml: String::new(),
        lines: Vec::new(),
        warnings: Vec::new(),
    };
    let top = entries(doc, "compose")?;
    let mut services = None;
    // x-wio's tables ([link], [faults]) go after every top-level key, as TOML needs.
    let mut tables: Vec<(usize, String, &MarkedYaml)> = Vec::new();
    for (key, v, at) in &top {
        match key.as_str() {
            "services" => services = Some((*v, *at)),
            "networks" => tr.declare_networks(v)?,
            "x-wio" => {
                for (k, val, l) in entries(v, "x-wio")? {
                    match k.as_str() {
                        "max_virtual_secs" => {
                            let n = scalar(val).and_then(|s| s.parse::<i64>().ok()).ok_or_else(
                                || err(l, "x-wio", "x-wio.max_virtual_secs is a number".into()),
                            )?;
                            tr.emit_value(l, "max_virtual_secs", Value::Integer(n));
                        }
                        "end_when_done" => {
                            let names = tr.words(val, "x-wio.end_when_done")?;
                            tr.emit_value(
                                l,
                                "end_when_done",
                                Value::Array(names.into_iter().map(Value::String).collect()),
                            );
                        }
                        "link" | "faults" => tables.push((l, k.clone(), val)),
                        other => {
                            return Err(err(
                                l,
                                "x-wio",
                                format!("x-wio.{other}: wio takes max_virtual_secs, end_when_done, link and faults here"),
                            ))
                        }
                    }
                }
            }
            "version" | "name" => {}
            k if k.starts_with("x-") => {}
            "volumes" => {
                for (name, opts, l) in entries(v, "volumes")? {
                    if !empty(opts) {
                        return Err(err(l, "volumes", format!("volumes.{name}: volume options (driver, external, ...) are not supported: a volume is a folder of its node's disk")));
                    }
                    tr.volumes.insert(name, None);
                }
            }
            "configs" | "secrets" | "include" => {
                return Err(err(
                    *at,
                    key,
                    format!("{key} is not supported by wio (yet); see docs/images.md"),
                ));
            }
            k => return Err(err(*at, k, format!("{k}: not a compose key wio knows"))),
        }
    }
    for (l, name, t) in tables {
        tr.emit(l, format!("[{name}]"));
        for (k, v, kl) in entries(t, &format!("x-wio.{name}"))? {
            let value = match &v.data {
                YamlData::Value(Scalar::Integer(n)) => Value::Integer(*n),
                YamlData::Value(Scalar::Boolean(b)) => Value::Boolean(*b),
                _ => Value::String(tr.string(v, &format!("x-wio.{name}.{k}"))?),
            };
            tr.emit_value(kl, &k, value);
        }
    }
    let (services, at) = services.ok_or_else(|| {
        ScenarioError::about("services", "no services: a compose file lists its services")
    })?;
    let list = entries(services, "services")?;
    if list.is_empty() {
        return Err(err(at, "services", "services is empty".into()));
    }
    let names: Vec<String> = list.iter().map(|(n, _, _)| n.clone()).collect();
    for (name, svc, l) in &list {
        tr.service(name, *l, svc, &names)?;
    }
    Ok(Translated {
        toml: tr.toml,
        lines: tr.lines,
        warnings: tr.warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_service_becomes_an_image_node_with_its_lines() {
        let text = "services:\n  web:\n    image: web:1\n    command: [\"serve\", \"--port\", \"80\"]\n    environment:\n      MODE: test\n      N: 3\n    restart: always\n    ports: [\"80:80\"]\n";
        let t = translate(text, Path::new("/nonexistent")).unwrap();
        assert_eq!(
            t.toml,
            "[[node]]\nname = \"web\"\nimage = \"web:1\"\ncommand = [\"serve\", \"--port\", \"80\"]\nrestart = \"always\"\nenvironment = [\"MODE=test\", \"N=3\"]\n"
        );
        assert_eq!(t.lines, vec![2, 2, 3, 4, 8, 2]);
        assert_eq!(t.warnings.len(), 1, "{:?}", t.warnings);
        assert!(t.warnings[0].contains("ports (line 9) is ignored"));
    }

    #[test]
    fn x_wio_tables_follow_the_top_level_keys() {
        let text = "x-wio:\n  link:\n    latency_us: 250\n  faults:\n    profile: heavy\n    after_ms: 500\n  max_virtual_secs: 120\nservices:\n  a:\n    image: x:1\n";
        let t = translate(text, Path::new("/nonexistent")).unwrap();
        assert_eq!(
            t.toml,
            "max_virtual_secs = 120\n[link]\nlatency_us = 250\n[faults]\nprofile = \"heavy\"\nafter_ms = 500\n[[node]]\nname = \"a\"\nimage = \"x:1\"\n"
        );
        assert_eq!(t.lines, vec![7, 2, 3, 4, 5, 6, 9, 9, 10]);
    }

    #[test]
    fn volumes_are_host_files_or_folders_of_one_node() {
        let text = "volumes:\n  data:\nservices:\n  a:\n    image: x:1\n    volumes:\n      - ./conf:/etc/a:ro\n      - data:/data\n      - /tmp/x\n";
        let t = translate(text, Path::new("/nonexistent")).unwrap();
        assert!(
            t.toml.contains(
                "files = [{ read_only = true, source = \"./conf\", target = \"/etc/a\" }]"
            ),
            "{}",
            t.toml
        );
        assert!(
            t.toml.contains("dirs = [\"/data\", \"/tmp/x\"]"),
            "{}",
            t.toml
        );
        let shared = "volumes:\n  data:\nservices:\n  a:\n    image: x:1\n    volumes: [\"data:/d\"]\n  b:\n    image: x:1\n    volumes: [\"data:/d\"]\n";
        let e = translate(shared, Path::new("/nonexistent")).unwrap_err();
        assert_eq!(e.line, Some(9));
        assert!(e.reason.contains("volume \"data\" is also a's"), "{e}");
        let undeclared = "services:\n  a:\n    image: x:1\n    volumes: [\"data:/d\"]\n";
        let e = translate(undeclared, Path::new("/nonexistent")).unwrap_err();
        assert!(
            e.reason
                .contains("not declared under the top-level volumes"),
            "{e}"
        );
    }

    #[test]
    fn networks_are_declared_then_named_by_services() {
        let text = "services:\n  web:\n    image: x:1\n    networks: [front]\n  api:\n    image: x:1\n    networks:\n      front:\n      back: {}\n  db:\n    image: x:1\n    networks: [back]\n  cache:\n    image: x:1\nnetworks:\n  front:\n    driver: bridge\n  back:\n";
        let t = translate(text, Path::new("/nonexistent")).unwrap();
        assert!(
            t.toml
                .contains("name = \"web\"\nimage = \"x:1\"\nnetworks = [\"front\"]\n"),
            "{}",
            t.toml
        );
        assert!(
            t.toml.contains("networks = [\"front\", \"back\"]\n"),
            "{}",
            t.toml
        );
        assert!(
            t.toml.contains("name = \"cache\"\nimage = \"x:1\"\n"),
            "{}",
            t.toml
        );
        assert_eq!(t.toml.matches("networks =").count(), 3, "{}", t.toml);
        assert_eq!(t.warnings.len(), 1, "{:?}", t.warnings);
        assert!(t.warnings[0].contains("networks.front.driver (line 17) is ignored"));
        let undeclared = "services:\n  a:\n    image: x:1\n    networks: [back]\n";
        let e = translate(undeclared, Path::new("/nonexistent")).unwrap_err();
        assert_eq!(e.line, Some(4));
        assert!(e.reason.contains("network \"back\" is not declared"), "{e}");
        let alias = "services:\n  a:\n    image: x:1\n    networks:\n      n:\n        aliases: [b]\nnetworks:\n  n:\n";
        let e = translate(alias, Path::new("/nonexistent")).unwrap_err();
        assert_eq!(e.line, Some(5));
        assert!(e.reason.contains("per-service network options"), "{e}");
        let external = "services:\n  a:\n    image: x:1\nnetworks:\n  n:\n    external: true\n";
        let e = translate(external, Path::new("/nonexistent")).unwrap_err();
        assert_eq!(e.line, Some(6));
        assert!(
            e.reason.contains("networks.n.external is not supported"),
            "{e}"
        );
    }

    #[test]
    fn unsupported_keys_and_unset_variables_name_their_line() {
        let e = translate(
            "services:\n  a:\n    image: x:1\n    build: .\n",
            Path::new("/nonexistent"),
        )
        .unwrap_err();
        assert_eq!(e.line, Some(4));
        assert!(
            e.reason.contains("services.a.build is not supported"),
            "{e}"
        );
        let e = translate(
            "services:\n  a:\n    image: x:1\n    command: echo $HOME\n",
            Path::new("/nonexistent"),
        )
        .unwrap_err();
        assert_eq!(e.line, Some(4));
        assert!(
            e.reason.contains("$HOME is not set in the .env file"),
            "{e}"
        );
        let t = translate(
            "services:\n  a:\n    image: x:1\n    command: echo $$HOME ${U:-me}\n",
            Path::new("/nonexistent"),
        )
        .unwrap();
        assert!(
            t.toml.contains("command = [\"echo\", \"$HOME\", \"me\"]"),
            "{}",
            t.toml
        );
    }
}
