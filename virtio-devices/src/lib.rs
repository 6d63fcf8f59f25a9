//! virtio-mmio transport and the virtio block, network and entropy devices of wio.
//!
//! This crate is a skeleton for now: the devices issue fills it. Its rule is fixed
//! already: a device never looks at host time; it asks the scheduler *when* each
//! request completes, so completions are a function of the run seed.

/// The virtio-mmio transport version wio implements (the "modern" layout).
pub const VIRTIO_MMIO_VERSION: u32 = 2;

/// The magic value every virtio-mmio device reports at offset 0 ("virt").
pub const VIRTIO_MMIO_MAGIC: u32 = 0x7472_6976;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magic_spells_virt() {
        assert_eq!(&VIRTIO_MMIO_MAGIC.to_le_bytes(), b"virt");
    }
}
