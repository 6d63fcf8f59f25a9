//! The x86-64 engine on KVM, with no in-kernel irqchip or PIT: every timer and
//! interrupt controller lives in wio, driven by the virtual clock. Interrupts
//! go in through the raw `KVM_INTERRUPT` ioctl when KVM says the guest is ready,
//! otherwise through an interrupt-window exit.
//!
//! An interrupt window opens after the instruction that follows an STI that set IF (the STI
//! shadow). Nested SVM as QEMU's TCG emulates it (this repository's CI) can lose that
//! shadow when one of L1's own interrupts lands between the STI and the next instruction,
//! and then reports the window one instruction early, at a point host timing chose. So a
//! window reported right after an STI byte is not trusted: the engine steps one
//! instruction and lets KVM report the window again (see [`KvmEngine::run`]).

use super::run_loop::debug_exits;
use super::watchdog::Watchdog;
use super::{cpuid, regs};
use crate::engine::{CpuEngine, Exit, ExitHandler};
use crate::error::{CrashError, EngineCrash};
use crate::error::{KvmError, MachineError, NoKvmError, Result, WioError};
use crate::memory::GuestMem;
use kvm_bindings::{kvm_interrupt, kvm_userspace_memory_region, Msrs, KVMIO};
use kvm_ioctls::{Kvm, VcpuExit, VcpuFd, VmFd};
use std::time::Duration;
use vm_memory::{Bytes, GuestAddress, GuestMemoryBackend, GuestMemoryRegion};
use vmm_sys_util::errno;
use vmm_sys_util::ioctl::ioctl_with_ref;
use vmm_sys_util::ioctl_iow_nr;

ioctl_iow_nr!(KVM_INTERRUPT, KVMIO, 0x86, kvm_interrupt);

/// Where KVM may put its TSS pages on Intel hosts (below 4 GiB, outside guest RAM).
const TSS_ADDRESS: usize = 0xfffb_d000;

/// The x87/SSE state of `KVM_GET_FPU` as a snapshot keeps it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FpuState {
    fpr: Vec<[u8; 16]>,
    fcw: u16,
    fsw: u16,
    ftwx: u8,
    last_opcode: u16,
    last_ip: u64,
    last_dp: u64,
    xmm: Vec<[u8; 16]>,
    mxcsr: u32,
}

/// A vCPU's state for a snapshot: registers, segments and control registers, FPU,
/// pending events (interrupt shadow, injected or pending interrupts and exceptions),
/// the MSRs wio sets at boot, and XCR0.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct VcpuState {
    regs: kvm_bindings::kvm_regs,
    sregs: kvm_bindings::kvm_sregs,
    fpu: FpuState,
    events: kvm_bindings::kvm_vcpu_events,
    msrs: Vec<kvm_bindings::kvm_msr_entry>,
    xcrs: Option<kvm_bindings::kvm_xcrs>,
}

/// Options of the KVM engine.
#[derive(Debug, Clone, Copy)]
pub struct KvmOptions {
    /// Wall time one KVM_RUN may last before the watchdog reports a stall.
    pub watchdog: Duration,
}

/// The STI instruction's only byte.
const STI: u8 = 0xfb;

/// Most instructions stepped, one after another, for one interrupt window reported right
/// after an STI byte (each stepped instruction ending in that byte extends the chain).
const MAX_SHADOW_STEPS: u32 = 16;

/// What the debugger asked of KVM_SET_GUEST_DEBUG (restored after a shadow step).
#[derive(Debug, Clone, Default)]
struct DebugSetting {
    single_step: bool,
    breakpoints: Vec<u64>,
}

/// One VM with one vCPU on /dev/kvm.
pub struct KvmEngine {
    _kvm: Kvm,
    _vm: VmFd,
    vcpu: VcpuFd,
    watchdog: Watchdog,
    /// The guest memory KVM maps (read to check the instruction before an interrupt window).
    mem: GuestMem,
    /// The debugger's setting, restored after each shadow step.
    debug: DebugSetting,
    /// Interrupt windows reported right after an STI byte that were taken as reported
    /// because KVM refused to single-step (the summary warns about them).
    pub shadow_unchecked: u64,
    /// The CPUID table KVM holds for the vCPU, read back after setting it.
    pub cpuid_readback: Vec<kvm_bindings::kvm_cpuid_entry2>,
}

