//! Snapshot files: a versioned, checksummed image of a stopped machine.
//!
//! A snapshot is a [`sections`] container (magic `WIOSNAP\0`) whose sections are, in order:
//!
//! ```text
//! meta                      what the snapshot is of: arch, seed, time, artifacts (postcard)
//! one section per component engine, devices, clock, event queue, faults, promises, trace, ...
//!                           (postcard, each the `State` of the component's `Persist` impl)
//! memory                    run count u64, runs: first page u64, page count u64, bytes
//!                           (guest memory, zero pages left out)
//! ```
//!
//! Each section carries its own SHA-256, so a damaged snapshot names the section that is
//! damaged, and a restore names the component whose state is missing or refused. The file is
//! written to a temporary name and renamed into place only once complete and synced, so a
//! full disk or a crash never leaves a file that looks valid. Reading checks magic, version,
//! length and checksums before decoding anything, and every decoded length is bounded, so a
//! damaged file is a one-line error, never a panic. What bumps the major and the minor
//! version is said in [`sections`].

pub mod persist;
pub mod plan;
pub mod sections;
pub mod sha;

use crate::error::{Result, WioError};
pub use crate::memory::PAGE;
use persist::StateSections;
use sections::Format;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::io::Write;
use std::path::{Path, PathBuf};

/// First bytes of every snapshot file.
pub const MAGIC: &[u8; 8] = b"WIOSNAP\0";
/// First bytes of every world snapshot file (`world::snapshot`).
pub const WORLD_MAGIC: &[u8; 8] = b"WIOWORLD";
/// The machine snapshot format this wio writes and reads (see [`sections`] for what bumps
/// which version). Major 7: the machine state in named sections, one per component (before
/// 7 it was one postcard blob; version 6's files are refused with the version message).
/// Minor 1: the optional `vmgenid` section of riscv64 machines (7.0 files have none: their
/// machines had no VM generation ID, and restore without one). Minor 2: the `stalls`
/// section of riscv64 machines (older files have none: their CPUs never stalled, and
/// restore without stalls until a branch re-keys them) and `pending` (what the next step
/// does first: idle a hart stopped at WFI, or fire the device events it stopped for; older
/// files were never taken between the two). Minor 3: a virtio-console device state may be
/// `ComposerConsole` (the test composer's port; a variant added last, so 7.2 files read as
/// before). Minor 4: the `counters` section of riscv64 machines whose guest wrote mcycle or
/// minstret (older wio ignored such writes: their files have none), and the `vector`
/// section of riscv64 machines with the vector extension (which older wio did not have).
/// Minor 5: x86-64 machines' `promises` (the promise channel's ledger: an x86-64 Linux
/// guest has the channel in its last virtio slot; older files have neither), `boots`
/// (restarts, stopped time) and `power` (a vCPU paused, off or booting; older x86-64
/// machines took no node faults). Minor 6: the optional `code-cache` section of riscv64
/// machines (unchecked decoded instructions and built blocks, written and used under
/// WIO_WARM_CACHES=1: a restore starts with the caches the running hart had; files without
/// it restore with cold caches, as before).
pub const FORMAT: Format = Format {
    magic: MAGIC,
    major: 7,
    minor: 6,
    what: "wio snapshot",
    first_major: 7,
};
/// The section a snapshot's metadata is in (the first).
pub const META: &str = "meta";
/// The section its guest memory is in (the last).
pub const MEMORY: &str = "memory";
/// Largest guest memory a snapshot may describe.
pub const MAX_MEMORY: u64 = 64 << 30;

/// A virtio-blk base image as the snapshot saw it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiskMeta {
    /// Where it was (absolute when it could be made so).
    pub path: PathBuf,
    /// Its length in bytes.
    pub len: u64,
    /// SHA-256 of its contents: the overlay in the snapshot only makes sense on these bytes.
    pub sha256: String,
}

