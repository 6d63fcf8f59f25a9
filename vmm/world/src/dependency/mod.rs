//! The world's simulated dependencies at work: HTTP/1.1 services that wio serves on the
//! peer (one port each), answering from the scenario's routes (`[[dependency]]`, see
//! `scenario::dependency`) with seeded latency and the dependency faults in force.
//!
//! Determinism: everything here is a function of the requests' bytes, the virtual times
//! they complete at, the world's seed and the fault list. Each dependency's latency is its
//! own stream (`world/dependency/NAME/latency`), drawn once per request whether or not a
//! fault hits it, so removing a fault (shrinking) shifts no other request's delay. The seed
//! and faults reach the service as settings the peer records in its history, so a world
//! snapshot rebuilds the service by replaying the peer.

pub mod http;

use crate::scenario::dependency::{DepFault, DepFaultKind, Dependency, Store};
use http::{Parsed, Request};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use wio_scheduler::{RunSeed, Stream};
use wio_virtio_devices::net::stack::{AppAction, TcpApp};

/// A slow body's piece, bytes.
const PIECE: usize = 16;

/// What one dependency did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DependencyStats {
    /// Its name.
    pub name: String,
    /// Connections it accepted.
    pub connections: u64,
    /// Connections it refused (a `refuse` fault).
    pub refused: u64,
    /// Requests it read whole.
    pub requests: u64,
    /// Answers sent, by status.
    pub answered: BTreeMap<u16, u64>,
    /// Requests (and refused connections) each fault kind hit.
    pub faults: BTreeMap<String, u64>,
}

/// The settings the peer records (seed and faults), as JSON.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Settings {
    seed: u64,
    faults: Vec<DepFault>,
}

/// The settings bytes for `seed` and `faults` ([`TcpApp::settings`]).
pub fn settings(seed: u64, faults: &[DepFault]) -> Vec<u8> {
    let s = Settings {
        seed,
        faults: faults.to_vec(),
    };
    // Plain data: serializing it cannot fail.
    serde_json::to_vec(&s).unwrap_or_default()
}

struct Conn {
    dependency: usize,
    buf: Vec<u8>,
    done: bool,
}

enum Out {
    Send(Vec<u8>),
    Close,
    Abort,
}

/// The services of a world's dependencies (one [`TcpApp`] for all of them).
pub struct Dependencies {
    deps: Vec<Dependency>,
    faults: Vec<DepFault>,
    latency: Vec<Stream>,
    /// The seed its settings gave (None before any).
    seed: Option<u64>,
    conns: BTreeMap<u64, Conn>,
    /// (when, sequence, connection, what), kept sorted.
    pending: Vec<(u64, u64, u64, Out)>,
    seq: u64,
    store: Vec<BTreeMap<String, Vec<u8>>>,
    counts: Vec<Vec<u64>>,
    stats: Vec<DependencyStats>,
}

impl Dependencies {
    /// The services of `deps` (their seed and faults come as settings).
    pub fn new(deps: &[Dependency]) -> Dependencies {
        Dependencies {
            latency: deps.iter().map(|_| RunSeed(0).stream("unset")).collect(),
            store: deps.iter().map(|_| BTreeMap::new()).collect(),
            counts: deps.iter().map(|d| vec![0; d.routes.len()]).collect(),
            stats: deps
                .iter()
                .map(|d| DependencyStats {
                    name: d.name.clone(),
                    ..DependencyStats::default()
                })
                .collect(),
            deps: deps.to_vec(),
            faults: Vec::new(),
            seed: None,
            conns: BTreeMap::new(),
            pending: Vec::new(),
            seq: 0,
        }
    }

    /// What each dependency did so far.
    pub fn stats(&self) -> &[DependencyStats] {
        &self.stats
    }

    /// The seed it draws from (its last settings'), if it has had settings.
    pub fn seed(&self) -> Option<u64> {
        self.seed
    }

    /// The kind of a fault of the dependency on `port` in force at `at_ns`, on any of its
    /// routes (the first in the fault list).
    pub fn fault_at(&self, port: u16, at_ns: u64) -> Option<DepFaultKind> {
        let d = self.deps.iter().position(|d| d.port == port)?;
        self.faults
            .iter()
            .find(|f| f.in_force(d, at_ns))
            .map(|f| f.kind)
    }

    fn at(&mut self, at: u64, conn: u64, what: Out) {
        let seq = self.seq;
        self.seq += 1;
        let i = self
            .pending
            .partition_point(|(t, s, _, _)| (*t, *s) <= (at, seq));
        self.pending.insert(i, (at, seq, conn, what));
    }

