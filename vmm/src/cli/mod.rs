//! The `wio` command line.

mod examples;
use clap::{Args, Parser, Subcommand};
use examples::*;
use std::path::PathBuf;
use wio_machines::machine::Arch;

/// wio: a deterministic hypervisor. Every run is a function of its seed.
#[derive(Debug, Parser)]
#[command(name = "wio", version, about, long_about = None, after_help = HELP_END)]
pub struct Cli {
    /// Run without the seccomp sandbox that limits wio's threads to the system calls
    /// their loops need once setup is done (for debugging; the summary says so).
    #[arg(long, global = true)]
    pub no_sandbox: bool,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// What `wio --help` ends with: the exit codes (the README's table, shorter), the
/// environment, completions.
const HELP_END: &str = "\
Exit codes:
  0-99  the guest's own exit status (statuses above 99 are reported as 99)
  100   bad command line          101  bad guest artifact (kernel, initrd)
  102   KVM unavailable           103  guest crashed (triple fault, reset, KVM error)
  104   determinism failure       105  cannot write an output file
  106   virtual-time limit hit    107  internal wio error (a bug)
  108   a promise failed          109  a trace failed verification (verify-trace)
  110   gdb killed the run, or --gdb could not be served
  130   interrupted (Ctrl-C or SIGTERM): what finished is kept (summary, trace, report)

Environment:
  WIO_CACHE        where guest artifacts are built and found (default ~/.cache/wio)
  WIO_NO_JIT=1     the riscv64 engine interprets every block (same results, slower)
  WIO_WARM_CACHES=1  riscv64 snapshots keep the decoded code and blocks, and restores
                   start with them (same results; not faster yet)
  WIO_COLD_BRANCHES=1  wio explore's riscv64 machine branches start from the snapshot's
                   caches alone, not with the code its first seed's branch decoded and
                   built (same results, slower)
  WIO_MOMENTS=copy a guided exploration copies each moment's memory whole (same results,
                   more memory) instead of keeping the pages its branch wrote
  WIO_KVM_DEVICE   the KVM device node (default /dev/kvm)
  WIO_DEBUG_EXITS=1  every x86-64 exit and injected interrupt on stderr

Shell completions: wio completions bash|zsh|fish|elvish|powershell";

/// `--epoch` is not an RFC 3339 date from 1970 on.
#[derive(Debug, thiserror::Error)]
#[error("expected an RFC 3339 date from 1970 on, like 2026-01-01T00:00:00Z")]
pub struct EpochError;

/// `--epoch`: the date as seconds since the Unix epoch, parsed at the edge.
pub fn epoch_arg(s: &str) -> Result<i64, EpochError> {
    wio_machines::devices::legacy::rtc::parse_rfc3339(s)
        .filter(|t| *t >= 0)
        .ok_or(EpochError)
}

/// `wio sim --gdb` is not NAME=ADDR.
#[derive(Debug, thiserror::Error)]
#[error("expected NAME=ADDR, e.g. --gdb b=127.0.0.1:1234")]
pub struct NodeGdbError;

/// `wio sim --gdb NAME=ADDR`: (node, address), parsed at the edge.
pub fn node_gdb_arg(s: &str) -> Result<(String, String), NodeGdbError> {
    s.split_once('=')
        .filter(|(n, a)| !n.is_empty() && !a.is_empty())
        .map(|(n, a)| (n.to_string(), a.to_string()))
        .ok_or(NodeGdbError)
}

/// `--until` is not `console:TEXT` with some TEXT.
#[derive(Debug, thiserror::Error)]
#[error("expected console:TEXT (stop at the first console line containing TEXT)")]
pub struct UntilError;

/// `--until console:TEXT` (the only kind of --until so far): TEXT, parsed at the edge.
pub fn until_text(s: &str) -> Result<String, UntilError> {
    match s.strip_prefix("console:") {
        Some(t) if !t.is_empty() => Ok(t.to_string()),
        _ => Err(UntilError),
    }
}

/// wio's subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Boot a guest and run it to its end; same seed, same bits.
    #[command(after_help = RUN_EXAMPLES)]
    Run(Box<RunArgs>),
    /// Measure the run loop: VMM overhead per exit against a bare KVM_RUN loop, and idle speed.
    Bench(BenchArgs),
    /// Run many seeds from one snapshot (riscv64 or x86-64) as copy-on-write branches, in parallel, and report each.
    #[command(after_help = EXPLORE_EXAMPLES)]
    Explore(ExploreArgs),
    /// Shrink a failing world seed's faults to the fewest, shortest, latest that still
    /// break its promise; write them as a fault plan and tell them as a story.
    #[command(after_help = SHRINK_EXAMPLES)]
    Shrink(ShrinkArgs),
    /// Re-run a report's failing seeds and shrunk plans against a fixed build's world
    /// snapshot, with the same seeds and faults; report each fixed or still failing.
    #[command(after_help = VERIFY_EXAMPLES)]
    Verify(VerifyArgs),
    /// Run several riscv64 machines on one virtual clock, joined by a simulated switch.
    #[command(after_help = SIM_EXAMPLES)]
    Sim(SimArgs),
    /// Work with exploration reports.
    #[command(subcommand)]
    Report(ReportCommand),
    /// Inspect snapshot files (take them with `wio run --snapshot-at`).
    #[command(subcommand)]
    Snapshot(SnapshotCommand),
    /// Import container images (OCI layouts and archives) as riscv64 root disks, and list them.
    #[command(subcommand, after_help = IMAGE_EXAMPLES)]
    Image(ImageCommand),
    /// Compare two runs structurally: their traces event by event (a trace file of `wio run
    /// --trace`, or a folder of `wio sim --trace-dir`), naming where each first differs
    #[command(after_help = DIFF_EXAMPLES)]
    Diff(DiffArgs),
    /// Check a trace file's hash chain and print its final hash.
    VerifyTrace {
        /// The trace file written by `wio run --trace`.
        file: PathBuf,
    },
    /// Print a shell completion script, e.g. `wio completions bash > /etc/bash_completion.d/wio`.
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

