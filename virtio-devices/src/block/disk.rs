//! A disk as a run sees it: a read-only base image, a durable copy-on-write
//! overlay owned by the run, and a volatile write cache on top. Writes land in
//! the volatile cache; only a FLUSH makes them durable. A crash (or the end of
//! the run without a flush) loses exactly what was never flushed. The base
//! image is opened read-only and never modified.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;

/// Bytes per sector.
pub const SECTOR: u64 = 512;
/// Granule of the overlay and the cache.
pub const CHUNK: u64 = 4096;

/// The disk.
pub struct Disk {
    base: File,
    base_len: u64,
    capacity: u64,
    durable: BTreeMap<u64, Chunk>,
    volatile: BTreeMap<u64, Chunk>,
}

/// One 4 KiB chunk of the overlay. Shared between a snapshot's branches until one of
/// them writes it (then that branch gets its own copy): a branch costs what it writes.
pub type Chunk = Arc<[u8]>;

/// A disk's writes, shared: (durable chunks, volatile chunks) by chunk index.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Overlay {
    /// Flushed chunks.
    pub durable: BTreeMap<u64, Chunk>,
    /// Written, not flushed.
    pub volatile: BTreeMap<u64, Chunk>,
}

/// The chunk's bytes for writing, copied first if another branch shares them.
fn make_mut(c: &mut Chunk) -> &mut [u8] {
    if Arc::get_mut(c).is_none() {
        *c = Arc::from(&c[..]);
    }
    Arc::get_mut(c).expect("a chunk just copied is not shared")
}

/// A disk's writes as a snapshot keeps them.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DiskState {
    /// Length of the base image the writes belong on.
    pub base_len: u64,
    /// Flushed chunks: (chunk index, 4 KiB).
    #[serde(with = "crate::codec::indexed_bytes")]
    pub durable: Vec<(u64, Vec<u8>)>,
    /// Chunks written but not flushed.
    #[serde(with = "crate::codec::indexed_bytes")]
    pub volatile: Vec<(u64, Vec<u8>)>,
}

impl DiskState {
    /// Checks every chunk against the saved base length: each lies within the disk and
    /// is [`CHUNK`] bytes long (durable chunks first, then volatile ones, in list order).
    fn check(&self) -> Result<(), DiskStateError> {
        let capacity = self.base_len / SECTOR * SECTOR;
        let chunks = capacity.div_ceil(CHUNK);
        for (k, v) in self.durable.iter().chain(&self.volatile) {
            if *k >= chunks {
                return Err(DiskStateError::ChunkOutOfRange { index: *k, chunks });
            }
            if v.len() as u64 != CHUNK {
                return Err(DiskStateError::TornChunk {
                    index: *k,
                    len: v.len(),
                    chunk: CHUNK,
                });
            }
        }
        Ok(())
    }

    /// The chunks as a shared overlay, checked against the saved base length.
    pub fn into_overlay(mut self) -> Result<Overlay, DiskStateError> {
        self.take_overlay()
    }

    /// Moves the chunks out as a shared overlay, checked against the saved base length,
    /// leaving the base length and no chunks (a state that loads as an empty overlay, for
    /// [`Disk::set_overlay`] to complete). On an error nothing is moved.
    pub fn take_overlay(&mut self) -> Result<Overlay, DiskStateError> {
        self.check()?;
        let map = |list: Vec<(u64, Vec<u8>)>| {
            list.into_iter()
                .map(|(k, v)| (k, Chunk::from(v)))
                .collect::<BTreeMap<_, _>>()
        };
        Ok(Overlay {
            durable: map(std::mem::take(&mut self.durable)),
            volatile: map(std::mem::take(&mut self.volatile)),
        })
    }
}

/// Why a base image cannot be used. The messages follow the image's path ("disk.img is
/// not a regular file").
#[derive(Debug, thiserror::Error)]
pub enum DiskError {
    /// The file could not be opened or examined.
    #[error(transparent)]
    Io(io::Error),
    /// Not a regular file.
    #[error("is not a regular file")]
    NotAFile,
    /// Smaller than one sector: the length in bytes.
    #[error("is {0} bytes, smaller than one {SECTOR}-byte sector")]
    TooSmall(u64),
}

pub use crate::error::DiskStateError;

