//! The world's loop: quantum after quantum, every live node runs to the next boundary,
//! the frames sent in the quantum are routed and delivered in (arrival, source, sequence)
//! order, and the boundary is where snapshots, `until` texts and a guided exploration's
//! moments are taken; then the end: every node's summary and the world's.

use crate::capture::LinkCaptures;
use crate::faults::WorldFault;
use crate::hosts::{Input, NodeStep};
use crate::peer::Peer;
use crate::promises;
use crate::scenario::Scenario;
use crate::switch::Delivery;
use crate::timeline::Timeline;
use crate::{Guide, Options, SnapWhen, World, WorldSummary, FOLD_FRAME};
use serde_json::json;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;
use wio_machines::error::{Result, WioError};
use wio_machines::machine::novelty::Mark;
use wio_machines::promises::Status;
use wio_machines::snapshot::plan::take_matches;
use wio_machines::trace::fnv1a;
use wio_virtio_devices::Frame;

/// What one run of the loop keeps besides the world itself.
struct Watch {
    /// The frames and lines for `--timeline`, when asked for.
    timeline: Option<Timeline>,
    /// The per-link pcap files for `--pcap-dir`, when asked for.
    links: Option<LinkCaptures>,
    /// The snapshot still to take, and where.
    snap: Option<(SnapWhen, PathBuf)>,
    /// `--watch` texts not seen yet, and those seen.
    watch: Vec<String>,
    matched: Vec<String>,
    /// The console line that contained `opts.until`, once one did.
    until_line: Option<String>,
    /// Frames routed in the quantum just run.
    deliveries: Vec<Delivery>,
    /// The scenario's `end_when_done` nodes have all ended.
    done: bool,
    /// Virtual time at which Ctrl-C or SIGTERM ended the world, if they did.
    interrupted: Option<u64>,
    /// Width of the node names' column on the console.
    width: usize,
}

impl World {
    /// Runs the world to its end (every node ended, the time limit, or `opts.until`);
    /// None when `cancel` was set, or (with a `cancel`) Ctrl-C or SIGTERM came, first.
    pub(crate) fn run(
        mut self,
        opts: &Options,
        wall: Instant,
        cancel: Option<&AtomicBool>,
        mut guide: Option<&mut Guide<'_>>,
    ) -> Result<Option<WorldSummary>> {
        let s = &self.scenario;
        let quantum = s.quantum_ns();
        let timeline = (opts.timeline.is_some() || opts.keep_timeline).then(Timeline::default);
        if timeline.is_some() {
            self.switch.drops = Some(Vec::new());
        }
        let mut w = Watch {
            timeline,
            links: opts
                .pcap_dir
                .as_ref()
                .map(|d| LinkCaptures::new(d.clone(), s.port_names())),
            snap: opts.snapshot.clone(),
            watch: opts.watch.clone(),
            matched: Vec::new(),
            until_line: None,
            deliveries: Vec::new(),
            done: false,
            interrupted: None,
            width: self.names.iter().map(String::len).max().unwrap_or(1),
        };
        let max_ns = opts.max_virtual_ns.unwrap_or(s.max_virtual_ns);
        let ends = self.scenario.end_when_done.clone();
        while self.goes_on(&w, max_ns) {
            // A branch's end at the signal would be the signal's, not its seed's: abandoned.
            if cancel
                .is_some_and(|c| c.load(Ordering::Relaxed) || wio_machines::interrupt::requested())
            {
                return Ok(None);
            }
            // Ctrl-C or SIGTERM: end every node here, with its trace and summary (exit 130).
            if wio_machines::interrupt::requested() {
                w.interrupted = Some(self.t);
                self.trace.event(self.t, "interrupted", json!({}));
                break;
            }
            self.advance(quantum, max_ns);
            let mut inputs: Vec<(usize, Input)> = std::mem::take(&mut self.pending)
                .into_iter()
                .map(|(node, f)| (node, Input::Frame(f)))
                .collect();
            inputs.append(&mut self.orders);
            for (node, mut line) in std::mem::take(&mut self.composer.outbox) {
                line.push('\n');
                inputs.push((node, Input::Composer(line.into_bytes())));
            }
            let mut steps = self.hosts.run(self.t, inputs)?;
            // The agents' lines move out of the steps (nothing else reads them).
            let agent_lines: Vec<_> = steps
                .iter_mut()
                .filter(|s| !s.composer.is_empty())
                .map(|s| (s.node, std::mem::take(&mut s.composer)))
                .collect();
            let (lines, marks) = self.take_steps(steps, opts, &mut w);
            self.compose(agent_lines);
            // The peer's share of the quantum just ended; what it sent leaves then.
            if let Some(p) = self.peer.as_mut() {
                for frame in p.run_until(self.t, &mut self.peer_stats) {
                    self.switch
                        .route(self.names.len(), frame, &mut w.deliveries);
                }
                // The host link's refusals are traced; a replay that left its tape stops.
                for (at, port) in p.take_host_refused() {
                    self.trace
                        .event(at, "host-refused", json!({ "port": port }));
                }
                if let Some(e) = p.take_host_failure() {
                    return Err(e);
                }
            }
            self.deliver(&mut w)?;
            w.done = !ends.is_empty() && ends.iter().all(|i| !self.alive[*i]);
            if let Some((when, path)) = w.snap.as_ref().filter(|(wh, _)| self.due(wh, &lines)) {
                let reason = match when {
                    SnapWhen::Time(ns) => format!("virtual time >= {ns} ns"),
                    SnapWhen::Console(t) => format!("console line containing {t:?}"),
                    SnapWhen::SetupComplete => "setup complete".into(),
                };
                let path = path.clone();
                self.snapshot(reason, &path)?;
                w.snap = None;
            }
            let last = !self.goes_on(&w, max_ns);
            if let Some(g) = guide.as_mut().filter(|_| !last) {
                let t = self.t;
                if !g(t, marks, &mut || self.moment())? {
                    return Ok(None);
                }
            }
        }
        self.end(opts, wall, quantum, max_ns, w).map(Some)
    }

