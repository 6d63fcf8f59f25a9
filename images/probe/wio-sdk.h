/*
 * wio-sdk.h: promises and seeded randomness for freestanding riscv64 guest programs (no
 * libc; raw system calls from wio-sys.h). wio checks the promises on every run and every
 * explored seed (see README, "Promises").
 *
 * The channel is wio's virtio-console with two named ports: "wio.sdk" takes one JSON
 * object per line, in the Antithesis SDK protocol ({"antithesis_assert": {...}},
 * {"antithesis_setup": {...}}, {"NAME": details}); "wio.random" answers every write of n
 * bytes with n bytes drawn from the run's seed. The guest's /init links them as
 * /dev/wio.sdk and /dev/wio.random (udev systems have /dev/virtio-ports/wio.sdk).
 *
 *   wio_register(WIO_ALWAYS, "money is conserved");        at start: the catalogue
 *   wio_assert(WIO_ALWAYS, "money is conserved", a + b == total, "{\"a\":1}");
 *   wio_setup_complete();                                  the natural branch point
 *   u64 r = wio_random_u64();                              from the seed
 */
#ifndef WIO_SDK_H
#define WIO_SDK_H

#include "wio-sys.h"

/* Helpers a program may not all use. */
#define WIO_FN static __attribute__((unused))

#define WIO_SYS_read SYS_read
#define WIO_SYS_write SYS_write
#define WIO_SYS_openat SYS_openat
#define WIO_SYS_close SYS_close
#define WIO_AT_FDCWD (-100)
#define WIO_O_RDWR 2

/* Promise kinds, as the Antithesis catalogue names them. */
enum wio_kind {
    WIO_ALWAYS,                /* true every time it is evaluated; must be reached */
    WIO_ALWAYS_OR_UNREACHABLE, /* true every time; may never be reached */
    WIO_SOMETIMES,             /* true at least once */
    WIO_REACHABLE,             /* reached at least once */
    WIO_UNREACHABLE,           /* never reached */
};

static const char *wio_kind_type[] = {"always", "always", "sometimes", "reachability", "reachability"};
static const char *wio_kind_display[] = {"Always", "AlwaysOrUnreachable", "Sometimes", "Reachable", "Unreachable"};
static const int wio_kind_must_hit[] = {1, 0, 1, 1, 0};

/* The compiler may call these for struct copies and initializers; no libc provides them. */
__attribute__((weak)) void *memset(void *d, int c, unsigned long n) {
    unsigned char *p = d;
    while (n--) *p++ = (unsigned char)c;
    return d;
}
__attribute__((weak)) void *memcpy(void *d, const void *s, unsigned long n) {
    unsigned char *p = d;
    const unsigned char *q = s;
    while (n--) *p++ = *q++;
    return d;
}

WIO_FN i64 wio_open(const char *a, const char *b) {
    i64 fd = sys6(WIO_SYS_openat, WIO_AT_FDCWD, (i64)a, WIO_O_RDWR, 0, 0, 0);
    if (fd < 0 && b) fd = sys6(WIO_SYS_openat, WIO_AT_FDCWD, (i64)b, WIO_O_RDWR, 0, 0, 0);
    return fd;
}

static i64 wio_sdk_fd = -1;
static i64 wio_random_fd = -1;

/* A line being built; one write per line (lines longer than this are cut). */
struct wio_line {
    char b[4096];
    u64 n;
};

WIO_FN void wio_put(struct wio_line *l, const char *s) {
    while (*s && l->n < sizeof l->b - 2) l->b[l->n++] = *s++;
}

/* s as a JSON string (quotes, backslashes and control characters escaped). */
WIO_FN void wio_put_str(struct wio_line *l, const char *s) {
    static const char hex[] = "0123456789abcdef";
    wio_put(l, "\"");
    for (; *s && l->n < sizeof l->b - 8; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            l->b[l->n++] = '\\';
            l->b[l->n++] = (char)c;
        } else if (c < 0x20) {
            char e[7] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15], 0};
            wio_put(l, e);
        } else {
            l->b[l->n++] = (char)c;
        }
    }
    wio_put(l, "\"");
}

