//! The frontier of a guided exploration: the moments kept so far (the root snapshot is the
//! first), what the exploration has seen, each moment's energy, and the choice of where
//! the next branches start.
//!
//! - A moment earns energy for what was new at it: the sum of its new marks' weights (a
//!   `sometimes` first true most, one coverage counter least: `machine::novelty`'s weights,
//!   so a loop that ran once more, several counters at once, outweighs one counter that
//!   timing moved), and [`DEPTH_BONUS`] per level of depth; capped at [`MAX_ENERGY`]; then
//!   scaled by the part of its branch's run that comes after it (a moment at the very end,
//!   where a program already finished, leaves its children nothing to change). The part is
//!   counted in instructions where the machine counts them (riscv64), else in virtual
//!   time: idle time and a branch's starting pause hold nothing to change, and counted in
//!   time they made the moments of a short branch (one that stops at `--until` when its
//!   program ends) worth nothing.
//! - Energy is about the children a moment is owed: each child branch that finds nothing
//!   new takes 1 away (a `sometimes` first true is worth 32 more tries, enough to pass a
//!   1-in-16 choice after it with 87 % odds); one that finds something adds [`FRUIT_BONUS`].
//!   A moment at 0 is spent: chosen with weight [`SPENT_WEIGHT`] only, evicted first.
//! - The root keeps at least [`ROOT_FLOOR`], so fresh branches of the root go on
//!   (what a flat exploration does) however rich the frontier gets. The root's branches
//!   run the seeds a flat exploration would, in its order ([`root_seed`]: with search seed
//!   0, `--seeds 0..`), so guided search holds flat search's first branches: its whole
//!   first round is root branches, and a bug that flat search meets in its first round of
//!   seeds, guided search meets at the same branch.
//! - The next moment is drawn with probability proportional to energy, from the explorer's
//!   own stream; a moment's branch's seed from another. Both are functions of `--search-seed`
//!   and of what earlier branches found, in branch order: never of threads or host time.
//! - Moments hold their guest memory; beyond `--max-memory` the spent, then the weakest,
//!   are evicted (their place in the tree stays; they can no longer be branched from).
//!
//! The frontier keeps moments of one machine (its loaded snapshot and the moments its
//! branches kept) or of a world (every machine, the switch and the frames in flight): any
//! [`MomentState`].

use super::path::{BranchPath, Step};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::sync::Arc;
use wio_machines::machine::driver::Kept;
use wio_machines::machine::novelty::{Mark, Signal};
use wio_machines::machine::LoadedSnapshot;
use wio_scheduler::{stream_names, RunSeed, Stream};
use wio_world::snapshot::LoadedWorld;

/// Most energy a moment holds.
pub const MAX_ENERGY: u32 = 128;
/// How much a spent moment (energy 0) still weighs in the choice.
pub const SPENT_WEIGHT: u32 = 1;
/// Least energy the root keeps.
pub const ROOT_FLOOR: u32 = 8;
/// The root's energy at the start.
pub const ROOT_ENERGY: u32 = 16;
/// What a child that found something new gives back to its moment.
pub const FRUIT_BONUS: u32 = 8;
/// Energy a moment earns per level of depth: each level is evidence that a chain of rare
/// events goes on, so the deeper a new moment, the more tries its children get.
pub const DEPTH_BONUS: u32 = 4;
/// Least energy a moment with something new earns (before the part of its branch left
/// scales it): 48 children pass a 1-in-16 choice after it with 95 % odds. Without it a
/// stage of a bug that only code coverage shows (a few counters, 4 each) got about 20
/// children, and five such stages in a row were passed by few searches.
pub const MIN_ENERGY: u32 = 48;
/// Most moments one exploration keeps in its tree (kept or evicted).
pub const MAX_MOMENTS: usize = 100_000;

/// What a frontier keeps moments of: a machine's state, or a world's.
pub trait MomentState: Send + Sync {
    /// Its virtual time.
    fn moment_ns(&self) -> u64;
    /// The seed it ran with (its children need another, or nothing is re-keyed).
    fn moment_seed(&self) -> u64;
    /// Instructions retired by then (every machine's, for a world), where counted.
    fn moment_instructions(&self) -> Option<u64>;
    /// Host memory its guest memory takes (bytes).
    fn moment_bytes(&self) -> u64;
}

