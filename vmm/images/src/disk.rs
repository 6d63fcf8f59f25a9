//! Writing the applied tree as an ext4 root disk, byte for byte the same on every import of
//! the same image with the same e2fsprogs.
//!
//! Written with e2fsprogs, the tools that make every ext4 file system Linux mounts (and that
//! `images/rootfs.sh` already uses): writing ext4 ourselves would mean owning a file-system
//! writer's bugs. The steps:
//! 1. the tree is laid out in a staging folder (directories, files moved from the scratch
//!    folder, hard links, symlinks, named pipes), readable by whoever imports it, so no
//!    root is needed;
//! 2. `mke2fs -d` copies it into a new ext4 file with fixed features (our own
//!    `mke2fs.conf`, not the host's), a UUID and hash seed derived from the image's ID,
//!    and a fixed creation time (`E2FSPROGS_FAKE_TIME`);
//! 3. one `debugfs` script sets what the staging folder could not hold: every inode's
//!    owner, group, full mode (setuid bits included), times, extended attributes, and the
//!    device nodes;
//! 4. `e2fsck -fn` checks the result; a disk it finds fault with is never kept.

use crate::error::{ImageError, Result};
use crate::layers::{Kind, Meta, Tree};
use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The creation time written into the disk's superblock and journal (2025-01-01, as the
/// other images): the same image gives the same bytes on every host and day.
const FAKE_TIME: &str = "1735689600";

/// Free space left on an imported disk for the service's own writes (the disk is a copy-
/// on-write base: writes never reach this file).
pub const DEFAULT_FREE_MIB: u64 = 256;

/// The file-system features, fixed here so the host's `/etc/mke2fs.conf` cannot change the
/// disk: bookworm's ext4 defaults, which wio's kernels mount.
const MKE2FS_CONF: &str = "[defaults]
\tbase_features = sparse_super,large_file,filetype,resize_inode,dir_index,ext_attr
\tdefault_mntopts = acl,user_xattr
\tenable_periodic_fsck = 0
\tblocksize = 4096
\tinode_size = 256
\tinode_ratio = 16384
[fs_types]
\text4 = {
\t\tfeatures = has_journal,extent,huge_file,flex_bg,metadata_csum,64bit,dir_nlink,extra_isize
\t}
";

/// What the written disk holds.
pub struct Written {
    /// Paths on the disk (the root included).
    pub entries: u64,
    /// Bytes of regular files.
    pub content_bytes: u64,
    /// The disk's size.
    pub disk_bytes: u64,
}

/// The smallest disk, in MiB, that holds the tree (its files, directories and inodes, and
/// ext4's journal and metadata), without free space.
pub fn needed_mib(tree: &Tree) -> u64 {
    let (bytes, dirs, entries) = tree.totals();
    let blocks = tree
        .inodes
        .iter()
        .map(|i| i.size.div_ceil(4096))
        .sum::<u64>()
        + dirs
        + entries / 64;
    let data = blocks.max(bytes / 4096) * 4096;
    (data + data / 10 + entries * 256).div_ceil(1 << 20) + 64
}

