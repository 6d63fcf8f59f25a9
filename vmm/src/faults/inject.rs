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
pub struct Injector {
    plan: FaultPlan,
    applied: Vec<Applied>,
}

/// What a fault's edge asks of the machine beyond its devices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Nothing more.
    None,
    /// Step the RTC by this many seconds.
    RtcStep(i64),
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
        FaultKind::Error { op } => vd::DiskFault::Error(op),
        FaultKind::Latency { extra_ns } => vd::DiskFault::Latency { extra_ns },
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
                if let FaultKind::RtcStep { delta_s } = fault.kind {
                    effect = Effect::RtcStep(delta_s);
                }
            }
            (Phase::End, None, None) => {}
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
