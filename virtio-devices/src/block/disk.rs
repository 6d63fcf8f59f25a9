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

/// Bytes per sector.
pub const SECTOR: u64 = 512;
/// Granule of the overlay and the cache.
pub const CHUNK: u64 = 4096;

/// The disk.
pub struct Disk {
    base: File,
    base_len: u64,
    capacity: u64,
    durable: BTreeMap<u64, Box<[u8]>>,
    volatile: BTreeMap<u64, Box<[u8]>>,
}

/// A disk's writes as a snapshot keeps them.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DiskState {
    /// Length of the base image the writes belong on.
    pub base_len: u64,
    /// Flushed chunks: (chunk index, 4 KiB).
    pub durable: Vec<(u64, Vec<u8>)>,
    /// Chunks written but not flushed.
    pub volatile: Vec<(u64, Vec<u8>)>,
}

/// Why a base image cannot be used.
#[derive(Debug)]
pub enum DiskError {
    /// The file could not be opened or examined.
    Io(io::Error),
    /// Not a regular file.
    NotAFile,
    /// Smaller than one sector.
    TooSmall(u64),
}

impl std::fmt::Display for DiskError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DiskError::Io(e) => write!(f, "{e}"),
            DiskError::NotAFile => f.write_str("is not a regular file"),
            DiskError::TooSmall(n) => write!(f, "is {n} bytes, smaller than one 512-byte sector"),
        }
    }
}

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

    fn base_chunk(&self, chunk: u64) -> io::Result<Box<[u8]>> {
        let mut buf = vec![0u8; CHUNK as usize].into_boxed_slice();
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
        Ok(std::borrow::Cow::Owned(self.base_chunk(chunk)?.into_vec()))
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
                    None => self.base_chunk(chunk)?,
                };
                self.volatile.insert(chunk, current);
            }
            if let Some(c) = self.volatile.get_mut(&chunk) {
                c[within..within + n].copy_from_slice(&data[done..done + n]);
            }
            done += n;
        }
        Ok(())
    }

    /// The overlay and the cache, for a snapshot: (base length, durable chunks, volatile chunks).
    pub fn save_state(&self) -> DiskState {
        let list = |m: &BTreeMap<u64, Box<[u8]>>| m.iter().map(|(k, v)| (*k, v.to_vec())).collect();
        DiskState {
            base_len: self.base_len,
            durable: list(&self.durable),
            volatile: list(&self.volatile),
        }
    }

    /// Loads a saved overlay and cache onto this base (which must have the saved length).
    pub fn load_state(&mut self, s: DiskState) -> Result<(), String> {
        if s.base_len != self.base_len {
            return Err(format!(
                "the base image is {} bytes, the snapshot's was {}",
                self.base_len, s.base_len
            ));
        }
        let chunks = self.capacity.div_ceil(CHUNK);
        let mut maps = [BTreeMap::new(), BTreeMap::new()];
        for (map, list) in maps.iter_mut().zip([s.durable, s.volatile]) {
            for (k, v) in list {
                if k >= chunks || v.len() as u64 != CHUNK {
                    return Err(format!("saved disk chunk {k} is out of range or torn"));
                }
                map.insert(k, v.into_boxed_slice());
            }
        }
        let [durable, volatile] = maps;
        self.durable = durable;
        self.volatile = volatile;
        Ok(())
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

    /// Writes the durable disk (base plus flushed writes, not the volatile cache) to `path`.
    pub fn persist(&self, path: &Path) -> io::Result<()> {
        let tmp = path.with_extension("wio-partial");
        {
            let mut out = File::create(&tmp)?;
            let mut chunk = 0u64;
            while chunk * CHUNK < self.capacity {
                let data = match self.durable.get(&chunk) {
                    Some(c) => std::borrow::Cow::Borrowed(&c[..]),
                    None => std::borrow::Cow::Owned(self.base_chunk(chunk)?.into_vec()),
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
    }
}
