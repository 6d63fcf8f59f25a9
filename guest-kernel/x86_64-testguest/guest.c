/*
 * wio x86-64 test guest: a freestanding ring-0 program that exercises the
 * machine wio emulates (8259 PIC, 8254 PIT, CMOS RTC, COM1, paravirt clock,
 * debug-exit) and prints every time value it observes plus a checksum.
 *
 * Rules it keeps so it runs under any KVM, including emulated ring 0 (PVM):
 * no SSE (built with -mgeneral-regs-only), no software interrupts, no RDTSC
 * (time comes from the paravirt port), as few instructions as possible.
 *
 * Command line (from boot_params): "bench=N" runs N port writes and exits,
 * "idle=S" sleeps S virtual seconds and exits, "spin" loops without exits
 * (to prove wio's watchdog), "fault" triple-faults on purpose, "status=N"
 * exits with status N after the normal tests, "snap" asks wio for a snapshot
 * (paravirt selector 4) after the CPUID report.
 */
#include <stdint.h>

#define COM1 0x3f8
#define PIC1_CMD 0x20
#define PIC1_DATA 0x21
#define PIC2_CMD 0xa0
#define PIC2_DATA 0xa1
#define PIT_CH0 0x40
#define PIT_CMD 0x43
#define RTC_INDEX 0x70
#define RTC_DATA 0x71
#define DEBUG_EXIT 0x501
#define PV_SELECT 0x510
#define PV_LOW 0x514
#define PV_HIGH 0x518
#define PV_NS 0
#define PV_TSC 1
#define PV_TSC_HZ 2
#define PV_ENTROPY 3
#define PV_SNAPSHOT_HERE 4
#define POST_PORT 0x80
#define PIT_HZ 1193182ULL
#define IRQ_BASE 32

typedef uint64_t u64;
typedef uint32_t u32;
typedef uint16_t u16;
typedef uint8_t u8;

static inline void outb(u16 port, u8 v) { __asm__ volatile("outb %0, %1" : : "a"(v), "Nd"(port)); }
static inline void outl(u16 port, u32 v) { __asm__ volatile("outl %0, %1" : : "a"(v), "Nd"(port)); }
static inline u8 inb(u16 port) { u8 v; __asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port)); return v; }
static inline u32 inl(u16 port) { u32 v; __asm__ volatile("inl %1, %0" : "=a"(v) : "Nd"(port)); return v; }
static inline void cli(void) { __asm__ volatile("cli" ::: "memory"); }
/* sti; hlt is atomic: the interrupt shadow of sti covers hlt, so no tick is lost. */
static inline void sti_hlt(void) { __asm__ volatile("sti; hlt" ::: "memory"); }

void *memset(void *d, int c, unsigned long n) { u8 *p = d; while (n--) *p++ = (u8)c; return d; }
void *memcpy(void *d, const void *s, unsigned long n) { u8 *p = d; const u8 *q = s; while (n--) *p++ = *q++; return d; }

/* ---- console ---- */
static void putc_(char c) { outb(COM1, (u8)c); }
static void puts_(const char *s) { while (*s) putc_(*s++); }
static void putu(u64 v) {
    char buf[24]; int i = 0;
    do { buf[i++] = (char)('0' + v % 10); v /= 10; } while (v);
    while (i) putc_(buf[--i]);
}
static void puthex(u64 v, int digits) {
    for (int i = digits - 1; i >= 0; i--) putc_("0123456789abcdef"[(v >> (i * 4)) & 0xf]);
}

/* ---- checksum over every observed value (FNV-1a 64) ---- */
static u64 checksum = 0xcbf29ce484222325ULL;
static void mix(u64 v) {
    for (int i = 0; i < 8; i++) { checksum ^= (v >> (i * 8)) & 0xff; checksum *= 0x100000001b3ULL; }
}
/* Print "name=value" and fold the value into the checksum. */
static void report(const char *name, u64 v) { puts_(name); putc_('='); putu(v); putc_(' '); mix(v); }

static void guest_exit(u32 status) {
    outl(DEBUG_EXIT, status);
    for (;;) { cli(); __asm__ volatile("hlt"); }
}

