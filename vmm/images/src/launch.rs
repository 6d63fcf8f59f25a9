//! Running an imported image: what its machine's initramfs gets.
//!
//! An image machine boots wio's small kernel with its usual initramfs, then two more
//! segments appended to it (Linux unpacks concatenated archives in order, a later file
//! replacing an earlier one):
//! 1. the image runtime (`images/riscv64-image-runtime.sh`): `/workload.sh` (the
//!    launcher, replacing the default workload) and `/bin/wio-exec`;
//! 2. the run's own segment, made here: `/wio/run.cfg`, the process to start (user,
//!    working directory, environment, argv) as `wio-exec` reads it.
//!
//! The three are written as one initrd file into `$WIO_CACHE/images/run/`, named by its
//! sha256, so a run is a function of its files as every other run is (the trace names the
//! initrd's digest; a restart after a crash fault reads the same file).

use crate::error::{ImageError, Result};
use crate::store::Record;
use sha2::{Digest as _, Sha256};
use std::path::{Path, PathBuf};

/// Where `ANTITHESIS_SDK_LOCAL_OUTPUT` points: the promise channel's port itself, so an SDK
/// that finds no `libvoidstar.so` (or a language without a native port) writes its JSON
/// lines straight to wio.
pub const SDK_LOCAL_OUTPUT: &str = "/dev/virtio-ports/wio.sdk";

/// The first field of `run.cfg`: its format.
const CFG_MAGIC: &str = "wio-image-run 1";

/// The process an image runs: docker's rule (the entrypoint, then `args` if given, else
/// the image's cmd; without an entrypoint, `args` or the cmd alone).
pub fn argv(record: &Record, args: &[String]) -> Result<Vec<String>> {
    let c = &record.config;
    let tail = if args.is_empty() { &c.cmd } else { args };
    let argv: Vec<String> = c.entrypoint.iter().chain(tail.iter()).cloned().collect();
    if argv.is_empty() {
        return Err(ImageError::NoProgram {
            name: record.name(),
        });
    }
    Ok(argv)
}

/// The environment the process gets: the image's, and where the Antithesis SDKs write.
pub fn env(record: &Record) -> Vec<String> {
    let mut env = record.config.env.clone();
    for (k, v) in [
        ("ANTITHESIS_OUTPUT_DIR", "/tmp/antithesis"),
        ("ANTITHESIS_SDK_LOCAL_OUTPUT", SDK_LOCAL_OUTPUT),
    ] {
        if !env.iter().any(|e| e.split('=').next() == Some(k)) {
            env.push(format!("{k}={v}"));
        }
    }
    env
}

/// `run.cfg`: NUL-separated fields, as `images/image/wio-exec.c` reads them.
pub fn run_cfg(record: &Record, args: &[String]) -> Result<Vec<u8>> {
    let argv = argv(record, args)?;
    let env = env(record);
    let mut fields: Vec<String> = vec![
        CFG_MAGIC.into(),
        record.config.user.clone(),
        record.config.working_dir.clone(),
        env.len().to_string(),
    ];
    fields.extend(env);
    fields.push(argv.len().to_string());
    fields.extend(argv);
    if let Some(f) = fields.iter().find(|f| f.contains('\0')) {
        return Err(ImageError::NoProgram {
            name: format!("{} (a NUL byte in {f:?})", record.name()),
        });
    }
    let mut out = Vec::new();
    for f in fields {
        out.extend_from_slice(f.as_bytes());
        out.push(0);
    }
    Ok(out)
}

/// A newc cpio archive of these files (directories first, then files, all root's, time 0).
pub fn newc(dirs: &[&str], files: &[(&str, u32, &[u8])]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut ino = 1u32;
    let mut entry = |out: &mut Vec<u8>, name: &str, mode: u32, data: &[u8]| {
        let header = format!(
            "070701{ino:08X}{mode:08X}{:08X}{:08X}{:08X}{:08X}{:08X}{:08X}{:08X}{:08X}{:08X}{:08X}{:08X}",
            0,
            0,
            1,
            0,
            data.len(),
            0,
            0,
            0,
            0,
            name.len() + 1,
            0
        );
        ino += 1;
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(name.as_bytes());
        out.push(0);
        while !out.len().is_multiple_of(4) {
            out.push(0);
        }
        out.extend_from_slice(data);
        while !out.len().is_multiple_of(4) {
            out.push(0);
        }
    };
    for d in dirs {
        entry(&mut out, d, 0o040755, b"");
    }
    for (name, mode, data) in files {
        entry(&mut out, name, 0o100000 | mode, data);
    }
    entry(&mut out, "TRAILER!!!", 0, b"");
    out
}