    fn hit(&mut self, dependency: usize, kind: DepFaultKind) {
        *self.stats[dependency]
            .faults
            .entry(kind.name().to_string())
            .or_default() += 1;
    }

    fn answer(
        &mut self,
        dependency: usize,
        status: u16,
        content_type: &str,
        body: &[u8],
    ) -> Vec<u8> {
        *self.stats[dependency].answered.entry(status).or_default() += 1;
        let body = if status == 204 { &[][..] } else { body };
        let mut out = http::head(status, content_type, body.len());
        out.extend_from_slice(body);
        out
    }

    /// A whole request on `conn` at `now`.
    fn request(&mut self, conn: u64, dependency: usize, r: Request, now: u64) {
        self.stats[dependency].requests += 1;
        let route = self.deps[dependency]
            .routes
            .iter()
            .position(|x| x.matches(&r.method, &r.path).is_some());
        let (lo, hi) = route
            .and_then(|i| self.deps[dependency].routes[i].latency_ns)
            .unwrap_or(self.deps[dependency].latency_ns);
        let delay = self.latency[dependency].range_inclusive(lo, hi);
        let fault = self
            .faults
            .iter()
            .find(|f| f.kind != DepFaultKind::Refuse && f.hits(dependency, route, now))
            .cloned();
        if let Some(f) = &fault {
            self.hit(dependency, f.kind);
        }
        let when = now.saturating_add(delay);
        let kind = fault.as_ref().map(|f| f.kind);
        match (kind, &fault) {
            (Some(DepFaultKind::Reset), _) => return self.at(when, conn, Out::Abort),
            (Some(DepFaultKind::TimeoutBefore), _) => return,
            (Some(DepFaultKind::Error), Some(f)) => {
                let bytes = self.answer(dependency, f.status, "text/plain", b"simulated failure\n");
                return self.reply(when, conn, bytes);
            }
            _ => {}
        }
        let (status, content_type, body) = self.apply(dependency, route, &r);
        if kind == Some(DepFaultKind::TimeoutAfter) {
            return;
        }
        let bytes = self.answer(dependency, status, &content_type, &body);
        match fault {
            Some(f) if f.kind == DepFaultKind::Slow => {
                self.reply(when.saturating_add(f.slow_ns), conn, bytes)
            }
            Some(f) if f.kind == DepFaultKind::SlowBody => {
                let head = bytes.len() - if status == 204 { 0 } else { body.len() };
                let mut t = when;
                self.at(t, conn, Out::Send(bytes[..head].to_vec()));
                for piece in bytes[head..].chunks(PIECE) {
                    t = t.saturating_add(f.slow_ns);
                    self.at(t, conn, Out::Send(piece.to_vec()));
                }
                self.at(t, conn, Out::Close);
            }
            _ => self.reply(when, conn, bytes),
        }
    }

    /// Sends `bytes` on `conn` at `at`, then closes it (one request per connection).
    fn reply(&mut self, at: u64, conn: u64, bytes: Vec<u8>) {
        self.at(at, conn, Out::Send(bytes));
        self.at(at, conn, Out::Close);
    }

    /// Applies a request to its route: (status, content type, body).
    fn apply(
        &mut self,
        dependency: usize,
        route: Option<usize>,
        r: &Request,
    ) -> (u16, String, Vec<u8>) {
        let Some(i) = route else {
            let body = format!("no route for {} {}\n", r.method, r.path);
            return (404, "text/plain".into(), body.into_bytes());
        };
        self.counts[dependency][i] += 1;
        let count = self.counts[dependency][i];
        let x = &self.deps[dependency].routes[i];
        let key = x.matches(&r.method, &r.path).unwrap_or("").to_string();
        let store = &mut self.store[dependency];
        let render = |status: u16| {
            let body = x
                .body
                .replace("{count}", &count.to_string())
                .replace("{method}", &r.method)
                .replace("{path}", &r.path)
                .replace("{key}", &key)
                .replace("{query}", &r.query)
                .replace("{body}", &String::from_utf8_lossy(&r.body));
            (
                x.status.unwrap_or(status),
                x.content_type.clone(),
                body.into_bytes(),
            )
        };
        match x.store {
            None => render(200),
            Some(Store::Put) => {
                store.insert(key.clone(), r.body.clone());
                render(201)
            }
            Some(Store::Get) => match store.get(&key) {
                Some(v) => (x.status.unwrap_or(200), x.content_type.clone(), v.clone()),
                None => (404, "text/plain".into(), b"no such key\n".to_vec()),
            },
            Some(Store::Delete) => match store.remove(&key) {
                Some(_) => render(204),
                None => (404, "text/plain".into(), b"no such key\n".to_vec()),
            },
            Some(Store::List) => {
                // A list of the whole map may be narrowed by `?prefix=` (as an S3 list is).
                let prefix = match key.as_str() {
                    "" => r
                        .query
                        .split('&')
                        .find_map(|kv| kv.strip_prefix("prefix="))
                        .unwrap_or(""),
                    k => k,
                };
                let mut body = Vec::new();
                for k in store.keys().filter(|k| k.starts_with(prefix)) {
                    body.extend_from_slice(k.as_bytes());
                    body.push(b'\n');
                }
                (x.status.unwrap_or(200), "text/plain".into(), body)
            }
        }
    }
}