/// `wio sim`.
#[derive(clap::Args, Debug)]
pub struct SimArgs {
    /// The scenario file (TOML), or a compose file (.yaml, .yml; docs/images.md); or
    /// --from a world snapshot.
    #[arg(required_unless_present = "from", conflicts_with = "from")]
    pub scenario: Option<PathBuf>,
    /// Restore the world snapshot FILE (taken with --snapshot-at) instead of booting a scenario.
    #[arg(long, value_name = "FILE")]
    pub from: Option<PathBuf>,
    /// The world's seed (every node's seed and the switch's draws derive from it); default
    /// 0, or the snapshot's with --from (another seed: same past, a different future).
    #[arg(long)]
    pub seed: Option<u64>,
    /// With --from: run a guided exploration's branch, SEED@NS,...,SEED (its report's
    /// `path`): from each of the world's moments on with its seed, then the last seed to
    /// the end. Same world trace hash as the exploration reported (give its --until and
    /// --max-virtual-secs too, as its reproduce line does).
    /// With --fault-plan: exactly those faults from the path's last moment on (`wio shrink`
    /// of a guided branch writes such plans).
    #[arg(long, value_name = "PATH", requires = "from", conflicts_with_all = ["seed", "snapshot_at"])]
    pub path: Option<String>,
    /// Take a world snapshot (every machine, the switch, frames in flight) at the first
    /// quantum boundary at or after WHEN: a virtual time (2s, 1500ms), console:TEXT (a
    /// line of any node) or setup-complete (a program in a node declared it).
    #[arg(long, value_name = "WHEN", value_parser = wio_machines::snapshot::plan::SnapshotAt::parse)]
    pub snapshot_at: Option<wio_machines::snapshot::plan::SnapshotAt>,
    /// Add kernel arguments to a node's command line: NAME=ARGS (repeatable), e.g.
    /// `--node-args payments=wio.bug=receipt-no-retry`. Not with --from (a restored world's
    /// kernels booted long ago).
    #[arg(long, value_name = "NAME=ARGS", conflicts_with = "from")]
    pub node_args: Vec<String>,
    /// Exactly the faults between nodes (and nodes' own faults) FILE lists, in place of
    /// those the [faults] profile draws (with --from: from the snapshot on). `wio shrink`
    /// writes such files.
    #[arg(long, value_name = "FILE")]
    pub fault_plan: Option<PathBuf>,
    /// Draw the run as an SVG timeline: a lane per node, every frame, the faults, where
    /// each broken promise broke.
    #[arg(long, value_name = "FILE.svg")]
    pub timeline: Option<PathBuf>,
    /// Where --snapshot-at writes the world snapshot.
    #[arg(long, value_name = "FILE", default_value = "world.snap")]
    pub snapshot_out: PathBuf,
    /// End the world (as a success) at the first console line of any node containing
    /// TEXT: console:TEXT (what `wio explore --until` reproduces).
    #[arg(long, value_name = "console:TEXT", value_parser = until_text)]
    pub until: Option<String>,
    /// Stop the world at this virtual time, in place of the scenario's max_virtual_secs.
    #[arg(long, value_name = "SECS")]
    pub max_virtual_secs: Option<u64>,
    /// Do not print the nodes' consoles.
    #[arg(long)]
    pub quiet: bool,
    /// Capture each node's frames (sent and received, with virtual timestamps) to
    /// DIR/NAME.pcap, and each link's (both ways, as the switch delivered them) to
    /// DIR/link.A.B.pcap.
    #[arg(long, value_name = "DIR")]
    pub pcap_dir: Option<PathBuf>,
    /// Host threads the machines are spread over (the result is the same for any number).
    #[arg(long, default_value_t = 1, value_name = "J")]
    pub jobs: usize,
    /// x86-64 nodes: wall ms a guest may run without a VM exit before wio reports a
    /// determinism failure (as wio run --watchdog-ms; default 5000). Raise it under nested
    /// emulation, where a kernel decompresses itself for seconds without an exit.
    #[arg(long, value_name = "MS", conflicts_with = "from")]
    pub watchdog_ms: Option<u64>,
    /// Debug node NAME with gdb, waiting for it on ADDR (host:port): breakpoints,
    /// watchpoints and steps stop that node inside its quantum while the others wait at
    /// the quantum's end (forward only; not with --from).
    #[arg(long, value_name = "NAME=ADDR", value_parser = node_gdb_arg, conflicts_with = "from")]
    pub gdb: Option<(String, String)>,
    /// With --from: every node's CPU-timing noise from the snapshot point on (off, light,
    /// heavy), drawn from its seed (default: each node keeps its snapshot's level).
    #[arg(long, value_name = "LEVEL", value_enum, requires = "from")]
    pub sched_noise: Option<wio_machines::machine::noise::SchedNoise>,
    /// Do not print the world's summary on stderr (--summary-json still writes it).
    #[arg(long)]
    pub no_summary: bool,
    /// Write the world's summary (every node's summary, the switch, the world trace hash) as JSON.
    #[arg(long, value_name = "FILE")]
    pub summary_json: Option<PathBuf>,
    /// Connect the world to the host: the peer forwards the guests' TCP connections to the
    /// --allow destinations (nothing else). Live runs are not deterministic: record them.
    #[arg(long, value_name = "host", value_parser = ["host"], conflicts_with = "replay")]
    pub net: Option<String>,
    /// With --net host: a host destination the guests may reach, [NAME=]ADDR:PORT
    /// (repeatable): the guests connect to NAME:PORT (NAME in their /etc/hosts, default
    /// `host`), the peer to ADDR:PORT.
    #[arg(long, value_name = "[NAME=]ADDR:PORT", requires = "net")]
    pub allow: Vec<String>,
    /// With --net host: record everything the host sends (with its virtual time) to TAPE,
    /// so `--replay TAPE` gives this run again without the host.
    #[arg(long, value_name = "TAPE", requires = "net")]
    pub record: Option<PathBuf>,
    /// Write the world's trace to DIR/world.jsonl and each node's to DIR/NAME.jsonl, and
    /// how to run it again to DIR/golden.json (for `wio diff` and `wio verify --golden`).
    #[arg(long, value_name = "DIR")]
    pub trace_dir: Option<PathBuf>,
    /// Replay a tape recorded with --record: the same world and seed (the tape's, by
    /// default), the host's answers from the tape, no network; stops (exit 104) at the
    /// first thing the guests do that the tape does not hold.
    #[arg(long, value_name = "TAPE")]
    pub replay: Option<PathBuf>,
}

