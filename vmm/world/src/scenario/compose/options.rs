//! A service's options that become more than one TOML key: `volumes` (host files copied
//! in, folders of the node's disk), `depends_on` conditions and `healthcheck`.

use super::text::duration_ms;
use super::{entries, err, line, scalar, Result, Tr};
use saphyr::{MarkedYaml, Scalar, YamlData};
use toml::Value;

impl Tr<'_> {
    /// A service's `volumes`: bind mounts become host files copied in (`files`), named and
    /// anonymous volumes folders of the node's own disk (`dirs`).
    pub(super) fn volumes(&mut self, service: &str, v: &MarkedYaml, at: usize) -> Result<()> {
        let field = format!("services.{service}.volumes");
        let YamlData::Sequence(items) = &v.data else {
            return Err(err(at, &field, format!("{field} is a list")));
        };
        let mut files = Vec::new();
        let mut dirs = Vec::new();
        for item in items {
            let l = line(item);
            // (source, target, read-only, kind)
            let (source, target, read_only, kind) = match &item.data {
                YamlData::Mapping(_) => {
                    let (mut source, mut target, mut ro, mut kind) = (None, None, false, None);
                    for (k, val, kl) in entries(item, &field)? {
                        match k.as_str() {
                            "type" => kind = Some(self.string(val, &field)?),
                            "source" => source = Some(self.string(val, &field)?),
                            "target" => target = Some(self.string(val, &field)?),
                            "read_only" => ro = scalar(val).as_deref() == Some("true"),
                            other => {
                                return Err(err(
                                    kl,
                                    &field,
                                    format!("{field}: {other} is not a volume option wio knows"),
                                ))
                            }
                        }
                    }
                    let target = target.ok_or_else(|| {
                        err(l, &field, format!("{field}: a volume needs a target"))
                    })?;
                    (source, target, ro, kind)
                }
                _ => {
                    let spec = self.string(item, &field)?;
                    let parts: Vec<&str> = spec.split(':').collect();
                    match parts.as_slice() {
                        [t] => (None, t.to_string(), false, None),
                        [s, t] => (Some(s.to_string()), t.to_string(), false, None),
                        [s, t, mode] => (
                            Some(s.to_string()),
                            t.to_string(),
                            mode.split(',').any(|m| m == "ro"),
                            None,
                        ),
                        _ => {
                            return Err(err(
                                l,
                                &field,
                                format!("{field}: {spec:?} is not SOURCE:TARGET[:MODE]"),
                            ))
                        }
                    }
                }
            };
            let is_path = |s: &str| s.starts_with('.') || s.starts_with('/');
            let kind = kind.unwrap_or_else(|| match &source {
                Some(s) if is_path(s) => "bind".into(),
                _ => "volume".into(),
            });
            match (kind.as_str(), source) {
                ("bind", Some(s)) => {
                    let mut t = toml::value::Table::new();
                    t.insert("source".into(), Value::String(s));
                    t.insert("target".into(), Value::String(target));
                    t.insert("read_only".into(), Value::Boolean(read_only));
                    files.push(Value::Table(t));
                }
                ("bind", None) => {
                    return Err(err(
                        l,
                        &field,
                        format!("{field}: a bind mount needs a source"),
                    ))
                }
                ("volume", Some(name)) if name.starts_with('~') => {
                    return Err(err(l, &field, format!("{field}: {name}: a path from the home folder makes the world depend on who runs it; give a path relative to the compose file")));
                }
                ("volume", Some(name)) => {
                    match self.volumes.get_mut(&name) {
                        None => return Err(err(l, &field, format!("{field}: volume {name:?} is not declared under the top-level volumes"))),
                        Some(Some(other)) if other != service => {
                            return Err(err(l, &field, format!("{field}: volume {name:?} is also {other}'s; nodes are separate machines, so a volume belongs to one service")));
                        }
                        Some(slot) => *slot = Some(service.to_string()),
                    }
                    dirs.push(Value::String(target));
                }
                ("volume" | "tmpfs", None) => dirs.push(Value::String(target)),
                (other, _) => {
                    return Err(err(
                        l,
                        &field,
                        format!(
                            "{field}: volume type {other} is not supported (bind, volume, tmpfs)"
                        ),
                    ))
                }
            }
        }
        if !files.is_empty() {
            self.emit_value(at, "files", Value::Array(files));
        }
        if !dirs.is_empty() {
            self.emit_value(at, "dirs", Value::Array(dirs));
        }
        Ok(())
    }

    /// A `depends_on` entry's options: whether to wait until the service is healthy.
    pub(super) fn condition(&self, opts: &MarkedYaml, field: &str) -> Result<bool> {
        if matches!(opts.data, YamlData::Value(Scalar::Null)) {
            return Ok(false);
        }
        let mut healthy = false;
        for (k, v, at) in entries(opts, field)? {
            match k.as_str() {
                "condition" => match self.string(v, field)?.as_str() {
                    "service_healthy" => healthy = true,
                    "service_started" => {}
                    other => {
                        return Err(err(at, field, format!("{field}: condition {other} is not supported by wio (yet): it takes service_started and service_healthy")));
                    }
                },
                "restart" | "required" => {}
                other => {
                    return Err(err(
                        at,
                        field,
                        format!("{field}.{other} is not a depends_on option wio knows"),
                    ))
                }
            }
        }
        Ok(healthy)
    }

    /// `healthcheck`: its test (CMD, CMD-SHELL, a string, NONE) and interval.
    pub(super) fn healthcheck(&mut self, v: &MarkedYaml, field: &str) -> Result<()> {
        let mut test: Option<(Vec<String>, usize)> = None;
        let mut interval_ms = None;
        let mut disabled = false;
        for (k, val, at) in entries(v, field)? {
            match k.as_str() {
                "test" => {
                    let words = match &val.data {
                        YamlData::Sequence(_) => {
                            let w = self.words(val, field)?;
                            match w.split_first() {
                                Some((kind, rest)) if kind == "CMD" => rest.to_vec(),
                                Some((kind, rest)) if kind == "CMD-SHELL" => {
                                    vec!["/bin/sh".into(), "-c".into(), rest.join(" ")]
                                }
                                Some((kind, _)) if kind == "NONE" => Vec::new(),
                                _ => {
                                    return Err(err(at, field, format!("{field}.test: a list starts with CMD, CMD-SHELL or NONE")));
                                }
                            }
                        }
                        _ => vec!["/bin/sh".into(), "-c".into(), self.string(val, field)?],
                    };
                    test = Some((words, at));
                }
                "interval" => {
                    let d = self.string(val, field)?;
                    interval_ms = Some(duration_ms(&d).ok_or_else(|| {
                        err(at, field, format!("{field}.interval: {d:?} is not a duration such as 1s, 500ms, 1m30s"))
                    })?);
                }
                "disable" => disabled = scalar(val).as_deref() == Some("true"),
                "timeout" | "retries" | "start_period" | "start_interval" => {
                    self.warnings.push(format!("{field}.{k} (line {at}) is ignored: wio tries the check every interval until it succeeds"));
                }
                other => {
                    return Err(err(
                        at,
                        field,
                        format!("{field}.{other} is not a healthcheck option wio knows"),
                    ))
                }
            }
        }
        if let Some((words, at)) = test.filter(|(w, _)| !disabled && !w.is_empty()) {
            self.emit_value(
                at,
                "healthcheck",
                Value::Array(words.into_iter().map(Value::String).collect()),
            );
            if let Some(ms) = interval_ms {
                self.emit_value(at, "healthcheck_interval_ms", Value::Integer(ms as i64));
            }
        }
        Ok(())
    }
}