impl TcpApp for Dependencies {
    fn ports(&self) -> Vec<u16> {
        self.deps.iter().map(|d| d.port).collect()
    }

    fn refuse(&mut self, port: u16, _from: ([u8; 4], u16), now_ns: u64) -> bool {
        let Some(d) = self.deps.iter().position(|d| d.port == port) else {
            return false;
        };
        let refused = self
            .faults
            .iter()
            .any(|f| f.kind == DepFaultKind::Refuse && f.hits(d, None, now_ns));
        if refused {
            self.stats[d].refused += 1;
            self.hit(d, DepFaultKind::Refuse);
        }
        refused
    }

    fn opened(&mut self, conn: u64, port: u16, _from: ([u8; 4], u16), _now_ns: u64) {
        let Some(d) = self.deps.iter().position(|d| d.port == port) else {
            return;
        };
        self.stats[d].connections += 1;
        self.conns.insert(
            conn,
            Conn {
                dependency: d,
                buf: Vec::new(),
                done: false,
            },
        );
    }

    fn data(&mut self, conn: u64, bytes: &[u8], now_ns: u64) {
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        if c.done {
            return;
        }
        c.buf.extend_from_slice(bytes);
        let dependency = c.dependency;
        match http::parse(&c.buf) {
            Parsed::Partial => {}
            Parsed::Bad(status, why) => {
                c.done = true;
                c.buf = Vec::new();
                let body = format!("{why}\n");
                let bytes = self.answer(dependency, status, "text/plain", body.as_bytes());
                self.reply(now_ns, conn, bytes);
            }
            Parsed::Request(r) => {
                c.done = true;
                c.buf = Vec::new();
                self.request(conn, dependency, r, now_ns);
            }
        }
    }

    fn closed(&mut self, conn: u64, now_ns: u64) {
        self.conns.remove(&conn);
        self.pending.retain(|(_, _, c, _)| *c != conn);
        self.at(now_ns, conn, Out::Close);
    }

    fn due(&mut self, now_ns: u64) -> Vec<AppAction> {
        let n = self.pending.partition_point(|(t, ..)| *t <= now_ns);
        self.pending
            .drain(..n)
            .map(|(_, _, conn, what)| match what {
                Out::Send(bytes) => AppAction::Send(conn, bytes),
                Out::Close => AppAction::Close(conn),
                Out::Abort => AppAction::Abort(conn),
            })
            .collect()
    }

    fn wake(&self) -> Option<u64> {
        self.pending.first().map(|(t, ..)| *t)
    }

