//! A flight computer's I/O board (`wio,flight-io`), for bare-metal flight software: an
//! attitude sensor, a torque actuator, and the one-axis spacecraft between them, plus
//! the board's hardware watchdog. The plant is simulated in integer arithmetic in fixed
//! 1 ms steps of virtual time, advanced lazily when the guest touches the board, so
//! what the guest reads is a function of the seed, the virtual time and the commands it
//! sent (the sensor's noise and the disturbance torque come from the `flight-io`
//! stream's key, mixed with the step number: no state to save beyond the key).
//!
//! Registers (32-bit):
//! - 0x00 ANGLE (ro): measured attitude error, millidegrees (true value + noise)
//! - 0x04 RATE (ro): measured rate, millidegrees per second
//! - 0x08 COMMAND (rw): torque command, signed; the actuator saturates at ±[`TORQUE_MAX`]
//! - 0x0c RESET_CAUSE (ro): 0 power-on, 1 the watchdog reset the machine
//! - 0x10 WDT_TIMEOUT (rw): watchdog timeout in virtual microseconds; 0 = off (reset value)
//! - 0x14 WDT_PET (wo): writing [`WDT_KEY`] restarts the watchdog's count
//! - 0x18 STEPS (ro): plant steps simulated so far (low 32 bits)
//!
//! The watchdog's expiry is an event of the machine (`BusEvent::Watchdog`): when it
//! fires, the machine resets (boots its program again) and RESET_CAUSE reads 1.

use serde::{Deserialize, Serialize};
use wio_scheduler::{stream_names, RunSeed};

/// Register offsets.
pub mod reg {
    /// Measured angle (millidegrees).
    pub const ANGLE: u64 = 0x00;
    /// Measured rate (millidegrees per second).
    pub const RATE: u64 = 0x04;
    /// Torque command.
    pub const COMMAND: u64 = 0x08;
    /// Why the machine last started.
    pub const RESET_CAUSE: u64 = 0x0c;
    /// Watchdog timeout (virtual microseconds; 0 = off).
    pub const WDT_TIMEOUT: u64 = 0x10;
    /// Watchdog pet.
    pub const WDT_PET: u64 = 0x14;
    /// Plant steps simulated.
    pub const STEPS: u64 = 0x18;
}

/// Value that pets the watchdog.
pub const WDT_KEY: u32 = 0x5afe;
/// The actuator's saturation (command units).
pub const TORQUE_MAX: i64 = 2_000;
/// Plant step, virtual ns.
pub const STEP_NS: u64 = 1_000_000;
/// Longest watchdog timeout accepted (60 virtual s).
pub const MAX_WDT_US: u32 = 60_000_000;
/// Initial attitude error, microdegrees (the loop has work to do from the start).
const START_ANGLE_UDEG: i64 = 20_000_000;
/// Bounds of the simulated state (the spacecraft tumbles at most this fast).
const MAX_RATE_UDEG_S: i64 = 1_000_000_000;
const MAX_ANGLE_UDEG: i64 = 180_000_000;

/// SplitMix64's finalizer: a well-mixed 64-bit function of `x`.
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// A value in [-span, span] drawn from `key` and `n`.
fn noise(key: u64, n: u64, span: i64) -> i64 {
    let width = (2 * span + 1) as u64;
    (mix(key ^ mix(n)) % width) as i64 - span
}

/// What the watchdog asks of the machine after a register write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Watchdog {
    /// Nothing changes.
    Unchanged,
    /// Fire at this virtual time unless petted again; `generation` names the arming.
    Arm { at_ns: u64, generation: u64 },
    /// Off.
    Off,
}

/// The board.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlightIo {
    /// Key of the sensor noise and disturbance (from the seed's `flight-io` stream).
    key: u64,
    /// Plant steps done; the plant is at virtual time `steps * STEP_NS`.
    steps: u64,
    angle_udeg: i64,
    rate_udeg_s: i64,
    /// The command in force (saturated).
    torque: i64,
    /// 1 after a watchdog reset.
    reset_cause: u32,
    wdt_timeout_us: u32,
    /// Counts armings: an expiry event of an older arming is stale.
    wdt_generation: u64,
    /// Watchdog resets so far.
    pub watchdog_resets: u64,
}

impl FlightIo {
    /// The board of a run with `seed`, its plant at rest with the initial error.
    pub fn new(seed: RunSeed) -> FlightIo {
        FlightIo {
            key: seed.stream(stream_names::FLIGHT_IO).next_u64(),
            steps: 0,
            angle_udeg: START_ANGLE_UDEG,
            rate_udeg_s: 0,
            torque: 0,
            reset_cause: 0,
            wdt_timeout_us: 0,
            wdt_generation: 0,
            watchdog_resets: 0,
        }
    }

    /// Draws the noise and disturbance from `seed` from now on (a restore with another
    /// seed: same past, new future).
    pub fn rekey(&mut self, seed: RunSeed) {
        self.key = seed.stream(stream_names::FLIGHT_IO).next_u64();
    }

    /// Runs the plant up to virtual time `now_ns`.
    fn advance(&mut self, now_ns: u64) {
        let target = now_ns / STEP_NS;
        while self.steps < target {
            // Disturbance torque: a slowly changing value (new every 100 ms) plus jitter.
            let slow = noise(self.key, self.steps / 100, 20);
            let jitter = noise(self.key.rotate_left(17), self.steps, 5);
            let accel = (self.torque + slow + jitter) * 100; // µdeg/s per step
            self.rate_udeg_s = (self.rate_udeg_s + accel).clamp(-MAX_RATE_UDEG_S, MAX_RATE_UDEG_S);
            self.angle_udeg =
                (self.angle_udeg + self.rate_udeg_s / 1000).clamp(-MAX_ANGLE_UDEG, MAX_ANGLE_UDEG);
            self.steps += 1;
        }
    }

