//! Applying an image's layers, lowest first, to one file tree, as the OCI image spec's
//! "applying changesets" says: entries add or replace paths; `.wh.NAME` deletes NAME from
//! the layers below; `.wh..wh..opq` empties its directory of what the layers below put
//! there; hard links share one inode; parents a layer does not list are made as
//! directories (0755, root); a parent that is a symlink (Debian's `lib -> usr/lib`) is
//! followed, inside the root.
//!
//! The tree is kept in memory (names, kinds, ownership, modes, times, extended
//! attributes); file contents are streamed into the import's scratch folder as they are
//! read, one file per inode. Every layer's stored bytes and uncompressed bytes are hashed
//! while they are read and checked against the manifest's digest and the config's
//! diff_id: a layer that does not match fails the import.

use crate::error::{ImageError, Result};
use crate::select::{Compression, Layer};
use crate::source::{Hashing, Source};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;

/// Limits that keep a damaged or hostile image from exhausting the host, with room for
/// any real one (a full Debian image has about 10,000 entries).
pub const MAX_ENTRIES: usize = 2_000_000;
/// ext4's longest name.
const MAX_NAME: usize = 255;
/// Linux's PATH_MAX.
const MAX_PATH: usize = 4096;
/// How many symlinks a parent path may pass through (Linux's limit).
const MAX_SYMLINKS: usize = 40;

/// Ownership, permission bits (with setuid, setgid, sticky), time and extended attributes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Meta {
    /// The low 12 bits of st_mode.
    pub mode: u32,
    /// Owner.
    pub uid: u32,
    /// Group.
    pub gid: u32,
    /// Modification time, seconds since the epoch (also the disk's atime and ctime).
    pub mtime: i64,
    /// Extended attributes (`security.capability`, `user.*`), by name.
    pub xattrs: BTreeMap<String, Vec<u8>>,
}

impl Meta {
    /// A directory a layer implies without listing it.
    fn implied_dir() -> Self {
        Self {
            mode: 0o755,
            uid: 0,
            gid: 0,
            mtime: 0,
            xattrs: BTreeMap::new(),
        }
    }
}

/// What a path is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A directory.
    Dir,
    /// A regular file: an index into [`Tree::inodes`] (hard links share one).
    File(usize),
    /// A symbolic link and its target, as bytes.
    Symlink(Vec<u8>),
    /// A character device (major, minor).
    Char(u32, u32),
    /// A block device (major, minor).
    Block(u32, u32),
    /// A named pipe.
    Fifo,
}

/// One path of the tree.
#[derive(Clone, Debug)]
pub struct Node {
    /// Its kind.
    pub kind: Kind,
    /// Its metadata (a regular file's is its inode's).
    pub meta: Meta,
    /// The layer that last wrote it (whiteouts and opaque directories remove only what
    /// lower layers wrote).
    layer: usize,
}

/// A regular file's contents and metadata, shared by its hard links.
#[derive(Clone, Debug)]
pub struct Inode {
    /// Its contents, in the scratch folder.
    pub content: PathBuf,
    /// Its length.
    pub size: u64,
    /// Its metadata.
    pub meta: Meta,
}

/// The image's file tree. Paths are bytes relative to the root, without a leading `/`;
/// the root is the empty path. Sorted, so a parent always comes before its children.
pub struct Tree {
    /// Every path.
    pub nodes: BTreeMap<Vec<u8>, Node>,
    /// Regular files' contents.
    pub inodes: Vec<Inode>,
    scratch: PathBuf,
}

/// Why an entry cannot be applied.
struct Bad(String);

impl Tree {
    /// An empty tree (only the root) whose contents go to `scratch`.
    pub fn new(scratch: PathBuf) -> Self {
        let mut nodes = BTreeMap::new();
        nodes.insert(
            Vec::new(),
            Node {
                kind: Kind::Dir,
                meta: Meta::implied_dir(),
                layer: 0,
            },
        );
        Self {
            nodes,
            inodes: Vec::new(),
            scratch,
        }
    }

