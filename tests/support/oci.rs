//! OCI image layouts and archives built byte by byte, for the container image tests
//! (`tests/e2e/images.rs`, `tests/e2e/image_runs.rs`): layers from entries, blobs,
//! manifests, multi-platform indexes, archives; and running `wio image import`.

use crate::{stderr, wio_bin};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::Output;

/// One entry of a test layer.
pub enum E<'a> {
    Dir(&'a str, u32),
    File(&'a str, &'a [u8], u32, u64),
    Symlink(&'a str, &'a str),
    Hardlink(&'a str, &'a str),
    Char(&'a str, u32, u32),
    Fifo(&'a str),
    /// A file with an extended attribute (name, value).
    Xattr(&'a str, &'a [u8], &'a str, &'a [u8]),
}

pub fn sha(bytes: &[u8]) -> String {
    format!("sha256:{:x}", Sha256::digest(bytes))
}

/// A layer: its uncompressed tar and its diff_id.
pub fn layer(entries: &[E]) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    for e in entries {
        let mut h = tar::Header::new_ustar();
        h.set_mtime(1_700_000_000);
        h.set_uid(0);
        h.set_gid(0);
        h.set_mode(0o755);
        let (path, data): (&str, &[u8]) = match e {
            E::Dir(p, mode) => {
                h.set_entry_type(tar::EntryType::Directory);
                h.set_mode(*mode);
                (p, b"")
            }
            E::File(p, data, mode, owner) => {
                h.set_entry_type(tar::EntryType::Regular);
                h.set_mode(*mode);
                h.set_uid(*owner);
                h.set_gid(*owner);
                (p, data)
            }
            E::Symlink(p, target) => {
                h.set_entry_type(tar::EntryType::Symlink);
                h.set_link_name(target).expect("link name");
                (p, b"")
            }
            E::Hardlink(p, target) => {
                h.set_entry_type(tar::EntryType::Link);
                h.set_link_name(target).expect("link name");
                (p, b"")
            }
            E::Char(p, major, minor) => {
                h.set_entry_type(tar::EntryType::Char);
                h.set_mode(0o666);
                h.set_device_major(*major).expect("major");
                h.set_device_minor(*minor).expect("minor");
                (p, b"")
            }
            E::Fifo(p) => {
                h.set_entry_type(tar::EntryType::Fifo);
                h.set_mode(0o600);
                (p, b"")
            }
            E::Xattr(p, data, name, value) => {
                let key = format!("SCHILY.xattr.{name}");
                b.append_pax_extensions([(key.as_str(), *value)])
                    .expect("pax");
                h.set_entry_type(tar::EntryType::Regular);
                (p, data)
            }
        };
        h.set_size(data.len() as u64);
        b.append_data(&mut h, path, data).expect("append");
    }
    b.into_inner().expect("tar")
}

pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut g = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    g.write_all(bytes).expect("gzip");
    g.finish().expect("gzip")
}

/// The media type of the tests' layers (gzip'd tar).
pub const GZIP: &str = "application/vnd.oci.image.layer.v1.tar+gzip";

/// An OCI layout being written.
pub struct Layout {
    /// The layout's folder.
    pub dir: PathBuf,
}

impl Layout {
    /// A new layout in `dir` (made).
    pub fn new(dir: &Path) -> Self {
        std::fs::create_dir_all(dir.join("blobs/sha256")).expect("layout dir");
        std::fs::write(dir.join("oci-layout"), r#"{"imageLayoutVersion":"1.0.0"}"#)
            .expect("oci-layout");
        Self {
            dir: dir.to_path_buf(),
        }
    }

    /// Stores a blob; its digest.
    pub fn blob(&self, bytes: &[u8]) -> String {
        let d = sha(bytes);
        std::fs::write(self.blob_path(&d), bytes).expect("blob");
        d
    }

    /// Where a blob lives.
    pub fn blob_path(&self, digest: &str) -> PathBuf {
        self.dir
            .join("blobs/sha256")
            .join(digest.trim_start_matches("sha256:"))
    }

    /// A manifest for `arch` with these layers (gzip'd, or with another media type) and
    /// config: its descriptor.
    pub fn image(&self, arch: &str, layers: &[Vec<u8>], config: Value, media: &str) -> Value {
        let mut diff_ids = Vec::new();
        let mut descs = Vec::new();
        for l in layers {
            diff_ids.push(sha(l));
            let stored = if media.ends_with("+gzip") {
                gzip(l)
            } else if media.ends_with("+zstd") {
                // Two frames and a skippable one between, as zstd:chunked writes them.
                let (a, b) = l.split_at(l.len() / 2);
                let level = ruzstd::encoding::CompressionLevel::Fastest;
                let mut z = ruzstd::encoding::compress_to_vec(a, level);
                z.extend_from_slice(&[0x50, 0x2A, 0x4D, 0x18, 3, 0, 0, 0, 9, 9, 9]);
                z.extend(ruzstd::encoding::compress_to_vec(b, level));
                z
            } else {
                l.clone()
            };
            descs.push(
                json!({"mediaType": media, "digest": self.blob(&stored), "size": stored.len()}),
            );
        }
        let config = json!({
            "architecture": arch, "os": "linux", "config": config,
            "rootfs": {"type": "layers", "diff_ids": diff_ids},
        });
        let cbytes = serde_json::to_vec(&config).expect("config");
        let manifest = json!({
            "schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": self.blob(&cbytes), "size": cbytes.len()},
            "layers": descs,
        });
        let mbytes = serde_json::to_vec(&manifest).expect("manifest");
        json!({
            "mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": self.blob(&mbytes),
            "size": mbytes.len(), "platform": {"architecture": arch, "os": "linux"},
        })
    }

