//! gdb's remote protocol over an x86-64 machine on KVM (`wio run --gdb`), as far as KVM
//! allows: the general and segment registers (gdbstub_arch's x86-64 description), memory
//! by virtual address (KVM_TRANSLATE through the guest's page tables), single step and
//! up to four breakpoints (KVM_SET_GUEST_DEBUG: the debug registers, guest memory never
//! patched). No watchpoints and no reverse execution: KVM does not stop on an exact
//! instruction count, so a run cannot be moved back. Interrupts are injected only at the
//! run's own exits, never where gdb stopped it, so stepping does not move them.

use super::kvm::MAX_HW_BREAKPOINTS;
use super::machine::X86Machine;
use crate::error::DebuggerError;
use crate::error::{Result, WioError};
use crate::gdb::{exited, no_signal, refused, Debuggee, Ran};
use crate::machine::driver::{boundary, Boundary};
use crate::machine::{Machine, RunConfig, RunResult};
use gdbstub::common::Signal;
use gdbstub::stub::SingleThreadStopReason;
use gdbstub::target::ext::base::singlethread::{
    SingleThreadBase, SingleThreadResume, SingleThreadSingleStep,
};
use gdbstub::target::ext::base::BaseOps;
use gdbstub::target::ext::breakpoints::{Breakpoints, HwBreakpoint, SwBreakpoint};
use gdbstub::target::{Target, TargetError, TargetResult};
use gdbstub_arch::x86::reg::X86_64CoreRegs;
use gdbstub_arch::x86::X86_64_SSE;
use std::net::TcpStream;
use std::time::Instant;
use vm_memory::{Bytes, GuestAddress};
use wio_clock::VirtualTime;

/// How the debugged run stopped.
enum Halt {
    Breakpoint,
    Stepped,
    Interrupted,
    Ended,
}

/// The gdbstub target: the machine, its breakpoints and what gdb asked.
pub struct X86Target {
    m: Box<X86Machine>,
    cfg: RunConfig,
    limit: VirtualTime,
    breaks: Vec<u64>,
    step: bool,
    ended: Option<Result<u32>>,
    until_hit: Option<String>,
}

impl X86Target {
    /// Runs as gdb asked: one instruction, or to a breakpoint, the end, or gdb's Ctrl-C.
    fn run(&mut self, poll: &mut dyn FnMut() -> bool) -> Result<Halt> {
        if self.ended.is_some() {
            return Ok(Halt::Ended);
        }
        let step = self.step;
        self.m.engine_mut().set_debug(step, &self.breaks)?;
        loop {
            let stop = self.m.run_until(self.limit);
            if self.m.debug_paused {
                // A single step, or a breakpoint (KVM reports both as a debug exit).
                return Ok(if step {
                    Halt::Stepped
                } else {
                    Halt::Breakpoint
                });
            }
            if let Boundary::Ended(outcome, until) = boundary(stop, &self.cfg, self.m.as_mut()) {
                self.until_hit = until;
                self.ended = Some(outcome);
                return Ok(Halt::Ended);
            }
            if step {
                // A step that ended at one of the run's exits.
                return Ok(Halt::Stepped);
            }
            if poll() {
                return Ok(Halt::Interrupted);
            }
        }
    }

    fn regs(&mut self) -> Result<X86_64CoreRegs> {
        let e = self.m.engine_mut();
        let r = e.regs()?;
        let s = e.sregs()?;
        let mut out = X86_64CoreRegs {
            regs: [
                r.rax, r.rbx, r.rcx, r.rdx, r.rsi, r.rdi, r.rbp, r.rsp, r.r8, r.r9, r.r10, r.r11,
                r.r12, r.r13, r.r14, r.r15,
            ],
            eflags: r.rflags as u32,
            rip: r.rip,
            ..Default::default()
        };
        out.segments.cs = u32::from(s.cs.selector);
        out.segments.ss = u32::from(s.ss.selector);
        out.segments.ds = u32::from(s.ds.selector);
        out.segments.es = u32::from(s.es.selector);
        out.segments.fs = u32::from(s.fs.selector);
        out.segments.gs = u32::from(s.gs.selector);
        Ok(out)
    }

    /// Copies guest memory at virtual `addr` (page by page through the page tables).
    fn access(
        &mut self,
        addr: u64,
        len: usize,
        mut each: impl FnMut(u64, usize, usize) -> bool,
    ) -> usize {
        let mut done = 0;
        while done < len {
            let a = addr.wrapping_add(done as u64);
            let Some(pa) = self.m.engine_mut().translate(a) else {
                break;
            };
            let n = ((0x1000 - (a & 0xfff)) as usize).min(len - done);
            if !each(pa, done, n) {
                break;
            }
            done += n;
        }
        done
    }
}

impl Target for X86Target {
    type Arch = X86_64_SSE;
    type Error = WioError;

    fn base_ops(&mut self) -> BaseOps<'_, X86_64_SSE, WioError> {
        BaseOps::SingleThread(self)
    }

    fn support_breakpoints(
        &mut self,
    ) -> Option<gdbstub::target::ext::breakpoints::BreakpointsOps<'_, Self>> {
        Some(self)
    }
}

impl SingleThreadBase for X86Target {
    fn read_registers(&mut self, regs: &mut X86_64CoreRegs) -> TargetResult<(), Self> {
        *regs = self.regs().map_err(refused)?;
        Ok(())
    }