fn kvm_error(context: &'static str, e: errno::Error) -> WioError {
    KvmError::new(context, e).into()
}

/// The KVM device node; `WIO_KVM_DEVICE` overrides it (tests use it to simulate a host without KVM).
fn kvm_device() -> std::path::PathBuf {
    std::env::var_os("WIO_KVM_DEVICE")
        .map(Into::into)
        .unwrap_or_else(|| "/dev/kvm".into())
}

/// Opens /dev/kvm with an error that says what to do.
pub fn open_kvm() -> Result<Kvm> {
    let path = kvm_device();
    let shown = path.display().to_string();
    let c_path =
        std::ffi::CString::new(path.into_os_string().into_encoded_bytes()).map_err(|_| {
            NoKvmError::NulInPath {
                device: shown.clone(),
            }
        })?;
    Kvm::new_with_path(&c_path).map_err(|e| match e.errno() {
        libc::ENOENT => NoKvmError::Missing {
            device: shown.clone(),
            errno: e,
        }
        .into(),
        libc::EACCES | libc::EPERM => NoKvmError::Denied {
            device: shown.clone(),
            errno: e,
        }
        .into(),
        _ => NoKvmError::Open {
            device: shown.clone(),
            errno: e,
        }
        .into(),
    })
}

impl KvmEngine {
    /// Creates the VM, maps `mem`, and sets the boot CPU state for 64-bit entry at `entry`.
    pub fn new(mem: &GuestMem, entry: u64, options: KvmOptions) -> Result<KvmEngine> {
        let engine = Self::create(mem, options)?;
        let vcpu = &engine.vcpu;
        let sregs = vcpu
            .get_sregs()
            .map_err(|e| kvm_error("KVM_GET_SREGS", e))?;
        vcpu.set_sregs(&regs::long_mode_sregs(sregs))
            .map_err(|e| kvm_error("KVM_SET_SREGS", e))?;
        vcpu.set_regs(&regs::boot_regs(entry))
            .map_err(|e| kvm_error("KVM_SET_REGS", e))?;
        vcpu.set_fpu(&regs::boot_fpu())
            .map_err(|e| kvm_error("KVM_SET_FPU", e))?;
        let msrs = Msrs::from_entries(&regs::boot_msrs()).map_err(KvmError::MsrList)?;
        // Some backends refuse some MSRs; what they accept is reset, the rest keep KVM's reset values.
        let _ = vcpu.set_msrs(&msrs);
        Ok(engine)
    }

    /// A VM on `mem` whose vCPU continues from a saved state.
    pub fn restore(mem: &GuestMem, state: &VcpuState, options: KvmOptions) -> Result<KvmEngine> {
        let mut engine = Self::create(mem, options)?;
        let vcpu = &engine.vcpu;
        vcpu.set_sregs(&state.sregs)
            .map_err(|e| kvm_error("KVM_SET_SREGS", e))?;
        vcpu.set_regs(&state.regs)
            .map_err(|e| kvm_error("KVM_SET_REGS", e))?;
        let f = &state.fpu;
        if f.fpr.len() != 8 || f.xmm.len() != 16 {
            return Err(crate::error::KvmError::FpuShape {
                fpr: f.fpr.len(),
                xmm: f.xmm.len(),
            }
            .into());
        }
        let mut fpu = kvm_bindings::kvm_fpu {
            fcw: f.fcw,
            fsw: f.fsw,
            ftwx: f.ftwx,
            last_opcode: f.last_opcode,
            last_ip: f.last_ip,
            last_dp: f.last_dp,
            mxcsr: f.mxcsr,
            ..Default::default()
        };
        fpu.fpr.copy_from_slice(&f.fpr);
        fpu.xmm.copy_from_slice(&f.xmm);
        vcpu.set_fpu(&fpu)
            .map_err(|e| kvm_error("KVM_SET_FPU", e))?;
        if let Some(xcrs) = &state.xcrs {
            // Hosts without XSAVE support refuse it; such a host also could not have saved one.
            let _ = vcpu.set_xcrs(xcrs);
        }
        let msrs = Msrs::from_entries(&state.msrs).map_err(KvmError::MsrList)?;
        let _ = vcpu.set_msrs(&msrs);
        vcpu.set_vcpu_events(&state.events)
            .map_err(|e| kvm_error("KVM_SET_VCPU_EVENTS", e))?;
        engine.settle()?;
        Ok(engine)
    }

