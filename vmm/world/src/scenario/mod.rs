//! A world's scenario file (TOML): its nodes and the links between them.
//!
//! ```text
//! max_virtual_secs = 60       # optional; the run stops there (default 3600)
//! end_when_done = ["client"]  # optional; the world ends once these nodes have ended (the
//!                             # others, servers, stop as a success); default: every node
//! [link]                      # every pair of nodes, unless a [[links]] entry says otherwise
//! latency_us = 200            # one way; the world's quantum is the smallest latency
//! jitter_us = 50              # extra delay drawn per frame in [0, jitter]
//! loss_ppm = 0
//! duplicate_ppm = 0
//! [[links]]                   # one pair (both ways)
//! between = ["a", "b"]
//! latency_us = 1000
//! [[node]]
//! name = "a"                  # letters, digits, '-'; its host name in the other guests
//! arch = "riscv64"            # riscv64 (default: the interpreter) or x86_64 (KVM)
//! guest = "small"             # a built guest (default; x86-64's from images/build-all-x86_64.sh),
//!                             # or kernel = "Image", initrd = ...
//! mem_mib = 256
//! run = "ping -c 3 b"         # the node's workload: a shell script its init runs
//! faults = "light"            # this node's faults: a profile (none, light, heavy, FILE.toml)
//!                             # or a plan (FILE.json): crash and restart, pause, disk, clock
//! disk = "python"             # a root disk: built for the node's arch (rootfs, redis, python,
//!                             # payments) or an ext4 image
//!                             # (never modified: writes go to the node's own overlay)
//!                             # or image = "REF": an imported container image (wio image
//!                             # import), run by its entrypoint and cmd instead of `run`; with
//!                             # command = [...], entrypoint = [...], environment = ["K=V"],
//!                             # user = "...", working_dir = "..." overriding the image's;
//!                             # healthcheck = [argv], healthcheck_interval_ms = 1000 (tried
//!                             # until it succeeds), wait_healthy = ["node"] (start after),
//!                             # files = [{source, target, read_only}] (host files copied
//!                             # in), dirs = ["/data"] (folders made), restart =
//!                             # "on-failure:3" (no, always, unless-stopped, on-failure[:N])
//! networks = ["back"]         # the networks it is on (default: "default"); nodes reach
//!                             # each other (frames, /etc/hosts) only through one they share;
//!                             # the peer is on every network
//! cmdline = "wio.pysdk=1"     # kernel arguments added to the node's command line
//! sched_noise = "light"       # timer-interrupt noise and seeded clock drift: off, light, heavy
//! clock_drift_ppm = 500       # or a fixed drift of its clock against the world's (±10000)
//! isa = "rv64gc_zba_zbb_zbs"  # the hart's ISA: rv64gc (default) plus zba, zbb, zbc, zbs, v
//! [[partition]]               # frames between the groups are dropped while it lasts
//! at_ms = 1000
//! duration_ms = 2000
//! groups = [["a"], ["b", "c"]]
//! one_way = false             # true: only frames from the first group to the second
//! [peer]                      # an external service on the switch: smoltcp at 10.0.0.254
//! name = "peer"               # (its host name) answering ping, echoing TCP and UDP port 7;
//!                             # links, partitions and degradations may name it
//! [[dependency]]              # a simulated HTTP API the peer serves (see dependency.rs)
//! name = "bank"
//! port = 8080
//! [faults]                    # faults between nodes drawn from the world's seed
//! profile = "light"           # none, light (a partition every ~30 s, a degraded link every ~20 s), heavy
//! after_ms = 2000             # none start before (the nodes' setup)
//! until_ms = 10000            # and every one has ended by then (optional)
//! [[degrade]]                 # a link (both ways; every link without `between`) degraded
//! at_ms = 3000                # for an interval: frames sent then take latency_us longer,
//! duration_ms = 1000          # plus a jitter in [0, jitter_us], and are lost with loss_ppm
//! between = ["a", "b"]
//! latency_us = 5000
//! loss_ppm = 100000
//! ```
//!
//! Node i (from 0, in file order) has the MAC 52:54:00:0a:00:(i+1) and the address
//! 10.0.0.(i+1)/24; every guest's /etc/hosts names the others it shares a network with.
//! Errors are one line that names the file, the line and the field.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use wio_machines::error::{NodeArgsError, Result, ScenarioError, WioError};
use wio_machines::machine::noise::SchedNoise;
use wio_machines::machine::Arch;

