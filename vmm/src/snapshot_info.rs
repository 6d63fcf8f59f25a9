//! `wio snapshot info`: what a snapshot file holds, as text or JSON (a machine's
//! sections, its point and artifacts; a world's nodes, switch and frames in flight).

use wio_machines::error::WioError;
use wio_machines::snapshot;

/// `wio snapshot info` of a world snapshot.
pub(crate) fn world(path: &std::path::Path, as_json: bool) -> Result<i32, WioError> {
    let bytes = std::fs::read(path).map_err(|source| WioError::ArtifactIo {
        what: "world snapshot",
        path: path.to_path_buf(),
        source,
    })?;
    let (st, nodes, sha256) = wio_world::snapshot::decode(path, &bytes)?;
    let names: Vec<&str> = st.scenario.nodes.iter().map(|n| n.name.as_str()).collect();
    if as_json {
        let doc = serde_json::json!({
            "world": true, "sha256": sha256, "seed": st.seed, "virtual_ns": st.at_ns,
            "reason": st.reason, "wio_version": st.wio_version, "nodes": names,
            "frames_in_flight": st.in_flight.len(), "peer": st.scenario.peer,
            "dependencies": st.scenario.dependencies.iter().enumerate().map(|(i, d)| serde_json::json!({
                "name": d.name, "port": d.port, "routes": d.routes.len(),
                "faults": st.scenario.dependency_faults.iter().filter(|f| f.dependency == i).count(),
            })).collect::<Vec<_>>(),
            "node_snapshots": nodes.iter().map(|n| &n.meta).collect::<Vec<_>>(),
        });
        println!("{doc:#}");
        return Ok(0);
    }
    println!("world snapshot {}", path.display());
    println!(
        "format        world version {}.{} (wio {})",
        wio_world::snapshot::FORMAT.major,
        wio_world::snapshot::FORMAT.minor,
        st.wio_version
    );
    println!("checksum      {sha256} (verified)");
    println!(
        "taken at      {:.9} virtual s ({}), seed {}",
        st.at_ns as f64 / 1e9,
        st.reason,
        st.seed
    );
    println!(
        "switch        {} frames in flight{}",
        st.in_flight.len(),
        st.scenario
            .peer
            .as_ref()
            .map(|p| format!("; external service {p}"))
            .unwrap_or_default()
    );
    for (i, d) in st.scenario.dependencies.iter().enumerate() {
        let faults = st
            .scenario
            .dependency_faults
            .iter()
            .filter(|f| f.dependency == i)
            .count();
        println!(
            "dependency    {} (port {} of the peer, {} routes), {faults} faults",
            d.name,
            d.port,
            d.routes.len()
        );
    }
    for ((name, n), ended) in names.iter().zip(&nodes).zip(&st.ended) {
        let pages: u64 = n
            .memory
            .iter()
            .map(|(_, b)| b.len() as u64 / snapshot::PAGE)
            .sum();
        println!(
            "node {name:<8} {} {} MiB RAM, {:.1} MiB non-zero, {} instructions{}",
            n.meta.arch,
            n.meta.mem_bytes >> 20,
            (pages * snapshot::PAGE) as f64 / (1 << 20) as f64,
            n.meta.instructions.unwrap_or(0),
            ended
                .map(|s| format!(", ended (exit {s})"))
                .unwrap_or_default()
        );
    }
    println!("restore with  wio sim --from {} [--seed S]", path.display());
    Ok(0)
}

/// `wio snapshot info`.
pub(crate) fn machine(
    path: &std::path::Path,
    s: &snapshot::Snapshot,
    as_json: bool,
) -> Result<i32, WioError> {
    let pages: u64 = s
        .memory
        .iter()
        .map(|(_, b)| b.len() as u64 / snapshot::PAGE)
        .sum();
    let m = &s.meta;
    if as_json {
        let doc = serde_json::json!({
            "meta": m, "sha256": s.sha256, "memory_pages": pages,
            "machine_state_bytes": s.state.iter().map(|(_, b)| b.len()).sum::<usize>(),
            "sections": s.state.iter().map(|(n, b)| serde_json::json!({"name": n, "bytes": b.len()})).collect::<Vec<_>>(),
        });
        println!("{doc:#}");
        return Ok(0);
    }
    println!("snapshot      {}", path.display());
    println!(
        "format        version {}.{} (wio {})",
        snapshot::FORMAT.major,
        snapshot::FORMAT.minor,
        m.wio_version
    );
    println!("checksum      {} (verified)", s.sha256);
    println!(
        "guest         {} with {} MiB RAM at {:#x}",
        m.arch,
        m.mem_bytes >> 20,
        m.mem_base
    );
    println!(
        "taken at      {:.9} virtual s ({}), seed {}",
        m.virtual_ns as f64 / 1e9,
        m.reason,
        m.seed
    );
    if let Some(n) = m.instructions {
        println!("instructions  {n}");
    }
    println!(
        "memory        {pages} non-zero pages ({:.1} MiB); machine state {} bytes in {} sections",
        (pages * snapshot::PAGE) as f64 / (1 << 20) as f64,
        s.state.iter().map(|(_, b)| b.len()).sum::<usize>(),
        s.state.iter().count()
    );
    let names: Vec<String> = s
        .state
        .iter()
        .map(|(n, b)| format!("{n} ({b} B)", b = b.len()))
        .collect();
    println!("sections      {}", names.join(", "));
    println!("kernel        sha256 {}", m.kernel_sha256);
    if let Some(i) = &m.initrd_sha256 {
        println!("initrd        sha256 {i}");
    }
    println!("cmdline       {}", m.cmdline);
    if let Some(d) = &m.disk {
        println!(
            "disk          {} ({} bytes, sha256 {})",
            d.path.display(),
            d.len,
            d.sha256
        );
    }
    println!(
        "network link  latency {} ns, jitter {} ns, loss {} ppm, duplication {} ppm",
        m.link[0], m.link[1], m.link[2], m.link[3]
    );
    println!("restore       wio run --from {} [--seed S]", path.display());
    Ok(0)
}
