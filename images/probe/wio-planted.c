/*
 * wio-planted: a bug planted behind DEPTH successive rare events, each a 1-in-16 choice,
 * for measuring how deep a search reaches (`wio bench --search`, the guided-exploration
 * tests). Flat exploration needs about 16^DEPTH branches to reach it.
 *
 *   wio-planted sdk DEPTH     each choice is a number from wio.random (the SDK's random
 *                             numbers); a `sometimes` promise "planted stage K" at each stage
 *   wio-planted blind DEPTH   the same choices with no stage promises (only code coverage
 *                             shows progress)
 *   wio-planted edges DEPTH   the same choices; each stage passed reports a coverage edge
 *                             as a program instrumented for the SDK does (notify_coverage,
 *                             here written straight to the channel: this program is static)
 *   wio-planted timing DEPTH  no SDK: a stage advances when the microseconds of
 *                             CLOCK_MONOTONIC after a 50 ms sleep are 0 mod 16
 *
 * sdk, blind and edges register an `always` promise "planted bug not reached" and declare setup
 * complete before the first choice (the branch point); every form prints "planted: start"
 * there and, at the end, "planted: BUG reached" or "planted: stopped" (no stage number: the
 * console shows no progress). Exit status 0 either way (the promise, or --fail-on 'planted:
 * BUG', is what fails). Freestanding (raw system calls).
 */
#include "wio-sdk.h"

static void say(const char *s) {
    u64 n = 0;
    while (s[n]) n++;
    sys6(WIO_SYS_write, 1, (i64)s, (i64)n, 0, 0, 0);
}

static int eq(const char *a, const char *b) {
    while (*a && *a == *b) a++, b++;
    return *a == *b;
}

struct timespec_ {
    i64 sec;
    i64 nsec;
};

/* The microseconds of CLOCK_MONOTONIC after a 50 ms sleep. */
static u64 after_sleep(void) {
    struct timespec_ d = {0, 50000000};
    sys6(SYS_nanosleep, (i64)&d, 0, 0, 0, 0, 0);
    struct timespec_ t = {0, 0};
    sys6(SYS_clock_gettime, 1 /* CLOCK_MONOTONIC */, (i64)&t, 0, 0, 0, 0);
    return (u64)t.nsec / 1000;
}

int planted_main(int argc, char **argv) {
    if (argc < 3 || argv[2][0] < '1' || argv[2][0] > '8' || argv[2][1]) {
        say("usage: wio-planted sdk|blind|edges|timing DEPTH (1 to 8)\n");
        return 2;
    }
    const char *form = argv[1];
    int sdk = eq(form, "sdk"), blind = eq(form, "blind"), timing = eq(form, "timing");
    int edges = eq(form, "edges");
    if (!sdk && !blind && !timing && !edges) {
        say("wio-planted: the form is sdk, blind, edges or timing\n");
        return 2;
    }
    int depth = argv[2][0] - '0';
    if (!timing) {
        wio_register(WIO_ALWAYS, "planted bug not reached");
        wio_setup_complete();
    }
    say("planted: start\n");
    int stage = 0;
    char message[] = "planted stage 0";
    for (int k = 1; k <= depth; k++) {
        u64 v = timing ? after_sleep() : wio_random_u64();
        if (v % 16 != 0) break;
        stage = k;
        if (sdk) {
            message[sizeof message - 2] = (char)('0' + k);
            wio_assert(WIO_SOMETIMES, message, 1, 0);
        }
        if (edges) wio_coverage_edge("wio-planted", (u64)k);
    }
    if (!timing) wio_assert(WIO_ALWAYS, "planted bug not reached", stage < depth, 0);
    say(stage == depth ? "planted: BUG reached\n" : "planted: stopped\n");
    return 0;
}

WIO_START_MAIN(planted_main);