    /// Applies one layer (number `n`, lowest is 0) read from the source, checking its
    /// digest and diff_id.
    pub fn apply(&mut self, src: &Source, layer: &Layer, n: usize) -> Result<()> {
        let layer_err = |reason: String| ImageError::Layer {
            path: src.path.clone(),
            digest: layer.name(),
            reason,
        };
        // The stored bytes are checked against the manifest's digest before a byte of
        // them is decompressed: a damaged blob is named as such, not as a bad tar.
        if let Some(want) = &layer.digest {
            let (reader, _) = src
                .member(&layer.member)?
                .ok_or_else(|| src.missing("layer", layer.name()))?;
            let (digest, size) = Hashing::new(reader)
                .finish()
                .map_err(|e| layer_err(format!("cannot read the layer ({e})")))?;
            if &digest != want {
                return Err(ImageError::DigestMismatch {
                    path: src.path.clone(),
                    what: "layer",
                    digest: want.to_string(),
                    found: digest.to_string(),
                });
            }
            if let Some(want) = layer.size.filter(|&s| s != size) {
                return Err(ImageError::DigestMismatch {
                    path: src.path.clone(),
                    what: "layer",
                    digest: layer.name(),
                    found: format!("{size} bytes where the manifest says {want}"),
                });
            }
        }
        let (reader, _) = src
            .member(&layer.member)?
            .ok_or_else(|| src.missing("layer", layer.name()))?;
        let mut buffered = BufReader::new(reader);
        let compression = match layer.compression {
            Compression::Sniff => match buffered.fill_buf() {
                Ok([0x1f, 0x8b, ..]) => Compression::Gzip,
                Ok([0x28, 0xb5, 0x2f, 0xfd, ..]) => Compression::Zstd,
                _ => Compression::None,
            },
            c => c,
        };
        let plain: Box<dyn Read> = match compression {
            Compression::Gzip => Box::new(flate2::read::GzDecoder::new(buffered)),
            Compression::Zstd => Box::new(crate::zstd::Frames::new(buffered)),
            Compression::None | Compression::Sniff => Box::new(buffered),
        };
        // The uncompressed bytes must be the config's diff_id.
        let mut diff = Hashing::new(plain);
        self.apply_tar(&mut diff, n)
            .map_err(|Bad(reason)| layer_err(reason))?;
        let (diff_id, _) = diff.finish().map_err(|e| {
            layer_err(format!(
                "the layer's stream is damaged after its last entry ({e}); save the image again"
            ))
        })?;
        if diff_id != layer.diff_id && layer.chunked {
            return Err(ImageError::ChunkedLayer {
                path: src.path.clone(),
                digest: layer.name(),
            });
        }
        if diff_id != layer.diff_id {
            return Err(ImageError::DigestMismatch {
                path: src.path.clone(),
                what: "layer content (diff_id)",
                digest: layer.diff_id.to_string(),
                found: diff_id.to_string(),
            });
        }
        Ok(())
    }

    fn apply_tar(&mut self, reader: &mut dyn Read, n: usize) -> std::result::Result<(), Bad> {
        let damaged = |e: std::io::Error| {
            Bad(format!(
                "the tar stream is damaged ({e}); save the image again"
            ))
        };
        let mut archive = tar::Archive::new(reader);
        for entry in archive.entries().map_err(damaged)? {
            let entry = entry.map_err(damaged)?;
            if self.nodes.len() >= MAX_ENTRIES {
                return Err(Bad(format!("more than {MAX_ENTRIES} files in the image")));
            }
            self.apply_entry(entry, n)?;
        }
        Ok(())
    }