/* ---- paravirt clock ---- */
static u64 pv_read(u32 what) {
    outl(PV_SELECT, what);
    u64 lo = inl(PV_LOW);
    u64 hi = inl(PV_HIGH);
    return lo | (hi << 32);
}

/* ---- interrupts ---- */
struct idt_entry { u16 off0, sel; u8 ist, attr; u16 off1; u32 off2, zero; } __attribute__((packed));
static struct idt_entry idt[48] __attribute__((aligned(16)));
/* With auto_eoi the PIC ends each interrupt itself, saving the EOI port write:
 * one exit per timer tick instead of two, and IRQ 0 goes to isr_fast_tick
 * (the idle benchmark uses it). */
static int auto_eoi;
extern const u64 isr_stubs[48];
static volatile u64 irq_count[16];
volatile u64 pit_ticks; /* also counted by isr_fast_tick in entry.S */
extern void isr_fast_tick(void);

static void idt_init(void) {
    u16 cs; __asm__ volatile("mov %%cs, %0" : "=r"(cs));
    for (int v = 0; v < 48; v++) {
        u64 a = isr_stubs[v];
        idt[v].off0 = (u16)a; idt[v].sel = cs; idt[v].ist = 0; idt[v].attr = 0x8e;
        idt[v].off1 = (u16)(a >> 16); idt[v].off2 = (u32)(a >> 32); idt[v].zero = 0;
    }
    if (auto_eoi) {
        u64 a = (u64)isr_fast_tick;
        idt[IRQ_BASE].off0 = (u16)a; idt[IRQ_BASE].off1 = (u16)(a >> 16); idt[IRQ_BASE].off2 = (u32)(a >> 32);
    }
    struct { u16 limit; u64 base; } __attribute__((packed)) idtr = { sizeof(idt) - 1, (u64)idt };
    __asm__ volatile("lidt %0" : : "m"(idtr));
}

static void pic_init(void) {
    outb(PIC1_CMD, 0x11); outb(PIC2_CMD, 0x11);          /* ICW1: edge, cascade, ICW4 */
    outb(PIC1_DATA, IRQ_BASE); outb(PIC2_DATA, IRQ_BASE + 8); /* ICW2: vector bases */
    outb(PIC1_DATA, 0x04); outb(PIC2_DATA, 0x02);        /* ICW3: slave on IRQ2 */
    outb(PIC1_DATA, auto_eoi ? 0x03 : 0x01); outb(PIC2_DATA, 0x01); /* ICW4: 8086 mode (+AEOI) */
    outb(PIC1_DATA, 0xfe); outb(PIC2_DATA, 0xff);        /* OCW1: only IRQ0 unmasked */
}

/* ---- virtio-rng at wio's first virtio-mmio slot ---- */
#define VIRTIO_BASE 0xd0000000UL
#define VIRTIO_IRQ 5
#define VIO(off) (*(volatile u32 *)(VIRTIO_BASE + (off)))
struct vdesc { u64 addr; u32 len; u16 flags; u16 next; } __attribute__((packed));
static u8 vq_area[3 * 4096] __attribute__((aligned(4096)));
static u8 rng_buf[16];
static volatile u64 virtio_irqs;

void isr_dispatch(u64 vector, u64 error, u64 rip) {
    if (vector < IRQ_BASE) {
        puts_("\nguest exception vector="); putu(vector);
        puts_(" error="); puthex(error, 8); puts_(" rip="); puthex(rip, 16); putc_('\n');
        guest_exit(3);
    }
    u64 irq = vector - IRQ_BASE;
    irq_count[irq]++;
    if (irq == VIRTIO_IRQ) {
        u32 status = VIO(0x060);   /* InterruptStatus */
        VIO(0x064) = status;       /* InterruptACK */
        virtio_irqs++;
    }
    if (irq == 0) pit_ticks++;
    if (auto_eoi) return;
    if (irq >= 8) outb(PIC2_CMD, 0x20);
    outb(PIC1_CMD, 0x20);
}

/* Drives the virtio-rng like a minimal driver: negotiate VERSION_1, one 8-entry queue,
 * one 16-byte device-writable buffer, notify, sleep with HLT until the interrupt. */
