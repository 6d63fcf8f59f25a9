//! Initial 64-bit CPU state: control registers, segments, general registers,
//! FPU and MSRs, as the Linux 64-bit boot protocol expects them.

use super::gdt::{self, BOOT_GDT, CODE_INDEX, DATA_INDEX, TSS_INDEX};
use super::layout::{BOOT_STACK_ADDR, GDT_ADDR, PML4_ADDR, ZERO_PAGE_ADDR};
use kvm_bindings::{kvm_fpu, kvm_msr_entry, kvm_regs, kvm_sregs};

const X86_CR0_PE: u64 = 1 << 0;
const X86_CR0_ET: u64 = 1 << 4;
const X86_CR0_NE: u64 = 1 << 5;
const X86_CR0_PG: u64 = 1 << 31;
const X86_CR4_PAE: u64 = 1 << 5;
const EFER_LME: u64 = 1 << 8;
const EFER_LMA: u64 = 1 << 10;

/// MSR numbers wio resets at boot.
pub mod msr {
    /// The local APIC's base address and enable bit.
    pub const IA32_APIC_BASE: u32 = 0x1b;
    /// SYSENTER code segment.
    pub const IA32_SYSENTER_CS: u32 = 0x174;
    /// SYSENTER stack pointer.
    pub const IA32_SYSENTER_ESP: u32 = 0x175;
    /// SYSENTER entry point.
    pub const IA32_SYSENTER_EIP: u32 = 0x176;
    /// SYSCALL segment selectors.
    pub const STAR: u32 = 0xc000_0081;
    /// SYSCALL 64-bit entry point.
    pub const LSTAR: u32 = 0xc000_0082;
    /// SYSCALL compatibility-mode entry point.
    pub const CSTAR: u32 = 0xc000_0083;
    /// SYSCALL RFLAGS mask.
    pub const SYSCALL_MASK: u32 = 0xc000_0084;
    /// SWAPGS shadow.
    pub const KERNEL_GS_BASE: u32 = 0xc000_0102;
    /// Misc enable (fast strings).
    pub const IA32_MISC_ENABLE: u32 = 0x1a0;
}

/// Special registers for 64-bit entry: long mode, identity paging, flat segments.
pub fn long_mode_sregs(mut sregs: kvm_sregs) -> kvm_sregs {
    let code = gdt::segment(CODE_INDEX, BOOT_GDT[CODE_INDEX as usize]);
    let data = gdt::segment(DATA_INDEX, BOOT_GDT[DATA_INDEX as usize]);
    let tss = gdt::segment(TSS_INDEX, BOOT_GDT[TSS_INDEX as usize]);
    sregs.gdt.base = GDT_ADDR;
    sregs.gdt.limit = (std::mem::size_of_val(&BOOT_GDT) - 1) as u16;
    sregs.idt.base = 0;
    sregs.idt.limit = 0;
    sregs.cs = code;
    sregs.ds = data;
    sregs.es = data;
    sregs.fs = data;
    sregs.gs = data;
    sregs.ss = data;
    sregs.tr = tss;
    sregs.cr3 = PML4_ADDR;
    sregs.cr4 = X86_CR4_PAE;
    sregs.cr0 = X86_CR0_PE | X86_CR0_ET | X86_CR0_NE | X86_CR0_PG;
    sregs.efer = EFER_LME | EFER_LMA;
    sregs
}

/// General registers at entry: `rip` the kernel entry, `rsi` the zero page, interrupts off.
pub fn boot_regs(entry: u64) -> kvm_regs {
    kvm_regs {
        rflags: 0x2,
        rip: entry,
        rsp: BOOT_STACK_ADDR,
        rbp: BOOT_STACK_ADDR,
        rsi: ZERO_PAGE_ADDR,
        ..Default::default()
    }
}

/// FPU state at reset: x87 control word 0x37f, MXCSR 0x1f80.
pub fn boot_fpu() -> kvm_fpu {
    kvm_fpu {
        fcw: 0x37f,
        mxcsr: 0x1f80,
        ..Default::default()
    }
}

/// MSRs reset to fixed values so no host state leaks in.
pub fn boot_msrs() -> Vec<kvm_msr_entry> {
    let zero = [
        msr::IA32_SYSENTER_CS,
        msr::IA32_SYSENTER_ESP,
        msr::IA32_SYSENTER_EIP,
        msr::STAR,
        msr::LSTAR,
        msr::CSTAR,
        msr::SYSCALL_MASK,
        msr::KERNEL_GS_BASE,
    ];
    let mut entries: Vec<kvm_msr_entry> = zero
        .iter()
        .map(|&index| kvm_msr_entry {
            index,
            data: 0,
            ..Default::default()
        })
        .collect();
    entries.push(kvm_msr_entry {
        index: msr::IA32_MISC_ENABLE,
        data: 1,
        ..Default::default()
    });
    entries.push(apic_base_disabled());
    entries
}

/// IA32_APIC_BASE with the local APIC disabled (the default base, BSP set, enable bit
/// clear): wio's guests run in PIC mode, and KVM shows CPUID's APIC bit as long as this
/// MSR says enabled (it recomputes the bit when the MSR changes), whatever
/// KVM_SET_CPUID2 set. With it off, Linux never probes a local APIC wio does not have.
pub fn apic_base_disabled() -> kvm_msr_entry {
    kvm_msr_entry {
        index: msr::IA32_APIC_BASE,
        data: 0xfee0_0000 | 0x100,
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sregs_enable_long_mode_paging() {
        let s = long_mode_sregs(kvm_sregs::default());
        assert_eq!(s.efer & (EFER_LME | EFER_LMA), EFER_LME | EFER_LMA);
        assert_ne!(s.cr0 & X86_CR0_PG, 0);
        assert_ne!(s.cr4 & X86_CR4_PAE, 0);
        assert_eq!(s.cs.l, 1);
        assert_eq!(s.cr3, PML4_ADDR);
    }

    #[test]
    fn regs_point_rsi_at_zero_page() {
        let r = boot_regs(0x100_0000);
        assert_eq!(r.rip, 0x100_0000);
        assert_eq!(r.rsi, ZERO_PAGE_ADDR);
        assert_eq!(r.rflags & (1 << 9), 0, "interrupts start disabled");
    }
}
