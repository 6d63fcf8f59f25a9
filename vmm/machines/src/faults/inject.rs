//! Applying a fault plan to a machine. Each fault becomes two events in the machine's
//! event queue (its start and its end; one for instant kinds), ordered with the device
//! events by (virtual time, sequence), so a fault starts on the same instruction in every
//! run. At each, the injector sets or clears the fault on the device it targets, writes
//! a `fault` trace line, and records it for the summary.

use super::plan::Targets;
use super::plan::{Fault, FaultKind, FaultPlan, SavedFault};
use super::profile::{After, Profile};
use crate::devices::virtio_slots::VirtioSlots;
use crate::snapshot::persist::Persist;
use crate::trace::Trace;
use serde::{Deserialize, Serialize};
use serde_json::json;
use wio_scheduler::RunSeed;
use wio_virtio_devices as vd;

/// Which edge of a fault an event is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Phase {
    /// The fault comes into force.
    Start,
    /// It ends.
    End,
}

/// A fault the run applied, for the summary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Applied {
    /// Its index in the plan.
    pub index: usize,
    /// The fault as planned.
    #[serde(flatten)]
    pub fault: Fault,
    /// Whether it has ended (instant kinds end as they start).
    pub ended: bool,
    /// The world node it hit (set in world explorations' reports; machines leave it out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
}

/// The plan of one machine, the profile it was drawn from, and what of it happened so far.
/// Snapshots keep it as an [`InjectorState`] (see its [`Persist`] impl).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Injector {
    /// The faults, in start-time order (a restore keeps a prefix of them).
    plan: FaultPlan,
    applied: Vec<Applied>,
    /// The profile the plan was drawn from; `None` when the plan was given exactly or
    /// there are no faults. Kept in snapshots so that a restore with another seed can
    /// draw the faults still to come from it.
    profile: Option<Profile>,
    /// When setup was declared complete (where a profile counted from it starts).
    origin_ns: Option<u64>,
}

/// An injector as a snapshot keeps it: the plan, what was applied (fault index, whether
/// it ended; the fault itself is the plan's), and the profile.
#[derive(Serialize, Deserialize)]
pub struct InjectorState {
    faults: Vec<SavedFault>,
    applied: Vec<(usize, bool)>,
    profile: Option<Profile>,
    origin_ns: Option<u64>,
}

/// Why a saved injector is refused: a damaged or foreign snapshot.
#[derive(Debug, thiserror::Error)]
pub enum InjectorStateError {
    /// The plan does not check.
    #[error("its fault plan is invalid: {0}")]
    Plan(#[source] crate::error::PlanError),
    /// The plan is not in start order (a restore replaces its tail).
    #[error("its fault plan is not in start-time order")]
    Order,
    /// The applied list names a fault the plan lacks.
    #[error("fault {0} was applied but is not planned")]
    NotPlanned(usize),
}

impl Persist for Injector {
    type State = InjectorState;
    type Args<'a> = ();
    type Error = InjectorStateError;

    fn save(&self) -> InjectorState {
        InjectorState {
            faults: self.plan.faults.iter().copied().map(SavedFault).collect(),
            applied: self.applied.iter().map(|a| (a.index, a.ended)).collect(),
            profile: self.profile.clone(),
            origin_ns: self.origin_ns,
        }
    }

    fn restore(_: (), s: &InjectorState) -> Result<Injector, InjectorStateError> {
        let plan = FaultPlan {
            faults: s.faults.iter().map(|f| f.0).collect(),
        };
        plan.check().map_err(InjectorStateError::Plan)?;
        let mut injector = Injector {
            plan,
            applied: Vec::new(),
            profile: s.profile.clone(),
            origin_ns: s.origin_ns,
        };
        if !injector.is_sorted() {
            return Err(InjectorStateError::Order);
        }
        for &(index, ended) in &s.applied {
            let fault = *injector
                .plan
                .faults
                .get(index)
                .ok_or(InjectorStateError::NotPlanned(index))?;
            injector.applied.push(Applied {
                index,
                fault,
                ended,
                node: None,
            });
        }
        Ok(injector)
    }
}

/// What replacing a plan's future faults did (see [`Injector::replace_future`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replaced {
    /// Faults kept: those that started at or before the restore's time; their indices
    /// are unchanged, so are their events still in the queue. The events of faults at
    /// index `kept` or above are stale and must leave the queue.
    pub kept: usize,
    /// Faults of the old plan that had not started, dropped.
    pub dropped: usize,
    /// The events of the new future faults: (virtual ns, index, edge).
    pub events: Vec<(u64, usize, Phase)>,
}

impl Replaced {
    /// How many future faults the new plan has.
    pub fn added(&self) -> usize {
        self.events
            .iter()
            .filter(|(_, _, phase)| *phase == Phase::Start)
            .count()
    }
}

