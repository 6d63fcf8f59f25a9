//! The device tree handed to riscv64 guests, generated with vm-fdt.

use super::layout::*;
use crate::error::InternalError;
use crate::error::{Result, WioError};

/// ISA string advertised in the device tree.
pub const ISA: &str = "rv64imafdc_zicsr_zifencei";

/// What the device tree describes besides the fixed devices.
pub struct FdtSpec<'a> {
    /// RAM size in bytes.
    pub mem_bytes: u64,
    /// Kernel command line.
    pub bootargs: &'a str,
    /// Initrd physical range, if any.
    pub initrd: Option<(u64, u64)>,
    /// Bytes for `/chosen/rng-seed`, drawn from the run seed.
    pub rng_seed: &'a [u8],
    /// virtio-mmio slots in use (index, PLIC source).
    pub virtio: &'a [(u32, u32)],
    /// M-mode runs the guest's code (firmware or bare metal): the tree then also lists
    /// the CLINT and the test device with its power-off and reboot values, which such
    /// code drives itself (wio's SBI does both for a supervisor kernel).
    pub m_mode: bool,
    /// RAM is ECC memory: the tree lists the EDAC unit.
    pub edac: bool,
    /// The machine has a VM generation ID (`microsoft,vmgenid`).
    pub vmgenid: bool,
}

const PHANDLE_CPU_INTC: u32 = 1;
const PHANDLE_PLIC: u32 = 2;
const PHANDLE_TEST: u32 = 3;

fn fdt_err(e: vm_fdt::Error) -> WioError {
    WioError::Invariant(InternalError::DeviceTree(e))
}

