//! The sandbox: once a run's setup is done (artifacts read, machines built, snapshots
//! loaded), every wio thread may make only the system calls wio's loops need. Guests are
//! programs we did not write; a bug in a device model they drive must not become a shell,
//! a socket or a debugger on the host.
//!
//! First the descriptors the process inherited (above stderr) are closed: `main` recorded
//! them before opening anything, and wio uses none of them (those the command line names
//! as files, `/dev/fd/N`, stay). Then two seccomp filters, installed with `seccompiler`
//! (Firecracker's crate) on every thread at once (TSYNC), inherited by every thread
//! started later:
//! - an allowlist ([`EVERY_THREAD`], [`FILES`], plus thread creation and signals to wio's own
//!   process only); any other call raises SIGSYS, whose handler names the call and the
//!   thread on stderr and ends the process with exit code 107 (a wio bug: the list is short
//!   of a call, or something wrong happened in wio);
//! - `clone3` answers ENOSYS, so the C library starts threads with `clone`, whose flags
//!   the allowlist can see: only `CLONE_THREAD` clones pass (no fork, no new process).
//!
//! Not allowed, among others: `execve`, `fork`, sockets, `ptrace`, `process_vm_*`,
//! `mount`, `kill` of other processes, `bpf`, `perf_event_open`, `keyctl`, `setuid`.
//!
//! The thread kinds and what they need (docs/architecture.md has the table):
//! - a machine thread (`wio run`/`wio sim`'s loop, a world's node threads, explore's
//!   workers): memory, futexes, time, the disk image and overlay files (pread/pwrite), the
//!   trace and snapshots it writes (open/write/rename), `memfd_create` for copy-on-write
//!   branches and moments, `ioctl` for KVM (x86-64 vCPUs) and `PAGEMAP_SCAN` (reused
//!   branch memory, `memory::layers`), `mmap` with execute rights for the riscv64 block
//!   compiler;
//! - a control thread (main: reports, checkpoints, progress, starting workers): the same,
//!   plus `CLONE_THREAD` clones;
//! - the x86-64 watchdog: `clock_nanosleep` and `tgkill` to its own process.
//!
//! The sandbox is armed by `main` for the subcommands that run guests (run, sim, explore,
//! shrink, verify) and entered by the loops ([`enter`]); library users and tests that do
//! not arm it run without it. It stays off with `--no-sandbox` (debugging), `--gdb` (the
//! stub serves a TCP socket) and `--slurm` (it starts `sbatch`), and the run's summary
//! says so ([`describe`]). A forbidden call cannot change a run's results: either the call
//! is allowed and behaves as without the filter, or the process ends.

use std::collections::BTreeMap;
use std::sync::Mutex;

/// Why the sandbox is off for this process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Off {
    /// `--no-sandbox` was given.
    Flag,
    /// `--gdb`: the debugger's stub serves a TCP socket from the machine's thread.
    Gdb,
    /// `--slurm`: the exploration starts `sbatch`, `squeue` and `scancel`.
    Slurm,
    /// `--net host`: the world's peer connects to the host's network.
    HostLink,
}

/// What `main` decided for this process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// Enter the sandbox when the first loop starts.
    On,
    /// Stay out of it, for this reason.
    Off(Off),
}

/// Where this process stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Nobody armed it (library use, unit tests, subcommands that run no guest).
    Unarmed,
    /// Decided by `main`, not entered yet.
    Armed(Policy),
    /// The filters are installed on every thread.
    Entered,
}

static STATE: Mutex<State> = Mutex::new(State::Unarmed);

/// A test hook (`WIO_SANDBOX_PROBE`, read by `main`): what [`enter`] does once the filters
/// are in, so a test can see the sandbox from outside.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Probe {
    /// Nothing (every real run).
    None,
    /// A new thread makes a forbidden call (`socket`): a real forbidden call from a wio
    /// thread ends the run (`WIO_SANDBOX_PROBE=socket`).
    Socket,
    /// Lists the process's open file descriptors on stderr (`WIO_SANDBOX_PROBE=fds`), to
    /// show that those it inherited are closed.
    Fds,
}