    fn write_registers(&mut self, regs: &X86_64CoreRegs) -> TargetResult<(), Self> {
        let e = self.m.engine_mut();
        let mut r = e.regs().map_err(refused)?;
        let v = regs.regs;
        (r.rax, r.rbx, r.rcx, r.rdx, r.rsi, r.rdi, r.rbp, r.rsp) =
            (v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]);
        (r.r8, r.r9, r.r10, r.r11, r.r12, r.r13, r.r14, r.r15) =
            (v[8], v[9], v[10], v[11], v[12], v[13], v[14], v[15]);
        r.rip = regs.rip;
        r.rflags = (r.rflags & !0xffff_ffff) | u64::from(regs.eflags);
        e.set_regs(&r).map_err(refused)
    }

    fn read_addrs(&mut self, start: u64, data: &mut [u8]) -> TargetResult<usize, Self> {
        let len = data.len();
        let mem = self.m.memory().clone();
        let n = self.access(start, len, |pa, at, n| {
            mem.read_slice(&mut data[at..at + n], GuestAddress(pa))
                .is_ok()
        });
        if n == 0 && len > 0 {
            return Err(TargetError::Errno(14));
        }
        Ok(n)
    }

    fn write_addrs(&mut self, start: u64, data: &[u8]) -> TargetResult<(), Self> {
        let mem = self.m.memory().clone();
        let n = self.access(start, data.len(), |pa, at, n| {
            mem.write_slice(&data[at..at + n], GuestAddress(pa)).is_ok()
        });
        if n != data.len() {
            return Err(TargetError::Errno(14));
        }
        Ok(())
    }

    fn support_resume(
        &mut self,
    ) -> Option<gdbstub::target::ext::base::singlethread::SingleThreadResumeOps<'_, Self>> {
        Some(self)
    }
}

impl SingleThreadResume for X86Target {
    fn resume(&mut self, signal: Option<Signal>) -> std::result::Result<(), WioError> {
        no_signal(signal)?;
        self.step = false;
        Ok(())
    }

    fn support_single_step(
        &mut self,
    ) -> Option<gdbstub::target::ext::base::singlethread::SingleThreadSingleStepOps<'_, Self>> {
        Some(self)
    }
}

impl SingleThreadSingleStep for X86Target {
    fn step(&mut self, signal: Option<Signal>) -> std::result::Result<(), WioError> {
        no_signal(signal)?;
        self.step = true;
        Ok(())
    }
}

impl Breakpoints for X86Target {
    fn support_sw_breakpoint(
        &mut self,
    ) -> Option<gdbstub::target::ext::breakpoints::SwBreakpointOps<'_, Self>> {
        Some(self)
    }

    fn support_hw_breakpoint(
        &mut self,
    ) -> Option<gdbstub::target::ext::breakpoints::HwBreakpointOps<'_, Self>> {
        Some(self)
    }
}

impl X86Target {
    fn add_break(&mut self, addr: u64) -> bool {
        if self.breaks.contains(&addr) {
            return true;
        }
        if self.breaks.len() >= MAX_HW_BREAKPOINTS {
            eprintln!("wio gdb: x86-64 breakpoints are the 4 debug registers; delete one first");
            return false;
        }
        self.breaks.push(addr);
        true
    }

    fn remove_break(&mut self, addr: u64) -> bool {
        let before = self.breaks.len();
        self.breaks.retain(|a| *a != addr);
        self.breaks.len() != before
    }
}

impl SwBreakpoint for X86Target {
    fn add_sw_breakpoint(&mut self, addr: u64, _kind: usize) -> TargetResult<bool, Self> {
        Ok(self.add_break(addr))
    }

    fn remove_sw_breakpoint(&mut self, addr: u64, _kind: usize) -> TargetResult<bool, Self> {
        Ok(self.remove_break(addr))
    }
}

impl HwBreakpoint for X86Target {
    fn add_hw_breakpoint(&mut self, addr: u64, _kind: usize) -> TargetResult<bool, Self> {
        Ok(self.add_break(addr))
    }

    fn remove_hw_breakpoint(&mut self, addr: u64, _kind: usize) -> TargetResult<bool, Self> {
        Ok(self.remove_break(addr))
    }
}

impl Debuggee for X86Target {
    fn run_for_gdb(&mut self, poll: &mut dyn FnMut() -> bool) -> Result<Ran> {
        Ok(Ran::Stopped(match self.run(poll)? {
            Halt::Breakpoint => SingleThreadStopReason::HwBreak(()),
            Halt::Stepped => SingleThreadStopReason::DoneStep,
            Halt::Interrupted => return Ok(Ran::Interrupted),
            Halt::Ended => match self.ended.as_ref() {
                Some(outcome) => exited(outcome),
                None => SingleThreadStopReason::Exited(0),
            },
        }))
    }
}

/// Runs `m` under gdb connected on `conn` (stopped before its first instruction); when
/// gdb detaches the run goes on to its end; `kill` ends it there (exit 110).
pub fn serve(m: X86Machine, cfg: &RunConfig, wall: Instant, conn: TcpStream) -> RunResult {
    let mut t = X86Target {
        m: Box::new(m),
        cfg: cfg.clone(),
        limit: VirtualTime::limit_or_max(cfg.max_virtual_ns),
        breaks: Vec::new(),
        step: false,
        ended: None,
        until_hit: None,
    };
    let killed = crate::gdb::session(&mut t, conn);
    let _ = t.m.engine_mut().set_debug(false, &[]);
    let outcome = if killed && t.ended.is_none() {
        Err(WioError::Debugger(DebuggerError::Killed {
            at_ns: t.m.now().as_ns(),
            retired: None,
        }))
    } else {
        loop {
            if let Some(o) = t.ended.take() {
                break o;
            }
            t.breaks.clear();
            t.step = false;
            if let Err(e) = t.run(&mut || false) {
                break Err(e);
            }
        }
    };
    let until = t.until_hit.clone();
    t.m.finish(cfg, outcome, wall, until.as_deref())
}
