//! Checks an initrd before boot, so a corrupt or mistaken file is a one-line
//! error naming the problem instead of a kernel panic deep in the boot.
//!
//! Accepted: an uncompressed newc cpio archive, or a compressed one. gzip
//! streams are decompressed completely and the archive's first header is
//! checked; xz, zstd, lz4, bzip2 and lzma are recognised by their magic only.

use crate::error::{Result, WioError};
use std::io::Read;
use std::path::Path;

const CPIO_NEWC: &[u8] = b"070701";
const CPIO_NEWC_CRC: &[u8] = b"070702";

fn bad(path: &Path, reason: String) -> WioError {
    WioError::ArtifactFormat {
        what: "initrd",
        path: path.to_path_buf(),
        reason,
    }
}

fn is_cpio(head: &[u8]) -> bool {
    head.starts_with(CPIO_NEWC) || head.starts_with(CPIO_NEWC_CRC)
}

/// Validates `bytes` as an initrd; the error says what is wrong with it.
pub fn check(path: &Path, bytes: &[u8]) -> Result<()> {
    if bytes.is_empty() {
        return Err(bad(path, "is empty".into()));
    }
    if is_cpio(bytes) {
        return Ok(());
    }
    if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut decoder = flate2::read::MultiGzDecoder::new(bytes);
        let mut head = [0u8; 6];
        let mut sink = [0u8; 64 * 1024];
        decoder.read_exact(&mut head).map_err(|e| {
            bad(
                path,
                format!("is a gzip file that does not decompress ({e}); rebuild it"),
            )
        })?;
        if !is_cpio(&head) {
            return Err(bad(path, "decompresses to something that is not a newc cpio archive (070701); build it with `cpio -o -H newc`".into()));
        }
        loop {
            match decoder.read(&mut sink) {
                Ok(0) => return Ok(()),
                Ok(_) => {}
                Err(e) => {
                    return Err(bad(
                        path,
                        format!("is a corrupt or truncated gzip stream ({e}); rebuild it"),
                    ))
                }
            }
        }
    }
    const MAGICS: [(&[u8], &str); 5] = [
        (&[0xfd, b'7', b'z', b'X', b'Z', 0], "xz"),
        (&[0x28, 0xb5, 0x2f, 0xfd], "zstd"),
        (&[0x02, 0x21, 0x4c, 0x18], "lz4"),
        (b"BZh", "bzip2"),
        (&[0x5d, 0, 0], "lzma"),
    ];
    if MAGICS.iter().any(|(m, _)| bytes.starts_with(m)) {
        return Ok(());
    }
    Err(bad(
        path,
        "is neither a cpio archive nor a compressed one (gzip, xz, zstd, lz4, bzip2, lzma)".into(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn accepts_cpio_and_gzipped_cpio() {
        let cpio =
            b"070701000000000000000000000000000000000000000000000000000000000000".repeat(100);
        assert!(check(Path::new("a"), &cpio).is_ok());
        assert!(check(Path::new("a"), &gzip(&cpio)).is_ok());
    }

    #[test]
    fn rejects_corruption_with_a_reason() {
        let cpio = b"070701".repeat(10_000);
        let mut gz = gzip(&cpio);
        let n = gz.len();
        gz.truncate(n / 2);
        let e = check(Path::new("initrd.gz"), &gz).unwrap_err();
        assert!(
            e.to_string().contains("truncated") || e.to_string().contains("does not decompress"),
            "{e}"
        );
        let e = check(Path::new("x"), &gzip(b"hello world, not an archive")).unwrap_err();
        assert!(e.to_string().contains("not a newc cpio"), "{e}");
        let e = check(Path::new("x"), b"ELF garbage").unwrap_err();
        assert!(e.to_string().contains("neither a cpio"), "{e}");
        assert!(check(Path::new("x"), b"").is_err());
    }
}
