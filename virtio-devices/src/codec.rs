//! serde helpers for device state in snapshots: guest addresses as their u64, and byte
//! fields as postcard byte strings (one copy instead of byte by byte). Kept apart from
//! [`crate::state`] so every device can use them without depending on the enum of all
//! devices' states.

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

/// serde for lists of byte strings (frames, messages) as postcard byte strings: the same
/// encoding as a sequence of `u8`, written and read in one copy instead of byte by byte
/// (see `serde_bytes`; old snapshots read unchanged).
pub mod byte_lists {
    use serde::{Deserialize, Deserializer, Serializer};
    use serde_bytes::{ByteBuf, Bytes};

    /// Writes each list entry as a byte string.
    pub fn serialize<S: Serializer>(list: &[Vec<u8>], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(list.iter().map(|v| Bytes::new(v)))
    }

    /// Reads a list of byte strings.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Vec<u8>>, D::Error> {
        Vec::<ByteBuf>::deserialize(d).map(|l| l.into_iter().map(ByteBuf::into_vec).collect())
    }
}

/// serde for indexed byte strings (disk chunks by index), as [`byte_lists`] does.
pub mod indexed_bytes {
    use serde::{Deserialize, Deserializer, Serializer};
    use serde_bytes::{ByteBuf, Bytes};

    /// Writes each (index, bytes) pair with the bytes as a byte string.
    pub fn serialize<S: Serializer>(list: &[(u64, Vec<u8>)], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(list.iter().map(|(k, v)| (k, Bytes::new(v))))
    }

    /// Reads (index, byte string) pairs.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<(u64, Vec<u8>)>, D::Error> {
        Vec::<(u64, ByteBuf)>::deserialize(d)
            .map(|l| l.into_iter().map(|(k, v)| (k, v.into_vec())).collect())
    }
}

#[cfg(test)]
mod tests {

    /// A byte field written as a sequence of `u8` (as before).
    #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
    struct Plain {
        one: Vec<u8>,
        many: Vec<Vec<u8>>,
        chunks: Vec<(u64, Vec<u8>)>,
    }

    /// The same fields written as byte strings.
    #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
    struct Fast {
        #[serde(with = "serde_bytes")]
        one: Vec<u8>,
        #[serde(with = "super::byte_lists")]
        many: Vec<Vec<u8>>,
        #[serde(with = "super::indexed_bytes")]
        chunks: Vec<(u64, Vec<u8>)>,
    }

    /// Snapshots written before byte strings read the same, and the other way round.
    #[test]
    fn byte_strings_encode_as_byte_sequences() {
        let bytes: Vec<u8> = (0..300u32).map(|i| (i * 13) as u8).collect();
        let plain = Plain {
            one: bytes.clone(),
            many: vec![vec![], bytes.clone(), vec![0xff; 200]],
            chunks: vec![(3, bytes.clone()), (1 << 40, vec![1])],
        };
        let fast = Fast {
            one: plain.one.clone(),
            many: plain.many.clone(),
            chunks: plain.chunks.clone(),
        };
        let a = postcard::to_stdvec(&plain).unwrap();
        assert_eq!(a, postcard::to_stdvec(&fast).unwrap());
        assert_eq!(postcard::from_bytes::<Fast>(&a).unwrap(), fast);
    }
}
