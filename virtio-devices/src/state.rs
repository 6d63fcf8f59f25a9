//! Device state in snapshots, as typed values: [`save`] gives a device's [`DeviceState`]
//! (its own state struct in the variant of its kind) and [`load`] loads only a state of the
//! device's own kind, refusing any other with [`DeviceError::StateKind`]. This module is the
//! one registry of the devices that can be snapshotted: each device has its own
//! `save_state`/`load_state` over its own state type and knows nothing of the others; a new
//! device adds a variant and an arm here. The machine serialises these values (with
//! postcard) inside its snapshot file, which carries the version and checksums.

pub use crate::block::BlockState;
pub use crate::console::{ComposerPort, ConsoleState};
use crate::device::VirtioDevice;
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
    /// A virtio-console device with the test composer's port
    /// ([`crate::Console::with_composer`]); a variant of its own, added last, so that the
    /// encoding of the others is unchanged.
    ComposerConsole(Box<ConsoleState>, Box<ComposerPort>),
}

impl DeviceState {
    /// The kind of device the state was saved from, as the devices name themselves in
    /// errors: "virtio-rng", "virtio-net", "virtio-console" or "virtio-blk".
    pub fn kind(&self) -> &'static str {
        match self {
            DeviceState::Rng(_) => crate::rng::DEVICE,
            DeviceState::Net(_) => crate::net::DEVICE,
            DeviceState::Console(_) | DeviceState::ComposerConsole(..) => crate::console::DEVICE,
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

/// The kind of device of virtio device type `device_type`, as [`DeviceState::kind`] names it.
fn kind_of(device_type: u32) -> &'static str {
    match device_type {
        crate::rng::DEVICE_ID => crate::rng::DEVICE,
        crate::net::DEVICE_ID => crate::net::DEVICE,
        crate::console::DEVICE_ID => crate::console::DEVICE,
        crate::block::DEVICE_ID => crate::block::DEVICE,
        _ => "virtio",
    }
}

/// The state of `device` for a snapshot: everything that shapes what it does next
/// (stream positions, requests it holds, its disk overlay, its network's history). A net
/// device whose peer outgrew its history cannot be saved ([`DeviceError::HistoryOverflow`]),
/// nor can a device of a kind this registry does not know.
pub fn save(device: &dyn VirtioDevice) -> Result<DeviceState, DeviceError> {
    let any = device.as_any();
    if let Some(d) = any.downcast_ref::<crate::rng::Rng>() {
        return d.save_state().map(DeviceState::Rng);
    }
    if let Some(d) = any.downcast_ref::<crate::net::Net>() {
        return d.save_state().map(|s| DeviceState::Net(Box::new(s)));
    }
    if let Some(d) = any.downcast_ref::<crate::console::Console>() {
        let s = d.save_state()?;
        return Ok(match d.save_composer() {
            Some(c) => DeviceState::ComposerConsole(Box::new(s), Box::new(c)),
            None => DeviceState::Console(Box::new(s)),
        });
    }
    if let Some(d) = any.downcast_ref::<crate::block::Block>() {
        return d.save_state().map(|s| DeviceState::Block(Box::new(s)));
    }
    Err(DeviceError::NotSnapshottable {
        device_type: device.device_type(),
    })
}

/// Loads `state` into `device`, built with the same configuration as the saved one. With
/// `reseed`, the device's random streams are re-keyed from that seed (a branch with another
/// seed) instead of resuming. A state of another kind of device is refused
/// ([`DeviceError::StateKind`]), as is one beyond the device's bounds or one whose disk does
/// not fit; the state is borrowed (a snapshot may be restored many times), so the device
/// copies what it keeps. The checks come before any change: on an error the device is as
/// it was.
pub fn load(
    device: &mut dyn VirtioDevice,
    state: &DeviceState,
    reseed: Option<wio_scheduler::RunSeed>,
) -> Result<(), DeviceError> {
    let here = kind_of(device.device_type());
    let wrong = || state.wrong_kind(here);
    let any = device.as_any_mut();
    match state {
        DeviceState::Rng(s) => any
            .downcast_mut::<crate::rng::Rng>()
            .ok_or_else(wrong)?
            .load_state(s, reseed),
        DeviceState::Net(s) => any
            .downcast_mut::<crate::net::Net>()
            .ok_or_else(wrong)?
            .load_state(s, reseed),
        DeviceState::Console(s) => any
            .downcast_mut::<crate::console::Console>()
            .ok_or_else(wrong)?
            .load_state(s, None, reseed),
        DeviceState::ComposerConsole(s, c) => any
            .downcast_mut::<crate::console::Console>()
            .ok_or_else(wrong)?
            .load_state(s, Some(c), reseed),
        DeviceState::Block(s) => any
            .downcast_mut::<crate::block::Block>()
            .ok_or_else(wrong)?
            .load_state(s, reseed),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
            let state = save(device.as_ref()).unwrap();
            let inner = match &state {
                DeviceState::Rng(s) => postcard::to_stdvec(s),
                DeviceState::Net(s) => postcard::to_stdvec(&**s),
                DeviceState::Console(s) => postcard::to_stdvec(&**s),
                DeviceState::Block(s) => postcard::to_stdvec(&**s),
                DeviceState::ComposerConsole(..) => unreachable!("no composer console here"),
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
        // Every device loads its own kind's state and refuses every other kind's.
        let mut devices = devices;
        let states: Vec<DeviceState> = devices.iter().map(|d| save(d.as_ref()).unwrap()).collect();
        for (i, device) in devices.iter_mut().enumerate() {
            for (j, state) in states.iter().enumerate() {
                let r = load(device.as_mut(), state, None);
                if i == j {
                    assert!(r.is_ok(), "{}: {r:?}", kinds[i]);
                } else {
                    assert!(
                        matches!(
                            r,
                            Err(DeviceError::StateKind { here, saved }) if here == kinds[i] && saved == kinds[j]
                        ),
                        "{} given a {} state: {r:?}",
                        kinds[i],
                        kinds[j]
                    );
                }
            }
        }
        std::fs::remove_dir_all(&dir).ok();
    }
}