    /// Runs KVM_RUN with immediate_exit set: KVM finishes any I/O instruction the last exit
    /// left pending and refreshes the run area (interrupt readiness) without running guest
    /// code. Done before saving and after restoring, so a restored vCPU and the one it was
    /// saved from present the run loop the same state.
    fn settle(&mut self) -> Result<()> {
        self.vcpu.set_kvm_immediate_exit(1);
        let r = self.vcpu.run().map(|exit| format!("{exit:?}"));
        self.vcpu.set_kvm_immediate_exit(0);
        match r {
            Err(e) if e.errno() == libc::EINTR => Ok(()),
            Err(e) => Err(kvm_error("KVM_RUN (immediate exit)", e)),
            Ok(exit) => Err(crate::error::KvmError::RanAnyway { exit }.into()),
        }
    }

    /// The vCPU's state for a snapshot (pending I/O completed first).
    pub fn save_vcpu(&mut self) -> Result<VcpuState> {
        self.settle()?;
        let vcpu = &self.vcpu;
        let fpu = vcpu.get_fpu().map_err(|e| kvm_error("KVM_GET_FPU", e))?;
        let mut msrs = Msrs::from_entries(&regs::boot_msrs()).map_err(KvmError::MsrList)?;
        let n = vcpu.get_msrs(&mut msrs).unwrap_or(0);
        Ok(VcpuState {
            regs: vcpu.get_regs().map_err(|e| kvm_error("KVM_GET_REGS", e))?,
            sregs: vcpu
                .get_sregs()
                .map_err(|e| kvm_error("KVM_GET_SREGS", e))?,
            fpu: FpuState {
                fpr: fpu.fpr.to_vec(),
                fcw: fpu.fcw,
                fsw: fpu.fsw,
                ftwx: fpu.ftwx,
                last_opcode: fpu.last_opcode,
                last_ip: fpu.last_ip,
                last_dp: fpu.last_dp,
                xmm: fpu.xmm.to_vec(),
                mxcsr: fpu.mxcsr,
            },
            events: vcpu
                .get_vcpu_events()
                .map_err(|e| kvm_error("KVM_GET_VCPU_EVENTS", e))?,
            msrs: msrs.as_slice()[..n].to_vec(),
            xcrs: vcpu.get_xcrs().ok(),
        })
    }

    /// The VM, its memory, its vCPU with wio's CPUID profile, and the watchdog.
    fn create(mem: &GuestMem, options: KvmOptions) -> Result<KvmEngine> {
        let kvm = open_kvm()?;
        let vm = kvm.create_vm().map_err(NoKvmError::CreateVm)?;
        // Not every KVM backend needs (or accepts) a TSS area; VMX does.
        let _ = vm.set_tss_address(TSS_ADDRESS);
        for (slot, region) in mem.iter().enumerate() {
            let host = mem
                .get_host_address(region.start_addr())
                .map_err(KvmError::HostAddress)?;
            let region_desc = kvm_userspace_memory_region {
                slot: slot as u32,
                guest_phys_addr: region.start_addr().0,
                memory_size: region.len(),
                userspace_addr: host as u64,
                flags: 0,
            };
            // SAFETY: the region is a live mapping owned by `mem`, which the machine keeps
            // alive (and never unmaps or resizes) for as long as this VM exists.
            unsafe { vm.set_user_memory_region(region_desc) }
                .map_err(|e| kvm_error("KVM_SET_USER_MEMORY_REGION", e))?;
        }
        let vcpu = vm
            .create_vcpu(0)
            .map_err(|e| kvm_error("KVM_CREATE_VCPU", e))?;
        let profile = cpuid::profile();
        vcpu.set_cpuid2(&profile)
            .map_err(|e| kvm_error("KVM_SET_CPUID2", e))?;
        // The APIC is off before the profile is read back: KVM derives CPUID's APIC bit
        // from IA32_APIC_BASE (a backend that refuses the MSR keeps its own view, which
        // the read-back reports).
        let apic_off =
            Msrs::from_entries(&[regs::apic_base_disabled()]).map_err(KvmError::MsrList)?;
        let _ = vcpu.set_msrs(&apic_off);
        let cpuid_readback = vcpu
            .get_cpuid2(kvm_bindings::KVM_MAX_CPUID_ENTRIES)
            .map_err(|e| kvm_error("KVM_GET_CPUID2", e))?
            .as_slice()
            .to_vec();
        let watchdog = Watchdog::start(options.watchdog).map_err(KvmError::Watchdog)?;
        Ok(KvmEngine {
            _kvm: kvm,
            _vm: vm,
            vcpu,
            watchdog,
            mem: mem.clone(),
            debug: DebugSetting::default(),
            shadow_unchecked: 0,
            cpuid_readback,
        })
    }

