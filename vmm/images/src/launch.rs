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

/// Where `ANTITHESIS_STOP_FAULTS` points: the agent's helper (`images/image/wio-agent.c`),
/// which asks the test composer to hold faults off for the seconds it is given.
pub const STOP_FAULTS: &str = "/usr/lib/wio-stop-faults";

/// The first field of `run.cfg`: its format.
const CFG_MAGIC: &str = "wio-image-run 1";

/// What a run changes of the image's configuration (`wio run --image REF -- ARGS`, a world
/// node's `command`, `entrypoint`, `environment`, `user`, `working_dir`).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Overrides {
    /// Replaces the image's entrypoint (and, as in docker and compose, drops its cmd).
    pub entrypoint: Option<Vec<String>>,
    /// Replaces the image's cmd (the arguments after the entrypoint).
    pub command: Option<Vec<String>>,
    /// `NAME=VALUE` entries: each replaces the image's variable of that name, or is added.
    pub env: Vec<String>,
    /// Replaces the image's user.
    pub user: Option<String>,
    /// Replaces the image's working directory.
    pub working_dir: Option<String>,
    /// A health check (compose's `healthcheck`): run inside the image until it succeeds,
    /// after which the node answers "healthy" on [`HEALTH_PORT`].
    pub healthcheck: Option<Health>,
    /// Nodes whose health port must answer before this node's process starts (compose's
    /// `depends_on: NAME: {condition: service_healthy}`).
    pub wait_healthy: Vec<String>,
    /// Host files or folders copied into the node's view of the image (compose's bind
    /// mounts): they become part of the run's initrd, so the run is a function of them.
    pub files: Vec<FileCopy>,
    /// Folders made in the node's view of the image (compose's volumes: a folder of the
    /// node's own disk, kept as its other writes are).
    pub dirs: Vec<String>,
    /// When the launcher starts the process again after it exits (compose's `restart`).
    pub restart: Restart,
}

/// Compose's restart policy, kept by the node's launcher: after the process exits it is
/// started again (after a delay of 100 ms, doubled at each restart up to 60 s, back to
/// 100 ms once a run lasted 10 virtual seconds, as docker does) while the policy says so;
/// the node ends when it does not.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Restart {
    /// `no`: the node ends when its process exits.
    #[default]
    No,
    /// `always` (and `unless-stopped`: nothing stops a world's service by hand): started
    /// again whatever its exit status, so the node never ends by itself.
    Always,
    /// `on-failure[:N]`: started again after a non-zero exit, at most N times (None: no
    /// limit).
    OnFailure(Option<u32>),
}

impl std::str::FromStr for Restart {
    type Err = String;

    /// Compose's spelling: `no`, `always`, `unless-stopped`, `on-failure`, `on-failure:N`.
    fn from_str(s: &str) -> std::result::Result<Restart, String> {
        match s {
            "no" => Ok(Restart::No),
            "always" | "unless-stopped" => Ok(Restart::Always),
            "on-failure" => Ok(Restart::OnFailure(None)),
            _ => match s.strip_prefix("on-failure:").map(str::parse::<u32>) {
                Some(Ok(n)) if n > 0 => Ok(Restart::OnFailure(Some(n))),
                _ => Err(format!(
                    "{s:?}: no, always, unless-stopped, on-failure or on-failure:N (N at least 1)"
                )),
            },
        }
    }
}

impl Restart {
    /// The launcher's `/wio/restart` line (None for `no`: no file, the launcher as before).
    fn line(self) -> Option<String> {
        match self {
            Restart::No => None,
            Restart::Always => Some("always 0\n".into()),
            Restart::OnFailure(max) => Some(format!("on-failure {}\n", max.unwrap_or(0))),
        }
    }
}

/// A host file or folder copied into a node at `target`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FileCopy {
    /// On the host (resolved against the scenario's folder).
    pub source: std::path::PathBuf,
    /// Where in the image (absolute).
    pub target: String,
    /// Mounted read-only over itself after the copy.
    pub read_only: bool,
}

/// The most bytes of host files one node may get (they travel in its initrd, in guest
/// memory): configuration and small data, not datasets.
pub const MAX_FILE_BYTES: u64 = 64 << 20;

