//! gdb's remote protocol (the `gdbstub` crate) over a riscv64 run under the replay
//! debugger ([`RvDebugger`]): registers (integer, floating point, CSRs and the privilege
//! level, described by wio's own target description), memory by virtual address through
//! the guest's page tables (or physical, `monitor phys on`), software and hardware
//! breakpoints, write watchpoints, single step, continue, reverse-stepi and
//! reverse-continue, and `monitor` commands for virtual time, instruction counts and
//! seeking.

use super::debug::{Halt, RunPlan, RvDebugger, WorldRun};
use super::machine::RvMachine;
use crate::error::DebuggerError;
use crate::error::{MachineError, Result, WioError};
use crate::gdb::{exited, no_signal, refused, Debuggee, Ran};
use crate::machine::console::Console;
use crate::machine::{Machine, RunConfig, RunResult, Stop};
use crate::snapshot::plan::parse_duration_ns;
use crate::snapshot::Snapshot;
use gdbstub::arch::{Arch, RegId, Registers};
use gdbstub::common::Signal;
use gdbstub::conn::ConnectionExt;
use gdbstub::outputln;
use gdbstub::stub::state_machine::GdbStubStateMachine;
use gdbstub::stub::{DisconnectReason, GdbStub, SingleThreadStopReason};
use gdbstub::target::ext::base::reverse_exec::{ReplayLogPosition, ReverseCont, ReverseStep};
use gdbstub::target::ext::base::singlethread::{
    SingleThreadBase, SingleThreadResume, SingleThreadSingleStep,
};
use gdbstub::target::ext::base::BaseOps;
use gdbstub::target::ext::breakpoints::{
    Breakpoints, HwBreakpoint, HwWatchpoint, SwBreakpoint, WatchKind,
};
use gdbstub::target::ext::monitor_cmd::{ConsoleOutput, MonitorCmd};
use gdbstub::target::{Target, TargetError, TargetResult};
use std::net::TcpStream;
use std::num::NonZeroUsize;
use std::time::Instant;
use wio_clock::VirtualTime;
use wio_riscv::csr::addr;
use wio_virtio_devices::Frame;

/// The CSRs gdb sees, in the order of the target description (after fcsr).
const CSRS: [u16; 25] = [
    addr::SSTATUS,
    addr::SIE,
    addr::STVEC,
    addr::SCOUNTEREN,
    addr::SSCRATCH,
    addr::SEPC,
    addr::SCAUSE,
    addr::STVAL,
    addr::SIP,
    addr::SATP,
    addr::MSTATUS,
    addr::MISA,
    addr::MEDELEG,
    addr::MIDELEG,
    addr::MIE,
    addr::MTVEC,
    addr::MCOUNTEREN,
    addr::MSCRATCH,
    addr::MEPC,
    addr::MCAUSE,
    addr::MTVAL,
    addr::MIP,
    addr::CYCLE,
    addr::TIME,
    addr::INSTRET,
];

/// Register numbers (as the target description numbers them).
const PC: usize = 32;
const F0: usize = 33;
const FFLAGS: usize = 65;
const FCSR: usize = 67;
const CSR0: usize = 68;
const PRIV: usize = CSR0 + CSRS.len();

/// riscv64 as wio's gdb server describes it.
pub enum Rv64Wio {}

/// Every register gdb sees.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Regs {
    /// x0..x31.
    pub x: [u64; 32],
    /// pc.
    pub pc: u64,
    /// f0..f31.
    pub f: [u64; 32],
    /// fflags, frm, fcsr.
    pub fcsr: [u32; 3],
    /// The CSRs of [`CSRS`].
    pub csr: [u64; 25],
    /// The privilege level (0 U, 1 S, 3 M).
    pub prv: u64,
    /// With the vector extension: vstart, vxsat, vxrm, vcsr, vl, vtype, vlenb (else empty).
    pub vcsr: Vec<u64>,
    /// With the vector extension: v0..v31, VLEN / 8 bytes each (else empty).
    pub v: Vec<u8>,
}

