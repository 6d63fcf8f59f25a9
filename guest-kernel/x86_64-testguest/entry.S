/* Entry point and interrupt stubs of the wio x86-64 test guest.
 * wio enters _start in 64-bit mode with paging on, interrupts off and
 * %rsi pointing at the Linux boot_params ("zero page"). */
    .section .text.entry, "ax"
    .globl _start
_start:
    lea stack_top(%rip), %rsp
    mov %rsi, %rdi
    call guest_main
1:  cli
    hlt
    jmp 1b

/* One stub per vector: push a dummy error code where the CPU pushes none,
 * push the vector, then share one save/dispatch/restore path. */
.macro STUB vec, has_error
    .globl isr_stub_\vec
isr_stub_\vec:
    .if \has_error == 0
    pushq $0
    .endif
    pushq $\vec
    jmp isr_common
.endm

    .text
isr_common:
    push %rax
    push %rcx
    push %rdx
    push %rsi
    push %rdi
    push %r8
    push %r9
    push %r10
    push %r11
    mov 72(%rsp), %rdi      /* vector */
    mov 80(%rsp), %rsi      /* error code */
    mov 88(%rsp), %rdx      /* faulting rip */
    call isr_dispatch
    pop %r11
    pop %r10
    pop %r9
    pop %r8
    pop %rdi
    pop %rsi
    pop %rdx
    pop %rcx
    pop %rax
    add $16, %rsp
    iretq

/* Idle-mode timer handler: with the PIC in auto-EOI mode a tick only needs
 * counting, so the idle benchmark measures wio, not the guest's handler. */
    .globl isr_fast_tick
isr_fast_tick:
    incq pit_ticks(%rip)
    iretq

    STUB 0,0
    STUB 1,0
    STUB 2,0
    STUB 3,0
    STUB 4,0
    STUB 5,0
    STUB 6,0
    STUB 7,0
    STUB 8,1
    STUB 9,0
    STUB 10,1
    STUB 11,1
    STUB 12,1
    STUB 13,1
    STUB 14,1
    STUB 15,0
    STUB 16,0
    STUB 17,1
    STUB 18,0
    STUB 19,0
    STUB 20,0
    STUB 21,1
    STUB 22,0
    STUB 23,0
    STUB 24,0
    STUB 25,0
    STUB 26,0
    STUB 27,0
    STUB 28,0
    STUB 29,1
    STUB 30,1
    STUB 31,0
    STUB 32,0
    STUB 33,0
    STUB 34,0
    STUB 35,0
    STUB 36,0
    STUB 37,0
    STUB 38,0
    STUB 39,0
    STUB 40,0
    STUB 41,0
    STUB 42,0
    STUB 43,0
    STUB 44,0
    STUB 45,0
    STUB 46,0
    STUB 47,0

    .section .rodata
    .globl isr_stubs
    .balign 8
isr_stubs:
    .irp v, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47
    .quad isr_stub_\v
    .endr

    .bss
    .balign 16
stack_bottom:
    .skip 16384
stack_top:
    .section .note.GNU-stack, "", @progbits