/// Builds the flattened device tree.
pub fn build(spec: &FdtSpec) -> Result<Vec<u8>> {
    let mut w = vm_fdt::FdtWriter::new().map_err(fdt_err)?;
    let root = w.begin_node("").map_err(fdt_err)?;
    w.property_u32("#address-cells", 2).map_err(fdt_err)?;
    w.property_u32("#size-cells", 2).map_err(fdt_err)?;
    w.property_string("compatible", "wio,riscv64")
        .map_err(fdt_err)?;
    w.property_string("model", "wio deterministic riscv64 machine")
        .map_err(fdt_err)?;

    let chosen = w.begin_node("chosen").map_err(fdt_err)?;
    w.property_string("bootargs", spec.bootargs)
        .map_err(fdt_err)?;
    w.property_string("stdout-path", &format!("/soc/serial@{UART_BASE:x}"))
        .map_err(fdt_err)?;
    w.property("rng-seed", spec.rng_seed).map_err(fdt_err)?;
    if let Some((start, end)) = spec.initrd {
        w.property_u64("linux,initrd-start", start)
            .map_err(fdt_err)?;
        w.property_u64("linux,initrd-end", end).map_err(fdt_err)?;
    }
    w.end_node(chosen).map_err(fdt_err)?;

    let memory = w
        .begin_node(&format!("memory@{RAM_BASE:x}"))
        .map_err(fdt_err)?;
    w.property_string("device_type", "memory")
        .map_err(fdt_err)?;
    w.property_array_u64("reg", &[RAM_BASE, spec.mem_bytes])
        .map_err(fdt_err)?;
    w.end_node(memory).map_err(fdt_err)?;

    let cpus = w.begin_node("cpus").map_err(fdt_err)?;
    w.property_u32("#address-cells", 1).map_err(fdt_err)?;
    w.property_u32("#size-cells", 0).map_err(fdt_err)?;
    w.property_u32("timebase-frequency", TIMEBASE_HZ as u32)
        .map_err(fdt_err)?;
    let cpu = w.begin_node("cpu@0").map_err(fdt_err)?;
    w.property_string("device_type", "cpu").map_err(fdt_err)?;
    w.property_u32("reg", 0).map_err(fdt_err)?;
    w.property_string("status", "okay").map_err(fdt_err)?;
    w.property_string("compatible", "riscv").map_err(fdt_err)?;
    w.property_string("riscv,isa", ISA).map_err(fdt_err)?;
    w.property_string("riscv,isa-base", "rv64i")
        .map_err(fdt_err)?;
    w.property_string_list(
        "riscv,isa-extensions",
        ["i", "m", "a", "f", "d", "c", "zicsr", "zifencei"]
            .iter()
            .map(|s| s.to_string())
            .collect(),
    )
    .map_err(fdt_err)?;
    w.property_string("mmu-type", "riscv,sv39")
        .map_err(fdt_err)?;
    let intc = w.begin_node("interrupt-controller").map_err(fdt_err)?;
    w.property_u32("#interrupt-cells", 1).map_err(fdt_err)?;
    w.property_null("interrupt-controller").map_err(fdt_err)?;
    w.property_string("compatible", "riscv,cpu-intc")
        .map_err(fdt_err)?;
    w.property_phandle(PHANDLE_CPU_INTC).map_err(fdt_err)?;
    w.end_node(intc).map_err(fdt_err)?;
    w.end_node(cpu).map_err(fdt_err)?;
    w.end_node(cpus).map_err(fdt_err)?;

    let soc = w.begin_node("soc").map_err(fdt_err)?;
    w.property_u32("#address-cells", 2).map_err(fdt_err)?;
    w.property_u32("#size-cells", 2).map_err(fdt_err)?;
    w.property_string("compatible", "simple-bus")
        .map_err(fdt_err)?;
    w.property_null("ranges").map_err(fdt_err)?;

    let plic = w
        .begin_node(&format!("plic@{PLIC_BASE:x}"))
        .map_err(fdt_err)?;
    w.property_string_list(
        "compatible",
        vec!["sifive,plic-1.0.0".into(), "riscv,plic0".into()],
    )
    .map_err(fdt_err)?;
    w.property_array_u64("reg", &[PLIC_BASE, PLIC_SIZE])
        .map_err(fdt_err)?;
    w.property_u32("#interrupt-cells", 1).map_err(fdt_err)?;
    w.property_u32("#address-cells", 0).map_err(fdt_err)?;
    w.property_null("interrupt-controller").map_err(fdt_err)?;
    w.property_u32("riscv,ndev", 31).map_err(fdt_err)?;
    // Context 0: hart 0's supervisor external interrupt (cause 9).
    w.property_array_u32("interrupts-extended", &[PHANDLE_CPU_INTC, 9])
        .map_err(fdt_err)?;
    w.property_phandle(PHANDLE_PLIC).map_err(fdt_err)?;
    w.end_node(plic).map_err(fdt_err)?;

    let uart = w
        .begin_node(&format!("serial@{UART_BASE:x}"))
        .map_err(fdt_err)?;
    w.property_string("compatible", "ns16550a")
        .map_err(fdt_err)?;
    w.property_array_u64("reg", &[UART_BASE, UART_SIZE])
        .map_err(fdt_err)?;
    w.property_u32("clock-frequency", 3_686_400)
        .map_err(fdt_err)?;
    w.property_u32("interrupt-parent", PHANDLE_PLIC)
        .map_err(fdt_err)?;
    w.property_u32("interrupts", UART_IRQ).map_err(fdt_err)?;
    w.end_node(uart).map_err(fdt_err)?;

    let rtc = w
        .begin_node(&format!("rtc@{RTC_BASE:x}"))
        .map_err(fdt_err)?;
    w.property_string("compatible", "google,goldfish-rtc")
        .map_err(fdt_err)?;
    w.property_array_u64("reg", &[RTC_BASE, RTC_SIZE])
        .map_err(fdt_err)?;
    w.property_u32("interrupt-parent", PHANDLE_PLIC)
        .map_err(fdt_err)?;
    w.property_u32("interrupts", RTC_IRQ).map_err(fdt_err)?;
    w.end_node(rtc).map_err(fdt_err)?;

    if spec.m_mode {
        m_mode_devices(&mut w)?;
    }
    if spec.edac {
        let node = w
            .begin_node(&format!("edac@{EDAC_BASE:x}"))
            .map_err(fdt_err)?;
        w.property_string("compatible", "wio,edac")
            .map_err(fdt_err)?;
        w.property_array_u64("reg", &[EDAC_BASE, EDAC_SIZE])
            .map_err(fdt_err)?;
        w.property_u32("interrupt-parent", PHANDLE_PLIC)
            .map_err(fdt_err)?;
        w.property_u32("interrupts", EDAC_IRQ).map_err(fdt_err)?;
        w.end_node(node).map_err(fdt_err)?;
    }

    if spec.vmgenid {
        let node = w
            .begin_node(&format!("vmgenid@{VMGENID_BASE:x}"))
            .map_err(fdt_err)?;
        w.property_string("compatible", "microsoft,vmgenid")
            .map_err(fdt_err)?;
        w.property_array_u64("reg", &[VMGENID_BASE, VMGENID_SIZE])
            .map_err(fdt_err)?;
        w.property_u32("interrupt-parent", PHANDLE_PLIC)
            .map_err(fdt_err)?;
        w.property_u32("interrupts", VMGENID_IRQ).map_err(fdt_err)?;
        w.end_node(node).map_err(fdt_err)?;
    }

    for &(slot, irq) in spec.virtio {
        let base = VIRTIO_BASE + u64::from(slot) * VIRTIO_SIZE;
        let node = w
            .begin_node(&format!("virtio_mmio@{base:x}"))
            .map_err(fdt_err)?;
        w.property_string("compatible", "virtio,mmio")
            .map_err(fdt_err)?;
        w.property_array_u64("reg", &[base, VIRTIO_SIZE])
            .map_err(fdt_err)?;
        w.property_u32("interrupt-parent", PHANDLE_PLIC)
            .map_err(fdt_err)?;
        w.property_u32("interrupts", irq).map_err(fdt_err)?;
        w.end_node(node).map_err(fdt_err)?;
    }
    w.end_node(soc).map_err(fdt_err)?;
    w.end_node(root).map_err(fdt_err)?;
    w.finish().map_err(fdt_err)
}