impl Registers for Regs {
    type ProgramCounter = u64;

    fn pc(&self) -> u64 {
        self.pc
    }

    fn gdb_serialize(&self, mut write_byte: impl FnMut(Option<u8>)) {
        let mut put = |bytes: &[u8]| bytes.iter().for_each(|b| write_byte(Some(*b)));
        self.x.iter().for_each(|v| put(&v.to_le_bytes()));
        put(&self.pc.to_le_bytes());
        self.f.iter().for_each(|v| put(&v.to_le_bytes()));
        self.fcsr.iter().for_each(|v| put(&v.to_le_bytes()));
        self.csr.iter().for_each(|v| put(&v.to_le_bytes()));
        put(&self.prv.to_le_bytes());
        self.vcsr.iter().for_each(|v| put(&v.to_le_bytes()));
        put(&self.v);
    }

    fn gdb_deserialize(&mut self, bytes: &[u8]) -> std::result::Result<(), ()> {
        let mut at = 0;
        let mut take = |n: usize| -> std::result::Result<u64, ()> {
            let s = bytes.get(at..at + n).ok_or(())?;
            at += n;
            let mut b = [0u8; 8];
            b[..n].copy_from_slice(s);
            Ok(u64::from_le_bytes(b))
        };
        for v in &mut self.x {
            *v = take(8)?;
        }
        self.pc = take(8)?;
        for v in &mut self.f {
            *v = take(8)?;
        }
        for v in &mut self.fcsr {
            *v = take(4)? as u32;
        }
        for v in &mut self.csr {
            *v = take(8)?;
        }
        self.prv = take(8)?;
        // The vector CSRs and registers, when the description has them (what is left):
        // the fixed registers take x, pc, f, the CSRs and priv (8 bytes each) and fcsr's 3 * 4.
        let fixed = 8 * (32 + 1 + 32 + CSRS.len() + 1) + 4 * 3;
        if bytes.len() > fixed {
            let csrs = super::gdb_xml::VECTOR_CSRS.len();
            self.vcsr = (0..csrs)
                .map(|_| take(8))
                .collect::<std::result::Result<_, ()>>()?;
            self.v = bytes.get(fixed + 8 * csrs..).ok_or(())?.to_vec();
        }
        Ok(())
    }
}

/// A register by its number in the target description.
#[derive(Debug, Clone, Copy)]
pub struct Reg(pub usize);

impl RegId for Reg {
    fn from_raw_id(id: usize) -> Option<(Self, Option<NonZeroUsize>)> {
        let size = match id {
            0..=PC => 8,
            F0..FFLAGS => 8,
            FFLAGS..=FCSR => 4,
            CSR0..=PRIV => 8,
            super::gdb_xml::VCSR0..super::gdb_xml::V0 => 8,
            // v0-v31: VLEN / 8 bytes, which only the machine knows.
            id if (super::gdb_xml::V0..super::gdb_xml::V0 + 32).contains(&id) => {
                return Some((Reg(id), None))
            }
            _ => return None,
        };
        Some((Reg(id), NonZeroUsize::new(size)))
    }
}

impl Arch for Rv64Wio {
    type Usize = u64;
    type Registers = Regs;
    type BreakpointKind = usize;
    type RegId = Reg;

    fn target_description_xml() -> Option<&'static str> {
        Some(include_str!("gdb-target.xml"))
    }
}

/// What gdb asked the run to do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Resume {
    Continue,
    Step,
    ReverseStep,
    ReverseContinue,
}

/// The gdbstub target: the debugger and what gdb asked of it.
pub struct RvTarget {
    d: RvDebugger,
    resume: Resume,
    /// Memory accesses are physical (`monitor phys on`).
    phys: bool,
    /// The target description (with the vector registers of a hart that has them).
    xml: String,
}

