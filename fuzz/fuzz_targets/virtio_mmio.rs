//! A hostile virtio driver: the fuzzer's bytes are guest RAM (descriptor tables, rings,
//! buffers, anywhere) and a script of register writes, reads, queue notifications and RAM
//! pokes against one device (blk, net, rng or console) behind its virtio-mmio window.
//! Every request the device takes is completed at once, every timer fired.
//!
//! Invariants: no panic; nothing outside guest RAM is ever touched (vm-memory checks every
//! access: a descriptor pointing outside RAM must be refused, never followed); a device
//! the driver misused says so through DEVICE_NEEDS_RESET and takes no more requests; the
//! base disk image is never modified; the transport's state survives a save/load round
//! trip unchanged.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use vm_memory::{Bytes, GuestAddress, GuestMemoryMmap};
use wio_scheduler::RunSeed;
use wio_virtio_devices::mmio::{reg, status};
use wio_virtio_devices::{Block, Console, Disk, GuestMem, Link, MmioTransport, Net, Rng};

/// Guest RAM: 64 KiB at 0.
const RAM: u64 = 0x1_0000;
/// The base disk image: 64 KiB of a pattern, and its bytes to compare with.
static BASE: OnceLock<(std::path::PathBuf, Vec<u8>)> = OnceLock::new();

fn base() -> &'static (std::path::PathBuf, Vec<u8>) {
    BASE.get_or_init(|| {
        let bytes: Vec<u8> = (0..0x1_0000u32).map(|i| (i * 7 + 3) as u8).collect();
        let path = std::env::temp_dir().join(format!("wio-fuzz-disk-{}.img", std::process::id()));
        std::fs::write(&path, &bytes).expect("write the base image");
        (path, bytes)
    })
}

fn device(kind: u8) -> MmioTransport {
    let seed = RunSeed(7);
    MmioTransport::new(match kind % 4 {
        0 => Box::new(Block::new(
            Disk::open(&base().0).expect("open the base image"),
            seed,
            "virtio-blk",
            1_000,
        )),
        1 => Box::new(Net::new(seed, "virtio-net", Link::default(), None)),
        2 => Box::new(Rng::new(seed, "virtio-rng", 1_000)),
        _ => Box::new(Console::new(seed, "virtio-console")),
    })
}

fn w(t: &mut MmioTransport, mem: &GuestMem, off: u64, v: u32) -> Option<usize> {
    t.write(off, &v.to_le_bytes(), mem)
}

/// Descriptor chains the devices took, over the whole fuzzing run (printed every 2^20).
static CHAINS: AtomicU64 = AtomicU64::new(0);

