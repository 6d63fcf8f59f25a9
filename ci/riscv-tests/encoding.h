/* wio's constants for the riscv-tests ISA suite: the CSR fields, causes and page-table
 * bits the tests name, with their values from the RISC-V privileged specification
 * (written for wio; the suite's own environment is a separate repository). */
#ifndef WIO_RISCV_TESTS_ENCODING_H
#define WIO_RISCV_TESTS_ENCODING_H

#define MSTATUS_SIE   0x00000002
#define MSTATUS_MIE   0x00000008
#define MSTATUS_SPIE  0x00000020
#define MSTATUS_MPIE  0x00000080
#define MSTATUS_SPP   0x00000100
#define MSTATUS_VS    0x00000600
#define MSTATUS_MPP   0x00001800
#define MSTATUS_FS    0x00006000
#define MSTATUS_XS    0x00018000
#define MSTATUS_MPRV  0x00020000
#define MSTATUS_SUM   0x00040000
#define MSTATUS_MXR   0x00080000
#define MSTATUS_TVM   0x00100000
#define MSTATUS_TW    0x00200000
#define MSTATUS_TSR   0x00400000
#define MSTATUS_UXL   0x0000000300000000
#define MSTATUS_SXL   0x0000000C00000000

#define SSTATUS_SIE   MSTATUS_SIE
#define SSTATUS_SPIE  MSTATUS_SPIE
#define SSTATUS_SPP   MSTATUS_SPP
#define SSTATUS_FS    MSTATUS_FS
#define SSTATUS_SUM   MSTATUS_SUM
#define SSTATUS_MXR   MSTATUS_MXR
#define SSTATUS_UXL   MSTATUS_UXL

#define MIP_SSIP  (1 << 1)
#define MIP_MSIP  (1 << 3)
#define MIP_STIP  (1 << 5)
#define MIP_MTIP  (1 << 7)
#define MIP_SEIP  (1 << 9)
#define MIP_MEIP  (1 << 11)
#define SIP_SSIP  MIP_SSIP
#define SIP_STIP  MIP_STIP

#define PRV_U 0
#define PRV_S 1
#define PRV_M 3

#define SATP_MODE       0xF000000000000000
#define SATP_MODE_SV39  8

#define PMP_R      0x01
#define PMP_W      0x02
#define PMP_X      0x04
#define PMP_A      0x18
#define PMP_TOR    0x08
#define PMP_NA4    0x10
#define PMP_NAPOT  0x18
#define PMP_L      0x80

#define PTE_V  0x001
#define PTE_R  0x002
#define PTE_W  0x004
#define PTE_X  0x008
#define PTE_U  0x010
#define PTE_G  0x020
#define PTE_A  0x040
#define PTE_D  0x080
#define PTE_PPN_SHIFT 10

#define RISCV_PGSHIFT 12
#define RISCV_PGSIZE  (1 << RISCV_PGSHIFT)

#define CAUSE_MISALIGNED_FETCH     0x0
#define CAUSE_FETCH_ACCESS         0x1
#define CAUSE_ILLEGAL_INSTRUCTION  0x2
#define CAUSE_BREAKPOINT           0x3
#define CAUSE_MISALIGNED_LOAD      0x4
#define CAUSE_LOAD_ACCESS          0x5
#define CAUSE_MISALIGNED_STORE     0x6
#define CAUSE_STORE_ACCESS         0x7
#define CAUSE_USER_ECALL           0x8
#define CAUSE_SUPERVISOR_ECALL     0x9
#define CAUSE_MACHINE_ECALL        0xb
#define CAUSE_FETCH_PAGE_FAULT     0xc
#define CAUSE_LOAD_PAGE_FAULT      0xd
#define CAUSE_STORE_PAGE_FAULT     0xf

/* mcontrol (trigger type 2) fields, for the breakpoint test. */
#define MCONTROL_LOAD     (1 << 0)
#define MCONTROL_STORE    (1 << 1)
#define MCONTROL_EXECUTE  (1 << 2)
#define MCONTROL_U        (1 << 3)
#define MCONTROL_S        (1 << 4)
#define MCONTROL_M        (1 << 6)

/* Where the tests' RAM starts (wio's riscv64 RAM base). */
#define DRAM_BASE 0x80000000

#endif