    /// A bare KVM_RUN loop for benchmarks: no devices, no clock, no trace, no
    /// watchdog; port reads return zeros. Runs until the guest writes `stop_port`
    /// and returns the number of exits.
    pub fn run_bare_until_port(&mut self, stop_port: u16) -> Result<u64> {
        let mut exits = 0u64;
        loop {
            exits += 1;
            match self.vcpu.run() {
                Ok(VcpuExit::IoOut(port, _)) if port == stop_port => return Ok(exits),
                Ok(VcpuExit::IoOut(..)) => {}
                Ok(VcpuExit::IoIn(_, data)) => data.fill(0),
                Ok(other) => {
                    return Err(WioError::GuestCrash(CrashError::BareLoop {
                        exit: format!("{other:?}"),
                    }))
                }
                Err(e) => return Err(kvm_error("KVM_RUN", e)),
            }
        }
    }
}

/// Most hardware breakpoints (the debug registers DR0-DR3).
pub const MAX_HW_BREAKPOINTS: usize = 4;

impl KvmEngine {
    /// Debugging through KVM_SET_GUEST_DEBUG: `single_step` makes the next KVM_RUN return
    /// after one instruction; `breakpoints` (at most [`MAX_HW_BREAKPOINTS`] guest virtual
    /// addresses) stop it before executing there (debug registers, so guest memory is
    /// never patched). Both come back as [`Exit::Debug`].
    pub fn set_debug(&mut self, single_step: bool, breakpoints: &[u64]) -> Result<()> {
        if breakpoints.len() > MAX_HW_BREAKPOINTS {
            return Err(MachineError::TooManyBreakpoints {
                max: MAX_HW_BREAKPOINTS,
            }
            .into());
        }
        self.apply_debug(single_step, breakpoints)?;
        self.debug = DebugSetting {
            single_step,
            breakpoints: breakpoints.to_vec(),
        };
        Ok(())
    }

    /// Sets KVM_SET_GUEST_DEBUG without recording it as the debugger's setting.
    fn apply_debug(&mut self, single_step: bool, breakpoints: &[u64]) -> Result<()> {
        let mut dbg = kvm_bindings::kvm_guest_debug {
            control: kvm_bindings::KVM_GUESTDBG_ENABLE,
            ..Default::default()
        };
        if single_step {
            dbg.control |= kvm_bindings::KVM_GUESTDBG_SINGLESTEP;
        }
        if !breakpoints.is_empty() {
            dbg.control |= kvm_bindings::KVM_GUESTDBG_USE_HW_BP;
            let mut dr7 = 0u64;
            for (i, a) in breakpoints.iter().enumerate() {
                dbg.arch.debugreg[i] = *a;
                // Ln (local enable); R/W and LEN 00: instruction execution.
                dr7 |= 1 << (2 * i);
            }
            dbg.arch.debugreg[7] = dr7;
        }
        if !single_step && breakpoints.is_empty() {
            dbg.control = 0;
        }
        self.vcpu
            .set_guest_debug(&dbg)
            .map_err(|e| kvm_error("KVM_SET_GUEST_DEBUG", e))
    }

    /// The general registers.
    pub fn regs(&self) -> Result<kvm_bindings::kvm_regs> {
        self.vcpu
            .get_regs()
            .map_err(|e| kvm_error("KVM_GET_REGS", e))
    }

