//! The host link a command line asks for (`--net host`, `--allow`, `--record`,
//! `--replay`), for a world (`wio sim`) or a single machine (`wio run`).

use crate::cli;
use crate::error::WioError;
use wio_machines::hostlink::{self, HostSpec, SharedLink};
use wio_machines::machine::{Arch, RunConfig};

/// The host link these flags ask for (None: none).
pub(crate) fn spec(
    net: Option<&str>,
    allow: &[String],
    record: Option<&std::path::Path>,
    replay: Option<&std::path::Path>,
) -> Result<Option<HostSpec>, WioError> {
    if net.is_none() && replay.is_none() {
        return Ok(None);
    }
    let allow = hostlink::allow_list(allow).map_err(WioError::Usage)?;
    if replay.is_none() && allow.is_empty() {
        return Err(WioError::Usage(
            "--net host: nothing is allowed; name each host destination with --allow [NAME=]ADDR:PORT, e.g. --allow api=127.0.0.1:8080".into(),
        ));
    }
    if replay.is_some() && !allow.is_empty() {
        return Err(WioError::Usage(
            "--replay takes its allow list from the tape: leave out --allow".into(),
        ));
    }
    Ok(Some(HostSpec {
        allow,
        record: record.map(std::path::Path::to_path_buf),
        replay: replay.map(std::path::Path::to_path_buf),
    }))
}

/// A single machine's host link (`wio run --net host` or `--replay`), set in `cfg`: the
/// tape checked against the machine's configuration and seed (a replay without --seed
/// runs with the tape's), or a recording started.
pub(crate) fn for_machine(
    args: &cli::RunArgs,
    arch: Arch,
    cfg: &mut RunConfig,
) -> Result<(), WioError> {
    let Some(spec) = spec(
        args.net.as_deref(),
        &args.allow,
        args.record.as_deref(),
        args.replay.as_deref(),
    )?
    else {
        return Ok(());
    };
    if arch != Arch::Riscv64 {
        return Err(WioError::Usage(
            "--net host and --replay connect a riscv64 machine's network to the host; use them with --arch riscv64".into(),
        ));
    }
    if !args.snapshot_at.is_empty() {
        return Err(WioError::Usage(
            "a single machine with a host link cannot be snapshotted (a world's can: wio sim); leave out --snapshot-at".into(),
        ));
    }
    let (replay, allow) = hostlink::allowed(&spec)?;
    if let (Some(t), None) = (&replay, args.seed) {
        cfg.seed = t.head.seed;
        cfg.seed_given = true;
    }
    // What makes the machine's run: the tape is checked against it.
    let config = format!(
        "{:?}{:?}",
        (
            arch.name(),
            &cfg.kernel,
            &cfg.guest,
            &cfg.initrd,
            &cfg.firmware,
            cfg.ecc,
            &cfg.cmdline,
            cfg.mem_mib,
            cfg.epoch_unix,
            &cfg.disk,
        ),
        (cfg.link, &cfg.faults, cfg.sched_noise, cfg.clock_drift_ppm,)
    );
    let config = hostlink::config_hash(config.as_bytes(), &allow);
    cfg.host = Some(SharedLink::new(hostlink::open(
        &spec, replay, allow, cfg.seed, config,
    )?));
    Ok(())
}