impl Disk {
    /// Opens `path` read-only as the base image.
    pub fn open(path: &Path) -> Result<Disk, DiskError> {
        let base = File::open(path).map_err(DiskError::Io)?;
        let meta = base.metadata().map_err(DiskError::Io)?;
        if !meta.is_file() {
            return Err(DiskError::NotAFile);
        }
        let base_len = meta.len();
        if base_len < SECTOR {
            return Err(DiskError::TooSmall(base_len));
        }
        Ok(Disk {
            base,
            base_len,
            capacity: base_len / SECTOR * SECTOR,
            durable: BTreeMap::new(),
            volatile: BTreeMap::new(),
        })
    }

    /// Capacity in bytes (whole sectors).
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Chunks that a flush made durable.
    pub fn durable_chunks(&self) -> usize {
        self.durable.len()
    }

    /// Chunks written but not yet flushed.
    pub fn volatile_chunks(&self) -> usize {
        self.volatile.len()
    }

    fn base_chunk(&self, chunk: u64) -> io::Result<Vec<u8>> {
        let mut buf = vec![0u8; CHUNK as usize];
        let start = chunk * CHUNK;
        if start < self.base_len {
            let n = (self.base_len - start).min(CHUNK) as usize;
            self.base.read_exact_at(&mut buf[..n], start)?;
        }
        Ok(buf)
    }

