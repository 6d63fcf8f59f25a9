//! The imported images in the cache: `$WIO_CACHE/images/<key>/` holds `rootfs.ext4` and
//! `image.json` (the record below). `<key>` is the first 24 hex digits of the sha256 of the
//! image ID, the e2fsprogs version and the disk size: the disk's bytes are a function of
//! those alone. A record is written last and renamed into place, so a directory without
//! one is a leftover; an import that fails writes nothing here.

use crate::error::{ImageError, Result};
use crate::select::reference_matches;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The record's format version.
pub const FORMAT: u32 = 1;

/// What an image says about running it (its config's `config` object), kept with its disk
/// for `wio run --image` and compose files.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct RunConfig {
    /// The program and its first arguments.
    pub entrypoint: Vec<String>,
    /// Default arguments (after the entrypoint), or the program when there is no entrypoint.
    pub cmd: Vec<String>,
    /// `NAME=VALUE` pairs.
    pub env: Vec<String>,
    /// The working directory ("" = `/`).
    pub working_dir: String,
    /// `user`, `uid`, `user:group` or `uid:gid` ("" = root).
    pub user: String,
    /// Ports the image says it listens on (`6379/tcp`).
    pub exposed_ports: Vec<String>,
}

/// One imported image.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Record {
    /// The record's format version ([`FORMAT`]).
    pub format: u32,
    /// The names it was imported under (an index annotation, docker's RepoTags, `--name`).
    pub references: Vec<String>,
    /// The config's digest: the image ID.
    pub id: String,
    /// The riscv64 manifest's digest (absent for docker archives).
    pub manifest: Option<String>,
    /// The platform imported.
    pub platform: String,
    /// Every platform the source offered.
    pub platforms_offered: Vec<String>,
    /// How to run it.
    pub config: RunConfig,
    /// Its layers.
    pub layers: usize,
    /// Paths on the disk.
    pub entries: u64,
    /// Bytes of regular files.
    pub content_bytes: u64,
    /// The disk file's name in the record's directory.
    pub disk: String,
    /// The disk's size.
    pub disk_bytes: u64,
    /// The e2fsprogs version that wrote it.
    pub e2fsprogs: String,
}

impl Record {
    /// The name to show: the first reference, else the short ID.
    pub fn name(&self) -> String {
        self.references
            .first()
            .cloned()
            .unwrap_or_else(|| short(&self.id))
    }

    /// Whether `asked` names this image: one of its references, or a prefix (12 hex digits
    /// or more) of its ID or manifest digest.
    pub fn answers_to(&self, asked: &str) -> bool {
        if self.references.iter().any(|r| reference_matches(r, asked)) {
            return true;
        }
        let hex = asked.strip_prefix("sha256:").unwrap_or(asked);
        hex.len() >= 12
            && hex.bytes().all(|b| b.is_ascii_hexdigit())
            && [Some(&self.id), self.manifest.as_ref()]
                .into_iter()
                .flatten()
                .any(|d| d.trim_start_matches("sha256:").starts_with(hex))
    }
}

/// `sha256:` and 12 hex digits.
pub fn short(digest: &str) -> String {
    let hex = digest.trim_start_matches("sha256:");
    format!("sha256:{}", hex.get(..12).unwrap_or(hex))
}

/// The cache folder (`$WIO_CACHE`, else `~/.cache/wio`).
pub fn cache_dir() -> Result<PathBuf> {
    if let Some(c) = std::env::var_os("WIO_CACHE").filter(|c| !c.is_empty()) {
        return Ok(PathBuf::from(c));
    }
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(|h| PathBuf::from(h).join(".cache/wio"))
        .ok_or(ImageError::NoCache)
}

/// Where imported images live.
pub fn images_dir(cache: &Path) -> PathBuf {
    cache.join("images")
}

/// Reads a record.
pub fn read(path: &Path) -> Result<Record> {
    let bytes = std::fs::read(path).map_err(|source| ImageError::Cache {
        path: path.to_path_buf(),
        source,
    })?;
    let record: Record = serde_json::from_slice(&bytes).map_err(|e| ImageError::Record {
        path: path.to_path_buf(),
        reason: format!("not a wio image record ({e})"),
    })?;
    if record.format != FORMAT {
        return Err(ImageError::Record {
            path: path.to_path_buf(),
            reason: format!("record format {} (this wio reads {FORMAT})", record.format),
        });
    }
    Ok(record)
}

/// Writes a record atomically (a temporary file renamed over it).
pub fn write(path: &Path, record: &Record) -> Result<()> {
    let cache_err = |source| ImageError::Cache {
        path: path.to_path_buf(),
        source,
    };
    let mut text =
        serde_json::to_string_pretty(record).map_err(|e| cache_err(std::io::Error::other(e)))?;
    text.push('\n');
    let tmp = path.with_extension(format!("json.{}", std::process::id()));
    std::fs::write(&tmp, text).map_err(cache_err)?;
    std::fs::rename(&tmp, path).map_err(cache_err)
}

/// Every imported image: its directory and record, sorted by name. A directory whose
/// record is missing (a leftover) is skipped; one whose record is damaged is an error.
pub fn list(cache: &Path) -> Result<Vec<(PathBuf, Record)>> {
    let dir = images_dir(cache);
    let entries = match std::fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => return Err(ImageError::Cache { path: dir, source }),
    };
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|source| ImageError::Cache {
            path: dir.clone(),
            source,
        })?;
        let record = entry.path().join("image.json");
        if record.is_file() {
            out.push((entry.path(), read(&record)?));
        }
    }
    out.sort_by(|a, b| (a.1.name(), &a.0).cmp(&(b.1.name(), &b.0)));
    Ok(out)
}

/// The imported image `asked` names (a reference or an ID prefix): its disk and record.
pub fn find(cache: &Path, asked: &str) -> Result<(PathBuf, Record)> {
    let all = list(cache)?;
    let mut hits: Vec<&(PathBuf, Record)> =
        all.iter().filter(|(_, r)| r.answers_to(asked)).collect();
    // Two disks of one image (made with two sizes or e2fsprogs versions): the newest
    // record's is as good as any; distinct images are ambiguous.
    hits.sort_by(|a, b| a.1.id.cmp(&b.1.id));
    hits.dedup_by(|a, b| a.1.id == b.1.id);
    match hits.as_slice() {
        [(dir, record)] => Ok((dir.join(&record.disk), record.clone())),
        [] => Err(ImageError::NotImported {
            name: asked.to_string(),
            known: if all.is_empty() {
                String::new()
            } else {
                format!(
                    " (imported: {})",
                    all.iter()
                        .map(|(_, r)| r.name())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            },
        }),
        many => Err(ImageError::NotImported {
            name: format!("{asked} alone"),
            known: format!(
                " ({} images answer to it: {}; give one's ID)",
                many.len(),
                many.iter()
                    .map(|(_, r)| format!("{} {}", r.name(), short(&r.id)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }),
    }
}
