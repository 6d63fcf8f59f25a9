//! `wio explore --slurm TASKS`: the same exploration as a Slurm job array, submitted,
//! followed and merged from here. Each array task runs deploy/slurm/explore.sbatch (built
//! into wio) on one shard; this process shows the array's progress, then merges the shard
//! reports (naming any that are missing) into the report, as `wio report merge` does.
//! The snapshot, the wio binary and the report's folder must be on storage every node
//! sees (the paths are passed as they are here, made absolute).

use super::{merge, Explore, Report};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};
use wio_machines::error::{ExploreError, Result, WioError};

/// The array task's script (the one deploy/slurm ships).
const EXPLORE_SBATCH: &str = include_str!("../../../../deploy/slurm/explore.sbatch");

/// Single quotes for the shell.
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

fn absolute(p: &Path) -> Result<PathBuf> {
    std::path::absolute(p).map_err(|source| {
        ExploreError::Absolute {
            path: p.to_path_buf(),
            source,
        }
        .into()
    })
}

fn io<'a>(what: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> WioError + 'a {
    move |source| WioError::Output {
        what,
        path: path.to_path_buf(),
        source,
    }
}

/// The `wio explore` arguments of `x` a task adds to its own (--from, --seeds, --shard,
/// --jobs and --report are the task's).
fn task_args(x: &Explore) -> Vec<String> {
    let mut a = Vec::new();
    if let Some(u) = &x.until {
        a.push(format!("--until=console:{u}"));
    }
    for m in &x.matches {
        a.push(format!("--match={m}"));
    }
    for f in &x.fail_on {
        a.push(format!("--fail-on={f}"));
    }
    a.push(format!(
        "--max-virtual-secs={}",
        x.max_virtual_ns / 1_000_000_000
    ));
    if let Some(level) = x.sched_noise {
        a.push(format!("--sched-noise={}", level.name()));
    }
    if let Some(d) = &x.disk {
        a.push(d.display().to_string());
    }
    a
}

/// Runs `x` as an array of `tasks` Slurm tasks of `cpus` CPUs each (`sbatch_args`: more
/// sbatch options); returns the merged report.
pub fn explore(x: &Explore, tasks: u64, cpus: usize, sbatch_args: &[String]) -> Result<Report> {
    if tasks == 0 || tasks > 100_000 {
        return Err(ExploreError::SlurmTasks.into());
    }
    let work = absolute(&x.report.with_extension("slurm"))?;
    std::fs::create_dir_all(work.join("logs")).map_err(io("Slurm folder", &work))?;
    for i in 0..tasks {
        let _ = std::fs::remove_file(work.join(format!("shard-{i}.json")));
    }
    let script = work.join("explore.sbatch");
    std::fs::write(&script, EXPLORE_SBATCH).map_err(io("Slurm script", &script))?;
    let exe = std::env::current_exe().map_err(|source| WioError::Host {
        what: "finding the wio binary",
        source,
    })?;
    let env = format!(
        "WIO={}\nWIO_SNAPSHOT={}\nWIO_SEEDS={}\nWIO_OUT={}\nWIO_ARGS=({})\n",
        quote(&exe.to_string_lossy()),
        quote(&absolute(&x.from)?.to_string_lossy()),
        quote(&format!("{}..{}", x.seeds.start, x.seeds.end)),
        quote(&work.to_string_lossy()),
        task_args(x)
            .iter()
            .map(|a| quote(a))
            .collect::<Vec<_>>()
            .join(" ")
    );
    let env_file = work.join("wio-explore.env");
    std::fs::write(&env_file, env).map_err(io("Slurm settings", &env_file))?;
    let out = Command::new("sbatch")
        .arg("--parsable")
        .arg(format!("--array=0-{}", tasks - 1))
        .arg(format!("--cpus-per-task={cpus}"))
        .arg(format!(
            "--output={}",
            work.join("logs/explore-%A_%a.out").display()
        ))
        .arg(format!("--export=ALL,WIO_ENV={}", env_file.display()))
        .args(sbatch_args)
        .arg(&script)
        .output()
        .map_err(ExploreError::Sbatch)?;
    if !out.status.success() {
        return Err(ExploreError::SbatchRefused {
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        }
        .into());
    }
    let job = String::from_utf8_lossy(&out.stdout)
        .trim()
        .split(';')
        .next()
        .unwrap_or_default()
        .to_string();
    eprintln!(
        "wio: Slurm array job {job}: {tasks} tasks of {cpus} CPU(s); shard reports and logs in {}",
        work.display()
    );
    let started = Instant::now();
    let mut last = String::new();
    loop {
        // Ctrl-C or SIGTERM (wio_machines::interrupt): cancel the array, merge what finished.
        if wio_machines::interrupt::requested() {
            eprintln!("wio: interrupted: cancelling array job {job}");
            let _ = Command::new("scancel").arg(&job).output();
            break;
        }
        let q = Command::new("squeue")
            .args(["-h", "-r", "-j", &job, "-o", "%T"])
            .output();
        let states = match q {
            Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).into_owned(),
            _ => String::new(),
        };
        let running = states.lines().filter(|l| *l == "RUNNING").count();
        let queued = states.lines().count() - running;
        let done = (0..tasks)
            .filter(|i| work.join(format!("shard-{i}.json")).exists())
            .count();
        let line = format!(
            "slurm: {done}/{tasks} shards done, {running} running, {queued} queued ({:.0} s)",
            started.elapsed().as_secs_f64()
        );
        if line != last {
            eprintln!("{line}");
            last = line;
        }
        if states.trim().is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(1000));
    }
    let shards: Vec<PathBuf> = (0..tasks)
        .map(|i| work.join(format!("shard-{i}.json")))
        .collect();
    let report = merge(&shards, true)?;
    super::write_report(&report, &x.report)?;
    Ok(report)
}
