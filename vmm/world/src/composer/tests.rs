//! The composer's rules, checked on simulated agents: what runs when, alone or beside
//! what, with faults held off where the rules say; the same seed gives the same branch
//! and seeds differ; what fails is a violated property; bad agent lines are counted.

use super::*;
use wio_machines::promises::Status;

/// A simulated world: `inventory` (node, TEMPLATE/NAME) reported at 0, setup complete at
/// 0, each run ending `len(path)` ns after it starts with `status(path)`; boundaries every
/// 10 ms up to 200 s. Returns the composer at its end.
fn simulate(
    seed: u64,
    agents: &[bool],
    inventory: &[(usize, &str)],
    len: impl Fn(&str) -> u64,
    status: impl Fn(&str) -> i32,
) -> Composer {
    let mut c = Composer::new(RunSeed(seed), agents);
    let mut trace = Trace::new();
    let mut out = Orders::default();
    for (node, path) in inventory {
        c.take_line(
            *node,
            0,
            format!("command {path}").as_bytes(),
            &mut trace,
            &mut out,
        );
    }
    for (node, a) in agents.iter().enumerate() {
        if *a {
            c.take_line(node, 0, b"ready", &mut trace, &mut out);
        }
    }
    // (end time, node, run id, status)
    let mut ends: Vec<(u64, usize, usize, i32)> = Vec::new();
    let mut t = 0;
    while t < 200_000_000_000 && !c.done() {
        ends.sort();
        let due: Vec<_> = ends.iter().copied().filter(|e| e.0 <= t).collect();
        ends.retain(|e| e.0 > t);
        let mut out = Orders::default();
        for (at, node, id, st) in due {
            c.take_line(
                node,
                at,
                format!("exited {id} {st}").as_bytes(),
                &mut trace,
                &mut out,
            );
        }
        c.step(t, true, &mut trace, &mut out);
        for (node, line) in out.lines {
            let w: Vec<&str> = line.split(' ').collect();
            let id: usize = w[1].parse().unwrap();
            match w[0] {
                "start" => ends.push((t + len(w[2]), node, id, status(w[2]))),
                "kill" => {
                    ends.retain(|e| e.2 != id);
                    ends.push((t, node, id, 137));
                }
                other => panic!("order {other}"),
            }
        }
        t += 10_000_000;
    }
    c
}

const MAIN: [(usize, &str); 8] = [
    (1, "main/first_setup"),
    (1, "main/parallel_driver_a"),
    (1, "main/parallel_driver_b"),
    (2, "main/serial_driver_c"),
    (1, "main/anytime_d"),
    (1, "main/eventually_e"),
    (1, "main/finally_f"),
    (1, "main/helper_x"),
];

fn kind(c: &Composer, r: &Run) -> CommandKind {
    c.commands[r.command].kind
}

fn overlaps(a: &Run, b: &Run) -> bool {
    let end = |r: &Run| r.ended_ns.unwrap_or(u64::MAX);
    a.started_ns < end(b) && b.started_ns < end(a)
}

#[test]
fn branches_follow_the_composers_rules() {
    let agents = [false, true, true];
    let mut endings = [0, 0];
    for seed in 0..60 {
        let c = simulate(
            seed,
            &agents,
            &MAIN,
            |p| 300_000_000 + p.len() as u64 * 7_000_000,
            |_| 0,
        );
        assert!(c.done(), "seed {seed}: {:?}", c.phase);
        assert_eq!(c.template.as_deref(), Some("main"));
        assert!(c.commands.iter().all(|x| !x.path.contains("helper_")));
        let runs = &c.runs;
        // first_ once, first, alone, with faults held off meanwhile.
        assert_eq!(kind(&c, &runs[0]), CommandKind::First, "seed {seed}");
        assert_eq!(
            runs.iter()
                .filter(|r| kind(&c, r) == CommandKind::First)
                .count(),
            1
        );
        let first_end = runs[0].ended_ns.unwrap();
        assert!(runs[1..].iter().all(|r| r.started_ns >= first_end));
        // Released at the boundary that saw it end.
        let (from, until) = c.quiet[0];
        assert!(
            from == 10_000_000 && until >= first_end && until < first_end + 10_000_000,
            "seed {seed}: {:?}",
            c.quiet
        );
        // No driver beside a serial driver.
        for (i, a) in runs.iter().enumerate() {
            for b in &runs[i + 1..] {
                let drivers =
                    |r| matches!(kind(&c, r), CommandKind::Parallel | CommandKind::Serial);
                if (kind(&c, a) == CommandKind::Serial && drivers(b))
                    || (kind(&c, b) == CommandKind::Serial && drivers(a))
                {
                    assert!(
                        !overlaps(a, b),
                        "seed {seed}: serial beside a driver: {runs:?}"
                    );
                }
            }
        }
        let last = runs.last().unwrap();
        match kind(&c, last) {
            CommandKind::Eventually => {
                endings[0] += 1;
                // Faults stop for good as it starts; what ran then was killed.
                assert!(
                    c.quiet.contains(&(last.started_ns, u64::MAX)),
                    "seed {seed}"
                );
                for r in &runs[..runs.len() - 1] {
                    assert!(r.ended_ns.unwrap() <= last.started_ns);
                    assert_eq!(
                        r.killed,
                        r.ended_ns == Some(last.started_ns) && r.status == Some(137)
                    );
                }
                assert!(!runs.iter().any(|r| kind(&c, r) == CommandKind::Finally));
            }
            CommandKind::Finally => {
                endings[1] += 1;
                for r in &runs[..runs.len() - 1] {
                    assert!(r.ended_ns.unwrap() <= last.started_ns && !r.killed);
                }
            }
            k => panic!("seed {seed} ends with {k:?}"),
        }
        assert!(c
            .verdicts(&["n0".into(), "n1".into(), "n2".into()])
            .iter()
            .all(|v| v.status == Status::Passed));
    }
    // The seed draws both endings.
    assert!(endings[0] > 5 && endings[1] > 5, "{endings:?}");
}

