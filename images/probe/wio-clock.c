/*
 * wio-clock: what a guest program's clocks say across a one-second sleep. Reads
 * CLOCK_MONOTONIC and the CPU's counter (x86-64: RDTSC, which wio's small kernel traps and
 * serves from the virtual TSC; riscv64: the time CSR), sleeps one second (nanosleep), reads
 * both again and prints
 *   clock: tsc: T0 monotonic: M0
 *   clock: slept 1 s: monotonic +D ns, tsc +K ticks
 * Freestanding (raw system calls). Built by images/initramfs.sh; the x86-64 workload runs it.
 */
#include "wio-sys.h"

static char out[256];
static int len;

static void put(const char *s) { while (*s && len < (int)sizeof(out) - 1) out[len++] = *s++; }
static void dec(u64 v) {
    char b[24]; int n = 0;
    do { b[n++] = (char)('0' + v % 10); v /= 10; } while (v);
    while (n) { if (len < (int)sizeof(out) - 1) out[len++] = b[--n]; }
}
static void flush(void) { sys6(SYS_write, 1, (i64)out, len, 0, 0, 0); len = 0; }

struct timespec { i64 sec; i64 nsec; };

static u64 counter(void) {
#if defined(__x86_64__)
    return wio_rdtsc();
#else
    u64 t;
    __asm__ volatile("rdtime %0" : "=r"(t));
    return t;
#endif
}

static u64 mono_ns(void) {
    struct timespec t;
    sys6(SYS_clock_gettime, 1, (i64)&t, 0, 0, 0, 0);
    return (u64)t.sec * 1000000000UL + (u64)t.nsec;
}

void clock_main(void) {
    u64 c0 = counter();
    u64 m0 = mono_ns();
    put("clock: tsc: "); dec(c0); put(" monotonic: "); dec(m0); put("\n");
    flush();
    struct timespec one = { 1, 0 };
    sys6(SYS_nanosleep, (i64)&one, 0, 0, 0, 0, 0);
    u64 m1 = mono_ns();
    u64 c1 = counter();
    put("clock: slept 1 s: monotonic +"); dec(m1 - m0); put(" ns, tsc +"); dec(c1 - c0); put(" ticks\n");
    flush();
}

WIO_START(clock_main);