static void virtio_rng_test(void) {
    if (VIO(0x000) != 0x74726976 || VIO(0x008) != 4) { puts_("virtio-rng: absent\n"); return; }
    VIO(0x070) = 0;                       /* reset */
    VIO(0x070) = 1 | 2;                   /* ACKNOWLEDGE | DRIVER */
    VIO(0x024) = 1; VIO(0x020) = 1;       /* driver features, high word: VERSION_1 */
    VIO(0x024) = 0; VIO(0x020) = 0;
    VIO(0x070) = 1 | 2 | 8;               /* FEATURES_OK */
    if (!(VIO(0x070) & 8)) { puts_("virtio-rng: features refused\n"); return; }
    struct vdesc *desc = (struct vdesc *)vq_area;
    volatile u16 *avail = (volatile u16 *)(vq_area + 4096);
    volatile u16 *used = (volatile u16 *)(vq_area + 8192);
    u64 d = (u64)desc, a = (u64)avail, u = (u64)used;
    VIO(0x030) = 0;                       /* queue 0 */
    VIO(0x038) = 8;
    VIO(0x080) = (u32)d; VIO(0x084) = (u32)(d >> 32);
    VIO(0x090) = (u32)a; VIO(0x094) = (u32)(a >> 32);
    VIO(0x0a0) = (u32)u; VIO(0x0a4) = (u32)(u >> 32);
    VIO(0x044) = 1;                       /* queue ready */
    VIO(0x070) = 1 | 2 | 8 | 4;           /* DRIVER_OK */
    desc[0].addr = (u64)rng_buf; desc[0].len = sizeof rng_buf; desc[0].flags = 2; desc[0].next = 0;
    avail[2] = 0;                         /* ring[0] = descriptor 0 */
    __asm__ volatile("" ::: "memory");
    avail[1] = 1;                         /* idx */
    __asm__ volatile("" ::: "memory");
    outb(PIC1_DATA, (u8)~((1u << 0) | (1u << VIRTIO_IRQ)));
    cli();
    u64 t0 = pv_read(PV_NS);
    VIO(0x050) = 0;                       /* notify queue 0 */
    while (used[1] == 0 || virtio_irqs == 0) { sti_hlt(); cli(); }  /* data and interrupt */
    u64 ns = pv_read(PV_NS) - t0;
    outb(PIC1_DATA, 0xfe);
    puts_("virtio-rng: ");
    u64 mixed = 0;
    for (int i = 0; i < (int)sizeof rng_buf; i++) { puthex(rng_buf[i], 2); mixed = (mixed << 8) ^ rng_buf[i] ^ (mixed >> 56); }
    mix(mixed);
    puts_(" irqs="); putu(virtio_irqs); puts_(" ns="); putu(ns); putc_('\n');
    mix(ns);
}

/* ---- PIT ---- */
static void pit_program(u8 mode, u16 divisor) {
    outb(PIT_CMD, (u8)(0x30 | (mode << 1)));   /* channel 0, lobyte/hibyte */
    outb(PIT_CH0, (u8)divisor);
    outb(PIT_CH0, (u8)(divisor >> 8));
}
static void pit_stop(void) { pit_program(0, 0xffff); }  /* one-shot far away; masked below */

/* Waits for one PIT tick to line up with the timer, then for n more; returns the
 * virtual ns between the first and the last, which must be n periods. */
static u64 wait_ticks(u64 n) {
    cli();
    pit_ticks = 0;
    while (pit_ticks < 1) { sti_hlt(); cli(); }
    u64 t0 = pv_read(PV_NS);
    while (pit_ticks < n + 1) { sti_hlt(); cli(); }
    return pv_read(PV_NS) - t0;
}

/* Expected ns for `ticks` PIT input clocks, rounded down. */
static u64 pit_ns(u64 ticks) { return ticks * 1000000000ULL / PIT_HZ; }

static int failures;
/* Checks that a measured span lies in [expected, expected + slack]. */
static void check_span(const char *what, u64 ns, u64 expected, u64 slack) {
    if (ns + slack < expected || ns > expected + slack) {
        puts_("\nFAIL "); puts_(what); puts_(": got "); putu(ns); puts_(" ns, expected ");
        putu(expected); puts_(" ns\n");
        failures++;
    }
}

