//! Why a machine (either architecture) cannot be configured, booted or debugged as asked.

use std::path::PathBuf;

/// A machine configuration, boot image or debugger request that does not fit.
#[derive(Debug, thiserror::Error)]
pub enum MachineError {
    /// `--mem` outside what the architecture's guests take.
    #[error("--mem {mib} MiB is out of range; {arch} guests take {min} to {max} MiB")]
    Mem {
        /// The size asked for (MiB).
        mib: u64,
        /// The architecture ("riscv64", "x86-64").
        arch: &'static str,
        /// The smallest size (MiB).
        min: u64,
        /// The largest size (MiB).
        max: u64,
    },
    /// A fixed clock drift beyond what a clock takes.
    #[error("a clock drift of {ppm} ppm is beyond ±{max} ppm")]
    Drift {
        /// The drift asked for (ppm).
        ppm: i32,
        /// The largest drift (ppm).
        max: i32,
    },
    /// A bare-metal program given an initrd.
    #[error("{} is a bare-metal program (ELF), which takes no initrd ({}); drop --initrd", .program.display(), .initrd.display())]
    BareMetalInitrd {
        /// The program.
        program: PathBuf,
        /// The initrd given.
        initrd: PathBuf,
    },
    /// A kernel command line longer than the boot protocol takes.
    #[error("kernel command line is {len} bytes; the limit is {max}")]
    CmdlineTooLong {
        /// Its length (bytes).
        len: usize,
        /// The limit (bytes).
        max: usize,
    },
    /// More breakpoints than the debug registers hold.
    #[error("at most {max} breakpoints on x86-64 (the debug registers)")]
    TooManyBreakpoints {
        /// The most breakpoints.
        max: usize,
    },
    /// A crash fault's restart needs a boot file of the snapshot that cannot be had.
    #[error("a crash fault restarts the machine, which needs the snapshot's {what}{}: {why}", .path.as_ref().map(|p| format!(" {}", p.display())).unwrap_or_default())]
    RestartNeeds {
        /// Which file ("kernel", "initrd", "firmware").
        what: &'static str,
        /// Where the snapshot says it is.
        path: Option<PathBuf>,
        /// Why it cannot be had.
        #[source]
        why: RestartWhy,
    },
    /// A gdb `monitor` command wio does not know.
    #[error("unknown monitor command {cmd:?}; `monitor help` lists them")]
    UnknownMonitor {
        /// The command.
        cmd: String,
    },
    /// A gdb `monitor` argument that is not a number.
    #[error("{text:?} is not a number")]
    NotANumber {
        /// The argument.
        text: String,
    },
    /// gdb asked to deliver a signal to the guest.
    #[error("wio's gdb server delivers no signals to the guest")]
    NoSignals,
    /// `monitor checkpoint-interval` below the smallest interval.
    #[error("checkpoint-interval: at least 1000000 instructions")]
    CheckpointInterval,
    /// gdb asked to change registers other than x, f, pc and v.
    #[error("wio's gdb server changes x, f, pc and v registers only (not CSRs)")]
    RegistersReadOnly,
    /// A world's node asked to move in time alone.
    #[error("a world's node cannot be moved alone: seek is for `wio run --gdb`")]
    WorldNodeSeek,
    /// A kernel command line with a NUL byte.
    #[error("kernel command line contains a NUL byte")]
    CmdlineNul,
    /// A guided exploration of a machine that keeps no moments (x86-64).
    #[error("guided exploration keeps moments of riscv64 machines only (not yet x86-64); explore this snapshot with --seeds")]
    NoMoments,
    /// `--gdb` with `--from` on an x86-64 snapshot.
    #[error("--gdb with --from debugs riscv64 snapshots; boot the x86-64 guest under gdb instead")]
    GdbFromX86,
}

/// Why a boot file a restart needs cannot be had.
#[derive(Debug, thiserror::Error)]
pub enum RestartWhy {
    /// The snapshot does not name the file.
    #[error("the snapshot does not say where it is")]
    NoPath,
    /// The file cannot be read.
    #[error("{0}")]
    Unreadable(#[source] std::io::Error),
    /// The file is not the one the snapshot was taken with.
    #[error("it changed since the snapshot was taken")]
    Changed,
}
