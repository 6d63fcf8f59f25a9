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