impl RvTarget {
    fn regs(&self) -> Regs {
        let h = self.d.hart();
        let mut r = Regs {
            x: h.x,
            pc: h.pc,
            f: h.fp.f,
            prv: h.prv as u64,
            ..Regs::default()
        };
        for (i, c) in [addr::FFLAGS, addr::FRM, addr::FCSR].iter().enumerate() {
            r.fcsr[i] = h.debug_csr(*c).unwrap_or(0) as u32;
        }
        for (i, c) in CSRS.iter().enumerate() {
            r.csr[i] = h.debug_csr(*c).unwrap_or(0);
        }
        if let Some(v) = h.save_vector() {
            r.vcsr = super::gdb_xml::vector_csrs(&v);
            r.v = v.regs;
        }
        r
    }

    /// A target for `d`, its description built for its hart.
    fn new(d: RvDebugger) -> RvTarget {
        let vlenb = d.hart().save_vector().map(|v| v.vlenb as usize);
        RvTarget {
            d,
            resume: Resume::Continue,
            phys: false,
            xml: super::gdb_xml::target_xml(vlenb),
        }
    }

    /// Runs what gdb asked; `poll` says whether gdb sent something (Ctrl-C).
    fn run(&mut self, poll: &mut dyn FnMut() -> bool) -> Result<Halt> {
        match self.resume {
            Resume::Continue => self.d.forward(None, true, poll),
            Resume::Step => {
                let to = self.d.position() + 1;
                self.d.forward(Some(to), false, poll)
            }
            Resume::ReverseStep => self.d.reverse_step(),
            Resume::ReverseContinue => self.d.reverse_continue(),
        }
    }

    fn stop_reason(&self, h: Halt) -> SingleThreadStopReason<u64> {
        match h {
            Halt::Breakpoint if self.d.at_hw_breakpoint() => SingleThreadStopReason::HwBreak(()),
            Halt::Breakpoint => SingleThreadStopReason::SwBreak(()),
            Halt::Watch(addr) => SingleThreadStopReason::Watch {
                tid: (),
                kind: WatchKind::Write,
                addr,
            },
            Halt::Reached => SingleThreadStopReason::DoneStep,
            Halt::HistoryStart => SingleThreadStopReason::ReplayLog {
                tid: None,
                pos: ReplayLogPosition::Begin,
            },
            // The run's end stays where it is, so gdb can go back from it.
            Halt::Ended => SingleThreadStopReason::ReplayLog {
                tid: None,
                pos: ReplayLogPosition::End,
            },
            Halt::Interrupted => SingleThreadStopReason::Signal(Signal::SIGINT),
        }
    }

    fn monitor(&mut self, cmd: &str, out: &mut ConsoleOutput<'_>) -> Result<()> {
        let words: Vec<&str> = cmd.split_whitespace().collect();
        match words.as_slice() {
            [] | ["help"] => {
                outputln!(out, "wio monitor commands:");
                outputln!(
                    out,
                    "  where                 virtual time, instructions, position, checkpoints"
                );
                outputln!(
                    out,
                    "  seek N                to where N instructions have retired"
                );
                outputln!(
                    out,
                    "  seek TIME             to virtual TIME (e.g. 1.5s, 20ms, 300us, 1000ns)"
                );
                outputln!(
                    out,
                    "  seek position N       to N instructions executed since gdb attached"
                );
                outputln!(
                    out,
                    "  checkpoints           the in-memory checkpoints reverse execution uses"
                );
                outputln!(
                    out,
                    "  checkpoint-interval N executed instructions between checkpoints"
                );
                outputln!(
                    out,
                    "  phys on|off           memory accesses by physical address (default off)"
                );
            }
            ["where"] => self.where_(out),
            ["seek", "position", n] => {
                let n = parse_u64(n)?;
                self.d.seek(n)?;
                self.where_(out);
            }
            ["seek", what] => {
                // A unit (ns, us, ms, s) makes it a time; a bare number counts instructions.
                let time = what
                    .ends_with('s')
                    .then(|| parse_duration_ns(what))
                    .flatten();
                match time {
                    Some(ns) => self.d.seek_time(ns)?,
                    None => self.d.seek_instret(parse_u64(what)?)?,
                };
                self.where_(out);
            }
            ["checkpoints"] => {
                for (pos, instret, ns) in self.d.checkpoints() {
                    outputln!(
                        out,
                        "position {pos}: {instret} instructions retired, {ns} ns"
                    );
                }
                outputln!(out, "interval: {} executed instructions", self.d.interval());
            }
            ["checkpoint-interval", n] => {
                if !self.d.set_interval(parse_u64(n)?) {
                    return Err(MachineError::CheckpointInterval.into());
                }
            }
            ["phys", on @ ("on" | "off")] => {
                self.phys = *on == "on";
                outputln!(
                    out,
                    "memory accesses are {}",
                    if self.phys { "physical" } else { "virtual" }
                );
            }
            _ => {
                return Err(MachineError::UnknownMonitor {
                    cmd: cmd.to_string(),
                }
                .into())
            }
        }
        Ok(())
    }