    fn chunk(&self, chunk: u64) -> io::Result<std::borrow::Cow<'_, [u8]>> {
        if let Some(c) = self
            .volatile
            .get(&chunk)
            .or_else(|| self.durable.get(&chunk))
        {
            return Ok(std::borrow::Cow::Borrowed(c));
        }
        Ok(std::borrow::Cow::Owned(self.base_chunk(chunk)?))
    }

    fn check(&self, offset: u64, len: usize) -> io::Result<()> {
        match offset.checked_add(len as u64) {
            Some(end) if end <= self.capacity => Ok(()),
            _ => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "access beyond the end of the disk",
            )),
        }
    }

    /// Reads `buf.len()` bytes at `offset` as the guest sees them now.
    pub fn read(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.check(offset, buf.len())?;
        let mut done = 0usize;
        while done < buf.len() {
            let pos = offset + done as u64;
            let chunk = pos / CHUNK;
            let within = (pos % CHUNK) as usize;
            let n = (CHUNK as usize - within).min(buf.len() - done);
            buf[done..done + n].copy_from_slice(&self.chunk(chunk)?[within..within + n]);
            done += n;
        }
        Ok(())
    }

    /// Writes `data` at `offset` into the volatile cache.
    pub fn write(&mut self, offset: u64, data: &[u8]) -> io::Result<()> {
        self.check(offset, data.len())?;
        let mut done = 0usize;
        while done < data.len() {
            let pos = offset + done as u64;
            let chunk = pos / CHUNK;
            let within = (pos % CHUNK) as usize;
            let n = (CHUNK as usize - within).min(data.len() - done);
            if !self.volatile.contains_key(&chunk) {
                let current = match self.durable.get(&chunk) {
                    Some(c) => c.clone(),
                    None => Chunk::from(self.base_chunk(chunk)?),
                };
                self.volatile.insert(chunk, current);
            }
            if let Some(c) = self.volatile.get_mut(&chunk) {
                make_mut(c)[within..within + n].copy_from_slice(&data[done..done + n]);
            }
            done += n;
        }
        Ok(())
    }

    /// The overlay and the cache, for a snapshot: (base length, durable chunks, volatile chunks).
    pub fn save_state(&self) -> DiskState {
        let list = |m: &BTreeMap<u64, Chunk>| m.iter().map(|(k, v)| (*k, v.to_vec())).collect();
        DiskState {
            base_len: self.base_len,
            durable: list(&self.durable),
            volatile: list(&self.volatile),
        }
    }

    /// Loads a saved overlay and cache onto this base (which must have the saved length).
    pub fn load_state(&mut self, s: DiskState) -> Result<(), DiskStateError> {
        if s.base_len != self.base_len {
            return Err(DiskStateError::BaseLength {
                here: self.base_len,
                saved: s.base_len,
            });
        }
        let overlay = s.into_overlay()?;
        self.durable = overlay.durable;
        self.volatile = overlay.volatile;
        Ok(())
    }

    /// The overlay and cache, sharing every chunk (cheap: pointers are copied, not bytes).
    pub fn overlay(&self) -> Overlay {
        Overlay {
            durable: self.durable.clone(),
            volatile: self.volatile.clone(),
        }
    }

    /// Puts a shared overlay and cache on this disk; chunks are copied only when written.
    pub fn set_overlay(&mut self, overlay: Overlay) {
        self.durable = overlay.durable;
        self.volatile = overlay.volatile;
    }

    /// Makes every cached write durable.
    pub fn flush(&mut self) {
        let cached = std::mem::take(&mut self.volatile);
        self.durable.extend(cached);
    }

    /// Drops every write that was never flushed (what a power cut does).
    pub fn crash(&mut self) {
        self.volatile.clear();
    }

    /// A power cut that tears the cached writes: each cached chunk, in index order, keeps
    /// its first `keep(chunk index)` sectors (clamped to a chunk's 8) on the durable disk;
    /// the rest of the cache is lost.
    pub fn crash_torn(&mut self, mut keep: impl FnMut(u64) -> u64) {
        let cached = std::mem::take(&mut self.volatile);
        for (index, chunk) in cached {
            let bytes = (keep(index).min(CHUNK / SECTOR) * SECTOR) as usize;
            if bytes == 0 {
                continue;
            }
            let mut merged = match self.durable.get(&index) {
                Some(c) => c.to_vec(),
                None => match self.base_chunk(index) {
                    Ok(b) => b,
                    // The base cannot be read back: keep the chunk whole rather than
                    // invent its tail (the run reports base read errors elsewhere).
                    Err(_) => chunk.to_vec(),
                },
            };
            merged[..bytes].copy_from_slice(&chunk[..bytes]);
            self.durable.insert(index, Chunk::from(merged));
        }
    }

    /// Flips bit `bit` (0-7) of the byte at `offset`, durably and in the cache: what the
    /// disk holds there has rotted.
    pub fn flip_bit(&mut self, offset: u64, bit: u8) -> io::Result<()> {
        self.check(offset, 1)?;
        let chunk = offset / CHUNK;
        let within = (offset % CHUNK) as usize;
        let mask = 1u8 << (bit & 7);
        if !self.durable.contains_key(&chunk) {
            let base = Chunk::from(self.base_chunk(chunk)?);
            self.durable.insert(chunk, base);
        }
        for map in [&mut self.durable, &mut self.volatile] {
            if let Some(c) = map.get_mut(&chunk) {
                make_mut(c)[within] ^= mask;
            }
        }
        Ok(())
    }

    /// Writes the durable disk (base plus flushed writes, not the volatile cache) to `path`.
    pub fn persist(&self, path: &Path) -> io::Result<()> {
        let tmp = path.with_extension("wio-partial");
        {
            let mut out = File::create(&tmp)?;
            let mut chunk = 0u64;
            while chunk * CHUNK < self.capacity {
                let data = match self.durable.get(&chunk) {
                    Some(c) => std::borrow::Cow::Borrowed(&c[..]),
                    None => std::borrow::Cow::Owned(self.base_chunk(chunk)?),
                };
                let n = (self.capacity - chunk * CHUNK).min(CHUNK) as usize;
                out.write_all(&data[..n])?;
                chunk += 1;
            }
            out.sync_all()?;
        }
        std::fs::rename(&tmp, path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image(bytes: &[u8]) -> (std::path::PathBuf, Disk) {
        let dir =
            std::env::temp_dir().join(format!("wio-disk-{}-{}", std::process::id(), bytes.len()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("base.img");
        std::fs::write(&p, bytes).unwrap();
        let d = Disk::open(&p).unwrap();
        (p, d)
    }

    #[test]
    fn writes_are_volatile_until_flush_and_base_never_changes() {
        let base: Vec<u8> = (0..16384u32).map(|i| i as u8).collect();
        let (path, mut d) = image(&base);
        d.write(4090, b"hello world").unwrap(); // spans two chunks
        let mut got = [0u8; 11];
        d.read(4090, &mut got).unwrap();
        assert_eq!(&got, b"hello world");
        assert_eq!((d.volatile_chunks(), d.durable_chunks()), (2, 0));
        d.crash();
        d.read(4090, &mut got).unwrap();
        assert_eq!(&got[..], &base[4090..4101], "unflushed writes are lost");
        d.write(100, b"kept").unwrap();
        d.flush();
        d.write(200, b"lost").unwrap();
        d.crash();
        let mut kept = [0u8; 4];
        d.read(100, &mut kept).unwrap();
        assert_eq!(&kept, b"kept");
        let out = path.with_file_name("persisted.img");
        d.persist(&out).unwrap();
        let p = std::fs::read(&out).unwrap();
        assert_eq!(&p[100..104], b"kept");
        assert_eq!(&p[200..204], &base[200..204]);
        assert_eq!(
            std::fs::read(&path).unwrap(),
            base,
            "the base image is never modified"
        );
    }

    #[test]
    fn rejects_out_of_range_and_bad_files() {
        let (_, mut d) = image(&[0u8; 1024]);
        assert!(d.write(1020, b"12345").is_err());
        assert!(d.read(u64::MAX - 2, &mut [0u8; 4]).is_err());
        assert!(matches!(
            Disk::open(Path::new("/")),
            Err(DiskError::NotAFile)
        ));
        assert!(matches!(
            Disk::open(Path::new("/nonexistent/disk.img")),
            Err(DiskError::Io(_))
        ));
        let dir = std::env::temp_dir().join(format!("wio-disk-small-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("tiny.img");
        std::fs::write(&p, [1u8; 100]).unwrap();
        assert!(matches!(Disk::open(&p), Err(DiskError::TooSmall(100))));
        assert_eq!(
            DiskError::TooSmall(100).to_string(),
            "is 100 bytes, smaller than one 512-byte sector"
        );
    }

    #[test]
    fn refuses_saved_overlays_that_do_not_fit() {
        let (_, mut d) = image(&[0u8; 3 * 4096]);
        let state = |base_len, durable: Vec<(u64, Vec<u8>)>| DiskState {
            base_len,
            durable,
            volatile: Vec::new(),
        };
        assert_eq!(
            d.load_state(state(4096, Vec::new())),
            Err(DiskStateError::BaseLength {
                here: 3 * 4096,
                saved: 4096
            })
        );
        assert_eq!(
            d.load_state(state(3 * 4096, vec![(3, vec![0; 4096])])),
            Err(DiskStateError::ChunkOutOfRange {
                index: 3,
                chunks: 3
            })
        );
        let torn = state(3 * 4096, vec![(1, vec![0; 10])]).into_overlay();
        assert_eq!(
            torn,
            Err(DiskStateError::TornChunk {
                index: 1,
                len: 10,
                chunk: CHUNK
            })
        );
        assert_eq!(
            torn.unwrap_err().to_string(),
            "saved disk chunk 1 is torn (10 bytes, not 4096)"
        );
        d.load_state(state(3 * 4096, vec![(2, vec![5; 4096])]))
            .unwrap();
        assert_eq!(d.durable_chunks(), 1);
    }

    #[test]
    fn branches_share_the_overlay_until_they_write() {
        let (p, mut template) = image(&vec![7u8; 5 * 4096 + 512]);
        template.write(0, &[1; 4096]).unwrap();
        template.flush();
        template.write(4096, &[2; 10]).unwrap();
        let overlay = template.overlay();
        let mut a = Disk::open(&p).unwrap();
        let mut b = Disk::open(&p).unwrap();
        a.set_overlay(overlay.clone());
        b.set_overlay(overlay.clone());
        // Untouched chunks are the same allocation in every branch.
        assert!(Arc::ptr_eq(&a.durable[&0], &overlay.durable[&0]));
        a.write(0, &[9; 4]).unwrap();
        a.write(4096, &[8; 4]).unwrap();
        let mut buf = [0u8; 4];
        b.read(0, &mut buf).unwrap();
        assert_eq!(buf, [1; 4], "a's write is not b's");
        b.read(4096, &mut buf).unwrap();
        assert_eq!(buf, [2; 4]);
        a.read(4096, &mut buf).unwrap();
        assert_eq!(buf, [8; 4]);
        assert_eq!(
            &overlay.durable[&0][..4],
            &[1; 4],
            "the template never changes"
        );
        assert_eq!(&overlay.volatile[&1][..4], &[2; 4]);
        assert!(Arc::ptr_eq(&b.volatile[&1], &overlay.volatile[&1]));
        b.crash();
        b.read(4096, &mut buf).unwrap();
        assert_eq!(buf, [7; 4], "b's crash drops its unflushed chunk only");
        a.read(4096, &mut buf).unwrap();
        assert_eq!(buf, [8; 4]);
        let _ = std::fs::remove_file(p);
    }
}
