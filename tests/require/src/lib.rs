//! The one way a wio test says that it cannot run on this host: [`skip`], naming the
//! [`Capability`] it lacks. A skip prints one `SKIPPED:` line and the test returns; but a
//! host that says it has the capability (the environment variable `WIO_REQUIRE`, which
//! `ci/test.sh` sets from what it found) makes the skip a failure, so CI cannot be green
//! because tests it could run quietly did not.

#![forbid(unsafe_code)]

use std::fmt;

/// The environment variable naming the capabilities this host has (comma-separated
/// [`Capability::name`]s): a test that needs one of them must run, not skip.
pub const ENV: &str = "WIO_REQUIRE";

/// Something a test needs from its host. Each has a stable kebab-case [`name`](Self::name),
/// the word `WIO_REQUIRE` and the `SKIPPED:` lines use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Capability {
    /// A `/dev/kvm` that opens read-write (any KVM: x86-64 guests can run).
    Kvm,
    /// That KVM is hardware virtualization (`kvm_intel` or `kvm_amd`), which Linux guests
    /// and an enforced CPUID profile need.
    HardwareKvm,
    /// The x86-64 Linux guests ci/l1.sh builds and hands to the tests inside its L1
    /// (`WIO_X86_LINUX_*`, `WIO_X86_SMALL_*`, `WIO_X86_REDIS_ROOTFS`).
    X86Linux,
    /// The riscv64 guests images/build-all-riscv64.sh builds (its manifest
    /// `$WIO_CACHE/riscv64-guests.env` with every artifact it always builds).
    RiscvGuests,
    /// Debian's OpenSBI in that manifest (`RISCV64_OPENSBI_FW_DYNAMIC`; a failed download
    /// leaves it empty).
    RiscvOpensbi,
    /// The bare-metal flight-software example in that manifest (`RISCV64_FLIGHT_ELF`).
    RiscvFlight,
    /// The Debian kernel's symbols in that manifest (`RISCV64_DEBIAN_SYSTEM_MAP`).
    RiscvDebianSymbols,
    /// `gdb-multiarch`.
    Gdb,
    /// `tcpdump`, to read wio's pcap captures.
    Tcpdump,
    /// e2fsprogs (`e2fsck`, `debugfs`), to look inside ext4 disks.
    E2fsprogs,
    /// The riscv64 cross compiler `riscv64-linux-gnu-gcc` and its binutils (`-as`, `-ld`).
    CrossGcc,
    /// QEMU's user-mode emulator `qemu-riscv64`.
    QemuUser,
    /// Running as root (uid 0).
    Root,
    /// Slurm and munge (`slurmctld`, `munged`) to start a local cluster.
    Slurm,
    /// A headless browser (Debian's `chromium`), to open the triage page.
    Chromium,
}

impl Capability {
    /// Every capability, in the order of the README's table.
    pub const ALL: [Capability; 15] = [
        Capability::Kvm,
        Capability::HardwareKvm,
        Capability::X86Linux,
        Capability::RiscvGuests,
        Capability::RiscvOpensbi,
        Capability::RiscvFlight,
        Capability::RiscvDebianSymbols,
        Capability::Gdb,
        Capability::Tcpdump,
        Capability::E2fsprogs,
        Capability::CrossGcc,
        Capability::QemuUser,
        Capability::Root,
        Capability::Slurm,
        Capability::Chromium,
    ];