/// Writes the tree into `disk` (a new file of `size_mib` MiB). `staging` is an empty
/// folder to lay the tree out in; `id_hex` (the image ID) seeds the UUID.
pub fn write(
    tree: &Tree,
    staging: &Path,
    disk: &Path,
    size_mib: u64,
    id_hex: &str,
) -> Result<Written> {
    let scratch_err = |path: &Path, source: std::io::Error| ImageError::Cache {
        path: path.to_path_buf(),
        source,
    };
    let root = staging.join("root");
    std::fs::create_dir(&root).map_err(|e| scratch_err(&root, e))?;
    let mut script: Vec<u8> = Vec::new();
    let mut values = 0usize;
    let mut first_link: BTreeMap<usize, PathBuf> = BTreeMap::new();
    for (path, node) in &tree.nodes {
        let on_host = root.join(OsStr::from_bytes(path));
        let made = match &node.kind {
            Kind::Dir if path.is_empty() => Ok(()),
            Kind::Dir => std::fs::create_dir(&on_host),
            Kind::File(i) => match first_link.get(i) {
                Some(first) => std::fs::hard_link(first, &on_host),
                None => {
                    first_link.insert(*i, on_host.clone());
                    std::fs::rename(&tree.inodes[*i].content, &on_host)
                }
            },
            Kind::Symlink(target) => {
                std::os::unix::fs::symlink(OsStr::from_bytes(target), &on_host)
            }
            Kind::Fifo => {
                nix::unistd::mkfifo(&on_host, nix::sys::stat::Mode::from_bits_truncate(0o600))
                    .map_err(std::io::Error::from)
            }
            Kind::Char(..) | Kind::Block(..) => Ok(()),
        };
        made.map_err(|e| scratch_err(&on_host, e))?;
        let quoted = quote(path);
        let type_bits = match &node.kind {
            Kind::Dir => 0o040000,
            Kind::File(_) => 0o100000,
            Kind::Symlink(_) => 0o120000,
            Kind::Char(major, minor) | Kind::Block(major, minor) => {
                let c = if matches!(node.kind, Kind::Char(..)) {
                    'c'
                } else {
                    'b'
                };
                // debugfs's mknod takes a name in its current directory (given a path, it
                // makes an entry called that in the current one).
                let (dir, name) = match path.iter().rposition(|&b| b == b'/') {
                    Some(i) => (&path[..i], &path[i + 1..]),
                    None => (&path[..0], &path[..]),
                };
                script.extend_from_slice(b"cd ");
                script.extend_from_slice(&quote(dir));
                script.extend_from_slice(b"\nmknod ");
                script.extend_from_slice(&quote_name(name));
                script.extend_from_slice(format!(" {c} {major} {minor}\ncd /\n").as_bytes());
                if matches!(node.kind, Kind::Char(..)) {
                    0o020000
                } else {
                    0o060000
                }
            }
            Kind::Fifo => 0o010000,
        };
        let meta: &Meta = &node.meta;
        let mode = if matches!(node.kind, Kind::Symlink(_)) {
            0o777
        } else {
            meta.mode
        };
        let time = meta.mtime.clamp(0, i64::from(u32::MAX));
        let mut line = |fmt: String| {
            script.extend_from_slice(b"sif ");
            script.extend_from_slice(&quoted);
            script.extend_from_slice(fmt.as_bytes());
            script.push(b'\n');
        };
        line(format!(" mode 0{:o}", type_bits | mode));
        line(format!(" uid {}", meta.uid));
        line(format!(" gid {}", meta.gid));
        for field in ["atime", "mtime", "ctime", "crtime"] {
            line(format!(" {field} @{time}"));
        }
        for (name, value) in &meta.xattrs {
            let file = staging.join(format!("xattr-{values}"));
            values += 1;
            std::fs::write(&file, value).map_err(|e| scratch_err(&file, e))?;
            script.extend_from_slice(format!("ea_set -f {} ", file.display()).as_bytes());
            script.extend_from_slice(&quoted);
            script.extend_from_slice(format!(" {name}\n").as_bytes());
        }
    }
    let conf = staging.join("mke2fs.conf");
    std::fs::write(&conf, MKE2FS_CONF).map_err(|e| scratch_err(&conf, e))?;
    let uuid = uuid_of(id_hex);
    let (content_bytes, _, entries) = tree.totals();
    let inodes = (entries + 1024).to_string();
    run(
        "mke2fs",
        Command::new("mke2fs")
            .env("MKE2FS_CONFIG", &conf)
            .env("E2FSPROGS_FAKE_TIME", FAKE_TIME)
            .args([
                "-q",
                "-F",
                "-t",
                "ext4",
                "-L",
                "wio-image",
                "-U",
                &uuid,
                "-N",
                &inodes,
            ])
            .arg("-E")
            .arg(format!("hash_seed={uuid},root_owner=0:0"))
            .arg("-d")
            .arg(&root)
            .arg(disk)
            .arg(format!("{size_mib}M")),
    )?;
    let cmds = staging.join("debugfs.cmds");
    std::fs::write(&cmds, &script).map_err(|e| scratch_err(&cmds, e))?;
    let out = run(
        "debugfs",
        Command::new("debugfs")
            .env("E2FSPROGS_FAKE_TIME", FAKE_TIME)
            .arg("-w")
            .arg("-f")
            .arg(&cmds)
            .arg(disk),
    )?;
    // debugfs reports a failed command on stderr and still exits 0: anything but its
    // banner is a failure.
    if let Some(line) = out
        .lines()
        .find(|l| !l.trim().is_empty() && !l.starts_with("debugfs "))
    {
        return Err(ImageError::Tool {
            tool: "debugfs",
            why: format!("could not set the files' owners, modes and times: {line}"),
        });
    }
    run(
        "e2fsck",
        Command::new("e2fsck").args(["-f", "-n"]).arg(disk),
    )?;
    let disk_bytes = std::fs::metadata(disk)
        .map_err(|e| scratch_err(disk, e))?
        .len();
    Ok(Written {
        entries,
        content_bytes,
        disk_bytes,
    })
}

