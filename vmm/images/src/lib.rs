//! Container images as wio root disks.
//!
//! `wio image import PATH` reads an OCI image layout directory, or an OCI, `docker save` or
//! `podman save` archive (no registry is ever contacted), chooses its linux/riscv64 image
//! (from a multi-platform index, or says which platforms it found), checks every blob
//! against its digest, applies the layers (whiteouts, opaque directories, ownership,
//! modes, symlinks, hard links, device nodes, extended attributes) and writes a
//! byte-reproducible ext4 root disk into the cache, keyed by the image ID, with the image's
//! run configuration beside it ([`store::Record`]).
//!
//! The parts: [`source`] (reading layouts and archives), [`select`] (which manifest,
//! config and layers), [`layers`] (applying them to a tree), [`disk`] (the ext4 file),
//! [`store`] (the cache's records), [`launch`] (what an image machine's initramfs gets).

#![forbid(unsafe_code)]

pub mod disk;
pub mod error;
pub mod launch;
pub mod layers;
pub mod select;
pub mod source;
pub mod store;
pub mod zstd;

pub use error::{ImageError, Result};
pub use store::{Record, RunConfig};

use sha2::{Digest as _, Sha256};
use std::path::{Path, PathBuf};

/// What `wio image import` was asked.
#[derive(Clone, Debug, Default)]
pub struct ImportOptions {
    /// The layout directory or archive.
    pub path: PathBuf,
    /// Which image of a source holding several (`--ref`).
    pub reference: Option<String>,
    /// A name to give it (`--name`), besides the one the source gives.
    pub name: Option<String>,
    /// The disk's size in MiB (`--size`); default: what the files need plus
    /// [`disk::DEFAULT_FREE_MIB`].
    pub size_mib: Option<u64>,
}

/// What an import did.
pub struct Imported {
    /// The record.
    pub record: Record,
    /// The disk file.
    pub disk: PathBuf,
    /// Whether the disk was already in the cache (nothing was built).
    pub cached: bool,
}

/// Imports an image; `progress` hears each step (for stderr).
pub fn import(opts: &ImportOptions, progress: &mut dyn FnMut(&str)) -> Result<Imported> {
    let cache = store::cache_dir()?;
    let scratch = Scratch::new(&cache)?;
    let src = source::Source::open(&opts.path, &scratch.0)?;
    let chosen = select::choose(&src, opts.reference.as_deref())?;
    let e2fsprogs = disk::e2fsprogs_version()?;
    let mut references: Vec<String> = chosen
        .reference
        .iter()
        .chain(opts.name.iter())
        .cloned()
        .collect();
    references.dedup();
    let id = chosen.config_digest.to_string();
    let key = {
        let mut h = Sha256::new();
        h.update(format!(
            "wio image disk {}\n{id}\n{e2fsprogs}\n{:?}\n",
            store::FORMAT,
            opts.size_mib
        ));
        source::hex(&h.finalize())[..24].to_string()
    };
    let target = store::images_dir(&cache).join(&key);
    let record_path = target.join("image.json");
    if record_path.is_file() {
        let mut record = store::read(&record_path)?;
        let before = record.references.len();
        for r in references {
            if !record.references.contains(&r) {
                record.references.push(r);
            }
        }
        if record.references.len() != before {
            store::write(&record_path, &record)?;
        }
        return Ok(Imported {
            disk: target.join(&record.disk),
            record,
            cached: true,
        });
    }
    let content = scratch.0.join("content");
    let staging = scratch.0.join("staging");
    let out = scratch.0.join("out");
    for dir in [&content, &staging, &out] {
        std::fs::create_dir(dir).map_err(|source| ImageError::Cache {
            path: dir.clone(),
            source,
        })?;
    }
    let mut tree = layers::Tree::new(content);
    for (n, layer) in chosen.layers.iter().enumerate() {
        progress(&format!(
            "layer {}/{} {}",
            n + 1,
            chosen.layers.len(),
            store::short(&layer.name())
        ));
        tree.apply(&src, layer, n)?;
    }
    let needed = disk::needed_mib(&tree);
    let size_mib = match opts.size_mib {
        Some(asked) if asked < needed => return Err(ImageError::TooSmall { asked, needed }),
        Some(asked) => asked,
        None => needed + disk::DEFAULT_FREE_MIB,
    };
    progress(&format!(
        "writing a {size_mib} MiB ext4 disk ({} paths)",
        tree.nodes.len()
    ));
    let disk_name = "rootfs.ext4";
    let written = disk::write(
        &tree,
        &staging,
        &out.join(disk_name),
        size_mib,
        chosen.config_digest.hex(),
    )?;
    let c = chosen.config.config().clone().unwrap_or_default();
    let record = Record {
        format: store::FORMAT,
        references,
        id,
        manifest: chosen.manifest.as_ref().map(ToString::to_string),
        platform: select::PLATFORM.to_string(),
        platforms_offered: chosen.platforms.clone(),
        config: RunConfig {
            entrypoint: c.entrypoint().clone().unwrap_or_default(),
            cmd: c.cmd().clone().unwrap_or_default(),
            env: c.env().clone().unwrap_or_default(),
            working_dir: c.working_dir().clone().unwrap_or_default(),
            user: c.user().clone().unwrap_or_default(),
            exposed_ports: {
                let mut p = c.exposed_ports().clone().unwrap_or_default();
                p.sort();
                p
            },
        },
        layers: chosen.layers.len(),
        entries: written.entries,
        content_bytes: written.content_bytes,
        disk: disk_name.to_string(),
        disk_bytes: written.disk_bytes,
        e2fsprogs,
    };
    store::write(&out.join("image.json"), &record)?;
    let images = store::images_dir(&cache);
    std::fs::create_dir_all(&images).map_err(|source| ImageError::Cache {
        path: images.clone(),
        source,
    })?;
    let cached = match std::fs::rename(&out, &target) {
        Ok(()) => false,
        // Another import of the same image finished first: its disk is the same bytes.
        Err(_) if record_path.is_file() => true,
        Err(source) => {
            return Err(ImageError::Cache {
                path: target,
                source,
            })
        }
    };
    Ok(Imported {
        disk: target.join(disk_name),
        record,
        cached,
    })
}

/// The import's scratch folder, `$WIO_CACHE/tmp/image-<pid>-<n>`, removed when the import
/// ends (whether it worked or not); leftovers of a killed import (whose process is gone)
/// are removed by the next.
struct Scratch(PathBuf);

impl Scratch {
    fn new(cache: &Path) -> Result<Self> {
        let tmp = cache.join("tmp");
        std::fs::create_dir_all(&tmp).map_err(|source| ImageError::Cache {
            path: tmp.clone(),
            source,
        })?;
        if let Ok(entries) = std::fs::read_dir(&tmp) {
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                let pid = name
                    .strip_prefix("image-")
                    .and_then(|r| r.split('-').next())
                    .and_then(|p| p.parse::<u32>().ok());
                if pid.is_some_and(|p| !Path::new(&format!("/proc/{p}")).exists()) {
                    let _ = std::fs::remove_dir_all(e.path());
                }
            }
        }
        for n in 0u32.. {
            let dir = tmp.join(format!("image-{}-{n}", std::process::id()));
            match std::fs::create_dir(&dir) {
                Ok(()) => return Ok(Self(dir)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(source) => return Err(ImageError::Cache { path: dir, source }),
            }
        }
        Err(ImageError::Cache {
            path: tmp,
            source: std::io::Error::other("no free scratch folder name"),
        })
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
