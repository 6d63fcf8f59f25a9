/* wio's bare-metal environment for the riscv-tests ISA suite (its "p" shape: physical
 * memory, one hart, the test in the privilege level it asks for), written for wio.
 *
 * Each test is an ELF at RAM's base that wio starts in M-mode (`wio run --arch riscv64
 * --kernel TEST`). The start-up code below clears the registers, opens all of memory to
 * S and U through PMP entry 0, hands the traps the test handles itself to its handler
 * (`mtvec_handler` in M-mode, `stvec_handler` in S-mode, both optional), and drops to the
 * test's privilege level: U for RVTEST_RV64U/UF, S for RVTEST_RV64S, M for RVTEST_RV64M.
 *
 * A test ends with an ECALL (RVTEST_PASS or RVTEST_FAIL) or an unexpected trap. Either
 * way the M-mode trap vector reports TESTNUM to the SiFive test device at 0x100000:
 * 0x5555 (pass: the run's exit status 0) when TESTNUM is 1, else 0x3333 | code << 16,
 * where code is the failing case's number, or (for an unexpected trap) that number
 * plus 1000, so the run's summary says which case failed and how. */
#ifndef WIO_RISCV_TEST_H
#define WIO_RISCV_TEST_H

#include "encoding.h"

#define TESTNUM gp

/* The test device (wio's layout::TEST_BASE) and its two words. */
#define WIO_TEST_DEVICE 0x100000
#define WIO_TEST_PASS   0x5555
#define WIO_TEST_FAIL   0x3333

#define RVTEST_RV64U .macro init; .endm
#define RVTEST_RV32U RVTEST_RV64U

#define RVTEST_FP_ENABLE                                                \
  li a0, MSTATUS_FS & (MSTATUS_FS >> 1);                                \
  csrs mstatus, a0;                                                     \
  csrwi fcsr, 0

#define RVTEST_RV64UF .macro init; RVTEST_FP_ENABLE; .endm
#define RVTEST_RV32UF RVTEST_RV64UF

/* MPP = S: the test starts in S-mode, with the software and timer interrupts delegated. */
#define RVTEST_ENABLE_SUPERVISOR                                        \
  li a0, MSTATUS_MPP & (MSTATUS_MPP >> 1);                              \
  csrs mstatus, a0;                                                     \
  li a0, SIP_SSIP | SIP_STIP;                                           \
  csrs mideleg, a0

/* MPP = M: the test stays in M-mode. */
#define RVTEST_ENABLE_MACHINE                                           \
  li a0, MSTATUS_MPP;                                                   \
  csrs mstatus, a0

#define RVTEST_RV64S .macro init; RVTEST_ENABLE_SUPERVISOR; .endm
#define RVTEST_RV64M .macro init; RVTEST_ENABLE_MACHINE; .endm
#define RVTEST_RV32S RVTEST_RV64S
#define RVTEST_RV32M RVTEST_RV64M

#define RVTEST_CODE_BEGIN                                               \
  .section .text.init;                                                  \
  .align 6;                                                             \
  .weak stvec_handler;                                                  \
  .weak mtvec_handler;                                                  \
  .globl _start;                                                        \
_start:                                                                 \
  j wio_reset;                                                          \
  .align 2;                                                             \
trap_vector:                                                            \
  /* ECALL from any level is the test's verdict. */                     \
  csrr t5, mcause;                                                      \
  li t6, CAUSE_USER_ECALL;                                              \
  beq t5, t6, wio_report;                                               \
  li t6, CAUSE_SUPERVISOR_ECALL;                                        \
  beq t5, t6, wio_report;                                               \
  li t6, CAUSE_MACHINE_ECALL;                                           \
  beq t5, t6, wio_report;                                               \
  /* Any other trap: the test's own M-mode handler, if it has one. */   \
  la t5, mtvec_handler;                                                 \
  beqz t5, 1f;                                                          \
  jr t5;                                                                \
1:                                                                      \
  /* Unexpected: report the case it happened in, plus 1000. */          \
  li t6, 2000;                                                          \
  add TESTNUM, TESTNUM, TESTNUM;                                        \
  add TESTNUM, TESTNUM, t6;                                             \
  ori TESTNUM, TESTNUM, 1;                                              \
