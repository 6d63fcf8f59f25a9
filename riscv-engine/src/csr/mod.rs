//! Control and status register numbers and bit fields used by the hart, and the fixed
//! values of the machine's misa and default exception delegation. Plain constants with
//! no knowledge of the hart; reading and writing CSRs is the hart's behaviour, in
//! `csr::access`.

mod access;

/// Privilege levels (one byte: compiled blocks compare it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum Priv {
    /// User mode.
    User = 0,
    /// Supervisor mode.
    Supervisor = 1,
    /// Machine mode.
    Machine = 3,
}

impl Priv {
    /// Decodes a 2-bit privilege field (2 is reserved and read as User).
    pub fn from_bits(b: u64) -> Priv {
        match b & 3 {
            3 => Priv::Machine,
            1 => Priv::Supervisor,
            _ => Priv::User,
        }
    }
}

/// CSR addresses.
#[allow(missing_docs)]
pub mod addr {
    pub const FFLAGS: u16 = 0x001;
    pub const FRM: u16 = 0x002;
    pub const FCSR: u16 = 0x003;
    pub const CYCLE: u16 = 0xc00;
    pub const TIME: u16 = 0xc01;
    pub const INSTRET: u16 = 0xc02;
    pub const SSTATUS: u16 = 0x100;
    pub const SIE: u16 = 0x104;
    pub const STVEC: u16 = 0x105;
    pub const SCOUNTEREN: u16 = 0x106;
    pub const SENVCFG: u16 = 0x10a;
    pub const SSCRATCH: u16 = 0x140;
    pub const SEPC: u16 = 0x141;
    pub const SCAUSE: u16 = 0x142;
    pub const STVAL: u16 = 0x143;
    pub const SIP: u16 = 0x144;
    pub const SATP: u16 = 0x180;
    pub const MVENDORID: u16 = 0xf11;
    pub const MARCHID: u16 = 0xf12;
    pub const MIMPID: u16 = 0xf13;
    pub const MHARTID: u16 = 0xf14;
    pub const MCONFIGPTR: u16 = 0xf15;
    pub const MSTATUS: u16 = 0x300;
    pub const MISA: u16 = 0x301;
    pub const MEDELEG: u16 = 0x302;
    pub const MIDELEG: u16 = 0x303;
    pub const MIE: u16 = 0x304;
    pub const MTVEC: u16 = 0x305;
    pub const MCOUNTEREN: u16 = 0x306;
    pub const MENVCFG: u16 = 0x30a;
    pub const MSCRATCH: u16 = 0x340;
    pub const MEPC: u16 = 0x341;
    pub const MCAUSE: u16 = 0x342;
    pub const MTVAL: u16 = 0x343;
    pub const MIP: u16 = 0x344;
    pub const MCOUNTINHIBIT: u16 = 0x320;
    pub const MHPMEVENT3: u16 = 0x323;
    pub const MHPMEVENT31: u16 = 0x33f;
    pub const PMPCFG0: u16 = 0x3a0;
    pub const PMPCFG15: u16 = 0x3af;
    pub const PMPADDR0: u16 = 0x3b0;
    pub const PMPADDR63: u16 = 0x3ef;
    pub const MCYCLE: u16 = 0xb00;
    pub const MINSTRET: u16 = 0xb02;
    pub const MHPMCOUNTER3: u16 = 0xb03;
    pub const MHPMCOUNTER31: u16 = 0xb1f;
}