/// A health check: the program and arguments run in the image (as its user, in its
/// working directory, with its environment), and how long to wait between tries.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Health {
    /// The program and its arguments (compose's `CMD-SHELL x` is `/bin/sh -c x`).
    pub test: Vec<String>,
    /// Virtual milliseconds between tries.
    pub interval_ms: u64,
}

/// The TCP port on which a node with a health check answers "healthy" once it is, for
/// the nodes that wait on it.
pub const HEALTH_PORT: u16 = 19999;

/// The process an image machine starts, resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Process {
    /// The program and its arguments.
    pub argv: Vec<String>,
    /// Its whole environment (before `HOME` and `PATH` defaults, which wio-exec adds).
    pub env: Vec<String>,
    /// Its user ("" = root).
    pub user: String,
    /// Its working directory ("" = `/`).
    pub working_dir: String,
    /// Its health check, with the same user, directory and environment, and its interval.
    pub health: Option<(Vec<String>, u64)>,
    /// The nodes it waits for (their health ports) before it starts.
    pub wait_healthy: Vec<String>,
    /// Host files and folders to copy in.
    pub files: Vec<FileCopy>,
    /// Folders to make.
    pub dirs: Vec<String>,
    /// Its restart policy.
    pub restart: Restart,
}

/// The process by docker's rule: the entrypoint (the image's, or the override), then the
/// command (the override, else the image's cmd unless the entrypoint was overridden);
/// the image's environment with the overrides' entries, and where the Antithesis SDKs
/// write.
pub fn process(record: &Record, o: &Overrides) -> Result<Process> {
    let c = &record.config;
    let entrypoint = o.entrypoint.clone().unwrap_or_else(|| c.entrypoint.clone());
    let command = match (&o.command, &o.entrypoint) {
        (Some(cmd), _) => cmd.clone(),
        (None, Some(_)) => Vec::new(),
        (None, None) => c.cmd.clone(),
    };
    let argv: Vec<String> = entrypoint.into_iter().chain(command).collect();
    if argv.is_empty() {
        return Err(ImageError::NoProgram {
            name: record.name(),
        });
    }
    let name_of = |e: &str| e.split('=').next().unwrap_or("").to_string();
    let mut env = c.env.clone();
    for e in &o.env {
        let n = name_of(e);
        env.retain(|x| name_of(x) != n);
        env.push(e.clone());
    }
    for (k, v) in [
        ("ANTITHESIS_OUTPUT_DIR", "/tmp/antithesis"),
        ("ANTITHESIS_SDK_LOCAL_OUTPUT", SDK_LOCAL_OUTPUT),
        ("ANTITHESIS_STOP_FAULTS", STOP_FAULTS),
    ] {
        if !env.iter().any(|e| name_of(e) == k) {
            env.push(format!("{k}={v}"));
        }
    }
    Ok(Process {
        argv,
        env,
        user: o.user.clone().unwrap_or_else(|| c.user.clone()),
        working_dir: o
            .working_dir
            .clone()
            .unwrap_or_else(|| c.working_dir.clone()),
        health: o
            .healthcheck
            .as_ref()
            .map(|h| (h.test.clone(), h.interval_ms)),
        wait_healthy: o.wait_healthy.clone(),
        files: o.files.clone(),
        dirs: o.dirs.clone(),
        restart: o.restart,
    })
}

/// `run.cfg`: NUL-separated fields, as `images/image/wio-exec.c` reads them.
pub fn run_cfg(p: &Process) -> Result<Vec<u8>> {
    exec_cfg(p, &p.argv)
}

/// wio-exec's config for `argv` with the process's user, directory and environment.
fn exec_cfg(p: &Process, argv: &[String]) -> Result<Vec<u8>> {
    let mut fields: Vec<&str> = vec![CFG_MAGIC, &p.user, &p.working_dir];
    let nenv = p.env.len().to_string();
    let nargs = argv.len().to_string();
    fields.push(&nenv);
    fields.extend(p.env.iter().map(String::as_str));
    fields.push(&nargs);
    fields.extend(argv.iter().map(String::as_str));
    if let Some(f) = fields.iter().find(|f| f.contains('\0')) {
        return Err(ImageError::Nul {
            field: f.to_string(),
        });
    }
    let mut out = Vec::new();
    for f in fields {
        out.extend_from_slice(f.as_bytes());
        out.push(0);
    }
    Ok(out)
}