    fn where_(&self, out: &mut ConsoleOutput<'_>) {
        let ended = match self.d.ended() {
            None => String::new(),
            Some(Ok(s)) => format!(" (the run ended: status {s})"),
            Some(Err(e)) => format!(" (the run ended: {e})"),
        };
        outputln!(
            out,
            "virtual time {} ns, {} instructions retired, position {}, pc {:#x}{ended}",
            self.d.now().as_ns(),
            self.d.instret(),
            self.d.position(),
            self.d.hart().pc
        );
    }
}

fn parse_u64(s: &str) -> Result<u64> {
    s.replace('_', "")
        .parse()
        .map_err(|_| MachineError::NotANumber { text: s.into() }.into())
}

impl Target for RvTarget {
    type Arch = Rv64Wio;
    type Error = WioError;

    fn base_ops(&mut self) -> BaseOps<'_, Rv64Wio, WioError> {
        BaseOps::SingleThread(self)
    }

    fn support_breakpoints(
        &mut self,
    ) -> Option<gdbstub::target::ext::breakpoints::BreakpointsOps<'_, Self>> {
        Some(self)
    }

    fn support_target_description_xml_override(
        &mut self,
    ) -> Option<
        gdbstub::target::ext::target_description_xml_override::TargetDescriptionXmlOverrideOps<
            '_,
            Self,
        >,
    > {
        Some(self)
    }

    fn support_monitor_cmd(
        &mut self,
    ) -> Option<gdbstub::target::ext::monitor_cmd::MonitorCmdOps<'_, Self>> {
        Some(self)
    }
}

impl gdbstub::target::ext::target_description_xml_override::TargetDescriptionXmlOverride
    for RvTarget
{
    fn target_description_xml(
        &self,
        annex: &[u8],
        offset: u64,
        length: usize,
        buf: &mut [u8],
    ) -> TargetResult<usize, Self> {
        if annex != b"target.xml" {
            return Err(TargetError::Errno(2));
        }
        let xml = self.xml.as_bytes();
        let start = usize::try_from(offset).unwrap_or(usize::MAX).min(xml.len());
        let n = length.min(buf.len()).min(xml.len() - start);
        buf[..n].copy_from_slice(&xml[start..start + n]);
        Ok(n)
    }
}

impl SingleThreadBase for RvTarget {
    fn read_registers(&mut self, regs: &mut Regs) -> TargetResult<(), Self> {
        *regs = self.regs();
        Ok(())
    }

    fn write_registers(&mut self, regs: &Regs) -> TargetResult<(), Self> {
        let now = self.regs();
        if regs.csr != now.csr
            || regs.prv != now.prv
            || regs.fcsr != now.fcsr
            || regs.vcsr != now.vcsr
            || regs.v.len() != now.v.len()
        {
            return Err(refused(MachineError::RegistersReadOnly.into()));
        }
        let h = self.d.hart_mut();
        if regs.v != now.v {
            // The vector registers' bytes (their CSRs stay read-only); mstatus.VS turns
            // dirty unless off, as after a vector instruction, so a kernel saves them.
            let mut state = h
                .save_vector()
                .ok_or_else(|| refused(MachineError::RegistersReadOnly.into()))?;
            state.regs.clone_from(&regs.v);
            h.load_vector(&state)
                .map_err(|_| refused(MachineError::RegistersReadOnly.into()))?;
            h.vector_written();
        }
        h.x = regs.x;
        h.x[0] = 0;
        h.pc = regs.pc;
        h.fp.f = regs.f;
        Ok(())
    }

