/* wio's environment for the RISC-V vector test generator's stage-1 programs
 * (chipsalliance/riscv-vector-tests), written for wio on top of its riscv-tests
 * environment (../riscv-tests/riscv_test.h: bare metal, the test in U-mode, the verdict
 * on the SiFive test device).
 *
 * The generator's stage 1 marks each point where a result is to be checked with its
 * "magic" instruction (custom-0, opcode 0x0b: rs1 = the first register of the result
 * group, rs2 bit 0 = also vxsat, rs2 bits 4:1 = how many registers), which the
 * generator's patched Spike turns into expected values. Here the magic instruction traps
 * as illegal and the M-mode handler below prints the group instead, one 64-bit element
 * per line in hex (each register's VLEN/64 elements, lowest first), then vxsat if asked,
 * then "---", on the NS16550 console at 0x10000000. The same ELF runs on wio and on
 * QEMU's virt machine (which has the same console and test device), and ci/rvv_suite.py
 * compares the two outputs. */
#ifndef WIO_RVV_TEST_H
#define WIO_RVV_TEST_H

#include "../riscv-tests/riscv_test.h"

#define RVTEST_VECTOR_ENABLE                                            \
  li a0, (MSTATUS_VS & (MSTATUS_VS >> 1)) |                             \
         (MSTATUS_FS & (MSTATUS_FS >> 1));                              \
  csrs mstatus, a0;                                                     \
  csrwi fcsr, 0;                                                        \
  csrwi vcsr, 0

/* Both the floating-point (UV) and the integer-only (UVX) tests get FP and V on. */
#define RVTEST_RV64UV .macro init; RVTEST_VECTOR_ENABLE; .endm
#define RVTEST_RV64UVX RVTEST_RV64UV

#define WIO_UART 0x10000000

/* One character (a5) to the console at a6 (clobbers a7). */
#define WIO_PUTC                                                        \
  9: lbu a7, 5(a6); andi a7, a7, 0x20; beqz a7, 9b; sb a5, 0(a6)

/* The magic instruction's handler, placed after the test's code (t5 and t6 are the trap
 * vector's; the handler saves what else it uses and restores it). Not compressed, so
 * that each entry of its table of whole-register stores is 8 bytes. */
#undef RVTEST_CODE_END
#define RVTEST_CODE_END                                                 \
  unimp;                                                                \
  .option push;                                                         \
  .option norvc;                                                        \
  .align 3;                                                             \
  .globl mtvec_handler;                                                 \
mtvec_handler:                                                          \
  csrr t5, mcause;                                                      \
  li t6, CAUSE_ILLEGAL_INSTRUCTION;                                     \
  bne t5, t6, wio_magic_unexpected;                                     \
  la t5, wio_magic_save;                                                \
  sd a0, 0(t5); sd a1, 8(t5); sd a2, 16(t5); sd a3, 24(t5);             \
  sd a4, 32(t5); sd a5, 40(t5); sd a6, 48(t5); sd a7, 56(t5);           \
  sd ra, 64(t5);                                                        \
  /* The instruction, two halves (the pc may be 2-aligned). */          \
  csrr a0, mepc;                                                        \
  lhu a1, 0(a0);                                                        \
  lhu a2, 2(a0);                                                        \
  slli a2, a2, 16;                                                      \
  or a1, a1, a2;                                                        \
  andi a2, a1, 0x7f;                                                    \
  li a3, 0x0b;                                                          \
  bne a2, a3, wio_magic_unexpected;                                     \
  li a6, WIO_UART;                                                      \
  srli a2, a1, 15; andi a2, a2, 31;   /* first register */              \
  srli a3, a1, 21; andi a3, a3, 15;   /* how many */                    \
  add a3, a3, a2;                     /* one past the last */           \
1:                                                                      \
  bgeu a2, a3, 4f;                                                      \
  /* vs1r.v v<a2>, (wio_magic_buf) through the table. */                \
  la a0, wio_magic_buf;                                                 \
  la a4, wio_magic_table;                                               \
  slli a5, a2, 3;                                                       \
  add a4, a4, a5;                                                       \
  jalr ra, 0(a4);                                                       \
  csrr a4, vlenb;                                                       \
  add a4, a4, a0;                     /* end of the register */         \
