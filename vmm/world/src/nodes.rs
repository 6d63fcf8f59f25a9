//! The machines of a world's nodes: each node's run configuration (its seed from the
//! world's, its address, MAC and hosts file, its script, disk and faults).

use super::peer;
use super::scenario::{NodeDisk, Scenario};
use super::switch::mac_of;
use std::path::Path;
use wio_machines::arch::riscv64::DEFAULT_CMDLINE;
use wio_machines::error::Result;
use wio_machines::faults::plan::FaultPlan;
use wio_machines::faults::profile::Profile;
use wio_machines::faults::FaultSource;
use wio_machines::machine::{Arch, RunConfig};
use wio_scheduler::RunSeed;

/// Base64 (standard alphabet, padded) of `bytes`: a node's script on the kernel command line.
fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for c in bytes.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for k in 0..4 {
            if k <= c.len() {
                out.push(A[((n >> (18 - 6 * k)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Node `i`'s address.
pub fn ip_of(i: usize) -> String {
    format!("10.0.0.{}", i + 1)
}

/// Every name of the world's network with its address and port (the peer's is
/// `s.nodes.len()`): each node's (its address), the peer's, the dependencies' and the
/// allowed destinations' (the peer's address; the peer serves them). The guests' hosts
/// files and the peer's DNS service both come from it.
fn named_addresses(s: &Scenario) -> Vec<(usize, String, [u8; 4])> {
    let nodes = s.nodes.iter().enumerate().map(|(i, n)| {
        // At most MAX_NODES (64) nodes: the last byte is `ip_of`'s.
        let last = u8::try_from(i + 1).unwrap_or(u8::MAX);
        (i, n.name.clone(), [10, 0, 0, last])
    });
    let at_peer = s
        .peer
        .iter()
        .chain(s.dependencies.iter().map(|d| &d.name))
        .chain(&s.host_names)
        .map(|n| (s.nodes.len(), n.clone(), peer::PEER_IP));
    nodes.chain(at_peer).collect()
}

/// The names the peer's DNS service answers in a world with a host link: every name of
/// the world's network (see `named_addresses`).
pub(crate) fn dns_names(s: &Scenario) -> Vec<(String, [u8; 4])> {
    named_addresses(s)
        .into_iter()
        .map(|(_, name, ip)| (name, ip))
        .collect()
}

/// The run configurations of the scenario's nodes under world seed `seed` (each node's
/// frames captured to `pcap_dir/NAME.pcap` and its trace written to `trace_dir/NAME.jsonl`
/// when given).
pub(super) fn node_configs(
    s: &Scenario,
    seed: u64,
    pcap_dir: Option<&Path>,
    trace_dir: Option<&Path>,
) -> Result<Vec<RunConfig>> {
    // Every port by name (the peer is on every network); a node's hosts file names those
    // it shares a network with.
    let ports: Vec<(usize, String)> = named_addresses(s)
        .into_iter()
        .map(|(j, name, [a, b, c, d])| (j, format!("{name}:{a}.{b}.{c}.{d}")))
        .collect();
    let hosts_of = |i: usize| -> Vec<&str> {
        ports
            .iter()
            .filter(|(j, _)| *j == i || s.networks.reach(i, *j))
            .map(|(_, h)| h.as_str())
            .collect()
    };
    s.nodes
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let node_seed = RunSeed(seed)
                .stream(&format!("world/node/{}", n.name))
                .next_u64();
            let (disk, image) = match &n.disk {
                None => (None, None),
                Some(NodeDisk::Built(name)) => (
                    Some(wio_machines::machine::guests::builds(n.arch).disk(name)?),
                    None,
                ),
                Some(NodeDisk::File(p)) => (Some(p.clone()), None),
                Some(NodeDisk::Image(img)) => (Some(img.disk.clone()), Some(img)),
            };
            // An image node boots from its initramfs (the launcher mounts the image's disk)
            // and runs the image's process, not a `run` script.
            let root = if disk.is_some() && image.is_none() {
                " root=/dev/vda rw rootfstype=ext4 init=/init"
            } else {
                ""
            };
            let run = match image {
                Some(_) => String::new(),
                None => format!(" wio.run={}", base64(n.run.as_bytes())),
            };
            let faults = match &n.faults {
                None => FaultSource::None,
                Some(f) if f.ends_with(".json") => {
                    FaultSource::Plan(FaultPlan::read(std::path::Path::new(f))?)
                }
                Some(f) => FaultSource::Profile(Profile::from_arg(f)?),
            };
            let node_args = format!(
                "wio.node={} wio.ip={} wio.hosts={}{run}{}",
                n.name,
                ip_of(i),
                hosts_of(i).join(","),
                n.cmdline
                    .as_ref()
                    .map(|c| format!(" {c}"))
                    .unwrap_or_default()
            );
            // An x86-64 node's kernel takes the machine's default command line (its virtio
            // slots, the root disk) with the node's arguments added; a riscv64 node's is
            // written out whole.
            let (cmdline, append) = match n.arch {
                Arch::X86_64 => (None, Some(node_args)),
                Arch::Riscv64 => (Some(format!("{DEFAULT_CMDLINE}{root} {node_args}")), None),
            };
            Ok(RunConfig {
                faults,
                kernel: n.kernel.clone(),
                initrd: image.map(|i| i.initrd.clone()).or_else(|| n.initrd.clone()),
                guest: n
                    .kernel
                    .is_none()
                    .then(|| n.guest.clone().unwrap_or_else(|| "small".into())),
                mem_mib: n.mem_mib,
                cmdline,
                append,
                disk,
                net_port: true,
                // An image node's agent runs the test composer's commands.
                composer: image.is_some(),
                pcap: pcap_dir.map(|d| d.join(format!("{}.pcap", n.name))),
                trace: trace_dir.map(|d| d.join(format!("{}.jsonl", n.name))),
                mac: Some(mac_of(i)),
                capture_console: true,
                judge_promises: false,
                sched_noise: n.sched_noise,
                clock_drift_ppm: n.clock_drift_ppm,
                isa: n.isa,
                ..RunConfig::with_seed(node_seed)
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_standard() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"ping -c 3 b"), "cGluZyAtYyAzIGI=");
    }
}