    fn settings(&mut self, bytes: &[u8]) {
        // The peer records only what `settings` wrote; anything else is ignored.
        let Ok(s) = serde_json::from_slice::<Settings>(bytes) else {
            return;
        };
        self.latency = self
            .deps
            .iter()
            .map(|d| RunSeed(s.seed).stream(&format!("world/dependency/{}/latency", d.name)))
            .collect();
        self.faults = s.faults;
        self.seed = Some(s.seed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Scenario;

    /// The answer `d` sends on `conn` for `request` at time 0 (its latency is none).
    fn ask(d: &mut Dependencies, conn: u64, request: &str) -> String {
        d.opened(conn, 80, ([10, 0, 0, 1], 1000), 0);
        d.data(conn, request.as_bytes(), 0);
        let mut out = Vec::new();
        let mut closed = false;
        for a in d.due(0) {
            match a {
                AppAction::Send(c, b) if c == conn => out.extend(b),
                AppAction::Close(c) if c == conn => closed = true,
                other => panic!("{other:?}"),
            }
        }
        assert!(closed, "one request per connection");
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn routes_answer_from_templates_and_the_store_and_bad_requests_get_a_status() {
        let s = Scenario::parse(
            "[[node]]\nname = \"c\"\n[[dependency]]\nname = \"s3\"\nport = 80\n[[dependency.route]]\nmethod = \"PUT\"\npath = \"/b/*\"\nstore = \"put\"\n[[dependency.route]]\nmethod = \"GET\"\npath = \"/b/\"\nstore = \"list\"\n[[dependency.route]]\nmethod = \"GET\"\npath = \"/b/*\"\nstore = \"get\"\n[[dependency.route]]\nmethod = \"DELETE\"\npath = \"/b/*\"\nstore = \"delete\"\n[[dependency.route]]\npath = \"/hi\"\nbody = \"{method} {path}?{query} #{count}: {body}\"\n",
        )
        .unwrap();
        let mut d = Dependencies::new(&s.dependencies);
        d.settings(&settings(1, &[]));
        let put = |k: &str, v: &str| {
            format!(
                "PUT /b/{k} HTTP/1.1\r\nContent-Length: {}\r\n\r\n{v}",
                v.len()
            )
        };
        assert!(ask(&mut d, 0, &put("x", "one")).starts_with("HTTP/1.1 201 Created\r\n"));
        ask(&mut d, 1, &put("y/z", "two"));
        let got = ask(&mut d, 2, "GET /b/x HTTP/1.1\r\n\r\n");
        assert!(
            got.starts_with("HTTP/1.1 200 OK\r\n") && got.ends_with("\r\n\r\none"),
            "{got}"
        );
        let list = ask(&mut d, 3, "GET /b/ HTTP/1.1\r\n\r\n");
        assert!(list.ends_with("\r\n\r\nx\ny/z\n"), "{list}");
        assert!(ask(&mut d, 4, "DELETE /b/x HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 204"));
        assert!(ask(&mut d, 5, "GET /b/x HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 404"));
        let hi = ask(
            &mut d,
            6,
            "POST /hi?a=1 HTTP/1.1\r\nContent-Length: 2\r\n\r\nok",
        );
        assert!(hi.ends_with("POST /hi?a=1 #1: ok"), "{hi}");
        assert!(ask(&mut d, 7, "GET /nope HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 404"));
        assert!(ask(&mut d, 8, "nonsense\r\n\r\n").starts_with("HTTP/1.1 400"));
        let st = &d.stats()[0];
        assert_eq!((st.connections, st.requests), (9, 8));
        assert_eq!(st.answered.get(&404), Some(&2));
        // A connection its client closed before the answer: the answer is dropped, the
        // connection closed.
        d.opened(9, 80, ([10, 0, 0, 1], 1000), 0);
        d.closed(9, 0);
        assert_eq!(d.due(0), vec![AppAction::Close(9)]);
    }

    #[test]
    fn a_built_in_object_store_puts_gets_lists_and_deletes_objects_of_its_bucket() {
        let s = Scenario::parse(
            "[[node]]\nname = \"c\"\n[[dependency]]\nname = \"s3\"\nport = 80\nobject_store = \"logs\"\n[[dependency.route]]\nmethod = \"GET\"\npath = \"/health\"\nbody = \"ok\"\n",
        )
        .unwrap();
        let mut d = Dependencies::new(&s.dependencies);
        d.settings(&settings(1, &[]));
        let put = |k: &str, v: &str| {
            format!(
                "PUT /logs/{k} HTTP/1.1\r\nContent-Length: {}\r\n\r\n{v}",
                v.len()
            )
        };
        assert!(ask(&mut d, 0, &put("a/1", "one")).starts_with("HTTP/1.1 200 OK\r\n"));
        ask(&mut d, 1, &put("a/2", "two"));
        ask(&mut d, 2, &put("b/1", "three"));
        assert!(ask(&mut d, 3, "GET /logs/a/2 HTTP/1.1\r\n\r\n").ends_with("\r\n\r\ntwo"));
        let all = ask(&mut d, 4, "GET /logs HTTP/1.1\r\n\r\n");
        assert!(all.ends_with("\r\n\r\na/1\na/2\nb/1\n"), "{all}");
        let some = ask(&mut d, 5, "GET /logs/?prefix=a/ HTTP/1.1\r\n\r\n");
        assert!(some.ends_with("\r\n\r\na/1\na/2\n"), "{some}");
        assert!(ask(&mut d, 6, "DELETE /logs/a/1 HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 204"));
        assert!(ask(&mut d, 7, "GET /logs/a/1 HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 404"));
        assert!(ask(&mut d, 8, "GET /other/x HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 404"));
        assert!(ask(&mut d, 9, "GET /health HTTP/1.1\r\n\r\n").ends_with("ok"));
        for bad in ["", "Logs", "a b"] {
            let e = Scenario::parse(&format!(
                "[[node]]\nname = \"c\"\n[[dependency]]\nname = \"s3\"\nport = 80\nobject_store = {bad:?}\n"
            ))
            .unwrap_err()
            .to_string();
            assert!(e.contains("a bucket name") && e.lines().count() == 1, "{e}");
        }
    }
}
