//! Applying a fault plan to a machine. Each fault becomes two events in the machine's
//! event queue (its start and its end; one for instant kinds), ordered with the device
//! events by (virtual time, sequence), so a fault starts on the same instruction in every
//! run. At each, the injector sets or clears the fault on the device it targets, writes
//! a `fault` trace line, and records it for the summary.

use super::plan::{Fault, FaultKind, FaultPlan};
use crate::devices::virtio_slots::VirtioSlots;
use crate::trace::Trace;
use serde::{Deserialize, Serialize};
use serde_json::json;
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
}

/// The plan of one machine and what of it happened so far.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "InjectorState", try_from = "InjectorState")]
pub struct Injector {
    plan: FaultPlan,
    applied: Vec<Applied>,
}

/// An [`Injector`] as snapshots keep it. Snapshot state is postcard, which cannot encode
/// the plan's flattened JSON shape, so the plan goes in as its JSON text and the applied
/// faults as (index, ended).
#[derive(Serialize, Deserialize)]
struct InjectorState {
    plan_json: String,
    applied: Vec<(u64, bool)>,
}

impl From<Injector> for InjectorState {
    fn from(i: Injector) -> InjectorState {
        InjectorState {
            plan_json: i.plan.to_json(),
            applied: i
                .applied
                .iter()
                .map(|a| (a.index as u64, a.ended))
                .collect(),
        }
    }
}

impl TryFrom<InjectorState> for Injector {
    type Error = String;

    fn try_from(s: InjectorState) -> Result<Injector, String> {
        let plan: FaultPlan =
            serde_json::from_str(&s.plan_json).map_err(|e| format!("saved fault plan: {e}"))?;
        plan.check().map_err(|e| format!("saved fault plan: {e}"))?;
        let applied = s
            .applied
            .into_iter()
            .map(|(index, ended)| {
                let fault = usize::try_from(index)
                    .ok()
                    .and_then(|i| plan.faults.get(i).map(|f| (i, *f)));
                fault
                    .map(|(index, fault)| Applied {
                        index,
                        fault,
                        ended,
                    })
                    .ok_or_else(|| format!("saved fault plan has no fault {index}"))
            })
            .collect::<Result<Vec<_>, String>>()?;
        Ok(Injector { plan, applied })
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
}

fn net_fault(kind: FaultKind) -> Option<vd::NetFault> {
    Some(match kind {
        FaultKind::Partition { direction } => vd::NetFault::Partition(direction),
        FaultKind::Loss { ppm } => vd::NetFault::Loss { ppm },
        FaultKind::Delay { extra_ns } => vd::NetFault::Delay { extra_ns },
        FaultKind::Duplicate { ppm } => vd::NetFault::Duplicate { ppm },
        FaultKind::Reorder { max_ns } => vd::NetFault::Reorder { max_ns },
        _ => return None,
    })
}

fn disk_fault(kind: FaultKind) -> Option<vd::DiskFault> {
    Some(match kind {
        FaultKind::Error { op, nth: None } => vd::DiskFault::Error(op),
        FaultKind::Error { op, nth: Some(nth) } => vd::DiskFault::ErrorNth { op, nth },
        FaultKind::Latency { extra_ns } => vd::DiskFault::Latency { extra_ns },
        FaultKind::BitRot { ppm } => vd::DiskFault::BitRot { ppm },
        _ => return None,
    })
}

impl Injector {
    /// An injector for `plan` (checked and sorted).
    pub fn new(plan: FaultPlan) -> Injector {
        Injector {
            plan,
            applied: Vec::new(),
        }
    }

    /// The faults applied so far.
    pub fn applied(&self) -> &[Applied] {
        &self.applied
    }

    /// The events a machine schedules for the plan at boot: (virtual ns, fault, edge).
    pub fn events(&self) -> Vec<(u64, usize, Phase)> {
        let mut v = Vec::new();
        for (i, f) in self.plan.faults.iter().enumerate() {
            v.push((f.at_ns, i, Phase::Start));
            if !f.kind.is_instant() {
                v.push((f.end_ns(), i, Phase::End));
            }
        }
        v
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
        let mut effect = Effect::None;
        match (phase, net_fault(fault.kind), disk_fault(fault.kind)) {
            (Phase::Start, Some(f), _) => {
                if let Some(net) = virtio.net_mut() {
                    net.start_fault(id, f);
                }
            }
            (Phase::End, Some(_), _) => {
                if let Some(net) = virtio.net_mut() {
                    net.end_fault(id);
                }
            }
            (Phase::Start, _, Some(f)) => {
                if let Some(disk) = virtio.block_mut() {
                    disk.start_fault(id, f);
                }
            }
            (Phase::End, _, Some(_)) => {
                if let Some(disk) = virtio.block_mut() {
                    disk.end_fault(id);
                }
            }
            (Phase::Start, None, None) => {
                effect = match fault.kind {
                    FaultKind::RtcStep { delta_s } => Effect::RtcStep(delta_s),
                    FaultKind::Crash { unflushed } => Effect::PowerOff(unflushed),
                    FaultKind::Pause => Effect::Pause,
                    _ => Effect::None,
                };
            }
            (Phase::End, None, None) => {
                effect = match fault.kind {
                    FaultKind::Crash { .. } => Effect::PowerOn,
                    FaultKind::Pause => Effect::Resume,
                    _ => Effect::None,
                };
            }
        }
        match phase {
            Phase::Start => self.applied.push(Applied {
                index,
                fault,
                ended: fault.kind.is_instant(),
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
    use crate::faults::plan::{DiskOp, Target, Unflushed};

    #[test]
    fn an_injector_with_faults_survives_a_snapshot_encoding() {
        let fault = |at_ns, kind: FaultKind| Fault {
            at_ns,
            duration_ns: if kind.is_instant() { 0 } else { 5 },
            target: kind.target(),
            kind,
        };
        let mut i = Injector::new(FaultPlan {
            faults: vec![
                fault(
                    1,
                    FaultKind::Crash {
                        unflushed: Unflushed::Torn,
                    },
                ),
                fault(
                    2,
                    FaultKind::Error {
                        op: DiskOp::Write,
                        nth: Some(2),
                    },
                ),
                fault(3, FaultKind::RtcStep { delta_s: -5 }),
            ],
        });
        i.applied.push(Applied {
            index: 1,
            fault: i.plan.faults[1],
            ended: false,
        });
        let bytes = postcard::to_stdvec(&i).unwrap();
        let back: Injector = postcard::from_bytes(&bytes).unwrap();
        assert_eq!(back, i);
        assert_eq!(back.plan.faults[0].target, Target::Node);
        let bad = postcard::to_stdvec(&InjectorState {
            plan_json: i.plan.to_json(),
            applied: vec![(7, true)],
        })
        .unwrap();
        assert!(postcard::from_bytes::<Injector>(&bad).is_err());
    }
}
