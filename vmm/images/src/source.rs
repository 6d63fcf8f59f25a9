//! Where an image's bytes come from: an OCI image layout directory, or a tar archive of one
//! (`podman save --format oci-archive`, `docker save` since 25) or of `docker save`'s older
//! format (`manifest.json` naming a config and layer tars; also `podman save`'s default).
//!
//! An archive is read in place: its members are indexed once (name, offset, length) and
//! each blob is read from the file at its offset, so a multi-gigabyte archive is never
//! unpacked. A gzip-compressed archive (`docker save | gzip`) is decompressed once into the
//! import's scratch folder first. Every blob read through [`Source::blob`] is checked
//! against its sha256 digest and size before anything is built from it.

use crate::error::{ImageError, Result};
use sha2::{Digest as _, Sha256};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// The largest JSON document (index, manifest, config) wio reads: real ones are kilobytes;
/// a bigger one is damage, not an image.
const MAX_DOCUMENT: u64 = 16 << 20;

/// A sha256 digest, parsed at the edge: `sha256:` and 64 lowercase hex digits.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Sha256Digest(String);

impl Sha256Digest {
    /// Parses `sha256:<hex>`; `path` names the image in the error.
    pub fn parse(text: &str, path: &Path) -> Result<Self> {
        let hex = text.strip_prefix("sha256:").unwrap_or("");
        if hex.len() == 64
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        {
            Ok(Self(hex.to_string()))
        } else {
            Err(ImageError::Digest {
                path: path.to_path_buf(),
                digest: text.to_string(),
            })
        }
    }

    /// Of some bytes.
    pub fn of(bytes: &[u8]) -> Self {
        Self(hex(&Sha256::digest(bytes)))
    }

    /// The 64 hex digits.
    pub fn hex(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for Sha256Digest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "sha256:{}", self.0)
    }
}

/// Lowercase hex of some bytes.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// How the image is stored.
enum Store {
    /// An OCI layout directory.
    Dir(PathBuf),
    /// A tar archive: its file and its members (name without `./`, offset, length).
    Archive {
        file: PathBuf,
        members: BTreeMap<String, (u64, u64)>,
    },
}

/// An image source: read its members and blobs.
pub struct Source {
    /// What the user gave (for messages).
    pub path: PathBuf,
    store: Store,
}

impl Source {
    /// Opens PATH: a directory is an OCI layout; a file is a tar archive (gzip-compressed
    /// ones are decompressed into `scratch` first).
    pub fn open(path: &Path, scratch: &Path) -> Result<Self> {
        let meta = std::fs::metadata(path).map_err(|source| ImageError::Open {
            path: path.to_path_buf(),
            source,
        })?;
        let store = if meta.is_dir() {
            Store::Dir(path.to_path_buf())
        } else {
            let mut file = File::open(path).map_err(|source| ImageError::Open {
                path: path.to_path_buf(),
                source,
            })?;
            let mut magic = [0u8; 2];
            let gzip = file.read_exact(&mut magic).is_ok() && magic == [0x1f, 0x8b];
            let tar_path = if gzip {
                let out = scratch.join("archive.tar");
                let input = File::open(path).map_err(|source| ImageError::Open {
                    path: path.to_path_buf(),
                    source,
                })?;
                let mut output = File::create(&out).map_err(|source| ImageError::Cache {
                    path: out.clone(),
                    source,
                })?;
                std::io::copy(&mut flate2::read::GzDecoder::new(input), &mut output).map_err(
                    |e| ImageError::NotAnImage {
                        path: path.to_path_buf(),
                        why: format!("a gzip file that does not decompress ({e})"),
                    },
                )?;
                out
            } else {
                path.to_path_buf()
            };
            Store::Archive {
                members: index_archive(&tar_path, path)?,
                file: tar_path,
            }
        };
        Ok(Self {
            path: path.to_path_buf(),
            store,
        })
    }

