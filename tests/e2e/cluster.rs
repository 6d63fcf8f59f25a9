//! End-to-end test of exploring on a real cluster engine: a single-node Slurm cluster on
//! this machine (deploy/slurm/local-cluster.sh installs Debian's slurm-wlm and munge and
//! starts munged, slurmctld and slurmd in a folder of their own), a 4-task job array over
//! 64 seeds of a riscv64 snapshot submitted by deploy/slurm/submit.sh, the dependent merge
//! job, and the merged report compared with `wio explore` of the same seeds on one
//! machine. Needs root (to install the packages when missing), the built riscv64 guests,
//! and Debian's package archive the first time.

#![forbid(unsafe_code)]

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};
use wio_e2e_tests::{
    explore_to, read_report as report, require_riscv_guests, riscv_snapshot, scratch, skip, stderr,
    wio_bin, Capability,
};

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../deploy/slurm")
        .join(name)
}

/// The cluster's daemons, stopped when dropped (also when the test fails).
struct Cluster {
    dir: PathBuf,
    conf: String,
}

impl Cluster {
    fn start(dir: &Path) -> Result<Cluster, String> {
        let out = Command::new(script("local-cluster.sh"))
            .arg("start")
            .arg(dir)
            .output()
            .map_err(|e| format!("local-cluster.sh: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "local-cluster.sh start failed: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        let text = String::from_utf8_lossy(&out.stdout);
        let conf = text
            .lines()
            .find_map(|l| l.strip_prefix("export SLURM_CONF="))
            .ok_or_else(|| format!("no SLURM_CONF from local-cluster.sh: {text}"))?
            .to_string();
        Ok(Cluster {
            dir: dir.to_path_buf(),
            conf,
        })
    }

    fn run(&self, cmd: &mut Command) -> std::process::Output {
        cmd.env("SLURM_CONF", &self.conf)
            .output()
            .expect("run a Slurm command")
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new(script("local-cluster.sh"))
            .arg("stop")
            .arg(&self.dir)
            .output();
    }
}

/// What must agree between the cluster's report and the local one, per seed.
fn outcomes(r: &Value) -> Vec<(u64, String, Value, u64, String)> {
    r["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            (
                x["seed"].as_u64().unwrap(),
                x["ended"].as_str().unwrap().to_string(),
                x["exit_status"].clone(),
                x["virtual_ns"].as_u64().unwrap(),
                x["trace_hash"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn a_slurm_job_array_explores_like_one_machine() {
    if !require_riscv_guests("a_slurm_job_array_explores_like_one_machine") {
        return;
    }
    let missing = Command::new("sh")
        .args(["-c", "command -v slurmctld && command -v munged"])
        .output()
        .map_or(true, |o| !o.status.success());
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    if missing && !root {
        skip(
            "a_slurm_job_array_explores_like_one_machine",
            Capability::Slurm,
            "slurm-wlm and munge are not installed, and only root can install them (run as root, or apt-get install slurm-wlm munge)",
        );
        return;
    }
    let dir = scratch("slurm");
    let cluster = Cluster::start(&dir.join("cluster")).unwrap_or_else(|e| panic!("{e}"));
    let snap = dir.join("start.snap");
    riscv_snapshot(&snap, 1, "console:wio-init: start");
    let shared = dir.join("shared");
    let out = cluster.run(
        Command::new(script("submit.sh"))
            .arg(&snap)
            .arg("0..64")
            .arg("4")
            .arg(&shared)
            .env("WIO", wio_bin()),
    );
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let merge_job = text
        .lines()
        .find_map(|l| l.strip_prefix("MERGE_JOB="))
        .unwrap_or_else(|| panic!("no merge job: {text}"))
        .to_string();
    // Follow the merge job until it has left the queue.
    let started = Instant::now();
    loop {
        let q = cluster.run(Command::new("squeue").args(["-h", "-j", &merge_job, "-o", "%T"]));
        let state = String::from_utf8_lossy(&q.stdout).trim().to_string();
        if state.is_empty() {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(900),
            "the merge job is still {state} after 15 minutes"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    let merged = shared.join("report.json");
    assert!(
        merged.exists(),
        "no merged report; merge log: {}",
        std::fs::read_dir(shared.join("logs"))
            .map(|d| d
                .flatten()
                .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
                .collect::<Vec<_>>()
                .join("\n"))
            .unwrap_or_default()
    );
    let cluster_report = report(&merged);
    assert_eq!(cluster_report["complete"], true, "{cluster_report}");
    assert_eq!(cluster_report["shards"][0], 4);
    // The same seeds on one machine.
    let local = dir.join("local.json");
    let out = explore_to(&snap, "0..64", &local, &[]);
    assert!(matches!(out.status.code(), Some(0 | 1)), "{}", stderr(&out));
    let local_report = report(&local);
    let (c, l) = (outcomes(&cluster_report), outcomes(&local_report));
    assert_eq!(c.len(), 64);
    assert_eq!(
        c, l,
        "the cluster's seeds are the one machine's, outcome by outcome"
    );
    // The same from wio itself: submitted, followed and merged by `wio explore --slurm`.
    let by_wio = dir.join("by-wio.json");
    let out = cluster.run(Command::new(wio_bin()).args([
        "explore",
        "--from",
        snap.to_str().unwrap(),
        "--seeds",
        "0..64",
        "--slurm",
        "4",
        "--jobs",
        "1",
        "--report",
        by_wio.to_str().unwrap(),
    ]));
    assert!(matches!(out.status.code(), Some(0 | 1)), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("slurm: 4/4 shards done"),
        "{}",
        stderr(&out)
    );
    let r = report(&by_wio);
    assert_eq!(r["complete"], true);
    assert_eq!(outcomes(&r), l);
    drop(cluster);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_container_root_holds_all_wio_needs_to_explore() {
    if !require_riscv_guests("the_container_root_holds_all_wio_needs_to_explore") {
        return;
    }
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    if !root {
        skip(
            "the_container_root_holds_all_wio_needs_to_explore",
            Capability::Root,
            "deploy/container/build.sh checks the image with chroot, which needs root (run as root)",
        );
        return;
    }
    let dir = scratch("container");
    let staged = dir.join("image");
    let out =
        Command::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/container/build.sh"))
            .arg(wio_bin())
            .arg(&staged)
            .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin") // no docker: stage only
            .output()
            .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(staged.join("rootfs.tar").exists() && staged.join("Containerfile").exists());
    // An exploration inside the image's root (nothing else there): same seeds, same traces.
    let rootfs = staged.join("rootfs");
    let snap = rootfs.join("shared/start.snap");
    riscv_snapshot(&snap, 1, "console:wio-init: start");
    let inside = Command::new("chroot")
        .arg(&rootfs)
        .args([
            "/usr/bin/wio",
            "explore",
            "--from",
            "/shared/start.snap",
            "--seeds",
            "0..4",
            "--jobs",
            "2",
            "--exit-zero",
            "--report",
            "/shared/inside.json",
        ])
        .output()
        .unwrap();
    assert_eq!(
        inside.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&inside.stderr)
    );
    let outside = dir.join("outside.json");
    let o = explore_to(&snap, "0..4", &outside, &[]);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
    assert_eq!(
        outcomes(&report(&rootfs.join("shared/inside.json"))),
        outcomes(&report(&outside))
    );
    let _ = std::fs::remove_dir_all(dir);
}