/// What a fault's edge asks of the machine beyond its devices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Nothing more.
    None,
    /// Step the RTC by this many seconds.
    RtcStep(i64),
    /// Cut the power; the disk's unflushed writes go as said.
    PowerOff(vd::Unflushed),
    /// Power on again: boot the machine anew.
    PowerOn,
    /// Stop the CPU (time and devices go on).
    Pause,
    /// Let the CPU run again.
    Resume,
    /// Flip `width` bits from a bit up (a single- or multi-bit upset).
    Upset(super::plan::UpsetPlace, u8, u8),
    /// Stick a RAM bit (address, bit) at a value, or free it (None).
    Stuck(u64, u8, Option<bool>),
}

/// The (virtual ns, index, edge) events of faults `first..` of `faults`.
fn edges(faults: &[Fault], first: usize) -> Vec<(u64, usize, Phase)> {
    let mut v = Vec::new();
    for (i, f) in faults.iter().enumerate().skip(first) {
        v.push((f.at_ns, i, Phase::Start));
        if !f.kind.is_instant() {
            v.push((f.end_ns(), i, Phase::End));
        }
    }
    v
}

impl Injector {
    /// An injector for `plan` (checked), drawn from `profile` if it was. The plan is
    /// put in start-time order (stable), which a restore's replacement relies on.
    pub fn new(mut plan: FaultPlan, profile: Option<Profile>) -> Injector {
        plan.sort();
        Injector {
            plan,
            applied: Vec::new(),
            profile,
            origin_ns: None,
        }
    }

    /// The plan.
    pub fn plan(&self) -> &FaultPlan {
        &self.plan
    }

    /// The profile the plan was drawn from, if it was.
    pub fn profile(&self) -> Option<&Profile> {
        self.profile.as_ref()
    }

    /// The plan `profile` draws with `seed` for this machine: its window counted from the
    /// boot, or from setup-complete once that happened (before: no fault).
    pub fn draw(&self, profile: &Profile, seed: RunSeed, has: Targets) -> FaultPlan {
        match (profile.after, self.origin_ns) {
            (After::Boot, _) => profile.draw_from(seed, has, 0),
            (After::SetupComplete, Some(origin)) => profile.draw_from(seed, has, origin),
            (After::SetupComplete, None) => FaultPlan::default(),
        }
    }

    /// A program declared its setup complete at `now_ns`: a profile counted from then
    /// draws its faults now (once). Returns the replacement for the machine's queue.
    pub fn setup_complete(&mut self, now_ns: u64, seed: RunSeed, has: Targets) -> Option<Replaced> {
        let profile = self.profile.clone()?;
        if profile.after != After::SetupComplete || self.origin_ns.is_some() {
            return None;
        }
        self.origin_ns = Some(now_ns);
        let plan = self.draw(&profile, seed, has);
        Some(self.replace_future(now_ns, &plan, Some(profile)))
    }

    /// Whether the plan is in start-time order (a snapshot's plan is checked so).
    fn is_sorted(&self) -> bool {
        self.plan
            .faults
            .windows(2)
            .all(|w| w[0].at_ns <= w[1].at_ns)
    }

    /// Replaces the faults still to come at `now_ns` (a restore): faults that started at
    /// or before `now_ns` stay with their indices (and their pending end events, and
    /// their place in the applied list); the rest go, and `future`'s faults that start
    /// after `now_ns` follow them, in start order. `profile` is where the new plan comes
    /// from from now on. The caller takes the stale events out of its queue and pushes
    /// the returned ones.
    pub fn replace_future(
        &mut self,
        now_ns: u64,
        future: &FaultPlan,
        profile: Option<Profile>,
    ) -> Replaced {
        let kept = self.plan.faults.partition_point(|f| f.at_ns <= now_ns);
        let dropped = self.plan.faults.len() - kept;
        self.plan.faults.truncate(kept);
        let mut next: Vec<Fault> = future
            .faults
            .iter()
            .filter(|f| f.at_ns > now_ns)
            .copied()
            .collect();
        next.sort_by_key(|f| f.at_ns);
        self.plan.faults.extend(next);
        self.profile = profile;
        Replaced {
            kept,
            dropped,
            events: edges(&self.plan.faults, kept),
        }
    }

    /// The faults applied so far.
    pub fn applied(&self) -> &[Applied] {
        &self.applied
    }

    /// The events a machine schedules for the plan at boot: (virtual ns, fault, edge).
    pub fn events(&self) -> Vec<(u64, usize, Phase)> {
        edges(&self.plan.faults, 0)
    }

    /// Whether `index` names a fault of the plan (a snapshot's events are checked so).
    pub fn has(&self, index: usize) -> bool {
        index < self.plan.faults.len()
    }