    /// Whether the world goes on past this boundary: a node lives, time is left, and
    /// neither the `until` text nor the scenario's `end_when_done` nodes ended it.
    fn goes_on(&self, w: &Watch, max_ns: u64) -> bool {
        self.alive.iter().any(|a| *a)
            && self.t < max_ns
            && w.until_line.is_none()
            && !w.done
            && !self.composer.done()
    }

    /// Moves to the next boundary: one quantum on, or, when every live machine is parked
    /// (idle at the last boundary, nothing to take up) and no frame is on its way to one,
    /// straight to the earliest wake, since nothing happens anywhere before it.
    fn advance(&mut self, quantum: u64, max_ns: u64) {
        let peer_wake = self
            .peer
            .as_ref()
            .map_or(u64::MAX, |p| p.wake().unwrap_or(u64::MAX));
        let wake = (0..self.names.len())
            .filter(|i| self.alive[*i])
            .map(|i| self.parked[i])
            .try_fold(peer_wake, |w, p| p.map(|p| w.min(p)))
            .filter(|_| {
                self.pending.is_empty()
                    && self.orders.is_empty()
                    && self.composer.outbox.is_empty()
                    && !self.peer.as_ref().is_some_and(Peer::busy)
            })
            .map(|w| w.min(self.composer.wake().unwrap_or(u64::MAX)));
        let next = self.t.saturating_add(quantum);
        let last = self.t;
        self.t = match wake {
            Some(w) if w > next => w,
            _ => next,
        }
        .min(max_ns);
        // Boundaries only go forward (the loop runs while t < max_ns).
        debug_assert!(self.t > last, "quantum boundary {} after {last}", self.t);
    }

