//! A KVM call that failed, keeping the kernel's errno (or the cause it had).

use vmm_sys_util::errno;

/// A KVM call or a step of setting KVM up failed unexpectedly (an unusable KVM, or a bug).
#[derive(Debug, thiserror::Error)]
pub enum KvmError {
    /// An ioctl failed: which one, and the errno (kept as the error's source).
    #[error("{context}: {errno}")]
    Ioctl {
        /// The call that failed (`"KVM_SET_SREGS"`).
        context: &'static str,
        /// The errno the kernel returned.
        #[source]
        errno: errno::Error,
    },
    /// An MSR list did not fit KVM's list type.
    #[error("MSR list: {0}")]
    MsrList(#[source] vmm_sys_util::fam::Error),
    /// A guest memory region has no host address to give KVM.
    #[error("guest memory host address: {0}")]
    HostAddress(#[source] vm_memory::GuestMemoryError),
    /// The watchdog that bounds a KVM_RUN could not start.
    #[error("starting the watchdog: {0}")]
    Watchdog(#[source] std::io::Error),
    /// A snapshot's FPU state does not have x87's 8 and SSE's 16 registers.
    #[error("saved FPU state has {fpr} x87 and {xmm} SSE registers, not 8 and 16")]
    FpuShape {
        /// x87 registers saved.
        fpr: usize,
        /// SSE registers saved.
        xmm: usize,
    },
    /// KVM_RUN with immediate_exit set ran the guest instead of returning at once.
    #[error("KVM_RUN with immediate_exit ran the guest ({exit})")]
    RanAnyway {
        /// The exit it returned.
        exit: String,
    },
}

impl KvmError {
    /// The error of the ioctl `context` failing with `errno`.
    pub fn new(context: &'static str, errno: errno::Error) -> KvmError {
        KvmError::Ioctl { context, errno }
    }

    /// The errno the kernel returned, for a failed ioctl.
    pub fn errno(&self) -> Option<i32> {
        match self {
            KvmError::Ioctl { errno, .. } => Some(errno.errno()),
            _ => None,
        }
    }
}

/// KVM is missing or unusable on this host: the device cannot be opened or makes no VM.
#[derive(Debug, thiserror::Error)]
pub enum NoKvmError {
    /// The device path (`WIO_KVM_DEVICE`) cannot be a C string.
    #[error("KVM device path {device:?} contains a NUL byte")]
    NulInPath {
        /// The path as given.
        device: String,
    },
    /// The device does not exist.
    #[error("{device} does not exist: this host has no KVM; load kvm_intel or kvm_amd, or run on a host with hardware virtualization (riscv64 guests need no KVM: --arch riscv64)")]
    Missing {
        /// The device path.
        device: String,
        /// The errno of the open (ENOENT).
        #[source]
        errno: errno::Error,
    },
    /// The device exists but this user may not open it.
    #[error("permission denied opening {device}: add your user to the 'kvm' group or run as root")]
    Denied {
        /// The device path.
        device: String,
        /// The errno of the open (EACCES, EPERM).
        #[source]
        errno: errno::Error,
    },
    /// The device cannot be opened for another reason.
    #[error("cannot open {device}: {errno}")]
    Open {
        /// The device path.
        device: String,
        /// The errno of the open.
        #[source]
        errno: errno::Error,
    },
    /// KVM refuses to create a VM.
    #[error("KVM_CREATE_VM failed: {0}")]
    CreateVm(#[source] errno::Error),
}