/// `wio snapshot` subcommands.
#[derive(Debug, Subcommand)]
pub enum SnapshotCommand {
    /// Check a snapshot (format, checksum) and print what it holds.
    Info {
        /// The snapshot file.
        file: PathBuf,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

/// `wio image` subcommands.
#[derive(Debug, Subcommand)]
pub enum ImageCommand {
    /// Import an OCI image layout directory or an image archive (OCI, docker save, podman
    /// save; gzip'd too) as an ext4 root disk in the cache.
    Import {
        /// The layout directory or archive.
        path: PathBuf,
        /// Which image, when the layout or archive holds several (a name it gives them).
        #[arg(long = "ref", value_name = "NAME")]
        reference: Option<String>,
        /// Another name to find it by (`wio image list`, `--image NAME`).
        #[arg(long)]
        name: Option<String>,
        /// The disk's size in MiB (default: what its files need plus 256 MiB free).
        #[arg(long, value_name = "MIB")]
        size: Option<u64>,
        /// Print the image's record as JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// List the imported images.
    List {
        /// Print JSON (one array of records, each with its disk's path).
        #[arg(long)]
        json: bool,
    },
}

/// `wio report` subcommands.
#[derive(Debug, Subcommand)]
pub enum ReportCommand {
    /// Join the shard reports of one exploration into one report and print its table.
    Merge {
        /// Shard reports written by `wio explore --shard`.
        #[arg(required = true)]
        reports: Vec<PathBuf>,
        /// Where to write the merged report.
        #[arg(long, value_name = "FILE", default_value = "explore-report.json")]
        out: PathBuf,
        /// Merge even when shards are missing (a cluster task failed); the result is
        /// marked incomplete and names what is missing.
        #[arg(long)]
        allow_partial: bool,
    },
    /// Draw an exploration's report as one self-contained HTML page (the triage page).
    #[command(after_help = REPORT_HTML_EXAMPLES)]
    Html {
        /// The report (`wio explore --report`, or a merged one).
        report: PathBuf,
        /// Where to write the page (default: the report's name with .html).
        #[arg(short = 'o', long = "out", value_name = "FILE")]
        out: Option<PathBuf>,
        /// An earlier exploration of the same service (e.g. before a fix): each promise
        /// is tagged New, Resolved, Ongoing or Gone against it.
        #[arg(long, value_name = "OLD.json")]
        baseline: Option<PathBuf>,
        /// Leave out the timelines (by default the first failing seed of each group of a
        /// world exploration is run again from its snapshot to draw its timeline).
        #[arg(long)]
        no_timelines: bool,
    },
}

/// Options of `wio shrink`.
#[derive(Debug, Args)]
pub struct ShrinkArgs {
    /// The world snapshot the failing seed ran from (or --report).
    #[arg(long, value_name = "FILE", required_unless_present = "report")]
    pub from: Option<PathBuf>,
    /// The failing seed (with --report: default its first failing seed; of a guided
    /// exploration's report, the failing branch's number).
    #[arg(long)]
    pub seed: Option<u64>,
    /// With --from: the failing branch of a guided exploration, SEED@NS,...,SEED (its
    /// report's `path`); its faults from its last moment on are shrunk.
    #[arg(long, value_name = "PATH", requires = "from", conflicts_with = "seed")]
    pub path: Option<String>,
    /// An exploration report (`wio explore --report`): its snapshot, and a failing seed of it.
    #[arg(long, value_name = "FILE", conflicts_with = "from")]
    pub report: Option<PathBuf>,
    /// With --from: every node's CPU-timing noise from the snapshot on, as the failing
    /// branch ran (off, light, heavy; default: the snapshot's levels). With --report the
    /// exploration's own is used. The plan records it.
    #[arg(long, value_name = "LEVEL", value_enum, requires = "from")]
    pub sched_noise: Option<wio_machines::machine::noise::SchedNoise>,
    /// With --from --path: the console line that ended the exploration's branches
    /// (console:TEXT, its --until), where the path's steps end. The plan records it.
    #[arg(long, value_name = "console:TEXT", value_parser = until_text, requires = "path")]
    pub until: Option<String>,
    /// Text of the promise that must keep failing (default: the seed's first violated one).
    #[arg(long, value_name = "TEXT")]
    pub promise: Option<String>,
    /// Probe threads (default: the host's cores).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Most probes before giving up.
    #[arg(long, default_value_t = 400)]
    pub max_probes: usize,
    /// Where the minimal plan goes (default shrink-SEED.json).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// Options of `wio diff`.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The first run: a trace file or a `--trace-dir` folder (with --report: a seed).
    pub a: PathBuf,
    /// The second run.
    pub b: PathBuf,
    /// A and B are seeds (branch numbers of a guided exploration) of this exploration
    /// report: each is run again by its `reproduce` command, run where the exploration
    /// ran (the report's snapshot path is as it was given), with its trace written to a
    /// scratch folder, and the two are compared.
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// Leave out virtual times (and the exit digests, which fold times in).
    #[arg(long)]
    pub ignore_times: bool,
    /// Leave out every field but each event's kind.
    #[arg(long)]
    pub ignore_payloads: bool,
    /// Compare only events of these kinds (repeatable or comma-separated), e.g. `--only
    /// console` for what the guests printed.
    #[arg(long, value_name = "KIND", value_delimiter = ',')]
    pub only: Vec<String>,
    /// Events shown before each first difference.
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub context: usize,
    /// Print the comparison as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Options of `wio verify`.
#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The world snapshot of the changed (fixed) build.
    #[arg(long, value_name = "FILE", required_unless_present = "golden")]
    pub from: Option<PathBuf>,
    /// A golden run (a `wio sim --trace-dir` folder): run it again with this build (its
    /// scenario, seed, tape) and pass when the run is structurally the same.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["from", "report", "plan"])]
    pub golden: Option<PathBuf>,
    /// Exploration reports whose failing seeds are re-run (repeatable).
    #[arg(long, value_name = "FILE")]
    pub report: Vec<PathBuf>,
    /// Plans written by `wio shrink` to re-run, each with its seed (repeatable).
    #[arg(long, value_name = "FILE")]
    pub plan: Vec<PathBuf>,
    /// Worker threads (default: the host's cores).
    #[arg(long)]
    pub jobs: Option<usize>,
}

/// Options of `wio explore`.
#[derive(Debug, Args)]
pub struct ExploreArgs {
    /// The snapshot to branch from (written by `wio run --snapshot-at`).
    #[arg(long, value_name = "SNAP")]
    pub from: PathBuf,
    /// Seeds to explore: A..B (B excluded), A..=B (B included) or one seed (a flat
    /// exploration: every seed a branch of the snapshot).
    #[arg(long, value_name = "A..B", required_unless_present = "budget", value_parser = wio_search::explore::SeedRange::parse)]
    pub seeds: Option<wio_search::explore::SeedRange>,
    /// How to explore: flat (every seed of --seeds a branch of the snapshot, run to its
    /// end) or guided (--budget branches that start again from moments where something new
    /// was seen). Default: guided with --budget, flat with --seeds.
    #[arg(long, value_enum)]
    pub strategy: Option<Strategy>,
    /// Branches a guided exploration runs in all.
    #[arg(long, value_name = "N", conflicts_with = "seeds")]
    pub budget: Option<u64>,
    /// The guided explorer's own seed: which moments and which seeds its branches take
    /// (the same root, budget and search seed give the same tree, whatever --jobs).
    #[arg(long, value_name = "N", default_value_t = 0, requires = "budget")]
    pub search_seed: u64,
    /// What counts as new in a guided exploration (comma-separated): promises (a promise's
    /// condition seen for the first time, or an SDK guidance record's quantity pushed
    /// further its way), console (a console line of a new shape, digits
    /// masked), coverage (riscv64 user-mode code coverage seen by the engine: an edge, or
    /// its hit count in a new bucket; user blocks then run one at a time), sdk-coverage
    /// (edges that programs instrumented for the Antithesis SDKs report through
    /// libvoidstar.so's notify_coverage), or all.
    #[arg(
        long,
        value_name = "LIST",
        default_value = "promises,console,sdk-coverage",
        requires = "budget"
    )]
    pub signals: String,
    /// Most guest memory a guided exploration's moments hold, in MiB (beyond it the spent
    /// and weakest moments are evicted).
    #[arg(long, value_name = "MIB", default_value_t = 4096, requires = "budget")]
    pub max_memory: u64,
    /// A guided exploration writes a checkpoint (REPORT.checkpoint) this often, in wall
    /// seconds, at a round boundary (0: every round); removed when it completes.
    #[arg(long, value_name = "SECS", default_value_t = 10, requires = "budget")]
    pub checkpoint_secs: u64,
    /// Go on from a guided exploration's checkpoint (after a crash, kill -9 or Ctrl-C), with
    /// the same options: the final report is the uninterrupted run's.
    #[arg(long, requires = "budget")]
    pub resume: bool,
    /// Branches run at once (default: the host's cores).
    #[arg(long, value_name = "J")]
    pub jobs: Option<usize>,
    /// Stop each branch at the first console line containing TEXT (console:TEXT); by default
    /// a branch runs until the guest powers off.
    #[arg(long, value_name = "console:TEXT", value_parser = until_text)]
    pub until: Option<String>,
    /// Report whether a console line containing TEXT appeared (repeatable).
    #[arg(long = "match", value_name = "TEXT")]
    pub matches: Vec<String>,
    /// A seed whose console shows TEXT fails (repeatable).
    #[arg(long, value_name = "TEXT")]
    pub fail_on: Vec<String>,
    /// Explore only seeds whose offset in the range is i modulo N (0 <= i < N).
    #[arg(long, value_name = "i/N", value_parser = wio_search::explore::parse_shard)]
    pub shard: Option<(u64, u64)>,
    /// Where to write the JSON report.
    #[arg(long, value_name = "FILE", default_value = "explore-report.json")]
    pub report: PathBuf,
    /// Stop a branch after this many virtual seconds since boot (0 = no limit).
    #[arg(long, value_name = "SECS", default_value_t = 3600)]
    pub max_virtual_secs: u64,
    /// The snapshot's base disk image, if it is no longer where the snapshot says.
    #[arg(long, value_name = "DISK.img")]
    pub disk: Option<PathBuf>,
    /// Also write the promises' verdicts over all seeds (and failing seeds no promise
    /// explains) as JUnit XML to FILE, for CI systems.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Also draw the exploration as one self-contained HTML page (the triage page of
    /// `wio report html`, with this exploration's wall time and host; the JUnit XML names it).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Run the exploration as a Slurm job array of TASKS shard tasks (--jobs CPUs each),
    /// follow it, and merge the shard reports into --report (shards and logs in
    /// REPORT.slurm/). Run it on a Slurm login node; the snapshot, wio and the report's
    /// folder must be on storage the nodes share.
    #[arg(long, value_name = "TASKS", conflicts_with = "shard")]
    pub slurm: Option<u64>,
    /// More sbatch options for --slurm (repeatable), e.g. --sbatch-arg=--partition=batch.
    #[arg(
        long,
        value_name = "OPTION",
        allow_hyphen_values = true,
        requires = "slurm"
    )]
    pub sbatch_arg: Vec<String>,
    /// Exit 0 once the exploration ran, even with failing seeds (they are in the report):
    /// for batch tasks (Slurm, Kubernetes) whose engine would retry a failed task.
    #[arg(long)]
    pub exit_zero: bool,
    /// CPU-timing noise of every branch from the snapshot point on (off, light, heavy;
    /// default: the snapshot's level); of a world snapshot, every node's. Each seed's
    /// reproduce line carries it.
    #[arg(long, value_name = "LEVEL", value_enum)]
    pub sched_noise: Option<wio_machines::machine::noise::SchedNoise>,
}

