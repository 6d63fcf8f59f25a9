//! The one container every snapshot file uses (machine snapshots and world snapshots): a
//! header with a major and a minor format version, then named sections, each with its own
//! SHA-256, then one checksum over the header and the section table.
//!
//! Layout (integers little-endian):
//!
//! ```text
//! magic (8 bytes) | major u32 | minor u32 | total length u64 | section count u32
//! | per section: name length u8, name (ASCII), payload length u64, SHA-256 of the payload (32), payload
//! | SHA-256 of every byte before it except the payloads (32 bytes)
//! ```
//!
//! Each payload is hashed once (its section's digest) and the trailer covers the digests,
//! so a snapshot is checksummed in one pass over its bytes and a damaged payload is named:
//! "section `plic` is corrupted". The trailer is the file's identity (reports name a
//! snapshot by it).
//!
//! Versions: a reader takes its own major version and any minor version up to its own.
//! A **minor** bump only adds sections (an older file lacks them, and the component they
//! belong to starts from its default, which must be what an older wio did); any change to
//! the encoding of an existing section, or a section a restore cannot do without, is a
//! **major** bump. Section payloads are postcard (compact, not self-describing: a field
//! added to a state type is a new encoding, hence a major bump, or a new section).

use sha2::{Digest, Sha256};

/// Most sections one file may have.
pub const MAX_SECTIONS: usize = 4096;
/// Longest section name.
pub const MAX_NAME: usize = 64;
/// Bytes before the first section: magic, major, minor, total length, section count.
pub const HEADER: usize = 8 + 4 + 4 + 8 + 4;

/// Which kind of file, and the versions this wio writes and reads.
#[derive(Debug, Clone, Copy)]
pub struct Format {
    /// The file's first 8 bytes.
    pub magic: &'static [u8; 8],
    /// The major version written and the only one read.
    pub major: u32,
    /// The minor version written; older minors are read too.
    pub minor: u32,
    /// What the file is ("wio snapshot", "world snapshot"), for errors.
    pub what: &'static str,
    /// The first major version of this container; older files had one version number (a
    /// u32 where the major is now) and no minor.
    pub first_major: u32,
}

/// Why a container cannot be read. Each says what is wrong and, where it helps, what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ContainerError {
    /// Shorter than its header.
    #[error("is truncated ({0} bytes)")]
    Truncated(usize),
    /// Shorter than its header says.
    #[error("is truncated: {len} of {total} bytes (was it copied completely?)")]
    TruncatedTotal {
        /// Bytes there are.
        len: usize,
        /// Bytes the header says.
        total: u64,
    },
    /// Longer than its header says.
    #[error("is corrupted: {len} bytes where the header says {total}")]
    Length {
        /// Bytes there are.
        len: usize,
        /// Bytes the header says.
        total: u64,
    },
    /// A format version this wio does not read.
    #[error("is {what} format version {major}{}; this wio ({wio}) reads version {reads_major}.0 to {reads_major}.{reads_minor}: restore it with the wio that wrote it", minor.map(|m| format!(".{m}")).unwrap_or_default())]
    Version {
        /// The kind of file.
        what: &'static str,
        /// The file's major version.
        major: u32,
        /// The file's minor version (none in files older than this container).
        minor: Option<u32>,
        /// The major version this wio reads.
        reads_major: u32,
        /// The newest minor version this wio reads.
        reads_minor: u32,
        /// This wio's version.
        wio: &'static str,
    },
    /// The section table runs past the end or is malformed.
    #[error("is corrupted: its section table {0}")]
    Table(&'static str),
    /// Two sections have the same name.
    #[error("is corrupted: it has two sections `{0}`")]
    Duplicate(String),
    /// A section's payload does not match its digest.
    #[error("is corrupted: section `{0}` does not match its checksum")]
    Section(String),
    /// The header or the table does not match the trailer.
    #[error("is corrupted: its checksum does not match its contents")]
    Checksum,
}

/// A container's sections, borrowed from its bytes, in file order.
#[derive(Debug)]
pub struct Container<'a> {
    /// The file's minor version (at most the reader's).
    pub minor: u32,
    /// (name, payload) in file order.
    pub sections: Vec<(&'a str, &'a [u8])>,
    /// The trailer: the file's checksum.
    pub sha256: [u8; 32],
}