    /// A 32-bit register read at virtual time `now_ns`.
    pub fn read(&mut self, offset: u64, now_ns: u64) -> u32 {
        self.advance(now_ns);
        match offset {
            reg::ANGLE => {
                let n = noise(self.key.rotate_left(29), self.steps, 20_000);
                ((self.angle_udeg + n) / 1000) as i32 as u32
            }
            reg::RATE => {
                let n = noise(self.key.rotate_left(41), self.steps, 5_000);
                ((self.rate_udeg_s + n) / 1000) as i32 as u32
            }
            reg::COMMAND => self.torque as i32 as u32,
            reg::RESET_CAUSE => self.reset_cause,
            reg::WDT_TIMEOUT => self.wdt_timeout_us,
            reg::STEPS => self.steps as u32,
            _ => 0,
        }
    }

    /// A 32-bit register write at virtual time `now_ns`; says what the watchdog does.
    pub fn write(&mut self, offset: u64, value: u32, now_ns: u64) -> Watchdog {
        self.advance(now_ns);
        match offset {
            reg::COMMAND => {
                self.torque = i64::from(value as i32).clamp(-TORQUE_MAX, TORQUE_MAX);
                Watchdog::Unchanged
            }
            reg::WDT_TIMEOUT => {
                self.wdt_timeout_us = value.min(MAX_WDT_US);
                self.rearm(now_ns)
            }
            reg::WDT_PET if value == WDT_KEY && self.wdt_timeout_us != 0 => self.rearm(now_ns),
            _ => Watchdog::Unchanged,
        }
    }

    fn rearm(&mut self, now_ns: u64) -> Watchdog {
        self.wdt_generation += 1;
        if self.wdt_timeout_us == 0 {
            return Watchdog::Off;
        }
        Watchdog::Arm {
            at_ns: now_ns.saturating_add(u64::from(self.wdt_timeout_us) * 1000),
            generation: self.wdt_generation,
        }
    }

    /// Whether an expiry event of arming `generation` is the one in force.
    pub fn expires(&self, generation: u64) -> bool {
        self.wdt_timeout_us != 0 && generation == self.wdt_generation
    }

    /// The machine was reset by the watchdog: the board's watchdog is off again and
    /// RESET_CAUSE says why; the spacecraft keeps moving (the actuator holds no command).
    pub fn watchdog_reset(&mut self, now_ns: u64) {
        self.advance(now_ns);
        self.reset_cause = 1;
        self.wdt_timeout_us = 0;
        self.wdt_generation += 1;
        self.torque = 0;
        self.watchdog_resets += 1;
    }

    /// The attitude error now, in millidegrees (true value, for traces and tests).
    pub fn true_angle_mdeg(&self) -> i64 {
        self.angle_udeg / 1000
    }
}

impl FlightIo {
    /// The board is its registers and the simulated attitude: a restore refuses a torque or a
    /// watchdog timeout the board's writes clamp away. (A re-seeded restore re-keys it
    /// afterwards.)
    fn check_saved(s: &FlightIo) -> Result<(), crate::devices::StateError> {
        use crate::devices::check_register as check;
        check(
            "flight I/O",
            "torque",
            s.torque as u64,
            (-TORQUE_MAX..=TORQUE_MAX).contains(&s.torque),
        )?;
        check(
            "flight I/O",
            "watchdog timeout",
            u64::from(s.wdt_timeout_us),
            s.wdt_timeout_us <= MAX_WDT_US,
        )?;
        Ok(())
    }
}

crate::persist_registers!(FlightIo, FlightIo::check_saved);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plant_is_a_function_of_seed_time_and_commands() {
        let run = |seed| {
            let mut b = FlightIo::new(RunSeed(seed));
            let mut seen = Vec::new();
            for ms in 1..200u64 {
                let a = b.read(reg::ANGLE, ms * STEP_NS) as i32;
                let r = b.read(reg::RATE, ms * STEP_NS) as i32;
                let cmd = (-(a / 2) - r / 4).clamp(-500, 500);
                b.write(reg::COMMAND, cmd as u32, ms * STEP_NS);
                seen.push((a, r));
            }
            seen
        };
        assert_eq!(run(1), run(1));
        assert_ne!(run(1), run(2));
        // The loop brings the 20 degree error down.
        let last = run(1)[198].0;
        assert!(last.abs() < 20_000, "{last}");
    }

    #[test]
    fn watchdog_arms_on_pets_and_stale_expiries_are_ignored() {
        let mut b = FlightIo::new(RunSeed(0));
        assert_eq!(
            b.write(reg::WDT_PET, WDT_KEY, 0),
            Watchdog::Unchanged,
            "off until set"
        );
        let Watchdog::Arm {
            at_ns,
            generation: g1,
        } = b.write(reg::WDT_TIMEOUT, 50_000, 0)
        else {
            panic!("not armed")
        };
        assert_eq!(at_ns, 50_000_000);
        let Watchdog::Arm { generation: g2, .. } = b.write(reg::WDT_PET, WDT_KEY, 10) else {
            panic!("not re-armed")
        };
        assert!(!b.expires(g1) && b.expires(g2));
        assert_eq!(
            b.write(reg::WDT_PET, 1, 20),
            Watchdog::Unchanged,
            "wrong key"
        );
        b.watchdog_reset(30);
        assert_eq!(b.read(reg::RESET_CAUSE, 30), 1);
        assert!(!b.expires(g2));
        // Saturation.
        b.write(reg::COMMAND, (-5000i32) as u32, 40);
        assert_eq!(b.read(reg::COMMAND, 40) as i32, -(TORQUE_MAX as i32));
    }
}
