//! A world's simulated dependencies (`[[dependency]]`): HTTP/1.1 APIs that wio itself
//! serves on the world's external host (the peer, 10.0.0.254), one port each, with
//! scripted routes and seeded misbehaviour. This module reads and checks them; the
//! service is `crate::dependency`.
//!
//! ```text
//! [[dependency]]
//! name = "bank"               # its host name in every guest (the peer's address)
//! port = 8080                 # its TCP port on the peer (not 7, the echo port)
//! latency_ms = [2, 20]        # each answer's delay, drawn per request (default none)
//! [[dependency.route]]        # the first route that matches a request answers it
//! method = "POST"             # optional: any method
//! path = "/charge"            # exact, or a prefix ending in '*' ("/objects/*")
//! status = 200                # default 200
//! body = "charge {count}\n"   # {count} {method} {path} {key} {body} {query}
//! content_type = "text/plain" # default text/plain
//! store = "put"               # or get, delete, list: the dependency's key-value map, the
//!                             # key being the path after the route's prefix
//! latency_ms = [50, 100]      # this route's delay instead of the dependency's
//! [[dependency.fault]]        # one fault, exactly (like [[partition]])
//! kind = "timeout-after"      # refuse, reset, timeout-before, timeout-after, error, slow,
//! at_ms = 3000                # slow-body
//! duration_ms = 2000
//! route = "/charge"           # optional: every route
//! object_store = "receipts"   # a built-in object store of this bucket (after the routes):
//!                             # PUT/GET/DELETE /receipts/KEY, GET /receipts/ lists the keys
//!                             # one per line (?prefix=P: those starting with P)
//! [dependency.faults]         # faults drawn from the world's seed, each kind its own stream
//! kinds = ["refuse", "timeout-after"]   # default every kind
//! every_ms = 5000             # mean time between two faults of one kind
//! duration_ms = [200, 2000]   # each one's length
//! after_ms = 1000             # none before (setup)
//! until_ms = 20000            # every one over by then
//! ```

use super::Node;
use serde::{Deserialize, Serialize};
use toml::Spanned;
use wio_machines::error::ScenarioError;

type Result<T> = std::result::Result<T, ScenarioError>;

/// Most dependencies in one world.
pub const MAX_DEPENDENCIES: usize = 16;
/// Most routes of one dependency.
pub const MAX_ROUTES: usize = 64;
/// Longest route body template, bytes.
pub const MAX_BODY: usize = 64 * 1024;

/// What goes wrong with a dependency for a while.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DepFaultKind {
    /// Connections are refused (a reset answers the SYN).
    Refuse,
    /// A request's connection is reset instead of answered (not applied).
    Reset,
    /// A request is never answered and not applied (the caller times out).
    TimeoutBefore,
    /// A request is applied but never answered (the caller times out on a change made).
    TimeoutAfter,
    /// A request is answered with an error status (`status`, default 503), not applied.
    Error,
    /// Answers come `slow_ms` later.
    Slow,
    /// Answers trickle: the body in 16-byte pieces, `slow_ms` apart.
    SlowBody,
}

impl DepFaultKind {
    /// Every kind, in the order drawn.
    pub const ALL: [DepFaultKind; 7] = [
        DepFaultKind::Refuse,
        DepFaultKind::Reset,
        DepFaultKind::TimeoutBefore,
        DepFaultKind::TimeoutAfter,
        DepFaultKind::Error,
        DepFaultKind::Slow,
        DepFaultKind::SlowBody,
    ];

    /// Its name in files and summaries.
    pub fn name(self) -> &'static str {
        match self {
            DepFaultKind::Refuse => "refuse",
            DepFaultKind::Reset => "reset",
            DepFaultKind::TimeoutBefore => "timeout-before",
            DepFaultKind::TimeoutAfter => "timeout-after",
            DepFaultKind::Error => "error",
            DepFaultKind::Slow => "slow",
            DepFaultKind::SlowBody => "slow-body",
        }
    }
}