mod check;
mod compose;
pub mod dependency;
mod file;
mod networks;

pub use compose::shell_split;
pub use dependency::{DepFault, DepFaultKind, Dependency};
pub use networks::Networks;

/// Most nodes in one world.
pub const MAX_NODES: usize = 64;
/// Longest `run` script, bytes (it travels base64-encoded on the kernel command line).
pub const MAX_RUN: usize = 480;

/// A link's behaviour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    /// One-way latency, µs.
    #[serde(default = "default_latency")]
    pub latency_us: u64,
    /// Extra delay drawn per frame in [0, jitter], µs.
    #[serde(default)]
    pub jitter_us: u64,
    /// Frames lost, per million.
    #[serde(default)]
    pub loss_ppm: u64,
    /// Frames duplicated, per million.
    #[serde(default)]
    pub duplicate_ppm: u64,
}

fn default_latency() -> u64 {
    200
}

impl Default for LinkSpec {
    fn default() -> LinkSpec {
        LinkSpec {
            latency_us: default_latency(),
            jitter_us: 0,
            loss_ppm: 0,
            duplicate_ppm: 0,
        }
    }
}

/// How often and how hard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Level {
    /// A partition every 30 s on average lasting 0.5-3 s; a degradation every 20 s,
    /// 0.5-5 s, up to 50 ms more latency, 10 ms jitter, 20% loss.
    Light,
    /// A partition every 10 s, 1-10 s; a degradation every 5 s, 1-10 s, up to 200 ms,
    /// 50 ms jitter, 50% loss.
    Heavy,
}

/// The scenario's `[faults]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorldProfile {
    /// How often and how hard.
    pub level: Level,
    /// No drawn fault starts before this virtual time (the nodes' setup), ns.
    pub after_ns: u64,
    /// Every drawn fault has ended by this virtual time (checks after the faults), ns.
    pub until_ns: Option<u64>,
}

/// A link degraded for an interval: frames sent on it then take longer and may be lost.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Degrade {
    /// When it starts, ns.
    pub from_ns: u64,
    /// When it ends, ns.
    pub until_ns: u64,
    /// The pair of nodes (both ways); None: every link.
    pub between: Option<(usize, usize)>,
    /// Extra one-way latency, ns.
    pub latency_ns: u64,
    /// Extra jitter drawn per frame in [0, jitter], ns.
    pub jitter_ns: u64,
    /// Frames lost, per million (on top of the link's own loss).
    pub loss_ppm: u64,
    /// Drawn from the world's seed by its `[faults]` profile (not written in the file).
    pub drawn: bool,
}

impl Degrade {
    /// Whether a frame `src` sends to `dst` at `at_ns` is on the degraded link then.
    pub fn hits(&self, src: usize, dst: usize, at_ns: u64) -> bool {
        (self.from_ns..self.until_ns).contains(&at_ns)
            && self
                .between
                .is_none_or(|(a, b)| (a, b) == (src, dst) || (b, a) == (src, dst))
    }
}

/// A partition between groups of nodes, for an interval of virtual time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Partition {
    /// When it starts, ns.
    pub from_ns: u64,
    /// When it ends, ns.
    pub until_ns: u64,
    /// Each node's group (None: in no group, not cut off).
    pub group_of: Vec<Option<usize>>,
    /// Only frames from group 0 to group 1 are dropped.
    pub one_way: bool,
    /// Drawn from the world's seed by its `[faults]` profile (not written in the file).
    pub drawn: bool,
}

impl Partition {
    /// Whether a frame node `src` sends to node `dst` at `at_ns` is dropped.
    pub fn cuts(&self, src: usize, dst: usize, at_ns: u64) -> bool {
        if !(self.from_ns..self.until_ns).contains(&at_ns) {
            return false;
        }
        let group = |i: usize| self.group_of.get(i).copied().flatten();
        match (group(src), group(dst)) {
            (Some(a), Some(b)) if a != b => !self.one_way || (a == 0 && b == 1),
            _ => false,
        }
    }
}