/// What a snapshot is of: enough to check a restore against and to rebuild the machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Meta {
    /// "riscv64" or "x86_64".
    pub arch: String,
    /// The wio version that wrote it.
    pub wio_version: String,
    /// The seed the run had when the snapshot was taken.
    pub seed: u64,
    /// Virtual time of the snapshot.
    pub virtual_ns: u64,
    /// Retired instructions (riscv64).
    pub instructions: Option<u64>,
    /// Why it was taken ("virtual time 2000000000 ns", "console \"ready\"", "guest request 7").
    pub reason: String,
    /// Guest-physical base of RAM.
    pub mem_base: u64,
    /// RAM size in bytes.
    pub mem_bytes: u64,
    /// SHA-256 of the kernel the run booted.
    pub kernel_sha256: String,
    /// SHA-256 of its initrd.
    pub initrd_sha256: Option<String>,
    /// Kernel command line.
    pub cmdline: String,
    /// Unix seconds at virtual time 0.
    pub epoch_unix: i64,
    /// The root disk, if any.
    pub disk: Option<DiskMeta>,
    /// Simulated link: latency, jitter (ns), loss, duplication (ppm).
    pub link: [u64; 4],
    /// Where the kernel was (riscv64: a machine restored from the snapshot reads it again
    /// to boot after a crash fault, checked against `kernel_sha256`).
    #[serde(default)]
    pub kernel_path: Option<PathBuf>,
    /// Where the initrd was.
    #[serde(default)]
    pub initrd_path: Option<PathBuf>,
    /// Where the M-mode firmware was (riscv64 `--firmware`).
    #[serde(default)]
    pub firmware_path: Option<PathBuf>,
    /// SHA-256 of that firmware.
    #[serde(default)]
    pub firmware_sha256: Option<String>,
    /// RAM is ECC memory (riscv64 `--ecc`).
    #[serde(default)]
    pub ecc: bool,
    /// The hart's optional extensions (riscv64 `--isa`; RV64GC in snapshots from before it).
    #[serde(default)]
    pub isa: wio_riscv::Isa,
}

impl Meta {
    /// The link fields as `Meta::link` records them.
    pub fn link_fields(l: &wio_virtio_devices::Link) -> [u64; 4] {
        [l.latency_ns, l.jitter_ns, l.loss_ppm, l.duplicate_ppm]
    }

    /// The seed a restore runs with (`seed` when the command line gave one, else the
    /// snapshot's), and the seed to re-key every stream from when it is not the snapshot's.
    pub fn restore_seed(&self, seed: Option<u64>) -> (u64, Option<wio_scheduler::RunSeed>) {
        let seed = seed.unwrap_or(self.seed);
        (
            seed,
            (seed != self.seed).then_some(wio_scheduler::RunSeed(seed)),
        )
    }

    /// The simulated link the snapshot's devices were built with (a restore rebuilds them so).
    pub fn link(&self) -> wio_virtio_devices::Link {
        let [latency_ns, jitter_ns, loss_ppm, duplicate_ppm] = self.link;
        wio_virtio_devices::Link {
            latency_ns,
            jitter_ns,
            loss_ppm,
            duplicate_ppm,
        }
    }
}

/// A snapshot in memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// What it is of.
    pub meta: Meta,
    /// The engine's, devices' and run's state, a section per component
    /// (architecture-specific).
    pub state: StateSections,
    /// Non-zero guest memory: (first page index, bytes of whole pages).
    pub memory: Vec<(u64, Vec<u8>)>,
    /// The file's checksum (hex), once read or written; names the snapshot in reports.
    pub sha256: String,
}

fn bad(path: &Path, reason: String) -> WioError {
    WioError::ArtifactFormat {
        what: "snapshot",
        path: path.to_path_buf(),
        reason,
    }
}

/// Writes `bytes` to `path` atomically: a temporary file in the same folder, synced, then
/// renamed; on failure nothing that looks like a snapshot is left behind. Returns the size.
pub fn write_atomic(path: &Path, bytes: &[u8], what: &'static str) -> Result<u64> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| what.into());
    let tmp = dir.join(format!(".{name}.partial-{}", std::process::id()));
    let result = (|| -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if let Err(source) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(WioError::Output {
            what,
            path: path.to_path_buf(),
            source,
        });
    }
    Ok(bytes.len() as u64)
}

