//! Device state in snapshots: each device encodes its own state with postcard
//! (a compact, versionless serde format; the snapshot file around it carries
//! the version and checksum) and refuses bytes it cannot decode.

use crate::error::DeviceError;
use serde::de::DeserializeOwned;
use serde::Serialize;

/// Encodes a device's saved state.
pub fn encode<T: Serialize>(state: &T) -> Vec<u8> {
    // Encoding plain owned data into a Vec cannot fail.
    postcard::to_stdvec(state).expect("device state encodes")
}

/// Decodes a device's saved state; `what` names the device in the error.
pub fn decode<T: DeserializeOwned>(bytes: &[u8], what: &'static str) -> Result<T, DeviceError> {
    postcard::from_bytes(bytes).map_err(|error| DeviceError::StateDecode { what, error })
}

/// serde for `vm_memory::GuestAddress` (a guest-physical address as a u64).
pub mod guest_address {
    use serde::{Deserialize, Deserializer, Serializer};
    use vm_memory::GuestAddress;

    /// Writes the address as its u64.
    pub fn serialize<S: Serializer>(a: &GuestAddress, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(a.0)
    }

    /// Reads the address from its u64.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<GuestAddress, D::Error> {
        u64::deserialize(d).map(GuestAddress)
    }
}