/* ---- RTC ---- */
static u8 cmos(u8 reg) { outb(RTC_INDEX, reg); return inb(RTC_DATA); }
static u64 bcd(u8 v) { return (u64)((v >> 4) * 10 + (v & 0xf)); }
struct rtc_time { u64 year, month, day, hour, min, sec; };
static struct rtc_time rtc_read(void) {
    while (cmos(0x0a) & 0x80) { }          /* wait out update-in-progress */
    struct rtc_time t;
    int binary = cmos(0x0b) & 0x04;
    u8 s = cmos(0), mi = cmos(2), h = cmos(4), d = cmos(7), mo = cmos(8), y = cmos(9), c = cmos(0x32);
    t.sec = binary ? s : bcd(s); t.min = binary ? mi : bcd(mi); t.hour = binary ? h : bcd(h);
    t.day = binary ? d : bcd(d); t.month = binary ? mo : bcd(mo);
    t.year = (binary ? c : bcd(c)) * 100 + (binary ? y : bcd(y));
    return t;
}
static u64 rtc_seconds_of_day(struct rtc_time t) { return t.hour * 3600 + t.min * 60 + t.sec; }
static void put2(u64 v) { if (v < 10) putc_('0'); putu(v); }
static void rtc_print(const char *label, struct rtc_time t) {
    puts_(label); putu(t.year); putc_('-'); put2(t.month); putc_('-'); put2(t.day);
    putc_('T'); put2(t.hour); putc_(':'); put2(t.min); putc_(':'); put2(t.sec); puts_("Z\n");
    mix(t.year); mix(t.month); mix(t.day); mix(rtc_seconds_of_day(t));
}

/* ---- boot_params ---- */
#define BP_CMDLINE_PTR 0x228
#define BP_SETUP_DATA 0x250
#define SETUP_RNG_SEED 9
static const char *cmdline;
static int has_word(const char *w, u64 *value) {
    const char *p = cmdline;
    if (!p) return 0;
    while (*p) {
        while (*p == ' ') p++;
        const char *a = p, *b = w;
        while (*b && *a == *b) { a++; b++; }
        if (!*b && (*a == ' ' || *a == 0 || *a == '=')) {
            if (value) { *value = 0; if (*a == '=') { a++; while (*a >= '0' && *a <= '9') *value = *value * 10 + (u64)(*a++ - '0'); } }
            return 1;
        }
        while (*p && *p != ' ') p++;
    }
    return 0;
}

static void rng_seed_report(const u8 *bp) {
    u64 sd = *(const u64 *)(bp + BP_SETUP_DATA);
    for (int guard = 0; sd && guard < 16; guard++) {
        const u8 *h = (const u8 *)sd;
        u32 type = *(const u32 *)(h + 8), len = *(const u32 *)(h + 12);
        if (type == SETUP_RNG_SEED && len >= 8) {
            u64 first = *(const u64 *)(h + 16);
            puts_("rng-seed: len="); putu(len); puts_(" first8="); puthex(first, 16); putc_('\n');
            mix(first);
            return;
        }
        sd = *(const u64 *)h;
    }
    puts_("rng-seed: none\n");
}

static void cpuid_report(void) {
    u32 a, b, c, d;
    __asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(1), "c"(0));
    /* The profile hides TSC (edx bit 4), x2APIC (ecx 21), TSC-deadline (ecx 24), RDRAND (ecx 30). */
    int hidden = !(d & (1u << 4)) && !(c & (1u << 21)) && !(c & (1u << 24)) && !(c & (1u << 30));
    /* Not mixed into the checksum: on hosts that ignore KVM_SET_CPUID2 it shows host bits. */
    puts_(hidden ? "cpuid: profile in force\n" : "cpuid: host bits visible\n");
}