/// Runs of non-zero pages of `ram` (whose length is a multiple of [`PAGE`]).
pub fn memory_runs(ram: &[u8]) -> Vec<(u64, Vec<u8>)> {
    let page = PAGE as usize;
    let mut runs: Vec<(u64, Vec<u8>)> = Vec::new();
    let mut open: Option<(u64, usize, usize)> = None; // (first page, start, end) in bytes
    static ZERO: [u8; PAGE as usize] = [0; PAGE as usize];
    for (i, chunk) in ram.chunks(page).enumerate() {
        // A slice comparison is a memcmp: vectorized, unlike a byte loop.
        let zero = chunk == &ZERO[..chunk.len()];
        match (&mut open, zero) {
            (Some((_, _, end)), false) => *end += chunk.len(),
            (None, false) => open = Some((i as u64, i * page, i * page + chunk.len())),
            (Some(_), true) => {
                if let Some((first, start, end)) = open.take() {
                    runs.push((first, ram[start..end].to_vec()));
                }
            }
            (None, true) => {}
        }
    }
    if let Some((first, start, end)) = open {
        runs.push((first, ram[start..end].to_vec()));
    }
    runs
}

impl Snapshot {
    /// The file's bytes.
    pub fn encode(&self) -> Vec<u8> {
        let meta = postcard::to_stdvec(&self.meta).expect("snapshot metadata encodes");
        let mut memory =
            Vec::with_capacity(8 + self.memory.iter().map(|(_, b)| b.len() + 16).sum::<usize>());
        memory.extend_from_slice(&(self.memory.len() as u64).to_le_bytes());
        for (first, bytes) in &self.memory {
            memory.extend_from_slice(&first.to_le_bytes());
            memory.extend_from_slice(&(bytes.len() as u64 / PAGE).to_le_bytes());
            memory.extend_from_slice(bytes);
        }
        let mut sections: Vec<(&str, &[u8])> = vec![(META, &meta)];
        sections.extend(self.state.iter());
        sections.push((MEMORY, &memory));
        FORMAT.encode(&sections)
    }

    /// The checksum an encoded snapshot ends with.
    #[cfg(test)]
    pub fn checksum_of(encoded: &[u8]) -> String {
        crate::trace::hex(&encoded[encoded.len().saturating_sub(32)..])
    }

    /// Parses a file's bytes; `path` names it in errors.
    pub fn decode(path: &Path, bytes: &[u8]) -> Result<Snapshot> {
        if bytes.starts_with(WORLD_MAGIC) {
            return Err(bad(
                path,
                "is a world snapshot (several machines); restore it with `wio sim --from` or explore it with `wio explore --from`".into(),
            ));
        }
        if !bytes.starts_with(MAGIC) {
            return Err(bad(
                path,
                "is not a wio snapshot (no WIOSNAP header)".into(),
            ));
        }
        let file = FORMAT.decode(bytes).map_err(|e| bad(path, e.to_string()))?;
        let mut sections = file.sections.into_iter();
        let meta_bytes = match sections.next() {
            Some((META, b)) => b,
            _ => return Err(bad(path, "has no `meta` section first".into())),
        };
        let meta: Meta = persist::decode_whole(meta_bytes)
            .map_err(|e| bad(path, format!("has an unreadable `meta` section: {e}")))?;
        if meta.mem_bytes > MAX_MEMORY || !meta.mem_bytes.is_multiple_of(PAGE) {
            return Err(bad(
                path,
                format!("describes {} bytes of guest memory", meta.mem_bytes),
            ));
        }
        let mut state = Vec::new();
        let mut memory_bytes = None;
        for (name, payload) in sections {
            if memory_bytes.is_some() {
                return Err(bad(
                    path,
                    format!("has a `{name}` section after guest memory"),
                ));
            }
            if name == MEMORY {
                memory_bytes = Some(payload);
            } else {
                state.push((name.to_string(), payload.to_vec()));
            }
        }
        let memory_bytes =
            memory_bytes.ok_or_else(|| bad(path, "has no `memory` section".into()))?;
        let memory = memory_runs_of(path, memory_bytes, meta.mem_bytes / PAGE)?;
        Ok(Snapshot {
            meta,
            state: StateSections::from_parts(state),
            memory,
            sha256: crate::trace::hex(&file.sha256),
        })
    }