    fn apply_entry<R: Read>(
        &mut self,
        mut entry: tar::Entry<'_, R>,
        n: usize,
    ) -> std::result::Result<(), Bad> {
        use tar::EntryType as T;
        let raw = entry.path_bytes().into_owned();
        let shown = String::from_utf8_lossy(&raw).into_owned();
        let kind = entry.header().entry_type();
        if matches!(
            kind,
            T::XGlobalHeader | T::XHeader | T::GNULongName | T::GNULongLink
        ) {
            return Ok(());
        }
        let comps = components(&raw).map_err(|why| Bad(format!("entry {shown}: {why}")))?;
        let Some((base, parent)) = comps.split_last() else {
            // The root itself ("./"): only its metadata.
            if kind == T::Directory {
                let meta = meta_of(&mut entry, &shown)?;
                if let Some(root) = self.nodes.get_mut(&Vec::new()) {
                    root.meta = meta;
                }
            }
            return Ok(());
        };
        let parent = self.make_parent(parent, n, &shown)?;
        if base == b".wh..wh..opq" {
            let lower: Vec<Vec<u8>> = self
                .children(&parent)
                .filter(|(_, node)| node.layer < n)
                .map(|(k, _)| k.clone())
                .collect();
            for k in lower {
                self.remove(&k);
            }
            return Ok(());
        }
        if let Some(hidden) = base.strip_prefix(b".wh.") {
            let target = join(&parent, hidden);
            if self.nodes.get(&target).is_some_and(|node| node.layer < n) {
                self.remove(&target);
            }
            return Ok(());
        }
        let path = join(&parent, base);
        let meta = meta_of(&mut entry, &shown)?;
        let mut linked_meta = None;
        let new_kind = match kind {
            T::Directory => {
                if let Some(node) = self.nodes.get_mut(&path).filter(|node| node.kind == Kind::Dir) {
                    node.meta = meta;
                    node.layer = n;
                    return Ok(());
                }
                Kind::Dir
            }
            T::Regular | T::Continuous => {
                let content = self.scratch.join(format!("{}", self.inodes.len()));
                let mut out = std::fs::File::create(&content)
                    .map_err(|e| Bad(format!("entry {shown}: cannot write {} ({e})", content.display())))?;
                let size = std::io::copy(&mut entry, &mut out)
                    .map_err(|e| Bad(format!("entry {shown}: the tar stream is damaged ({e}); save the image again")))?;
                self.inodes.push(Inode {
                    content,
                    size,
                    meta: meta.clone(),
                });
                Kind::File(self.inodes.len() - 1)
            }
            T::Symlink => {
                let target = entry.link_name_bytes().map(|t| t.into_owned()).unwrap_or_default();
                if target.is_empty() || target.len() >= MAX_PATH {
                    return Err(Bad(format!("entry {shown}: a symlink with an empty or too long target")));
                }
                Kind::Symlink(target)
            }
            T::Link => {
                let target = entry.link_name_bytes().map(|t| t.into_owned()).unwrap_or_default();
                let tcomps = components(&target).map_err(|why| Bad(format!("entry {shown}: hard link target: {why}")))?;
                let tpath = tcomps.join(&b'/');
                match self.nodes.get(&tpath).map(|node| (node.kind.clone(), node.meta.clone())) {
                    Some(_) if tpath == path => return Ok(()),
                    // A regular file's links share its inode; a link to anything else (rare)
                    // becomes a copy of it with its metadata.
                    Some((Kind::Dir, _)) => return Err(Bad(format!("entry {shown}: a hard link to a directory"))),
                    Some((k, m)) => {
                        linked_meta = Some(m);
                        k
                    }
                    None => {
                        return Err(Bad(format!(
                            "entry {shown}: a hard link to {}, which no layer so far holds",
                            String::from_utf8_lossy(&target)
                        )))
                    }
                }
            }
            T::Char | T::Block => {
                let major = entry.header().device_major().ok().flatten().unwrap_or(0);
                let minor = entry.header().device_minor().ok().flatten().unwrap_or(0);
                if kind == T::Char {
                    Kind::Char(major, minor)
                } else {
                    Kind::Block(major, minor)
                }
            }
            T::Fifo => Kind::Fifo,
            other => {
                return Err(Bad(format!(
                    "entry {shown} is of tar type {:?}, which wio cannot put on a disk (sparse files are not supported); rebuild the layer without it",
                    other
                )))
            }
        };
        let meta = match &new_kind {
            Kind::File(i) => self.inodes[*i].meta.clone(),
            _ => linked_meta.unwrap_or(meta),
        };
        self.remove(&path);
        self.nodes.insert(
            path,
            Node {
                kind: new_kind,
                meta,
                layer: n,
            },
        );
        Ok(())
    }

    /// The parent directory of an entry as a real path: missing directories are made,
    /// symlinked ones followed inside the root, a file in the way replaced.
    fn make_parent(
        &mut self,
        comps: &[&[u8]],
        n: usize,
        shown: &str,
    ) -> std::result::Result<Vec<u8>, Bad> {
        let mut todo: Vec<Vec<u8>> = comps.iter().rev().map(|c| c.to_vec()).collect();
        let mut at: Vec<u8> = Vec::new();
        let mut hops = 0;
        while let Some(c) = todo.pop() {
            if c == b".." {
                // Only from a followed symlink's target: stay inside the root.
                if let Some(i) = at.iter().rposition(|&b| b == b'/') {
                    at.truncate(i);
                } else {
                    at.clear();
                }
                continue;
            }
            let next = join(&at, &c);
            match self.nodes.get(&next).map(|node| node.kind.clone()) {
                Some(Kind::Dir) => at = next,
                Some(Kind::Symlink(target)) => {
                    hops += 1;
                    if hops > MAX_SYMLINKS {
                        return Err(Bad(format!("entry {shown}: more than {MAX_SYMLINKS} symlinks in its parent path (a loop?)")));
                    }
                    if target.starts_with(b"/") {
                        at.clear();
                    }
                    for part in target.split(|&b| b == b'/').rev() {
                        if !part.is_empty() && part != b"." {
                            todo.push(part.to_vec());
                        }
                    }
                }
                other => {
                    if other.is_some() {
                        self.remove(&next);
                    }
                    self.nodes.insert(
                        next.clone(),
                        Node {
                            kind: Kind::Dir,
                            meta: Meta::implied_dir(),
                            layer: n,
                        },
                    );
                    at = next;
                }
            }
        }
        Ok(at)
    }

