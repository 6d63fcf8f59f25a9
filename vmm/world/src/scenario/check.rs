//! Checking a scenario file ([`File`]) into a [`Scenario`]: one function per part of the
//! file (nodes, the peer, links, partitions, degradations, drawn faults, the end), each
//! error naming the line and the field it is about.

use super::file::{DegradeSpec, File, NodeArch, NodeSpec, PairSpec, PartitionSpec, PeerSpec};
use super::networks::{self, MAX_NETWORKS};
use super::{
    host_name_ok, Degrade, LinkSpec, Networks, Node, NodeDisk, NodeImage, Partition, Scenario,
    WorldProfile, MAX_NODES, MAX_RUN,
};
use std::path::{Path, PathBuf};
use toml::Spanned;
use wio_machines::error::ScenarioError;
use wio_machines::machine::Arch;

type Result<T> = std::result::Result<T, ScenarioError>;

/// Parses and checks scenario `text` whose relative paths are relative to `base`.
pub(super) fn check(text: &str, base: &Path) -> Result<Scenario> {
    let f: File = toml::from_str(text).map_err(|e| ScenarioError::toml(text, &e))?;
    let c = Checker { text, base };
    // Networks first: their errors need no image resolved.
    let networks = c.networks(&f.node)?;
    let nodes = c.nodes(&f.node)?;
    let mut peer = c.peer(f.peer.as_ref(), &nodes)?;
    if peer.is_none() && !f.dependency.is_empty() {
        // Dependencies are served by the peer: a world with one has a peer.
        peer = c.peer(Some(&PeerSpec { name: None }), &nodes)?;
    }
    let (dependencies, dependency_faults) =
        super::dependency::check(text, &f.dependency, &nodes, peer.as_deref())?;
    // Ports of the switch: the nodes, then the peer.
    let ports: Vec<&str> = nodes
        .iter()
        .map(|n| n.name.as_str())
        .chain(peer.as_deref())
        .collect();
    let links = c.links(f.link.unwrap_or_default(), &f.links, &ports, &networks)?;
    let partitions = f
        .partition
        .iter()
        .map(|p| c.partition(p, &ports))
        .collect::<Result<Vec<_>>>()?;
    let degrades = f
        .degrade
        .iter()
        .map(|d| c.degrade(d, &ports))
        .collect::<Result<Vec<_>>>()?;
    let faults = c.faults(&f)?;
    let end_when_done = c.end_when_done(f.end_when_done.as_ref(), &nodes)?;
    Ok(Scenario {
        end_when_done,
        nodes,
        links,
        partitions,
        degrades,
        faults,
        peer,
        networks,
        dependencies,
        dependency_faults,
        host_names: Vec::new(),
        max_virtual_ns: f
            .max_virtual_secs
            .unwrap_or(3600)
            .saturating_mul(1_000_000_000),
    })
}

/// The scenario's text (for errors' lines) and folder (for relative paths).
struct Checker<'a> {
    text: &'a str,
    base: &'a Path,
}

