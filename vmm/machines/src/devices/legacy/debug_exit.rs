//! The debug-exit port: the guest writes its exit status (8, 16 or 32 bits)
//! to port 0x501 and wio ends the run with that status.

/// The debug-exit port.
pub const DEBUG_EXIT_PORT: u16 = 0x501;

/// Decodes a little-endian port write of 1, 2 or 4 bytes as a status.
pub fn status_from(data: &[u8]) -> u32 {
    let mut b = [0u8; 4];
    let n = data.len().min(4);
    b[..n].copy_from_slice(&data[..n]);
    u32::from_le_bytes(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_widths() {
        assert_eq!(status_from(&[7]), 7);
        assert_eq!(status_from(&[1, 1]), 257);
        assert_eq!(status_from(&[3, 0, 0, 0]), 3);
        assert_eq!(status_from(&[]), 0);
    }
}
