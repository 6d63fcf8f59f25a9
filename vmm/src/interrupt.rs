//! Ctrl-C (SIGINT) and SIGTERM end a run promptly and cleanly: the handler only records
//! the request; the run loop sees it at its next step (an x86-64 vCPU in KVM_RUN is
//! interrupted by the signal itself, since the watchdog thread blocks these signals and
//! the handler is installed without SA_RESTART), ends the run as an error ("interrupted")
//! and writes the summary and the whole trace up to the last event, as for any other end.

use std::sync::atomic::{AtomicBool, Ordering};

/// Set by the handler.
static REQUESTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    REQUESTED.store(true, Ordering::SeqCst);
}

/// The signals that end a run.
const SIGNALS: [libc::c_int; 2] = [libc::SIGINT, libc::SIGTERM];

/// Installs the handler for SIGINT and SIGTERM (once per process; later calls do
/// nothing more).
pub fn install() -> std::io::Result<()> {
    for sig in SIGNALS {
        // SAFETY: a zeroed sigaction is a valid starting point; the handler only stores
        // to an atomic, which is async-signal-safe; no SA_RESTART, so a blocking
        // KVM_RUN returns EINTR.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as *const () as usize;
            libc::sigemptyset(&mut action.sa_mask);
            if libc::sigaction(sig, &action, std::ptr::null_mut()) != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
    }
    Ok(())
}

/// Whether Ctrl-C or SIGTERM asked the run to end.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::SeqCst)
}

/// Runs `spawn` with SIGINT and SIGTERM blocked, so a thread it starts (which inherits
/// the mask) never takes them: they go to the thread running the guest.
pub fn without_stop_signals<T>(spawn: impl FnOnce() -> T) -> T {
    // SAFETY: plain signal-mask calls on sets built here; the old mask is restored.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for sig in SIGNALS {
            libc::sigaddset(&mut set, sig);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old);
        let out = spawn();
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        out
    }
}
