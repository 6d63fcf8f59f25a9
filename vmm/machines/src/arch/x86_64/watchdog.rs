//! A host-side watchdog for KVM_RUN: if one KVM_RUN lasts longer than a wall
//! time limit, the guest is running without exits and wio cannot preempt it
//! deterministically. The watchdog then interrupts KVM_RUN with a signal so
//! the run loop can report the guest's RIP as a determinism failure.
//!
//! Host time here only decides *whether to abort*; it never reaches the guest.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The signal used to kick the vCPU thread out of KVM_RUN: a real-time signal, which
/// `nix`'s `Signal` cannot name, so this module calls `libc` directly.
fn kick_signal() -> i32 {
    libc::SIGRTMIN() + 1
}

extern "C" fn on_kick(_: libc::c_int) {}

/// State shared between the vCPU thread and the watchdog thread.
struct Shared {
    /// Incremented when a KVM_RUN starts; odd while inside KVM_RUN.
    generation: AtomicU64,
    fired: AtomicBool,
    stop: AtomicBool,
}

/// Watches the vCPU thread's KVM_RUN calls.
pub struct Watchdog {
    shared: Arc<Shared>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Watchdog {
    /// Starts watching the calling thread; a KVM_RUN longer than `limit` is interrupted.
    pub fn start(limit: Duration) -> std::io::Result<Watchdog> {
        // SAFETY: installs a handler that does nothing, without SA_RESTART, so a blocked
        // KVM_RUN returns EINTR; the handler touches no state.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_kick as *const () as usize;
            libc::sigemptyset(&mut action.sa_mask);
            if libc::sigaction(kick_signal(), &action, std::ptr::null_mut()) != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        // SAFETY: pthread_self has no preconditions.
        let target = unsafe { libc::pthread_self() };
        let shared = Arc::new(Shared {
            generation: AtomicU64::new(0),
            fired: AtomicBool::new(false),
            stop: AtomicBool::new(false),
        });
        let watcher = Arc::clone(&shared);
        // Ctrl-C must reach the vCPU's thread (interrupting KVM_RUN), not this one.
        let thread = crate::interrupt::without_stop_signals(|| {
            std::thread::Builder::new()
                .name("wio-watchdog".into())
                .spawn(move || {
                    let tick =
                        (limit / 10).clamp(Duration::from_millis(1), Duration::from_millis(100));
                    let mut seen = u64::MAX;
                    let mut since = Instant::now();
                    while !watcher.stop.load(Ordering::Acquire) {
                        std::thread::sleep(tick);
                        let g = watcher.generation.load(Ordering::Acquire);
                        if g != seen {
                            seen = g;
                            since = Instant::now();
                        } else if g % 2 == 1 && since.elapsed() >= limit {
                            watcher.fired.store(true, Ordering::Release);
                            // SAFETY: `target` is the vCPU thread, alive until stop is set and this
                            // thread joined (Drop); the signal's handler is a no-op.
                            unsafe { libc::pthread_kill(target, kick_signal()) };
                        }
                    }
                })
        })?;
        Ok(Watchdog {
            shared,
            thread: Some(thread),
        })
    }

    /// Marks the start of a KVM_RUN.
    pub fn enter(&self) {
        self.shared.generation.fetch_add(1, Ordering::AcqRel);
    }

    /// Marks the end of a KVM_RUN; returns true if the watchdog fired during it.
    pub fn leave(&self) -> bool {
        self.shared.generation.fetch_add(1, Ordering::AcqRel);
        self.shared.fired.swap(false, Ordering::AcqRel)
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