    /// Reads only the metadata at the start of the file (no checksum: for choosing how to
    /// restore it; [`Snapshot::read`] checks everything). Falls back to the full read for
    /// its error message when the start is damaged.
    pub fn peek_meta(path: &Path) -> Result<Meta> {
        use std::io::Read;
        let peek = || -> Option<Meta> {
            let mut f = std::fs::File::open(path).ok()?;
            let mut head = Vec::new();
            let first = (sections::HEADER + 1 + sections::MAX_NAME + 40) as u64;
            (&mut f).take(first).read_to_end(&mut head).ok()?;
            let (name, at, len) = sections::peek_first(&FORMAT, &head)?;
            if name != META || len > 1 << 20 {
                return None;
            }
            // The rest of the metadata, from where the head ended.
            let end = at + len;
            if head.len() < end {
                let more = (end - head.len()) as u64;
                f.take(more).read_to_end(&mut head).ok()?;
            }
            postcard::from_bytes(head.get(at..end)?).ok()
        };
        match peek() {
            Some(m) => Ok(m),
            None => Snapshot::read(path).map(|s| s.meta),
        }
    }

    /// Reads and checks the snapshot at `path`.
    pub fn read(path: &Path) -> Result<Snapshot> {
        let bytes = std::fs::read(path).map_err(|source| WioError::ArtifactIo {
            what: "snapshot",
            path: path.to_path_buf(),
            source,
        })?;
        Snapshot::decode(path, &bytes)
    }

    /// Writes the snapshot to `path` atomically (see [`write_atomic`]).
    pub fn write(&self, path: &Path) -> Result<u64> {
        write_atomic(path, &self.encode(), "snapshot")
    }
}

/// The guest memory runs of a `memory` section, checked against a RAM of `pages` pages:
/// in order, not overlapping, inside RAM, the section fully used.
fn memory_runs_of(path: &Path, bytes: &[u8], pages: u64) -> Result<Vec<(u64, Vec<u8>)>> {
    let short = || bad(path, "has a `memory` section that runs past its end".into());
    let mut at = 0usize;
    let u64_at = |at: &mut usize| -> Result<u64> {
        let b = bytes.get(*at..*at + 8).ok_or_else(short)?;
        *at += 8;
        Ok(u64::from_le_bytes(b.try_into().expect("8 bytes")))
    };
    let runs = u64_at(&mut at)?;
    let mut memory = Vec::new();
    let mut next_free = 0u64;
    for _ in 0..runs {
        let first = u64_at(&mut at)?;
        let count = u64_at(&mut at)?;
        if first < next_free || count == 0 || first.saturating_add(count) > pages {
            return Err(bad(
                path,
                format!("has a memory run of {count} pages at page {first} outside guest memory or out of order"),
            ));
        }
        next_free = first + count;
        let len = usize::try_from(count * PAGE).map_err(|_| short())?;
        let run = bytes.get(at..at.saturating_add(len)).ok_or_else(short)?;
        at += len;
        memory.push((first, run.to_vec()));
    }
    if at != bytes.len() {
        return Err(bad(path, "has trailing bytes after guest memory".into()));
    }
    Ok(memory)
}