/// A dependency's fault over an interval of virtual time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DepFault {
    /// When it starts, ns.
    pub from_ns: u64,
    /// When it ends, ns.
    pub until_ns: u64,
    /// The dependency (index in the scenario's list).
    pub dependency: usize,
    /// The route it hits (index in the dependency's routes); None: every route.
    pub route: Option<usize>,
    /// What goes wrong.
    pub kind: DepFaultKind,
    /// `slow` and `slow-body`: the delay, ns.
    pub slow_ns: u64,
    /// `error`: the status answered.
    pub status: u16,
    /// Drawn from the world's seed (not written in the file).
    pub drawn: bool,
    /// What it hits, for people: the dependency's name, and the route's method and path.
    pub label: String,
}

impl DepFault {
    /// Whether it hits a request (or, for `refuse`, a connection) to `dependency`'s `route`
    /// at `at_ns`.
    pub fn hits(&self, dependency: usize, route: Option<usize>, at_ns: u64) -> bool {
        self.in_force(dependency, at_ns) && (self.route.is_none() || self.route == route)
    }

    /// Whether it is a fault of `dependency` (on any of its routes) in force at `at_ns`.
    pub fn in_force(&self, dependency: usize, at_ns: u64) -> bool {
        self.dependency == dependency && (self.from_ns..self.until_ns).contains(&at_ns)
    }
}

/// What a route does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Store {
    /// Stores the body under the key (answers 201 unless `status` says otherwise).
    Put,
    /// Answers the key's value (404 when there is none).
    Get,
    /// Removes the key (404 when there was none).
    Delete,
    /// Answers the keys that start with the key, one per line.
    List,
}

/// One route of a dependency.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Route {
    /// The method it answers (None: any).
    pub method: Option<String>,
    /// The path: exact, or a prefix when `prefix`.
    pub path: String,
    /// Whether `path` is a prefix (the file wrote it with a trailing '*').
    pub prefix: bool,
    /// The status it answers.
    pub status: Option<u16>,
    /// The body template.
    pub body: String,
    /// The answer's content type.
    pub content_type: String,
    /// What it does with the dependency's key-value map, if anything.
    pub store: Option<Store>,
    /// Its answers' delay range, ns, instead of the dependency's.
    pub latency_ns: Option<(u64, u64)>,
}

impl Route {
    /// Whether it answers `method` `path`; the key (the path after the prefix) when it does.
    pub fn matches<'a>(&self, method: &str, path: &'a str) -> Option<&'a str> {
        if self.method.as_deref().is_some_and(|m| m != method) {
            return None;
        }
        if self.prefix {
            path.strip_prefix(self.path.as_str())
        } else {
            (path == self.path).then_some("")
        }
    }

    /// Its path as the file wrote it (a prefix with its '*').
    pub fn pattern(&self) -> String {
        let star = if self.prefix { "*" } else { "" };
        format!("{}{star}", self.path)
    }

    /// How the file names it: its method and path.
    pub fn label(&self) -> String {
        match &self.method {
            Some(m) => format!("{m} {}", self.pattern()),
            None => self.pattern(),
        }
    }
}

/// Faults a dependency draws from the world's seed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DepProfile {
    /// The kinds drawn (each from its own stream).
    pub kinds: Vec<DepFaultKind>,
    /// Mean time between two faults of one kind, ns.
    pub every_ns: u64,
    /// Each fault's length, ns (inclusive range).
    pub duration_ns: (u64, u64),
    /// None starts before, ns.
    pub after_ns: u64,
    /// Every one is over by then, ns.
    pub until_ns: Option<u64>,
}

/// A simulated dependency, checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dependency {
    /// Its host name.
    pub name: String,
    /// Its port on the peer.
    pub port: u16,
    /// Each answer's delay range, ns.
    pub latency_ns: (u64, u64),
    /// Its routes, first match first.
    pub routes: Vec<Route>,
    /// Its drawn faults, if any.
    pub faults: Option<DepProfile>,
}