    /// An image of one layer holding one file (mode 0644, root's) and an empty config.
    pub fn one_file_image(&self, arch: &str, path: &str, content: &[u8]) -> Value {
        self.image(
            arch,
            &[layer(&[E::File(path, content, 0o644, 0)])],
            json!({}),
            GZIP,
        )
    }

    /// index.json: one top-level image `name` whose index lists these manifests.
    pub fn index(&self, name: &str, manifests: Vec<Value>) {
        let inner = json!({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json", "manifests": manifests});
        let ibytes = serde_json::to_vec(&inner).expect("index");
        let top = json!({"schemaVersion": 2, "manifests": [{
            "mediaType": "application/vnd.oci.image.index.v1+json", "digest": self.blob(&ibytes), "size": ibytes.len(),
            "annotations": {"org.opencontainers.image.ref.name": name},
        }]});
        std::fs::write(
            self.dir.join("index.json"),
            serde_json::to_vec(&top).expect("json"),
        )
        .expect("index.json");
    }

    /// The layout as an OCI archive (a tar of the directory).
    pub fn archive(&self, out: &Path) {
        let mut b = tar::Builder::new(std::fs::File::create(out).expect("archive"));
        b.append_dir_all(".", &self.dir).expect("tar the layout");
        b.finish().expect("archive");
    }
}

/// Runs wio with `WIO_CACHE=cache`.
pub fn wio_in(cache: &Path, args: &[&str]) -> Output {
    std::process::Command::new(wio_bin())
        .args(args)
        .env("WIO_CACHE", cache)
        .output()
        .expect("run wio")
}

/// `wio image import PATH --json` into `cache`, which must work: its output.
pub fn import_json(cache: &Path, path: &Path) -> Value {
    let o = wio_in(
        cache,
        &["image", "import", path.to_str().expect("utf-8"), "--json"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_slice(&o.stdout).expect("--json output")
}

/// `debugfs -R CMD DISK`'s output.
pub fn debugfs(disk: &Path, cmd: &str) -> String {
    let o = std::process::Command::new("debugfs")
        .args(["-R", cmd])
        .arg(disk)
        .output()
        .expect("debugfs (e2fsprogs)");
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A plain tar file of these members (regular files, mode 0644).
pub fn tar_file(out: &Path, members: &[(&str, Vec<u8>)]) {
    let mut b = tar::Builder::new(std::fs::File::create(out).expect("archive"));
    for (name, data) in members {
        let mut h = tar::Header::new_ustar();
        h.set_size(data.len() as u64);
        h.set_mode(0o644);
        b.append_data(&mut h, name, &data[..]).expect("append");
    }
    b.finish().expect("archive");
}

/// `wio sim SCENARIO --seed SEED --summary-json SUMMARY` with `WIO_CACHE=cache`: its
/// output and summary.
pub fn sim_summary(cache: &Path, scenario: &Path, seed: &str, summary: &Path) -> (Output, Value) {
    let o = wio_in(
        cache,
        &[
            "sim",
            scenario.to_str().expect("utf-8"),
            "--seed",
            seed,
            "--summary-json",
            summary.to_str().expect("utf-8"),
        ],
    );
    let s: Value = serde_json::from_slice(&std::fs::read(summary).expect("summary")).expect("json");
    (o, s)
}

/// The riscv64 busybox of wio's own root disk (a static binary any image can carry).
pub fn riscv_busybox(dir: &Path, test: &str) -> Option<Vec<u8>> {
    let rootfs = crate::require_riscv_artifact(
        test,
        "RISCV64_ROOTFS",
        wio_require::Capability::RiscvGuests,
    )?;
    crate::require_riscv_artifact(
        test,
        "RISCV64_IMAGE_RUNTIME",
        wio_require::Capability::RiscvGuests,
    )?;
    let out = dir.join("busybox");
    let o = std::process::Command::new("debugfs")
        .arg("-R")
        .arg(format!("dump /bin/busybox {}", out.display()))
        .arg(&rootfs)
        .output()
        .expect("debugfs (e2fsprogs)");
    assert!(
        o.status.success() && out.is_file(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    Some(std::fs::read(&out).expect("busybox"))
}

/// A cache of the test's own in `dir/cache`, beside the built guests (their manifest
/// copied in): imported images land there, not in the developer's cache.
pub fn private_cache(dir: &Path) -> PathBuf {
    let cache = dir.join("cache");
    std::fs::create_dir_all(&cache).expect("cache");
    std::fs::copy(
        crate::cache_dir().join("riscv64-guests.env"),
        cache.join("riscv64-guests.env"),
    )
    .expect("manifest");
    cache
}

/// `wio sim SCENARIO --seed 1 --quiet --snapshot-at setup-complete --snapshot-out SNAP`
/// (plus `extra`) with `WIO_CACHE=cache`; the world may end failing, the snapshot must be
/// written.
pub fn snapshot_at_setup(cache: &Path, scenario: &Path, snap: &Path, extra: &[&str]) {
    let mut args = vec![
        "sim",
        scenario.to_str().expect("utf-8"),
        "--seed",
        "1",
        "--quiet",
        "--snapshot-at",
        "setup-complete",
        "--snapshot-out",
        snap.to_str().expect("utf-8"),
    ];
    args.extend_from_slice(extra);
    let o = wio_in(cache, &args);
    assert!(snap.is_file(), "no snapshot: {}", stderr(&o));
}

/// `wio explore --from SNAP --seeds SEEDS --jobs 2 --report REPORT`: its output and report.
pub fn explore(cache: &Path, snap: &Path, seeds: &str, report: &Path) -> (Output, Value) {
    let o = wio_in(
        cache,
        &[
            "explore",
            "--from",
            snap.to_str().expect("utf-8"),
            "--seeds",
            seeds,
            "--jobs",
            "2",
            "--report",
            report.to_str().expect("utf-8"),
        ],
    );
    let r = serde_json::from_slice(&std::fs::read(report).expect("report")).expect("json");
    (o, r)
}

/// The first failing branch of an exploration report.
pub fn first_failing(report: &Value) -> Value {
    report["results"]
        .as_array()
        .expect("results")
        .iter()
        .find(|b| b["failed"] == true)
        .expect("a failing seed")
        .clone()
}

/// `wio sim --from SNAP --seed SEED --quiet --summary-json SUMMARY`: a branch run again,
/// its output and summary.
pub fn branch_again(cache: &Path, snap: &Path, seed: &Value, summary: &Path) -> (Output, Value) {
    let seed = seed.as_u64().expect("seed").to_string();
    let o = wio_in(
        cache,
        &[
            "sim",
            "--from",
            snap.to_str().expect("utf-8"),
            "--seed",
            &seed,
            "--quiet",
            "--summary-json",
            summary.to_str().expect("utf-8"),
        ],
    );
    let s = serde_json::from_slice(&std::fs::read(summary).expect("summary")).expect("json");
    (o, s)
}

/// The image archive the guest build published as `key` (None: skipped without guests),
/// imported into a cache of the test's own in `dir` ([`private_cache`]), where it must
/// be named `reference`: that cache.
pub fn import_built(test: &str, key: &str, dir: &Path, reference: &str) -> Option<PathBuf> {
    let archive = crate::require_riscv_artifact(test, key, wio_require::Capability::RiscvGuests)?;
    let cache = private_cache(dir);
    let v = import_json(&cache, &archive);
    assert_eq!(v["record"]["references"], json!([reference]));
    Some(cache)
}

/// [`explore`], which must find failing seeds (exit 1) that break the `always` promise
/// `message`: its output and report.
pub fn explore_finds(
    cache: &Path,
    snap: &Path,
    seeds: &str,
    report: &Path,
    message: &str,
) -> (String, Value) {
    let (o, r) = explore(cache, snap, seeds, report);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(
        o.status.code(),
        Some(1),
        "failing seeds: {out}{}",
        stderr(&o)
    );
    assert!(
        out.contains("FAILED   Always") && out.contains(&format!("\"{message}\"")),
        "{out}"
    );
    (out, r)
}

/// `bytes` as one zstd frame.
pub fn zstd(bytes: &[u8]) -> Vec<u8> {
    ruzstd::encoding::compress_to_vec(bytes, ruzstd::encoding::CompressionLevel::Fastest)
}