/// Checks that a snapshot's machine is one this machine can be: the architecture, the RAM
/// base, and a RAM size within `mib` MiB.
pub fn check_machine(
    meta: &Meta,
    path: &Path,
    arch: &str,
    mem_base: u64,
    mib: std::ops::RangeInclusive<u64>,
) -> Result<()> {
    if meta.arch != arch {
        return Err(bad(
            path,
            format!(
                "is of an {} guest; run it with --arch {}",
                meta.arch, meta.arch
            ),
        ));
    }
    if meta.mem_base != mem_base || !mib.contains(&(meta.mem_bytes >> 20)) {
        return Err(bad(
            path,
            format!(
                "describes {} MiB of RAM at {:#x}, which this machine cannot have",
                meta.mem_bytes >> 20,
                meta.mem_base
            ),
        ));
    }
    Ok(())
}

/// The exit counts a snapshot's `run` section keeps, each by one of the `known` names the
/// machine counts exits by; `bad` words the refusal of an unknown one.
pub fn exit_counts(
    saved: &[(String, u64)],
    known: &[&'static str],
    bad: &dyn Fn(String) -> WioError,
) -> Result<std::collections::BTreeMap<&'static str, u64>> {
    let mut exits = std::collections::BTreeMap::new();
    for (k, v) in saved {
        let kind = known.iter().find(|e| **e == k).ok_or_else(|| {
            bad(format!(
                "has a `run` section that counts an unknown exit kind {k:?}"
            ))
        })?;
        exits.insert(*kind, *v);
    }
    Ok(exits)
}

/// SHA-256 of a file's contents, streamed; a file this process hashed already (same
/// device, inode, size and modification time) is not read again. A world's nodes often
/// boot from one base disk, and each node's snapshot checks its disk on load: the payment
/// world's four nodes hashed its 224 MiB disk four times per `wio explore` (7 % of three
/// branches' wall time).
pub fn file_sha256(path: &Path) -> std::io::Result<String> {
    use std::os::unix::fs::MetadataExt;
    /// (device, inode, size, mtime s, mtime ns) -> hex digest.
    type Key = (u64, u64, u64, i64, i64);
    static HASHED: std::sync::Mutex<std::collections::BTreeMap<Key, String>> =
        std::sync::Mutex::new(std::collections::BTreeMap::new());
    let mut f = std::fs::File::open(path)?;
    let m = f.metadata()?;
    let key = (m.dev(), m.ino(), m.size(), m.mtime(), m.mtime_nsec());
    if let Some(sha) = HASHED.lock().ok().and_then(|h| h.get(&key).cloned()) {
        return Ok(sha);
    }
    let mut h = Sha256::new();
    std::io::copy(&mut f, &mut h)?;
    let sha = crate::trace::hex(&h.finalize());
    if let Ok(mut hashed) = HASHED.lock() {
        hashed.insert(key, sha.clone());
    }
    Ok(sha)
}