/// `[[dependency]]` as the file says it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct DependencySpec {
    name: Spanned<String>,
    port: Spanned<u16>,
    #[serde(default)]
    latency_ms: Option<Spanned<[u64; 2]>>,
    #[serde(default)]
    route: Vec<RouteSpec>,
    #[serde(default)]
    fault: Vec<FaultSpec>,
    #[serde(default)]
    faults: Option<ProfileSpec>,
    #[serde(default)]
    object_store: Option<Spanned<String>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RouteSpec {
    #[serde(default)]
    method: Option<Spanned<String>>,
    path: Spanned<String>,
    #[serde(default)]
    status: Option<Spanned<u16>>,
    #[serde(default)]
    body: Option<Spanned<String>>,
    #[serde(default)]
    content_type: Option<String>,
    #[serde(default)]
    store: Option<StoreName>,
    #[serde(default)]
    latency_ms: Option<Spanned<[u64; 2]>>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "lowercase")]
enum StoreName {
    Put,
    Get,
    Delete,
    List,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct FaultSpec {
    kind: DepFaultKind,
    at_ms: u64,
    duration_ms: u64,
    #[serde(default)]
    route: Option<Spanned<String>>,
    #[serde(default)]
    slow_ms: Option<u64>,
    #[serde(default)]
    status: Option<Spanned<u16>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProfileSpec {
    #[serde(default)]
    kinds: Option<Vec<DepFaultKind>>,
    every_ms: Spanned<u64>,
    #[serde(default)]
    duration_ms: Option<Spanned<[u64; 2]>>,
    #[serde(default)]
    after_ms: u64,
    #[serde(default)]
    until_ms: Option<u64>,
}

/// What a fault of dependency `name` on `route` (None: every route) hits, for people.
pub fn label(name: &str, route: Option<&Route>) -> String {
    match route {
        Some(r) => format!("{name} {}", r.label()),
        None => name.to_string(),
    }
}

/// The routes of a built-in object store of `bucket` (`object_store = "BUCKET"`): put, get
/// and delete `/BUCKET/KEY`; `/BUCKET/` (or `/BUCKET`) lists the keys, one per line.
fn object_store(bucket: &str) -> Vec<Route> {
    let route = |method: &str, path: String, prefix: bool, store: Store, status: u16| Route {
        method: Some(method.into()),
        path,
        prefix,
        status: Some(status),
        body: String::new(),
        content_type: "application/octet-stream".into(),
        store: Some(store),
        latency_ns: None,
    };
    let list = |path: String| Route {
        content_type: "text/plain".into(),
        ..route("GET", path, false, Store::List, 200)
    };
    vec![
        list(format!("/{bucket}/")),
        list(format!("/{bucket}")),
        route("PUT", format!("/{bucket}/"), true, Store::Put, 200),
        route("GET", format!("/{bucket}/"), true, Store::Get, 200),
        route("DELETE", format!("/{bucket}/"), true, Store::Delete, 204),
    ]
}

/// The delay a `slow` or `slow-body` fault written without `slow_ms` adds, ms.
pub const DEFAULT_SLOW_MS: u64 = 1_000;
const MS: u64 = 1_000_000;

/// Checks every `[[dependency]]`: names that are host names no node or peer has, distinct
/// ports (not 0, not 7), routes and faults. Returns them and their written faults.
pub(super) fn check(
    text: &str,
    specs: &[DependencySpec],
    nodes: &[Node],
    peer: Option<&str>,
) -> Result<(Vec<Dependency>, Vec<DepFault>)> {
    let at = |offset: usize, field: &str, what: String| {
        ScenarioError::at_offset(text, offset, field, what)
    };
    if specs.len() > MAX_DEPENDENCIES {
        return Err(ScenarioError::about(
            "dependency",
            format!(
                "{} dependencies; a world has at most {MAX_DEPENDENCIES}",
                specs.len()
            ),
        ));
    }
    let range = |r: &Spanned<[u64; 2]>, field: &str| -> Result<(u64, u64)> {
        let [lo, hi] = *r.get_ref();
        if lo > hi {
            return Err(at(
                r.span().start,
                field,
                format!("{field} [{lo}, {hi}]: the first is the shortest"),
            ));
        }
        Ok((lo.saturating_mul(MS), hi.saturating_mul(MS)))
    };
    let mut deps = Vec::new();
    let mut faults = Vec::new();
    for (index, d) in specs.iter().enumerate() {
        let name = d.name.get_ref();
        let start = d.name.span().start;
        if !super::host_name_ok(name) {
            return Err(at(start, "dependency.name", format!("dependency.name {name:?}: a host name (a letter, then letters, digits or '-', at most 32)")));
        }
        if nodes.iter().any(|n| &n.name == name)
            || peer == Some(name.as_str())
            || specs[..index].iter().any(|o| o.name.get_ref() == name)
        {
            return Err(at(start, "dependency.name", format!("dependency.name {name:?} is already a node's, the peer's or another dependency's")));
        }
        let port = *d.port.get_ref();
        if port == 0 || port == wio_virtio_devices::net::stack::ECHO_PORT {
            return Err(at(
                d.port.span().start,
                "dependency.port",
                format!("dependency.port {port}: 0 and 7 (the peer's echo port) are not free"),
            ));
        }
        if specs[..index].iter().any(|o| *o.port.get_ref() == port) {
            return Err(at(d.port.span().start, "dependency.port", format!("dependency.port {port} is another dependency's: each has a port of its own on the peer")));
        }
        if d.route.len() > MAX_ROUTES {
            return Err(at(
                start,
                "dependency.route",
                format!(
                    "dependency {name:?} has {} routes; at most {MAX_ROUTES}",
                    d.route.len()
                ),
            ));
        }
        let mut routes = Vec::new();
        for r in &d.route {
            let path = r.path.get_ref();
            if !path.starts_with('/')
                || path
                    .bytes()
                    .any(|b| b.is_ascii_whitespace() || b.is_ascii_control())
            {
                return Err(at(
                    r.path.span().start,
                    "dependency.route.path",
                    format!(
                        "dependency.route.path {path:?}: a path starting with '/', without spaces"
                    ),
                ));
            }
            let (path, prefix) = match path.strip_suffix('*') {
                Some(p) => (p.to_string(), true),
                None => (path.clone(), false),
            };
            if let Some(m) = &r.method {
                let ok =
                    !m.get_ref().is_empty() && m.get_ref().bytes().all(|b| b.is_ascii_uppercase());
                if !ok {
                    return Err(at(m.span().start, "dependency.route.method", format!("dependency.route.method {:?}: an HTTP method in capitals (GET, POST, ...)", m.get_ref())));
                }
            }
            if let Some(s) = &r.status {
                if !(100..=599).contains(s.get_ref()) {
                    return Err(at(
                        s.span().start,
                        "dependency.route.status",
                        format!(
                            "dependency.route.status {}: an HTTP status, 100-599",
                            s.get_ref()
                        ),
                    ));
                }
            }
            if let Some(b) = &r.body {
                if b.get_ref().len() > MAX_BODY {
                    return Err(at(
                        b.span().start,
                        "dependency.route.body",
                        format!(
                            "dependency.route.body is {} bytes; at most {MAX_BODY}",
                            b.get_ref().len()
                        ),
                    ));
                }
            }
            routes.push(Route {
                method: r.method.as_ref().map(|m| m.get_ref().clone()),
                path,
                prefix,
                status: r.status.as_ref().map(|s| *s.get_ref()),
                body: r
                    .body
                    .as_ref()
                    .map_or_else(String::new, |b| b.get_ref().clone()),
                content_type: r
                    .content_type
                    .clone()
                    .unwrap_or_else(|| "text/plain".into()),
                store: r.store.map(|s| match s {
                    StoreName::Put => Store::Put,
                    StoreName::Get => Store::Get,
                    StoreName::Delete => Store::Delete,
                    StoreName::List => Store::List,
                }),
                latency_ns: r
                    .latency_ms
                    .as_ref()
                    .map(|l| range(l, "dependency.route.latency_ms"))
                    .transpose()?,
            });
        }
        if let Some(b) = &d.object_store {
            let bucket = b.get_ref();
            let ok = (1..=63).contains(&bucket.len())
                && bucket.bytes().all(|c| {
                    c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-' || c == b'.'
                });
            if !ok {
                return Err(at(b.span().start, "dependency.object_store", format!("dependency.object_store {bucket:?}: a bucket name (1 to 63 lowercase letters, digits, '-' or '.')")));
            }
            routes.extend(object_store(bucket));
        }
        if routes.len() > MAX_ROUTES {
            return Err(at(
                start,
                "dependency.route",
                format!(
                    "dependency {name:?} has {} routes with its object store's; at most {MAX_ROUTES}",
                    routes.len()
                ),
            ));
        }
        for f in &d.fault {
            let route = match &f.route {
                None => None,
                Some(r) => {
                    let want = r.get_ref();
                    let found = routes.iter().position(|x| x.pattern() == *want);
                    match found {
                        Some(i) => Some(i),
                        None => {
                            return Err(at(r.span().start, "dependency.fault.route", format!("dependency.fault.route {want:?} is none of {name:?}'s routes' paths")));
                        }
                    }
                }
            };
            if f.kind == DepFaultKind::Refuse && route.is_some() {
                return Err(at(start, "dependency.fault.route", "a refuse fault refuses connections, before any route is known: leave out its route".into()));
            }
            let status = f.status.as_ref().map_or(503, |s| *s.get_ref());
            if !(100..=599).contains(&status) {
                return Err(at(
                    start,
                    "dependency.fault.status",
                    format!("dependency.fault.status {status}: an HTTP status, 100-599"),
                ));
            }
            faults.push(DepFault {
                from_ns: f.at_ms.saturating_mul(MS),
                until_ns: f.at_ms.saturating_add(f.duration_ms).saturating_mul(MS),
                dependency: index,
                route,
                kind: f.kind,
                slow_ns: f.slow_ms.unwrap_or(DEFAULT_SLOW_MS).saturating_mul(MS),
                status,
                drawn: false,
                label: label(name, route.map(|i| &routes[i])),
            });
        }
        let profile = match &d.faults {
            None => None,
            Some(p) => {
                if *p.every_ms.get_ref() == 0 {
                    return Err(at(p.every_ms.span().start, "dependency.faults.every_ms", "dependency.faults.every_ms is 0: the mean time between two faults of a kind, at least 1".into()));
                }
                let duration_ns = match &p.duration_ms {
                    Some(r) => range(r, "dependency.faults.duration_ms")?,
                    None => (100 * MS, 2_000 * MS),
                };
                let mut kinds = p
                    .kinds
                    .clone()
                    .unwrap_or_else(|| DepFaultKind::ALL.to_vec());
                kinds.sort();
                kinds.dedup();
                Some(DepProfile {
                    kinds,
                    every_ns: p.every_ms.get_ref().saturating_mul(MS),
                    duration_ns,
                    after_ns: p.after_ms.saturating_mul(MS),
                    until_ns: p.until_ms.map(|u| u.saturating_mul(MS)),
                })
            }
        };
        deps.push(Dependency {
            name: name.clone(),
            port,
            latency_ns: d
                .latency_ms
                .as_ref()
                .map(|l| range(l, "dependency.latency_ms"))
                .transpose()?
                .unwrap_or((0, 0)),
            routes,
            faults: profile,
        });
    }
    Ok((deps, faults))
}

#[cfg(test)]
mod tests {
    use super::super::Scenario;
    use super::*;

    const NODE: &str = "[[node]]\nname = \"c\"\n";

    #[test]
    fn dependencies_parse_with_a_peer_and_their_names_and_faults() {
        let s = Scenario::parse(&format!(
            "{NODE}[[dependency]]\nname = \"bank\"\nport = 8080\nlatency_ms = [1, 5]\n[[dependency.route]]\nmethod = \"POST\"\npath = \"/charge\"\nbody = \"ok {{count}}\"\n[[dependency.route]]\npath = \"/kv/*\"\nstore = \"get\"\n[[dependency.fault]]\nkind = \"timeout-after\"\nat_ms = 100\nduration_ms = 50\nroute = \"/charge\"\n[dependency.faults]\nevery_ms = 1000\nkinds = [\"reset\", \"refuse\", \"reset\"]\n"
        ))
        .unwrap();
        assert_eq!(
            s.peer.as_deref(),
            Some("peer"),
            "a dependency brings the peer"
        );
        let d = &s.dependencies[0];
        assert_eq!((d.port, d.latency_ns), (8080, (1_000_000, 5_000_000)));
        assert_eq!(d.routes[1].matches("GET", "/kv/a/b"), Some("a/b"));
        assert_eq!(d.routes[0].matches("GET", "/charge"), None);
        assert_eq!(d.routes[0].label(), "POST /charge");
        let f = &s.dependency_faults[0];
        assert_eq!(
            (f.from_ns, f.until_ns, f.route),
            (100_000_000, 150_000_000, Some(0))
        );
        assert_eq!(f.label, "bank POST /charge");
        let p = d.faults.as_ref().unwrap();
        assert_eq!(p.kinds, vec![DepFaultKind::Refuse, DepFaultKind::Reset]);
    }

    #[test]
    fn bad_dependencies_are_one_line_naming_the_line() {
        for (text, want) in [
            ("[[dependency]]\nname = \"c\"\nport = 80\n", "line 4: dependency.name \"c\" is already"),
            ("[[dependency]]\nname = \"a\"\nport = 7\n", "line 5: dependency.port 7"),
            ("[[dependency]]\nname = \"a\"\nport = 80\n[[dependency]]\nname = \"b\"\nport = 80\n", "line 8: dependency.port 80 is another"),
            ("[[dependency]]\nname = \"a\"\nport = 80\n[[dependency.route]]\npath = \"/x\"\ncolour = 1\n", "line 8"),
            ("[[dependency]]\nname = \"a\"\nport = 80\n[[dependency.route]]\npath = \"x\"\n", "line 7: dependency.route.path \"x\""),
            ("[[dependency]]\nname = \"a\"\nport = 80\n[[dependency.route]]\npath = \"/x\"\nstatus = 99\n", "line 8: dependency.route.status 99"),
            ("[[dependency]]\nname = \"a\"\nport = 80\n[[dependency.route]]\npath = \"/x\"\nmethod = \"get\"\n", "dependency.route.method \"get\""),
            ("[[dependency]]\nname = \"a\"\nport = 80\nlatency_ms = [5, 1]\n", "line 6: dependency.latency_ms [5, 1]"),
            ("[[dependency]]\nname = \"a\"\nport = 80\n[[dependency.fault]]\nkind = \"melt\"\nat_ms = 1\nduration_ms = 1\n", "line 7"),
            ("[[dependency]]\nname = \"a\"\nport = 80\n[[dependency.fault]]\nkind = \"reset\"\nat_ms = 1\nduration_ms = 1\nroute = \"/y\"\n", "dependency.fault.route \"/y\" is none"),
            ("[[dependency]]\nname = \"a\"\nport = 80\n[dependency.faults]\nevery_ms = 0\n", "every_ms is 0"),
            ("[[dependency]]\nname = \"a\"\nport = 70000\n", "line 5"),
        ] {
            let e = Scenario::parse(&format!("{NODE}{text}")).unwrap_err().to_string();
            assert!(e.contains(want), "{text:?}: {e}");
            assert!(!e.contains('\n'), "one line: {e}");
        }
    }
}
