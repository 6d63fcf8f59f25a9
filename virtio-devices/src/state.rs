//! Device state in snapshots, as typed values: each device saves a [`DeviceState`] (its
//! own state struct in the variant of its kind) and loads only a state of its own kind,
//! refusing any other with [`DeviceError::StateKind`]. The machine serialises these
//! values (with postcard, a compact versionless serde format) inside its snapshot file,
//! which carries the version and checksum; the serde helpers below keep byte fields
//! compact in that encoding.

pub use crate::block::BlockState;
pub use crate::console::ConsoleState;
use crate::error::DeviceError;
pub use crate::net::NetState;
pub use crate::rng::RngState;

/// The saved state of one virtio device, of whichever kind it is: what
/// [`VirtioDevice::save_state`](crate::VirtioDevice::save_state) returns and
/// [`VirtioDevice::load_state`](crate::VirtioDevice::load_state) takes.
///
/// Typed rather than opaque bytes so that a snapshot is encoded once, as a whole, and so
/// that the machine can reach into a state where it must (a block device's disk chunks,
/// see [`crate::TransportState::take_block_overlay`]) without decoding and re-encoding it.
/// The larger states are boxed to keep the enum small.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub enum DeviceState {
    /// A virtio-rng device ([`crate::Rng`]).
    Rng(RngState),
    /// A virtio-net device ([`crate::Net`]).
    Net(Box<NetState>),
    /// A virtio-console device ([`crate::Console`]).
    Console(Box<ConsoleState>),
    /// A virtio-blk device ([`crate::Block`]).
    Block(Box<BlockState>),
}

impl DeviceState {
    /// The kind of device the state was saved from, as the devices name themselves in
    /// errors: "virtio-rng", "virtio-net", "virtio-console" or "virtio-blk".
    pub fn kind(&self) -> &'static str {
        match self {
            DeviceState::Rng(_) => crate::rng::DEVICE,
            DeviceState::Net(_) => crate::net::DEVICE,
            DeviceState::Console(_) => crate::console::DEVICE,
            DeviceState::Block(_) => crate::block::DEVICE,
        }
    }

    /// The error for loading this state into a device of kind `here`.
    pub(crate) fn wrong_kind(&self, here: &'static str) -> DeviceError {
        DeviceError::StateKind {
            here,
            saved: self.kind(),
        }
    }
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
    use super::*;
    use crate::VirtioDevice;
    use wio_scheduler::RunSeed;

    /// Each device's state names its kind, and encodes as the variant's index followed by
    /// the device's own state struct exactly as it encodes alone (the box adds nothing).
    #[test]
    fn device_states_name_their_kind_and_encode_their_struct() {
        let dir = std::env::temp_dir().join(format!("wio-state-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let image = dir.join("disk.img");
        std::fs::write(&image, vec![0u8; 8192]).unwrap();
        let devices: Vec<Box<dyn VirtioDevice>> = vec![
            Box::new(crate::Rng::new(RunSeed(1), "rng", 1)),
            Box::new(crate::Net::new(
                RunSeed(1),
                "net",
                crate::Link::default(),
                None,
            )),
            Box::new(crate::Console::new(RunSeed(1), "console")),
            Box::new(crate::Block::new(
                crate::Disk::open(&image).unwrap(),
                RunSeed(1),
                "blk",
                1,
            )),
        ];
        let mut kinds = Vec::new();
        for (index, device) in devices.iter().enumerate() {
            let state = device.save_state().unwrap();
            let inner = match &state {
                DeviceState::Rng(s) => postcard::to_stdvec(s),
                DeviceState::Net(s) => postcard::to_stdvec(&**s),
                DeviceState::Console(s) => postcard::to_stdvec(&**s),
                DeviceState::Block(s) => postcard::to_stdvec(&**s),
            }
            .unwrap();
            let mut want = vec![index as u8];
            want.extend_from_slice(&inner);
            let encoded = postcard::to_stdvec(&state).unwrap();
            assert_eq!(encoded, want);
            let decoded: DeviceState = postcard::from_bytes(&encoded).unwrap();
            assert_eq!(decoded.kind(), state.kind());
            assert_eq!(postcard::to_stdvec(&decoded).unwrap(), encoded);
            kinds.push(state.kind());
        }
        assert_eq!(
            kinds,
            ["virtio-rng", "virtio-net", "virtio-console", "virtio-blk"]
        );
    }

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
