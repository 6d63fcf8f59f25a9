//! What can stop an import or a lookup. Every message names the file it is about and says
//! what to do; nothing is written to the cache when one is raised.

use std::path::PathBuf;

/// An image could not be imported, listed or found.
#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    /// The image path could not be read at all.
    #[error("cannot read {path}: {source}; check the path and permissions")]
    Open {
        /// What was given.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// Neither an OCI layout directory nor a tar archive of one (or of `docker save`).
    #[error("{path}: {why}; give an OCI image layout directory or an image archive (podman save --format oci-archive -o image.tar REF, docker save -o image.tar REF, skopeo copy ... oci:DIR)")]
    NotAnImage {
        /// What was given.
        path: PathBuf,
        /// What is missing or wrong.
        why: String,
    },
    /// A JSON document of the image (index, manifest, config, docker's manifest.json) is not
    /// what the spec says.
    #[error("{path}: the image's {what} {name} is not valid: {reason}; the image is damaged or not an OCI/docker image: save it again")]
    BadDocument {
        /// The image file or directory.
        path: PathBuf,
        /// "index", "manifest", "config", "manifest.json".
        what: &'static str,
        /// The blob's digest or member name.
        name: String,
        /// The parser's words.
        reason: String,
    },
    /// A blob the image names is not in it.
    #[error("{path}: the {what} blob {digest} is missing: the image is incomplete; save it again (with all its layers)")]
    MissingBlob {
        /// The image file or directory.
        path: PathBuf,
        /// "layer", "config", "manifest".
        what: &'static str,
        /// The digest (or docker archive member) that is missing.
        digest: String,
    },
    /// A blob's bytes do not hash to the digest that names them (or its size differs).
    #[error("{path}: the {what} blob {digest} does not match its digest ({found}): it is damaged; save the image again")]
    DigestMismatch {
        /// The image file or directory.
        path: PathBuf,
        /// "layer", "config", "manifest", "layer content (diff_id)".
        what: &'static str,
        /// The digest the image expects.
        digest: String,
        /// What was found instead (a digest or a size).
        found: String,
    },
    /// A zstd:chunked layer whose decompressed tar is not the image's (the image's is rebuilt
    /// from tar-split metadata wio does not read), so its content cannot be checked.
    #[error("{path}: layer {digest} is zstd:chunked, whose frames hold another tar than the image's (containers/storage rebuilds it from metadata wio does not read), so wio cannot check it against the image; copy the image with plain zstd or gzip layers: skopeo copy --dest-compress-format zstd oci-archive:IN oci-archive:OUT")]
    ChunkedLayer {
        /// The image file or directory.
        path: PathBuf,
        /// The layer.
        digest: String,
    },
    /// A digest wio cannot check (only sha256 is accepted).
    #[error(
        "{path}: digest {digest} is not sha256:<64 hex digits>; wio checks sha256 digests only"
    )]
    Digest {
        /// The image file or directory.
        path: PathBuf,
        /// The digest as written.
        digest: String,
    },
    /// The image has no linux/riscv64 variant.
    #[error("{path}: no {wanted} image in it (it holds {found}); build or pull the {wanted} one (podman build --platform {wanted}, podman pull --platform {wanted} REF) and save that")]
    NoPlatform {
        /// The image file or directory.
        path: PathBuf,
        /// The platform wio runs ("linux/riscv64").
        wanted: &'static str,
        /// The platforms it holds, comma-separated.
        found: String,
    },
    /// The layout holds several images and none was chosen.
    #[error("{path} holds {count} images ({names}); choose one with --ref NAME")]
    Ambiguous {
        /// The image file or directory.
        path: PathBuf,
        /// How many.
        count: usize,
        /// Their names.
        names: String,
    },
    /// `--ref NAME` names no image of the layout.
    #[error("{path} holds no image named {name} (it holds {names})")]
    NoSuchRef {
        /// The image file or directory.
        path: PathBuf,
        /// What was asked for.
        name: String,
        /// What it holds.
        names: String,
    },
    /// A layer wio cannot decompress.
    #[error("{path}: layer {digest} is {media_type}, which wio cannot read yet (it reads tar, tar+gzip and tar+zstd); save the image with gzip layers (podman save --format oci-archive, or skopeo copy --dest-compress-format gzip)")]
    UnsupportedLayer {
        /// The image file or directory.
        path: PathBuf,
        /// The layer's digest.
        digest: String,
        /// Its media type.
        media_type: String,
    },
    /// A layer's tar stream is damaged or holds something no root disk can.
    #[error("{path}: layer {digest}: {reason}")]
    Layer {
        /// The image file or directory.
        path: PathBuf,
        /// The layer's digest.
        digest: String,
        /// What is wrong (with the entry's name) and what to do.
        reason: String,
    },
    /// A host tool the disk is written with failed or is missing.
    #[error("{tool} {why}")]
    Tool {
        /// "mke2fs", "debugfs", "e2fsck".
        tool: &'static str,
        /// What happened and what to do.
        why: String,
    },
    /// Neither WIO_CACHE nor HOME is set.
    #[error("cannot find the wio cache: set WIO_CACHE or HOME")]
    NoCache,
    /// The cache could not be read or written.
    #[error("cache {path}: {source}; check WIO_CACHE, its free space and permissions")]
    Cache {
        /// The file or directory.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// An imported image's record in the cache is damaged.
    #[error("cache {path}: {reason}; remove that directory and import the image again")]
    Record {
        /// The record file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// No imported image has that name or digest.
    #[error("no imported image is called {name}{known}; `wio image import PATH` imports one, `wio image list` shows them")]
    NotImported {
        /// What was asked for.
        name: String,
        /// ", the imported ones are: ..." or "".
        known: String,
    },
    /// The image names no program (no entrypoint, no cmd) and none was given.
    #[error("image {name} has no entrypoint or cmd: give the program after --, e.g. wio run --image {name} -- /bin/sh -c 'echo hello'")]
    NoProgram {
        /// The image's name.
        name: String,
    },
    /// A NUL byte in a value the process gets (it cannot be an argument or a variable).
    #[error("{field:?} holds a NUL byte, which no argument or environment variable can")]
    Nul {
        /// The value.
        field: String,
    },
    /// A host file or folder to copy into a node that cannot be.
    #[error("files for {target}: {why}")]
    Files {
        /// Where it was to go in the image.
        target: String,
        /// What is wrong.
        why: String,
    },
    /// `--size` is too small for the image's files.
    #[error("--size {asked} MiB cannot hold this image: it needs at least {needed} MiB")]
    TooSmall {
        /// MiB asked for.
        asked: u64,
        /// MiB needed.
        needed: u64,
    },
}

/// Results of this crate.
pub type Result<T> = std::result::Result<T, ImageError>;
