/*
 * wio-sys.h: what the freestanding probe programs share: integer types, Linux system call
 * numbers, one raw system call with up to six arguments, and the _start entry points. No
 * libc. For riscv64 (ecall) and x86-64 (syscall).
 */
#ifndef WIO_SYS_H
#define WIO_SYS_H

typedef unsigned long u64;
typedef long i64;

#if defined(__riscv)
/* The generic system call table (asm-generic/unistd.h). */
#define SYS_read 63
#define SYS_write 64
#define SYS_openat 56
#define SYS_close 57
#define SYS_exit 93
#define SYS_nanosleep 101
#define SYS_clock_gettime 113
#define SYS_brk 214
#define SYS_clone 220
#define SYS_mmap 222
#define SYS_wait4 260
#define SYS_getrandom 278

static i64 sys6(i64 n, i64 a, i64 b, i64 c, i64 d, i64 e, i64 f) {
    register i64 a0 __asm__("a0") = a;
    register i64 a1 __asm__("a1") = b;
    register i64 a2 __asm__("a2") = c;
    register i64 a3 __asm__("a3") = d;
    register i64 a4 __asm__("a4") = e;
    register i64 a5 __asm__("a5") = f;
    register i64 a7 __asm__("a7") = n;
    __asm__ volatile("ecall" : "+r"(a0) : "r"(a1), "r"(a2), "r"(a3), "r"(a4), "r"(a5), "r"(a7) : "memory");
    return a0;
}

/* _start calls FN(void) and exits 0. */
#define WIO_START(fn) \
    __asm__(".globl _start\n_start:\n  call " #fn "\n  li a0, 0\n  li a7, 93\n  ecall\n")
/* _start calls FN(argc, argv) (argc at sp, argv after it) and exits with what it returns. */
#define WIO_START_MAIN(fn) \
    __asm__(".globl _start\n_start:\n  ld a0, 0(sp)\n  addi a1, sp, 8\n  call " #fn "\n  li a7, 93\n  ecall\n")

#elif defined(__x86_64__)
/* arch/x86/entry/syscalls/syscall_64.tbl */
#define SYS_read 0
#define SYS_write 1
#define SYS_openat 257
#define SYS_close 3
#define SYS_exit 60
#define SYS_nanosleep 35
#define SYS_clock_gettime 228
#define SYS_brk 12
#define SYS_clone 56
#define SYS_mmap 9
#define SYS_wait4 61
#define SYS_getrandom 318

static i64 sys6(i64 n, i64 a, i64 b, i64 c, i64 d, i64 e, i64 f) {
    register i64 r10 __asm__("r10") = d;
    register i64 r8 __asm__("r8") = e;
    register i64 r9 __asm__("r9") = f;
    i64 ret;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    return ret;
}

/* The TSC as the program sees it (under wio's small kernel: trapped, the virtual TSC). */
static u64 wio_rdtsc(void) {
    unsigned int lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return lo | ((u64)hi << 32);
}

#define WIO_START(fn) \
    __asm__(".globl _start\n_start:\n  and $-16, %rsp\n  call " #fn "\n  xor %edi, %edi\n" \
            "  mov $60, %eax\n  syscall\n")
#define WIO_START_MAIN(fn) \
    __asm__(".globl _start\n_start:\n  mov (%rsp), %rdi\n  lea 8(%rsp), %rsi\n  and $-16, %rsp\n" \
            "  call " #fn "\n  mov %eax, %edi\n  mov $60, %eax\n  syscall\n")
#else
#error "wio-sys.h: riscv64 or x86-64 only"
#endif

#endif