impl MomentState for dyn LoadedSnapshot {
    fn moment_ns(&self) -> u64 {
        self.meta().virtual_ns
    }
    fn moment_seed(&self) -> u64 {
        self.meta().seed
    }
    fn moment_instructions(&self) -> Option<u64> {
        self.meta().instructions
    }
    fn moment_bytes(&self) -> u64 {
        self.resident_bytes()
    }
}

impl MomentState for LoadedWorld {
    fn moment_ns(&self) -> u64 {
        self.state.at_ns
    }
    fn moment_seed(&self) -> u64 {
        self.state.seed
    }
    fn moment_instructions(&self) -> Option<u64> {
        self.nodes.iter().map(|n| n.meta().instructions).sum()
    }
    fn moment_bytes(&self) -> u64 {
        self.nodes.iter().map(|n| n.resident_bytes()).sum()
    }
}

/// Where a branch's moments lie in its run: positions `at` (one per moment) between
/// `start` and `stop`, in instructions or in virtual ns.
struct Span {
    start: u64,
    stop: u64,
    at: Vec<u64>,
}

/// One moment of the tree, as the report shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MomentInfo {
    /// Its number (0: the root snapshot).
    pub id: u32,
    /// The moment the branch that kept it started from (none for the root).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<u32>,
    /// Moments from the root to it.
    pub depth: u32,
    /// Its path: `wio run --from ROOT --path PATH,SEED` runs a branch of it.
    pub path: String,
    /// Its virtual time.
    pub at_ns: u64,
    /// The branch that kept it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub found_by: Option<u64>,
    /// What was new there.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub new: Vec<String>,
    /// Branches started from it.
    pub children: u32,
    /// Of those, the branches that found something new.
    pub fruitful: u32,
    /// Its energy at the end.
    pub energy: u32,
    /// Guest memory it held (bytes).
    pub bytes: u64,
    /// Whether it was evicted to keep memory bounded.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub evicted: bool,
}

/// A moment: its place in the tree and the state to branch from.
struct Moment<S: ?Sized> {
    info: MomentInfo,
    /// The path's steps up to it (children add their own seed).
    steps: Vec<Step>,
    /// The seed of the branch that kept it (children need another, or nothing is re-keyed).
    seed: u64,
    loaded: Option<Arc<S>>,
}

/// Where a branch starts: its moment, its path.
pub struct Assignment<S: ?Sized = dyn LoadedSnapshot> {
    /// The moment's number.
    pub moment: u32,
    /// The state to restore.
    pub loaded: Arc<S>,
    /// The branch's path (the moment's steps, then its seed).
    pub path: BranchPath,
}

/// What absorbing a branch did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Absorbed {
    /// Moments it added.
    pub kept: u32,
    /// Marks those moments made known to the exploration.
    pub new_marks: u32,
}

/// A moment as a checkpoint keeps it: its place in the tree and its path (a live moment's
/// state is rebuilt by replaying the path).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedMoment {
    info: MomentInfo,
    steps: Vec<(u64, u64)>,
    seed: u64,
    live: bool,
}

/// What a checkpoint keeps of a [`Frontier`]: everything but the moments' memory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FrontierState {
    moments: Vec<SavedMoment>,
    known: Vec<(Signal, u64)>,
    pick: wio_scheduler::SavedStream,
    seeds: wio_scheduler::SavedStream,
    root_branches: u64,
    search_seed: u64,
    bytes: u64,
    max_bytes: u64,
}

impl FrontierState {
    /// The live moments a restore rebuilds (the root is not rebuilt).
    pub fn live(&self) -> usize {
        self.moments.iter().skip(1).filter(|m| m.live).count()
    }
}

/// Brings back a live moment's state from its path's steps (see [`Frontier::restore`]).
pub type Rebuild<'a, S> = dyn FnMut(&[Step]) -> wio_machines::error::Result<Box<S>> + 'a;

/// The moments, the marks seen, and the explorer's streams.
pub struct Frontier<S: ?Sized + MomentState = dyn LoadedSnapshot> {
    moments: Vec<Moment<S>>,
    known: BTreeSet<(Signal, u64)>,
    pick: Stream,
    seeds: Stream,
    /// Branches of the root assigned so far (the next one's place in [`root_seed`]'s order).
    root_branches: u64,
    search_seed: u64,
    bytes: u64,
    max_bytes: u64,
}

