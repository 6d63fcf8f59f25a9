/* Reset entry of the flight software: M-mode, a0 = hart id, a1 = device tree.
 * Sets the stack, clears .bss, installs the trap vector, runs main(dtb) and powers the
 * machine off through the test device with main's status. */
    .section .text.start
    .globl _start
_start:
    la      sp, __stack_top
    mv      s0, a1
    la      t0, __bss_start
    la      t1, __bss_end
1:  bgeu    t0, t1, 2f
    sd      zero, 0(t0)
    addi    t0, t0, 8
    j       1b
2:  la      t0, trap_entry
    csrw    mtvec, t0
    mv      a0, s0
    call    main
    call    power_off
3:  wfi
    j       3b

/* Any trap: report it and wait (no interrupt is enabled globally: the loop polls with
 * WFI), so the watchdog resets the machine. */
    .align  4
    .globl  trap_entry
trap_entry:
    la      sp, __stack_top
    csrr    a0, mcause
    csrr    a1, mepc
    csrr    a2, mtval
    call    trap_report
4:  csrw    mie, zero
    wfi
    j       4b