    fn read_addrs(&mut self, start: u64, data: &mut [u8]) -> TargetResult<usize, Self> {
        let n = self.d.hart().debug_read(start, data, !self.phys);
        if n == 0 && !data.is_empty() {
            return Err(TargetError::Errno(14));
        }
        Ok(n)
    }

    fn write_addrs(&mut self, start: u64, data: &[u8]) -> TargetResult<(), Self> {
        let virt = !self.phys;
        if self.d.hart_mut().debug_write(start, data, virt) != data.len() {
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

impl SingleThreadResume for RvTarget {
    fn resume(&mut self, signal: Option<Signal>) -> std::result::Result<(), WioError> {
        no_signal(signal)?;
        self.resume = Resume::Continue;
        Ok(())
    }

    fn support_single_step(
        &mut self,
    ) -> Option<gdbstub::target::ext::base::singlethread::SingleThreadSingleStepOps<'_, Self>> {
        Some(self)
    }

    fn support_reverse_step(
        &mut self,
    ) -> Option<gdbstub::target::ext::base::reverse_exec::ReverseStepOps<'_, (), Self>> {
        Some(self)
    }

    fn support_reverse_cont(
        &mut self,
    ) -> Option<gdbstub::target::ext::base::reverse_exec::ReverseContOps<'_, (), Self>> {
        Some(self)
    }
}

impl SingleThreadSingleStep for RvTarget {
    fn step(&mut self, signal: Option<Signal>) -> std::result::Result<(), WioError> {
        no_signal(signal)?;
        self.resume = Resume::Step;
        Ok(())
    }
}

impl ReverseStep<()> for RvTarget {
    fn reverse_step(&mut self, _tid: ()) -> std::result::Result<(), WioError> {
        self.resume = Resume::ReverseStep;
        Ok(())
    }
}

impl ReverseCont<()> for RvTarget {
    fn reverse_cont(&mut self) -> std::result::Result<(), WioError> {
        self.resume = Resume::ReverseContinue;
        Ok(())
    }
}

impl Breakpoints for RvTarget {
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

    fn support_hw_watchpoint(
        &mut self,
    ) -> Option<gdbstub::target::ext::breakpoints::HwWatchpointOps<'_, Self>> {
        Some(self)
    }
}

impl SwBreakpoint for RvTarget {
    fn add_sw_breakpoint(&mut self, addr: u64, _kind: usize) -> TargetResult<bool, Self> {
        Ok(self.d.set_breakpoint(addr, false, true))
    }

    fn remove_sw_breakpoint(&mut self, addr: u64, _kind: usize) -> TargetResult<bool, Self> {
        Ok(self.d.set_breakpoint(addr, false, false))
    }
}

impl HwBreakpoint for RvTarget {
    fn add_hw_breakpoint(&mut self, addr: u64, _kind: usize) -> TargetResult<bool, Self> {
        Ok(self.d.set_breakpoint(addr, true, true))
    }

    fn remove_hw_breakpoint(&mut self, addr: u64, _kind: usize) -> TargetResult<bool, Self> {
        Ok(self.d.set_breakpoint(addr, true, false))
    }
}

impl HwWatchpoint for RvTarget {
    fn add_hw_watchpoint(
        &mut self,
        addr: u64,
        len: u64,
        kind: WatchKind,
    ) -> TargetResult<bool, Self> {
        // Only writes are watched (a read leaves no trace to compare).
        if kind != WatchKind::Write {
            return Ok(false);
        }
        Ok(self.d.set_watchpoint(addr, len, true))
    }

