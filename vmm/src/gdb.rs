//! Serving gdb's remote protocol: where wio waits for gdb. The protocol itself, per
//! architecture, is in `arch/*/gdb.rs` (riscv64: registers, memory, breakpoints,
//! watchpoints, stepping and reverse execution over the replay debugger).

use crate::error::{Result, WioError};
use std::net::{TcpListener, TcpStream};

/// Listens on `addr` (host:port), says how to connect, and returns gdb's connection.
pub fn accept(addr: &str) -> Result<TcpStream> {
    let listener = TcpListener::bind(addr).map_err(|e| {
        WioError::Debugger(format!(
            "--gdb {addr}: cannot listen there: {e} (give a free host:port, e.g. 127.0.0.1:1234)"
        ))
    })?;
    let local = listener
        .local_addr()
        .map_err(|e| WioError::Debugger(format!("--gdb {addr}: {e}")))?;
    eprintln!(
        "wio: waiting for gdb on {local}: gdb-multiarch -ex 'set architecture riscv:rv64' -ex 'target remote {local}'"
    );
    let (conn, peer) = listener
        .accept()
        .map_err(|e| WioError::Debugger(format!("--gdb {addr}: accepting gdb: {e}")))?;
    // Packets are small and interactive.
    let _ = conn.set_nodelay(true);
    eprintln!("wio: gdb connected from {peer}");
    Ok(conn)
}