#[test]
fn a_singleton_driver_is_the_branchs_only_driver() {
    let inv = [
        (0, "t/singleton_driver_s"),
        (0, "t/parallel_driver_p"),
        (0, "t/finally_f"),
    ];
    let mut singletons = 0;
    for seed in 0..40 {
        let c = simulate(seed, &[true], &inv, |_| 1_000_000_000, |_| 0);
        let drivers: Vec<CommandKind> = c
            .runs
            .iter()
            .map(|r| kind(&c, r))
            .filter(|k| matches!(k, CommandKind::Singleton | CommandKind::Parallel))
            .collect();
        if drivers.contains(&CommandKind::Singleton) {
            singletons += 1;
            assert_eq!(drivers, [CommandKind::Singleton], "seed {seed}");
        }
        assert_eq!(kind(&c, c.runs.last().unwrap()), CommandKind::Finally);
    }
    assert!((5..40).contains(&singletons), "{singletons}");
}

#[test]
fn the_seed_chooses_the_branch_and_replays_it() {
    let run = |seed| {
        let c = simulate(seed, &[false, true, true], &MAIN, |_| 500_000_000, |_| 0);
        c.runs
            .iter()
            .map(|r| (c.commands[r.command].path.clone(), r.started_ns))
            .collect::<Vec<_>>()
    };
    assert_eq!(run(7), run(7));
    let distinct: std::collections::BTreeSet<_> = (0..10).map(run).collect();
    assert!(
        distinct.len() >= 8,
        "{} distinct branches of 10",
        distinct.len()
    );
}

#[test]
fn a_command_that_fails_is_a_violated_property_and_a_killed_one_is_not() {
    let inv = [
        (0, "t/parallel_driver_ok"),
        (0, "t/parallel_driver_bad"),
        (0, "t/eventually_e"),
    ];
    let mut failed = 0;
    for seed in 0..20 {
        let c = simulate(
            seed,
            &[true],
            &inv,
            |p| {
                if p.ends_with("bad") {
                    100_000_000
                } else {
                    60_000_000_000
                }
            },
            |p| if p.ends_with("bad") { 3 } else { 0 },
        );
        let v = c.verdicts(&["n0".into(), "n1".into(), "n2".into()]);
        let bad = v
            .iter()
            .find(|v| v.promise.id == "test command t/parallel_driver_bad exits 0");
        let bad_ended = c
            .runs
            .iter()
            .any(|r| c.commands[r.command].path.ends_with("bad") && !r.killed);
        if let (Some(bad), true) = (bad, bad_ended) {
            failed += 1;
            assert_eq!(bad.status, Status::Violated);
            assert!(bad
                .promise
                .first_failure_details
                .as_ref()
                .unwrap()
                .starts_with("on n0: exit status 3"));
        }
        // The long driver is killed by the eventually command: not a failure.
        if let Some(ok) = v
            .iter()
            .find(|v| v.promise.id.contains("parallel_driver_ok"))
        {
            assert_eq!(ok.status, Status::Passed, "seed {seed}: {:?}", c.runs);
        }
    }
    assert!(failed > 0);
}

#[test]
fn stop_faults_holds_faults_off_and_bad_lines_are_counted() {
    let mut c = Composer::new(RunSeed(1), &[true, false]);
    let mut trace = Trace::new();
    let mut out = Orders::default();
    c.take_line(0, 5, b"stop_faults 2", &mut trace, &mut out);
    assert!(out.quiet_changed);
    assert_eq!(c.quiet, [(5, 2_000_000_005)]);
    assert!(in_quiet(&c.quiet, 5) && !in_quiet(&c.quiet, 2_000_000_005));
    // A program calling it in a loop: bounded, the rest counted.
    let mut flood = Composer::new(RunSeed(1), &[true]);
    for t in 0..(MAX_QUIET as u64 + 5) {
        flood.take_line(0, t, b"stop_faults 1", &mut trace, &mut out);
    }
    assert_eq!((flood.quiet.len(), flood.bad_lines), (MAX_QUIET, 5));
    for bad in [
        &b"command notemplate"[..],
        b"command t/helper_x",
        b"command t/../x",
        b"exited 0 1",
        b"exited x y",
        b"stop_faults -1",
        b"\xff\xfe",
        b"",
    ] {
        c.take_line(0, 6, bad, &mut trace, &mut out);
    }
    c.take_line(1, 6, b"ready", &mut trace, &mut out);
    c.take_line(7, 6, b"ready", &mut trace, &mut out);
    assert_eq!(c.bad_lines, 10);
    // Agents that never report keep the composer waiting; without setup it never starts;
    // it starts at the boundary after the one that saw setup complete (a snapshot taken
    // there holds a composer that drew nothing).
    c.step(10, false, &mut trace, &mut out);
    assert_eq!(c.phase, Phase::Waiting);
    c.take_line(0, 11, b"ready", &mut trace, &mut out);
    c.step(20, false, &mut trace, &mut out);
    assert_eq!(c.phase, Phase::Waiting);
    c.step(30, true, &mut trace, &mut out);
    assert_eq!(c.phase, Phase::Waiting);
    // No template with a driver: nothing runs, and the world is not ended for it.
    c.step(40, true, &mut trace, &mut out);
    assert_eq!(c.phase, Phase::Done);
    assert!(!c.done() && c.runs.is_empty());
}