/// The files a process gets: their contents (in order: `wio/files/N`) and the list the
/// launcher follows, one line per step: `mkdir TARGET`, `file N MODE TARGET`, then
/// `ro TARGET` (after every copy).
struct Copies {
    /// Each file's mode and bytes.
    files: Vec<(u32, Vec<u8>)>,
    list: String,
}

fn copies(p: &Process) -> Result<Copies> {
    let mut c = Copies {
        files: Vec::new(),
        list: String::new(),
    };
    let mut total = 0u64;
    let bad = |target: &str, why: String| ImageError::Files {
        target: target.to_string(),
        why,
    };
    let check_target = |t: &str| {
        if !t.starts_with('/')
            || t.contains('\n')
            || t.contains(' ')
            || t.split('/').any(|x| x == "..")
        {
            return Err(bad(
                t,
                "a target is an absolute path in the image, without .., spaces or newlines".into(),
            ));
        }
        Ok(())
    };
    for d in &p.dirs {
        check_target(d)?;
        c.list.push_str(&format!("mkdir {d}\n"));
    }
    let mut read_only = Vec::new();
    for f in &p.files {
        check_target(&f.target)?;
        // A folder is copied file by file, in name order (the initrd is the same every time).
        let mut stack = vec![(f.source.clone(), f.target.trim_end_matches('/').to_string())];
        while let Some((src, target)) = stack.pop() {
            check_target(&target)?;
            let meta = std::fs::metadata(&src)
                .map_err(|e| bad(&target, format!("{}: {e}", src.display())))?;
            if meta.is_dir() {
                c.list.push_str(&format!("mkdir {target}\n"));
                let mut entries: Vec<_> = std::fs::read_dir(&src)
                    .map_err(|e| bad(&target, format!("{}: {e}", src.display())))?
                    .filter_map(|e| e.ok())
                    .map(|e| e.file_name())
                    .collect();
                entries.sort();
                for e in entries.into_iter().rev() {
                    let name = e.to_string_lossy().into_owned();
                    stack.push((src.join(&e), format!("{target}/{name}")));
                }
            } else if meta.is_file() {
                let bytes = std::fs::read(&src)
                    .map_err(|e| bad(&target, format!("{}: {e}", src.display())))?;
                total += bytes.len() as u64;
                if total > MAX_FILE_BYTES {
                    return Err(bad(&target, format!("more than {} MiB of host files for one node; put large data in the image", MAX_FILE_BYTES >> 20)));
                }
                use std::os::unix::fs::PermissionsExt;
                let mode = meta.permissions().mode() & 0o777;
                c.list
                    .push_str(&format!("file {} {mode:o} {target}\n", c.files.len()));
                c.files.push((mode, bytes));
            } else {
                return Err(bad(
                    &target,
                    format!("{} is neither a file nor a folder", src.display()),
                ));
            }
        }
        if f.read_only {
            read_only.push(f.target.trim_end_matches('/').to_string());
        }
    }
    for t in read_only {
        c.list.push_str(&format!("ro {t}\n"));
    }
    Ok(c)
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
    process: &Process,
) -> Result<PathBuf> {
    let read = |p: &Path| {
        std::fs::read(p).map_err(|source| ImageError::Cache {
            path: p.to_path_buf(),
            source,
        })
    };
    let mut bytes = read(initramfs)?;
    bytes.extend(read(runtime)?);
    let run = run_cfg(process)?;
    let mut files: Vec<(&str, u32, Vec<u8>)> = vec![("wio/run.cfg", 0o644, run)];
    if let Some((test, interval_ms)) = &process.health {
        if test.is_empty() {
            return Err(ImageError::NoProgram {
                name: "the health check".into(),
            });
        }
        files.push(("wio/health.cfg", 0o644, exec_cfg(process, test)?));
        // busybox sleep takes fractions of a second.
        let secs = format!("{}.{:03}\n", interval_ms / 1000, interval_ms % 1000);
        files.push(("wio/health.interval", 0o644, secs.into_bytes()));
    }
    if !process.wait_healthy.is_empty() {
        let mut list = process.wait_healthy.join("\n");
        list.push('\n');
        files.push(("wio/wait", 0o644, list.into_bytes()));
    }
    if let Some(line) = process.restart.line() {
        files.push(("wio/restart", 0o644, line.into_bytes()));
    }
    let copies = copies(process)?;
    let has_files = !copies.files.is_empty();
    let names: Vec<String> = (0..copies.files.len())
        .map(|i| format!("wio/files/{i}"))
        .collect();
    for (name, (mode, bytes)) in names.iter().zip(copies.files) {
        files.push((name, mode, bytes));
    }
    if !copies.list.is_empty() {
        files.push(("wio/files.list", 0o644, copies.list.into_bytes()));
    }
    let refs: Vec<(&str, u32, &[u8])> = files
        .iter()
        .map(|(n, m, b)| (*n, *m, b.as_slice()))
        .collect();
    let dirs: &[&str] = if has_files {
        &["wio", "wio/files"]
    } else {
        &["wio"]
    };
    let segment = newc(dirs, &refs);
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

    fn argv(r: &Record, o: &Overrides) -> Result<Vec<String>> {
        process(r, o).map(|p| p.argv)
    }

    #[test]
    fn the_process_follows_docker_run() {
        let none = Overrides::default();
        let args = |a: &[&str]| Overrides {
            command: Some(strings(a)),
            ..Overrides::default()
        };
        let both = record(&["/bin/app", "-v"], &["serve"]);
        assert_eq!(
            argv(&both, &none).unwrap(),
            strings(&["/bin/app", "-v", "serve"])
        );
        assert_eq!(
            argv(&both, &args(&["check"])).unwrap(),
            strings(&["/bin/app", "-v", "check"])
        );
        // A new entrypoint drops the image's cmd.
        let ep = Overrides {
            entrypoint: Some(strings(&["/bin/other"])),
            ..Overrides::default()
        };
        assert_eq!(argv(&both, &ep).unwrap(), strings(&["/bin/other"]));
        let cmd_only = record(&[], &["redis-server"]);
        assert_eq!(argv(&cmd_only, &none).unwrap(), strings(&["redis-server"]));
        assert_eq!(argv(&cmd_only, &args(&["sh"])).unwrap(), strings(&["sh"]));
        let nothing = record(&[], &[]);
        assert!(matches!(
            argv(&nothing, &none),
            Err(ImageError::NoProgram { .. })
        ));
    }

    #[test]
    fn the_run_config_keeps_the_images_env_and_adds_the_sdk_output() {
        let r = record(&["/bin/app"], &[]);
        let o = Overrides {
            env: strings(&["A=2", "B=3"]),
            user: Some("0".into()),
            ..Overrides::default()
        };
        let cfg = run_cfg(&process(&r, &o).unwrap()).unwrap();
        let fields: Vec<&[u8]> = cfg.split(|&b| b == 0).collect();
        let want: Vec<&[u8]> = vec![
            b"wio-image-run 1",
            b"0",
            b"/w",
            b"5",
            b"ANTITHESIS_OUTPUT_DIR=/mine",
            b"A=2",
            b"B=3",
            b"ANTITHESIS_SDK_LOCAL_OUTPUT=/dev/virtio-ports/wio.sdk",
            b"ANTITHESIS_STOP_FAULTS=/usr/lib/wio-stop-faults",
            b"1",
            b"/bin/app",
            b"",
        ];
        assert_eq!(fields, want);
    }

    #[test]
    fn restart_policies_are_composes() {
        for (text, want) in [
            ("no", Restart::No),
            ("always", Restart::Always),
            ("unless-stopped", Restart::Always),
            ("on-failure", Restart::OnFailure(None)),
            ("on-failure:3", Restart::OnFailure(Some(3))),
        ] {
            assert_eq!(text.parse::<Restart>(), Ok(want), "{text}");
        }
        for bad in [
            "",
            "sometimes",
            "on-failure:0",
            "on-failure:x",
            "on-failure:",
        ] {
            assert!(bad.parse::<Restart>().is_err(), "{bad}");
        }
        assert_eq!(Restart::No.line(), None);
        assert_eq!(
            Restart::OnFailure(None).line().as_deref(),
            Some("on-failure 0\n")
        );
        assert_eq!(
            Restart::OnFailure(Some(2)).line().as_deref(),
            Some("on-failure 2\n")
        );
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
