//! Builds machines: picks the architecture a run asks for (or the one a snapshot was
//! taken on) and hands back a [`Machine`] or a [`LoadedSnapshot`]. The only module
//! that names both architectures; everything above it speaks to the traits.

use crate::arch::riscv64::{RvLoaded, RvMachine};
use crate::arch::x86_64::{machine as x86_64, X86Loaded};
use crate::error::{MachineError, Result, WioError};
use crate::machine::{Arch, LoadedSnapshot, Machine, RunConfig, RunResult};
use crate::snapshot::Snapshot;
use std::path::Path;
use std::time::Instant;

/// A new machine of `arch` as `cfg` describes it, booting its kernel.
pub fn boot(arch: Arch, cfg: &RunConfig, wall: Instant) -> Result<Box<dyn Machine>> {
    Ok(match arch {
        Arch::X86_64 => Box::new(x86_64::boot(cfg, wall)?),
        Arch::Riscv64 => Box::new(RvMachine::boot(cfg, wall)?),
    })
}

/// The architecture of the snapshot at `path` (its header and metadata only).
pub fn snapshot_arch(path: &Path) -> Result<Arch> {
    let meta = Snapshot::peek_meta(path)?;
    Arch::from_name(&meta.arch).ok_or_else(|| WioError::ArtifactFormat {
        what: "snapshot",
        path: path.to_path_buf(),
        reason: format!(
            "is of an architecture this wio does not know ({:?})",
            meta.arch
        ),
    })
}

/// Reads and checks the snapshot at `path` for restores; `cfg.disk`, if given, must be
/// its base disk image.
pub fn load(path: &Path, cfg: &RunConfig) -> Result<Box<dyn LoadedSnapshot>> {
    Ok(match snapshot_arch(path)? {
        Arch::X86_64 => Box::new(X86Loaded::load(path, cfg)?),
        Arch::Riscv64 => Box::new(RvLoaded::load(path, cfg)?),
    })
}

/// The machine a run starts with: restored from `cfg.from`, or booted.
pub fn start(arch: Arch, cfg: &RunConfig, wall: Instant) -> Result<Box<dyn Machine>> {
    match &cfg.from {
        Some(path) => load(path, cfg)?.restore(cfg, wall),
        None => boot(arch, cfg, wall),
    }
}

/// Runs the machine a run starts with (restored from `cfg.from`, or booted) under gdb,
/// waiting for it on `addr` (riscv64 only).
pub fn debug(arch: Arch, cfg: &RunConfig, wall: Instant, addr: &str) -> Result<RunResult> {
    let arch = match &cfg.from {
        Some(path) => snapshot_arch(path)?,
        None => arch,
    };
    if arch == Arch::X86_64 {
        if cfg.from.is_some() {
            return Err(MachineError::GdbFromX86.into());
        }
        let m = x86_64::boot(cfg, wall)?;
        let conn = crate::gdb::accept(addr)?;
        return Ok(crate::arch::x86_64::gdb::serve(m, cfg, wall, conn));
    }
    let m = match &cfg.from {
        Some(path) => {
            crate::arch::riscv64::snapshot::restore(&RvLoaded::load(path, cfg)?, cfg, wall)?
        }
        None => RvMachine::boot(cfg, wall)?,
    };
    let conn = crate::gdb::accept(addr)?;
    crate::arch::riscv64::gdb::serve(
        m,
        crate::arch::riscv64::debug::RunPlan {
            cfg: cfg.clone(),
            wall,
        },
        conn,
    )
}

/// A snapshot already read (a world snapshot's node, named `path`), checked and loaded for
/// the machine its metadata names.
pub fn from_snapshot(
    snap: crate::snapshot::Snapshot,
    path: &Path,
    cfg: &RunConfig,
) -> Result<Box<dyn LoadedSnapshot>> {
    Ok(match Arch::from_name(&snap.meta.arch) {
        Some(Arch::X86_64) => Box::new(X86Loaded::from_snapshot(snap, path, cfg)?),
        _ => Box::new(RvLoaded::from_snapshot(snap, path, cfg)?),
    })
}