    /// Opens a member (a path inside the layout or archive): its reader and length, or
    /// None when there is no such member.
    pub fn member(&self, name: &str) -> Result<Option<(Box<dyn Read>, u64)>> {
        let name = name.trim_start_matches("./");
        match &self.store {
            Store::Dir(dir) => {
                if name.split('/').any(|c| c == "..") {
                    return Ok(None);
                }
                let p = dir.join(name);
                match File::open(&p) {
                    Ok(f) => {
                        let len = f.metadata().map(|m| m.len()).unwrap_or(0);
                        if !f.metadata().map(|m| m.is_file()).unwrap_or(false) {
                            return Ok(None);
                        }
                        Ok(Some((Box::new(f), len)))
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                    Err(source) => Err(ImageError::Open { path: p, source }),
                }
            }
            Store::Archive { file, members } => match members.get(name) {
                None => Ok(None),
                Some(&(offset, len)) => {
                    let mut f = File::open(file).map_err(|source| ImageError::Open {
                        path: self.path.clone(),
                        source,
                    })?;
                    f.seek(SeekFrom::Start(offset))
                        .map_err(|source| ImageError::Open {
                            path: self.path.clone(),
                            source,
                        })?;
                    Ok(Some((Box::new(f.take(len)), len)))
                }
            },
        }
    }

    /// Reads a small member whole (None when absent); `what` names it in errors.
    pub fn small_member(&self, name: &str, what: &'static str) -> Result<Option<Vec<u8>>> {
        let Some((reader, len)) = self.member(name)? else {
            return Ok(None);
        };
        if len > MAX_DOCUMENT {
            return Err(self.bad(
                what,
                name,
                format!("{len} bytes, more than any real {what}"),
            ));
        }
        let mut bytes = Vec::with_capacity(len as usize);
        reader
            .take(MAX_DOCUMENT)
            .read_to_end(&mut bytes)
            .map_err(|e| self.bad(what, name, e.to_string()))?;
        Ok(Some(bytes))
    }

    /// The member path of a blob.
    pub fn blob_name(digest: &Sha256Digest) -> String {
        format!("blobs/sha256/{}", digest.hex())
    }

    /// Reads a small blob whole and checks its digest and size (`size` None: unknown).
    pub fn document(
        &self,
        digest: &Sha256Digest,
        size: Option<u64>,
        what: &'static str,
    ) -> Result<Vec<u8>> {
        let bytes = self
            .small_member(&Self::blob_name(digest), what)?
            .ok_or_else(|| self.missing(what, digest.to_string()))?;
        self.check(digest, size, &bytes, what)?;
        Ok(bytes)
    }

    /// Checks bytes against a digest and size.
    pub fn check(
        &self,
        digest: &Sha256Digest,
        size: Option<u64>,
        bytes: &[u8],
        what: &'static str,
    ) -> Result<()> {
        let found = Sha256Digest::of(bytes);
        if &found != digest {
            return Err(ImageError::DigestMismatch {
                path: self.path.clone(),
                what,
                digest: digest.to_string(),
                found: found.to_string(),
            });
        }
        if let Some(size) = size.filter(|&s| s != bytes.len() as u64) {
            return Err(ImageError::DigestMismatch {
                path: self.path.clone(),
                what,
                digest: digest.to_string(),
                found: format!("{} bytes where the manifest says {size}", bytes.len()),
            });
        }
        Ok(())
    }

    /// The error for a missing blob.
    pub fn missing(&self, what: &'static str, digest: String) -> ImageError {
        ImageError::MissingBlob {
            path: self.path.clone(),
            what,
            digest,
        }
    }

    /// The error for a document that does not parse.
    pub fn bad(&self, what: &'static str, name: &str, reason: String) -> ImageError {
        ImageError::BadDocument {
            path: self.path.clone(),
            what,
            name: name.to_string(),
            reason,
        }
    }
}

/// Lists a tar archive's regular members with their data offsets.
fn index_archive(tar_path: &Path, shown: &Path) -> Result<BTreeMap<String, (u64, u64)>> {
    let not_tar = |e: std::io::Error| ImageError::NotAnImage {
        path: shown.to_path_buf(),
        why: format!("not a tar archive ({e})"),
    };
    let file = File::open(tar_path).map_err(|source| ImageError::Open {
        path: shown.to_path_buf(),
        source,
    })?;
    let mut archive = tar::Archive::new(file);
    let mut members = BTreeMap::new();
    for entry in archive.entries().map_err(not_tar)? {
        let entry = entry.map_err(not_tar)?;
        if entry.header().entry_type() != tar::EntryType::Regular {
            continue;
        }
        let name = String::from_utf8_lossy(&entry.path_bytes())
            .trim_start_matches("./")
            .to_string();
        members.insert(name, (entry.raw_file_position(), entry.size()));
    }
    if members.is_empty() {
        return Err(ImageError::NotAnImage {
            path: shown.to_path_buf(),
            why: "an empty archive, or not a tar archive".into(),
        });
    }
    Ok(members)
}

/// A reader that hashes what passes through it and counts it, to check a layer's
/// digest (compressed bytes) or diff_id (uncompressed bytes) once it has been read.
pub struct Hashing<R> {
    inner: R,
    hasher: Sha256,
    bytes: u64,
}

impl<R: Read> Hashing<R> {
    /// Wraps a reader.
    pub fn new(inner: R) -> Self {
        Self {
            inner,
            hasher: Sha256::new(),
            bytes: 0,
        }
    }

    /// Reads what is left (a tar's trailing zero blocks) and returns the digest and length
    /// of everything read.
    pub fn finish(mut self) -> std::io::Result<(Sha256Digest, u64)> {
        std::io::copy(&mut self, &mut std::io::sink())?;
        Ok((Sha256Digest(hex(&self.hasher.finalize())), self.bytes))
    }
}

impl<R: Read> Read for Hashing<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hasher.update(&buf[..n]);
        self.bytes += n as u64;
        Ok(n)
    }
}
