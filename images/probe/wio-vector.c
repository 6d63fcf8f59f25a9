/*
 * wio-vector.c: a freestanding riscv64 Linux program (raw system calls, no libc) that uses
 * the vector extension (RVV 1.0) the way compiled code does: strip-mined loops with
 * vsetvli over integer and floating-point arrays, a masked compare and vfirst, a widening
 * multiply-accumulate, a reduction, segment loads and a gather. It prints one line per
 * result (in hex, so no formatting library is needed) and its VLEN, and exits 0.
 * Built with -march=rv64gcv; the e2e test compares its lines with QEMU's user-mode run and
 * between two wio runs, and takes a snapshot in the middle of it.
 */
#include "wio-sys.h"

#define N 1000

static int a[N];
static float x[N], y[N];
static unsigned short h[N];
static unsigned char rgb[3 * 64];

static void put(const char *s) {
    i64 n = 0;
    while (s[n]) n++;
    sys6(SYS_write, 1, (i64)s, n, 0, 0, 0);
}

static void put_hex(const char *label, u64 v) {
    char buf[32];
    int i = 0;
    put(label);
    buf[i++] = '=';
    for (int s = 60; s >= 0; s -= 4) buf[i++] = "0123456789abcdef"[(v >> s) & 15];
    buf[i++] = '\n';
    buf[i] = 0;
    put(buf);
}

/* sum(a[i] * 3 + 1) over int32, strip-mined, m4. */
static u64 int_sum(void) {
    u64 n = N, vl;
    const int *p = a;
    long sum = 0;
    __asm__ volatile("vsetvli %0, %1, e32, m1, ta, ma\n vmv.v.i v24, 0" : "=r"(vl) : "r"(1L));
    while (n) {
        __asm__ volatile(
            "vsetvli %0, %2, e32, m4, ta, ma\n"
            "vle32.v v8, (%1)\n"
            "li t0, 3\n"
            "vmul.vx v8, v8, t0\n"
            "vadd.vi v8, v8, 1\n"
            "vredsum.vs v24, v8, v24\n"
            : "=&r"(vl)
            : "r"(p), "r"(n)
            : "t0", "memory");
        p += vl;
        n -= vl;
    }
    __asm__ volatile("vsetvli t0, zero, e32, m1, ta, ma\n vmv.x.s %0, v24" : "=r"(sum) : : "t0");
    return (u64)sum;
}

/* sum(x[i] * y[i]) in FP32 with vfmacc, then an ordered reduction. */
static u64 dot(void) {
    u64 n = N, vl;
    const float *px = x, *py = y;
    unsigned int bits;
    __asm__ volatile("vsetvli t0, zero, e32, m2, ta, ma\n vmv.v.i v16, 0" : : : "t0");
    while (n) {
        __asm__ volatile(
            "vsetvli %0, %3, e32, m2, tu, ma\n"
            "vle32.v v0, (%1)\n"
            "vle32.v v2, (%2)\n"
            "vfmacc.vv v16, v0, v2\n"
            : "=&r"(vl)
            : "r"(px), "r"(py), "r"(n)
            : "memory");
        px += vl;
        py += vl;
        n -= vl;
    }
    __asm__ volatile(
        "vsetvli t0, zero, e32, m2, ta, ma\n"
        "vmv.s.x v20, zero\n"
        "vfredosum.vs v20, v16, v20\n"
        "vfmv.f.s fa0, v20\n"
        "fmv.x.w %0, fa0\n"
        : "=r"(bits)
        :
        : "t0", "fa0");
    return bits;
}

/* The index of the first h[i] == 0x7777 (vmseq + vfirst), or all ones. */
static u64 find(void) {
    u64 n = N, vl, base = 0;
    long at;
    const unsigned short *p = h;
    while (n) {
        __asm__ volatile(
            "vsetvli %0, %2, e16, m8, ta, ma\n"
            "vle16.v v8, (%1)\n"
            "li t0, 0x7777\n"
            "vmseq.vx v0, v8, t0\n"
            "vfirst.m %3, v0\n"
            : "=&r"(vl), "+r"(p), "+r"(n), "=r"(at)
            :
            : "t0", "memory");
        if (at >= 0) return base + at;
        p += vl;
        n -= vl;
        base += vl;
    }
    return ~0UL;
}

/* Segment loads of RGB triples: sum of R + 2G + 4B over 64 pixels, widened to 16 bits. */
static u64 rgb_sum(void) {
    u64 sum;
    __asm__ volatile(
        "li t0, 64\n"
        "vsetvli t0, t0, e8, m1, ta, ma\n"
        "vlseg3e8.v v4, (%1)\n"
        "vwaddu.vv v8, v4, v5\n"
        "vsetvli zero, t0, e16, m2, ta, ma\n"
        "vzext.vf2 v12, v5\n"
        "vadd.vv v8, v8, v12\n"
        "vzext.vf2 v12, v6\n"
        "vsll.vi v12, v12, 2\n"
        "vadd.vv v8, v8, v12\n"
        "vmv.s.x v16, zero\n"
        "vredsum.vs v16, v8, v16\n"
        "vmv.x.s %0, v16\n"
        : "=r"(sum)
        : "r"(rgb)
        : "t0", "memory");
    return sum & 0xffff;
}

/* A gather: element i of the result is a[(i * 37) % 64] (0 past VLMAX), summed. */
static u64 gather(void) {
    long sum;
    __asm__ volatile(
        "li t0, 64\n"
        "vsetvli t0, t0, e32, m8, ta, ma\n"
        "vid.v v16\n"
        "li t1, 37\n"
        "vmul.vx v16, v16, t1\n"
        "li t1, 63\n"
        "vand.vx v16, v16, t1\n"
        "vle32.v v8, (%1)\n"
        "vrgather.vv v24, v8, v16\n"
        "vmv.s.x v0, zero\n"
        "vredsum.vs v0, v24, v0\n"
        "vmv.x.s %0, v0\n"
        : "=r"(sum)
        : "r"(a)
        : "t0", "t1", "memory");
    return (u64)sum;
}

void vector_main(void);
void vector_main(void) {
    u64 vlenb;
    for (int i = 0; i < N; i++) {
        a[i] = i * 7 - 300;
        x[i] = (float)i * 0.5f;
        y[i] = 1.0f / (float)(i + 1);
        h[i] = (unsigned short)(i * 13);
    }
    h[777] = 0x7777;
    for (int i = 0; i < 3 * 64; i++) rgb[i] = (unsigned char)(i * 5 + 1);
    __asm__ volatile("csrr %0, vlenb" : "=r"(vlenb));
    put_hex("vector: vlenb", vlenb);
    put_hex("vector: int_sum", int_sum());
    put_hex("vector: dot", dot());
    put_hex("vector: find", find());
    put_hex("vector: rgb_sum", rgb_sum());
    put_hex("vector: gather", gather());
    put("vector: done\n");
}

WIO_START(vector_main);