    /// Carries out one edge of fault `index` at `now_ns`: sets or clears it on its device,
    /// traces it, records it. Returns what the machine itself must do.
    pub fn fire(
        &mut self,
        index: usize,
        phase: Phase,
        now_ns: u64,
        virtio: &mut VirtioSlots,
        trace: &mut Trace,
    ) -> Effect {
        let Some(fault) = self.plan.faults.get(index).copied() else {
            return Effect::None;
        };
        let id = index as u64;
        let effect = match (phase, fault.kind) {
            (Phase::Start, FaultKind::Net(f)) => {
                if let Some(net) = virtio.net_mut() {
                    net.start_fault(id, f);
                }
                Effect::None
            }
            (Phase::End, FaultKind::Net(_)) => {
                if let Some(net) = virtio.net_mut() {
                    net.end_fault(id);
                }
                Effect::None
            }
            (Phase::Start, FaultKind::Disk(f)) => {
                if let Some(disk) = virtio.block_mut() {
                    disk.start_fault(id, f);
                }
                Effect::None
            }
            (Phase::End, FaultKind::Disk(_)) => {
                if let Some(disk) = virtio.block_mut() {
                    disk.end_fault(id);
                }
                Effect::None
            }
            (Phase::Start, FaultKind::RtcStep { delta_s }) => Effect::RtcStep(delta_s),
            (Phase::Start, FaultKind::Crash { unflushed }) => Effect::PowerOff(unflushed),
            (Phase::Start, FaultKind::Pause) => Effect::Pause,
            (Phase::Start, FaultKind::Upset { place, bit, width }) => {
                Effect::Upset(place, bit, width)
            }
            (Phase::Start, FaultKind::Stuck { ram, bit, value }) => {
                Effect::Stuck(ram, bit, Some(value == 1))
            }
            (Phase::End, FaultKind::Crash { .. }) => Effect::PowerOn,
            (Phase::End, FaultKind::Pause) => Effect::Resume,
            (Phase::End, FaultKind::Stuck { ram, bit, .. }) => Effect::Stuck(ram, bit, None),
            // Instant kinds have no end edge.
            (Phase::End, FaultKind::RtcStep { .. } | FaultKind::Upset { .. }) => Effect::None,
        };
        match phase {
            Phase::Start => self.applied.push(Applied {
                index,
                fault,
                ended: fault.kind.is_instant(),
                node: None,
            }),
            Phase::End => {
                if let Some(a) = self.applied.iter_mut().find(|a| a.index == index) {
                    a.ended = true;
                }
            }
        }
        trace.event(
            now_ns,
            "fault",
            json!({
                "index": index,
                "phase": if phase == Phase::Start { "start" } else { "end" },
                "fault": fault,
            }),
        );
        effect
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::faults::plan::{DiskFault, DiskOp, Target, Targets, Unflushed};
    use wio_scheduler::RunSeed;

    #[test]
    fn an_injector_with_faults_survives_a_snapshot_encoding() {
        let fault = |at_ns, kind: FaultKind| Fault {
            at_ns,
            duration_ns: if kind.is_instant() { 0 } else { 5 },
            target: kind.target(),
            kind,
        };
        let mut i = Injector::new(
            FaultPlan {
                faults: vec![
                    fault(
                        1,
                        FaultKind::Crash {
                            unflushed: Unflushed::Torn,
                        },
                    ),
                    fault(
                        2,
                        FaultKind::Disk(DiskFault::ErrorNth {
                            op: DiskOp::Write,
                            nth: 2,
                        }),
                    ),
                    fault(3, FaultKind::RtcStep { delta_s: -5 }),
                ],
            },
            None,
        );
        i.applied.push(Applied {
            index: 1,
            fault: i.plan.faults[1],
            ended: false,
            node: None,
        });
        let back = through_postcard(&i).unwrap();
        assert_eq!(back, i);
        assert_eq!(back.plan.faults[0].target, Target::Node);
    }

    #[test]
    fn snapshots_keep_the_plan_what_was_applied_and_the_profile() {
        let heavy = Profile::builtin("heavy").unwrap();
        let plan = heavy.draw(
            RunSeed(3),
            Targets {
                disk: true,
                node: true,
                ram: true,
            },
        );
        // Every kind of the heavy profile, so every kind's encoding is exercised.
        let mut names: Vec<&str> = plan.faults.iter().map(|f| f.kind.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert!(names.len() >= 6, "{names:?}");
        let mut i = Injector::new(plan, Some(heavy));
        for (index, ended) in [(0, true), (2, false)] {
            i.applied.push(Applied {
                index,
                fault: i.plan.faults[index],
                ended,
                node: None,
            });
        }
        assert_eq!(through_postcard(&i).unwrap(), i);
        // A damaged state is refused, not trusted.
        let mut bad = i.save();
        bad.applied.push((10_000, true));
        assert!(matches!(
            Injector::restore((), &bad),
            Err(InjectorStateError::NotPlanned(10_000))
        ));
        let mut unsorted = i.save();
        unsorted.faults.swap(0, 1);
        assert!(matches!(
            Injector::restore((), &unsorted),
            Err(InjectorStateError::Order)
        ));
    }

    /// `i` saved, encoded as a snapshot section, decoded and restored.
    fn through_postcard(i: &Injector) -> Result<Injector, InjectorStateError> {
        let bytes = postcard::to_stdvec(&i.save()).unwrap();
        Injector::restore((), &postcard::from_bytes(&bytes).unwrap())
    }
}