/// Seeds between the root branches of two search seeds: search seed `s` branches the root
/// with the seeds from `s * ROOT_SEED_STRIDE` on, so two searches never share one.
pub const ROOT_SEED_STRIDE: u64 = 1 << 32;

/// The seed of the root's `k`-th branch under search seed `search_seed`: `s * 2^32 + k`,
/// the `k`-th seed of the flat exploration `--seeds s*2^32..` (with search seed 0,
/// `--seeds 0..`).
pub fn root_seed(search_seed: u64, k: u64) -> u64 {
    search_seed.wrapping_mul(ROOT_SEED_STRIDE).wrapping_add(k)
}

impl<S: ?Sized + MomentState> Frontier<S> {
    /// A frontier holding only the root snapshot.
    pub fn new(root: Arc<S>, search_seed: u64, max_bytes: u64) -> Frontier<S> {
        let seed = RunSeed(search_seed);
        let info = MomentInfo {
            id: 0,
            parent: None,
            depth: 0,
            path: String::new(),
            at_ns: root.moment_ns(),
            found_by: None,
            new: Vec::new(),
            children: 0,
            fruitful: 0,
            energy: ROOT_ENERGY,
            bytes: 0,
            evicted: false,
        };
        Frontier {
            moments: vec![Moment {
                info,
                steps: Vec::new(),
                seed: root.moment_seed(),
                loaded: Some(root),
            }],
            known: BTreeSet::new(),
            pick: seed.stream(stream_names::EXPLORE_FRONTIER),
            seeds: seed.stream(stream_names::EXPLORE_SEEDS),
            root_branches: 0,
            search_seed,
            bytes: 0,
            max_bytes,
        }
    }

    /// Whether the exploration has seen `m`.
    pub fn knows(&self, m: &Mark) -> bool {
        self.known.contains(&m.id())
    }

    /// Marks seen so far.
    pub fn marks(&self) -> usize {
        self.known.len()
    }

    /// Moments that can be branched from.
    pub fn live(&self) -> usize {
        self.moments.iter().filter(|m| m.loaded.is_some()).count()
    }

    /// Moments kept so far, the root included (evicted ones too).
    pub fn moments(&self) -> usize {
        self.moments.len()
    }

    /// The deepest moment's depth.
    pub fn depth(&self) -> u32 {
        self.moments.iter().map(|m| m.info.depth).max().unwrap_or(0)
    }

    fn weight(m: &Moment<S>) -> u64 {
        if m.loaded.is_none() {
            0
        } else if m.info.id == 0 {
            u64::from(m.info.energy.max(ROOT_FLOOR))
        } else {
            // A spent moment is still chosen now and then (as AFL cycles through its whole
            // queue): a rare event after it may just not have come up yet.
            u64::from(m.info.energy.max(SPENT_WEIGHT))
        }
    }

    /// Where the next branch starts, and its seed.
    pub fn assign(&mut self) -> Assignment<S> {
        let total: u64 = self.moments.iter().map(Frontier::<S>::weight).sum();
        // The root always weighs at least ROOT_FLOOR, so total > 0.
        let mut at = self.pick.below(total.max(1));
        let mut chosen = 0;
        for (i, m) in self.moments.iter().enumerate() {
            let w = Frontier::<S>::weight(m);
            if at < w {
                chosen = i;
                break;
            }
            at -= w;
        }
        let m = &self.moments[chosen];
        let seed = if chosen == 0 {
            // The root: the next seed of the flat order, as a flat exploration runs it
            // (its own seed included: that branch replays the snapshot's own future).
            self.root_branches += 1;
            root_seed(self.search_seed, self.root_branches - 1)
        } else {
            let seed = self.seeds.next_u64();
            if seed == m.seed {
                // The same seed would re-key nothing: the branch would replay its parent.
                seed.wrapping_add(1)
            } else {
                seed
            }
        };
        Assignment {
            moment: m.info.id,
            loaded: Arc::clone(m.loaded.as_ref().expect("only live moments weigh")),
            path: BranchPath {
                steps: m.steps.clone(),
                seed,
            },
        }
    }

