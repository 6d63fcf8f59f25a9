/*
 * wio-assert: promises from shell scripts (and wio-random: seeded random numbers), over
 * wio's promise channel (wio-sdk.h). Freestanding (raw system calls).
 *
 *   wio-assert always|always-or-unreachable|sometimes MESSAGE true|false [DETAILS_JSON]
 *   wio-assert reachable|unreachable MESSAGE [DETAILS_JSON]
 *   wio-assert register KIND MESSAGE          the catalogue: register at start
 *   wio-assert setup-complete                 setup is done (the branch point)
 *   wio-assert event NAME [DETAILS_JSON]
 *   wio-random [N]                            N (default 1) random u64s from the seed, in decimal
 *
 * Exit status: 0 sent, 1 no channel (not under wio), 2 bad usage.
 */
#include "wio-sdk.h"


static int eq(const char *a, const char *b) {
    while (*a && *a == *b) a++, b++;
    return *a == *b;
}

static void out(const char *s) {
    u64 n = 0;
    while (s[n]) n++;
    sys6(WIO_SYS_write, 2, (i64)s, (i64)n, 0, 0, 0);
}

static void usage(void) {
    out("usage: wio-assert always|always-or-unreachable|sometimes MESSAGE true|false [DETAILS_JSON]\n"
        "       wio-assert reachable|unreachable MESSAGE [DETAILS_JSON]\n"
        "       wio-assert register KIND MESSAGE\n"
        "       wio-assert setup-complete\n"
        "       wio-assert event NAME [DETAILS_JSON]\n"
        "       wio-random [N]\n");
    sys6(SYS_exit, 2, 0, 0, 0, 0, 0);
}

static int kind_of(const char *s) {
    static const char *names[] = {"always", "always-or-unreachable", "sometimes", "reachable", "unreachable"};
    for (int i = 0; i < 5; i++)
        if (eq(s, names[i])) return i;
    return -1;
}

static const char *base(const char *p) {
    const char *b = p;
    for (; *p; p++)
        if (*p == '/') b = p + 1;
    return b;
}

static int random_main(int argc, char **argv) {
    u64 n = 1;
    if (argc > 1) {
        n = 0;
        for (const char *p = argv[1]; *p; p++) {
            if (*p < '0' || *p > '9' || n > 100000) usage();
            n = n * 10 + (u64)(*p - '0');
        }
    }
    for (u64 i = 0; i < n; i++) {
        u64 v;
        if (wio_random_bytes(&v, sizeof v) != 0) {
            out("wio-random: no wio.random channel (not running under wio?)\n");
            return 1;
        }
        char b[24], o[24];
        int k = 0;
        do { b[k++] = (char)('0' + v % 10); v /= 10; } while (v);
        for (int j = 0; j < k; j++) o[j] = b[k - 1 - j];
        o[k++] = '\n';
        sys6(WIO_SYS_write, 1, (i64)o, k, 0, 0, 0);
    }
    return 0;
}

static int assert_main(int argc, char **argv) {
    if (argc < 2) usage();
    const char *cmd = argv[1];
    int r;
    if (eq(cmd, "setup-complete")) {
        r = wio_setup_complete();
    } else if (eq(cmd, "event")) {
        if (argc < 3) usage();
        r = wio_event(argv[2], argc > 3 ? argv[3] : 0);
    } else if (eq(cmd, "register")) {
        if (argc < 4 || kind_of(argv[2]) < 0) usage();
        r = wio_register((enum wio_kind)kind_of(argv[2]), argv[3]);
    } else {
        int k = kind_of(cmd);
        if (k < 0 || argc < 3) usage();
        int cond = 1;
        const char *details = 0;
        if (k == WIO_REACHABLE || k == WIO_UNREACHABLE) {
            details = argc > 3 ? argv[3] : 0;
        } else {
            if (argc < 4) usage();
            if (eq(argv[3], "true")) cond = 1;
            else if (eq(argv[3], "false")) cond = 0;
            else usage();
            details = argc > 4 ? argv[4] : 0;
        }
        r = wio_assert((enum wio_kind)k, argv[2], cond, details);
    }
    if (r != 0) {
        out("wio-assert: no wio.sdk channel (not running under wio?)\n");
        return 1;
    }
    return 0;
}

int main_c(int argc, char **argv) {
    if (eq(base(argv[0]), "wio-random")) return random_main(argc, argv);
    return assert_main(argc, argv);
}

WIO_START_MAIN(main_c);
