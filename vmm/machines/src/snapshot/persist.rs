//! The one way a component's state goes into a snapshot and comes back (after Firecracker's
//! `snapshot/persist.rs`).
//!
//! Every component a snapshot keeps (a device, the bus's event queue, a CPU engine, the
//! fault injector, the promise ledger, the console, the trace chain, ...) implements
//! [`Persist`]: `save` gives a plain-data `State`, `restore` builds the component again from
//! a `State` and what the restoring machine supplies (`Args`), and treats the state as
//! untrusted (a damaged or foreign snapshot must be refused with a reason, never panic).
//! A machine writes each component's state into its own named section
//! ([`StateSections::put`]) and reads it back by name ([`StateSections::get`]), so a restore
//! says which component's state is missing or bad, and a new device touches one place: its
//! `Persist` impl and the line that names its section.
//!
//! A component that is nothing but guest-visible registers (the PLIC, the Goldfish RTC, the
//! EDAC unit, ...) is its own `State`: its restore checks the registers' bounds.

use serde::de::DeserializeOwned;
use serde::Serialize;

/// A component whose state a snapshot keeps.
pub trait Persist: Sized {
    /// What a snapshot keeps of it: plain data, encoded with postcard.
    type State: Serialize + DeserializeOwned;
    /// What a restore supplies besides the state (guest memory, the run's configuration, a
    /// new seed to re-key streams from, ...).
    type Args<'a>;
    /// Why a state is refused.
    type Error: std::error::Error + Send + Sync + 'static;

    /// The component's state now.
    fn save(&self) -> Self::State;

    /// The component again, from a saved state (checked: it may come from a damaged file).
    fn restore(args: Self::Args<'_>, state: &Self::State) -> Result<Self, Self::Error>;
}

/// `Persist` for a device that is nothing but its registers: its state is itself. With one
/// argument every value is one the device can hold (a restore has nothing to refuse); with a
/// second, `check(&state) -> Result<(), devices::StateError>` refuses values the device
/// never holds.
#[macro_export]
macro_rules! persist_registers {
    ($ty:ty, $check:path) => {
        impl $crate::snapshot::persist::Persist for $ty {
            type State = $ty;
            type Args<'a> = ();
            type Error = $crate::devices::StateError;

            fn save(&self) -> $ty {
                self.clone()
            }

            fn restore(_: (), s: &$ty) -> Result<$ty, Self::Error> {
                $check(s)?;
                Ok(s.clone())
            }
        }
    };
    ($ty:ty) => {
        impl $crate::snapshot::persist::Persist for $ty {
            type State = $ty;
            type Args<'a> = ();
            type Error = std::convert::Infallible;

            fn save(&self) -> $ty {
                self.clone()
            }

            fn restore(_: (), s: &$ty) -> Result<$ty, Self::Error> {
                Ok(s.clone())
            }
        }
    };
}

/// Why a machine's state sections cannot be written or read back.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// A section the restore needs is not there.
    #[error("has no `{0}` section (it was written by another wio, or damaged)")]
    Missing(String),
    /// A section this machine does not know.
    #[error("has a `{0}` section this machine does not know (it was written by another wio)")]
    Unknown(String),
    /// A section's bytes do not decode as its component's state.
    #[error("has an unreadable `{section}` section: {source}")]
    Unreadable {
        /// The section.
        section: String,
        /// What postcard said.
        source: postcard::Error,
    },
    /// A state that does not encode (a bug: states are plain data).
    #[error("cannot encode the `{section}` section: {source}")]
    Encode {
        /// The section.
        section: String,
        /// What postcard said.
        source: postcard::Error,
    },
    /// A component refused its saved state.
    #[error("has a `{section}` section this machine refuses: {source}")]
    Refused {
        /// The section.
        section: String,
        /// The component's reason.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl StateError {
    /// A component's refusal of the state in `section`.
    pub fn refused(
        section: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> StateError {
        StateError::Refused {
            section: section.into(),
            source: Box::new(source),
        }
    }
}

/// Most sections one indexed family (`virtio.0`, `virtio.1`, ...) may have.
pub const MAX_INDEXED: usize = 16;

/// Whether `name` is `prefix` followed by an index below [`MAX_INDEXED`] (`virtio.3`).
pub fn is_indexed(name: &str, prefix: &str) -> bool {
    name.strip_prefix(prefix)
        .and_then(|n| n.parse::<usize>().ok())
        .is_some_and(|n| n < MAX_INDEXED)
}

/// A machine's state as named sections (postcard payloads), in the order written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StateSections {
    sections: Vec<(String, Vec<u8>)>,
}

impl StateSections {
    /// Sections read from a file (names checked unique by the container).
    pub fn from_parts(sections: Vec<(String, Vec<u8>)>) -> StateSections {
        StateSections { sections }
    }