/// A world's node booted as `cfg` describes, under gdb waiting on `addr` (riscv64).
pub fn gdb_node(cfg: &RunConfig, wall: Instant, addr: &str) -> Result<Box<dyn Machine>> {
    let m = RvMachine::boot(cfg, wall)?;
    let conn = crate::gdb::accept(addr)?;
    Ok(Box::new(crate::arch::riscv64::gdb::GdbNode::new(
        m,
        crate::arch::riscv64::debug::RunPlan {
            cfg: cfg.clone(),
            wall,
        },
        conn,
    )?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::{guests, Stop};
    use wio_clock::VirtualTime;
    use wio_virtio_devices::net::stack::Stack;
    use wio_virtio_devices::Frame;

    const PINGS_OK: &str = "workload: net: 3 replies";
    const TCP_OK: &str = "workload: tcp echo: hello-over-tcp";

    /// Boots the small riscv64 guest with a network port and runs it in 100 µs quanta;
    /// after each quantum its frames go to `peer` (None: they are lost) and the peer's
    /// answers come back 50 µs after the quantum's end. Returns the watched lines that
    /// appeared, the trace hash and how many frames left the machine.
    fn run_with_peer(mut peer: Option<Stack>) -> (Vec<String>, String, usize) {
        const QUANTUM: u64 = 100_000;
        const LATENCY: u64 = 50_000;
        let cfg = RunConfig {
            guest: Some("small".into()),
            epoch_unix: 1_767_225_600,
            net_port: true,
            max_virtual_ns: 60_000_000_000,
            ..RunConfig::with_seed(1)
        };
        let wall = Instant::now();
        let mut m = boot(Arch::Riscv64, &cfg, wall).unwrap();
        m.console().watch = vec![PINGS_OK.into(), TCP_OK.into()];
        let mut sent = 0;
        let mut t = 0;
        let outcome = loop {
            t += QUANTUM;
            let end = loop {
                match m.run_until(VirtualTime::from_ns(t)) {
                    Stop::Yield | Stop::GuestSnapshot(_) | Stop::SetupComplete => {}
                    Stop::Limit => break None,
                    Stop::End(outcome) => break Some(outcome),
                }
            };
            assert!(
                m.now().as_ns() <= t || end.is_some(),
                "ran past its quantum"
            );
            let frames = m.take_frames();
            sent += frames.len();
            if let Some(peer) = peer.as_mut() {
                let mut answers = Vec::new();
                for f in frames {
                    answers.extend(peer.receive(&f.bytes, f.at_ns));
                }
                answers.extend(peer.poll(t));
                for bytes in answers {
                    m.deliver_frame(Frame {
                        at_ns: t + LATENCY,
                        bytes,
                    })
                    .unwrap();
                }
            }
            if let Some(outcome) = end {
                break outcome;
            }
        };
        let hits = m.console().watch_hits.clone();
        let end = m.finish(&cfg, outcome, wall, None);
        assert_eq!(end.outcome.unwrap(), 0);
        (hits, end.summary.trace_hash, sent)
    }

    #[test]
    fn a_machine_talks_to_a_peer_outside_it_through_its_network_port() {
        if let Err(e) = guests::built_guest("small") {
            wio_require::skip(
                "a_machine_talks_to_a_peer_outside_it_through_its_network_port",
                wio_require::Capability::RiscvGuests,
                &format!("no built small riscv64 guest: {e}"),
            );
            return;
        }
        let (hits, hash, sent) = run_with_peer(Some(Stack::new(7)));
        assert_eq!(hits, vec![PINGS_OK.to_string(), TCP_OK.to_string()]);
        assert!(
            sent >= 8,
            "ARP, 3 pings and a TCP exchange left the machine: {sent}"
        );
        let (again, again_hash, again_sent) = run_with_peer(Some(Stack::new(7)));
        assert_eq!((again, again_hash, again_sent), (hits, hash.clone(), sent));
        // Without a peer outside, nothing answers: the frames did leave through the port.
        let (lonely, lonely_hash, _) = run_with_peer(None);
        assert!(lonely.is_empty(), "{lonely:?}");
        assert_ne!(lonely_hash, hash);
    }
}
