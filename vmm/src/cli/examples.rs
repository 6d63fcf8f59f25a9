//! The examples and notes at the end of `wio SUBCOMMAND --help` (clap's `after_help`).

pub(super) const SIM_EXAMPLES: &str = "\
Examples:
  wio sim world.toml --seed 7                  # every node's console, prefixed with its name
  wio sim compose.yaml --seed 7                # a compose file: one imported image per service
  wio sim world.toml --seed 7 --quiet --summary-json world.json
  wio sim world.toml --seed 7 --snapshot-at 2s --snapshot-out world.snap
  wio sim images/payments/world.toml --node-args payments=wio.bug=receipt-no-retry
  wio sim --from world.snap                    # continues exactly as the world that took it
  wio sim --from world.snap --seed 99          # same past, a different future
  wio explore --from world.snap --seeds 0..100 --fail-on 'FAILED'
  wio explore --from world.snap --budget 400 --report guided.json   # guided: moments of the whole world
  wio sim --from world.snap --path 17@2140000000,90   # one branch of a guided exploration
  wio sim world.toml --seed 7 --net host --allow api=127.0.0.1:8080 --record api.tape
  wio sim world.toml --replay api.tape         # the recorded run again, without the host

A scenario (TOML) names nodes ([[node]]: name, guest or kernel/initrd, mem_mib, run = a
shell script, faults, sched_noise, clock_drift_ppm, networks) and links ([link] defaults, [[links]]
between = [\"a\", \"b\"]: latency_us, jitter_us, loss_ppm, duplicate_ppm), [[partition]]s,
[[degrade]]s, [faults] (partitions and degraded links drawn from the seed), [peer] (an
external smoltcp echo service at 10.0.0.254) and [[dependency]]s (HTTP APIs the peer
serves, with seeded faults). Node i is 10.0.0.(i+1); nodes reach each other
through a network they share (networks = [\"back\"]; default: one network), and every
guest's /etc/hosts names those. Nodes are riscv64: x86-64 machines
stop only at exits, cannot keep a world's quantum, and are refused. See docs/worlds.md.";

pub(super) const RUN_EXAMPLES: &str = "\
Examples:
  wio run --seed 42                          # built-in x86-64 test guest
  wio run --seed 42 --trace run.jsonl --summary-json run.json
  wio run --seed 7 --kernel bzImage --initrd initrd.cpio --mem 512
  wio run --seed 7 --epoch 2030-01-01T00:00:00Z --cmdline 'status=3'
  wio run --arch riscv64 --seed 42            # small riscv64 Linux guest (images/build-all-riscv64.sh)
  wio run --arch riscv64 --guest debian       # Debian trixie's unmodified riscv64 kernel
  wio run --arch riscv64 --isa rv64gc_zba_zbb_zbs   # with the bit-manipulation extensions
  wio run --arch riscv64 --isa rv64gcv --guest debian   # and vectors (RVV 1.0, VLEN 512)
  wio run --arch riscv64 --kernel Image --initrd initramfs.cpio.gz
  wio run --arch riscv64 --seed 7 rootfs.ext4 --persist after.ext4   # virtio-blk root disk
  wio run --image myservice --seed 7          # an imported container image (wio image import)
  wio run --image alpine -- /bin/sh -c 'cat /etc/os-release'   # ... with another command
  wio run --arch riscv64 --seed 7 --snapshot-at 1.5s --snapshot-out boot.snap
  wio run --from boot.snap                     # continues exactly as the original run did
  wio run --from boot.snap --seed 99           # same past, a different future
  wio run --from boot.snap --seed 99 --sched-noise heavy   # ... with heavy timing noise from there
  wio run --arch riscv64 --seed 3 --sched-noise off   # timer interrupts exactly when due
  wio run --arch riscv64 --seed 3 --faults heavy --fault-plan-out plan.json   # faults from the seed
  wio run --arch riscv64 --seed 3 --fault-plan plan.json   # exactly these faults (edit, replay)
  wio run --arch riscv64 --seed 1 --cmdline 'console=ttyS0 wio.promises=demo'   # promises (exit 108 if one fails)
  wio run --arch riscv64 --seed 3 --net host --allow api=127.0.0.1:8080 --record api.tape   # the guest reaches 10.0.2.2:8080
  wio run --arch riscv64 --replay api.tape     # the recorded run again, without the host
  wio run --arch riscv64 --seed 3 --gdb 127.0.0.1:1234   # then: gdb-multiarch -ex 'target remote :1234'
  wio run --from boot.snap --gdb 127.0.0.1:1234          # debug a replay: reverse-stepi, reverse-continue";

pub(super) const EXPLORE_EXAMPLES: &str = "\
Examples:
  wio run --arch riscv64 --seed 1 --snapshot-at console:'wio-init: start' --snapshot-out start.snap
  wio explore --from start.snap --seeds 0..1000 --jobs 2 --fail-on 'Kernel panic'
  wio explore --from start.snap --seeds 0..1000 --until console:'workload: net' --match 'replies'
  wio explore --from start.snap --seeds 0..100000 --shard $JOB_COMPLETION_INDEX/8 --report shard-$JOB_COMPLETION_INDEX.json
  wio report merge shard-*.json --out all.json
  wio explore --from /shared/start.snap --seeds 0..100000 --slurm 64 --jobs 4 --report /shared/all.json
  wio explore --from race.snap --seeds 0..100 --until 'console:race: counter='   # see docs/exploration.md: wio-race
  wio explore --from race.snap --seeds 0..100 --sched-noise heavy   # more timing noise than the snapshot had
  wio explore --from bank.snap --seeds 0..100 --junit promises.xml   # promises judged over all seeds
  wio explore --from bank.snap --seeds 0..100 --html triage.html      # a page to triage in a browser
  wio explore --from planted.snap --budget 5000 --jobs 2   # guided: branches again where something is new
  wio run --from planted.snap --path 17@2140000000,5@2161234567,90   # one branch of a guided exploration

A seed fails when its branch ends with a wio error (guest crash, time limit), a non-zero guest
status, a --fail-on text on the console, or a violated `always` promise; promises are also
judged over all seeds (a `sometimes` must be true in one). Each failing seed is listed with the
command that reproduces it; the JSON report has every seed.

A guided exploration (--budget) keeps a moment (an in-memory snapshot) wherever a branch sees
something new (a promise's condition for the first time, a console line of a new shape) and
starts later branches from the moments with the most energy; its report holds the tree of
moments, the growth of what was seen, and each branch's path (its reproduce line is
`wio run --from SNAP --path PATH`; of a world snapshot, whose moments keep the whole world,
`wio sim --from SNAP --path PATH`). Flat stays the default with --seeds: it shards across
machines and its seeds stand alone; guided goes deep where flat needs millions of seeds.";

pub(super) const IMAGE_EXAMPLES: &str = "\
Examples:
  podman build --platform linux/riscv64 -t myservice .
  podman save --format oci-archive -o myservice.tar myservice
  wio image import myservice.tar               # prints its name, ID and disk
  wio image import ./layout --ref redis:7      # an OCI layout directory holding several images
  docker save -o app.tar app:1 && wio image import app.tar --name app
  wio image list

An image is read from the file or directory alone (no registry). From a multi-platform
index wio takes linux/riscv64. The disk is written into $WIO_CACHE/images/, keyed by the
image ID: the same image gives the same disk bytes. See docs/images.md.";

pub(super) const REPORT_HTML_EXAMPLES: &str = "\
Examples:
  wio report html report.json                       # writes report.html beside it
  wio report html fixed.json --baseline buggy.json -o triage.html
  wio report html all.json --no-timelines           # the report alone, nothing run again

The page opens offline in any browser: the properties with their verdicts, a card per
failing seed with its reproduce line, what the failing seeds share, the behaviours found
against branches run, and every seed with filters. See docs/triage.md.";

pub(super) const SHRINK_EXAMPLES: &str = "\
Examples:
  wio shrink --from payments.snap --seed 35                # the seed's first broken promise
  wio shrink --report report.json                          # the report's first failing seed
  wio shrink --from payments.snap --seed 35 --promise receipt --out minimal.json
  wio sim --from payments.snap --seed 35 --fault-plan minimal.json   # reproduce it

Each probe is a branch of the world snapshot with the same seed and a sub-list of the
seed's faults (delta debugging), then each fault shorter and later; probes run on --jobs
threads and the result does not depend on how many.";

pub(super) const VERIFY_EXAMPLES: &str = "\
Examples:
  wio sim images/payments/world.toml --seed 1 --snapshot-at setup-complete --snapshot-out fixed.snap
  wio verify --from fixed.snap --report report.json --plan shrink-35.json

Exit status 0 when every case is fixed, 108 when some still fail.";

pub(super) const DIFF_EXAMPLES: &str = "\
Examples:
  wio sim world.toml --seed 1 --trace-dir run1 && wio sim world.toml --seed 2 --trace-dir run2
  wio diff run1 run2                            # each trace: same, or where it first differs
  wio diff run1 run2 --ignore-times             # the same events in the same order, any time
  wio diff run1 run2 --only console             # what the guests printed, in order
  wio diff a.jsonl b.jsonl --json               # two wio run --trace files, as JSON
  wio verify --golden run1                      # run1 again with this build: the same run?
  wio diff --report explore.json 3 7            # two seeds of an exploration, run again

Exits 0 when the runs are structurally equal, 1 when they differ.";
