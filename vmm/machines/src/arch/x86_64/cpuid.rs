//! The fixed CPUID profile of wio's x86-64 vCPU.
//!
//! The profile is data, not a copy of the host, so a run replays on another
//! host. It hides everything that would let the guest read host time or host
//! entropy (TSC, TSC-deadline, invariant TSC, RDTSCP, RDRAND, RDSEED), the KVM
//! paravirt leaves (kvmclock), and the local APIC/x2APIC: the guest runs in PIC
//! mode with wio's 8259 and 8254.

use kvm_bindings::{kvm_cpuid_entry2, CpuId, KVM_CPUID_FLAG_SIGNIFCANT_INDEX};

/// One profile entry: (function, index, eax, ebx, ecx, edx).
type Leaf = (u32, u32, u32, u32, u32, u32);

/// Packs 4 ASCII bytes little-endian into a register, as CPUID strings are laid out.
const fn reg(s: &[u8; 4]) -> u32 {
    u32::from_le_bytes(*s)
}

/// Feature bits of leaf 1 EDX the profile exposes (TSC bit 4 and APIC bit 9 are absent).
pub const LEAF1_EDX: u32 = (1 << 0) // FPU
    | (1 << 1) // VME
    | (1 << 2) // DE
    | (1 << 3) // PSE
    | (1 << 5) // MSR
    | (1 << 6) // PAE
    | (1 << 7) // MCE
    | (1 << 8) // CX8
    | (1 << 11) // SEP
    | (1 << 13) // PGE
    | (1 << 15) // CMOV
    | (1 << 16) // PAT
    | (1 << 17) // PSE36
    | (1 << 19) // CLFSH
    | (1 << 23) // MMX
    | (1 << 24) // FXSR
    | (1 << 25) // SSE
    | (1 << 26); // SSE2

/// Feature bits of leaf 1 ECX (no x2APIC 21, TSC-deadline 24, XSAVE 26, AVX 28, RDRAND 30).
pub const LEAF1_ECX: u32 = (1 << 0) // SSE3
    | (1 << 9) // SSSE3
    | (1 << 13) // CX16
    | (1 << 19) // SSE4.1
    | (1 << 20) // SSE4.2
    | (1 << 23) // POPCNT
    | (1 << 31); // running under a hypervisor

/// Bits the profile must never expose, checked by tests: (leaf, register name, bit, what).
pub const HIDDEN: [(u32, &str, u32, &str); 8] = [
    (1, "edx", 4, "TSC"),
    (1, "edx", 9, "APIC"),
    (1, "ecx", 21, "x2APIC"),
    (1, "ecx", 24, "TSC-deadline"),
    (1, "ecx", 30, "RDRAND"),
    (7, "ebx", 18, "RDSEED"),
    (0x8000_0001, "edx", 27, "RDTSCP"),
    (0x8000_0007, "edx", 8, "invariant TSC"),
];

/// The profile's leaves.
pub const PROFILE: [Leaf; 12] = [
    // Max basic leaf 7, vendor "GenuineIntel" so Linux takes its well-trodden Intel paths.
    (0, 0, 7, reg(b"Genu"), reg(b"ntel"), reg(b"ineI")),
    // Family 6, model 0x3a, stepping 9; 1 logical CPU, CLFLUSH line 8*8 bytes, APIC id 0.
    (1, 0, 0x0003_06a9, 0x0001_0800, LEAF1_ECX, LEAF1_EDX),
    (7, 0, 0, 0, 0, 0),
    // Hypervisor leaf: wio's own signature, so no guest enables KVM paravirt features (kvmclock).
    (
        0x4000_0000,
        0,
        0x4000_0000,
        reg(b"wiow"),
        reg(b"iowi"),
        reg(b"owio"),
    ),
    (0x8000_0000, 0, 0x8000_0008, 0, 0, 0),
    // LAHF in long mode; SYSCALL, NX, long mode (no RDTSCP, no 1 GiB pages).
    (0x8000_0001, 0, 0, 0, 1, (1 << 11) | (1 << 20) | (1 << 29)),
    (
        0x8000_0002,
        0,
        reg(b"wio "),
        reg(b"dete"),
        reg(b"rmin"),
        reg(b"isti"),
    ),
    (0x8000_0003, 0, reg(b"c vC"), reg(b"PU\0\0"), 0, 0),
    (0x8000_0004, 0, 0, 0, 0, 0),
    (0x8000_0006, 0, 0, 0, 0x0100_6040, 0),
    // No invariant TSC.
    (0x8000_0007, 0, 0, 0, 0, 0),
    // 40 physical, 48 virtual address bits.
    (0x8000_0008, 0, 0x0000_3028, 0, 0, 0),
];

/// Builds the KVM CPUID table for the profile.
pub fn profile() -> CpuId {
    let entries: Vec<kvm_cpuid_entry2> = PROFILE
        .iter()
        .map(|&(function, index, eax, ebx, ecx, edx)| kvm_cpuid_entry2 {
            function,
            index,
            flags: if function == 7 {
                KVM_CPUID_FLAG_SIGNIFCANT_INDEX
            } else {
                0
            },
            eax,
            ebx,
            ecx,
            edx,
            ..Default::default()
        })
        .collect();
    CpuId::from_entries(&entries).expect("the fixed profile is far below KVM_MAX_CPUID_ENTRIES")
}

/// Returns the names of hidden features that `entries` exposes (empty when the profile holds).
pub fn exposed_hidden_features(entries: &[kvm_cpuid_entry2]) -> Vec<&'static str> {
    let mut exposed = Vec::new();
    for &(leaf, register, bit, what) in HIDDEN.iter() {
        for e in entries
            .iter()
            .filter(|e| e.function == leaf && e.index == 0)
        {
            let value = match register {
                "eax" => e.eax,
                "ebx" => e.ebx,
                "ecx" => e.ecx,
                _ => e.edx,
            };
            if value & (1 << bit) != 0 {
                exposed.push(what);
            }
        }
    }
    // Any KVM paravirt signature ("KVMKVMKVM") would enable kvmclock.
    if entries
        .iter()
        .any(|e| e.function == 0x4000_0000 && e.ebx == reg(b"KVMK"))
    {
        exposed.push("KVM paravirt leaves");
    }
    exposed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profile_hides_every_time_and_entropy_source() {
        let cpuid = profile();
        assert!(exposed_hidden_features(cpuid.as_slice()).is_empty());
    }

    #[test]
    fn detector_catches_a_host_like_profile() {
        let mut entries = profile().as_slice().to_vec();
        for e in entries.iter_mut().filter(|e| e.function == 1) {
            e.edx |= 1 << 4;
            e.ecx |= 1 << 30;
        }
        assert_eq!(exposed_hidden_features(&entries), vec!["TSC", "RDRAND"]);
    }

    #[test]
    fn vendor_string_reads_genuine_intel() {
        let (_, _, _, b, c, d) = PROFILE[0];
        let mut s = Vec::new();
        for r in [b, d, c] {
            s.extend_from_slice(&r.to_le_bytes());
        }
        assert_eq!(&s, b"GenuineIntel");
    }
}
