//! Guest RAM: one contiguous region at a fixed physical base.
//!
//! The bytes live either in an allocation the [`Ram`] owns (tests, tools) or in
//! memory the machine maps and shares with its devices (a vm-memory mapping the
//! virtio devices use for their queues). The hart reaches them through a raw
//! pointer, so both the interpreter and the devices can access guest memory
//! without either holding a Rust reference across the other's accesses.

use std::any::Any;

/// Who keeps the bytes alive.
enum Backing {
    /// Allocated by [`Ram::new`]; freed on drop.
    Owned,
    /// Mapped by the machine; this value keeps the mapping alive.
    // Never read: held only so the mapping outlives the hart (dropped with the Ram).
    External(#[allow(dead_code)] Box<dyn Any>),
}

/// Guest RAM.
pub struct Ram {
    base: u64,
    ptr: *mut u8,
    len: usize,
    backing: Backing,
}

impl std::fmt::Debug for Ram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Ram {{ base: {:#x}, size: {:#x} }}", self.base, self.len)
    }
}

impl Drop for Ram {
    fn drop(&mut self) {
        if let Backing::Owned = self.backing {
            // SAFETY: `ptr`/`len` came from Box::into_raw of a boxed slice in Ram::new and
            // are released exactly once, here.
            unsafe {
                drop(Box::from_raw(std::ptr::slice_from_raw_parts_mut(
                    self.ptr, self.len,
                )))
            };
        }
    }
}

impl Clone for Ram {
    /// A copy of the bytes in a new allocation this value owns (never a shared mapping).
    fn clone(&self) -> Ram {
        let mut copy = Ram::new(self.base, self.len);
        copy.load(self.base, self.bytes());
        copy
    }
}

impl Ram {
    /// Where the pointer to the bytes lies in a `Ram` (compiled blocks read it).
    pub(crate) const PTR_OFFSET: usize = std::mem::offset_of!(Ram, ptr);

    /// Zeroed RAM of `size` bytes at physical `base`, owned by this value.
    pub fn new(base: u64, size: usize) -> Ram {
        let boxed: Box<[u8]> = vec![0u8; size].into_boxed_slice();
        let ptr = Box::into_raw(boxed) as *mut u8;
        Ram {
            base,
            ptr,
            len: size,
            backing: Backing::Owned,
        }
    }

    /// RAM backed by memory the caller mapped (shared with devices).
    ///
    /// # Safety
    /// `ptr` must be valid for reads and writes of `len` bytes for as long as
    /// `keep_alive` lives (it is dropped with the returned value), and no Rust
    /// reference into those bytes may be held while the hart runs.
    pub unsafe fn from_raw(base: u64, ptr: *mut u8, len: usize, keep_alive: Box<dyn Any>) -> Ram {
        Ram {
            base,
            ptr,
            len,
            backing: Backing::External(keep_alive),
        }
    }

    /// Physical base address.
    pub fn base(&self) -> u64 {
        self.base
    }

    /// Size in bytes.
    pub fn size(&self) -> u64 {
        self.len as u64
    }

    /// Offset of `size` bytes at `addr` inside RAM, if they all lie inside.
    #[inline(always)]
    pub fn offset(&self, addr: u64, size: u64) -> Option<usize> {
        let off = addr.wrapping_sub(self.base);
        if off < self.len as u64 && size <= self.len as u64 - off {
            Some(off as usize)
        } else {
            None
        }
    }

    /// Reads a little-endian value of `size` (1, 2, 4 or 8) bytes at offset `off`.
    #[inline(always)]
    pub fn read_at(&self, off: usize, size: u8) -> u64 {
        assert!(
            off <= self.len && usize::from(size) <= self.len - off,
            "RAM read out of bounds"
        );
        // SAFETY: the range was checked against `len`, and `ptr` is valid for `len` bytes
        // (Ram::new / the from_raw contract); unaligned reads are allowed.
        unsafe {
            let p = self.ptr.add(off);
            match size {
                1 => u64::from(*p),
                2 => u64::from(u16::from_le((p as *const u16).read_unaligned())),
                4 => u64::from(u32::from_le((p as *const u32).read_unaligned())),
                _ => u64::from_le((p as *const u64).read_unaligned()),
            }
        }
    }

    /// Writes the low `size` (1, 2, 4 or 8) bytes of `value` at offset `off`.
    #[inline(always)]
    pub fn write_at(&mut self, off: usize, size: u8, value: u64) {
        assert!(
            off <= self.len && usize::from(size) <= self.len - off,
            "RAM write out of bounds"
        );
        // SAFETY: as in read_at; `&mut self` orders this write with the hart's other accesses.
        unsafe {
            let p = self.ptr.add(off);
            match size {
                1 => *p = value as u8,
                2 => (p as *mut u16).write_unaligned((value as u16).to_le()),
                4 => (p as *mut u32).write_unaligned((value as u32).to_le()),
                _ => (p as *mut u64).write_unaligned(value.to_le()),
            }
        }
    }

    /// Copies `data` to physical `addr`; false if it does not fit.
    pub fn load(&mut self, addr: u64, data: &[u8]) -> bool {
        match self.offset(addr, data.len() as u64) {
            Some(off) => {
                // SAFETY: the destination range lies inside RAM (checked by offset).
                unsafe {
                    std::ptr::copy_nonoverlapping(data.as_ptr(), self.ptr.add(off), data.len())
                };
                true
            }
            None => false,
        }
    }

    /// The `len` bytes at physical `addr`, if they lie in RAM.
    pub fn slice(&self, addr: u64, len: u64) -> Option<&[u8]> {
        let off = self.offset(addr, len)?;
        // SAFETY: the range lies inside RAM; the borrow of `self` keeps the hart (the only
        // other writer while this reference lives) from running.
        Some(unsafe { std::slice::from_raw_parts(self.ptr.add(off), len as usize) })
    }

    /// The whole RAM, for hashing and snapshots.
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: `ptr` is valid for `len` bytes; see `slice`.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_writes_little_endian_unaligned() {
        let mut ram = Ram::new(0x8000_0000, 64);
        ram.write_at(3, 8, 0x1122_3344_5566_7788);
        assert_eq!(ram.read_at(3, 8), 0x1122_3344_5566_7788);
        assert_eq!(ram.read_at(3, 1), 0x88);
        assert_eq!(ram.read_at(4, 2), 0x6677);
        assert_eq!(ram.slice(0x8000_0003, 2).unwrap(), &[0x88, 0x77]);
        assert!(ram.load(0x8000_0000 + 60, &[1, 2, 3, 4]));
        assert!(!ram.load(0x8000_0000 + 61, &[1, 2, 3, 4]));
        let copy = ram.clone();
        ram.write_at(0, 1, 9);
        assert_eq!(copy.read_at(0, 1), 0, "a clone owns its own bytes");
        assert_eq!(copy.read_at(60, 1), 1);
        assert_eq!(ram.offset(0x8000_0000 + 64, 1), None);
    }

    #[test]
    #[should_panic(expected = "out of bounds")]
    fn out_of_bounds_read_panics_instead_of_reading_past_ram() {
        let ram = Ram::new(0, 16);
        ram.read_at(12, 8);
    }
}
