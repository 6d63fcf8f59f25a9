/*
 * wio-probe: a tiny freestanding Linux program (no libc; riscv64 or x86-64) that prints
 * what a guest program observes of the nondeterminism wio controls:
 * getrandom(2) bytes, CLOCK_REALTIME / CLOCK_MONOTONIC, and the addresses
 * ASLR chose for its stack, heap (brk) and an anonymous mmap; on x86-64 also the
 * AT_RANDOM bytes the kernel gave it.
 * Built by images/initramfs.sh with the architecture's gcc.
 */
#include "wio-sys.h"


static char out[512];
static int len;

static void put(const char *s) { while (*s && len < (int)sizeof(out) - 1) out[len++] = *s++; }
static void hex(u64 v, int digits) {
    for (int i = digits - 1; i >= 0; i--) { if (len < (int)sizeof(out) - 1) out[len++] = "0123456789abcdef"[(v >> (4 * i)) & 15]; }
}
static void dec(u64 v) {
    char b[24]; int n = 0;
    do { b[n++] = (char)('0' + v % 10); v /= 10; } while (v);
    while (n) { if (len < (int)sizeof(out) - 1) out[len++] = b[--n]; }
}
/* Nanoseconds after the decimal point: always nine digits. */
static void nanos(u64 v) {
    for (u64 d = 100000000; d; d /= 10) { if (len < (int)sizeof(out) - 1) out[len++] = (char)('0' + (v / d) % 10); }
}
static void flush(void) { sys6(SYS_write, 1, (i64)out, len, 0, 0, 0); len = 0; }

struct timespec { i64 sec; i64 nsec; };

void probe_main(void) {
    unsigned char r[16];
    i64 got = sys6(SYS_getrandom, (i64)r, sizeof r, 0, 0, 0, 0);
    put("probe: getrandom:");
    for (int i = 0; i < (int)sizeof r; i++) { put(" "); hex(r[i], 2); }
    if (got != (i64)sizeof r) put(" (short)");
    put("\n");
    struct timespec rt, mono;
    sys6(SYS_clock_gettime, 0, (i64)&rt, 0, 0, 0, 0);
    sys6(SYS_clock_gettime, 1, (i64)&mono, 0, 0, 0, 0);
    put("probe: realtime: "); dec((u64)rt.sec); put("."); nanos((u64)rt.nsec);
    put(" monotonic: "); dec((u64)mono.sec); put("."); nanos((u64)mono.nsec); put("\n");
    int local = 0;
    u64 brk = (u64)sys6(SYS_brk, 0, 0, 0, 0, 0, 0);
    u64 map = (u64)sys6(SYS_mmap, 0, 4096, 3 /* RW */, 0x22 /* PRIVATE|ANON */, -1, 0);
    put("probe: stack: "); hex((u64)&local, 16);
    put(" brk: "); hex(brk, 16);
    put(" mmap: "); hex(map, 16); put("\n");
    flush();
}

#if defined(__x86_64__)
/* x86-64 first prints the 16 bytes the kernel left at AT_RANDOM (auxv entry 25, past argv
 * and the environment): what libc seeds its stack guard and pointer mangling from. */
int probe_main_auxv(i64 argc, char **argv) {
    char **p = argv + argc + 1;
    while (*p) p++;
    for (u64 *aux = (u64 *)(p + 1); aux[0]; aux += 2) {
        if (aux[0] == 25) {
            const unsigned char *r = (const unsigned char *)aux[1];
            put("probe: at_random:");
            for (int i = 0; i < 16; i++) { put(" "); hex(r[i], 2); }
            put("\n");
        }
    }
    probe_main();
    return 0;
}
WIO_START_MAIN(probe_main_auxv);
#else
WIO_START(probe_main);
#endif