impl Format {
    /// The file's bytes: `sections` in order (names are ASCII, at most [`MAX_NAME`] bytes,
    /// unique: callers name their sections with constants).
    pub fn encode(&self, sections: &[(&str, &[u8])]) -> Vec<u8> {
        assert!(sections.len() <= MAX_SECTIONS, "too many snapshot sections");
        let size = HEADER
            + sections
                .iter()
                .map(|(n, p)| 1 + n.len() + 8 + 32 + p.len())
                .sum::<usize>()
            + 32;
        let mut out = Vec::with_capacity(size);
        out.extend_from_slice(self.magic);
        out.extend_from_slice(&self.major.to_le_bytes());
        out.extend_from_slice(&self.minor.to_le_bytes());
        out.extend_from_slice(&(size as u64).to_le_bytes());
        out.extend_from_slice(&(sections.len() as u32).to_le_bytes());
        let mut trailer = Sha256::new();
        trailer.update(&out);
        for (name, payload) in sections {
            assert!(
                name.len() <= MAX_NAME && name.is_ascii() && !name.is_empty(),
                "bad section name {name:?}"
            );
            let start = out.len();
            out.push(name.len() as u8);
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
            out.extend_from_slice(&Sha256::digest(payload));
            trailer.update(&out[start..]);
            out.extend_from_slice(payload);
        }
        out.extend_from_slice(&trailer.finalize());
        debug_assert_eq!(out.len(), size);
        out
    }

    /// Checks and splits a file's bytes (which start with this format's magic: the caller
    /// tells other files apart first). Every length is bounded by the bytes there are, so
    /// damage is an error, never a panic or a large allocation.
    pub fn decode<'a>(&self, bytes: &'a [u8]) -> Result<Container<'a>, ContainerError> {
        if bytes.len() < HEADER {
            return Err(ContainerError::Truncated(bytes.len()));
        }
        let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4"));
        let (major, minor) = (u32_at(8), u32_at(12));
        if major != self.major || minor > self.minor {
            return Err(ContainerError::Version {
                what: self.what,
                major,
                minor: (major >= self.first_major).then_some(minor),
                reads_major: self.major,
                reads_minor: self.minor,
                wio: env!("CARGO_PKG_VERSION"),
            });
        }
        let total = u64::from_le_bytes(bytes[16..24].try_into().expect("8"));
        if (bytes.len() as u64) < total {
            return Err(ContainerError::TruncatedTotal {
                len: bytes.len(),
                total,
            });
        }
        if bytes.len() as u64 != total || bytes.len() < HEADER + 32 {
            return Err(ContainerError::Length {
                len: bytes.len(),
                total,
            });
        }
        let count = u32_at(24) as usize;
        if count > MAX_SECTIONS {
            return Err(ContainerError::Table("claims too many sections"));
        }
        let end = bytes.len() - 32;
        let mut trailer = Sha256::new();
        trailer.update(&bytes[..HEADER]);
        let mut at = HEADER;
        let mut sections: Vec<(&str, &[u8])> = Vec::with_capacity(count);
        let mut damaged = None;
        for _ in 0..count {
            let start = at;
            let name_len = *bytes
                .get(at)
                .filter(|_| at < end)
                .ok_or(ContainerError::Table("runs past its end"))?
                as usize;
            let fixed = 1 + name_len + 8 + 32;
            if name_len == 0 || name_len > MAX_NAME || end - at < fixed {
                return Err(ContainerError::Table("runs past its end"));
            }
            let name = std::str::from_utf8(&bytes[at + 1..at + 1 + name_len])
                .ok()
                .filter(|n| n.is_ascii())
                .ok_or(ContainerError::Table(
                    "has a section name that is not ASCII",
                ))?;
            at += 1 + name_len;
            let len = u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8"));
            let digest = &bytes[at + 8..at + 40];
            at += 40;
            trailer.update(&bytes[start..at]);
            let len = usize::try_from(len).ok().filter(|&l| l <= end - at).ok_or(
                ContainerError::Table("has a section that runs past its end"),
            )?;
            let payload = &bytes[at..at + len];
            at += len;
            if sections.iter().any(|(n, _)| *n == name) {
                return Err(ContainerError::Duplicate(name.to_string()));
            }
            if damaged.is_none() && Sha256::digest(payload).as_slice() != digest {
                damaged = Some(name.to_string());
            }
            sections.push((name, payload));
        }
        if at != end {
            return Err(ContainerError::Table("is followed by stray bytes"));
        }
        if let Some(name) = damaged {
            return Err(ContainerError::Section(name));
        }
        let sum: [u8; 32] = bytes[end..].try_into().expect("32 bytes");
        if trailer.finalize().as_slice() != sum {
            return Err(ContainerError::Checksum);
        }
        Ok(Container {
            minor,
            sections,
            sha256: sum,
        })
    }
}