    /// Takes branch `branch`'s end (started as `a`, kept `moments`, ended after
    /// `end_instructions` retired instructions where counted, at `end_ns`): its moments with
    /// something still new join the frontier and their marks become known, its moment's
    /// energy goes up (a moment kept) or down. Branches must be absorbed in branch order.
    pub fn absorb(
        &mut self,
        branch: u64,
        a: &Assignment<S>,
        moments: Vec<Kept<S>>,
        end_instructions: Option<u64>,
        end_ns: u64,
    ) -> Absorbed {
        let counted: Option<Vec<u64>> = moments
            .iter()
            .map(|k| k.loaded.moment_instructions())
            .collect();
        let span = match (a.loaded.moment_instructions(), end_instructions, counted) {
            (Some(start), Some(stop), Some(at)) => Span { start, stop, at },
            _ => Span {
                start: self.moments[a.moment as usize].info.at_ns,
                stop: end_ns,
                at: moments.iter().map(|k| k.at_ns).collect(),
            },
        };
        self.absorb_moments(branch, a, moments, &span)
    }

    /// [`Frontier::absorb`] of a branch that kept `moments`, at positions `span.at` of a
    /// run from `span.start` to `span.stop` (instructions or virtual ns).
    fn absorb_moments(
        &mut self,
        branch: u64,
        a: &Assignment<S>,
        moments: Vec<Kept<S>>,
        span: &Span,
    ) -> Absorbed {
        let mut out = Absorbed::default();
        let parent = a.moment as usize;
        let depth = self.moments[parent].info.depth + 1;
        // The part of the branch each moment leaves for its children to change.
        let start = span.start;
        let stop = span.stop.max(start + 1);
        for (kept, at) in moments.into_iter().zip(span.at.iter().copied()) {
            let new: Vec<&Mark> = kept.marks.iter().filter(|k| !self.knows(k)).collect();
            let sum = new.iter().map(|k| k.weight).sum::<u32>();
            let full = u64::from(
                (sum.min(MAX_ENERGY) + DEPTH_BONUS * depth).clamp(MIN_ENERGY, MAX_ENERGY),
            );
            let left = stop.saturating_sub(at);
            let energy = (full * left / (stop - start)) as u32;
            if sum == 0 || energy == 0 || self.moments.len() >= MAX_MOMENTS {
                // Nothing new there any more, or only what is worth no branch (a
                // violation, or the very end of the run): known from now on, so no later
                // branch keeps it either.
                for k in &new {
                    self.known.insert(k.id());
                }
                continue;
            }
            let what = new.iter().map(|k| k.what.clone()).collect();
            for k in &new {
                self.known.insert(k.id());
            }
            out.new_marks += new.len() as u32;
            let path = a.path.child(kept.at_ns, 0);
            let steps = path.steps;
            let bytes = kept.loaded.moment_bytes();
            let id = self.moments.len() as u32;
            self.moments.push(Moment {
                info: MomentInfo {
                    id,
                    parent: Some(a.moment),
                    depth,
                    path: steps
                        .iter()
                        .map(Step::to_string)
                        .collect::<Vec<_>>()
                        .join(","),
                    at_ns: kept.at_ns,
                    found_by: Some(branch),
                    new: what,
                    children: 0,
                    fruitful: 0,
                    energy,
                    bytes,
                    evicted: false,
                },
                steps,
                seed: a.path.seed,
                loaded: Some(Arc::from(kept.loaded)),
            });
            self.bytes += bytes;
            out.kept += 1;
        }
        // The branch's other new marks stay unknown: they came after its last moment (or
        // when it could keep no more), so a later branch that sees them keeps a moment there.
        let m = &mut self.moments[parent].info;
        m.children += 1;
        if out.kept > 0 {
            m.fruitful += 1;
            m.energy = (m.energy + FRUIT_BONUS).min(MAX_ENERGY);
        } else {
            m.energy = m.energy.saturating_sub(1);
        }
        self.evict();
        out
    }

    /// Drops moments' memory beyond the bound: spent ones first, then the weakest (the
    /// oldest among equals); never the root.
    fn evict(&mut self) {
        while self.bytes > self.max_bytes {
            let victim = self
                .moments
                .iter()
                .enumerate()
                .skip(1)
                .filter(|(_, m)| m.loaded.is_some())
                .min_by_key(|(i, m)| (m.info.energy, *i))
                .map(|(i, _)| i);
            let Some(i) = victim else { return };
            let m = &mut self.moments[i];
            m.loaded = None;
            m.info.evicted = true;
            self.bytes -= m.info.bytes;
        }
    }