/// A node of the world.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Node {
    /// Its name (and host name).
    pub name: String,
    /// A built guest, when no kernel is given.
    pub guest: Option<String>,
    /// Its kernel and initrd, when given.
    pub kernel: Option<PathBuf>,
    /// Its initrd.
    pub initrd: Option<PathBuf>,
    /// Memory, MiB.
    pub mem_mib: u64,
    /// Its workload script.
    pub run: String,
    /// Its faults (`--faults` or `--fault-plan` of a single run), if any.
    pub faults: Option<String>,
    /// Its root disk: a built disk's name (`rootfs`, `redis`, `python`) or an ext4 image
    /// (never modified: the node writes to its own copy-on-write overlay).
    pub disk: Option<NodeDisk>,
    /// Kernel arguments added to the node's command line.
    pub cmdline: Option<String>,
    /// Its CPU-timing noise level (`--sched-noise`).
    pub sched_noise: SchedNoise,
    /// A fixed clock drift in ppm, in place of the one its seed draws (`--clock-drift-ppm`).
    pub clock_drift_ppm: Option<i32>,
    /// The hart's optional extensions (`--isa`). Like the scenario's `networks`, a world
    /// snapshot keeps the nodes' ISAs in a section of its own (`node-isa`, written only
    /// when a node has extensions), so snapshots of other worlds are as they were.
    #[serde(skip)]
    pub isa: wio_machines::arch::riscv64::Isa,
    /// Its architecture (`arch`): riscv64 on the interpreter, or x86_64 on KVM (which needs
    /// `kernel` and `initrd`). A world snapshot keeps it in a section of its own
    /// (`node-arch`, written only when a node is x86-64), as it does the ISAs.
    #[serde(skip, default = "riscv64")]
    pub arch: Arch,
}

/// A node's architecture when nothing says otherwise.
fn riscv64() -> Arch {
    Arch::Riscv64
}

/// A node's root disk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum NodeDisk {
    /// A disk `images/build-all-riscv64.sh` built, by name.
    Built(String),
    /// An image file.
    File(PathBuf),
    /// An imported container image: the node runs its process, not a `run` script.
    Image(NodeImage),
}

/// A node's imported container image, resolved when the scenario was read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeImage {
    /// The name the scenario gave.
    pub reference: String,
    /// The image's ID.
    pub id: String,
    /// Its disk.
    pub disk: PathBuf,
    /// The initrd that starts its process (see `wio_images::launch`).
    pub initrd: PathBuf,
}

/// A checked scenario.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Scenario {
    /// The nodes, in file order (node i is 10.0.0.(i+1)).
    pub nodes: Vec<Node>,
    /// links[i][j]: the link from node i to node j.
    pub links: Vec<Vec<LinkSpec>>,
    /// Virtual-time limit, ns.
    pub max_virtual_ns: u64,
    /// Partitions between groups of nodes.
    pub partitions: Vec<Partition>,
    /// Links degraded for an interval.
    pub degrades: Vec<Degrade>,
    /// Faults between nodes drawn from the world's seed, if any.
    pub faults: Option<WorldProfile>,
    /// The world ends (as a success for the nodes still running) once these nodes have
    /// ended; empty: when every node has.
    pub end_when_done: Vec<usize>,
    /// The external service's host name, when the world has one (`[peer]`): it is the
    /// switch's port after the nodes', in `links`, partitions and degradations too.
    pub peer: Option<String>,
    /// Which nodes reach each other (`networks`). Not in the `scenario` section of a world
    /// snapshot: a world with several networks writes them in a section of their own, so
    /// the snapshots of worlds on one network are as they were.
    #[serde(skip)]
    pub networks: Networks,
    /// The simulated dependencies the peer serves (`[[dependency]]`). Like `networks`, a
    /// world snapshot keeps them in a section of their own (written only when there are).
    #[serde(skip)]
    pub dependencies: Vec<Dependency>,
    /// The dependencies' faults: written in the file, and drawn from the seed.
    #[serde(skip)]
    pub dependency_faults: Vec<DepFault>,
    /// The host link's names (`--net host --allow NAME=...`): the peer's address in every
    /// guest's hosts file. Set by the run, not the file.
    #[serde(skip)]
    pub host_names: Vec<String>,
}

