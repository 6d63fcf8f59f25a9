//! Tests of the floating-point unit, all through the public `execute`
//! interface: hand-written vectors for the flag and special-value rules,
//! decoding and NaN-boxing checks, and seeded random comparisons against
//! the host's IEEE arithmetic (round to nearest even) and against an
//! independent exact-arithmetic oracle (every rounding mode, every flag).

mod decoding;
mod encode;
mod oracle;
mod random;
mod vectors;
