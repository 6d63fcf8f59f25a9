//! Node faults on the x86-64 machine: the vCPU stopped (a pause, or the power off after a
//! crash) while virtual time, device timers and fault events go on, and the boot that
//! follows a crash: a new VM on fresh memory with the same kernel, initrd and command line,
//! a boot RNG seed of its own stream per boot, the PC's devices as at power-on and the disk
//! as the power cut left it. Time continues across the boots, so the trace, the console and
//! the summary cover every boot of the run.
//!
//! Determinism: a stopped vCPU executes nothing, so the machine's steps are its event
//! queue's: virtual time jumps from one due event to the next (never past the step's
//! limit), exactly as a halted guest's does. The reboot happens at the crash fault's end, a
//! virtual time of the plan, and loads the same bytes every time.

use super::boot::KernelImage;
use super::kvm::KvmEngine;
use super::machine::{kvm_options_ms, load_image, BootFiles, X86Machine};
use super::testguest::X86_64_TEST_GUEST;
use crate::error::{InternalError, Result, WioError};
use crate::machine::power::{restart_file, Power};
use crate::machine::Stop;
use crate::memory;
use crate::trace::hex;
use serde_json::json;
use sha2::{Digest, Sha256};
use wio_clock::VirtualTime;
use wio_scheduler::RunSeed;

impl X86Machine {
    /// One step of a machine whose vCPU does not run (paused, off, or about to boot again):
    /// time jumps to the next event (never past `limit`), which fires.
    pub(super) fn step_unpowered(&mut self, limit: VirtualTime) -> Stop {
        if self.platform.power == Power::Booting {
            return match self.reboot() {
                Ok(()) => Stop::Yield,
                Err(e) => Stop::End(Err(e)),
            };
        }
        let Some(next) = self.platform.events.peek_time() else {
            // The pause or crash that stopped the vCPU always has its end queued.
            return Stop::End(Err(WioError::Invariant(InternalError::StoppedForGood)));
        };
        let skipped = self.platform.clock.advance_to(next.min(limit.as_ns()));
        self.stopped_ns = self.stopped_ns.saturating_add(skipped);
        self.platform.fire_due_events();
        let now = self.platform.clock.now_ns();
        if now >= limit.as_ns() && self.platform.events.peek_time().is_none_or(|t| t > now) {
            return Stop::Limit;
        }
        Stop::Yield
    }

    /// Boots the machine again after a power cut: a new VM and vCPU on new zeroed memory,
    /// the kernel loaded anew, the platform's devices as at power-on, the virtio devices
    /// (reset at the cut) on the new memory.
    fn reboot(&mut self) -> Result<()> {
        let kernel = self.boot_kernel()?;
        let initrd = match &self.meta.initrd_sha256 {
            Some(sha) => Some(restart_file("initrd", self.meta.initrd_path.as_ref(), sha)?.0),
            None => None,
        };
        let mem = memory::allocate(0, self.meta.mem_bytes)?;
        let boot = self.boots.saturating_add(1);
        let files = BootFiles {
            kernel: &kernel,
            initrd: initrd.as_deref(),
            cmdline: &self.meta.cmdline,
            slots: self.platform.virtio_slots(),
        };
        let info = load_image(&mem, &files, RunSeed(self.seed), boot)?;
        let engine = KvmEngine::new(&mem, info.entry, kvm_options_ms(self.watchdog_ms))?;
        // What the old vCPU left to warn about stays with the run.
        self.shadow_unchecked_before = self
            .shadow_unchecked_before
            .saturating_add(self.engine.shadow_unchecked);
        self.engine = engine;
        self.mem = mem.clone();
        self.boots = boot;
        super::run_loop::drain_console(&mut self.platform, &mut self.console);
        self.platform.power_on(mem);
        let now = self.platform.clock.now_ns();
        self.console.flush_line(now, &mut self.platform.trace);
        self.platform
            .trace
            .event(now, "boot", json!({ "boot": boot, "entry": info.entry }));
        Ok(())
    }

    /// The kernel the machine booted: its file again (checked against the SHA-256 it booted
    /// with), or the built-in test guest.
    fn boot_kernel(&self) -> Result<KernelImage> {
        if self.meta.kernel_path.is_none()
            && hex(&Sha256::digest(X86_64_TEST_GUEST)) == self.meta.kernel_sha256
        {
            return Ok(KernelImage {
                name: "built-in test guest".into(),
                bytes: X86_64_TEST_GUEST.to_vec(),
            });
        }
        let (path, bytes) = restart_file(
            "kernel",
            self.meta.kernel_path.as_ref(),
            &self.meta.kernel_sha256,
        )?;
        Ok(KernelImage { name: path, bytes })
    }
}
