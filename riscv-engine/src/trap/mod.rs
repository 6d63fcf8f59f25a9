//! How execution leaves the straight line: what an instruction asks of the run loop
//! ([`Flow`]), a synchronous exception ([`Trap`]) and why [`crate::Hart::run`] returned
//! ([`Stop`]). Plain types with no knowledge of the hart, so the interpreter (`exec`), the
//! block compiler (`jit`), the caches and the run loop can all name them without depending
//! on each other. Entering and leaving trap handlers, and which interrupt is pending, are
//! the hart's behaviour: see `trap::entry`.

mod entry;

/// A synchronous exception: cause code and trap value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trap {
    /// xcause value (without the interrupt bit).
    pub cause: u64,
    /// xtval value.
    pub tval: u64,
}

impl Trap {
    /// An exception with `cause` and `tval`.
    pub fn new(cause: u64, tval: u64) -> Trap {
        Trap { cause, tval }
    }
}

/// Why [`crate::Hart::run`] returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    /// The hart's clock reached the requested cycle.
    Budget,
    /// WFI with no interrupt pending: the machine may jump the clock.
    Wfi,
    /// ECALL from S-mode: an SBI call for the machine to serve (pc already past it).
    SbiCall,
    /// An M-mode guest wrote the CLINT's mtimecmp (see `clint`): the timer is set with no
    /// latency; the machine may add its seeded one (`Hart::set_timer`).
    TimerSet,
    /// The next instruction is at a debugger's breakpoint (see `Hart::set_breakpoints`);
    /// it has not run.
    Breakpoint,
}

/// What an executed instruction asks of the run loop.
pub(crate) enum Flow {
    /// Continue at pc + length.
    Next,
    /// pc was set by the instruction.
    Jumped,
    /// Stop the run loop after advancing pc.
    Stop(Stop),
}
