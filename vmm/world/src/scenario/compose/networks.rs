//! Compose `networks`: the top-level declarations and a service's list, translated into
//! the nodes' `networks` (see `scenario/networks.rs` for what a network is in a world).
//! A service that names no network is on `default`, as under compose.

use super::{empty, entries, err, line, Result, Tr};
use saphyr::{MarkedYaml, YamlData};
use toml::Value;

/// Network options wio ignores with a warning, and why that is safe.
const IGNORED: &[(&str, &str)] = &[
    ("driver", "every network of a world is one simulated switch"),
    (
        "internal",
        "a world has no host network: every network is internal",
    ),
    ("attachable", "only the world's nodes are on its networks"),
    ("labels", "labels change nothing a guest sees"),
];

impl Tr<'_> {
    /// The top-level `networks`: names, with options wio ignores (said) or refuses.
    pub(super) fn declare_networks(&mut self, v: &MarkedYaml) -> Result<()> {
        for (name, opts, l) in entries(v, "networks")? {
            if !empty(opts) {
                for (k, _, kl) in entries(opts, &format!("networks.{name}"))? {
                    match IGNORED.iter().find(|(i, _)| *i == k) {
                        Some((_, why)) => self.warnings.push(format!(
                            "networks.{name}.{k} (line {kl}) is ignored: {why}"
                        )),
                        None => {
                            return Err(err(
                                kl,
                                &format!("networks.{name}.{k}"),
                                format!("networks.{name}.{k} is not supported by wio: a network is a set of nodes that reach each other (see docs/images.md)"),
                            ))
                        }
                    }
                }
            }
            self.networks.insert(name, l);
        }
        Ok(())
    }

    /// A service's `networks` (a list, or a mapping whose values are empty): each one the
    /// top level declares, or `default`; emitted as the node's `networks`.
    pub(super) fn service_networks(
        &mut self,
        service: &str,
        v: &MarkedYaml,
        at: usize,
    ) -> Result<()> {
        let field = format!("services.{service}.networks");
        let named: Vec<(String, usize)> = match &v.data {
            YamlData::Sequence(items) => items
                .iter()
                .map(|i| Ok((self.string(i, &field)?, line(i))))
                .collect::<Result<_>>()?,
            _ => entries(v, &field)?
                .into_iter()
                .map(|(k, opts, l)| {
                    if empty(opts) {
                        Ok((k, l))
                    } else {
                        Err(err(l, &field, format!("{field}.{k}: per-service network options (aliases, addresses, ...) are not supported: a node is found by its service's name")))
                    }
                })
                .collect::<Result<_>>()?,
        };
        if named.is_empty() {
            return Err(err(at, &field, format!("{field} is empty: name a network, or leave the key out (the service is then on the default network)")));
        }
        for (n, l) in &named {
            if n != crate::scenario::networks::DEFAULT && !self.networks.contains_key(n) {
                return Err(err(
                    *l,
                    &field,
                    format!("{field}: network {n:?} is not declared under the top-level networks"),
                ));
            }
        }
        self.emit_value(
            at,
            "networks",
            Value::Array(named.into_iter().map(|(n, _)| Value::String(n)).collect()),
        );
        Ok(())
    }
}
