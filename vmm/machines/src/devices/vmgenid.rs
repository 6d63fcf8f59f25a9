//! The VM generation ID device (Linux's `vmgenid` driver): 16 bytes that name this
//! generation of the machine, and an interrupt that says they changed. riscv64 machines
//! announce it in the device tree (`microsoft,vmgenid`, a register window that reads the
//! ID); x86-64 machines in their ACPI tables (a `VMGENCTR` device whose `ADDR` names 16
//! bytes of reserved guest memory, and a Generic Event Device whose interrupt notifies it:
//! `arch/x86_64/acpi.rs`). When the kernel sees a new ID it reseeds its CRNG at once
//! (`add_vmfork_randomness`), which is what makes entropy fork: without it every branch of a
//! snapshot shares the CRNG state in guest memory, and a process started after the
//! snapshot point reads the same `getrandom` bytes and gets the same ASLR layout in every
//! branch.
//!
//! The ID is drawn from the run's seed (stream [`stream_names::VMGENID`]) at boot, and
//! again from the branch's seed at every restore with another seed; a restore with the
//! snapshot's own seed keeps it (the run goes on bit for bit). The riscv64 register window
//! reads the ID at offsets 0..16 with any access width, zero above; writes are ignored.

use serde::{Deserialize, Serialize};
use wio_scheduler::{stream_names, RunSeed};

/// Bytes of the ID.
pub const ID_LEN: usize = 16;

/// The device: its current ID.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VmGenId {
    id: [u8; ID_LEN],
}

impl VmGenId {
    /// The ID of a machine of `seed` at virtual time `at_ns` (the time is mixed in, so two
    /// re-keys with one seed at different points still give different IDs).
    pub fn drawn(seed: RunSeed, at_ns: u64) -> VmGenId {
        let mut id = [0u8; ID_LEN];
        seed.stream(stream_names::VMGENID).fill_bytes(&mut id);
        for (b, t) in id.iter_mut().zip(at_ns.to_le_bytes()) {
            *b ^= t;
        }
        VmGenId { id }
    }

    /// The ID, as the guest reads it.
    pub fn id(&self) -> [u8; ID_LEN] {
        self.id
    }

    /// Reads `data.len()` bytes at `offset` of the register window.
    pub fn read(&self, offset: u64, data: &mut [u8]) {
        for (i, b) in data.iter_mut().enumerate() {
            *b = usize::try_from(offset)
                .ok()
                .and_then(|o| o.checked_add(i))
                .and_then(|at| self.id.get(at))
                .copied()
                .unwrap_or(0);
        }
    }
}

// The device is its 16 bytes: every value is one it can hold.
crate::persist_registers!(VmGenId);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_follow_the_seed_and_the_time_and_read_at_any_width() {
        let a = VmGenId::drawn(RunSeed(1), 0);
        assert_eq!(a, VmGenId::drawn(RunSeed(1), 0), "a function of the seed");
        assert_ne!(a.id(), VmGenId::drawn(RunSeed(2), 0).id());
        assert_ne!(a.id(), VmGenId::drawn(RunSeed(1), 5).id());
        let mut word = [0u8; 8];
        a.read(8, &mut word);
        assert_eq!(word, a.id()[8..]);
        let mut byte = [0u8; 1];
        a.read(15, &mut byte);
        assert_eq!(byte[0], a.id()[15]);
        let mut past = [0xffu8; 4];
        a.read(14, &mut past);
        assert_eq!(past, [a.id()[14], a.id()[15], 0, 0]);
        a.read(u64::MAX, &mut past);
        assert_eq!(past, [0; 4]);
    }
}