/// A small riscv64 snapshot of `ram` taken with `seed` at `virtual_ns`, for tests of the
/// file formats (machine and world snapshots).
#[cfg(any(test, feature = "test-support"))]
pub fn test_snapshot(ram: &[u8], seed: u64, virtual_ns: u64) -> Snapshot {
    Snapshot {
        meta: Meta {
            arch: "riscv64".into(),
            wio_version: "test".into(),
            seed,
            virtual_ns,
            instructions: Some(virtual_ns),
            reason: "test".into(),
            mem_base: 0x8000_0000,
            mem_bytes: ram.len() as u64,
            kernel_sha256: "k".into(),
            initrd_sha256: None,
            cmdline: "console=ttyS0".into(),
            epoch_unix: 0,
            disk: None,
            link: [1, 2, 3, 4],
            kernel_path: None,
            initrd_path: None,
            firmware_path: None,
            firmware_sha256: None,
            ecc: false,
            isa: wio_riscv::Isa::default(),
        },
        state: {
            let mut state = StateSections::default();
            state.put("hart", &vec![7u8; 100]).expect("encodes");
            state.put("plic", &(1u32, 2u32)).expect("encodes");
            state
        },
        memory: memory_runs(ram),
        sha256: String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file hashed again in the same process gives the same digest without being read,
    /// and a file whose size or modification time changed is read again.
    #[test]
    fn file_digests_are_remembered_until_the_file_changes() {
        let dir = std::env::temp_dir().join(format!("wio-file-sha-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("disk.img");
        std::fs::write(&path, b"one").unwrap();
        let want = |bytes: &[u8]| crate::trace::hex(&Sha256::digest(bytes));
        assert_eq!(file_sha256(&path).unwrap(), want(b"one"));
        assert_eq!(file_sha256(&path).unwrap(), want(b"one"), "remembered");
        std::fs::write(&path, b"three").unwrap();
        assert_eq!(file_sha256(&path).unwrap(), want(b"three"), "size changed");
        let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        std::os::unix::fs::FileExt::write_all_at(&f, b"T", 0).unwrap();
        f.set_modified(std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(7))
            .unwrap();
        assert_eq!(
            file_sha256(&path).unwrap(),
            want(b"Three"),
            "modified in place"
        );
        let _ = std::fs::remove_dir_all(dir);
    }

    fn sample() -> Snapshot {
        let mut ram = vec![0u8; 16 * PAGE as usize];
        ram[5] = 1;
        ram[3 * PAGE as usize] = 2;
        ram[4 * PAGE as usize + 9] = 3;
        ram[15 * PAGE as usize + 4095] = 4;
        test_snapshot(&ram, 9, 123)
    }

    #[test]
    fn memory_runs_skip_zero_pages() {
        let s = sample();
        let firsts: Vec<(u64, usize)> = s.memory.iter().map(|(f, b)| (*f, b.len())).collect();
        assert_eq!(firsts, vec![(0, 4096), (3, 8192), (15, 4096)]);
    }

    #[test]
    fn round_trips_and_refuses_damage_without_panicking() {
        let mut s = sample();
        let bytes = s.encode();
        s.sha256 = Snapshot::checksum_of(&bytes);
        let p = Path::new("x.snap");
        assert_eq!(Snapshot::decode(p, &bytes).unwrap(), s);
        let msg = |b: &[u8]| Snapshot::decode(p, b).unwrap_err().to_string();
        assert!(msg(&bytes[..bytes.len() - 1]).contains("truncated"));
        assert!(msg(&bytes[..10]).contains("truncated"));
        assert!(msg(b"hello").contains("not a wio snapshot"));
        let mut flipped = bytes.clone();
        flipped[sections::HEADER + 1 + 4 + 40 + 3] ^= 1; // inside the `meta` payload
        assert!(msg(&flipped).contains("section `meta` does not match its checksum"));
        let mut other = bytes.clone();
        other[8] = FORMAT.major as u8 + 1;
        assert!(msg(&other).contains(&format!("version {}.{}", FORMAT.major + 1, FORMAT.minor)));
        let mut newer = bytes.clone();
        newer[12] = FORMAT.minor as u8 + 1;
        assert!(msg(&newer).contains(&format!("version {}.{}", FORMAT.major, FORMAT.minor + 1)));
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(msg(&longer).contains("corrupted"));
        // Every truncation and every single-byte corruption is an error, never a panic.
        for n in 0..bytes.len() {
            assert!(Snapshot::decode(p, &bytes[..n]).is_err());
        }
        let mut state = 0x1234_5678_9abc_def0u64;
        for _ in 0..2000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let mut b = bytes.clone();
            let i = (state % b.len() as u64) as usize;
            b[i] ^= (state >> 32) as u8 | 1;
            assert!(Snapshot::decode(p, &b).is_err());
        }
    }

    /// Exit counts come back by the machine's own names; a name it does not count is
    /// refused, named.
    #[test]
    fn exit_counts_take_known_kinds_and_refuse_others() {
        let bad = |reason: String| WioError::ArtifactFormat {
            what: "snapshot",
            path: PathBuf::from("s"),
            reason,
        };
        let known = ["wfi", "mmio"];
        let saved = vec![("mmio".to_string(), 3), ("wfi".to_string(), 5)];
        let got = exit_counts(&saved, &known, &bad).unwrap();
        assert_eq!(
            got.into_iter().collect::<Vec<_>>(),
            [("mmio", 3), ("wfi", 5)]
        );
        let e = exit_counts(&[("hlt".to_string(), 1)], &known, &bad).unwrap_err();
        assert!(e.to_string().contains("unknown exit kind \"hlt\""), "{e}");
    }

    #[test]
    fn one_corrupted_section_is_named() {
        let bytes = sample().encode();
        let file = FORMAT.decode(&bytes).unwrap();
        let p = Path::new("x.snap");
        for (name, payload) in &file.sections {
            let at = payload.as_ptr() as usize - bytes.as_ptr() as usize;
            let mut b = bytes.clone();
            b[at + payload.len() / 2] ^= 0x10;
            let err = Snapshot::decode(p, &b).unwrap_err().to_string();
            assert!(
                err.contains(&format!("section `{name}` does not match its checksum")),
                "{name}: {err}"
            );
        }
    }

    #[test]
    fn decoder_survives_well_formed_containers_around_garbage() {
        // Valid containers (lengths and checksums right) around garbage `meta`, state and
        // `memory` payloads: whatever the decoder accepts must be a consistent snapshot
        // (memory inside RAM, in order), which encodes back to the same bytes.
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let meta = postcard::to_stdvec(&sample().meta).unwrap();
        let (mut accepted, mut refused) = (0, 0);
        for round in 0..3000u64 {
            let mut garbage = |n: usize| -> Vec<u8> {
                (0..n)
                    .map(|_| {
                        state ^= state << 13;
                        state ^= state >> 7;
                        state ^= state << 17;
                        // Small numbers now and then, so length fields sometimes fit.
                        if state >> 60 == 0 {
                            (state >> 33) as u8 & 7
                        } else {
                            (state >> 33) as u8
                        }
                    })
                    .collect()
            };
            let mut memory = garbage((round % 64) as usize);
            if round % 3 == 0 {
                // A well-formed run count of zero or one run, then garbage.
                let n = memory.len().min(8);
                memory[..n].fill(0);
                if let Some(b) = memory.get_mut(0) {
                    *b = (round % 2) as u8;
                }
            }
            let meta = if round % 2 == 0 {
                meta.clone()
            } else {
                garbage(60)
            };
            let hart = garbage(10);
            let body = FORMAT.encode(&[(META, &meta), ("hart", &hart), (MEMORY, &memory)]);
            match Snapshot::decode(Path::new("fuzz"), &body) {
                Ok(s) => {
                    accepted += 1;
                    let pages = s.meta.mem_bytes / PAGE;
                    let mut next = 0;
                    for (first, run) in &s.memory {
                        assert!(*first >= next && !run.is_empty(), "round {round}");
                        next = first + run.len() as u64 / PAGE;
                        assert!(next <= pages, "round {round}: run past RAM");
                    }
                    let again = Snapshot::decode(Path::new("fuzz"), &s.encode()).unwrap();
                    assert_eq!(
                        (again.meta, again.state, again.memory),
                        (s.meta, s.state, s.memory),
                        "round {round}: what was accepted encodes back to itself"
                    );
                }
                Err(e) => {
                    refused += 1;
                    assert!(!e.to_string().is_empty());
                }
            }
        }
        assert!(
            accepted > 0 && refused > 0,
            "{accepted} accepted, {refused} refused"
        );
    }

    #[test]
    fn write_is_atomic_and_leaves_nothing_on_failure() {
        let dir = std::env::temp_dir().join(format!("wio-snap-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("a.snap");
        let mut s = sample();
        s.write(&p).unwrap();
        s.sha256 = Snapshot::checksum_of(&std::fs::read(&p).unwrap());
        assert_eq!(Snapshot::read(&p).unwrap(), s);
        let missing = dir.join("no-such-dir").join("b.snap");
        assert!(s.write(&missing).is_err());
        let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert_eq!(left.len(), 1, "only the complete snapshot is there");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
