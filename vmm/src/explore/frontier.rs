//! The frontier of a guided exploration: the moments kept so far (the root snapshot is the
//! first), what the exploration has seen, each moment's energy, and the choice of where
//! the next branches start.
//!
//! - A moment earns energy for what was new at it (a `sometimes` first true most, a console
//!   shape least: `machine::novelty`'s weights), capped at [`MAX_ENERGY`].
//! - Energy is about the children a moment is owed: each child branch that finds nothing
//!   new takes 1 away (a `sometimes` first true is worth 32 more tries, enough to pass a
//!   1-in-16 choice after it with 87 % odds); one that finds something adds [`FRUIT_BONUS`].
//!   A moment at 0 is spent: never chosen, evicted first.
//! - The root keeps at least [`ROOT_FLOOR`], so fresh branches of the root go on
//!   (what a flat exploration does) however rich the frontier gets.
//! - The next moment is drawn with probability proportional to energy, from the explorer's
//!   own stream; the branch's seed from another. Both are functions of `--search-seed`
//!   and of what earlier branches found, in branch order: never of threads or host time.
//! - Moments hold their guest memory; beyond `--max-memory` the spent, then the weakest,
//!   are evicted (their place in the tree stays; they can no longer be branched from).

use super::path::{BranchPath, Step};
use crate::machine::driver::GuidedEnd;
use crate::machine::novelty::{Mark, Signal};
use crate::machine::LoadedSnapshot;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::sync::Arc;
use wio_scheduler::{stream_names, RunSeed, Stream};

/// Most energy a moment holds.
pub const MAX_ENERGY: u32 = 128;
/// Least energy the root keeps.
pub const ROOT_FLOOR: u32 = 8;
/// The root's energy at the start.
pub const ROOT_ENERGY: u32 = 16;
/// What a child that found something new gives back to its moment.
pub const FRUIT_BONUS: u32 = 8;
/// Most moments one exploration keeps in its tree (kept or evicted).
pub const MAX_MOMENTS: usize = 100_000;

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
struct Moment {
    info: MomentInfo,
    /// The path's steps up to it (children add their own seed).
    steps: Vec<Step>,
    /// The seed of the branch that kept it (children need another, or nothing is re-keyed).
    seed: u64,
    loaded: Option<Arc<dyn LoadedSnapshot>>,
}

/// Where a branch starts: its moment, its path.
pub struct Assignment {
    /// The moment's number.
    pub moment: u32,
    /// The state to restore.
    pub loaded: Arc<dyn LoadedSnapshot>,
    /// The branch's path (the moment's steps, then its seed).
    pub path: BranchPath,
}

/// What absorbing a branch did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Absorbed {
    /// Moments it added.
    pub kept: u32,
    /// Marks new to the exploration.
    pub new_marks: u32,
}

/// The moments, the marks seen, and the explorer's streams.
pub struct Frontier {
    moments: Vec<Moment>,
    known: BTreeSet<(Signal, u64)>,
    pick: Stream,
    seeds: Stream,
    bytes: u64,
    max_bytes: u64,
}

impl Frontier {
    /// A frontier holding only the root snapshot (`root_path`: how reports name it).
    pub fn new(root: Arc<dyn LoadedSnapshot>, search_seed: u64, max_bytes: u64) -> Frontier {
        let seed = RunSeed(search_seed);
        let info = MomentInfo {
            id: 0,
            parent: None,
            depth: 0,
            path: String::new(),
            at_ns: root.meta().virtual_ns,
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
                seed: root.meta().seed,
                loaded: Some(root),
            }],
            known: BTreeSet::new(),
            pick: seed.stream(stream_names::EXPLORE_FRONTIER),
            seeds: seed.stream(stream_names::EXPLORE_SEEDS),
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

    fn weight(m: &Moment) -> u64 {
        if m.loaded.is_none() {
            0
        } else if m.info.id == 0 {
            u64::from(m.info.energy.max(ROOT_FLOOR))
        } else {
            u64::from(m.info.energy)
        }
    }

    /// Where the next branch starts, and its seed.
    pub fn assign(&mut self) -> Assignment {
        let total: u64 = self.moments.iter().map(Frontier::weight).sum();
        // The root always weighs at least ROOT_FLOOR, so total > 0.
        let mut at = self.pick.below(total.max(1));
        let mut chosen = 0;
        for (i, m) in self.moments.iter().enumerate() {
            let w = Frontier::weight(m);
            if at < w {
                chosen = i;
                break;
            }
            at -= w;
        }
        let m = &self.moments[chosen];
        let mut seed = self.seeds.next_u64();
        if seed == m.seed {
            // The same seed would re-key nothing: the branch would replay its parent.
            seed = seed.wrapping_add(1);
        }
        Assignment {
            moment: m.info.id,
            loaded: Arc::clone(m.loaded.as_ref().expect("only live moments weigh")),
            path: BranchPath {
                steps: m.steps.clone(),
                seed,
            },
        }
    }

    /// Takes branch `branch`'s end (started as `a`): its marks new to the exploration
    /// become known, its moments with something still new join the frontier, its moment's
    /// energy goes up or down. Branches must be absorbed in branch order.
    pub fn absorb(&mut self, branch: u64, a: &Assignment, end: &mut GuidedEnd) -> Absorbed {
        let mut out = Absorbed::default();
        let parent = a.moment as usize;
        let depth = self.moments[parent].info.depth + 1;
        for kept in std::mem::take(&mut end.moments) {
            let new: Vec<&Mark> = kept.marks.iter().filter(|k| !self.knows(k)).collect();
            let energy = new.iter().map(|k| k.weight).sum::<u32>().min(MAX_ENERGY);
            if energy == 0 || self.moments.len() >= MAX_MOMENTS {
                // Nothing new there any more, or only what is worth no branch (a
                // violation: its marks become known below, with the branch's others).
                continue;
            }
            let what = new.iter().map(|k| k.what.clone()).collect();
            for k in &new {
                self.known.insert(k.id());
            }
            out.new_marks += new.len() as u32;
            let path = a.path.child(kept.at_ns, 0);
            let steps = path.steps;
            let bytes = kept.loaded.resident_bytes();
            let id = self.moments.len() as u32;
            self.moments.push(Moment {
                info: MomentInfo {
                    id,
                    parent: Some(a.moment),
                    depth,
                    path: steps
                        .iter()
                        .map(|s| format!("{}@{}", s.seed, s.at_ns))
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
        for k in &end.marks {
            if self.known.insert(k.id()) {
                out.new_marks += 1;
            }
        }
        let m = &mut self.moments[parent].info;
        m.children += 1;
        if out.new_marks > 0 {
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

    /// The tree as the report shows it.
    pub fn tree(&self) -> Vec<MomentInfo> {
        self.moments.iter().map(|m| m.info.clone()).collect()
    }
}