2:                                                                      \
  bgeu a0, a4, 3f;                                                      \
  ld t5, 0(a0);                                                         \
  jal ra, wio_magic_hex;                                                \
  addi a0, a0, 8;                                                       \
  j 2b;                                                                 \
3:                                                                      \
  addi a2, a2, 1;                                                       \
  j 1b;                                                                 \
4:                                                                      \
  srli a2, a1, 20; andi a2, a2, 1;                                      \
  beqz a2, 5f;                                                          \
  csrr t5, vxsat;                                                       \
  jal ra, wio_magic_hex;                                                \
5:                                                                      \
  li a5, '-'; WIO_PUTC; WIO_PUTC; WIO_PUTC;                             \
  li a5, '\n'; WIO_PUTC;                                                \
  csrr a0, mepc;                                                        \
  addi a0, a0, 4;                                                       \
  csrw mepc, a0;                                                        \
  la t5, wio_magic_save;                                                \
  ld a0, 0(t5); ld a1, 8(t5); ld a2, 16(t5); ld a3, 24(t5);             \
  ld a4, 32(t5); ld a5, 40(t5); ld a6, 48(t5); ld a7, 56(t5);           \
  ld ra, 64(t5);                                                        \
  mret;                                                                 \
wio_magic_unexpected:                                                   \
  /* As the trap vector does for a trap the test did not expect. */     \
  li t6, 2000;                                                          \
  add TESTNUM, TESTNUM, TESTNUM;                                        \
  add TESTNUM, TESTNUM, t6;                                             \
  ori TESTNUM, TESTNUM, 1;                                              \
  j wio_report;                                                         \
/* t5 as 16 hex digits and a newline (clobbers t5, t6, a5, a7). */      \
wio_magic_hex:                                                          \
  li t6, 16;                                                            \
6:                                                                      \
  srli a5, t5, 60;                                                      \
  slli t5, t5, 4;                                                       \
  addi a5, a5, '0';                                                     \
  li a7, '9' + 1;                                                       \
  bltu a5, a7, 7f;                                                      \
  addi a5, a5, 'a' - '9' - 1;                                           \
7:                                                                      \
  WIO_PUTC;                                                             \
  addi t6, t6, -1;                                                      \
  bnez t6, 6b;                                                          \
  li a5, '\n'; WIO_PUTC;                                                \
  ret;                                                                  \
  .align 3;                                                             \
wio_magic_table:                                                        \
  vs1r.v v0, (a0); ret; vs1r.v v1, (a0); ret;                           \
  vs1r.v v2, (a0); ret; vs1r.v v3, (a0); ret;                           \
  vs1r.v v4, (a0); ret; vs1r.v v5, (a0); ret;                           \
  vs1r.v v6, (a0); ret; vs1r.v v7, (a0); ret;                           \
  vs1r.v v8, (a0); ret; vs1r.v v9, (a0); ret;                           \
  vs1r.v v10, (a0); ret; vs1r.v v11, (a0); ret;                         \
  vs1r.v v12, (a0); ret; vs1r.v v13, (a0); ret;                         \
  vs1r.v v14, (a0); ret; vs1r.v v15, (a0); ret;                         \
  vs1r.v v16, (a0); ret; vs1r.v v17, (a0); ret;                         \
  vs1r.v v18, (a0); ret; vs1r.v v19, (a0); ret;                         \
  vs1r.v v20, (a0); ret; vs1r.v v21, (a0); ret;                         \
  vs1r.v v22, (a0); ret; vs1r.v v23, (a0); ret;                         \
  vs1r.v v24, (a0); ret; vs1r.v v25, (a0); ret;                         \
  vs1r.v v26, (a0); ret; vs1r.v v27, (a0); ret;                         \
  vs1r.v v28, (a0); ret; vs1r.v v29, (a0); ret;                         \
  vs1r.v v30, (a0); ret; vs1r.v v31, (a0); ret;                         \
  .option pop;                                                          \
  .pushsection .bss;                                                    \
  .align 6;                                                             \
wio_magic_save: .zero 128;                                              \
wio_magic_buf: .zero 512;                                               \
  .popsection

#endif