/* Sends a finished line; returns 0, or -1 when there is no channel (not under wio). */
WIO_FN int wio_send(struct wio_line *l) {
    if (wio_sdk_fd < 0) wio_sdk_fd = wio_open("/dev/wio.sdk", "/dev/virtio-ports/wio.sdk");
    if (wio_sdk_fd < 0) return -1;
    l->b[l->n++] = '\n';
    return sys6(WIO_SYS_write, wio_sdk_fd, (i64)l->b, (i64)l->n, 0, 0, 0) == (i64)l->n ? 0 : -1;
}

WIO_FN int wio_assert_line(enum wio_kind k, const char *message, int hit, int cond, const char *details) {
    struct wio_line l;
    l.n = 0;
    wio_put(&l, "{\"antithesis_assert\":{\"id\":");
    wio_put_str(&l, message);
    wio_put(&l, ",\"message\":");
    wio_put_str(&l, message);
    wio_put(&l, ",\"assert_type\":\"");
    wio_put(&l, wio_kind_type[k]);
    wio_put(&l, "\",\"display_type\":\"");
    wio_put(&l, wio_kind_display[k]);
    wio_put(&l, "\",\"must_hit\":");
    wio_put(&l, wio_kind_must_hit[k] ? "true" : "false");
    wio_put(&l, ",\"hit\":");
    wio_put(&l, hit ? "true" : "false");
    wio_put(&l, ",\"condition\":");
    wio_put(&l, cond ? "true" : "false");
    wio_put(&l, ",\"details\":");
    wio_put(&l, details && *details ? details : "null");
    wio_put(&l, "}}");
    return wio_send(&l);
}

/* Registers a promise (the catalogue: a promise never reached can then fail). */
WIO_FN int wio_register(enum wio_kind k, const char *message) {
    return wio_assert_line(k, message, 0, 0, 0);
}

/* Evaluates a promise. For WIO_REACHABLE pass cond = 1, for WIO_UNREACHABLE cond = 0
 * (reaching it is the failure). details: a JSON value or 0. */
WIO_FN int wio_assert(enum wio_kind k, const char *message, int cond, const char *details) {
    if (k == WIO_REACHABLE) cond = 1;
    if (k == WIO_UNREACHABLE) cond = 0;
    return wio_assert_line(k, message, 1, cond, details);
}

/* Setup is complete: the natural point to snapshot and branch. */
WIO_FN int wio_setup_complete(void) {
    struct wio_line l;
    l.n = 0;
    wio_put(&l, "{\"antithesis_setup\":{\"status\":\"complete\",\"details\":null}}");
    return wio_send(&l);
}

/* An event: {"name": details}. */
WIO_FN int wio_event(const char *name, const char *details) {
    struct wio_line l;
    l.n = 0;
    wio_put(&l, "{");
    wio_put_str(&l, name);
    wio_put(&l, ":");
    wio_put(&l, details && *details ? details : "null");
    wio_put(&l, "}");
    return wio_send(&l);
}

/* Coverage edge `edge` of `module`, as wio's libvoidstar.so reports an instrumented
 * program's notify_coverage: {"wio_coverage":{"module":MODULE,"edge":N}}. */
WIO_FN int wio_coverage_edge(const char *module, u64 edge) {
    struct wio_line l;
    char digits[21];
    int i = 20;
    digits[i] = 0;
    do {
        digits[--i] = (char)('0' + edge % 10);
        edge /= 10;
    } while (edge && i > 0);
    l.n = 0;
    wio_put(&l, "{\"wio_coverage\":{\"module\":");
    wio_put_str(&l, module);
    wio_put(&l, ",\"edge\":");
    wio_put(&l, digits + i);
    wio_put(&l, "}}");
    return wio_send(&l);
}

/* n bytes from the run's seed; returns 0, or -1 when there is no channel. */
WIO_FN int wio_random_bytes(void *out, u64 n) {
    if (wio_random_fd < 0) wio_random_fd = wio_open("/dev/wio.random", "/dev/virtio-ports/wio.random");
    if (wio_random_fd < 0) return -1;
    if (sys6(WIO_SYS_write, wio_random_fd, (i64)out, (i64)n, 0, 0, 0) != (i64)n) return -1;
    u64 got = 0;
    while (got < n) {
        i64 r = sys6(WIO_SYS_read, wio_random_fd, (i64)out + (i64)got, (i64)(n - got), 0, 0, 0);
        if (r <= 0) return -1;
        got += (u64)r;
    }
    return 0;
}

WIO_FN u64 wio_random_u64(void) {
    u64 v = 0;
    wio_random_bytes(&v, sizeof v);
    return v;
}

#endif