    fn remove_hw_watchpoint(
        &mut self,
        addr: u64,
        len: u64,
        kind: WatchKind,
    ) -> TargetResult<bool, Self> {
        if kind != WatchKind::Write {
            return Ok(false);
        }
        Ok(self.d.set_watchpoint(addr, len, false))
    }
}

impl MonitorCmd for RvTarget {
    fn handle_monitor_cmd(
        &mut self,
        cmd: &[u8],
        mut out: ConsoleOutput<'_>,
    ) -> std::result::Result<(), WioError> {
        let cmd = String::from_utf8_lossy(cmd).to_string();
        if let Err(e) = self.monitor(&cmd, &mut out) {
            outputln!(out, "wio: {e}");
        }
        Ok(())
    }
}

impl Debuggee for RvTarget {
    fn run_for_gdb(&mut self, poll: &mut dyn FnMut() -> bool) -> Result<Ran> {
        Ok(match self.run(poll)? {
            Halt::Interrupted => Ran::Interrupted,
            h => Ran::Stopped(self.stop_reason(h)),
        })
    }
}

/// Runs `m` under gdb connected on `conn`: gdb starts with the machine stopped before its
/// first instruction; when gdb detaches or disconnects the run goes on to its end
/// without it; `kill` ends it there. Returns the run's result as `wio run` would.
pub fn serve(m: RvMachine, plan: RunPlan, conn: TcpStream) -> Result<RunResult> {
    let d = RvDebugger::new(m, plan)?;
    let mut target = RvTarget::new(d);
    let killed = crate::gdb::session(&mut target, conn);
    if killed {
        target.d.kill();
    }
    Ok(target.d.finish())
}

/// A world's node under gdb (`wio sim --gdb NODE=ADDR`): a machine the world drives like
/// any other, which stops inside its quantum where gdb's breakpoints, watchpoints or
/// steps say and waits there, serving gdb, until gdb resumes it. The other nodes wait at
/// the quantum's end, so the world stays the world without gdb. Forward only: a node
/// cannot go back alone (reverse execution answers "no more history"); a watchpoint
/// stops just after the write (gdb then steps one more instruction).
pub struct GdbNode {
    target: RvTarget,
    /// None once gdb left (detach, disconnect): the node runs on without it.
    gdb: Option<GdbStubStateMachine<'static, RvTarget, TcpStream>>,
    killed: bool,
}

impl GdbNode {
    /// Takes `m` under gdb connected on `conn`; returns when gdb first resumes it.
    pub fn new(m: RvMachine, plan: RunPlan, conn: TcpStream) -> Result<GdbNode> {
        let mut target = RvTarget::new(RvDebugger::for_world(m, plan));
        let gdb = GdbStub::new(conn)
            .run_state_machine(&mut target)
            .map_err(|e| WioError::Debugger(DebuggerError::Protocol(Box::new(e))))?;
        let mut node = GdbNode {
            target,
            gdb: Some(gdb),
            killed: false,
        };
        node.serve();
        Ok(node)
    }

    /// Serves gdb while it has the machine stopped; returns when gdb resumed it or left.
    fn serve(&mut self) {
        while let Some(gdb) = self.gdb.take() {
            let next = match gdb {
                GdbStubStateMachine::Idle(mut g) => {
                    match g.borrow_conn().read() {
                        Ok(byte) => g.incoming_data(&mut self.target, byte),
                        Err(e) => {
                            eprintln!("wio gdb: the connection failed ({e}); the node runs on without gdb");
                            return;
                        }
                    }
                }
                GdbStubStateMachine::Running(g) => {
                    self.gdb = Some(GdbStubStateMachine::Running(g));
                    return;
                }
                GdbStubStateMachine::CtrlCInterrupt(g) => g.interrupt_handled(
                    &mut self.target,
                    Some(SingleThreadStopReason::Signal(Signal::SIGINT)),
                ),
                GdbStubStateMachine::Disconnected(g) => {
                    self.killed = g.get_reason() == DisconnectReason::Kill;
                    eprintln!("wio: gdb left; the node runs on without it");
                    return;
                }
            };
            match next {
                Ok(s) => self.gdb = Some(s),
                Err(e) => {
                    eprintln!("wio gdb: {e}; the node runs on without gdb");
                    return;
                }
            }
        }
    }

