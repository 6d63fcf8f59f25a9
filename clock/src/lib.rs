//! `wio-clock`: virtual time for the wio deterministic hypervisor.
//!
//! Guest-visible time in wio is never read from the host. It is a plain
//! counter of *virtual nanoseconds* that only moves when the VMM says so:
//! either because a VM exit was charged a cost (see [`CostModel`]) or because
//! the guest halted and the clock jumped to the next scheduled event. Every
//! value this crate produces is therefore a pure function of its inputs, which
//! keeps the whole run a function of the 64-bit run seed.
//!
//! Modules:
//! - [`time`]: the [`VirtualClock`], [`Deadline`] and [`NS_PER_SEC`].
//! - [`tsc`]: the [`VirtualTsc`], converting virtual ns to TSC ticks and back.
//! - [`instructions`]: the [`InstructionClock`], time from a retired-instruction count,
//!   with a bounded drift (ppm) of the machine's oscillator.
//! - [`cost`]: the [`CostModel`] that prices each kind of VM exit.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod cost;
pub mod instructions;
pub mod time;
pub mod tsc;

pub use cost::{CostModel, CostModelError, ExitCost};
pub use instructions::{InstructionClock, InstructionClockError, MAX_DRIFT_PPM};
pub use time::{Deadline, VirtualClock, VirtualTime, NS_PER_SEC};
pub use tsc::{VirtualTsc, DEFAULT_TSC_HZ};
