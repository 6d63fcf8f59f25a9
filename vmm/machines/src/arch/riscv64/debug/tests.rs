//! The replay debugger against the run without it (needs the built small guest).

use super::*;
use crate::machine::guests;

fn cfg() -> RunConfig {
    RunConfig {
        guest: Some("small".into()),
        epoch_unix: 1_767_225_600,
        max_virtual_ns: 60_000_000_000,
        ..RunConfig::with_seed(3)
    }
}

fn debugger() -> RvDebugger {
    let wall = Instant::now();
    let m = RvMachine::boot(&cfg(), wall).unwrap();
    RvDebugger::new(m, RunPlan { cfg: cfg(), wall }).unwrap()
}

/// Stopping anywhere, stepping back and forth, breakpoints, a watchpoint and
/// restored checkpoints leave the run the run without a debugger (same trace hash);
/// reverse steps come back to the exact registers.
#[test]
fn a_debugged_run_is_the_run_and_goes_back_exactly() {
    if let Err(e) = guests::built_guest("small") {
        wio_require::skip(
            "a_debugged_run_is_the_run_and_goes_back_exactly",
            wio_require::Capability::RiscvGuests,
            &format!("no built small riscv64 guest: {e}"),
        );
        return;
    }
    let wall = Instant::now();
    let plain = crate::machine::driver::run(
        Box::new(RvMachine::boot(&cfg(), wall).unwrap()),
        &cfg(),
        wall,
    );
    let mut d = debugger();
    d.set_interval(3_000_000);
    let never = &mut || false;
    assert_eq!(
        d.forward(Some(20_000_000), false, never).unwrap(),
        Halt::Reached
    );
    assert_eq!(d.position(), 20_000_000);
    let (pc, x) = (d.hart().pc, d.hart().x);
    for _ in 0..5 {
        assert_eq!(
            d.forward(Some(d.position() + 1), false, never).unwrap(),
            Halt::Reached
        );
    }
    for _ in 0..5 {
        assert_eq!(d.reverse_step().unwrap(), Halt::Reached);
    }
    assert_eq!((d.position(), d.hart().pc, d.hart().x), (20_000_000, pc, x));
    // A breakpoint at that pc: continuing from one hit finds the next, and going
    // back from there returns to the first.
    assert!(d.set_breakpoint(pc, false, true));
    let h = d.forward(None, true, never).unwrap();
    eprintln!("breakpoint at {pc:#x}: {h:?} at {}", d.position());
    if h == Halt::Breakpoint {
        let second = d.position();
        assert_eq!(d.hart().pc, pc);
        assert_eq!(d.reverse_continue().unwrap(), Halt::Breakpoint);
        assert_eq!((d.position(), d.hart().x), (20_000_000, x));
        d.seek(second).unwrap();
    }
    assert!(d.set_breakpoint(pc, false, false));
    // A write watchpoint on jiffies (its address from the kernel's System.map): a
    // forward hit stops before the writing instruction, one step writes it, and
    // reverse-continue from a later hit comes back to just after that write.
    let (kernel, _) = guests::built_guest("small").unwrap();
    let map = std::fs::read_to_string(kernel.with_file_name("System.map")).unwrap();
    let jiffies = map
        .lines()
        .find_map(|l| l.strip_suffix(" D jiffies"))
        .map(|a| u64::from_str_radix(a, 16).unwrap())
        .expect("jiffies in System.map");
    let read = |d: &RvDebugger| {
        let mut b = [0u8; 8];
        assert_eq!(d.hart().debug_read(jiffies, &mut b, true), 8);
        u64::from_le_bytes(b)
    };
    assert!(d.set_watchpoint(jiffies, 8, true));
    assert_eq!(d.forward(None, true, never).unwrap(), Halt::Watch(jiffies));
    let before = read(&d);
    d.forward(Some(d.position() + 1), false, never).unwrap();
    let first = d.position();
    assert_eq!(read(&d), before + 1, "the step wrote jiffies");
    assert_eq!(d.forward(None, true, never).unwrap(), Halt::Watch(jiffies));
    d.forward(Some(d.position() + 1), false, never).unwrap();
    assert_eq!(read(&d), before + 2);
    assert_eq!(d.reverse_continue().unwrap(), Halt::Watch(jiffies));
    assert_eq!((d.position(), read(&d)), (first, before + 1));
    assert!(d.set_watchpoint(jiffies, 8, false));
    // Seeks by retired instructions and by time land where asked.
    d.seek_instret(15_000_000).unwrap();
    assert_eq!(d.instret(), 15_000_000);
    d.seek_time(50_000_000).unwrap();
    assert!(d.now().as_ns() >= 50_000_000);
    let r = d.finish();
    assert_eq!(r.outcome.unwrap(), 0);
    assert_eq!(r.summary.trace_hash, plain.summary.trace_hash);
    assert_eq!(r.summary.console_sha256, plain.summary.console_sha256);
}
