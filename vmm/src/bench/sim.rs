//! `wio bench --sim`: what a world of three small riscv64 nodes costs.
//!
//! - idle: three nodes that only sleep, virtual seconds per wall second;
//! - pinging: one node pings another every second, the same ratio;
//! - a day: a small message (nc) from one node to another every virtual minute for
//!   `day_secs` virtual seconds (the goal: 24 virtual hours in under 5 wall
//!   minutes on 2 cores), wall time.

use crate::error::Result;
use crate::world::{self, scenario::Scenario};
use serde_json::json;

fn world(run_a: &str, run_b: &str, run_c: &str, max_secs: u64) -> Result<Scenario> {
    let text = format!(
        "max_virtual_secs = {max_secs}\n[link]\nlatency_us = 200\n\
         [[node]]\nname = \"a\"\nrun = {run_a:?}\n\
         [[node]]\nname = \"b\"\nrun = {run_b:?}\n\
         [[node]]\nname = \"c\"\nrun = {run_c:?}\n"
    );
    Scenario::parse_in(&text, std::path::Path::new(""))
        .map_err(|e| crate::error::WioError::Internal(format!("bench world: {e}")))
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
        return Err(crate::error::WioError::Internal(format!(
            "bench world ended with {}: {}",
            w.wio_exit_code,
            w.human()
        )));
    }
    Ok((w.virtual_ns as f64 / 1e9, w.wall_ns as f64 / 1e9))
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
    Ok(json!({
        "idle_virtual_s_per_wall_s": iv / iw,
        "ping_virtual_s_per_wall_s": pv / pw,
        "jobs2_speedup": pw / pw2,
        "day_virtual_s": dv,
        "day_wall_s": dw,
    }))
}
