//! Serving gdb's remote protocol: where wio waits for gdb. The protocol itself, per
//! architecture, is in `arch/*/gdb.rs` (riscv64: registers, memory, breakpoints,
//! watchpoints, stepping and reverse execution over the replay debugger).

use crate::error::{DebuggerError, ListenStep};
use crate::error::{MachineError, Result, WioError};
use gdbstub::arch::Arch;
use gdbstub::common::Signal;
use gdbstub::conn::ConnectionExt;
use gdbstub::stub::run_blocking::{self, BlockingEventLoop};
use gdbstub::stub::{DisconnectReason, GdbStub, SingleThreadStopReason};
use gdbstub::target::{Target, TargetError};
use std::marker::PhantomData;
use std::net::{TcpListener, TcpStream};

/// Listens on `addr` (host:port), says how to connect, and returns gdb's connection.
pub fn accept(addr: &str) -> Result<TcpStream> {
    let failed = |step: ListenStep| {
        move |source: std::io::Error| {
            WioError::Debugger(DebuggerError::Listen {
                addr: addr.to_string(),
                step,
                source,
            })
        }
    };
    let listener = TcpListener::bind(addr).map_err(failed(ListenStep::Bind))?;
    let local = listener
        .local_addr()
        .map_err(failed(ListenStep::LocalAddress))?;
    eprintln!(
        "wio: waiting for gdb on {local}: gdb-multiarch -ex 'set architecture riscv:rv64' -ex 'target remote {local}'"
    );
    let (conn, peer) = listener.accept().map_err(failed(ListenStep::Accept))?;
    // Packets are small and interactive.
    let _ = conn.set_nodelay(true);
    eprintln!("wio: gdb connected from {peer}");
    Ok(conn)
}

/// What a debugged machine's run came to, for the event loop.
pub enum Ran {
    /// It stopped; tell gdb why.
    Stopped(SingleThreadStopReason<u64>),
    /// gdb sent something while it ran (Ctrl-C); it stopped at a step boundary.
    Interrupted,
}

/// An architecture's gdb target: runs the machine as gdb last asked (continue or step).
pub trait Debuggee: Target<Error = WioError> {
    /// Runs until a stop gdb must hear of, or until `poll` says gdb sent something.
    fn run_for_gdb(&mut self, poll: &mut dyn FnMut() -> bool) -> Result<Ran>;
}

/// The event loop: runs the machine in this thread, looking at the connection at every
/// step boundary for gdb's Ctrl-C.
struct Loop<T>(PhantomData<T>);

impl<T> BlockingEventLoop for Loop<T>
where
    T: Debuggee,
    T::Arch: Arch<Usize = u64>,
{
    type Target = T;
    type Connection = TcpStream;
    type StopReason = SingleThreadStopReason<u64>;

    #[allow(clippy::type_complexity)]
    fn wait_for_stop_reason(
        target: &mut T,
        conn: &mut TcpStream,
    ) -> std::result::Result<
        run_blocking::Event<SingleThreadStopReason<u64>>,
        run_blocking::WaitForStopReasonError<WioError, std::io::Error>,
    > {
        let mut poll = || conn.peek().map(|b| b.is_some()).unwrap_or(true);
        match target
            .run_for_gdb(&mut poll)
            .map_err(run_blocking::WaitForStopReasonError::Target)?
        {
            Ran::Stopped(reason) => Ok(run_blocking::Event::TargetStopped(reason)),
            Ran::Interrupted => {
                let byte = conn
                    .read()
                    .map_err(run_blocking::WaitForStopReasonError::Connection)?;
                Ok(run_blocking::Event::IncomingData(byte))
            }
        }
    }

    fn on_interrupt(
        _target: &mut T,
    ) -> std::result::Result<Option<SingleThreadStopReason<u64>>, WioError> {
        Ok(Some(SingleThreadStopReason::Signal(Signal::SIGINT)))
    }
}

/// Serves gdb on `conn` until it leaves; true when it left with `kill`.
pub fn session<T>(target: &mut T, conn: TcpStream) -> bool
where
    T: Debuggee,
    T::Arch: Arch<Usize = u64>,
{
    match GdbStub::new(conn).run_blocking::<Loop<T>>(target) {
        Ok(DisconnectReason::Kill) => true,
        Ok(_) => false,
        Err(e) => {
            eprintln!("wio gdb: the gdb session ended: {e}; the run goes on without it");
            false
        }
    }
}

/// What gdb hears when the run ended: the guest's status, or wio's exit code for the
/// error that ended it (both as the low byte gdb takes).
pub fn exited(outcome: &Result<u32>) -> SingleThreadStopReason<u64> {
    SingleThreadStopReason::Exited(match outcome {
        Ok(s) => (*s).min(255) as u8,
        Err(e) => e.exit_code().clamp(0, 255) as u8,
    })
}

/// gdb asked to resume with a signal: wio delivers none to the guest.
pub fn no_signal(signal: Option<Signal>) -> Result<()> {
    match signal {
        None => Ok(()),
        Some(_) => Err(MachineError::NoSignals.into()),
    }
}

/// gdb's error for a request wio refuses or a failure behind it (the text goes to
/// wio's standard error; gdb shows an error code).
pub fn refused(e: WioError) -> TargetError<WioError> {
    eprintln!("wio gdb: {e}");
    TargetError::NonFatal
}