    /// (name, payload) in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &[u8])> {
        self.sections
            .iter()
            .map(|(n, b)| (n.as_str(), b.as_slice()))
    }

    /// Adds a section holding `state`.
    pub fn put<T: Serialize>(
        &mut self,
        section: impl Into<String>,
        state: &T,
    ) -> Result<(), StateError> {
        let section = section.into();
        debug_assert!(
            self.sections.iter().all(|(n, _)| *n != section),
            "section {section} written twice"
        );
        match postcard::to_stdvec(state) {
            Ok(bytes) => {
                self.sections.push((section, bytes));
                Ok(())
            }
            Err(source) => Err(StateError::Encode { section, source }),
        }
    }

    /// Saves `component` into `section`.
    pub fn save<P: Persist>(
        &mut self,
        section: impl Into<String>,
        component: &P,
    ) -> Result<(), StateError> {
        self.put(section, &component.save())
    }

    /// Adds one section per item, named `prefix` and its index (`virtio.0`, `virtio.1`, ...).
    pub fn put_indexed<T: Serialize>(
        &mut self,
        prefix: &str,
        items: &[T],
    ) -> Result<(), StateError> {
        debug_assert!(items.len() <= MAX_INDEXED, "too many {prefix} sections");
        for (i, item) in items.iter().enumerate() {
            self.put(format!("{prefix}{i}"), item)?;
        }
        Ok(())
    }

    /// The states of the sections [`StateSections::put_indexed`] wrote, in index order; a
    /// gap (`virtio.2` without `virtio.1`) names the missing section.
    pub fn indexed<T: DeserializeOwned>(&self, prefix: &str) -> Result<Vec<T>, StateError> {
        let count = self
            .sections
            .iter()
            .filter(|(n, _)| is_indexed(n, prefix))
            .count();
        (0..count)
            .map(|i| self.get(&format!("{prefix}{i}")))
            .collect()
    }

    /// The state in `section`, if there is one.
    pub fn optional<T: DeserializeOwned>(&self, section: &str) -> Result<Option<T>, StateError> {
        let Some((_, bytes)) = self.sections.iter().find(|(n, _)| n == section) else {
            return Ok(None);
        };
        decode_whole(bytes)
            .map(Some)
            .map_err(|source| StateError::Unreadable {
                section: section.to_string(),
                source,
            })
    }

    /// The state in `section`, which must be there.
    pub fn get<T: DeserializeOwned>(&self, section: &str) -> Result<T, StateError> {
        self.optional(section)?
            .ok_or_else(|| StateError::Missing(section.to_string()))
    }

    /// Refuses a section whose name `known` does not accept (so a state written by another
    /// machine kind, or a section this wio would silently drop, is an error).
    pub fn check_known(&self, known: impl Fn(&str) -> bool) -> Result<(), StateError> {
        match self.sections.iter().find(|(n, _)| !known(n)) {
            Some((n, _)) => Err(StateError::Unknown(n.clone())),
            None => Ok(()),
        }
    }
}

