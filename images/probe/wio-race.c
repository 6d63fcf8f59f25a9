/*
 * wio-race: a data race with no I/O in it. Two processes share one counter (a
 * MAP_SHARED page) and each adds 1 to it ITERS times with a plain load and store, no
 * atomics. On one CPU an update is lost whenever a process is preempted between its
 * load and its store, so the final count depends only on where the timer interrupts
 * land: exactly what wio's CPU-timing noise (--sched-noise) lets a seed move.
 * Prints "race: start", then "race: counter=N of M". Freestanding (raw system calls).
 * Built by images/initramfs.sh; the workload runs it when booted with wio.race=1.
 */
#include "wio-sys.h"

#define SIGCHLD 17
#define ITERS 10000000UL

static void write_str(const char *s) {
    u64 n = 0;
    while (s[n]) n++;
    sys6(SYS_write, 1, (i64)s, (i64)n, 0, 0, 0);
}

static void write_dec(u64 v) {
    char b[24];
    int n = 0;
    do { b[n++] = (char)('0' + v % 10); v /= 10; } while (v);
    char out[24];
    for (int i = 0; i < n; i++) out[i] = b[n - 1 - i];
    sys6(SYS_write, 1, (i64)out, n, 0, 0, 0);
}

static void add(volatile u64 *counter) {
    for (u64 i = 0; i < ITERS; i++) {
        u64 v = *counter;
        *counter = v + 1;
    }
}

void race_main(void) {
    volatile u64 *counter = (volatile u64 *)sys6(SYS_mmap, 0, 4096, 3 /* RW */, 0x21 /* SHARED|ANON */, -1, 0);
    if ((i64)counter < 0) { write_str("race: mmap failed\n"); sys6(SYS_exit, 1, 0, 0, 0, 0, 0); }
    write_str("race: start\n");
    i64 pid = sys6(SYS_clone, SIGCHLD, 0, 0, 0, 0, 0);
    if (pid < 0) { write_str("race: fork failed\n"); sys6(SYS_exit, 1, 0, 0, 0, 0, 0); }
    add(counter);
    if (pid == 0) sys6(SYS_exit, 0, 0, 0, 0, 0, 0);
    sys6(SYS_wait4, pid, 0, 0, 0, 0, 0);
    write_str("race: counter=");
    write_dec(*counter);
    write_str(" of ");
    write_dec(2 * ITERS);
    write_str("\n");
}

WIO_START(race_main);