    /// Takes in what each node did in the quantum: its console lines (printed, watched,
    /// matched against `until`), its marks, whether it lives, and the frames it sent
    /// (routed). Returns the quantum's lines and marks.
    fn take_steps(
        &mut self,
        steps: Vec<NodeStep>,
        opts: &Options,
        w: &mut Watch,
    ) -> (Vec<String>, Vec<Mark>) {
        let width = w.width;
        let mut lines = Vec::new();
        let mut marks = Vec::new();
        for step in steps {
            let name = &self.names[step.node];
            marks.extend(step.marks.into_iter().map(|m| m.of_node(step.node, name)));
            for line in step.lines {
                if !opts.quiet {
                    println!("{name:>width$} | {line}");
                }
                take_matches(&mut w.watch, &mut w.matched, &line);
                if let Some(t) = w.timeline.as_mut() {
                    t.lines.push((step.node, self.t, line.clone()));
                }
                if w.until_line.is_none()
                    && opts
                        .until
                        .as_ref()
                        .is_some_and(|u| line.contains(u.as_str()))
                {
                    w.until_line = Some(format!("{name} | {line}"));
                }
                lines.push(line);
            }
            self.alive[step.node] = !step.ended;
            self.exits[step.node] = step.exit_status;
            self.parked[step.node] = step.parked;
            self.setup[step.node] |= step.setup_complete;
            for frame in step.frames {
                self.switch.route(step.node, frame, &mut w.deliveries);
            }
        }
        (lines, marks)
    }

    /// Delivers the quantum's frames in (arrival, source, sequence) order: folded into the
    /// world's trace, recorded for pcap and the timeline, queued for their nodes (or the
    /// peer); a frame to an ended node is counted and dropped.
    fn deliver(&mut self, w: &mut Watch) -> Result<()> {
        w.deliveries.sort_by_key(|d| (d.at_ns, d.src, d.seq));
        for d in w.deliveries.drain(..) {
            // Conservative synchronization: a frame sent in the quantum that ends at t
            // arrives at least one latency (>= the quantum) after it was sent, so no
            // earlier than t, where its receiver stands: it never lands in a past.
            debug_assert!(
                d.at_ns >= self.t && d.at_ns >= d.sent_ns,
                "frame {} -> {} sent at {} arrives at {}, before the boundary {}",
                d.src,
                d.dst,
                d.sent_ns,
                d.at_ns,
                self.t
            );
            let to_peer = d.dst == self.names.len();
            if !to_peer && !self.alive[d.dst] {
                self.switch.stats.to_ended_nodes += 1;
                continue;
            }
            if let Some(c) = w.links.as_mut() {
                c.record(d.src, d.dst, d.at_ns, &d.bytes)?;
            }
            if let Some(t) = w.timeline.as_mut() {
                t.frames.push((d.src, d.dst, d.sent_ns, d.at_ns));
            }
            self.trace.fold(
                FOLD_FRAME,
                (d.src * 256 + d.dst) as u64,
                fnv1a(&d.bytes),
                d.at_ns,
            );
            self.switch.stats.delivered += 1;
            match self.peer.as_mut().filter(|_| to_peer) {
                Some(p) => p.take(d),
                None => self.pending.push((
                    d.dst,
                    Frame {
                        at_ns: d.at_ns,
                        bytes: d.bytes,
                    },
                )),
            }
        }
        Ok(())
    }