/// Serves a notification or timer: takes and completes everything the device has.
fn serve(t: &mut MmioTransport, mem: &GuestMem, queue: Option<usize>, now: &mut u64) {
    if let Some(q) = queue {
        let pending = t.submit(q, mem);
        let n = pending.len() as u64;
        let before = CHAINS.fetch_add(n, Ordering::Relaxed);
        if (before + n) >> 20 != before >> 20 {
            eprintln!("virtio_mmio: {} descriptor chains taken", before + n);
        }
        for p in pending {
            *now += p.delay_ns.min(1_000_000);
            t.complete(q, &p.request, mem, *now);
        }
    }
    for (at, token) in t.take_timers() {
        *now = (*now).max(at);
        t.fire_timer(token, mem, *now);
    }
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 4 {
        return;
    }
    let mem =
        GuestMemoryMmap::<()>::from_ranges(&[(GuestAddress(0), RAM as usize)]).expect("guest RAM");
    // The first half (at most 16 KiB) is RAM from address 0: rings and buffers.
    let split = (data.len() / 2).min(0x4000);
    mem.write_slice(&data[1..split.max(1)], GuestAddress(0))
        .expect("in RAM");
    let mut t = device(data[0]);
    let mut now = 0u64;
    let mut ops = data[split..].iter().copied();
    let mut next = || ops.next();
    // A well-behaved start most of the time (so the fuzzer reaches the queues), with the
    // fuzzer's choice of queue sizes and ring addresses.
    if data[0] & 0x80 == 0 {
        w(
            &mut t,
            &mem,
            reg::STATUS,
            status::ACKNOWLEDGE | status::DRIVER,
        );
        w(&mut t, &mem, reg::DRIVER_FEATURES_SEL, 1);
        w(&mut t, &mem, reg::DRIVER_FEATURES, 1); // VIRTIO_F_VERSION_1
        w(
            &mut t,
            &mem,
            reg::STATUS,
            status::ACKNOWLEDGE | status::DRIVER | status::FEATURES_OK,
        );
        for q in 0..4u32 {
            let size = u32::from(next().unwrap_or(8)) % 33;
            let at = u64::from(next().unwrap_or(0)) << 8;
            w(&mut t, &mem, reg::QUEUE_SEL, q);
            w(&mut t, &mem, reg::QUEUE_NUM, size);
            w(&mut t, &mem, reg::QUEUE_DESC_LOW, at as u32);
            w(&mut t, &mem, reg::QUEUE_DRIVER_LOW, (at + 0x400) as u32);
            w(&mut t, &mem, reg::QUEUE_DEVICE_LOW, (at + 0x800) as u32);
            w(&mut t, &mem, reg::QUEUE_READY, 1);
        }
        w(
            &mut t,
            &mem,
            reg::STATUS,
            status::ACKNOWLEDGE | status::DRIVER | status::FEATURES_OK | status::DRIVER_OK,
        );
    }
    let word = |n: &mut dyn FnMut() -> Option<u8>| -> u32 {
        u32::from_le_bytes([
            n().unwrap_or(0),
            n().unwrap_or(0),
            n().unwrap_or(0),
            n().unwrap_or(0),
        ])
    };
    let mut steps = 0;
    while let Some(op) = next() {
        steps += 1;
        if steps > 512 {
            break;
        }
        match op % 6 {
            // Any register, any value (config space included).
            0 => {
                let off = u64::from(next().unwrap_or(0)) * 4 % 0x200;
                let v = word(&mut next);
                let q = w(&mut t, &mem, off, v);
                serve(&mut t, &mem, q, &mut now);
            }
            1 => {
                let off = u64::from(next().unwrap_or(0)) % 0x200;
                let len = [1usize, 2, 4, 8][usize::from(next().unwrap_or(0) % 4)];
                let mut buf = [0u8; 8];
                t.read(off, &mut buf[..len]);
            }
            // Notify a queue (the common case).
            2 | 3 => {
                let q = u32::from(next().unwrap_or(0) % 4);
                let n = w(&mut t, &mem, reg::QUEUE_NOTIFY, q);
                serve(&mut t, &mem, n, &mut now);
            }
            // Poke RAM: rings move under the device's feet.
            4 => {
                let at = u64::from(word(&mut next)) % RAM;
                let v = next().unwrap_or(0);
                let _ = mem.write_obj(v, GuestAddress(at));
            }
            _ => serve(&mut t, &mem, None, &mut now),
        }
        // A device that asked for a reset takes nothing until it gets one.
        if t.status() & status::DEVICE_NEEDS_RESET != 0 {
            assert!(
                t.submit(0, &mem).is_empty(),
                "a broken device took a request"
            );
        }
    }
    // Its state survives a round trip.
    if let Ok(saved) = t.save_state() {
        let mut again = device(data[0]);
        if again.load_state(&saved, None).is_ok() {
            // Compared as encoded (what a snapshot keeps).
            let bytes = |s: &wio_virtio_devices::TransportState| {
                postcard::to_stdvec(s).expect("a device state encodes")
            };
            assert_eq!(
                again.save_state().ok().as_ref().map(bytes),
                Some(bytes(&saved)),
                "state round trip"
            );
        }
    }
    // The base image is untouched (the device writes to its overlay only).
    let (path, bytes) = base();
    if data[0] % 4 == 0 {
        assert!(
            std::fs::read(path).expect("read the base image") == *bytes,
            "the base disk image was modified"
        );
    }
});