    /// Everything but the moments' memory, for a checkpoint.
    pub fn save(&self) -> FrontierState {
        FrontierState {
            moments: self
                .moments
                .iter()
                .map(|m| SavedMoment {
                    info: m.info.clone(),
                    steps: m.steps.iter().map(|s| (s.seed, s.at_ns)).collect(),
                    seed: m.seed,
                    live: m.loaded.is_some(),
                })
                .collect(),
            known: self.known.iter().copied().collect(),
            pick: self.pick.save(),
            seeds: self.seeds.save(),
            root_branches: self.root_branches,
            search_seed: self.search_seed,
            bytes: self.bytes,
            max_bytes: self.max_bytes,
        }
    }

    /// The frontier `s` saved, on `root`; `rebuild` brings back a live moment's state from
    /// its path's steps (by replaying them).
    pub fn restore(
        root: Arc<S>,
        s: &FrontierState,
        rebuild: &mut Rebuild<'_, S>,
    ) -> wio_machines::error::Result<Frontier<S>> {
        let mut moments = Vec::with_capacity(s.moments.len());
        for (i, m) in s.moments.iter().enumerate() {
            let steps: Vec<Step> = m
                .steps
                .iter()
                .map(|&(seed, at_ns)| Step { seed, at_ns })
                .collect();
            let loaded = match (i, m.live) {
                (0, _) => Some(Arc::clone(&root)),
                (_, true) => Some(Arc::from(rebuild(&steps)?)),
                (_, false) => None,
            };
            moments.push(Moment {
                info: m.info.clone(),
                steps,
                seed: m.seed,
                loaded,
            });
        }
        Ok(Frontier {
            moments,
            known: s.known.iter().copied().collect(),
            pick: Stream::resume(&s.pick, None),
            seeds: Stream::resume(&s.seeds, None),
            root_branches: s.root_branches,
            search_seed: s.search_seed,
            bytes: s.bytes,
            max_bytes: s.max_bytes,
        })
    }