    /// Sets the general registers.
    pub fn set_regs(&mut self, regs: &kvm_bindings::kvm_regs) -> Result<()> {
        self.vcpu
            .set_regs(regs)
            .map_err(|e| kvm_error("KVM_SET_REGS", e))
    }

    /// The segment and control registers.
    pub fn sregs(&self) -> Result<kvm_bindings::kvm_sregs> {
        self.vcpu
            .get_sregs()
            .map_err(|e| kvm_error("KVM_GET_SREGS", e))
    }

    /// KVM_RUN, re-entered while signals stop it at points host timing chose (not the
    /// guest's exits: nothing is counted, charged or delivered there, rule 3), its I/O
    /// handed to `io`. The flag is true when the exit is an interrupt window KVM reported
    /// (not Ctrl-C or SIGTERM, which come back as a window too: the driver ends the run
    /// there).
    fn run_unsignalled(&mut self, io: &mut dyn ExitHandler) -> Result<(Exit, bool)> {
        loop {
            self.watchdog.enter();
            let result = self.vcpu.run();
            let fired = self.watchdog.leave();
            let signalled = match &result {
                Ok(VcpuExit::Intr) => true,
                Err(e) => e.errno() == libc::EINTR || e.errno() == libc::EAGAIN,
                Ok(_) => false,
            };
            if matches!(result, Ok(VcpuExit::InternalError)) {
                drop(result);
                // SAFETY: KVM filled the `internal` member of the exit union for KVM_EXIT_INTERNAL_ERROR.
                let suberror =
                    unsafe { self.vcpu.get_kvm_run().__bindgen_anon_1.internal.suberror };
                return Ok((Exit::Crash(EngineCrash::KvmInternal { suberror }), false));
            }
            if !signalled {
                let window = matches!(result, Ok(VcpuExit::IrqWindowOpen));
                return Ok((exit_of(result, io)?, window));
            }
            drop(result);
            if fired {
                return Ok((Exit::Stalled(0), false));
            }
            if crate::interrupt::requested() {
                // Ctrl-C or SIGTERM: the driver ends the run after this step.
                return Ok((Exit::InterruptWindow, false));
            }
        }
    }

    /// Whether the byte before the guest's instruction pointer is an STI (read through the
    /// guest's page tables; false when it cannot be read).
    fn after_sti(&mut self) -> bool {
        let Ok(regs) = self.vcpu.get_regs() else {
            return false;
        };
        let Some(before) = regs.rip.checked_sub(1) else {
            return false;
        };
        let Some(pa) = self.translate(before) else {
            return false;
        };
        let mut byte = [0u8; 1];
        self.mem.read_slice(&mut byte, GuestAddress(pa)).is_ok() && byte[0] == STI
    }

    /// Runs exactly one guest instruction with the interrupt window closed (KVM's single
    /// step), then puts the debugger's setting and the window request back. `None`: the
    /// instruction ran without an exit of its own; otherwise the exit it made (I/O, HLT...),
    /// which is the guest's and is served as such. When KVM refuses to single-step, the
    /// window is taken as reported and counted in [`KvmEngine::shadow_unchecked`].
    fn step_one(&mut self, io: &mut dyn ExitHandler) -> Result<Option<Exit>> {
        let setting = self.debug.clone();
        if self.apply_debug(true, &setting.breakpoints).is_err() {
            self.shadow_unchecked += 1;
            return Ok(Some(Exit::InterruptWindow));
        }
        if debug_exits() {
            let rip = self.program_counter().unwrap_or(0);
            eprintln!("wio-debug: window after sti at rip {rip:#x}: one step");
        }
        let wanted = self.vcpu.get_kvm_run().request_interrupt_window;
        self.vcpu.get_kvm_run().request_interrupt_window = 0;
        let outcome = match self.run_unsignalled(io) {
            Ok((Exit::Debug, _)) => Ok(None),
            Ok((exit, _)) => Ok(Some(exit)),
            Err(e) => Err(e),
        };
        self.vcpu.get_kvm_run().request_interrupt_window = wanted;
        self.apply_debug(setting.single_step, &setting.breakpoints)?;
        let outcome = outcome?;
        // A debugger's breakpoint where the step ended stops there, as it would have.
        if outcome.is_none() && !setting.breakpoints.is_empty() {
            let rip = self.program_counter().unwrap_or(0);
            if setting.breakpoints.contains(&rip) {
                return Ok(Some(Exit::Debug));
            }
        }
        Ok(outcome)
    }