static PROBE: Mutex<Probe> = Mutex::new(Probe::None);

/// The file descriptors above stderr this process was started with (its parent's pipes,
/// a CI harness's descriptors): wio opens none of them and needs none, so [`enter`] closes
/// them. Recorded by [`arm`], before `main` opens anything of its own.
static INHERITED: Mutex<Vec<i32>> = Mutex::new(Vec::new());

/// The sandbox could not be installed.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// seccompiler refused to build the filter (a wio bug).
    #[error("building the seccomp filter: {0}")]
    Build(#[source] seccompiler::BackendError),
    /// The kernel refused the filter (no seccomp, or a filter already there that forbids it).
    #[error("installing the seccomp filter: {0}; run with --no-sandbox on this host")]
    Install(#[source] seccompiler::Error),
    /// The SIGSYS handler could not be installed.
    #[error("installing the SIGSYS handler: {0}")]
    Handler(#[source] std::io::Error),
}

/// Called once by `main` before a subcommand that runs guests, before it opens any file:
/// records the descriptors the process inherited (closed by [`enter`]). `probe` is the
/// test hook `WIO_SANDBOX_PROBE`, read at the edge.
pub fn arm(policy: Policy, probe: Probe) {
    *lock(&STATE) = State::Armed(policy);
    *lock(&PROBE) = probe;
    let named = named_descriptors(std::env::args_os());
    *lock(&INHERITED) = open_descriptors()
        .into_iter()
        .filter(|&fd| fd > 2 && !named.contains(&fd))
        .collect();
}

/// The descriptors the command line names as files (`/dev/fd/N`, `/proc/self/fd/N`, as a
/// shell's process substitution `>(jq .)` gives them): wio may open those only at the end
/// of a run (a summary, a report), so they stay open.
fn named_descriptors(args: impl Iterator<Item = std::ffi::OsString>) -> Vec<i32> {
    let mut named = Vec::new();
    for arg in args {
        let arg = arg.to_string_lossy();
        for prefix in ["/dev/fd/", "/proc/self/fd/"] {
            let mut rest = arg.as_ref();
            while let Some(at) = rest.find(prefix) {
                rest = &rest[at + prefix.len()..];
                let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
                if let Ok(fd) = digits.parse() {
                    named.push(fd);
                }
            }
        }
    }
    named
}

/// The process's open descriptors, from /proc/self/fd (empty when it cannot be read).
fn open_descriptors() -> Vec<i32> {
    let listed: Vec<i32> = match std::fs::read_dir("/proc/self/fd") {
        Ok(dir) => dir
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
            .collect(),
        Err(_) => return Vec::new(),
    };
    // The listing's own descriptor was open while it was read: keep only those still open.
    listed
        .into_iter()
        // SAFETY: F_GETFD only reads the descriptor's flags; an unused number is EBADF.
        .filter(|&fd| unsafe { libc::fcntl(fd, libc::F_GETFD) } >= 0)
        .collect()
}

/// Installs the filters on every thread if `main` armed the sandbox and it is not in yet;
/// otherwise does nothing. Called where a loop starts, after its setup.
pub fn enter() -> Result<(), SandboxError> {
    let mut state = lock(&STATE);
    if *state != State::Armed(Policy::On) {
        return Ok(());
    }
    // What this process inherited and never uses goes before the filters come in: a
    // guest that gets hold of a device model can reach nothing through them.
    for fd in std::mem::take(&mut *lock(&INHERITED)) {
        // SAFETY: `fd` was open when `main` armed the sandbox, before wio opened anything,
        // so no wio object owns it (none will close it again); nothing in wio uses it.
        unsafe { libc::close(fd) };
    }
    install()?;
    *state = State::Entered;
    drop(state);
    let probe = *lock(&PROBE);
    if probe == Probe::Fds {
        let fds: Vec<String> = open_descriptors().iter().map(i32::to_string).collect();
        eprintln!("sandbox: open descriptors: {}", fds.join(" "));
    }
    if probe == Probe::Socket {
        // From a thread started after entering, as explore's workers and a world's node
        // threads are: it inherits the filters (and its own start passes them).
        let probe = std::thread::Builder::new()
            .name("wio-probe".into())
            // SAFETY: socket() takes plain integers; the filter traps it before it runs.
            .spawn(|| unsafe { libc::socket(libc::AF_UNIX, libc::SOCK_STREAM, 0) });
        if let Ok(probe) = probe {
            let _ = probe.join();
        }
    }
    Ok(())
}

/// The sandbox's state in words, for summaries ("on", "off (--no-sandbox)", ...).
pub fn describe() -> &'static str {
    match *lock(&STATE) {
        State::Entered | State::Armed(Policy::On) => "on (seccomp)",
        State::Armed(Policy::Off(Off::Flag)) => "off (--no-sandbox)",
        State::Armed(Policy::Off(Off::Gdb)) => "off (--gdb serves a socket)",
        State::Armed(Policy::Off(Off::Slurm)) => "off (--slurm starts sbatch)",
        State::Armed(Policy::Off(Off::HostLink)) => "off (--net host reaches the host's network)",
        State::Unarmed => "off",
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A panic while holding these locks leaves plain values behind: still usable.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Calls every wio thread makes after setup: memory, futexes, time, signals, its end.
const EVERY_THREAD: &[i64] = &[
    libc::SYS_brk,
    libc::SYS_mmap,
    libc::SYS_munmap,
    libc::SYS_mremap,
    libc::SYS_mprotect,
    libc::SYS_madvise,
    libc::SYS_futex,
    libc::SYS_sched_yield,
    libc::SYS_sched_getaffinity,
    libc::SYS_getpid,
    libc::SYS_gettid,
    libc::SYS_getuid,
    libc::SYS_geteuid,
    libc::SYS_uname,
    libc::SYS_clock_gettime,
    libc::SYS_clock_getres,
    libc::SYS_gettimeofday,
    libc::SYS_nanosleep,
    libc::SYS_clock_nanosleep,
    // How the kernel resumes a sleep a signal interrupted (the watchdog's, when a stray
    // signal reaches it): without it, a signal ends the run (exit 107).
    libc::SYS_restart_syscall,
    libc::SYS_getrandom,
    libc::SYS_rt_sigaction,
    libc::SYS_rt_sigprocmask,
    libc::SYS_rt_sigreturn,
    libc::SYS_sigaltstack,
    libc::SYS_set_robust_list,
    libc::SYS_rseq,
    libc::SYS_prctl,
    libc::SYS_prlimit64,
    libc::SYS_getrusage,
    libc::SYS_sysinfo,
    libc::SYS_exit,
    libc::SYS_exit_group,
];

/// Files: disk images and their overlays, traces, snapshots, reports, checkpoints,
/// copy-on-write memory (memfd), the terminal, KVM's ioctls.
const FILES: &[i64] = &[
    libc::SYS_openat,
    libc::SYS_open,
    libc::SYS_close,
    libc::SYS_read,
    libc::SYS_write,
    libc::SYS_pread64,
    libc::SYS_pwrite64,
    libc::SYS_readv,
    libc::SYS_writev,
    libc::SYS_preadv,
    libc::SYS_pwritev,
    libc::SYS_lseek,
    libc::SYS_fstat,
    libc::SYS_stat,
    libc::SYS_lstat,
    libc::SYS_newfstatat,
    libc::SYS_statx,
    libc::SYS_statfs,
    libc::SYS_fstatfs,
    libc::SYS_ftruncate,
    libc::SYS_fallocate,
    libc::SYS_fsync,
    libc::SYS_fdatasync,
    libc::SYS_rename,
    libc::SYS_renameat,
    libc::SYS_renameat2,
    libc::SYS_unlink,
    libc::SYS_unlinkat,
    libc::SYS_mkdir,
    libc::SYS_mkdirat,
    libc::SYS_rmdir,
    libc::SYS_getdents64,
    libc::SYS_fcntl,
    libc::SYS_flock,
    libc::SYS_dup,
    libc::SYS_dup3,
    libc::SYS_access,
    libc::SYS_faccessat,
    libc::SYS_faccessat2,
    libc::SYS_readlink,
    libc::SYS_readlinkat,
    libc::SYS_getcwd,
    libc::SYS_memfd_create,
    libc::SYS_copy_file_range,
    libc::SYS_sendfile,
    libc::SYS_poll,
    libc::SYS_ppoll,
    libc::SYS_pipe2,
    libc::SYS_ioctl,
];

/// The allowlist as seccompiler rules: [`EVERY_THREAD`] and [`FILES`] unconditionally,
/// `clone` only with `CLONE_THREAD`, `clone3` (answered ENOSYS by the first filter),
/// `tgkill`/`tkill`/`kill` only to this process.
fn allowlist() -> Result<BTreeMap<i64, Vec<seccompiler::SeccompRule>>, seccompiler::BackendError> {
    use seccompiler::{SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompRule};
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for &call in EVERY_THREAD.iter().chain(FILES) {
        rules.insert(call, Vec::new());
    }
    let thread = libc::CLONE_THREAD as u64;
    rules.insert(
        libc::SYS_clone,
        vec![SeccompRule::new(vec![SeccompCondition::new(
            0,
            SeccompCmpArgLen::Qword,
            SeccompCmpOp::MaskedEq(thread),
            thread,
        )?])?],
    );
    rules.insert(libc::SYS_clone3, Vec::new());
    // SAFETY: getpid has no preconditions.
    let me = unsafe { libc::getpid() } as u64;
    let own = || -> Result<Vec<SeccompRule>, seccompiler::BackendError> {
        Ok(vec![SeccompRule::new(vec![SeccompCondition::new(
            0,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::Eq,
            me,
        )?])?])
    };
    rules.insert(libc::SYS_tgkill, own()?);
    rules.insert(libc::SYS_kill, own()?);
    Ok(rules)
}

/// Builds both filters and installs them on every thread, the SIGSYS handler first.
fn install() -> Result<(), SandboxError> {
    use seccompiler::{BpfProgram, SeccompAction, SeccompFilter, TargetArch};
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(SandboxError::Build)?;
    let no_clone3 = SeccompFilter::new(
        BTreeMap::from([(libc::SYS_clone3, Vec::new())]),
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS as u32),
        arch,
    )
    .map_err(SandboxError::Build)?;
    let allow = SeccompFilter::new(
        allowlist().map_err(SandboxError::Build)?,
        SeccompAction::Trap,
        SeccompAction::Allow,
        arch,
    )
    .map_err(SandboxError::Build)?;
    let no_clone3: BpfProgram = no_clone3.try_into().map_err(SandboxError::Build)?;
    let allow: BpfProgram = allow.try_into().map_err(SandboxError::Build)?;
    install_sigsys_handler().map_err(SandboxError::Handler)?;
    seccompiler::apply_filter_all_threads(&no_clone3).map_err(SandboxError::Install)?;
    seccompiler::apply_filter_all_threads(&allow).map_err(SandboxError::Install)?;
    Ok(())
}

/// The start of a SIGSYS `siginfo_t` on Linux (the kernel's `_sigsys` member of the union).
#[repr(C)]
struct SigsysInfo {
    signo: libc::c_int,
    errno: libc::c_int,
    code: libc::c_int,
    pad: libc::c_int,
    call_addr: *mut libc::c_void,
    syscall: libc::c_int,
    arch: libc::c_uint,
}

/// The exit code of a forbidden call: an internal wio error, `error::exit_code::INTERNAL`
/// (written out here so this leaf does not import `error`, which imports it; a test in
/// `error.rs` keeps the two equal).
pub const FORBIDDEN_EXIT: libc::c_int = 107;

extern "C" fn on_sigsys(_sig: libc::c_int, info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo for SIGSYS raised by seccomp (SA_SIGINFO);
    // its `_sigsys` member starts as `SigsysInfo` lays out.
    let nr = unsafe { (*(info as *const SigsysInfo)).syscall } as i64;
    let name = syscalls::Sysno::new(nr as usize).map_or("unknown", |s| s.name());
    let mut thread = [0u8; 17];
    // SAFETY: PR_GET_NAME writes at most 16 bytes (NUL included) into the buffer.
    unsafe { libc::prctl(libc::PR_GET_NAME, thread.as_mut_ptr()) };
    let thread_len = thread.iter().position(|&b| b == 0).unwrap_or(16);
    let mut msg = Msg::default();
    msg.push(b"wio: error: sandbox: thread ");
    msg.push(&thread[..thread_len]);
    msg.push(b" made the system call ");
    msg.push(name.as_bytes());
    msg.push(b" (");
    msg.number(nr);
    msg.push(b"), which wio's threads may not make after setup (docs/architecture.md, the sandbox); rerun with --no-sandbox, and report it as a wio bug\n");
    // SAFETY: write and _exit are async-signal-safe; both are on the allowlist.
    unsafe {
        libc::write(2, msg.buf.as_ptr().cast(), msg.len);
        libc::_exit(FORBIDDEN_EXIT);
    }
}

/// A message built without allocating (inside a signal handler).
struct Msg {
    buf: [u8; 512],
    len: usize,
}

impl Default for Msg {
    fn default() -> Self {
        Msg {
            buf: [0; 512],
            len: 0,
        }
    }
}

impl Msg {
    fn push(&mut self, bytes: &[u8]) {
        let n = bytes.len().min(self.buf.len() - self.len);
        self.buf[self.len..self.len + n].copy_from_slice(&bytes[..n]);
        self.len += n;
    }

    fn number(&mut self, mut v: i64) {
        if v < 0 {
            self.push(b"-");
            v = -v;
        }
        let mut digits = [0u8; 20];
        let mut i = digits.len();
        loop {
            i -= 1;
            digits[i] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        self.push(&digits[i..]);
    }
}

fn install_sigsys_handler() -> std::io::Result<()> {
    use nix::sys::signal::{sigaction, SaFlags, SigAction, SigHandler, SigSet, Signal};
    let action = SigAction::new(
        SigHandler::SigAction(on_sigsys),
        SaFlags::SA_SIGINFO,
        SigSet::empty(),
    );
    // SAFETY: the handler only formats into a stack buffer and calls write and _exit, all
    // async-signal-safe.
    unsafe { sigaction(Signal::SIGSYS, &action) }?;
    Ok(())
}

#[cfg(test)]
mod tests {
    /// Descriptors named on the command line as files stay open: process substitution's
    /// `/dev/fd/63`, `--summary-json=/proc/self/fd/5`; other numbers in paths do not count.
    #[test]
    fn descriptors_named_as_files_are_found() {
        let args = [
            "wio",
            "run",
            "--summary-json",
            "/dev/fd/63",
            "--trace=/proc/self/fd/5",
            "/tmp/fd/7",
            "/dev/fd/x",
        ];
        let named = super::named_descriptors(args.iter().map(std::ffi::OsString::from));
        assert_eq!(named, vec![63, 5]);
    }

    use super::*;

    #[test]
    fn the_filters_compile_and_hold_the_calls_the_loops_need() {
        let rules = allowlist().unwrap();
        for call in [
            libc::SYS_futex,
            libc::SYS_mmap,
            libc::SYS_ioctl,
            libc::SYS_clone,
        ] {
            assert!(rules.contains_key(&call), "{call} missing");
        }
        for call in [
            libc::SYS_execve,
            libc::SYS_socket,
            libc::SYS_ptrace,
            libc::SYS_fork,
        ] {
            assert!(!rules.contains_key(&call), "{call} allowed");
        }
        let filter = seccompiler::SeccompFilter::new(
            rules,
            seccompiler::SeccompAction::Trap,
            seccompiler::SeccompAction::Allow,
            seccompiler::TargetArch::x86_64,
        )
        .unwrap();
        let prog: seccompiler::BpfProgram = filter.try_into().unwrap();
        assert!(!prog.is_empty());
    }

    #[test]
    fn the_message_prints_numbers() {
        let mut m = Msg::default();
        m.number(41);
        m.push(b" ");
        m.number(0);
        assert_eq!(&m.buf[..m.len], b"41 0");
    }

    #[test]
    fn unarmed_enter_installs_nothing() {
        assert_eq!(describe(), "off");
        enter().unwrap();
        assert_eq!(describe(), "off");
    }
}
