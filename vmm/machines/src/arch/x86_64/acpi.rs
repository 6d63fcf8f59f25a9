//! ACPI tables of the x86-64 machine: how a Linux kernel that takes no
//! `virtio_mmio.device=` argument (Debian's amd64 kernel is built without
//! `CONFIG_VIRTIO_MMIO_CMDLINE_DEVICES`) finds wio's virtio-mmio slots, and how it powers
//! the machine off (S5 through the PM1a control register: [`acpi_pm`]).
//!
//! wio's PC has an 8259 pair and an 8254 but no local APIC or I/O APIC, so the tables
//! describe a legacy machine: a full FADT (in hardware-reduced mode x86 Linux switches the
//! 8259 and the 8254 off) with PM1a event and control blocks, no PM timer (it would be a
//! second clock, read without exits), no GPE blocks, SMI_CMD 0 (the machine is always in
//! ACPI mode) and no MADT (Linux keeps the PIC interrupt model); a DSDT with one
//! `LNRO0005` (virtio-mmio) device per slot, its window and its PIC line, and `\_S5`.
//!
//! The DSDT also announces the VM generation ID (`devices::vmgenid`): a `VMGENCTR` device
//! whose `ADDR` package names the 16 bytes at [`VMGENID_ADDR`], and a Generic Event Device
//! (`ACPI0013`) on PIC line [`VMGENID_IRQ`] whose `_EVT` method notifies it (0x80). A
//! restore with another seed writes a new ID there and raises the line; Linux's `vmgenid`
//! driver then reads the new ID and reseeds its CRNG. A GED rather than a GPE: it needs no
//! GPE register block, only an interrupt line (what hardware-reduced machines such as
//! Firecracker's use too), and Linux's GED driver is built into every ACPI kernel.
//! Everything is a function of the slot list: the bytes are the same on every run.

use super::layout::{ACPI_START, VMGENID_ADDR};
use crate::devices::legacy::acpi_pm;

/// Where the RSDP is (Linux also finds it by scanning 0xE0000-0xFFFFF; boot_params
/// carries the address too).
pub const RSDP_ADDR: u64 = ACPI_START;
const XSDT_ADDR: u64 = ACPI_START + 0x40;
/// The FACS must be 64-byte aligned.
const FACS_ADDR: u64 = ACPI_START + 0x80;
const FADT_ADDR: u64 = ACPI_START + 0x100;
const DSDT_ADDR: u64 = ACPI_START + 0x240;

/// The SCI's PIC line (nothing raises it: the machine has no fixed or GPE events).
const SCI_IRQ: u16 = 9;

/// The PIC line of the Generic Event Device that tells the kernel the VM generation ID
/// changed (edge-triggered, active high; free on wio's PC: 0 PIT, 1 i8042, 4 COM1, 5-7
/// virtio, 8 RTC, 9 SCI).
pub const VMGENID_IRQ: u8 = 10;

/// The ACPI notification value for "the device's state changed" (ACPI 6, 5.6.6: values
/// from 0x80 are device-specific; Linux's `vmgenid` driver reacts to any).
const NOTIFY_CHANGED: u8 = 0x80;

/// FADT flags: WBINVD works; the power and sleep buttons are not fixed-feature buttons.
const FADT_FLAGS: u32 = 1 | (1 << 4) | (1 << 5);
/// IAPC_BOOT_ARCH: legacy devices (RTC, COM1), no 8042 to probe (the reset line at 0x64
/// still works), no VGA, no MSI, no PCIe ASPM.
const IAPC_BOOT_ARCH: u16 = 1 | (1 << 2) | (1 << 3) | (1 << 4);

/// A virtio-mmio slot as the DSDT describes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MmioDevice {
    /// Guest-physical base of its register window.
    pub base: u32,
    /// Size of the window.
    pub size: u32,
    /// Its PIC line (edge-triggered, active high).
    pub irq: u32,
}

/// The tables as (guest-physical address, bytes), all inside
/// [`ACPI_START`]..[`VMGENID_ADDR`] (the ID's page follows them).
pub fn tables(devices: &[MmioDevice]) -> Vec<(u64, Vec<u8>)> {
    let dsdt = dsdt(devices);
    assert!(
        DSDT_ADDR + dsdt.len() as u64 <= VMGENID_ADDR,
        "DSDT of {} slots does not fit below the VM generation ID",
        devices.len()
    );
    vec![
        (RSDP_ADDR, rsdp(XSDT_ADDR)),
        (XSDT_ADDR, xsdt(&[FADT_ADDR])),
        (FACS_ADDR, facs()),
        (FADT_ADDR, fadt(FACS_ADDR, DSDT_ADDR)),
        (DSDT_ADDR, dsdt),
    ]
}