impl Checker<'_> {
    /// An error about `field` at byte `offset` of the text.
    fn at(&self, offset: usize, field: &str, what: String) -> ScenarioError {
        ScenarioError::at_offset(self.text, offset, field, what)
    }

    /// A path of the file, relative to the scenario's folder unless absolute.
    fn resolve(&self, p: &Path) -> PathBuf {
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.base.join(p)
        }
    }

    /// Every `[[node]]`: at least one, at most [`MAX_NODES`], names used once.
    fn nodes(&self, specs: &[NodeSpec]) -> Result<Vec<Node>> {
        if specs.is_empty() {
            return Err(ScenarioError::about(
                "node",
                "no [[node]]: a world needs at least one",
            ));
        }
        if specs.len() > MAX_NODES {
            return Err(ScenarioError::about(
                "node",
                format!("{} nodes; a world has at most {MAX_NODES}", specs.len()),
            ));
        }
        // wait_healthy names image nodes with a health check (checked before any node's
        // initrd is written).
        for n in specs {
            let Some(w) = &n.wait_healthy else { continue };
            for name in w.get_ref() {
                let target = specs.iter().find(|m| m.name.get_ref() == name);
                let why = match target {
                    None => Some(format!("node.wait_healthy: no node {name:?}")),
                    Some(m) if m.healthcheck.is_none() => Some(format!(
                        "node.wait_healthy: node {name:?} has no healthcheck, so it is never healthy"
                    )),
                    Some(m) if m.name.get_ref() == n.name.get_ref() => {
                        Some("node.wait_healthy: a node cannot wait for itself".to_string())
                    }
                    Some(_) => None,
                };
                if let Some(why) = why {
                    return Err(self.at(w.span().start, "node.wait_healthy", why));
                }
            }
        }
        // ... and no node waits, through others, for itself (the world would never start).
        let waits = |i: usize| -> Vec<usize> {
            specs[i]
                .wait_healthy
                .iter()
                .flat_map(|w| w.get_ref())
                .filter_map(|name| specs.iter().position(|m| m.name.get_ref() == name))
                .collect()
        };
        for start in 0..specs.len() {
            let mut stack = waits(start);
            let mut seen = vec![false; specs.len()];
            while let Some(i) = stack.pop() {
                if i == start {
                    let w = specs[start]
                        .wait_healthy
                        .as_ref()
                        .map_or(0, |w| w.span().start);
                    return Err(self.at(
                        w,
                        "node.wait_healthy",
                        format!(
                            "node.wait_healthy: {:?} waits, through others, for itself",
                            specs[start].name.get_ref()
                        ),
                    ));
                }
                if !std::mem::replace(&mut seen[i], true) {
                    stack.extend(waits(i));
                }
            }
        }
        let mut nodes: Vec<Node> = Vec::new();
        for n in specs {
            let name = n.name.get_ref();
            if nodes.iter().any(|m| m.name == *name) {
                return Err(self.at(
                    n.name.span().start,
                    "node.name",
                    format!("node.name {name:?} is used twice"),
                ));
            }
            nodes.push(self.node(n)?);
        }
        Ok(nodes)
    }

    /// One node.
    fn node(&self, n: &NodeSpec) -> Result<Node> {
        let name = n.name.get_ref();
        if !host_name_ok(name) {
            return Err(self.at(
                n.name.span().start,
                "node.name", format!("node.name {name:?}: a host name (a letter, then letters, digits or '-', at most 32)"),
            ));
        }
        let arch = match n.arch.as_ref().map(|a| (*a.get_ref(), a.span().start)) {
            None | Some((NodeArch::Riscv64, _)) => Arch::Riscv64,
            Some((NodeArch::X86_64, _)) => {
                self.x86_node(n)?;
                Arch::X86_64
            }
        };
        for (field, p) in [("node.kernel", &n.kernel), ("node.initrd", &n.initrd)] {
            let Some(p) = p else { continue };
            if !self.resolve(p.get_ref()).is_file() {
                return Err(self.at(
                    p.span().start,
                    field,
                    format!("{} does not exist", p.get_ref().display()),
                ));
            }
        }
        let faults = self.node_faults(n.faults.as_ref())?;
        let isa = match &n.isa {
            None => wio_machines::arch::riscv64::Isa::default(),
            Some(isa) => {
                isa.get_ref()
                    .parse()
                    .map_err(|e: wio_machines::arch::riscv64::IsaError| {
                        self.at(isa.span().start, "node.isa", format!("node.isa: {e}"))
                    })?
            }
        };
        if let Some(d) = &n.clock_drift_ppm {
            if d.get_ref().abs() > wio_clock::MAX_DRIFT_PPM {
                return Err(self.at(
                    d.span().start,
                    "node.clock_drift_ppm",
                    format!(
                        "node.clock_drift_ppm {} is beyond ±{} ppm",
                        d.get_ref(),
                        wio_clock::MAX_DRIFT_PPM
                    ),
                ));
            }
        }
        let disk = match &n.image {
            Some(image) => Some(self.node_image(n, image)?),
            None => {
                self.image_fields_need_an_image(n)?;
                self.node_disk(n.disk.as_ref(), arch)?
            }
        };
        let run = n
            .run
            .as_ref()
            .map(|r| r.get_ref().clone())
            .unwrap_or_default();
        if run.len() > MAX_RUN {
            let start = n.run.as_ref().map_or(0, |r| r.span().start);
            return Err(self.at(
                start,
                "node.run", format!("node.run is {} bytes; at most {MAX_RUN} (put longer workloads in the guest image)", run.len()),
            ));
        }
        Ok(Node {
            name: name.clone(),
            guest: n.guest.clone(),
            kernel: n.kernel.as_ref().map(|k| self.resolve(k.get_ref())),
            initrd: n.initrd.as_ref().map(|k| self.resolve(k.get_ref())),
            mem_mib: n.mem_mib.unwrap_or(256),
            run,
            faults,
            disk,
            cmdline: n.cmdline.as_ref().map(|c| c.get_ref().clone()),
            sched_noise: n.sched_noise.unwrap_or_default(),
            clock_drift_ppm: n.clock_drift_ppm.as_ref().map(|d| *d.get_ref()),
            isa,
            arch,
        })
    }

    /// What an x86-64 node (`arch = "x86_64"`) must not say: it runs a Linux
    /// kernel on KVM (the one it names, else the built x86-64 guest `guest`, default
    /// "small", from `images/build-all-x86_64.sh`), so the interpreter's settings (`isa`,
    /// `clock_drift_ppm`) and `image` (riscv64 container images) are refused.
    fn x86_node(&self, n: &NodeSpec) -> Result<()> {
        if let (Some(_), Some(k)) = (&n.guest, &n.kernel) {
            return Err(self.at(
                k.span().start,
                "node.kernel",
                format!(
                    "node.kernel: node {:?} names a built guest too; give one of guest and kernel",
                    n.name.get_ref()
                ),
            ));
        }
        let refused = [
            ("node.isa", n.isa.as_ref().map(|i| i.span().start)),
            (
                "node.clock_drift_ppm",
                n.clock_drift_ppm.as_ref().map(|d| d.span().start),
            ),
            ("node.image", n.image.as_ref().map(|i| i.span().start)),
        ];
        if let Some((field, Some(pos))) = refused.into_iter().find(|(_, p)| p.is_some()) {
            return Err(self.at(
                pos,
                field,
                format!("{field}: a riscv64 node's setting; node {:?} is x86_64 (it runs its kernel on KVM)", n.name.get_ref()),
            ));
        }
        Ok(())
    }

    /// A node's `faults`: a profile's name as written, or a plan or profile file (which
    /// must exist) by its resolved path.
    fn node_faults(&self, faults: Option<&Spanned<String>>) -> Result<Option<String>> {
        let Some(f) = faults else { return Ok(None) };
        if !(f.get_ref().ends_with(".json") || f.get_ref().ends_with(".toml")) {
            return Ok(Some(f.get_ref().clone()));
        }
        let p = self.resolve(Path::new(f.get_ref()));
        if !p.is_file() {
            return Err(self.at(
                f.span().start,
                "node.faults",
                format!("node.faults: {} does not exist", f.get_ref()),
            ));
        }
        Ok(Some(p.to_string_lossy().into_owned()))
    }

    /// A node's `image`: the imported image it names (with the node's overrides of its
    /// process), which replaces `guest`, `kernel`, `initrd`, `disk` and `run`.
    fn node_image(&self, n: &NodeSpec, image: &Spanned<String>) -> Result<NodeDisk> {
        let start = |s: Option<std::ops::Range<usize>>| s.map_or(image.span().start, |r| r.start);
        for (field, span) in [
            ("node.guest", n.guest.as_ref().map(|_| image.span())),
            ("node.kernel", n.kernel.as_ref().map(|k| k.span())),
            ("node.initrd", n.initrd.as_ref().map(|k| k.span())),
            ("node.disk", n.disk.as_ref().map(|d| d.span())),
            ("node.run", n.run.as_ref().map(|r| r.span())),
        ] {
            if span.is_some() {
                return Err(self.at(
                    start(span),
                    field,
                    format!("{field} with node.image: an image node runs its image's process on the small kernel (change it with command, entrypoint, environment, user, working_dir)"),
                ));
            }
        }
        let interval_ms = match &n.healthcheck_interval_ms {
            Some(i) if !(10..=3_600_000).contains(i.get_ref()) => {
                return Err(self.at(
                    i.span().start,
                    "node.healthcheck_interval_ms",
                    "node.healthcheck_interval_ms: 10 to 3600000 (virtual ms)".into(),
                ));
            }
            Some(i) => *i.get_ref(),
            None => 1000,
        };
        let restart = match &n.restart {
            None => wio_images::launch::Restart::No,
            Some(r) => r.get_ref().parse().map_err(|why| {
                self.at(
                    r.span().start,
                    "node.restart",
                    format!("node.restart {why}"),
                )
            })?,
        };
        let overrides = wio_images::launch::Overrides {
            restart,
            entrypoint: n.entrypoint.as_ref().map(|v| v.get_ref().clone()),
            command: n.command.as_ref().map(|v| v.get_ref().clone()),
            env: n
                .environment
                .as_ref()
                .map(|v| v.get_ref().clone())
                .unwrap_or_default(),
            user: n.user.as_ref().map(|v| v.get_ref().clone()),
            working_dir: n.working_dir.as_ref().map(|v| v.get_ref().clone()),
            healthcheck: n.healthcheck.as_ref().map(|h| wio_images::launch::Health {
                test: h.get_ref().clone(),
                interval_ms,
            }),
            wait_healthy: n
                .wait_healthy
                .as_ref()
                .map(|w| w.get_ref().clone())
                .unwrap_or_default(),
            files: self.node_files(n)?,
            dirs: n
                .dirs
                .as_ref()
                .map(|d| d.get_ref().clone())
                .unwrap_or_default(),
        };
        if let Some(h) = n.healthcheck.as_ref().filter(|h| h.get_ref().is_empty()) {
            return Err(self.at(
                h.span().start,
                "node.healthcheck",
                "node.healthcheck: the program to run, and its arguments".into(),
            ));
        }
        if let Some(e) = n.environment.as_ref().and_then(|v| {
            v.get_ref()
                .iter()
                .find(|e| !e.contains('='))
                .map(|e| (e, v.span()))
        }) {
            return Err(self.at(
                e.1.start,
                "node.environment",
                format!("node.environment {:?}: entries are NAME=VALUE", e.0),
            ));
        }
        let m = wio_machines::machine::guests::image_machine(image.get_ref(), &overrides)
            .map_err(|e| self.at(image.span().start, "node.image", format!("node.image: {e}")))?;
        Ok(NodeDisk::Image(NodeImage {
            reference: image.get_ref().clone(),
            id: m.record.id,
            disk: m.disk,
            initrd: m.initrd,
        }))
    }

    /// An image node's `files`: host paths (relative to the scenario) that must exist.
    fn node_files(&self, n: &NodeSpec) -> Result<Vec<wio_images::launch::FileCopy>> {
        let Some(f) = &n.files else {
            return Ok(Vec::new());
        };
        f.get_ref()
            .iter()
            .map(|c| {
                let source = self.resolve(&c.source);
                if !source.exists() {
                    return Err(self.at(
                        f.span().start,
                        "node.files",
                        format!("node.files: {} does not exist", c.source.display()),
                    ));
                }
                Ok(wio_images::launch::FileCopy {
                    source,
                    target: c.target.clone(),
                    read_only: c.read_only,
                })
            })
            .collect()
    }

    /// `command`, `entrypoint`, `environment`, `user` and `working_dir` change an image's
    /// process: without `image` they are an error, not ignored.
    fn image_fields_need_an_image(&self, n: &NodeSpec) -> Result<()> {
        let spans = [
            ("node.command", n.command.as_ref().map(|v| v.span())),
            ("node.entrypoint", n.entrypoint.as_ref().map(|v| v.span())),
            ("node.environment", n.environment.as_ref().map(|v| v.span())),
            ("node.user", n.user.as_ref().map(|v| v.span())),
            ("node.working_dir", n.working_dir.as_ref().map(|v| v.span())),
            ("node.healthcheck", n.healthcheck.as_ref().map(|v| v.span())),
            (
                "node.healthcheck_interval_ms",
                n.healthcheck_interval_ms.as_ref().map(|v| v.span()),
            ),
            (
                "node.wait_healthy",
                n.wait_healthy.as_ref().map(|v| v.span()),
            ),
            ("node.files", n.files.as_ref().map(|v| v.span())),
            ("node.dirs", n.dirs.as_ref().map(|v| v.span())),
            ("node.restart", n.restart.as_ref().map(|v| v.span())),
        ];
        match spans.into_iter().find_map(|(f, s)| s.map(|s| (f, s))) {
            Some((field, span)) => Err(self.at(
                span.start,
                field,
                format!(
                    "{field} changes an image's process: give node.image too (or use node.run)"
                ),
            )),
            None => Ok(()),
        }
    }

    /// A node's `disk`: the name of a disk built for the node's `arch`, or an image file
    /// that exists.
    fn node_disk(&self, disk: Option<&Spanned<String>>, arch: Arch) -> Result<Option<NodeDisk>> {
        let Some(d) = disk else { return Ok(None) };
        let v = d.get_ref();
        let builds = wio_machines::machine::guests::builds(arch);
        if builds.has_disk(v) {
            return Ok(Some(NodeDisk::Built(v.clone())));
        }
        let p = self.resolve(Path::new(v));
        if !p.is_file() {
            return Err(self.at(
                d.span().start,
                "node.disk",
                format!(
                    "node.disk {v:?}: no such image (or a built {} disk: {})",
                    arch.name(),
                    builds.disk_names()
                ),
            ));
        }
        Ok(Some(NodeDisk::File(p)))
    }

    /// Every node's `networks`: network names, each at most once in a node, at most
    /// [`MAX_NETWORKS`] in the world; a node waits for the health of nodes it shares a
    /// network with only (it asks them over the network).
    fn networks(&self, specs: &[NodeSpec]) -> Result<Networks> {
        let mut names: Vec<&str> = Vec::new();
        for n in specs {
            let Some(list) = &n.networks else { continue };
            let at = list.span().start;
            if list.get_ref().is_empty() {
                return Err(self.at(at, "node.networks", "node.networks is empty: name a network, or leave the key out (the node is then on \"default\")".into()));
            }
            for (k, net) in list.get_ref().iter().enumerate() {
                if !networks::name_ok(net) {
                    return Err(self.at(at, "node.networks", format!("node.networks {net:?}: a network's name (letters, digits, '-', '_', '.'; at most 64)")));
                }
                if list.get_ref()[..k].contains(net) {
                    return Err(self.at(
                        at,
                        "node.networks",
                        format!("node.networks names {net:?} twice"),
                    ));
                }
                if !names.contains(&net.as_str()) {
                    names.push(net);
                }
            }
        }
        if names.len() > MAX_NETWORKS {
            return Err(ScenarioError::about(
                "node.networks",
                format!(
                    "{} networks; a world has at most {MAX_NETWORKS}",
                    names.len()
                ),
            ));
        }
        let nets = Networks::new(
            specs
                .iter()
                .map(|n| {
                    n.networks
                        .as_ref()
                        .map(|l| l.get_ref().clone())
                        .unwrap_or_default()
                })
                .collect(),
        );
        for (i, n) in specs.iter().enumerate() {
            let Some(w) = &n.wait_healthy else { continue };
            for name in w.get_ref() {
                let Some(j) = specs.iter().position(|m| m.name.get_ref() == name) else {
                    continue;
                };
                if !nets.reach(i, j) {
                    return Err(self.at(w.span().start, "node.wait_healthy", format!("node.wait_healthy: {:?} and {name:?} share no network, so it cannot ask for its health; put them on a network together", n.name.get_ref())));
                }
            }
        }
        Ok(nets)
    }

    /// `[peer]`: its host name ("peer" by default), which no node may have.
    fn peer(&self, peer: Option<&PeerSpec>, nodes: &[Node]) -> Result<Option<String>> {
        let Some(p) = peer else { return Ok(None) };
        let name = p.name.as_ref().map_or("peer", |n| n.get_ref().as_str());
        let start = p.name.as_ref().map_or(0, |n| n.span().start);
        if !host_name_ok(name) {
            return Err(self.at(start, "peer.name", format!("peer.name {name:?}: a host name (a letter, then letters, digits or '-', at most 32)")));
        }
        if nodes.iter().any(|n| n.name == name) {
            return Err(self.at(
                start,
                "peer.name",
                format!("peer.name {name:?} is also a node's name"),
            ));
        }
        Ok(Some(name.to_string()))
    }

    /// The ports a `between` names; `field` says where in the error.
    fn pair(
        &self,
        between: &Spanned<[String; 2]>,
        field: &str,
        ports: &[&str],
    ) -> Result<(usize, usize)> {
        let index = |name: &String| {
            ports.iter().position(|n| *n == name).ok_or_else(|| {
                self.at(
                    between.span().start,
                    field,
                    format!("{field} names {name:?}, which is no node"),
                )
            })
        };
        let [a, b] = between.get_ref();
        Ok((index(a)?, index(b)?))
    }

    /// Every link: `[link]`'s values, changed both ways by each `[[links]]` pair, which
    /// must share a network (no frame passes between the others).
    fn links(
        &self,
        default: LinkSpec,
        pairs: &[PairSpec],
        ports: &[&str],
        networks: &Networks,
    ) -> Result<Vec<Vec<LinkSpec>>> {
        let mut links = vec![vec![default; ports.len()]; ports.len()];
        for p in pairs {
            let (i, j) = self.pair(&p.between, "links.between", ports)?;
            if !networks.reach(i, j) {
                return Err(self.at(
                    p.between.span().start,
                    "links.between",
                    format!(
                        "links.between: {:?} and {:?} share no network, so no frame passes between them",
                        ports[i], ports[j]
                    ),
                ));
            }
            for (x, y) in [(i, j), (j, i)] {
                let l = &mut links[x][y];
                l.latency_us = p.latency_us.unwrap_or(l.latency_us);
                l.jitter_us = p.jitter_us.unwrap_or(l.jitter_us);
                l.loss_ppm = p.loss_ppm.unwrap_or(l.loss_ppm);
                l.duplicate_ppm = p.duplicate_ppm.unwrap_or(l.duplicate_ppm);
            }
        }
        for row in &links {
            for l in row {
                if l.latency_us == 0 {
                    return Err(ScenarioError::about("link.latency_us", "link latency_us is 0; a world's quantum is its smallest latency, at least 1 µs"));
                }
                if l.loss_ppm > 1_000_000 || l.duplicate_ppm > 1_000_000 {
                    return Err(ScenarioError::about(
                        "link.loss_ppm",
                        "link loss_ppm / duplicate_ppm above 1000000",
                    ));
                }
            }
        }
        Ok(links)
    }

    /// One `[[partition]]`: two groups or more (exactly two one way), each port in one.
    fn partition(&self, p: &PartitionSpec, ports: &[&str]) -> Result<Partition> {
        let groups = p.groups.get_ref();
        let bad = |what: String| {
            self.at(
                p.groups.span().start,
                "partition.groups",
                format!("partition.groups: {what}"),
            )
        };
        if groups.len() < 2 || (p.one_way && groups.len() != 2) {
            return Err(bad("at least two groups (exactly two when one_way)".into()));
        }
        let mut group_of = vec![None; ports.len()];
        for (g, members) in groups.iter().enumerate() {
            for name in members {
                let i = ports
                    .iter()
                    .position(|n| n == name)
                    .ok_or_else(|| bad(format!("{name:?} is no node")))?;
                if group_of[i].replace(g).is_some() {
                    return Err(bad(format!("{name:?} is in two groups")));
                }
            }
        }
        let (from_ns, until_ns) = interval_ns(p.at_ms, p.duration_ms);
        Ok(Partition {
            from_ns,
            until_ns,
            group_of,
            one_way: p.one_way,
            drawn: false,
        })
    }

    /// One `[[degrade]]`: a link (or every link) slower and lossier for an interval.
    fn degrade(&self, d: &DegradeSpec, ports: &[&str]) -> Result<Degrade> {
        let between = match &d.between {
            None => None,
            Some(b) => Some(self.pair(b, "degrade.between", ports)?),
        };
        if d.loss_ppm > 1_000_000 {
            return Err(ScenarioError::about(
                "degrade.loss_ppm",
                "degrade.loss_ppm above 1000000",
            ));
        }
        let (from_ns, until_ns) = interval_ns(d.at_ms, d.duration_ms);
        Ok(Degrade {
            from_ns,
            until_ns,
            between,
            latency_ns: d.latency_us.saturating_mul(1_000),
            jitter_ns: d.jitter_us.saturating_mul(1_000),
            loss_ppm: d.loss_ppm,
            drawn: false,
        })
    }

    /// `[faults]`: the profile the world's seed draws from, and when (None: no profile,
    /// or `none`).
    fn faults(&self, f: &File) -> Result<Option<WorldProfile>> {
        let Some(spec) = &f.faults else {
            return Ok(None);
        };
        if let Some(u) = spec
            .until_ms
            .as_ref()
            .filter(|u| *u.get_ref() <= spec.after_ms)
        {
            return Err(self.at(
                u.span().start,
                "faults.until_ms",
                format!(
                    "faults.until_ms {} is not after after_ms {}",
                    u.get_ref(),
                    spec.after_ms
                ),
            ));
        }
        Ok(spec.profile.level().map(|level| WorldProfile {
            level,
            after_ns: spec.after_ms.saturating_mul(1_000_000),
            until_ns: spec
                .until_ms
                .as_ref()
                .map(|u| u.get_ref().saturating_mul(1_000_000)),
        }))
    }

    /// `end_when_done`: the nodes whose end ends the world, by index.
    fn end_when_done(
        &self,
        list: Option<&Spanned<Vec<String>>>,
        nodes: &[Node],
    ) -> Result<Vec<usize>> {
        let Some(list) = list else {
            return Ok(Vec::new());
        };
        list.get_ref()
            .iter()
            .map(|name| {
                nodes.iter().position(|n| n.name == *name).ok_or_else(|| {
                    self.at(
                        list.span().start,
                        "end_when_done",
                        format!("end_when_done names {name:?}, which is no node"),
                    )
                })
            })
            .collect()
    }
}

/// An interval of `duration_ms` from `at_ms`, in ns: [from, until).
fn interval_ns(at_ms: u64, duration_ms: u64) -> (u64, u64) {
    (
        at_ms.saturating_mul(1_000_000),
        at_ms.saturating_add(duration_ms).saturating_mul(1_000_000),
    )
}
