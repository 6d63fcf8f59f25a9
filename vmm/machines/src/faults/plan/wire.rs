//! The two written forms of a fault's kind, kept apart from [`FaultKind`] itself, whose
//! network and disk faults are the devices' own types.
//!
//! Both forms are flat: one variant per [`Kind`], its parameters beside it.
//! - `PlanKind`, a plan's JSON (`"kind": "error", "params": {"op": "read", "nth": 3}`):
//!   what users write and keep, so optional parameters may be left out.
//! - `SavedKind`, a snapshot's postcard bytes: externally tagged, every field written,
//!   since postcard can decode neither an adjacently tagged enum nor a skipped field.
//!   The variants' order and fields are the snapshot format: changing them is a format
//!   change (see docs/snapshots.md); the plan module's tests pin the bytes.
//!
//! Both are declared from one list (`flat_forms!`), and one macro (`flat_form!`) writes the
//! conversions of each to and from [`FaultKind`].
//!
//! The conversions are total both ways: every [`FaultKind`] has one flat form and back.

use super::{
    Direction, DiskFault, DiskOp, Fault, FaultKind, NetFault, Target, Unflushed, UpsetPlace,
};
use serde::{Deserialize, Serialize};

/// Declares the two flat forms from one list of variants, so they cannot part: a field's
/// `#[plan(...)]` attributes apply to the plan's JSON form only (defaults for what users
/// may leave out), the snapshot form writes every field.
macro_rules! flat_forms {
    ($( $variant:ident $({ $( $(#[plan($attr:meta)])* $field:ident: $ty:ty ),* $(,)? })? ),* $(,)?) => {
        /// A fault's kind as a plan writes it (JSON): `kind` and `params`.
        #[derive(Clone, Copy, Serialize, Deserialize)]
        #[serde(tag = "kind", content = "params", rename_all = "kebab-case")]
        pub(super) enum PlanKind {
            $( $variant $({ $( $(#[$attr])* $field: $ty ),* })? ),*
        }

        /// A fault's kind as a snapshot keeps it (postcard): externally tagged, every
        /// field written.
        #[derive(Serialize, Deserialize)]
        enum SavedKind {
            $( $variant $({ $( $field: $ty ),* })? ),*
        }
    };
}

flat_forms! {
    Partition { direction: Direction },
    Loss { ppm: u64 },
    Delay { extra_ns: u64 },
    Duplicate { ppm: u64 },
    Reorder { max_ns: u64 },
    Error {
        op: DiskOp,
        #[plan(serde(default, skip_serializing_if = "Option::is_none"))]
        nth: Option<u64>,
    },
    BitRot { ppm: u64 },
    Latency { extra_ns: u64 },
    RtcStep { delta_s: i64 },
    Crash {
        #[plan(serde(default))]
        unflushed: Unflushed,
    },
    Pause,
    Upset {
        place: UpsetPlace,
        bit: u8,
        #[plan(serde(default = "one", skip_serializing_if = "is_one"))]
        width: u8,
    },
    Stuck { ram: u64, bit: u8, value: u8 },
}

fn one() -> u8 {
    1
}

fn is_one(w: &u8) -> bool {
    *w == 1
}

/// Expands to the two conversions between [`FaultKind`] and a flat form with the variants
/// above, so the plan's and the snapshot's mapping cannot drift apart.
macro_rules! flat_form {
    ($flat:ident) => {
        impl From<FaultKind> for $flat {
            fn from(k: FaultKind) -> $flat {
                match k {
                    FaultKind::Net(NetFault::Partition(direction)) => {
                        $flat::Partition { direction }
                    }
                    FaultKind::Net(NetFault::Loss { ppm }) => $flat::Loss { ppm },
                    FaultKind::Net(NetFault::Delay { extra_ns }) => $flat::Delay { extra_ns },
                    FaultKind::Net(NetFault::Duplicate { ppm }) => $flat::Duplicate { ppm },
                    FaultKind::Net(NetFault::Reorder { max_ns }) => $flat::Reorder { max_ns },
                    FaultKind::Disk(DiskFault::Error(op)) => $flat::Error { op, nth: None },
                    FaultKind::Disk(DiskFault::ErrorNth { op, nth }) => {
                        $flat::Error { op, nth: Some(nth) }
                    }
                    FaultKind::Disk(DiskFault::BitRot { ppm }) => $flat::BitRot { ppm },
                    FaultKind::Disk(DiskFault::Latency { extra_ns }) => $flat::Latency { extra_ns },
                    FaultKind::RtcStep { delta_s } => $flat::RtcStep { delta_s },
                    FaultKind::Crash { unflushed } => $flat::Crash { unflushed },
                    FaultKind::Pause => $flat::Pause,
                    FaultKind::Upset { place, bit, width } => $flat::Upset { place, bit, width },
                    FaultKind::Stuck { ram, bit, value } => $flat::Stuck { ram, bit, value },
                }
            }
        }

        impl From<$flat> for FaultKind {
            fn from(k: $flat) -> FaultKind {
                match k {
                    $flat::Partition { direction } => {
                        FaultKind::Net(NetFault::Partition(direction))
                    }
                    $flat::Loss { ppm } => FaultKind::Net(NetFault::Loss { ppm }),
                    $flat::Delay { extra_ns } => FaultKind::Net(NetFault::Delay { extra_ns }),
                    $flat::Duplicate { ppm } => FaultKind::Net(NetFault::Duplicate { ppm }),
                    $flat::Reorder { max_ns } => FaultKind::Net(NetFault::Reorder { max_ns }),
                    $flat::Error { op, nth: None } => FaultKind::Disk(DiskFault::Error(op)),
                    $flat::Error { op, nth: Some(nth) } => {
                        FaultKind::Disk(DiskFault::ErrorNth { op, nth })
                    }
                    $flat::BitRot { ppm } => FaultKind::Disk(DiskFault::BitRot { ppm }),
                    $flat::Latency { extra_ns } => FaultKind::Disk(DiskFault::Latency { extra_ns }),
                    $flat::RtcStep { delta_s } => FaultKind::RtcStep { delta_s },
                    $flat::Crash { unflushed } => FaultKind::Crash { unflushed },
                    $flat::Pause => FaultKind::Pause,
                    $flat::Upset { place, bit, width } => FaultKind::Upset { place, bit, width },
                    $flat::Stuck { ram, bit, value } => FaultKind::Stuck { ram, bit, value },
                }
            }
        }
    };
}

flat_form!(PlanKind);
flat_form!(SavedKind);

/// serde for a [`Fault`] in snapshots (`#[serde(with = "wire::saved")]`): its fields in
/// order, its kind not flattened, in [`SavedKind`]'s form.
pub(super) mod saved {
    use super::*;
    use serde::{Deserializer, Serializer};

    #[derive(Serialize, Deserialize)]
    struct SavedFault {
        at_ns: u64,
        duration_ns: u64,
        target: Target,
        kind: SavedKind,
    }

    pub(in super::super) fn serialize<S: Serializer>(f: &Fault, s: S) -> Result<S::Ok, S::Error> {
        SavedFault {
            at_ns: f.at_ns,
            duration_ns: f.duration_ns,
            target: f.target,
            kind: f.kind.into(),
        }
        .serialize(s)
    }

    pub(in super::super) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Fault, D::Error> {
        let f = SavedFault::deserialize(d)?;
        Ok(Fault {
            at_ns: f.at_ns,
            duration_ns: f.duration_ns,
            target: f.target,
            kind: f.kind.into(),
        })
    }
}