/// Decodes `bytes` as one `T` that uses them all (postcard itself ignores bytes after the
/// value: here they are an error, so a damaged section cannot pass as a shorter one).
pub fn decode_whole<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, postcard::Error> {
    match postcard::take_from_bytes(bytes)? {
        (value, []) => Ok(value),
        _ => Err(postcard::Error::DeserializeBadEncoding),
    }
}

/// The component of a restore that cannot fail.
pub fn infallible<T>(restored: Result<T, std::convert::Infallible>) -> T {
    match restored {
        Ok(value) => value,
        Err(never) => match never {},
    }
}

/// Restores a component from `section`'s state, naming the section when it is refused.
pub fn restore<P: Persist>(
    sections: &StateSections,
    section: &str,
    args: P::Args<'_>,
) -> Result<P, StateError> {
    let state: P::State = sections.get(section)?;
    P::restore(args, &state).map_err(|e| StateError::refused(section, e))
}

/// Restores a component from `section`'s state when the snapshot has that section (a
/// component the machine may lack: a board, a port).
pub fn restore_optional<P: Persist>(
    sections: &StateSections,
    section: &str,
    args: P::Args<'_>,
) -> Result<Option<P>, StateError> {
    match sections.optional::<P::State>(section)? {
        Some(state) => P::restore(args, &state)
            .map(Some)
            .map_err(|e| StateError::refused(section, e)),
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A register the test restores: values above 7 are refused.
    #[derive(Debug, PartialEq)]
    struct Reg(u8);

    #[derive(Debug, thiserror::Error)]
    #[error("register value {0} out of range")]
    struct Bad(u8);

    impl Persist for Reg {
        type State = u8;
        type Args<'a> = ();
        type Error = Bad;
        fn save(&self) -> u8 {
            self.0
        }
        fn restore(_: (), s: &u8) -> Result<Reg, Bad> {
            if *s > 7 {
                return Err(Bad(*s));
            }
            Ok(Reg(*s))
        }
    }

    #[test]
    fn sections_name_what_is_missing_unreadable_or_refused() {
        let mut s = StateSections::default();
        s.save("reg", &Reg(5)).unwrap();
        s.save("big", &Reg(9)).unwrap();
        s.put("text", &"hello").unwrap();
        assert_eq!(restore::<Reg>(&s, "reg", ()).unwrap(), Reg(5));
        let msg = |e: StateError| e.to_string();
        assert_eq!(
            msg(restore::<Reg>(&s, "big", ()).unwrap_err()),
            "has a `big` section this machine refuses: register value 9 out of range"
        );
        assert!(msg(restore::<Reg>(&s, "none", ()).unwrap_err()).contains("no `none` section"));
        assert!(msg(s.get::<(u64, u64, u64)>("reg").unwrap_err()).contains("unreadable `reg`"));
        assert_eq!(s.optional::<u8>("none").unwrap(), None);
        assert!(msg(s.check_known(|n| n != "text").unwrap_err()).contains("`text`"));
        assert!(s.check_known(|_| true).is_ok());
    }

    #[test]
    fn indexed_sections_come_back_in_order_and_a_gap_is_named() {
        let mut s = StateSections::default();
        s.put_indexed("slot.", &[10u8, 11, 12]).unwrap();
        assert_eq!(s.indexed::<u8>("slot.").unwrap(), [10, 11, 12]);
        assert!(s.indexed::<u8>("other.").unwrap().is_empty());
        assert!(is_indexed("slot.15", "slot.") && !is_indexed("slot.16", "slot."));
        let mut gap = StateSections::default();
        gap.put("slot.0", &1u8).unwrap();
        gap.put("slot.2", &3u8).unwrap();
        let e = gap.indexed::<u8>("slot.").unwrap_err().to_string();
        assert!(e.contains("no `slot.1` section"), "{e}");
    }
}