    /// The guest physical address of virtual `gva` through the guest's page tables now.
    pub fn translate(&self, gva: u64) -> Option<u64> {
        let t = self.vcpu.translate_gva(gva).ok()?;
        (t.valid != 0).then_some(t.physical_address)
    }
}

/// What one KVM_RUN that no signal stopped came to, its I/O handed to `io`.
fn exit_of(
    result: std::result::Result<VcpuExit<'_>, kvm_ioctls::Error>,
    io: &mut dyn ExitHandler,
) -> Result<Exit> {
    match result {
        Ok(VcpuExit::IoIn(port, data)) => {
            io.pio_read(port, data);
            Ok(Exit::PortIo)
        }
        Ok(VcpuExit::IoOut(port, data)) => {
            io.pio_write(port, data);
            Ok(Exit::PortIo)
        }
        Ok(VcpuExit::MmioRead(addr, data)) => {
            io.mmio_read(addr, data);
            Ok(Exit::Mmio)
        }
        Ok(VcpuExit::MmioWrite(addr, data)) => {
            io.mmio_write(addr, data);
            Ok(Exit::Mmio)
        }
        Ok(VcpuExit::Hlt) => Ok(Exit::Halt),
        Ok(VcpuExit::Debug(_)) => Ok(Exit::Debug),
        Ok(VcpuExit::IrqWindowOpen) => Ok(Exit::InterruptWindow),
        Ok(VcpuExit::Shutdown) => Ok(Exit::Shutdown),
        Ok(VcpuExit::FailEntry(reason, _)) => Ok(Exit::Crash(EngineCrash::FailEntry { reason })),
        Ok(other) => Ok(Exit::Crash(EngineCrash::UnexpectedExit {
            exit: format!("{other:?}"),
        })),
        Err(e) => Err(kvm_error("KVM_RUN", e)),
    }
}

impl CpuEngine for KvmEngine {
    /// KVM_RUN until an exit of the guest's own. Signals stop KVM_RUN at points host
    /// timing chose: those are re-entered, not counted. An interrupt window reported right
    /// after an STI byte may be one that nested SVM reported inside the STI shadow (see the
    /// module's doc): the engine steps one instruction, without counting it, and runs on;
    /// KVM then reports the window where the guest's execution opens it. When the byte
    /// was not an STI but the end of another instruction, the same step happens on every
    /// run of that seed, so the run stays a function of the guest's execution either way.
    fn run(&mut self, io: &mut dyn ExitHandler) -> Result<Exit> {
        let mut shadow_steps = 0;
        loop {
            let (exit, window) = self.run_unsignalled(io)?;
            if !window
                || self.debug.single_step
                || shadow_steps >= MAX_SHADOW_STEPS
                || !self.after_sti()
            {
                return Ok(exit);
            }
            shadow_steps += 1;
            match self.step_one(io)? {
                Some(exit) => return Ok(exit),
                None => continue,
            }
        }
    }

    fn interrupt_ready(&mut self) -> bool {
        let run = self.vcpu.get_kvm_run();
        run.ready_for_interrupt_injection != 0 && run.if_flag != 0
    }

    fn halted_for_good(&mut self) -> bool {
        self.vcpu.get_kvm_run().if_flag == 0
    }

    fn inject_interrupt(&mut self, vector: u8) -> Result<()> {
        let irq = kvm_interrupt {
            irq: u32::from(vector),
        };
        // SAFETY: KVM_INTERRUPT reads one kvm_interrupt from the pointer, which lives
        // across the call; the fd is this engine's vCPU.
        let rc = unsafe { ioctl_with_ref(&self.vcpu, KVM_INTERRUPT(), &irq) };
        if rc < 0 {
            return Err(kvm_error("KVM_INTERRUPT", errno::Error::last()));
        }
        Ok(())
    }

    fn request_interrupt_window(&mut self, wanted: bool) {
        self.vcpu.get_kvm_run().request_interrupt_window = u8::from(wanted);
    }

    fn program_counter(&mut self) -> Option<u64> {
        self.vcpu.get_regs().ok().map(|r| r.rip)
    }
}