    /// The stable kebab-case name (in `WIO_REQUIRE` and the `SKIPPED:` lines).
    pub fn name(self) -> &'static str {
        match self {
            Capability::Kvm => "kvm",
            Capability::HardwareKvm => "hardware-kvm",
            Capability::X86Linux => "x86-linux",
            Capability::RiscvGuests => "riscv-guests",
            Capability::RiscvOpensbi => "riscv-opensbi",
            Capability::RiscvFlight => "riscv-flight",
            Capability::RiscvDebianSymbols => "riscv-debian-symbols",
            Capability::Gdb => "gdb",
            Capability::Tcpdump => "tcpdump",
            Capability::E2fsprogs => "e2fsprogs",
            Capability::CrossGcc => "cross-gcc",
            Capability::QemuUser => "qemu-user",
            Capability::Root => "root",
            Capability::Slurm => "slurm",
            Capability::Chromium => "chromium",
        }
    }

    /// The capability called `name`, if there is one.
    pub fn from_name(name: &str) -> Option<Capability> {
        Capability::ALL.into_iter().find(|c| c.name() == name)
    }
}

impl fmt::Display for Capability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name in `WIO_REQUIRE` that is no capability (a typo must not switch the check off).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownCapability(pub String);

impl fmt::Display for UnknownCapability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let known: Vec<&str> = Capability::ALL.iter().map(|c| c.name()).collect();
        write!(
            f,
            "{ENV} names {:?}, which is no capability (known: {})",
            self.0,
            known.join(",")
        )
    }
}

impl std::error::Error for UnknownCapability {}

/// The capabilities a `WIO_REQUIRE` value names: comma-separated names, blanks around
/// them and empty entries ignored.
pub fn parse(value: &str) -> Result<Vec<Capability>, UnknownCapability> {
    value
        .split(',')
        .map(str::trim)
        .filter(|name| !name.is_empty())
        .map(|name| Capability::from_name(name).ok_or_else(|| UnknownCapability(name.into())))
        .collect()
}

/// The capabilities this host says it has (`WIO_REQUIRE`; none when unset). Panics when
/// the variable names an unknown capability or is not UTF-8: a broken claim must fail.
pub fn claimed() -> Vec<Capability> {
    match std::env::var(ENV) {
        Ok(value) => parse(&value).unwrap_or_else(|e| panic!("{e}")),
        Err(std::env::VarError::NotPresent) => Vec::new(),
        Err(std::env::VarError::NotUnicode(v)) => panic!("{ENV}={v:?} is not UTF-8"),
    }
}

/// What a skip comes to with `claimed` capabilities: the `SKIPPED:` line to print, or
/// (when the host claims `need`) the message to fail with.
fn verdict(
    test: &str,
    need: Capability,
    reason: &str,
    claimed: &[Capability],
) -> Result<String, String> {
    if claimed.contains(&need) {
        Err(format!(
            "{test} was skipped ({reason}), but {ENV} says this host has {need}: \
             a test the host can run must not skip"
        ))
    } else {
        Ok(format!("SKIPPED: {test}: {reason} (needs {need})"))
    }
}