void guest_main(const u8 *bp) {
    cmdline = (const char *)(u64)*(const u32 *)(bp + BP_CMDLINE_PTR);
    u64 arg = 0;
    puts_("wio x86-64 test guest\n");
    if (has_word("fault", 0)) {
        puts_("triple-faulting on purpose\n");
        struct { u16 limit; u64 base; } __attribute__((packed)) none = { 0, 0 };
        __asm__ volatile("lidt %0; movq $0, %%rax; movq (%%rax), %%rax; ud2" : : "m"(none) : "rax", "memory");
    }
    if (has_word("spin", 0)) {
        puts_("spinning without exits on purpose\n");
        for (volatile u64 i = 0;; i++) { }
    }
    if (has_word("bench", &arg)) {
        for (u64 i = 0; i < arg; i++) outb(POST_PORT, (u8)i);
        guest_exit(0);
    }
    u64 idle_secs = 0;
    int idle = has_word("idle", &idle_secs);
    auto_eoi = idle;
    idt_init();
    pic_init();
    if (idle) {
        pit_program(2, 59659);                      /* ~20 Hz */
        u64 ns = wait_ticks(idle_secs * 20);
        puts_("idle: ns="); putu(ns); putc_('\n');
        guest_exit(0);
    }

    rng_seed_report(bp);
    virtio_rng_test();
    cpuid_report();
    if (has_word("snap", 0)) {
        /* Ask wio for a snapshot here (--snapshot-at guest); the latched value is always 0. */
        puts_("snapshot here\n");
        pv_read(PV_SNAPSHOT_HERE);
    }
    u64 e = pv_read(PV_ENTROPY);
    puts_("entropy: "); puthex(e, 16); putc_('\n'); mix(e);
    u64 hz = pv_read(PV_TSC_HZ);
    report("tsc-hz", hz); putc_('\n');
    struct rtc_time r0 = rtc_read();
    rtc_print("rtc: ", r0);

    /* Mode 2 (rate generator), 1 kHz: 100 ticks must take 100 periods. */
    pit_program(2, 1193);
    u64 ns = wait_ticks(100);
    puts_("pit-mode2-1khz: "); report("ticks", 100); report("ns", ns); putc_('\n');
    check_span("pit mode 2", ns, pit_ns(100 * 1193ULL), 20000);

    /* Mode 3 (square wave), 100 Hz: 10 ticks. */
    pit_program(3, 11932);
    ns = wait_ticks(10);
    puts_("pit-mode3-100hz: "); report("ticks", 10); report("ns", ns); putc_('\n');
    check_span("pit mode 3", ns, pit_ns(10 * 11932ULL), 20000);

    /* Mode 0 (one-shot), 20 ms: exactly one interrupt. */
    cli();
    pit_ticks = 0;
    u64 t0 = pv_read(PV_NS);
    pit_program(0, 23864);
    while (pit_ticks < 1) { sti_hlt(); cli(); }
    ns = pv_read(PV_NS) - t0;
    puts_("pit-mode0-oneshot: "); report("ns", ns); putc_('\n');
    check_span("pit mode 0", ns, pit_ns(23864) + 20000, 20000);

    /* A 10-virtual-second sleep at 20 Hz, checked against the paravirt clock and the RTC. */
    u64 tsc0 = pv_read(PV_TSC);
    pit_program(2, 59659);
    ns = wait_ticks(200);
    u64 tsc1 = pv_read(PV_TSC);
    struct rtc_time r1 = rtc_read();
    u64 rtc_delta = (rtc_seconds_of_day(r1) + 86400 - rtc_seconds_of_day(r0)) % 86400;
    puts_("sleep-10s: "); report("ns", ns); report("tsc", tsc1 - tsc0); report("rtc-seconds", rtc_delta); putc_('\n');
    check_span("10 s sleep", ns, pit_ns(200 * 59659ULL), 20000);
    if (rtc_delta < 10 || rtc_delta > 11) { puts_("FAIL rtc did not advance 10 s\n"); failures++; }
    rtc_print("rtc: ", r1);

    pit_stop();
    outb(PIC1_DATA, 0xff);
    report("irq0", irq_count[0]); putc_('\n');
    puts_("checksum: "); puthex(checksum, 16); putc_('\n');
    if (failures) { puts_("test guest: FAILED\n"); guest_exit(1); }
    puts_("test guest: ok\n");
    guest_exit(has_word("status", &arg) ? (u32)arg : 0);
}
