//! Guest RAM: one contiguous region at a fixed physical base.

/// Guest RAM.
#[derive(Clone)]
pub struct Ram {
    base: u64,
    bytes: Vec<u8>,
}

impl std::fmt::Debug for Ram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Ram {{ base: {:#x}, size: {:#x} }}",
            self.base,
            self.bytes.len()
        )
    }
}

impl Ram {
    /// Zeroed RAM of `size` bytes at physical `base`.
    pub fn new(base: u64, size: usize) -> Ram {
        Ram {
            base,
            bytes: vec![0; size],
        }
    }

    /// Physical base address.
    pub fn base(&self) -> u64 {
        self.base
    }

    /// Size in bytes.
    pub fn size(&self) -> u64 {
        self.bytes.len() as u64
    }

    /// Offset of `size` bytes at `addr` inside RAM, if they all lie inside.
    #[inline]
    pub fn offset(&self, addr: u64, size: u64) -> Option<usize> {
        let off = addr.wrapping_sub(self.base);
        if off < self.bytes.len() as u64 && size <= self.bytes.len() as u64 - off {
            Some(off as usize)
        } else {
            None
        }
    }

    /// Reads a little-endian value of `size` bytes at offset `off` (checked by [`Ram::offset`]).
    #[inline(always)]
    pub fn read_at(&self, off: usize, size: u8) -> u64 {
        let b = &self.bytes[off..off + size as usize];
        match size {
            1 => u64::from(b[0]),
            2 => u64::from(u16::from_le_bytes([b[0], b[1]])),
            4 => u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            _ => u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]),
        }
    }

    /// Writes the low `size` bytes of `value` at offset `off`.
    #[inline(always)]
    pub fn write_at(&mut self, off: usize, size: u8, value: u64) {
        let le = value.to_le_bytes();
        self.bytes[off..off + size as usize].copy_from_slice(&le[..size as usize]);
    }

    /// Copies `data` to physical `addr`; false if it does not fit.
    pub fn load(&mut self, addr: u64, data: &[u8]) -> bool {
        match self.offset(addr, data.len() as u64) {
            Some(off) => {
                self.bytes[off..off + data.len()].copy_from_slice(data);
                true
            }
            None => false,
        }
    }

    /// Copies `len` bytes at physical `addr` out of RAM.
    pub fn slice(&self, addr: u64, len: u64) -> Option<&[u8]> {
        let off = self.offset(addr, len)?;
        Some(&self.bytes[off..off + len as usize])
    }

    /// The whole RAM, for hashing and snapshots.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}