/// The first section's name and payload, read from the start of a file without checking
/// anything else (for choosing how to restore it before reading it whole); None when the
/// start is not a readable container of `format`.
pub fn peek_first(format: &Format, head: &[u8]) -> Option<(String, usize, usize)> {
    if head.len() < HEADER + 1 || &head[..8] != format.magic {
        return None;
    }
    let major = u32::from_le_bytes(head[8..12].try_into().ok()?);
    let minor = u32::from_le_bytes(head[12..16].try_into().ok()?);
    if major != format.major || minor > format.minor {
        return None;
    }
    let name_len = head[HEADER] as usize;
    let name = std::str::from_utf8(head.get(HEADER + 1..HEADER + 1 + name_len)?).ok()?;
    let len_at = HEADER + 1 + name_len;
    let len = u64::from_le_bytes(head.get(len_at..len_at + 8)?.try_into().ok()?);
    Some((name.to_string(), len_at + 40, usize::try_from(len).ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEST: Format = Format {
        magic: b"WIOTEST\0",
        major: 3,
        minor: 1,
        what: "test file",
        first_major: 2,
    };

    fn sample() -> Vec<u8> {
        TEST.encode(&[
            ("meta", b"abc"),
            ("plic", &[1, 2, 3, 4]),
            ("memory", &[0; 100]),
        ])
    }

    #[test]
    fn round_trips_in_order() {
        let bytes = sample();
        let c = TEST.decode(&bytes).unwrap();
        let names: Vec<&str> = c.sections.iter().map(|(n, _)| *n).collect();
        assert_eq!(names, ["meta", "plic", "memory"]);
        assert_eq!(c.sections[1].1, &[1, 2, 3, 4]);
        assert_eq!(c.minor, 1);
        assert_eq!(
            peek_first(&TEST, &bytes[..64]),
            Some(("meta".into(), HEADER + 1 + 4 + 40, 3))
        );
    }

    #[test]
    fn a_damaged_payload_names_its_section() {
        let mut bytes = sample();
        let at = bytes.len() - 32 - 100 - 40 - 7 - 1; // the last byte of `plic`'s payload
        bytes[at] ^= 1;
        assert_eq!(
            TEST.decode(&bytes).unwrap_err(),
            ContainerError::Section("plic".into())
        );
        let mut bytes = sample();
        let at = bytes.len() - 40;
        bytes[at] ^= 1;
        assert_eq!(
            TEST.decode(&bytes).unwrap_err(),
            ContainerError::Section("memory".into())
        );
    }

    #[test]
    fn damage_outside_payloads_fails_the_trailer_or_the_table() {
        let bytes = sample();
        let mut b = bytes.clone();
        b[24] ^= 1; // section count
        assert!(TEST.decode(&b).is_err());
        let mut b = bytes.clone();
        b[HEADER + 2] ^= 1; // a letter of `meta`
        assert_eq!(TEST.decode(&b).unwrap_err(), ContainerError::Checksum);
        let mut b = bytes.clone();
        let n = b.len();
        b[n - 1] ^= 1;
        assert_eq!(TEST.decode(&b).unwrap_err(), ContainerError::Checksum);
    }

    #[test]
    fn versions_same_major_older_minor_only() {
        let mut b = sample();
        b[12] = 0; // minor 0: older, readable (the trailer covers the header: recompute)
        let c = TEST.decode(&b);
        assert_eq!(c.unwrap_err(), ContainerError::Checksum);
        let older = Format { minor: 0, ..TEST };
        let old_file = older.encode(&[("meta", b"x")]);
        assert_eq!(TEST.decode(&old_file).unwrap().minor, 0);
        let newer = Format { minor: 2, ..TEST }.encode(&[("meta", b"x")]);
        let msg = TEST.decode(&newer).unwrap_err().to_string();
        assert!(msg.contains("version 3.2") && msg.contains("reads version 3.0 to 3.1"));
        let other_major = Format { major: 4, ..TEST }.encode(&[("meta", b"x")]);
        assert!(matches!(
            TEST.decode(&other_major),
            Err(ContainerError::Version { major: 4, .. })
        ));
        // A file of the format before this container: one version number, no minor.
        let mut legacy = old_file.clone();
        legacy[8..12].copy_from_slice(&1u32.to_le_bytes());
        let msg = TEST.decode(&legacy).unwrap_err().to_string();
        assert!(msg.contains("format version 1;"), "{msg}");
    }

    #[test]
    fn every_truncation_and_flip_is_an_error_never_a_panic() {
        let bytes = sample();
        for n in 0..bytes.len() {
            assert!(TEST.decode(&bytes[..n]).is_err(), "truncated to {n}");
        }
        for i in 0..bytes.len() {
            for bit in [0x01, 0x80] {
                let mut b = bytes.clone();
                b[i] ^= bit;
                assert!(TEST.decode(&b).is_err(), "byte {i} bit {bit:#x}");
            }
        }
    }

    #[test]
    fn duplicate_names_are_refused() {
        let b = TEST.encode(&[("a", b"1"), ("a", b"2")]);
        assert_eq!(
            TEST.decode(&b).unwrap_err(),
            ContainerError::Duplicate("a".into())
        );
    }
}
