//! `wio bench --sim`: what a world of three small riscv64 nodes costs.
//!
//! - idle: three nodes that only sleep, virtual seconds per wall second;
//! - pinging: one node pings another every second, the same ratio;
//! - a day: a small message (nc) from one node to another every virtual minute for
//!   `day_secs` virtual seconds (the goal: 24 virtual hours in under 5 wall
//!   minutes on 2 cores), wall time.

use serde_json::json;
use wio_machines::error::{BenchFailure, Result};
use wio_world::{self as world, scenario::Scenario};

fn world(run_a: &str, run_b: &str, run_c: &str, max_secs: u64) -> Result<Scenario> {
    let text = format!(
        "max_virtual_secs = {max_secs}\n[link]\nlatency_us = 200\n\
         [[node]]\nname = \"a\"\nrun = {run_a:?}\n\
         [[node]]\nname = \"b\"\nrun = {run_b:?}\n\
         [[node]]\nname = \"c\"\nrun = {run_c:?}\n"
    );
    Scenario::parse_in(&text, std::path::Path::new("")).map_err(|source| {
        BenchFailure::World {
            which: "bench",
            source,
        }
        .into()
    })
}

/// Runs `s` on `jobs` threads; returns (virtual s, wall s).
fn measure(s: &Scenario, jobs: usize) -> Result<(f64, f64)> {
    let opts = world::Options {
        quiet: true,
        jobs,
        ..world::Options::default()
    };
    let w = world::run(s, 1, &opts)?;
    if w.wio_exit_code != 0 {
        return Err(BenchFailure::WorldFailed {
            code: w.wio_exit_code,
            summary: w.human(),
        }
        .into());
    }
    Ok((w.virtual_ns as f64 / 1e9, w.wall_ns as f64 / 1e9))
}

/// World branches of the pinging world `s`: a world snapshot at 10 virtual s, then
/// (creation latency of a branch in ms, median of 9 restores; branches per minute on 2
/// worker threads, each branch running `BRANCH_SECS` virtual s; BRANCH_SECS).
fn branches(s: &Scenario) -> Result<(f64, f64, u64)> {
    const BRANCH_SECS: u64 = 5;
    const AT_NS: u64 = 10_000_000_000;
    let dir = crate::scratch_dir("wio-bench-world", "bench folder")?;
    let snap = dir.join("world.snap");
    eprintln!("bench: world branches: a world snapshot at 10 virtual s…");
    let result = (|| {
        let take = world::Options {
            quiet: true,
            jobs: 1,
            snapshot: Some((world::SnapWhen::Time(AT_NS), snap.clone())),
            max_virtual_ns: Some(AT_NS + 1),
            ..world::Options::default()
        };
        world::run(s, 1, &take)?;
        let loaded = world::snapshot::LoadedWorld::load(&snap)?;
        let opts = |secs: u64| world::Options {
            quiet: true,
            jobs: 1,
            max_virtual_ns: Some(loaded.state.at_ns + secs * 1_000_000_000),
            ..world::Options::default()
        };
        // Creation latency: branches that run one quantum.
        let mut starts: Vec<f64> = Vec::new();
        for seed in 0..9 {
            let w = world::restore(&loaded, Some(seed), &opts(0), None)?.ok_or(
                wio_machines::error::WioError::NoResult {
                    what: "a bench world branch",
                },
            )?;
            starts.push(w.start_wall_ns as f64 / 1e6);
        }
        starts.sort_by(f64::total_cmp);
        eprintln!("bench: world branches of {BRANCH_SECS} virtual s on 2 workers…");
        let n = 16u64;
        let seeds: Vec<u64> = (100..100 + n).collect();
        let wall = std::time::Instant::now();
        wio_machines::pool::map_in_order(&seeds, 2, |seed| {
            world::restore(&loaded, Some(*seed), &opts(BRANCH_SECS), None).map(|_| ())
        })?;
        let per_minute = n as f64 * 60.0 / wall.elapsed().as_secs_f64();
        Ok((starts[starts.len() / 2], per_minute, BRANCH_SECS))
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result
}

/// The figures, printed and as JSON.
pub fn figures(day_secs: u64) -> Result<serde_json::Value> {
    let secs = 120;
    eprintln!("bench: world of 3 idle nodes, {secs} virtual s…");
    let idle = world(
        &format!("sleep {secs}"),
        &format!("sleep {secs}"),
        &format!("sleep {secs}"),
        secs + 60,
    )?;
    let (iv, iw) = measure(&idle, 1)?;
    println!(
        "world idle (3 nodes)       {:>12.1} virtual s per wall s",
        iv / iw
    );
    eprintln!("bench: world of 3 nodes, a pings b every second, {secs} virtual s…");
    let ping = world(
        &format!("ping -c {secs} -q b"),
        &format!("sleep {secs}"),
        &format!("sleep {secs}"),
        secs + 60,
    )?;
    let (pv, pw) = measure(&ping, 1)?;
    println!(
        "world pinging (3 nodes)    {:>12.1} virtual s per wall s",
        pv / pw
    );
    eprintln!("bench: the same pinging world with --jobs 2…");
    let (_, pw2) = measure(&ping, 2)?;
    println!(
        "world --jobs 2 / --jobs 1  {:>12.2} speed-up (pinging world)",
        pw / pw2
    );
    let minutes = day_secs / 60;
    eprintln!("bench: world of 3 nodes, a message a minute for {day_secs} virtual s…");
    let day = world(
        &format!(
            "i=0; while [ $i -lt {minutes} ]; do sleep 60; echo m$i | nc b 5000; i=$((i+1)); done"
        ),
        &format!("i=0; while [ $i -lt {minutes} ]; do nc -l -p 5000 >/dev/null; i=$((i+1)); done"),
        &format!("sleep {day_secs}"),
        day_secs + 120,
    )?;
    let (dv, dw) = measure(&day, 1)?;
    println!(
        "world day (3 nodes)        {:>12.1} wall s for {:.0} virtual s, a message a minute (goal for 86400: < 300)",
        dw, dv
    );
    let (latency_ms, per_minute, branch_secs) = branches(&ping)?;
    println!(
        "world branch creation      {latency_ms:>12.1} ms (3 nodes restored from a world snapshot, median)"
    );
    println!(
        "world branches per minute  {per_minute:>12.1} ({branch_secs} virtual s each, 2 workers)"
    );
    Ok(json!({
        "branch_create_ms": latency_ms,
        "branches_per_minute": per_minute,
        "branch_virtual_s": branch_secs,
        "idle_virtual_s_per_wall_s": iv / iw,
        "ping_virtual_s_per_wall_s": pv / pw,
        "jobs2_speedup": pw / pw2,
        "day_virtual_s": dv,
        "day_wall_s": dw,
    }))
}
