//! Faults: the explicit plan a run injects (`plan`), how it is drawn from the seed by a
//! profile (`profile`), and how a machine applies it at its virtual times (`inject`).

pub mod inject;
pub mod plan;
pub mod profile;

use crate::error::Result;
use plan::{FaultPlan, Targets};
use profile::Profile;
use wio_scheduler::RunSeed;

/// Where a run's fault plan comes from.
#[derive(Debug, Clone, Default)]
pub enum FaultSource {
    /// No faults.
    #[default]
    None,
    /// Drawn from the seed by this profile (`--faults`).
    Profile(Profile),
    /// Exactly this plan (`--fault-plan`).
    Plan(FaultPlan),
}

impl FaultSource {
    /// The plan of a machine booted with `seed` that has the parts `has`: drawn by the
    /// profile, or the given plan checked against the machine's parts.
    pub fn plan(&self, seed: RunSeed, has: Targets) -> Result<FaultPlan> {
        match self {
            FaultSource::None => Ok(FaultPlan::default()),
            FaultSource::Profile(p) => Ok(p.draw(seed, has)),
            FaultSource::Plan(plan) => {
                plan.check_targets(has)?;
                Ok(plan.clone())
            }
        }
    }
}