impl Scenario {
    /// Reads and checks `path`: a TOML scenario, or a compose file (`.yaml`, `.yml`; see
    /// `compose.rs`).
    pub fn read(path: &Path) -> Result<Scenario> {
        let text = std::fs::read_to_string(path).map_err(|source| WioError::ArtifactIo {
            what: "scenario",
            path: path.to_path_buf(),
            source,
        })?;
        let base = path.parent().unwrap_or(Path::new("."));
        let is_compose = path.extension().is_some_and(|e| e == "yaml" || e == "yml");
        if !is_compose {
            return Scenario::parse_in(&text, base).map_err(|e| WioError::from(e.in_file(path)));
        }
        // A compose file: translated into a scenario, checked as one, every error's line
        // mapped back to the compose file's.
        let t = compose::translate(&text, base).map_err(|e| WioError::from(e.in_file(path)))?;
        for w in &t.warnings {
            eprintln!("wio: warning: {}: {w}", path.display());
        }
        Scenario::parse_in(&t.toml, base).map_err(|mut e| {
            e.line = e.line.and_then(|l| t.lines.get(l.wrapping_sub(1)).copied());
            WioError::from(e.in_file(path))
        })
    }

    /// Parses and checks scenario text (relative paths from the current directory); the
    /// error names the line and the field.
    #[cfg(test)]
    pub fn parse(text: &str) -> std::result::Result<Scenario, ScenarioError> {
        Scenario::parse_in(text, Path::new(""))
    }

    /// Parses and checks scenario text whose relative paths (kernels, initrds, fault
    /// plans and profile files) are relative to `base` (the scenario's folder).
    pub fn parse_in(text: &str, base: &Path) -> std::result::Result<Scenario, ScenarioError> {
        check::check(text, base)
    }

    /// The switch's ports by name: the nodes in file order, then the peer (if any).
    pub fn port_names(&self) -> Vec<String> {
        self.nodes
            .iter()
            .map(|n| n.name.clone())
            .chain(self.peer.clone())
            .collect()
    }

    /// Adds kernel arguments to a node's command line, from `--node-args NAME=ARGS`.
    pub fn add_node_args(&mut self, arg: &str) -> Result<()> {
        let arg_ = || arg.to_string();
        let (name, args) = arg
            .split_once('=')
            .ok_or_else(|| NodeArgsError::NoEquals { arg: arg_() })?;
        let node = self
            .nodes
            .iter_mut()
            .find(|n| n.name == name)
            .ok_or_else(|| NodeArgsError::NoNode {
                arg: arg_(),
                name: name.to_string(),
            })?;
        if args.trim().is_empty() {
            return Err(NodeArgsError::NoArgs { arg: arg_() }.into());
        }
        node.cmdline = Some(match node.cmdline.take() {
            Some(c) => format!("{c} {args}"),
            None => args.to_string(),
        });
        Ok(())
    }

    /// The world's quantum: the smallest latency between two different nodes (ns).
    pub fn quantum_ns(&self) -> u64 {
        let mut q = u64::MAX;
        for (i, row) in self.links.iter().enumerate() {
            for (j, l) in row.iter().enumerate() {
                if i != j {
                    q = q.min(l.latency_us * 1_000);
                }
            }
        }
        if q == u64::MAX {
            default_latency() * 1_000
        } else {
            q
        }
    }
}

