//! Ctrl-C (SIGINT) and SIGTERM, handled once for the whole process: `main` installs one
//! handler for both before it runs any subcommand, and the handler only records the
//! request in one flag, [`requested`]. A subcommand that polls the flag ends cleanly:
//! `wio run` and `wio sim` at their next step (an x86-64 vCPU in KVM_RUN is interrupted by
//! the signal itself, since the watchdog thread blocks these signals and the handler is
//! installed without SA_RESTART) as an error ("interrupted", exit 130) with the summary
//! and the whole trace up to the last event; `wio explore` (also `--slurm`) stops taking
//! seeds, abandons its running branches and writes the finished seeds' report (exit
//! 130). A SIGTERM (`kill`, a Kubernetes pod stop) is the same request as a Ctrl-C.
//!
//! A subcommand that does not poll (a benchmark, a shrink, a verify: they have nothing
//! partial worth keeping, and would misread an interrupted run as a verdict) is installed
//! with [`Ending::Default`]: the handler then gives the signal its default action, and the
//! process ends by it as it would without a handler.

use nix::sys::signal::{self, SaFlags, SigAction, SigHandler, SigSet, SigmaskHow, Signal};
use std::sync::atomic::{AtomicBool, Ordering};

/// Set by the handler.
static REQUESTED: AtomicBool = AtomicBool::new(false);

/// Whether the running subcommand polls [`requested`] (else the handler ends the process).
static POLLED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(sig: libc::c_int) {
    REQUESTED.store(true, Ordering::SeqCst);
    if !POLLED.load(Ordering::SeqCst) {
        if let Ok(sig) = Signal::try_from(sig) {
            // SAFETY: signal() and raise() are async-signal-safe; with the default
            // disposition back, the re-raised signal ends the process as if no handler
            // had been installed.
            let _ = unsafe { signal::signal(sig, SigHandler::SigDfl) };
            let _ = signal::raise(sig);
        }
    }
}

/// The signals that end a run.
const SIGNALS: [Signal; 2] = [Signal::SIGINT, Signal::SIGTERM];

/// How the running subcommand ends on SIGINT or SIGTERM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// It polls [`requested`] and ends cleanly, writing what it has.
    Polled,
    /// It does not poll: the signal's default action ends the process.
    Default,
}

/// Installs the handler for SIGINT and SIGTERM; `ending` says whether the subcommand
/// polls [`requested`]. Called once, by `main`, before the subcommand runs.
pub fn install(ending: Ending) -> std::io::Result<()> {
    POLLED.store(ending == Ending::Polled, Ordering::SeqCst);
    // No SA_RESTART, so a blocking KVM_RUN returns EINTR.
    let action = SigAction::new(
        SigHandler::Handler(on_signal),
        SaFlags::empty(),
        SigSet::empty(),
    );
    for sig in SIGNALS {
        // SAFETY: the handler only stores to atomics and (when nothing polls) restores the
        // default action and re-raises, all async-signal-safe.
        unsafe { signal::sigaction(sig, &action) }?;
    }
    Ok(())
}

/// Whether Ctrl-C or SIGTERM asked the process to end.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::SeqCst)
}

/// Runs `spawn` with SIGINT and SIGTERM blocked, so a thread it starts (which inherits
/// the mask) never takes them: they go to the thread running the guest.
pub fn without_stop_signals<T>(spawn: impl FnOnce() -> T) -> T {
    let mut set = SigSet::empty();
    for sig in SIGNALS {
        set.add(sig);
    }
    // Blocking two valid signals cannot fail (EINVAL is only for a bad `how`).
    let old = set.thread_swap_mask(SigmaskHow::SIG_BLOCK).ok();
    let out = spawn();
    if let Some(old) = old {
        let _ = old.thread_set_mask();
    }
    out
}