wio_report:                                                             \
  li t5, WIO_TEST_DEVICE;                                               \
  li t6, 1;                                                             \
  bne TESTNUM, t6, 2f;                                                  \
  li t6, WIO_TEST_PASS;                                                 \
  sw t6, 0(t5);                                                         \
  j wio_report;                                                         \
2:                                                                      \
  srli t6, TESTNUM, 1;                                                  \
  slli t6, t6, 16;                                                      \
  li t5, WIO_TEST_FAIL;                                                 \
  or t6, t6, t5;                                                        \
  li t5, WIO_TEST_DEVICE;                                               \
  sw t6, 0(t5);                                                         \
  j wio_report;                                                         \
wio_reset:                                                              \
  li x1, 0; li x2, 0; li x3, 0; li x4, 0; li x5, 0; li x6, 0;           \
  li x7, 0; li x8, 0; li x9, 0; li x10, 0; li x11, 0; li x12, 0;        \
  li x13, 0; li x14, 0; li x15, 0; li x16, 0; li x17, 0; li x18, 0;     \
  li x19, 0; li x20, 0; li x21, 0; li x22, 0; li x23, 0; li x24, 0;     \
  li x25, 0; li x26, 0; li x27, 0; li x28, 0; li x29, 0; li x30, 0;     \
  li x31, 0;                                                            \
  /* Bare: no translation (a trap here, on a hart without S, skips). */ \
  la t0, 1f;                                                            \
  csrw mtvec, t0;                                                       \
  csrwi satp, 0;                                                        \
  .align 2;                                                             \
1:                                                                      \
  /* All of memory to S and U: PMP entry 0, NAPOT over everything. */   \
  la t0, 1f;                                                            \
  csrw mtvec, t0;                                                       \
  li t0, -1;                                                            \
  csrw pmpaddr0, t0;                                                    \
  li t0, PMP_NAPOT | PMP_R | PMP_W | PMP_X;                             \
  csrw pmpcfg0, t0;                                                     \
  .align 2;                                                             \
1:                                                                      \
  /* Nothing delegated and no interrupt enabled yet. */                 \
  csrwi mie, 0;                                                         \
  la t0, 1f;                                                            \
  csrw mtvec, t0;                                                       \
  csrwi medeleg, 0;                                                     \
  csrwi mideleg, 0;                                                     \
  .align 2;                                                             \
1:                                                                      \
  li TESTNUM, 0;                                                        \
  la t0, trap_vector;                                                   \
  csrw mtvec, t0;                                                       \
  /* A test with an S-mode handler gets S-mode's own traps. */          \
  la t0, stvec_handler;                                                 \
  beqz t0, 1f;                                                          \
  csrw stvec, t0;                                                       \
  li t0, (1 << CAUSE_LOAD_PAGE_FAULT) |                                 \
         (1 << CAUSE_STORE_PAGE_FAULT) |                                \
         (1 << CAUSE_FETCH_PAGE_FAULT) |                                \
         (1 << CAUSE_MISALIGNED_FETCH) |                                \
         (1 << CAUSE_USER_ECALL) |                                      \
         (1 << CAUSE_BREAKPOINT);                                       \
  csrw medeleg, t0;                                                     \
1:                                                                      \
  csrwi mstatus, 0;                                                     \
  init;                                                                 \
  la t0, 1f;                                                            \
  csrw mepc, t0;                                                        \
  csrr a0, mhartid;                                                     \
  mret;                                                                 \
1:

#define RVTEST_CODE_END unimp

#define RVTEST_PASS                                                     \
  fence;                                                                \
  li TESTNUM, 1;                                                        \
  li a7, 93;                                                            \
  li a0, 0;                                                             \
  ecall

#define RVTEST_FAIL                                                     \
  fence;                                                                \
1:                                                                      \
  beqz TESTNUM, 1b;                                                     \
  sll TESTNUM, TESTNUM, 1;                                              \
  or TESTNUM, TESTNUM, 1;                                               \
  li a7, 93;                                                            \
  addi a0, TESTNUM, 0;                                                  \
  ecall

#define EXTRA_DATA

#define RVTEST_DATA_BEGIN                                               \
  EXTRA_DATA                                                            \
  .align 4;                                                             \
  .global begin_signature;                                              \
begin_signature:

#define RVTEST_DATA_END                                                 \
  .align 4;                                                             \
  .global end_signature;                                                \
end_signature:

#endif