/// Whether `name` is a host name a node or the peer may have.
fn host_name_ok(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 32
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        && name.as_bytes()[0].is_ascii_alphabetic()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn networks_decide_who_reaches_whom_and_bad_ones_name_the_line() {
        let s = Scenario::parse(
            "[peer]\n[[node]]\nname = \"web\"\nnetworks = [\"front\"]\n[[node]]\nname = \"api\"\nnetworks = [\"front\", \"back\"]\n[[node]]\nname = \"db\"\nnetworks = [\"back\"]\n",
        )
        .unwrap();
        assert!(s.networks.reach(0, 1) && s.networks.reach(1, 2) && !s.networks.reach(0, 2));
        assert!(
            s.networks.reach(0, 3) && s.networks.reach(2, 3),
            "the peer reaches all"
        );
        // Nodes without the key share `default`: one network, as before.
        let one = Scenario::parse("[[node]]\nname = \"a\"\n[[node]]\nname = \"b\"\n").unwrap();
        assert!(one.networks.is_single());
        for (text, want) in [
            (
                "[[node]]\nname = \"a\"\nnetworks = []\n",
                "line 3: node.networks is empty",
            ),
            (
                "[[node]]\nname = \"a\"\nnetworks = [\"x\", \"x\"]\n",
                "names \"x\" twice",
            ),
            (
                "[[node]]\nname = \"a\"\nnetworks = [\"a b\"]\n",
                "node.networks \"a b\": a network's name",
            ),
            (
                "[[links]]\nbetween = [\"a\", \"b\"]\nlatency_us = 9\n[[node]]\nname = \"a\"\nnetworks = [\"x\"]\n[[node]]\nname = \"b\"\n",
                "line 2: links.between: \"a\" and \"b\" share no network",
            ),
            (
                "[[node]]\nname = \"a\"\nimage = \"x:1\"\nwait_healthy = [\"b\"]\nnetworks = [\"x\"]\n[[node]]\nname = \"b\"\nimage = \"x:1\"\nhealthcheck = [\"true\"]\n",
                "line 4: node.wait_healthy: \"a\" and \"b\" share no network",
            ),
        ] {
            let e = Scenario::parse(text).unwrap_err().to_string();
            assert!(e.contains(want), "{text:?}: {e}");
        }
    }

    #[test]
    fn scenarios_parse_and_bad_ones_name_the_line() {
        let s = Scenario::parse(
            "[link]\nlatency_us = 300\n[[links]]\nbetween = [\"a\", \"b\"]\nlatency_us = 50\n[[node]]\nname = \"a\"\nrun = \"ping -c 1 b\"\n[[node]]\nname = \"b\"\n[[node]]\nname = \"c\"\n",
        )
        .unwrap();
        assert_eq!(s.nodes.len(), 3);
        assert_eq!(s.links[0][1].latency_us, 50);
        assert_eq!(s.links[1][0].latency_us, 50);
        assert_eq!(s.links[0][2].latency_us, 300);
        assert_eq!(s.quantum_ns(), 50_000);
        assert_eq!(s.nodes[0].run, "ping -c 1 b");
        for (text, want) in [
            ("[[node]]\nname = \"a\"\ncolour = 1\n", "line 3"),
            (
                "[[node]]\nname = \"a\"\n[[node]]\nname = \"a\"\n",
                "line 4: node.name \"a\" is used twice",
            ),
            (
                "[[node]]\nname = \"a\"\n[[links]]\nbetween = [\"a\", \"z\"]\n",
                "line 4: links.between names \"z\"",
            ),
            (
                "[[node]]\nname = \"a\"\nkernel = \"/no/such/Image\"\n",
                "line 3: /no/such/Image does not exist",
            ),
            (
                "[[node]]\nname = \"a\"\narch = \"x86_64\"\nguest = \"small\"\nkernel = \"Cargo.toml\"\n",
                "line 5: node.kernel: node \"a\" names a built guest too",
            ),
            (
                "[[node]]\nname = \"a\"\narch = \"x86_64\"\ndisk = \"flight\"\n",
                "line 4: node.disk \"flight\": no such image (or a built x86_64 disk: rootfs, redis, python, payments)",
            ),
            (
                "[[node]]\nname = \"a\"\narch = \"x86_64\"\nkernel = \"Cargo.toml\"\ninitrd = \"Cargo.toml\"\nisa = \"rv64gcb\"\n",
                "line 6: node.isa: a riscv64 node's setting",
            ),
            ("[[node]]\nname = \"1a\"\n", "line 2: node.name"),
            ("", "no [[node]]"),
            (
                "[[node]]\nname = \"a\"\n[[partition]]\nat_ms = 1\nduration_ms = 2\ngroups = [[\"a\"], [\"z\"]]\n",
                "line 6: partition.groups: \"z\" is no node",
            ),
            (
                "[[node]]\nname = \"a\"\n[[degrade]]\nat_ms = 1\nduration_ms = 2\nbetween = [\"a\", \"q\"]\n",
                "line 6: degrade.between names \"q\"",
            ),
            (
                "[[node]]\nname = \"a\"\nfaults = \"missing-plan.json\"\n",
                "line 3: node.faults: missing-plan.json does not exist",
            ),
            (
                "[link]\nlatency_us = 0\n[[node]]\nname = \"a\"\n[[node]]\nname = \"b\"\n",
                "latency_us is 0",
            ),
        ] {
            let e = Scenario::parse(text).unwrap_err().to_string();
            assert!(e.contains(want), "{text:?}: {e}");
            assert!(!e.contains('\n'), "one line: {e}");
        }
    }
}