/// How `wio explore` explores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Strategy {
    /// Every seed of --seeds a branch of the snapshot.
    Flat,
    /// --budget branches that branch again from moments where something new was seen.
    Guided,
}

/// Options of `wio run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The run seed: every source of nondeterminism derives from it (default 0). With
    /// --from: the snapshot's seed continues the original run exactly; another seed
    /// re-keys every random stream from the snapshot on (same past, new future).
    #[arg(long)]
    pub seed: Option<u64>,
    /// With --from: run a guided exploration's branch, SEED@NS,...,SEED (its report's
    /// `path`): from each moment on with its seed, then the last seed to the end. Same
    /// trace hash as the exploration reported.
    #[arg(long, value_name = "PATH", requires = "from", conflicts_with_all = ["seed", "gdb", "snapshot_at"])]
    pub path: Option<String>,
    /// With --from (riscv64): first run the snapshot's branch of seed SEED (quiet, with this
    /// run's --until, --max-virtual-secs and --sched-noise) and start with the code it
    /// decoded and built, as `wio explore` starts every branch but its first seed's; what
    /// an exploration's reproduce lines say, e.g. `--seed 7 --learn-from 0`.
    #[arg(long, value_name = "SEED", requires = "from", conflicts_with_all = ["path", "gdb"])]
    pub learn_from: Option<u64>,
    /// Guest architecture (default x86_64; with --from, the snapshot's).
    #[arg(long, value_enum)]
    pub arch: Option<Arch>,
    /// Kernel image (ELF vmlinux or bzImage); default: the built-in test guest.
    #[arg(long, value_name = "FILE", conflicts_with = "from")]
    pub kernel: Option<PathBuf>,
    /// A built guest. riscv64 (images/build-all-riscv64.sh): "small" (default), "debian",
    /// "flight" (the bare-metal flight-software example) or "flight-vector" (its vector
    /// variant, with --isa rv64gcv). x86_64 (images/build-all-x86_64.sh): "small", wio's
    /// small kernel and its initramfs (default without it: the built-in test guest).
    #[arg(long, value_name = "NAME", conflicts_with = "from")]
    pub guest: Option<String>,
    /// Initial ramdisk to hand to the kernel.
    #[arg(long, value_name = "FILE", conflicts_with = "from")]
    pub initrd: Option<PathBuf>,
    /// riscv64: run an imported container image (`wio image import`; a name or ID prefix)
    /// on the small kernel: its entrypoint and cmd (or the ARGS after --), user, working
    /// directory and environment, its disk as /dev/vda (never written). Implies --arch riscv64.
    #[arg(long, value_name = "REF", conflicts_with_all = ["from", "kernel", "initrd", "disk", "cmdline", "firmware"])]
    pub image: Option<String>,
    /// riscv64: M-mode firmware to start before the kernel instead of wio's built-in SBI,
    /// e.g. Debian's OpenSBI fw_dynamic.bin (images/riscv64-opensbi.sh). A raw binary is
    /// loaded at the RAM base, an ELF at its addresses (linked at 0: at the RAM base);
    /// it starts in M-mode with a0 = 0, a1 = the device tree, a2 = fw_dynamic_info
    /// naming the kernel (in S-mode at RAM base + 2 MiB). An ELF --kernel without
    /// --firmware is a bare-metal program and starts in M-mode itself.
    #[arg(long, value_name = "FILE", conflicts_with = "from")]
    pub firmware: Option<PathBuf>,
    /// riscv64: RAM is SECDED ECC memory (one codeword per 8 bytes): an upset's single-bit
    /// error is corrected when the word is next read, two in one word are an
    /// uncorrectable error (the access faults); both are reported by an EDAC unit in
    /// the device tree ("wio,edac", PLIC source 12) and traced.
    #[arg(long, conflicts_with = "from")]
    pub ecc: bool,
    /// riscv64: the hart's ISA, RV64GC plus optional extensions: rv64gc (the default),
    /// rv64gc_zba_zbb_zbs (RVA22's bit manipulation; also written rv64gcb), zbc
    /// (carry-less multiplication), and v, the vector extension (RVV 1.0, VLEN 512 as on the
    /// SiFive X280 unless _zvl<N>b says otherwise, 128-4096): e.g. rv64gcv_zba_zbb_zbs or
    /// rv64gcv_zvl256b; or x280, the SiFive X280's rv64gcv_zba_zbb. The device tree
    /// advertises what is chosen, and the hart executes it; anything else is refused.
    #[arg(long, value_name = "ISA", conflicts_with = "from")]
    pub isa: Option<wio_riscv::Isa>,
    /// riscv64: the vector length in bits, a power of two from 128 to 4096 (the same as
    /// _zvl<N>b in --isa, which it overrides); without --isa, the hart is rv64gcv.
    #[arg(long, value_name = "BITS", conflicts_with = "from")]
    pub vlen: Option<u32>,
    /// Kernel command line (default for Linux: deterministic arguments, see docs/running.md and docs/x86_64.md).
    #[arg(long, value_name = "STR", conflicts_with = "from")]
    pub cmdline: Option<String>,
    /// Arguments added at the end of the kernel command line, the default one or --cmdline's:
    /// e.g. --append 'wio.promises=demo' sets the workload's WIO_PROMISES without restating
    /// the default arguments (on x86-64 they name the virtio slots).
    #[arg(long, value_name = "STR", conflicts_with = "from")]
    pub append: Option<String>,
    /// Guest memory in MiB.
    #[arg(
        long,
        value_name = "MiB",
        default_value_t = 256,
        conflicts_with = "from"
    )]
    pub mem: u64,
    /// Wall-clock date at virtual time 0, RFC 3339 (the guest's RTC).
    #[arg(
        long,
        value_name = "RFC3339",
        default_value = "2026-01-01T00:00:00Z",
        value_parser = epoch_arg,
        conflicts_with = "from"
    )]
    pub epoch: i64,
    /// Restore this snapshot (written by --snapshot-at) and run on from it. The guest,
    /// its memory, devices, disk writes and network come from the snapshot.
    #[arg(long, value_name = "SNAP")]
    pub from: Option<PathBuf>,
    /// Take a snapshot at WHEN: a virtual time (2s, 1500ms, 250us, 1000ns), console:TEXT (the
    /// first console line containing TEXT), guest (the guest asks: SBI extension
    /// 0x0A57494F function 0 on riscv64, paravirt selector 4 written to port 0x510 on x86-64)
    /// or setup-complete (a program declares its setup complete on the promise channel,
    /// riscv64). Repeat for several. The run itself goes on unchanged.
    #[arg(long, value_name = "WHEN", value_parser = wio_machines::snapshot::plan::SnapshotAt::parse)]
    pub snapshot_at: Vec<wio_machines::snapshot::plan::SnapshotAt>,
    /// Stop the run at the first console line containing TEXT, given as console:TEXT
    /// (the summary then has no guest status and wio exits 0).
    #[arg(long, value_name = "console:TEXT", value_parser = until_text)]
    pub until: Option<String>,
    /// Where to write snapshots; {seed}, {ns} (virtual time) and {n} are filled in.
    #[arg(long, value_name = "FILE", default_value = wio_machines::snapshot::plan::DEFAULT_OUT)]
    pub snapshot_out: String,
    /// Write the trace (hash-chained JSON lines) to FILE.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// Draw the run as an SVG timeline: its faults, console markers, promise events, end.
    #[arg(long, value_name = "FILE")]
    pub timeline: Option<PathBuf>,
    /// Write the run summary as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    pub summary_json: Option<PathBuf>,
    /// Stop the run after this many virtual seconds (0 = no limit).
    #[arg(long, value_name = "SECS", default_value_t = 3600)]
    pub max_virtual_secs: u64,
    /// Report a determinism failure when the guest runs this long (wall ms) without an exit.
    #[arg(long, value_name = "MS", default_value_t = 5000)]
    pub watchdog_ms: u64,
    /// Do not stream the guest console to stdout (it is still in the trace).
    #[arg(long)]
    pub quiet: bool,
    /// Do not print the summary to stderr.
    #[arg(long)]
    pub no_summary: bool,
    /// Disk image for a virtio-blk root disk (/dev/vda of a Linux guest). Opened read-only and never
    /// modified: writes go to an overlay owned by the run.
    #[arg(value_name = "DISK.img")]
    pub disk: Option<PathBuf>,
    /// With --image: the arguments after --, replacing the image's cmd (docker run's rule).
    #[arg(last = true, value_name = "ARGS", requires = "image")]
    pub image_args: Vec<String>,
    /// One-way latency of the simulated network link, in virtual microseconds.
    #[arg(long, value_name = "US", default_value_t = 50)]
    pub net_latency_us: u64,
    /// Extra latency drawn per frame from [0, US] (frames can overtake each other).
    #[arg(long, value_name = "US", default_value_t = 20)]
    pub net_jitter_us: u64,
    /// Frames the link loses, per million (drawn from the seed).
    #[arg(long, value_name = "PPM", default_value_t = 0)]
    pub net_loss_ppm: u64,
    /// Frames the link duplicates, per million (drawn from the seed).
    #[arg(long, value_name = "PPM", default_value_t = 0)]
    pub net_dup_ppm: u64,
    /// CPU-timing noise from the seed: each timer interrupt is taken a seeded time after it
    /// is due (light: up to 1/64 of the interval, 10 us at most; heavy: 1/4, 2 ms), so
    /// seeds move where threads are preempted; on riscv64 the running CPU also stalls at
    /// seeded points (light: about 2 % of a busy CPU's time, stalls of up to 20 us; heavy:
    /// up to 100 us) and a branch starts with a seeded pause of up to 10 ms, which reaches
    /// races shorter than a tick. With --from: the level from the snapshot point on
    /// (default: the snapshot's; a new level is drawn from the run's seed).
    #[arg(long, value_name = "LEVEL", value_enum)]
    pub sched_noise: Option<wio_machines::machine::noise::SchedNoise>,
    /// riscv64: a fixed clock drift in ppm (-10000..=10000; positive: the guest's clock runs
    /// fast against virtual time, where devices and the network live), in place of the one
    /// the seed draws from the noise level (light ±100, heavy ±1000, off 0).
    #[arg(long, value_name = "PPM", allow_hyphen_values = true)]
    pub clock_drift_ppm: Option<i32>,
    /// End the run at the first violated `always` promise (riscv64: programs in the guest
    /// state promises on the wio.sdk channel; see docs/promises.md), exit 108.
    #[arg(long)]
    pub stop_on_violation: bool,
    /// Faults drawn from the seed: a profile, `none` (default), `light`, `heavy` or a TOML
    /// file (see docs/faults.md); each kind from its own stream. Kinds: net partition,
    /// loss, delay, duplicate, reorder; disk error, latency, bit-rot; clock rtc-step; node
    /// crash (power cut, then a boot from the durable disk) and pause (riscv64). With
    /// --from: the faults after the snapshot point are drawn from this profile instead
    /// (those already started stay); without it a restore keeps the snapshot's plan,
    /// re-drawing its future faults from the snapshot's profile when --seed is another seed.
    #[arg(long, value_name = "PROFILE", conflicts_with = "fault_plan")]
    pub faults: Option<String>,
    /// Inject exactly the faults of this plan (JSON, as --fault-plan-out writes it). With
    /// --from: its faults after the snapshot point replace the snapshot's future faults.
    #[arg(long, value_name = "FILE")]
    pub fault_plan: Option<PathBuf>,
    /// Write the run's fault plan (drawn or given) to FILE as JSON; with --from, the plan
    /// the restored run goes on with (the snapshot's started faults and its own future ones).
    #[arg(long, value_name = "FILE")]
    pub fault_plan_out: Option<PathBuf>,
    /// Capture every frame of the simulated network, with virtual timestamps, to FILE (pcap).
    #[arg(long, value_name = "FILE")]
    pub pcap: Option<PathBuf>,
    /// Connect the machine to the host (riscv64): the network's peer (10.0.2.2) forwards
    /// the guest's TCP connections to its port P to the --allow destination of port P
    /// (nothing else). Live runs are not deterministic: record them.
    #[arg(long, value_name = "host", value_parser = ["host"], conflicts_with_all = ["replay", "from", "gdb"])]
    pub net: Option<String>,
    /// With --net host: a host destination the guest may reach, [NAME=]ADDR:PORT
    /// (repeatable): the guest connects to 10.0.2.2:PORT, the peer to ADDR:PORT (NAME
    /// only names it in the tape and the summary).
    #[arg(long, value_name = "[NAME=]ADDR:PORT", requires = "net")]
    pub allow: Vec<String>,
    /// With --net host: record everything the host sends (with its virtual time) to TAPE,
    /// so `--replay TAPE` gives this run again without the host.
    #[arg(long, value_name = "TAPE", requires = "net")]
    pub record: Option<PathBuf>,
    /// Replay a tape recorded with --record: the same machine and seed (the tape's, by
    /// default), the host's answers from the tape, no network; stops (exit 104) at the
    /// first thing the guest does that the tape does not hold.
    #[arg(long, value_name = "TAPE", conflicts_with_all = ["from", "gdb"])]
    pub replay: Option<PathBuf>,
    /// Wait for gdb on ADDR (host:port) and run under it. riscv64: breakpoints,
    /// watchpoints, stepping, reverse-stepi and reverse-continue, `monitor help`; x86-64
    /// (booted guests): registers, memory, stepping, 4 breakpoints. The run stays the run
    /// without gdb (same trace hash) unless gdb writes registers or memory.
    #[arg(long, value_name = "ADDR")]
    pub gdb: Option<String>,
    /// Write the disk as the guest left it durable (base plus flushed writes) to FILE.
    /// (Needs DISK.img, or a snapshot with a disk.)
    #[arg(long, value_name = "FILE")]
    pub persist: Option<PathBuf>,
}

