/*
 * wio-bank: a lost-update race that breaks a promise only under some seeds. Two processes
 * share two accounts (a MAP_SHARED page); one moves 1 from A to B, the other from B to A,
 * N times each, with a plain read-read-write-write (no atomics) and then K iterations of
 * other work. Money is lost or made only when a process is preempted inside those few
 * instructions while the other moves money: where the timer interrupts land, which
 * wio's CPU-timing noise makes a function of the seed.
 *
 * Promises (wio-sdk.h): always "money is conserved" (A + B at the end), reachable "both
 * workers finished"; setup is declared complete before the workers start (the branch
 * point). Prints "bank: start", then "bank: A=.. B=.. total=.. of ..".
 * Usage: wio-bank [N [K]] (default 100000 300). Freestanding.
 */
#include "wio-sdk.h"

#define SIGCHLD 17
#define START 1000000000UL

static void say(const char *s) {
    u64 n = 0;
    while (s[n]) n++;
    sys6(WIO_SYS_write, 1, (i64)s, (i64)n, 0, 0, 0);
}

static char *dec(char *p, u64 v) {
    char b[24];
    int n = 0;
    do { b[n++] = (char)('0' + v % 10); v /= 10; } while (v);
    while (n) *p++ = b[--n];
    return p;
}

static u64 num(const char *s, u64 dflt) {
    if (!s) return dflt;
    u64 v = 0;
    for (; *s >= '0' && *s <= '9'; s++) v = v * 10 + (u64)(*s - '0');
    return v ? v : dflt;
}

static void work(volatile u64 *acct, int from, u64 n, u64 k) {
    for (u64 i = 0; i < n; i++) {
        u64 x = acct[from];
        u64 y = acct[1 - from];
        acct[from] = x - 1;
        acct[1 - from] = y + 1;
        for (volatile u64 j = 0; j < k; j++) {
        }
    }
}

int bank_main(int argc, char **argv) {
    u64 n = num(argc > 1 ? argv[1] : 0, 100000);
    u64 k = num(argc > 2 ? argv[2] : 0, 300);
    wio_register(WIO_ALWAYS, "money is conserved");
    wio_register(WIO_REACHABLE, "both workers finished");
    volatile u64 *acct = (volatile u64 *)sys6(SYS_mmap, 0, 4096, 3 /* RW */, 0x21 /* SHARED|ANON */, -1, 0);
    if ((i64)acct < 0) { say("bank: mmap failed\n"); return 1; }
    acct[0] = START;
    acct[1] = START;
    wio_setup_complete();
    say("bank: start\n");
    i64 pid = sys6(SYS_clone, SIGCHLD, 0, 0, 0, 0, 0);
    if (pid < 0) { say("bank: fork failed\n"); return 1; }
    work(acct, pid == 0 ? 0 : 1, n, k);
    if (pid == 0) sys6(SYS_exit, 0, 0, 0, 0, 0, 0);
    sys6(SYS_wait4, pid, 0, 0, 0, 0, 0);
    u64 a = acct[0], b = acct[1];
    char details[128], *p = details;
    const char *s1 = "{\"a\":";
    while (*s1) *p++ = *s1++;
    p = dec(p, a);
    const char *s2 = ",\"b\":";
    while (*s2) *p++ = *s2++;
    p = dec(p, b);
    *p++ = '}';
    *p = 0;
    wio_assert(WIO_REACHABLE, "both workers finished", 1, 0);
    wio_assert(WIO_ALWAYS, "money is conserved", a + b == 2 * START, details);
    char line[160], *q = line;
    const char *h = "bank: A=";
    while (*h) *q++ = *h++;
    q = dec(q, a);
    const char *h2 = " B=";
    while (*h2) *q++ = *h2++;
    q = dec(q, b);
    const char *h3 = " total=";
    while (*h3) *q++ = *h3++;
    q = dec(q, a + b);
    const char *h4 = " of ";
    while (*h4) *q++ = *h4++;
    q = dec(q, 2 * START);
    *q++ = '\n';
    *q = 0;
    say(line);
    return 0;
}

WIO_START_MAIN(bank_main);