/// mstatus bits.
#[allow(missing_docs)]
pub mod mstatus {
    pub const SIE: u64 = 1 << 1;
    pub const MIE: u64 = 1 << 3;
    pub const SPIE: u64 = 1 << 5;
    pub const UBE: u64 = 1 << 6;
    pub const MPIE: u64 = 1 << 7;
    pub const SPP: u64 = 1 << 8;
    pub const MPP_SHIFT: u32 = 11;
    pub const MPP: u64 = 3 << 11;
    pub const FS_SHIFT: u32 = 13;
    pub const FS: u64 = 3 << 13;
    pub const FS_DIRTY: u64 = 3 << 13;
    pub const MPRV: u64 = 1 << 17;
    pub const SUM: u64 = 1 << 18;
    pub const MXR: u64 = 1 << 19;
    pub const TVM: u64 = 1 << 20;
    pub const TW: u64 = 1 << 21;
    pub const TSR: u64 = 1 << 22;
    pub const UXL: u64 = 3 << 32;
    pub const SXL: u64 = 3 << 34;
    pub const SD: u64 = 1 << 63;
    /// Bits visible through sstatus.
    pub const SSTATUS_MASK: u64 = SIE | SPIE | UBE | SPP | FS | SUM | MXR | UXL | SD;
    /// Bits that change what a load or store may do (its effective privilege, and the
    /// checks of SUM and MXR): a write changing any of them empties the page shortcuts
    /// (see `Hart::status_written`).
    pub const DATA_ACCESS: u64 = MPRV | MPP | SUM | MXR;
    /// Bits software may write in mstatus.
    pub const WRITABLE: u64 =
        SIE | MIE | SPIE | MPIE | SPP | MPP | FS | MPRV | SUM | MXR | TVM | TW | TSR;
}

/// Interrupt bits of mip/mie (and their cause numbers).
#[allow(missing_docs)]
pub mod irq {
    pub const SSI: u64 = 1 << 1;
    pub const MSI: u64 = 1 << 3;
    pub const STI: u64 = 1 << 5;
    pub const MTI: u64 = 1 << 7;
    pub const SEI: u64 = 1 << 9;
    pub const MEI: u64 = 1 << 11;
    /// S-level interrupts (what mideleg can delegate and sip/sie show).
    pub const S_MASK: u64 = SSI | STI | SEI;
    /// All implemented interrupts.
    pub const ALL: u64 = SSI | MSI | STI | MTI | SEI | MEI;
}

/// Exception cause codes.
#[allow(missing_docs)]
pub mod cause {
    pub const INSN_MISALIGNED: u64 = 0;
    pub const INSN_ACCESS: u64 = 1;
    pub const ILLEGAL_INSN: u64 = 2;
    pub const BREAKPOINT: u64 = 3;
    pub const LOAD_MISALIGNED: u64 = 4;
    pub const LOAD_ACCESS: u64 = 5;
    pub const STORE_MISALIGNED: u64 = 6;
    pub const STORE_ACCESS: u64 = 7;
    pub const ECALL_U: u64 = 8;
    pub const ECALL_S: u64 = 9;
    pub const ECALL_M: u64 = 11;
    pub const INSN_PAGE_FAULT: u64 = 12;
    pub const LOAD_PAGE_FAULT: u64 = 13;
    pub const STORE_PAGE_FAULT: u64 = 15;
    /// The interrupt bit of xcause.
    pub const INTERRUPT: u64 = 1 << 63;
}

/// misa: RV64 with A, C, D, F, I, M, S, U.
pub const MISA: u64 = (2 << 62)
    | (1 << 0)
    | (1 << 2)
    | (1 << 3)
    | (1 << 5)
    | (1 << 8)
    | (1 << 12)
    | (1 << 18)
    | (1 << 20);

/// Exceptions an SBI implementation delegates to S-mode (as OpenSBI does):
/// misaligned fetch, fetch access, illegal instruction, breakpoint, load/store
/// access, ECALL from U, and the three page faults.
pub const DEFAULT_MEDELEG: u64 = (1 << cause::INSN_MISALIGNED)
    | (1 << cause::INSN_ACCESS)
    | (1 << cause::ILLEGAL_INSN)
    | (1 << cause::BREAKPOINT)
    | (1 << cause::LOAD_MISALIGNED)
    | (1 << cause::LOAD_ACCESS)
    | (1 << cause::STORE_MISALIGNED)
    | (1 << cause::STORE_ACCESS)
    | (1 << cause::ECALL_U)
    | (1 << cause::INSN_PAGE_FAULT)
    | (1 << cause::LOAD_PAGE_FAULT)
    | (1 << cause::STORE_PAGE_FAULT);
