//! A KVM ioctl that failed, with the errno the kernel returned.

use vmm_sys_util::errno;

/// A KVM call failed: which one, and the errno (kept as the error's source).
#[derive(Debug, thiserror::Error)]
#[error("{context}: {errno}")]
pub struct KvmError {
    /// The call or the step that failed (`"KVM_SET_SREGS"`, `"MSR list"`).
    pub context: &'static str,
    /// The errno the kernel returned.
    #[source]
    pub errno: errno::Error,
}

impl KvmError {
    /// The error of `context` failing with `errno`.
    pub fn new(context: &'static str, errno: errno::Error) -> KvmError {
        KvmError { context, errno }
    }
}