/// Says that `test` (or the part of it named there) does not run because this host lacks
/// `need`; `reason` says what is missing and how to get it. Prints exactly one line on
/// stdout, `SKIPPED: <test>: <reason> (needs <name>)`, and the caller returns (or leaves
/// out that part). Panics instead when `WIO_REQUIRE` says this host has `need`, or names
/// an unknown capability.
pub fn skip(test: &str, need: Capability, reason: &str) {
    match verdict(test, need, reason, &claimed()) {
        Ok(line) => println!("{line}"),
        Err(failure) => panic!("{failure}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_is_kebab_case_unique_and_parses_back() {
        for (i, c) in Capability::ALL.iter().enumerate() {
            let n = c.name();
            assert!(
                !n.is_empty()
                    && n.chars()
                        .all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '-')
                    && !n.contains("--")
                    && !n.starts_with('-')
                    && !n.ends_with('-'),
                "{n:?} is not kebab-case"
            );
            assert_eq!(Capability::from_name(n), Some(*c));
            assert!(
                Capability::ALL[..i].iter().all(|o| o.name() != n),
                "{n} twice"
            );
        }
    }

    #[test]
    fn a_list_parses_with_blanks_and_empty_entries() {
        assert_eq!(parse(""), Ok(vec![]));
        assert_eq!(parse(" , ,"), Ok(vec![]));
        assert_eq!(
            parse("kvm, hardware-kvm,,x86-linux "),
            Ok(vec![
                Capability::Kvm,
                Capability::HardwareKvm,
                Capability::X86Linux
            ])
        );
    }

    #[test]
    fn an_unknown_name_is_an_error_that_names_it() {
        let e = parse("kvm,riscv-guest,gdb").unwrap_err();
        assert_eq!(e, UnknownCapability("riscv-guest".into()));
        let text = e.to_string();
        assert!(text.contains("\"riscv-guest\""), "{text}");
        assert!(
            text.contains("riscv-guests"),
            "lists the known names: {text}"
        );
        // Names are exact: no case folding, no "all".
        assert!(parse("KVM").is_err());
        assert!(parse("all").is_err());
    }

    #[test]
    fn a_skip_prints_one_line_unless_the_host_claims_the_capability() {
        let line = verdict("t", Capability::Gdb, "no gdb-multiarch", &[Capability::Kvm]);
        assert_eq!(
            line,
            Ok("SKIPPED: t: no gdb-multiarch (needs gdb)".to_string())
        );
        assert!(!line.unwrap().contains('\n'));
        let failure = verdict(
            "t",
            Capability::Gdb,
            "no gdb-multiarch",
            &[Capability::Kvm, Capability::Gdb],
        )
        .unwrap_err();
        assert_eq!(
            failure,
            "t was skipped (no gdb-multiarch), but WIO_REQUIRE says this host has gdb: \
             a test the host can run must not skip"
        );
    }

    /// Set for the child runs of [`skip_reads_wio_require_from_the_environment`].
    const CHILD: &str = "WIO_REQUIRE_SELFTEST_CHILD";

    /// The child: skips for want of gdb (only when run by the test below).
    #[test]
    fn child_skips_for_want_of_gdb() {
        if std::env::var_os(CHILD).is_some() {
            skip("child", Capability::Gdb, "no gdb-multiarch here");
        }
    }

    /// [`skip`] itself, in a child process of this test binary with `WIO_REQUIRE` set: it
    /// prints the line when the host does not claim the capability, and fails the test
    /// when it does or when the variable names an unknown capability.
    #[test]
    fn skip_reads_wio_require_from_the_environment() {
        let run = |value: &str| {
            let exe = std::env::current_exe().expect("the test binary");
            let out = std::process::Command::new(exe)
                .args([
                    "--exact",
                    "tests::child_skips_for_want_of_gdb",
                    "--nocapture",
                ])
                .env(CHILD, "1")
                .env(ENV, value)
                .output()
                .expect("run the test binary");
            let text = String::from_utf8_lossy(&out.stdout).into_owned()
                + &String::from_utf8_lossy(&out.stderr);
            (out.status.success(), text)
        };
        let (ok, text) = run("kvm,root");
        assert!(ok, "{text}");
        let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("SKIPPED:")).collect();
        assert_eq!(
            lines,
            ["SKIPPED: child: no gdb-multiarch here (needs gdb)"],
            "{text}"
        );
        let (ok, text) = run("kvm,gdb");
        assert!(!ok, "{text}");
        assert!(
            text.contains(
                "WIO_REQUIRE says this host has gdb: a test the host can run must not skip"
            ),
            "{text}"
        );
        assert!(!text.contains("SKIPPED:"), "{text}");
        let (ok, text) = run("kvm,gbd");
        assert!(!ok, "{text}");
        assert!(text.contains("\"gbd\", which is no capability"), "{text}");
    }

    /// CI's own `WIO_REQUIRE` (when set) names only known capabilities, even on a run in
    /// which no test skips: a typo there fails here.
    #[test]
    fn this_environments_wio_require_names_known_capabilities() {
        let claimed = claimed();
        println!("{ENV}: {claimed:?}");
    }
}