fn put_u16(t: &mut [u8], at: usize, v: u16) {
    t[at..at + 2].copy_from_slice(&v.to_le_bytes());
}

fn put_u32(t: &mut [u8], at: usize, v: u32) {
    t[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

fn put_u64(t: &mut [u8], at: usize, v: u64) {
    t[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

/// The byte that makes `bytes` sum to zero (with it in place of a zero).
fn checksum(bytes: &[u8]) -> u8 {
    0u8.wrapping_sub(bytes.iter().fold(0u8, |a, b| a.wrapping_add(*b)))
}

/// A system description table: the 36-byte header, `body`, and the checksum.
fn sdt(signature: &[u8; 4], revision: u8, body: &[u8]) -> Vec<u8> {
    let mut t = vec![0u8; 36];
    t[0..4].copy_from_slice(signature);
    put_u32(&mut t, 4, (36 + body.len()) as u32);
    t[8] = revision;
    t[10..16].copy_from_slice(b"WIO   ");
    t[16..24].copy_from_slice(b"WIOVM   ");
    put_u32(&mut t, 24, 1); // OEM revision
    t[28..32].copy_from_slice(b"WIO ");
    put_u32(&mut t, 32, 1); // creator revision
    t.extend_from_slice(body);
    t[9] = checksum(&t);
    t
}

/// ACPI 2.0 RSDP pointing at the XSDT.
fn rsdp(xsdt: u64) -> Vec<u8> {
    let mut t = vec![0u8; 36];
    t[0..8].copy_from_slice(b"RSD PTR ");
    t[9..15].copy_from_slice(b"WIO   ");
    t[15] = 2; // revision: ACPI 2.0+, XSDT
    put_u32(&mut t, 20, 36);
    put_u64(&mut t, 24, xsdt);
    t[8] = checksum(&t[..20]);
    t[32] = checksum(&t);
    t
}

fn xsdt(entries: &[u64]) -> Vec<u8> {
    let body: Vec<u8> = entries.iter().flat_map(|e| e.to_le_bytes()).collect();
    sdt(b"XSDT", 1, &body)
}

/// The FACS (no checksum; nothing in it is used: no waking vector, no global lock).
fn facs() -> Vec<u8> {
    let mut t = vec![0u8; 64];
    t[0..4].copy_from_slice(b"FACS");
    put_u32(&mut t, 4, 64);
    t[32] = 2; // version
    t
}

/// FADT revision 6 (276 bytes), legacy (not hardware-reduced).
fn fadt(facs: u64, dsdt: u64) -> Vec<u8> {
    let mut b = vec![0u8; 276 - 36];
    // Offsets below are the specification's (from the table's start) minus the header.
    let at = |off: usize| off - 36;
    put_u32(&mut b, at(36), facs as u32); // FIRMWARE_CTRL
    put_u32(&mut b, at(40), dsdt as u32); // DSDT
    put_u16(&mut b, at(46), SCI_IRQ); // SCI_INT
    put_u32(&mut b, at(56), u32::from(acpi_pm::EVT_PORT)); // PM1a_EVT_BLK
    put_u32(&mut b, at(64), u32::from(acpi_pm::CNT_PORT)); // PM1a_CNT_BLK
    b[at(88)] = 4; // PM1_EVT_LEN
    b[at(89)] = 2; // PM1_CNT_LEN
    put_u16(&mut b, at(109), IAPC_BOOT_ARCH);
    put_u32(&mut b, at(112), FADT_FLAGS);
    put_u64(&mut b, at(140), dsdt); // X_DSDT
    sdt(b"FACP", 6, &b)
}

// ------------------------------------------------------------------ AML (the DSDT's body)

/// PkgLength: the length of what follows the opcode, counting its own encoding bytes.
fn pkg_length(content: usize) -> Vec<u8> {
    if content + 1 < 0x40 {
        return vec![(content + 1) as u8];
    }
    for extra in 1..=3usize {
        let total = content + 1 + extra;
        if total < 1 << (4 + 8 * extra) {
            let mut v = vec![((extra as u8) << 6) | (total & 0xf) as u8];
            for i in 0..extra {
                v.push((total >> (4 + 8 * i)) as u8);
            }
            return v;
        }
    }
    unreachable!("AML package of {content} bytes")
}

/// A name segment: four characters, `_`-padded.
fn name_seg(name: &str) -> [u8; 4] {
    let mut s = [b'_'; 4];
    for (d, c) in s.iter_mut().zip(name.bytes()) {
        *d = c;
    }
    s
}

fn aml_integer(v: u64) -> Vec<u8> {
    match v {
        0 => vec![0x00],
        1 => vec![0x01],
        2..=0xff => vec![0x0a, v as u8],
        0x100..=0xffff => [vec![0x0b], (v as u16).to_le_bytes().to_vec()].concat(),
        0x1_0000..=0xffff_ffff => [vec![0x0c], (v as u32).to_le_bytes().to_vec()].concat(),
        _ => [vec![0x0e], v.to_le_bytes().to_vec()].concat(),
    }
}

fn aml_string(s: &str) -> Vec<u8> {
    [vec![0x0d], s.as_bytes().to_vec(), vec![0]].concat()
}

/// `Name(NAME, value)`.
fn aml_name(name: &str, value: Vec<u8>) -> Vec<u8> {
    [vec![0x08], name_seg(name).to_vec(), value].concat()
}

/// `Buffer() { bytes }`.
fn aml_buffer(bytes: &[u8]) -> Vec<u8> {
    let size = aml_integer(bytes.len() as u64);
    let content = size.len() + bytes.len();
    [vec![0x11], pkg_length(content), size, bytes.to_vec()].concat()
}

/// `Package() { elements }` (fewer than 256).
fn aml_package(elements: &[Vec<u8>]) -> Vec<u8> {
    let body: Vec<u8> = elements.concat();
    let content = 1 + body.len();
    [
        vec![0x12],
        pkg_length(content),
        vec![elements.len() as u8],
        body,
    ]
    .concat()
}

/// `Device(NAME) { body }`.
fn aml_device(name: &str, body: &[u8]) -> Vec<u8> {
    let content = 4 + body.len();
    [
        vec![0x5b, 0x82],
        pkg_length(content),
        name_seg(name).to_vec(),
        body.to_vec(),
    ]
    .concat()
}

/// `Scope(\NAME) { body }`.
fn aml_root_scope(name: &str, body: &[u8]) -> Vec<u8> {
    let content = 5 + body.len();
    [
        vec![0x10],
        pkg_length(content),
        vec![b'\\'],
        name_seg(name).to_vec(),
        body.to_vec(),
    ]
    .concat()
}

/// `Interrupt(ResourceConsumer, Edge, ActiveHigh, Exclusive) { irq }`.
fn edge_interrupt(irq: u32) -> Vec<u8> {
    // Extended Interrupt: consumer, edge; one interrupt.
    [vec![0x89, 6, 0, 0b11, 1], irq.to_le_bytes().to_vec()].concat()
}

/// The end tag of a resource template (checksum 0: not checked).
const END_TAG: [u8; 2] = [0x79, 0];

/// `ResourceTemplate() { Memory32Fixed(ReadWrite, base, size)
/// Interrupt(ResourceConsumer, Edge, ActiveHigh, Exclusive) { irq } }`.
fn resources(d: &MmioDevice) -> Vec<u8> {
    let mut r = vec![0x86, 9, 0, 1]; // Memory32Fixed, read-write
    r.extend_from_slice(&d.base.to_le_bytes());
    r.extend_from_slice(&d.size.to_le_bytes());
    r.extend(edge_interrupt(d.irq));
    r.extend_from_slice(&END_TAG);
    r
}

/// `Method(NAME, args) { body }` (not serialized).
fn aml_method(name: &str, args: u8, body: &[u8]) -> Vec<u8> {
    assert!(args < 8, "AML methods take at most 7 arguments");
    let content = 4 + 1 + body.len();
    [
        vec![0x14],
        pkg_length(content),
        name_seg(name).to_vec(),
        vec![args],
        body.to_vec(),
    ]
    .concat()
}

/// `Notify(\SCOPE.NAME, value)`.
fn aml_notify_root(scope: &str, name: &str, value: u8) -> Vec<u8> {
    [
        vec![0x86, b'\\', 0x2e], // NotifyOp, root, DualNamePrefix
        name_seg(scope).to_vec(),
        name_seg(name).to_vec(),
        aml_integer(u64::from(value)),
    ]
    .concat()
}

/// The VM generation ID (`VGEN`: its 16 bytes' address, split in two 32-bit halves as the
/// `ADDR` package of Linux's `vmgenid` driver wants) and the Generic Event Device whose
/// interrupt notifies it.
fn vmgenid_devices() -> Vec<u8> {
    let vgen = [
        aml_name("_HID", aml_string("VMGENCTR")),
        aml_name("_UID", aml_integer(0)),
        aml_name("_DDN", aml_string("VM_Gen_Counter")),
        aml_name(
            "ADDR",
            aml_package(&[
                aml_integer(VMGENID_ADDR & 0xffff_ffff),
                aml_integer(VMGENID_ADDR >> 32),
            ]),
        ),
    ]
    .concat();
    let ged = [
        aml_name("_HID", aml_string("ACPI0013")),
        aml_name("_UID", aml_integer(0)),
        aml_name(
            "_CRS",
            aml_buffer(&[edge_interrupt(u32::from(VMGENID_IRQ)), END_TAG.to_vec()].concat()),
        ),
        // Called with the interrupt's number; the GED has one, so every event is the ID's.
        aml_method("_EVT", 1, &aml_notify_root("_SB", "VGEN", NOTIFY_CHANGED)),
    ]
    .concat();
    [aml_device("VGEN", &vgen), aml_device("GED0", &ged)].concat()
}

fn dsdt(devices: &[MmioDevice]) -> Vec<u8> {
    let mut sb = Vec::new();
    for (i, d) in devices.iter().enumerate() {
        let body = [
            aml_name("_HID", aml_string("LNRO0005")),
            aml_name("_UID", aml_integer(i as u64)),
            aml_name("_CRS", aml_buffer(&resources(d))),
        ]
        .concat();
        sb.extend(aml_device(&format!("VR{i:02}"), &body));
    }
    sb.extend(vmgenid_devices());
    let s5 = u64::from(acpi_pm::S5_SLP_TYP);
    let aml = [
        aml_root_scope("_SB", &sb),
        aml_name(
            "_S5",
            aml_package(&[
                aml_integer(s5),
                aml_integer(s5),
                aml_integer(0),
                aml_integer(0),
            ]),
        ),
    ]
    .concat();
    sdt(b"DSDT", 2, &aml)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slots(n: u32) -> Vec<MmioDevice> {
        (0..n)
            .map(|i| MmioDevice {
                base: 0xd000_0000 + i * 0x1000,
                size: 0x1000,
                irq: 5 + i,
            })
            .collect()
    }

    fn sums_to_zero(b: &[u8]) -> bool {
        b.iter().fold(0u8, |a, x| a.wrapping_add(*x)) == 0
    }

    #[test]
    fn every_table_checks_and_fits_where_it_is_placed() {
        let t = tables(&slots(3));
        let mut end = ACPI_START;
        for (addr, bytes) in &t {
            assert!(*addr >= end, "tables overlap at {addr:#x}");
            end = addr + bytes.len() as u64;
            assert!(end <= VMGENID_ADDR);
            match &bytes[..4] {
                b"RSD " => {
                    assert!(sums_to_zero(&bytes[..20]));
                    assert!(sums_to_zero(bytes));
                }
                b"FACS" => assert_eq!(bytes.len(), 64),
                _ => {
                    assert!(sums_to_zero(bytes), "{:?}", &bytes[..4]);
                    let len = u32::from_le_bytes(bytes[4..8].try_into().unwrap());
                    assert_eq!(len as usize, bytes.len());
                }
            }
        }
        assert_eq!(FACS_ADDR % 64, 0);
        let fadt = &t[3].1;
        assert_eq!(&fadt[..4], b"FACP");
        assert_eq!(fadt.len(), 276);
        assert_eq!(
            u32::from_le_bytes(fadt[112..116].try_into().unwrap()) & (1 << 20),
            0
        );
        assert_eq!(
            u32::from_le_bytes(fadt[76..80].try_into().unwrap()),
            0,
            "no PM timer"
        );
        // The XSDT lists the FADT; the FADT points at the DSDT and the FACS.
        assert_eq!(
            u64::from_le_bytes(t[1].1[36..44].try_into().unwrap()),
            FADT_ADDR
        );
        assert_eq!(
            u64::from_le_bytes(fadt[140..148].try_into().unwrap()),
            DSDT_ADDR
        );
        assert_eq!(
            u32::from_le_bytes(fadt[36..40].try_into().unwrap()) as u64,
            FACS_ADDR
        );
    }

    #[test]
    fn pkg_length_counts_its_own_bytes() {
        assert_eq!(pkg_length(0), vec![1]);
        assert_eq!(pkg_length(62), vec![63]);
        // 63 bytes of content + 2 length bytes = 65 = 0x41: lead 0x41, then 0x04.
        assert_eq!(pkg_length(63), vec![0x41, 0x04]);
        assert_eq!(pkg_length(4093), vec![0x4f, 0xff]);
        assert_eq!(pkg_length(4094), vec![0x81, 0x00, 0x01]);
    }

    #[test]
    fn dsdt_describes_each_slot_once() {
        let d = dsdt(&slots(2));
        let aml = &d[36..];
        let count = |needle: &[u8]| aml.windows(needle.len()).filter(|w| *w == needle).count();
        assert_eq!(count(b"LNRO0005\0"), 2);
        assert_eq!(count(b"VR00"), 1);
        assert_eq!(count(b"VR01"), 1);
        assert_eq!(count(b"_S5_"), 1);
        // Slot 1's window and PIC line are in its resources.
        let mut mem = vec![0x86, 9, 0, 1];
        mem.extend_from_slice(&0xd000_1000u32.to_le_bytes());
        mem.extend_from_slice(&0x1000u32.to_le_bytes());
        assert_eq!(count(&mem), 1);
        assert_eq!(count(&[0x89, 6, 0, 3, 1, 6, 0, 0, 0]), 1);
        // The scope's PkgLength covers exactly the devices: \_SB_ ends where _S5_ begins.
        assert_eq!(aml[0], 0x10);
        let s5 = aml
            .windows(5)
            .position(|w| w == [0x08, b'_', b'S', b'5', b'_'])
            .unwrap();
        let (len, n) = match aml[1] >> 6 {
            0 => (aml[1] as usize, 1),
            k => {
                let mut v = (aml[1] & 0xf) as usize;
                for i in 0..k as usize {
                    v |= (aml[2 + i] as usize) << (4 + 8 * i);
                }
                (v, 1 + k as usize)
            }
        };
        assert!(n >= 1);
        assert_eq!(1 + len, s5);
    }

    #[test]
    fn dsdt_announces_the_vm_generation_id_and_the_event_device_that_notifies_it() {
        let d = dsdt(&slots(3));
        let aml = &d[36..];
        let count = |needle: &[u8]| aml.windows(needle.len()).filter(|w| *w == needle).count();
        assert_eq!(count(b"VMGENCTR\0"), 1);
        assert_eq!(count(b"ACPI0013\0"), 1);
        // ADDR: Package(2) { low half, high half } of the ID's address (PkgLength 8: itself,
        // the count, a DWord and a Zero).
        let mut addr = b"ADDR".to_vec();
        addr.extend_from_slice(&[0x12, 8, 2, 0x0c]);
        addr.extend_from_slice(&(VMGENID_ADDR as u32).to_le_bytes());
        addr.push(0x00);
        assert_eq!(count(&addr), 1);
        // The GED's one interrupt is the ID's line, and its _EVT (one argument) notifies
        // \_SB.VGEN with 0x80.
        let irq = edge_interrupt(u32::from(VMGENID_IRQ));
        assert_eq!(count(&irq), 1);
        let notify = [
            0x86, b'\\', 0x2e, b'_', b'S', b'B', b'_', b'V', b'G', b'E', b'N', 0x0a, 0x80,
        ];
        let evt = aml_method("_EVT", 1, &notify);
        assert_eq!(evt[..2], [0x14, 1 + 4 + 1 + notify.len() as u8]);
        assert_eq!(count(&evt), 1);
        // The line is none of the slots' (5, 6, 7) and not the SCI's.
        assert!(slots(3).iter().all(|s| s.irq != u32::from(VMGENID_IRQ)));
        assert_ne!(u16::from(VMGENID_IRQ), SCI_IRQ);
    }

    #[test]
    fn the_same_slots_give_the_same_bytes() {
        assert_eq!(tables(&slots(3)), tables(&slots(3)));
        assert_ne!(tables(&slots(2)), tables(&slots(3)));
    }
}
