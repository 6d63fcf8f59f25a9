//! The device tree handed to riscv64 guests, generated with vm-fdt.

use super::layout::*;
use crate::error::InternalError;
use crate::error::{Result, WioError};

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
    /// The hart's optional extensions, advertised in `riscv,isa` and
    /// `riscv,isa-extensions`.
    pub isa: wio_riscv::Isa,
}

const PHANDLE_CPU_INTC: u32 = 1;
const PHANDLE_PLIC: u32 = 2;
const PHANDLE_TEST: u32 = 3;

/// What the writer's calls return.
type Written<T> = std::result::Result<T, vm_fdt::Error>;

/// Builds the flattened device tree.
pub fn build(spec: &FdtSpec) -> Result<Vec<u8>> {
    write(spec).map_err(|e| WioError::Invariant(InternalError::DeviceTree(e)))
}

/// The tree, node after node: the root's properties, `chosen`, memory, the CPU, and the
/// `soc` bus with its devices.
fn write(spec: &FdtSpec) -> Written<Vec<u8>> {
    let mut w = vm_fdt::FdtWriter::new()?;
    let root = w.begin_node("")?;
    w.property_u32("#address-cells", 2)?;
    w.property_u32("#size-cells", 2)?;
    w.property_string("compatible", "wio,riscv64")?;
    w.property_string("model", "wio deterministic riscv64 machine")?;

    chosen(&mut w, spec)?;
    memory(&mut w, spec.mem_bytes)?;
    cpus(&mut w, spec.isa)?;

    let soc = w.begin_node("soc")?;
    w.property_u32("#address-cells", 2)?;
    w.property_u32("#size-cells", 2)?;
    w.property_string("compatible", "simple-bus")?;
    w.property_null("ranges")?;

    plic(&mut w)?;

    let uart = w.begin_node(&format!("serial@{UART_BASE:x}"))?;
    w.property_string("compatible", "ns16550a")?;
    w.property_array_u64("reg", &[UART_BASE, UART_SIZE])?;
    w.property_u32("clock-frequency", 3_686_400)?;
    w.property_u32("interrupt-parent", PHANDLE_PLIC)?;
    w.property_u32("interrupts", UART_IRQ)?;
    w.end_node(uart)?;

    device(
        &mut w,
        "rtc",
        RTC_BASE,
        RTC_SIZE,
        "google,goldfish-rtc",
        RTC_IRQ,
    )?;

    if spec.m_mode {
        m_mode_devices(&mut w)?;
    }
    if spec.edac {
        device(&mut w, "edac", EDAC_BASE, EDAC_SIZE, "wio,edac", EDAC_IRQ)?;
    }

    if spec.vmgenid {
        let (base, size) = (VMGENID_BASE, VMGENID_SIZE);
        device(
            &mut w,
            "vmgenid",
            base,
            size,
            "microsoft,vmgenid",
            VMGENID_IRQ,
        )?;
    }

    for &(slot, irq) in spec.virtio {
        let base = VIRTIO_BASE + u64::from(slot) * VIRTIO_SIZE;
        device(&mut w, "virtio_mmio", base, VIRTIO_SIZE, "virtio,mmio", irq)?;
    }
    w.end_node(soc)?;
    w.end_node(root)?;
    w.finish()
}

/// `/chosen`: the command line, the console, the RNG seed and the initrd's range.
fn chosen(w: &mut vm_fdt::FdtWriter, spec: &FdtSpec) -> Written<()> {
    let chosen = w.begin_node("chosen")?;
    w.property_string("bootargs", spec.bootargs)?;
    w.property_string("stdout-path", &format!("/soc/serial@{UART_BASE:x}"))?;
    w.property("rng-seed", spec.rng_seed)?;
    if let Some((start, end)) = spec.initrd {
        w.property_u64("linux,initrd-start", start)?;
        w.property_u64("linux,initrd-end", end)?;
    }
    w.end_node(chosen)?;
    Ok(())
}

/// The RAM.
fn memory(w: &mut vm_fdt::FdtWriter, mem_bytes: u64) -> Written<()> {
    let memory = w.begin_node(&format!("memory@{RAM_BASE:x}"))?;
    w.property_string("device_type", "memory")?;
    w.property_array_u64("reg", &[RAM_BASE, mem_bytes])?;
    w.end_node(memory)?;
    Ok(())
}

