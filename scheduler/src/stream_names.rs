//! The names of every random stream wio splits from the run seed.
//!
//! A stream's values are a function of the run seed and its name alone (see
//! [`crate::streams`]), so the rule is: **one name per subsystem and per kind of
//! fault or decision**. Then adding or removing a draw in one stream never shifts
//! the values of another: a new fault kind gets a new name instead of drawing from an
//! existing stream, and a device that starts drawing one value more per request
//! changes only what that device does.
//!
//! The names are part of the determinism contract: changing a string here (or how
//! [`sub`] joins a device and a part) changes the values of that stream, and so the
//! guest's run and its trace, for every existing seed. Add names; do not edit them.
//!
//! A virtio device is built with its device name (say [`VIRTIO_NET`]) and splits its
//! own streams from it with [`sub`], one per part (`"virtio-net/link"`,
//! `"virtio-net/stack"`), so two devices of one kind under different names never
//! share a stream.

// Streams the machine draws from directly.

/// The x86-64 kernel's RNG seed (the `SETUP_RNG_SEED` setup_data entry of the boot protocol).
pub const X86_BOOT_RNG_SEED: &str = "x86-boot-rng-seed";
/// The riscv64 device tree's `/chosen/rng-seed`.
pub const RISCV_FDT_RNG_SEED: &str = "riscv-fdt-rng-seed";
/// The flight I/O board's simulated world (riscv64 M-mode guests): the sensor's noise
/// and the disturbance acting on the plant.
pub const FLIGHT_IO: &str = "flight-io";
/// Random bytes the bare-metal promise port hands out (riscv64 M-mode guests).
pub const SDK_PORT: &str = "sdk-port";
/// The values the x86-64 paravirtual port hands a guest that selects its entropy register.
pub const PARAVIRT_ENTROPY: &str = "paravirt-entropy";
/// The timer interrupt's extra latency (CPU-timing noise: where the guest is preempted).
pub const SCHED_NOISE_TIMER: &str = "sched-noise-timer";
/// Where and how long a running riscv64 CPU stalls (CPU-timing noise: how much work gets
/// done between two wake-ups).
pub const SCHED_NOISE_STALL: &str = "sched-noise-stall";
/// The riscv64 machine's clock drift (ppm of its oscillator against virtual time), drawn
/// once at boot and again when a snapshot is restored with another seed.
pub const CLOCK_DRIFT: &str = "clock-drift";
/// The VM generation ID (riscv64 `microsoft,vmgenid`): drawn at boot and again at every
/// restore with another seed, so the guest's kernel reseeds its CRNG in each branch.
pub const VMGENID: &str = "vmgenid";

// Streams of the explorer (not of a machine): its own choices, from `wio explore --search-seed`.

/// Which moment of the frontier each branch of a guided exploration starts from.
pub const EXPLORE_FRONTIER: &str = "explore-frontier";
/// The seed each branch of a guided exploration runs with from its moment.
pub const EXPLORE_SEEDS: &str = "explore-seeds";

// Device names: what the machine passes to each virtio device as its `name`.

/// The virtio entropy device (slot 0).
pub const VIRTIO_RNG: &str = "virtio-rng";
/// The virtio network device (slot 1).
pub const VIRTIO_NET: &str = "virtio-net";
/// The virtio block device (slot 2, when the run has a disk).
pub const VIRTIO_BLK: &str = "virtio-blk";
/// virtio-console: the guest's channel to wio (promises, seeded random bytes).
pub const VIRTIO_CONSOLE: &str = "virtio-console";

// Parts: the per-device streams, joined to a device name with [`sub`].

/// The bytes a device hands the guest (virtio-rng's entropy).
pub const BYTES: &str = "bytes";
/// Per-request service latencies (virtio-rng, virtio-blk).
pub const LATENCY: &str = "latency";
/// The link's behaviour: loss, duplication, delays and transmit service times (virtio-net).
pub const LINK: &str = "link";
/// The one value that seeds the network peer's TCP/IP stack (virtio-net).
pub const STACK: &str = "stack";
/// The draws of injected faults in force (virtio-net: fault loss, duplication and
/// reordering); drawn from only while such a fault is in force.
pub const FAULTS: &str = "faults";
/// Which sectors rot and which bit flips under a bit-rot fault (virtio-blk); drawn from
/// only while such a fault is in force.
pub const BIT_ROT: &str = "bit-rot";
/// How much of each cached chunk a torn power cut keeps (virtio-blk); drawn from only at
/// such a cut.
pub const TORN: &str = "torn";

/// The stream of the `n`-th fault-profile rule of `kind` (0 for a kind's first rule):
/// `fault-<kind>`, then `fault-<kind>-<n>`. One stream per rule, so removing a rule or
/// a fault never shifts another's draws.
pub fn fault(kind: &str, n: usize) -> String {
    if n == 0 {
        format!("fault-{kind}")
    } else {
        format!("fault-{kind}-{n}")
    }
}

/// Every top-level name above (streams and device names), for checks.
pub const ALL: &[&str] = &[
    X86_BOOT_RNG_SEED,
    RISCV_FDT_RNG_SEED,
    FLIGHT_IO,
    SDK_PORT,
    PARAVIRT_ENTROPY,
    SCHED_NOISE_TIMER,
    SCHED_NOISE_STALL,
    CLOCK_DRIFT,
    VMGENID,
    VIRTIO_RNG,
    VIRTIO_NET,
    VIRTIO_BLK,
    VIRTIO_CONSOLE,
];

/// Every part above, for checks.
pub const ALL_PARTS: &[&str] = &[BYTES, LATENCY, LINK, STACK, FAULTS, BIT_ROT, TORN];

/// The name of `device`'s stream `part`: `"{device}/{part}"` (for example
/// `sub(VIRTIO_NET, LINK)` is `"virtio-net/link"`).
pub fn sub(device: &str, part: &str) -> String {
    format!("{device}/{part}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn all_names_are_distinct() {
        let top: BTreeSet<&str> = ALL.iter().copied().collect();
        assert_eq!(top.len(), ALL.len(), "a top-level name is used twice");
        let parts: BTreeSet<&str> = ALL_PARTS.iter().copied().collect();
        assert_eq!(parts.len(), ALL_PARTS.len(), "a part is used twice");
        // Neither may contain the separator, so every derived name is unambiguous and
        // cannot collide with a top-level name.
        for name in ALL.iter().chain(ALL_PARTS) {
            assert!(!name.is_empty() && !name.contains('/'), "{name:?}");
        }
        let mut every: BTreeSet<String> = top.iter().map(|s| s.to_string()).collect();
        for device in [VIRTIO_RNG, VIRTIO_NET, VIRTIO_BLK] {
            for part in ALL_PARTS {
                assert!(every.insert(sub(device, part)), "{device}/{part}");
            }
        }
    }

    /// The strings are the determinism contract: these are the names runs used before
    /// the constants existed.
    #[test]
    fn derived_names_are_pinned() {
        assert_eq!(sub(VIRTIO_RNG, BYTES), "virtio-rng/bytes");
        assert_eq!(sub(VIRTIO_RNG, LATENCY), "virtio-rng/latency");
        assert_eq!(sub(VIRTIO_NET, LINK), "virtio-net/link");
        assert_eq!(sub(VIRTIO_NET, STACK), "virtio-net/stack");
        assert_eq!(sub(VIRTIO_BLK, LATENCY), "virtio-blk/latency");
        assert_eq!(sub(VIRTIO_NET, FAULTS), "virtio-net/faults");
    }
}
