//! What kind of virtualization this host offers, read from loaded kernel modules.
//!
//! `kvm_intel`/`kvm_amd` mean hardware virtualization: guests run at native
//! speed and the CPUID profile is enforced. `kvm_pvm` means PVM: only small
//! ring-0 guests run (in KVM's instruction emulator) and the guest sees the
//! host's CPUID whatever wio sets.

use std::path::Path;

/// The host's virtualization.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostVirt {
    /// Intel VT-x or AMD-V through kvm_intel / kvm_amd.
    Hardware,
    /// PVM (kvm_pvm): software virtualization with emulated ring 0.
    Pvm,
    /// /dev/kvm exists but the backend is unknown.
    UnknownKvm,
    /// No /dev/kvm.
    None,
}

impl HostVirt {
    /// Detects the host from /sys/module and /dev/kvm.
    pub fn detect() -> HostVirt {
        Self::detect_in(Path::new("/sys/module"), Path::new("/dev/kvm"))
    }

    /// Detection against given paths (for tests).
    pub fn detect_in(sys_module: &Path, dev_kvm: &Path) -> HostVirt {
        if !dev_kvm.exists() {
            return HostVirt::None;
        }
        if sys_module.join("kvm_intel").exists() || sys_module.join("kvm_amd").exists() {
            HostVirt::Hardware
        } else if sys_module.join("kvm_pvm").exists() {
            HostVirt::Pvm
        } else {
            HostVirt::UnknownKvm
        }
    }

    /// Short name for summaries.
    pub fn name(self) -> &'static str {
        match self {
            HostVirt::Hardware => "hardware",
            HostVirt::Pvm => "pvm",
            HostVirt::UnknownKvm => "unknown-kvm",
            HostVirt::None => "none",
        }
    }

    /// Whether the guest sees the CPUID profile wio sets.
    pub fn enforces_cpuid(self) -> bool {
        self == HostVirt::Hardware
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_from_module_directories() {
        let dir = std::env::temp_dir().join(format!("wio-host-test-{}", std::process::id()));
        let modules = dir.join("module");
        let kvm = dir.join("kvm");
        std::fs::create_dir_all(&modules).unwrap();
        assert_eq!(HostVirt::detect_in(&modules, &kvm), HostVirt::None);
        std::fs::write(&kvm, b"").unwrap();
        assert_eq!(HostVirt::detect_in(&modules, &kvm), HostVirt::UnknownKvm);
        std::fs::create_dir_all(modules.join("kvm_pvm")).unwrap();
        assert_eq!(HostVirt::detect_in(&modules, &kvm), HostVirt::Pvm);
        std::fs::create_dir_all(modules.join("kvm_intel")).unwrap();
        assert_eq!(HostVirt::detect_in(&modules, &kvm), HostVirt::Hardware);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
