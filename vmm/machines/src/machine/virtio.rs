//! The virtio devices a run attaches, the same on both machines: entropy in
//! slot 0, network in slot 1, the disk (if one was given) in slot 2, then the promise
//! channel where the machine has one (riscv64 Linux and M-mode guests through
//! their own port, x86-64 Linux guests); and what the run reports about the disk
//! at its end.

use super::RunConfig;
use crate::error::{Result, SnapshotError, WioError};
use crate::snapshot::Meta;
use crate::summary::DiskSummary;
use std::path::PathBuf;
use wio_scheduler::{stream_names, RunSeed};
use wio_virtio_devices::net::pcap::Pcap;
use wio_virtio_devices::{Block, Console, Disk, MmioTransport, Net, Rng};

/// Mean service latency of the virtio-rng device, in virtual ns.
const RNG_MEAN_LATENCY_NS: u64 = 20_000;
/// Mean service latency of the virtio-blk device, in virtual ns.
const BLK_MEAN_LATENCY_NS: u64 = 100_000;

/// Opens the run's disk image (read-only), with a one-line error naming what is wrong.
pub fn open_disk(cfg: &RunConfig) -> Result<Option<Disk>> {
    match &cfg.disk {
        Some(path) => Ok(Some(Disk::open(path).map_err(|e| WioError::ArtifactFormat {
            what: "disk image",
            path: path.clone(),
            reason: format!("{e}; pass an existing raw disk image (for example one from images/build-all-riscv64.sh)"),
        })?)),
        None => Ok(None),
    }
}

/// The run's disk as the trace's start line names it: file name and size (no path, so
/// traces do not depend on where the image lives).
pub fn disk_json(cfg: &RunConfig) -> Option<serde_json::Value> {
    cfg.disk.as_ref().map(|p| {
        serde_json::json!({
            "name": p.file_name().map(|n| n.to_string_lossy().into_owned()),
            "bytes": std::fs::metadata(p).map(|m| m.len()).unwrap_or(0),
        })
    })
}

/// Creates the pcap file, if the run asked for one.
fn open_pcap(cfg: &RunConfig) -> Result<Option<Pcap>> {
    let Some(path) = &cfg.pcap else {
        return Ok(None);
    };
    let output = |source| WioError::Output {
        what: "pcap",
        path: path.clone(),
        source,
    };
    let file = std::fs::File::create(path).map_err(output)?;
    Ok(Some(
        Pcap::new(Box::new(std::io::BufWriter::new(file))).map_err(output)?,
    ))
}

/// Which virtio devices a machine has besides rng, net and the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Channel {
    /// None (x86-64's built-in test guest).
    None,
    /// The promise channel (virtio-console with the `wio.sdk` and `wio.random` ports), in
    /// the last slot.
    Sdk,
}

/// The devices in slot order: rng, net, blk when `disk` is given, and the console when
/// `channel` says so.
pub fn devices(
    cfg: &RunConfig,
    seed: RunSeed,
    disk: Option<Disk>,
    channel: Channel,
) -> Result<Vec<MmioTransport>> {
    let mut v = vec![
        MmioTransport::new(Box::new(Rng::new(
            seed,
            stream_names::VIRTIO_RNG,
            RNG_MEAN_LATENCY_NS,
        ))),
        MmioTransport::new(Box::new({
            let mut net = Net::new(seed, stream_names::VIRTIO_NET, cfg.link, open_pcap(cfg)?);
            if cfg.net_port {
                net.connect_port();
            }
            if let Some(mac) = cfg.mac {
                net.set_mac(mac);
            }
            if let Some(h) = &cfg.host {
                net.serve(Box::new(h.clone()), &h.names());
            }
            net
        })),
    ];
    if let Some(disk) = disk {
        v.push(MmioTransport::new(Box::new(Block::new(
            disk,
            seed,
            stream_names::VIRTIO_BLK,
            BLK_MEAN_LATENCY_NS,
        ))));
    }
    if channel == Channel::Sdk {
        let console = if cfg.composer {
            Console::with_composer(seed, stream_names::VIRTIO_CONSOLE)
        } else {
            Console::new(seed, stream_names::VIRTIO_CONSOLE)
        };
        v.push(MmioTransport::new(Box::new(console)));
    }
    Ok(v)
}

/// For a machine whose CPU runs between exits (x86-64 on KVM): its promise channel takes
/// the driver's control messages at the notification (see
/// [`Console::answer_control_at_kick`]).
pub fn answer_control_at_kick(devices: &mut [MmioTransport]) {
    for t in devices {
        if let Some(c) = t.device_mut().as_any_mut().downcast_mut::<Console>() {
            c.answer_control_at_kick();
        }
    }
}

/// The disk's summary, and `--persist` carried out; a failed persist becomes the run's error.
pub fn finish_disk(
    devices: &[MmioTransport],
    cfg: &RunConfig,
    outcome: Result<u32>,
) -> (Option<DiskSummary>, Result<u32>) {
    let block = devices
        .iter()
        .find_map(|t| t.device().as_any().downcast_ref::<Block>());
    let summary = block.map(|b| DiskSummary {
        reads: b.stats.reads,
        writes: b.stats.writes,
        flushes: b.stats.flushes,
        errors: b.stats.errors,
        rotted_sectors: b.stats.rotted_sectors,
        durable_chunks: b.disk().durable_chunks(),
        unflushed_chunks: b.disk().volatile_chunks(),
    });
    let outcome = match (block, &cfg.persist) {
        (Some(b), Some(path)) => match b.disk().persist(path) {
            Ok(()) => outcome,
            Err(source) => Err(WioError::Output {
                what: "persisted disk",
                path: path.clone(),
                source,
            }),
        },
        _ => outcome,
    };
    (summary, outcome)
}

/// The disk a restored machine runs on: the one given, or the snapshot's, checked to be
/// the very bytes the snapshot's overlay was written on.
pub fn restore_disk(meta: &Meta, cfg: &RunConfig) -> Result<Option<PathBuf>> {
    let Some(saved) = &meta.disk else {
        if let Some(p) = cfg.disk.as_ref().or(cfg.persist.as_ref()) {
            return Err(SnapshotError::NoDisk { given: p.clone() }.into());
        }
        return Ok(None);
    };
    let path = cfg.disk.clone().unwrap_or_else(|| saved.path.clone());
    let mut c = cfg.clone();
    c.disk = Some(path.clone());
    open_disk(&c).map_err(|e| SnapshotError::Disk {
        saved: saved.path.clone(),
        source: Box::new(e),
    })?;
    let sha = crate::snapshot::file_sha256(&path).map_err(|source| WioError::ArtifactIo {
        what: "disk image",
        path: path.clone(),
        source,
    })?;
    if sha != saved.sha256 {
        return Err(WioError::ArtifactFormat {
            what: "disk image",
            path,
            reason: format!(
                "is not the base image the snapshot was taken on (its SHA-256 is {}, the snapshot's {}); pass the original image",
                &sha[..16],
                &saved.sha256[..saved.sha256.len().min(16)]
            ),
        });
    }
    Ok(Some(path))
}
