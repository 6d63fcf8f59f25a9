//! The built-in x86-64 test guest, compiled from `guest-kernel/x86_64-testguest`
//! by build.rs: the default guest of `wio run` on x86-64.

/// The test guest's ELF image.
pub static X86_64_TEST_GUEST: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/x86_64-testguest.elf"));

/// The same guest wrapped as a Linux bzImage (see build.rs), to test bzImage loading.
#[cfg(test)]
pub static X86_64_TEST_GUEST_BZIMAGE: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/x86_64-testguest.bzImage"));