/// The one hart, its ISA and its interrupt controller.
fn cpus(w: &mut vm_fdt::FdtWriter, isa: wio_riscv::Isa) -> Written<()> {
    let cpus = w.begin_node("cpus")?;
    w.property_u32("#address-cells", 1)?;
    w.property_u32("#size-cells", 0)?;
    w.property_u32("timebase-frequency", TIMEBASE_HZ as u32)?;
    let cpu = w.begin_node("cpu@0")?;
    w.property_string("device_type", "cpu")?;
    w.property_u32("reg", 0)?;
    w.property_string("status", "okay")?;
    w.property_string("compatible", "riscv")?;
    w.property_string("riscv,isa", &isa.device_tree_string())?;
    w.property_string("riscv,isa-base", "rv64i")?;
    w.property_string_list("riscv,isa-extensions", isa.device_tree_extensions())?;
    w.property_string("mmu-type", "riscv,sv39")?;
    let intc = w.begin_node("interrupt-controller")?;
    w.property_u32("#interrupt-cells", 1)?;
    w.property_null("interrupt-controller")?;
    w.property_string("compatible", "riscv,cpu-intc")?;
    w.property_phandle(PHANDLE_CPU_INTC)?;
    w.end_node(intc)?;
    w.end_node(cpu)?;
    w.end_node(cpus)?;
    Ok(())
}

/// The PLIC, wired to hart 0's supervisor external interrupt.
fn plic(w: &mut vm_fdt::FdtWriter) -> Written<()> {
    let plic = w.begin_node(&format!("plic@{PLIC_BASE:x}"))?;
    w.property_string_list(
        "compatible",
        vec!["sifive,plic-1.0.0".into(), "riscv,plic0".into()],
    )?;
    w.property_array_u64("reg", &[PLIC_BASE, PLIC_SIZE])?;
    w.property_u32("#interrupt-cells", 1)?;
    w.property_u32("#address-cells", 0)?;
    w.property_null("interrupt-controller")?;
    w.property_u32("riscv,ndev", 31)?;
    // Context 0: hart 0's supervisor external interrupt (cause 9).
    w.property_array_u32("interrupts-extended", &[PHANDLE_CPU_INTC, 9])?;
    w.property_phandle(PHANDLE_PLIC)?;
    w.end_node(plic)?;
    Ok(())
}

/// A device on the `soc` bus behind the PLIC: `NAME@BASE` with its compatible string, its
/// registers and its interrupt, in that order.
fn device(
    w: &mut vm_fdt::FdtWriter,
    name: &str,
    base: u64,
    size: u64,
    compatible: &str,
    irq: u32,
) -> Written<()> {
    let node = w.begin_node(&format!("{name}@{base:x}"))?;
    w.property_string("compatible", compatible)?;
    w.property_array_u64("reg", &[base, size])?;
    w.property_u32("interrupt-parent", PHANDLE_PLIC)?;
    w.property_u32("interrupts", irq)?;
    w.end_node(node)
}

/// The CLINT (msip and the machine timer, cause 3 and 7), the flight I/O board and the
/// promise port of bare-metal programs, and the test device (a syscon whose power-off
/// and reboot values OpenSBI's and Linux's syscon drivers write).
fn m_mode_devices(w: &mut vm_fdt::FdtWriter) -> Written<()> {
    let clint = w.begin_node(&format!("clint@{:x}", wio_riscv::clint::BASE))?;
    w.property_string_list(
        "compatible",
        vec!["sifive,clint0".into(), "riscv,clint0".into()],
    )?;
    w.property_array_u64("reg", &[wio_riscv::clint::BASE, wio_riscv::clint::SIZE])?;
    w.property_array_u32(
        "interrupts-extended",
        &[PHANDLE_CPU_INTC, 3, PHANDLE_CPU_INTC, 7],
    )?;
    w.end_node(clint)?;

    let test = w.begin_node(&format!("test@{TEST_BASE:x}"))?;
    w.property_string_list(
        "compatible",
        vec![
            "sifive,test1".into(),
            "sifive,test0".into(),
            "syscon".into(),
        ],
    )?;
    w.property_array_u64("reg", &[TEST_BASE, TEST_SIZE])?;
    w.property_phandle(PHANDLE_TEST)?;
    w.end_node(test)?;
    for (base, size, compatible) in [
        (FLIGHT_IO_BASE, FLIGHT_IO_SIZE, "wio,flight-io"),
        (SDK_PORT_BASE, SDK_PORT_SIZE, "wio,sdk-port"),
    ] {
        let node = w.begin_node(&format!("{}@{base:x}", &compatible[4..]))?;
        w.property_string("compatible", compatible)?;
        w.property_array_u64("reg", &[base, size])?;
        w.end_node(node)?;
    }
    for (name, compatible, value) in [
        ("poweroff", "syscon-poweroff", TEST_PASS),
        ("reboot", "syscon-reboot", TEST_RESET),
    ] {
        let node = w.begin_node(name)?;
        w.property_string("compatible", compatible)?;
        w.property_u32("regmap", PHANDLE_TEST)?;
        w.property_u32("offset", 0)?;
        w.property_u32("value", value)?;
        w.end_node(node)?;
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
            isa: "rv64gc_zba_zbb_zbs".parse().unwrap(),
        };
        let blob = build(&spec).unwrap();
        assert_eq!(&blob[..4], &[0xd0, 0x0d, 0xfe, 0xed], "FDT magic");
        let text = String::from_utf8_lossy(&blob);
        for needle in [
            "console=ttyS0",
            "rv64imafdc_zicsr_zifencei_zba_zbb_zbs",
            "zbs",
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
