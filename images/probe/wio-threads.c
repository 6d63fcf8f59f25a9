/*
 * wio-threads: a data race between two POSIX threads that lasts about 2 ms, under one
 * scheduler tick (4 ms at HZ=250), with sched_yield and 100 us sleeps inside: the short
 * race wio's CPU-timing noise must reach (a seed moves where the threads interleave).
 *
 *   wio-threads [RUN_US [YIELD_EVERY [SLEEP_EVERY [ITERS]]]]   (defaults 2000 5000 12000)
 *
 * Prints "threads: ready", waits 5 ms (a snapshot taken at that line falls before the
 * race), then starts two threads. Each adds 1 to a shared counter with a plain load and
 * store (no atomics) until RUN_US microseconds have passed since the start, calls
 * sched_yield every YIELD_EVERY additions and sleeps 100 us every SLEEP_EVERY (the second
 * thread offset by half a period). An update is lost wherever one thread is preempted
 * between its load and its store and the other runs meanwhile. At the end it prints
 * "threads: counter=N adds=A lost=L elapsed_us=E": N, the outcome, is how far the two
 * threads got and what they lost; A is how many additions they made. With ITERS (a multiple
 * of 64) each thread makes exactly ITERS additions instead, whatever the time: N shows only
 * what was lost. Built with glibc (-static -pthread) by images/initramfs.sh; the workload runs
 * it when booted with wio.threads=1 (or wio.threads=RUN_US,YIELD_EVERY,SLEEP_EVERY[,ITERS]).
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long counter;
static long run_us = 2000, yield_every = 5000, sleep_every = 12000, iters = 0;
static long start;
static long adds[2];

static long micros(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000L + t.tv_nsec / 1000;
}

static void *racer(void *arg) {
    long self = (long)arg, offset = self * (sleep_every / 2), i = 0;
    while (iters ? i < iters : micros() - start < run_us) {
        /* 64 additions between two looks at the clock (the vDSO reads the time CSR) */
        for (int k = 0; k < 64; k++) {
            i++;
            unsigned long v = counter;
            /* a little work between the load and the store, as real code has */
            for (volatile int w = 0; w < 2; w++) {
            }
            counter = v + 1;
            if ((i + offset) % yield_every == 0)
                sched_yield();
            if ((i + offset) % sleep_every == 0)
                usleep(100);
        }
    }
    adds[self] = i;
    return NULL;
}

int main(int argc, char **argv) {
    if (argc > 1) run_us = atol(argv[1]);
    if (argc > 2) yield_every = atol(argv[2]);
    if (argc > 3) sleep_every = atol(argv[3]);
    if (argc > 4) iters = atol(argv[4]);
    if (run_us < 1 || yield_every < 1 || sleep_every < 1 || iters < 0 || iters % 64) {
        printf("usage: wio-threads [RUN_US [YIELD_EVERY [SLEEP_EVERY [ITERS]]]] (each at least 1; ITERS a multiple of 64)\n");
        return 2;
    }
    printf("threads: ready\n");
    fflush(stdout);
    usleep(5000);
    start = micros();
    pthread_t a, b;
    if (pthread_create(&a, NULL, racer, (void *)0) || pthread_create(&b, NULL, racer, (void *)1)) {
        printf("threads: pthread_create failed\n");
        return 1;
    }
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    long elapsed = micros() - start;
    long total = adds[0] + adds[1];
    printf("threads: counter=%lu adds=%ld lost=%ld elapsed_us=%ld\n", counter, total,
           total - (long)counter, elapsed);
    return 0;
}
