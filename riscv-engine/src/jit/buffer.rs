//! Executable memory for compiled blocks: one bump-allocated mapping per hart, and the
//! epochs that tell whether a block's compiled code still lives in it. A leaf module so
//! the decoded-instruction cache (which owns a buffer) does not depend on the compiler.

use std::sync::atomic::{AtomicU64, Ordering};

/// Bytes of executable memory per hart (mapped on first touch); when full, all compiled
/// code is dropped and compiling starts over (blocks fall back to the interpreter until
/// recompiled). CPython's JSON tests compile 69 k blocks, which 16 MiB held only by
/// starting over (with the smaller caches of before, 23 times).
const CODE_BYTES: usize = 64 << 20;
/// Largest code one block may take (32 instructions of at most ~120 bytes, plus framing).
const MAX_BLOCK_CODE: usize = 8 << 10;

/// Identifies one filling of one code buffer: a block's compiled code is valid only
/// while its epoch is the buffer's (a clone of a hart, or a buffer that filled up
/// and started over, gets a new epoch). Never guest-visible.
static EPOCHS: AtomicU64 = AtomicU64::new(1);

fn next_epoch() -> u64 {
    EPOCHS.fetch_add(1, Ordering::Relaxed)
}

/// The executable memory of one hart and the bump allocator over it.
#[derive(Debug)]
pub(crate) struct CodeBuffer {
    base: *mut u8,
    used: usize,
    /// Bytes used before starting over ([`CODE_BYTES`]; tests make it small).
    pub(crate) capacity: usize,
    /// The current epoch (see [`EPOCHS`]).
    pub(crate) epoch: u64,
    /// Compiling is on (an x86-64 host, not turned off, and the buffer could be mapped).
    pub(crate) enabled: bool,
}

// SAFETY: the buffer is owned by one hart; its memory is written only through `&mut`
// (install) and run only by that hart, so moving or sharing the handle is sound.
unsafe impl Send for CodeBuffer {}
// SAFETY: as above: `&CodeBuffer` gives no access to the memory.
unsafe impl Sync for CodeBuffer {}

impl Default for CodeBuffer {
    fn default() -> Self {
        CodeBuffer {
            base: std::ptr::null_mut(),
            used: 0,
            capacity: CODE_BYTES,
            epoch: next_epoch(),
            enabled: cfg!(all(target_arch = "x86_64", target_os = "linux")),
        }
    }
}

impl Clone for CodeBuffer {
    /// An empty buffer with a new epoch: code compiled for one hart is never run by
    /// another (blocks copied with the hart keep their old epoch and recompile).
    fn clone(&self) -> Self {
        CodeBuffer {
            enabled: self.enabled,
            capacity: self.capacity,
            ..CodeBuffer::default()
        }
    }
}

impl Drop for CodeBuffer {
    fn drop(&mut self) {
        if !self.base.is_null() {
            // SAFETY: `base` was returned by mmap for CODE_BYTES bytes and is unmapped once.
            unsafe { libc::munmap(self.base.cast(), CODE_BYTES) };
        }
    }
}

impl CodeBuffer {
    /// Makes all compiled code unreachable (a new epoch) and reuses the memory.
    pub(crate) fn drop_code(&mut self) {
        self.used = 0;
        self.epoch = next_epoch();
    }

    /// Copies `code` into executable memory, or `None` when compiling is off or the
    /// memory cannot be mapped (then compiling stays off for this hart). A full buffer
    /// starts over under a new epoch, which invalidates everything compiled before.
    pub(crate) fn install(&mut self, code: &[u8]) -> Option<usize> {
        if !self.enabled || code.len() > MAX_BLOCK_CODE {
            return None;
        }
        if self.base.is_null() {
            // SAFETY: an anonymous private mapping; no existing memory is affected.
            let p = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    CODE_BYTES,
                    libc::PROT_READ | libc::PROT_WRITE | libc::PROT_EXEC,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                    -1,
                    0,
                )
            };
            if p == libc::MAP_FAILED {
                self.enabled = false;
                return None;
            }
            self.base = p.cast();
        }
        if self.used + code.len() > self.capacity.min(CODE_BYTES) {
            self.used = 0;
            self.epoch = next_epoch();
        }
        // SAFETY: `used + len <= CODE_BYTES` (checked above; `used` starts at 0), the mapping is writable,
        // and no compiled code of the current epoch lies in the bytes written (they are
        // past `used`, or the epoch just changed).
        let at = unsafe {
            let at = self.base.add(self.used);
            std::ptr::copy_nonoverlapping(code.as_ptr(), at, code.len());
            at
        };
        self.used = (self.used + code.len() + 15) & !15;
        Some(at as usize)
    }
}