    /// Ends the world: every node's summary (traced), the faults drawn, the promises
    /// judged across nodes, the exit code, and the timeline when asked for.
    fn end(
        mut self,
        opts: &Options,
        wall: Instant,
        quantum: u64,
        max_ns: u64,
        mut w: Watch,
    ) -> Result<WorldSummary> {
        if let Some((when, path)) = &w.snap {
            eprintln!(
                "wio: warning: the world ended before its snapshot point ({when:?}); {} was not written",
                path.display()
            );
        }
        if let Some(c) = w.links.as_mut() {
            c.finish()?;
        }
        if let Some(p) = self.peer.as_mut() {
            p.finish_host()?;
        }
        let stopped_at_until = w.until_line.is_some();
        let mut summaries = Vec::new();
        let mut code = 0;
        for (i, summary) in self.hosts.finish(
            max_ns,
            stopped_at_until || w.done || self.composer.done(),
            w.interrupted,
        )? {
            // A node's error or non-zero guest status (its wio exit code says both).
            if code == 0 && summary.wio_exit_code != 0 {
                code = summary.wio_exit_code;
            }
            self.trace.event(
                summary.virtual_ns,
                "node",
                json!({ "name": self.names[i], "trace_hash": summary.trace_hash, "exit": summary.wio_exit_code }),
            );
            summaries.push((self.names[i].clone(), summary));
        }
        let end = summaries
            .iter()
            .map(|(_, s)| s.virtual_ns)
            .max()
            .unwrap_or(0);
        let world_faults = drawn_faults(&self.scenario, &self.names, end, &self.composer.quiet);
        // The nodes' promises judged together (a world stopped at its `until` text, its end
        // not seen, fails on violations only).
        let mut promises = promises::join(&summaries);
        promises.extend(self.composer.verdicts(&self.names));
        let failed = promises.iter().filter(|v| {
            v.status == Status::Violated || (!stopped_at_until && v.status != Status::Passed)
        });
        if code == 0 && failed.count() > 0 {
            code = wio_machines::error::exit_code::PROMISE;
        }
        // The world's trace file (--trace-dir) is whole once its last line is out.
        self.trace
            .finish()
            .map_err(|source| wio_machines::error::WioError::ArtifactIo {
                what: "world trace",
                path: opts
                    .trace_dir
                    .as_ref()
                    .map_or_else(Default::default, |d| d.join("world.jsonl")),
                source,
            })?;
        let drops = self.switch.drops.take().unwrap_or_default();
        let mut summary = WorldSummary {
            promises,
            peer: self.peer.as_ref().map(|_| self.peer_stats.clone()),
            dependencies: self.peer.as_ref().map_or_else(Vec::new, Peer::dependencies),
            host: self.peer.as_ref().and_then(Peer::host_stats),
            faults: world_faults,
            seed: self.seed,
            world_trace_hash: self.trace.hash_hex(),
            quantum_ns: quantum,
            virtual_ns: end,
            wall_ns: wall.elapsed().as_nanos() as u64,
            sandbox: wio_machines::sandbox::describe(),
            start_wall_ns: self.start_wall_ns,
            switch: self.switch.stats,
            nodes: summaries,
            wio_exit_code: code,
            restored_from: self.restored_from,
            matched: w.matched,
            until_line: w.until_line,
            composer: self
                .composer
                .active()
                .then(|| self.composer.report(&self.names)),
            timeline: None,
        };
        if let Some(mut t) = w.timeline {
            t.drops = drops;
            if let Some(path) = opts.timeline.as_ref() {
                std::fs::write(path, t.svg(&self.scenario.port_names(), &summary)).map_err(
                    |source| WioError::Output {
                        what: "timeline",
                        path: path.clone(),
                        source,
                    },
                )?;
            }
            if opts.keep_timeline {
                summary.timeline = Some(t);
            }
        }
        Ok(summary)
    }
}

/// The faults drawn between nodes that started before `end`, in time order.
fn drawn_faults(
    scenario: &Scenario,
    names: &[String],
    end: u64,
    quiet: &[(u64, u64)],
) -> Vec<WorldFault> {
    let held = |from: u64| crate::composer::in_quiet(quiet, from);
    let drawn = scenario
        .partitions
        .iter()
        .filter(|p| p.drawn && p.from_ns < end && !held(p.from_ns))
        .map(|p| WorldFault::of_partition(p, names))
        .chain(
            scenario
                .degrades
                .iter()
                .filter(|d| d.drawn && d.from_ns < end && !held(d.from_ns))
                .map(|d| WorldFault::of_degrade(d, names)),
        )
        .chain(
            scenario
                .dependency_faults
                .iter()
                .filter(|f| f.drawn && f.from_ns < end && !held(f.from_ns))
                .map(WorldFault::of_dependency),
        );
    let mut world_faults: Vec<WorldFault> = drawn.collect();
    world_faults.sort_by_key(|f| f.from_ns);
    world_faults
}