    /// Reports a stop to gdb and serves it until it resumes the machine.
    fn stopped(&mut self, reason: SingleThreadStopReason<u64>) {
        if let Some(GdbStubStateMachine::Running(g)) = self.gdb.take() {
            match g.report_stop(&mut self.target, reason) {
                Ok(s) => self.gdb = Some(s),
                Err(e) => eprintln!("wio gdb: {e}; the node runs on without gdb"),
            }
        }
        self.serve();
    }

    /// At a step boundary: whatever gdb sent while the machine ran (Ctrl-C).
    fn poll(&mut self) {
        let Some(GdbStubStateMachine::Running(mut g)) = self.gdb.take() else {
            return;
        };
        let next = match g.borrow_conn().peek() {
            Ok(Some(_)) => match g.borrow_conn().read() {
                Ok(byte) => g.incoming_data(&mut self.target, byte),
                Err(_) => return,
            },
            Ok(None) => Ok(GdbStubStateMachine::Running(g)),
            Err(_) => return,
        };
        match next {
            Ok(s) => {
                let running = matches!(s, GdbStubStateMachine::Running(_));
                self.gdb = Some(s);
                if !running {
                    self.serve();
                }
            }
            Err(e) => eprintln!("wio gdb: {e}; the node runs on without gdb"),
        }
    }
}

impl Machine for GdbNode {
    fn seed(&self) -> u64 {
        self.target.d.machine_ref().seed()
    }

    fn now(&self) -> VirtualTime {
        self.target.d.now()
    }

    fn run_until(&mut self, limit: VirtualTime) -> Stop {
        loop {
            if self.killed {
                return Stop::End(Err(WioError::Debugger(DebuggerError::KilledNode {
                    at_ns: self.target.d.now().as_ns(),
                })));
            }
            let attached = self.gdb.is_some();
            if attached
                && matches!(
                    self.target.resume,
                    Resume::ReverseStep | Resume::ReverseContinue
                )
            {
                eprintln!("wio gdb: a world's node cannot run backwards alone (use wio run --from a node's snapshot with --gdb)");
                self.target.resume = Resume::Continue;
                self.stopped(SingleThreadStopReason::ReplayLog {
                    tid: None,
                    pos: ReplayLogPosition::Begin,
                });
                continue;
            }
            let step = attached && self.target.resume == Resume::Step;
            match self.target.d.run_in_world(limit, step, attached) {
                WorldRun::Stopped(h) => {
                    let reason = self.target.stop_reason(h);
                    self.stopped(reason);
                    self.target.d.resume_in_world();
                }
                WorldRun::Boundary(stop) => {
                    if let Stop::End(outcome) = &stop {
                        if let Some(GdbStubStateMachine::Running(g)) = self.gdb.take() {
                            let _ = g.report_stop(&mut self.target, exited(outcome));
                        }
                        return stop;
                    }
                    self.poll();
                    return stop;
                }
            }
        }
    }

    fn console(&mut self) -> &mut Console {
        self.target.d.machine_mut().console()
    }

    fn parked_until(&self) -> Option<VirtualTime> {
        self.target.d.machine_ref().parked_until()
    }

    fn take_frames(&mut self) -> Vec<Frame> {
        self.target.d.machine_mut().take_frames()
    }

    fn deliver_frame(&mut self, frame: Frame) -> Result<()> {
        self.target.d.machine_mut().deliver_frame(frame)
    }

    fn snapshot(&mut self, reason: String) -> Result<Snapshot> {
        self.target.d.machine_mut().snapshot(reason)
    }

    fn finish(
        self: Box<Self>,
        cfg: &RunConfig,
        outcome: Result<u32>,
        wall: Instant,
        until: Option<&str>,
    ) -> RunResult {
        let m = Box::new(self.target.d.into_machine());
        m.finish(cfg, outcome, wall, until)
    }
}