/// gzip with stored (uncompressed) blocks: a format whose bytes no compressor version can
/// change.
fn gzip_stored(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut g = flate2::GzBuilder::new()
        .mtime(0)
        .write(Vec::new(), flate2::Compression::none());
    // Writing to a Vec cannot fail.
    let _ = g.write_all(bytes);
    g.finish().unwrap_or_default()
}

/// Writes (once) the initrd of an image run: `initramfs`, then `runtime`, then the run's
/// own segment; returns its path.
pub fn initrd(
    cache: &Path,
    initramfs: &Path,
    runtime: &Path,
    record: &Record,
    args: &[String],
) -> Result<PathBuf> {
    let read = |p: &Path| {
        std::fs::read(p).map_err(|source| ImageError::Cache {
            path: p.to_path_buf(),
            source,
        })
    };
    let mut bytes = read(initramfs)?;
    bytes.extend(read(runtime)?);
    let segment = newc(&["wio"], &[("wio/run.cfg", 0o644, &run_cfg(record, args)?)]);
    bytes.extend(gzip_stored(&segment));
    let name = crate::source::hex(&Sha256::digest(&bytes))[..24].to_string();
    let dir = crate::store::images_dir(cache).join("run");
    let path = dir.join(format!("{name}.cpio.gz"));
    if !path.is_file() {
        let cache_err = |source| ImageError::Cache {
            path: path.clone(),
            source,
        };
        std::fs::create_dir_all(&dir).map_err(cache_err)?;
        let tmp = dir.join(format!("{name}.{}", std::process::id()));
        std::fs::write(&tmp, &bytes).map_err(cache_err)?;
        std::fs::rename(&tmp, &path).map_err(cache_err)?;
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{RunConfig, FORMAT};

    fn record(entrypoint: &[&str], cmd: &[&str]) -> Record {
        Record {
            format: FORMAT,
            references: vec!["t:1".into()],
            id: "sha256:00".into(),
            manifest: None,
            platform: "linux/riscv64".into(),
            platforms_offered: vec![],
            config: RunConfig {
                entrypoint: entrypoint.iter().map(|s| s.to_string()).collect(),
                cmd: cmd.iter().map(|s| s.to_string()).collect(),
                env: vec!["A=1".into(), "ANTITHESIS_OUTPUT_DIR=/mine".into()],
                working_dir: "/w".into(),
                user: "app".into(),
                exposed_ports: vec![],
            },
            layers: 1,
            entries: 1,
            content_bytes: 0,
            disk: "rootfs.ext4".into(),
            disk_bytes: 0,
            e2fsprogs: "1".into(),
        }
    }

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn argv_follows_docker_run() {
        let both = record(&["/bin/app", "-v"], &["serve"]);
        assert_eq!(
            argv(&both, &[]).unwrap(),
            strings(&["/bin/app", "-v", "serve"])
        );
        assert_eq!(
            argv(&both, &strings(&["check"])).unwrap(),
            strings(&["/bin/app", "-v", "check"])
        );
        let cmd_only = record(&[], &["redis-server"]);
        assert_eq!(argv(&cmd_only, &[]).unwrap(), strings(&["redis-server"]));
        assert_eq!(
            argv(&cmd_only, &strings(&["sh"])).unwrap(),
            strings(&["sh"])
        );
        let nothing = record(&[], &[]);
        assert!(matches!(
            argv(&nothing, &[]),
            Err(ImageError::NoProgram { .. })
        ));
    }

    #[test]
    fn the_run_config_keeps_the_images_env_and_adds_the_sdk_output() {
        let r = record(&["/bin/app"], &[]);
        let cfg = run_cfg(&r, &[]).unwrap();
        let fields: Vec<&[u8]> = cfg.split(|&b| b == 0).collect();
        let want: Vec<&[u8]> = vec![
            b"wio-image-run 1",
            b"app",
            b"/w",
            b"3",
            b"A=1",
            b"ANTITHESIS_OUTPUT_DIR=/mine",
            b"ANTITHESIS_SDK_LOCAL_OUTPUT=/dev/virtio-ports/wio.sdk",
            b"1",
            b"/bin/app",
            b"",
        ];
        assert_eq!(fields, want);
    }

    #[test]
    fn newc_entries_are_aligned_and_end_with_the_trailer() {
        let a = newc(&["d"], &[("d/f", 0o644, b"abc")]);
        assert!(a.starts_with(b"070701"));
        assert!(a.len().is_multiple_of(4));
        let text = String::from_utf8_lossy(&a);
        assert!(text.contains("d/f\0") && text.contains("TRAILER!!!\0"));
        // The file's header says 3 bytes, and its data follows its 4-aligned name.
        let f = text.find("d/f").unwrap() - 110;
        assert_eq!(&a[f + 54..f + 62], b"00000003");
    }
}