/// The CLINT (msip and the machine timer, cause 3 and 7), the flight I/O board and the
/// promise port of bare-metal programs, and the test device (a syscon whose power-off
/// and reboot values OpenSBI's and Linux's syscon drivers write).
fn m_mode_devices(w: &mut vm_fdt::FdtWriter) -> Result<()> {
    let clint = w
        .begin_node(&format!("clint@{:x}", wio_riscv::clint::BASE))
        .map_err(fdt_err)?;
    w.property_string_list(
        "compatible",
        vec!["sifive,clint0".into(), "riscv,clint0".into()],
    )
    .map_err(fdt_err)?;
    w.property_array_u64("reg", &[wio_riscv::clint::BASE, wio_riscv::clint::SIZE])
        .map_err(fdt_err)?;
    w.property_array_u32(
        "interrupts-extended",
        &[PHANDLE_CPU_INTC, 3, PHANDLE_CPU_INTC, 7],
    )
    .map_err(fdt_err)?;
    w.end_node(clint).map_err(fdt_err)?;

    let test = w
        .begin_node(&format!("test@{TEST_BASE:x}"))
        .map_err(fdt_err)?;
    w.property_string_list(
        "compatible",
        vec![
            "sifive,test1".into(),
            "sifive,test0".into(),
            "syscon".into(),
        ],
    )
    .map_err(fdt_err)?;
    w.property_array_u64("reg", &[TEST_BASE, TEST_SIZE])
        .map_err(fdt_err)?;
    w.property_phandle(PHANDLE_TEST).map_err(fdt_err)?;
    w.end_node(test).map_err(fdt_err)?;
    for (base, size, compatible) in [
        (FLIGHT_IO_BASE, FLIGHT_IO_SIZE, "wio,flight-io"),
        (SDK_PORT_BASE, SDK_PORT_SIZE, "wio,sdk-port"),
    ] {
        let node = w
            .begin_node(&format!("{}@{base:x}", &compatible[4..]))
            .map_err(fdt_err)?;
        w.property_string("compatible", compatible)
            .map_err(fdt_err)?;
        w.property_array_u64("reg", &[base, size])
            .map_err(fdt_err)?;
        w.end_node(node).map_err(fdt_err)?;
    }
    for (name, compatible, value) in [
        ("poweroff", "syscon-poweroff", TEST_PASS),
        ("reboot", "syscon-reboot", TEST_RESET),
    ] {
        let node = w.begin_node(name).map_err(fdt_err)?;
        w.property_string("compatible", compatible)
            .map_err(fdt_err)?;
        w.property_u32("regmap", PHANDLE_TEST).map_err(fdt_err)?;
        w.property_u32("offset", 0).map_err(fdt_err)?;
        w.property_u32("value", value).map_err(fdt_err)?;
        w.end_node(node).map_err(fdt_err)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_a_valid_blob_with_chosen_properties() {
        let spec = FdtSpec {
            mem_bytes: 256 << 20,
            bootargs: "console=ttyS0",
            initrd: Some((0x8800_0000, 0x8810_0000)),
            rng_seed: &[7; 64],
            virtio: &[],
            m_mode: true,
            edac: true,
            vmgenid: true,
        };
        let blob = build(&spec).unwrap();
        assert_eq!(&blob[..4], &[0xd0, 0x0d, 0xfe, 0xed], "FDT magic");
        let text = String::from_utf8_lossy(&blob);
        for needle in [
            "console=ttyS0",
            ISA,
            "riscv,sv39",
            "ns16550a",
            "riscv,plic0",
            "google,goldfish-rtc",
            "linux,initrd-start",
            "rng-seed",
            "riscv,clint0",
            "syscon-poweroff",
            "wio,edac",
            "microsoft,vmgenid",
        ] {
            assert!(text.contains(needle), "missing {needle}");
        }
    }
}