    /// The tree as the report shows it.
    pub fn tree(&self) -> Vec<MomentInfo> {
        self.moments.iter().map(|m| m.info.clone()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wio_machines::machine::{Machine, RunConfig, SnapshotOrigin};
    use wio_machines::snapshot::test_snapshot;

    /// A loaded snapshot that only says what it is of (the frontier never restores).
    struct Fake(SnapshotOrigin);

    impl LoadedSnapshot for Fake {
        fn origin(&self) -> &SnapshotOrigin {
            &self.0
        }
        fn restore(
            &self,
            _: &RunConfig,
            _: std::time::Instant,
        ) -> wio_machines::error::Result<Box<dyn Machine>> {
            Err(wio_machines::error::WioError::Invariant(
                wio_machines::error::InternalError::NotModelled {
                    what: "a restore of a fake snapshot",
                },
            ))
        }
    }

    fn fake(at_ns: u64, seed: u64) -> Box<dyn LoadedSnapshot> {
        let snap = test_snapshot(&[0u8; 4096], seed, at_ns);
        Box::new(Fake(SnapshotOrigin {
            path: "fake".into(),
            meta: snap.meta,
            sha256: String::new(),
        }))
    }

    /// A branch's moments in virtual time, from the root's 1000 ns to `stop`.
    fn span(moments: &[Kept], stop: u64) -> Span {
        Span {
            start: 1000,
            stop,
            at: moments.iter().map(|k| k.at_ns).collect(),
        }
    }

    /// Absorbs `moments` of a branch that ended at `stop` ns.
    fn absorb(
        f: &mut Frontier,
        branch: u64,
        a: &Assignment,
        moments: Vec<Kept>,
        stop: u64,
    ) -> Absorbed {
        let s = span(&moments, stop);
        f.absorb_moments(branch, a, moments, &s)
    }

    fn kept(at_ns: u64, seed: u64, marks: &[Mark]) -> Kept {
        Kept {
            at_ns,
            marks: marks.to_vec(),
            loaded: fake(at_ns, seed),
        }
    }

    /// The scheduler on synthetic branches: moments join with the energy their marks earn,
    /// known marks make no moment, fruitless children drain their moment, the choices are
    /// a function of the search seed, the root keeps its floor, memory is bounded.
    #[test]
    fn moments_energy_and_choices() {
        let mut f = Frontier::new(Arc::from(fake(1000, 1)), 5, 4096 * 2);
        let a = f.assign();
        assert_eq!(a.moment, 0, "only the root at first");
        assert!(a.path.steps.is_empty());
        assert_eq!(a.path.seed, root_seed(5, 0), "the root's first flat seed");
        let rare = Mark::promise("stage 1", "stage 1", true, true);
        let shape = Mark::console("x 1");
        // A branch from the root that ended at 2000 kept a moment at 1100 for both marks.
        let got = absorb(
            &mut f,
            0,
            &a,
            vec![kept(1100, a.path.seed, &[rare.clone(), shape.clone()])],
            2000,
        );
        assert_eq!(
            got,
            Absorbed {
                kept: 1,
                new_marks: 2
            }
        );
        assert!(f.knows(&rare) && f.knows(&shape));
        let tree = f.tree();
        assert_eq!(tree.len(), 2);
        let m = &tree[1];
        assert_eq!((m.parent, m.depth, m.found_by), (Some(0), 1, Some(0)));
        assert_eq!(m.path, format!("{}@1100", a.path.seed));
        // (32 + 4) + 4 per level, at least MIN_ENERGY, scaled by the 900 of 1000 ns left
        // after it.
        assert_eq!(m.energy, MIN_ENERGY * 900 / 1000);
        assert_eq!(tree[0].fruitful, 1);
        // The same marks again: no moment, and the root loses energy.
        let before = f.tree()[0].energy;
        let a2 = Assignment {
            moment: 0,
            loaded: Arc::from(fake(1000, 1)),
            path: BranchPath {
                steps: Vec::new(),
                seed: 9,
            },
        };
        let got = absorb(
            &mut f,
            1,
            &a2,
            vec![kept(1200, 9, std::slice::from_ref(&rare))],
            2000,
        );
        assert_eq!(got, Absorbed::default());
        assert_eq!(f.tree()[0].energy, before - 1);
        // A violation alone makes no moment and is known from then on.
        let mut bad = Mark::promise("bug", "bug", false, false);
        bad.weight = 0;
        assert_eq!(
            absorb(
                &mut f,
                2,
                &a2,
                vec![kept(1300, 9, std::slice::from_ref(&bad))],
                2000
            )
            .kept,
            0
        );
        assert!(f.knows(&bad));
        // A moment at the very end of its branch leaves nothing: no moment.
        let late = Mark::console("late");
        assert_eq!(
            absorb(&mut f, 3, &a2, vec![kept(2000, 9, &[late])], 2000).kept,
            0
        );
        // Choices: the moment is drawn by energy, and the same search seed draws the same.
        let draws = |f: &mut Frontier| (0..50).map(|_| f.assign().moment).collect::<Vec<_>>();
        let picks = draws(&mut f);
        assert!(picks.contains(&1) && picks.contains(&0), "{picks:?}");
        // Memory: two more moments (4096 bytes each) go past 2 x 4096: the weakest goes.
        for (i, at, text) in [(4u64, 1400u64, "a"), (5, 1400, "b")] {
            let mark = Mark::console(text);
            absorb(&mut f, i, &a2, vec![kept(at, 9, &[mark])], 2000);
        }
        assert_eq!(f.moments(), 4);
        assert_eq!(f.live(), 3, "one evicted");
        let tree = f.tree();
        assert!(!tree[0].evicted, "never the root");
        assert_eq!((tree[2].energy, tree[3].energy), (28, 28));
        assert!(tree[2].evicted, "the weakest, the older of equals");
        // The root's branches run a flat exploration's seeds, in its order.
        let mut flat: Frontier = Frontier::new(Arc::from(fake(1000, 1)), 0, 1 << 30);
        let first: Vec<u64> = (0..4).map(|_| flat.assign().path.seed).collect();
        assert_eq!(first, vec![0, 1, 2, 3], "search seed 0: --seeds 0..");
        let mut g = Frontier::new(Arc::from(fake(1000, 1)), 5, 1 << 30);
        let mut h = Frontier::new(Arc::from(fake(1000, 1)), 6, 1 << 30);
        let seeds = |f: &mut Frontier| (0..8).map(|_| f.assign().path.seed).collect::<Vec<_>>();
        let (sg, sh) = (seeds(&mut g), seeds(&mut h));
        assert_ne!(sg, sh, "another search seed, other seeds");
        assert_eq!(
            sg,
            seeds(&mut Frontier::new(Arc::from(fake(1000, 1)), 5, 1 << 30))
        );
    }
}