/// Runs a tool; its stderr when it succeeds, a [`ImageError::Tool`] when it does not.
fn run(tool: &'static str, cmd: &mut Command) -> Result<String> {
    let out = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| ImageError::Tool {
            tool,
            why: if e.kind() == std::io::ErrorKind::NotFound {
                "is not installed: install e2fsprogs (apt-get install e2fsprogs)".into()
            } else {
                format!("could not be started: {e}")
            },
        })?;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if !out.status.success() {
        let stdout = String::from_utf8_lossy(&out.stdout);
        let tail: Vec<&str> = stderr
            .lines()
            .chain(stdout.lines())
            .filter(|l| !l.trim().is_empty())
            .take(3)
            .collect();
        return Err(ImageError::Tool {
            tool,
            why: format!("failed ({}): {}", out.status, tail.join(" / ")),
        });
    }
    Ok(stderr)
}

/// A path as a debugfs argument: absolute, in double quotes, a quote doubled (the parser
/// of debugfs's command language; newlines were refused when the layer was read).
fn quote(path: &[u8]) -> Vec<u8> {
    let mut absolute = b"/".to_vec();
    absolute.extend_from_slice(path);
    quote_name(&absolute)
}

/// A name (or any string) as a debugfs argument.
fn quote_name(name: &[u8]) -> Vec<u8> {
    let mut q = b"\"".to_vec();
    for &b in name {
        if b == b'"' {
            q.push(b'"');
        }
        q.push(b);
    }
    q.push(b'"');
    q
}

/// The image ID's first 16 bytes as a UUID (the disk's UUID and directory hash seed).
fn uuid_of(id_hex: &str) -> String {
    let h = |a: usize, b: usize| id_hex.get(a..b).unwrap_or("0");
    format!(
        "{}-{}-{}-{}-{}",
        h(0, 8),
        h(8, 12),
        h(12, 16),
        h(16, 20),
        h(20, 32)
    )
}

/// The host's e2fsprogs version (`mke2fs -V`): part of the cache key, since another
/// version may lay out the same files differently.
pub fn e2fsprogs_version() -> Result<String> {
    let stderr = run("mke2fs", Command::new("mke2fs").arg("-V"))?;
    stderr
        .lines()
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .map(str::to_string)
        .ok_or_else(|| ImageError::Tool {
            tool: "mke2fs",
            why: format!("-V printed no version ({stderr:?})"),
        })
}