/// Options of `wio bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Port-I/O exits per measurement.
    #[arg(long, default_value_t = 200_000)]
    pub exits: u64,
    /// Virtual seconds the idle guest sleeps.
    #[arg(long, default_value_t = 600)]
    pub idle_secs: u64,
    /// Measurement rounds (the median is reported).
    #[arg(long, default_value_t = 3)]
    pub rounds: u32,
    /// Only the RISC-V interpreter figures (no KVM needed).
    #[arg(long)]
    pub riscv_only: bool,
    /// Also measure snapshots on the small riscv64 guest: write time and size, branch
    /// creation latency, branches per minute (needs images/build-all-riscv64.sh).
    #[arg(long)]
    pub snapshots: bool,
    /// Also measure what CPU-timing noise buys and costs: distinct outcomes of a race
    /// between two processes over many branches of one snapshot (noise light and off), and
    /// the Debian guest's boot wall time with light noise against off (needs the built guests).
    #[arg(long)]
    pub race: bool,
    /// Branches per noise level for --race.
    #[arg(long, default_value_t = 100, value_name = "N")]
    pub race_branches: u64,
    /// Also measure worlds (`wio sim`) of three small riscv64 nodes: idle and pinging
    /// (virtual s per wall s), and a message a minute for --sim-day-secs (needs the built guests).
    #[arg(long)]
    pub sim: bool,
    /// Virtual seconds of the --sim "day" world (the goal is stated for 86400).
    #[arg(long, default_value_t = 86_400, value_name = "SECS")]
    pub sim_day_secs: u64,
    /// Also run the payment scenario's search (images/payments, needs the payments disk):
    /// for each planted bug the seeds to the first violation and the shrink of it; the
    /// correct build over the same seeds; world branches per minute.
    #[arg(long)]
    pub payments: bool,
    /// Most seeds per bug for --payments (the goal: a violation within 1000).
    #[arg(long, default_value_t = 1000, value_name = "N")]
    pub payments_seeds: u64,
    /// With --payments: for each bug, N flat explorations (seed ranges 2^32 apart: search seed r's root seeds) and
    /// N guided ones (search seeds 0..N) side by side, branches to the first violation of
    /// each (0: none).
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub payments_roots: u64,
    /// With --payments: only the throughput, not the search: --throughput-branches branches
    /// of the correct build from its setup-complete world snapshot on 2 workers, as `wio
    /// explore --jobs 2` runs them: branches per minute, guest instructions and effective
    /// MIPS per worker against the compute loop, and one branch's wall time by part.
    #[arg(long, requires = "payments")]
    pub throughput: bool,
    /// Branches for --payments --throughput.
    #[arg(long, default_value_t = 16, value_name = "N", requires = "throughput")]
    pub throughput_branches: u64,
    /// Also time one run of the payment world through a 46-minute bank outage
    /// (images/payments/outage.toml, seed 1, needs the payments disk): wall time against
    /// 2,800 virtual s, and the instructions each node executed.
    #[arg(long)]
    pub outage: bool,
    /// Also measure reverse execution (riscv64 small guest, 10+ virtual s of busy loops):
    /// replay speed with the debugger's periodic checkpoints against without, and the
    /// latency of one reverse-stepi at 1 s and at 10 s of virtual time.
    #[arg(long)]
    pub debugger: bool,
    /// Also measure search depth (needs the built guests): a bug planted behind
    /// --search-depths successive 1-in-16 choices (images/probe/wio-planted.c, in each of
    /// --search-forms), explored flat and guided with --search-budget branches from each of
    /// --search-roots snapshots: the first failing branch of each; a guided exploration's
    /// moment cost against RAM size; the Debian boot with code coverage counted against without.
    #[arg(long)]
    pub search: bool,
    /// Forms of the planted bug for --search: sdk (a `sometimes` per stage), blind (no stage
    /// promises), timing (no SDK: stages advance on a clock reading).
    #[arg(
        long,
        value_name = "LIST",
        default_value = "sdk,blind,timing",
        value_delimiter = ','
    )]
    pub search_forms: Vec<String>,
    /// Depths of the planted bug for --search (comma-separated, 1 to 8).
    #[arg(
        long,
        value_name = "LIST",
        default_value = "3,4,5",
        value_delimiter = ','
    )]
    pub search_depths: Vec<u32>,
    /// Root snapshots (boot seeds 1..=N) per depth for --search.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub search_roots: u64,
    /// Branches per exploration for --search.
    #[arg(long, value_name = "N", default_value_t = 5000)]
    pub search_budget: u64,
    /// --search explores guided only (no flat explorations: minutes each, and they find
    /// nothing beyond depth 3 in 5000 branches).
    #[arg(long)]
    pub search_guided_only: bool,
    /// Also write the figures as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}