    /// The direct and indirect children of a directory.
    fn children<'a>(&'a self, dir: &[u8]) -> impl Iterator<Item = (&'a Vec<u8>, &'a Node)> + 'a {
        let prefix = if dir.is_empty() {
            Vec::new()
        } else {
            join(dir, b"")
        };
        self.nodes
            .range(prefix.clone()..)
            .filter(|(k, _)| !k.is_empty())
            .take_while(move |(k, _)| k.starts_with(&prefix))
    }

    /// Removes a path and everything under it.
    fn remove(&mut self, path: &[u8]) {
        if path.is_empty() {
            return;
        }
        let under: Vec<Vec<u8>> = self.children(path).map(|(k, _)| k.clone()).collect();
        for k in under {
            self.nodes.remove(&k);
        }
        self.nodes.remove(path);
    }

    /// Regular files' total size, directories, and entries: what the disk must hold.
    pub fn totals(&self) -> (u64, u64, u64) {
        let bytes = self
            .nodes
            .values()
            .filter_map(|node| match node.kind {
                Kind::File(i) => Some(i),
                _ => None,
            })
            .collect::<std::collections::BTreeSet<usize>>()
            .iter()
            .map(|&i| self.inodes[i].size)
            .sum();
        let dirs = self
            .nodes
            .values()
            .filter(|node| node.kind == Kind::Dir)
            .count() as u64;
        (bytes, dirs, self.nodes.len() as u64)
    }
}

fn join(dir: &[u8], name: &[u8]) -> Vec<u8> {
    if dir.is_empty() {
        name.to_vec()
    } else {
        let mut p = dir.to_vec();
        p.push(b'/');
        p.extend_from_slice(name);
        p
    }
}

/// An entry's path as components: `./`, `/` and empty parts dropped; `..` refused.
fn components(raw: &[u8]) -> std::result::Result<Vec<&[u8]>, &'static str> {
    if raw.len() >= MAX_PATH {
        return Err("its path is longer than 4096 bytes");
    }
    let mut out = Vec::new();
    for c in raw.split(|&b| b == b'/') {
        match c {
            b"" | b"." => {}
            b".." => {
                return Err("its path climbs out of the image's root (..); the layer is unsafe")
            }
            c if c.len() > MAX_NAME => return Err("a name longer than 255 bytes (ext4's limit)"),
            c if c.contains(&b'\n') || c.contains(&0) => {
                return Err("a name with a newline or NUL, which wio does not put on a disk")
            }
            c => out.push(c),
        }
    }
    Ok(out)
}

/// An entry's metadata from its header and PAX records.
fn meta_of<R: Read>(entry: &mut tar::Entry<'_, R>, shown: &str) -> std::result::Result<Meta, Bad> {
    let h = entry.header();
    let bad = |what: &str| {
        Bad(format!(
            "entry {shown}: its {what} field is damaged; save the image again"
        ))
    };
    let mode = h.mode().map_err(|_| bad("mode"))? & 0o7777;
    let mut uid = h.uid().map_err(|_| bad("uid"))?;
    let mut gid = h.gid().map_err(|_| bad("gid"))?;
    let mut mtime = h.mtime().map_err(|_| bad("mtime"))? as i64;
    let mut xattrs = BTreeMap::new();
    if let Ok(Some(pax)) = entry.pax_extensions() {
        for ext in pax.flatten() {
            let Ok(key) = ext.key() else { continue };
            let value = ext.value_bytes();
            let number = || {
                std::str::from_utf8(value)
                    .ok()
                    .and_then(|v| v.split('.').next())
                    .and_then(|v| v.parse::<i64>().ok())
            };
            match key {
                "uid" => uid = number().ok_or_else(|| bad("PAX uid"))? as u64,
                "gid" => gid = number().ok_or_else(|| bad("PAX gid"))? as u64,
                "mtime" => mtime = number().ok_or_else(|| bad("PAX mtime"))?,
                k => {
                    if let Some(name) = k.strip_prefix("SCHILY.xattr.") {
                        xattrs.insert(name.to_string(), value.to_vec());
                    }
                }
            }
        }
    }
    let id = |v: u64, what: &str| u32::try_from(v).map_err(|_| bad(what));
    Ok(Meta {
        mode,
        uid: id(uid, "uid")?,
        gid: id(gid, "gid")?,
        mtime,
        xattrs,
    })
}
