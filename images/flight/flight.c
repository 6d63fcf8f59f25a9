/* wio's flight-software example: a bare-metal attitude control loop for one axis of a
 * spacecraft, in M-mode on wio's riscv64 machine (no firmware, no OS).
 *
 * Every millisecond of virtual time (CLINT timer, WFI in between) it reads the attitude
 * sensor of the flight I/O board, computes a PD torque command toward the current
 * maneuver's setpoint, limits it to the actuator's safe envelope, commands the actuator
 * and pets the board's watchdog. The control state (setpoint, gains, command limit,
 * maneuver index) is the memory radiation can corrupt; it lives in the .critical page.
 *
 * Protection (the switch: "protect=on" (default) or "protect=off" in the device tree's
 * bootargs, i.e. wio's --cmdline):
 *   - triple modular redundancy: three copies of the state, every read a bitwise
 *     majority vote, every write to all three;
 *   - a scrubber: every 10 ms each word is voted and written back to all copies, so
 *     upsets do not accumulate until two copies of a word disagree with the third.
 *
 * Promises, on wio's bare-metal promise port (JSON lines of the Antithesis SDK protocol,
 * each sent the first time its condition is seen true and the first time false, as the
 * SDKs do):
 *   - always: the actuator command stays within its safe envelope (|cmd| <= 500);
 *   - always: the watchdog never fires (checked at boot from the board's reset cause);
 *   - sometimes: a maneuver completes (the attitude settles within 0.5 degree).
 * The program reports setup complete after initialising, and runs RUN_MS of virtual
 * time, then powers off (status 0).
 *
 * The vector variant (built as flight-vector.elf with -march=rv64gcv -DFLIGHT_VECTOR, run
 * with wio's --isa rv64gcv) is the same loop with its voting, scrubbing and control law
 * in RVV 1.0: see "the vector variant" below.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define UART_BASE 0x10000000UL
#define TEST_BASE 0x00100000UL
#define FIO_BASE 0x10200000UL
#define SDK_BASE 0x10201000UL
#define CLINT_MTIMECMP 0x02004000UL
#define CLINT_MTIME 0x0200bff8UL
#define TICKS_PER_MS 10000ULL /* the device tree's timebase: 10 MHz */

#define FIO_ANGLE 0x00
#define FIO_RATE 0x04
#define FIO_COMMAND 0x08
#define FIO_RESET_CAUSE 0x0c
#define FIO_WDT_TIMEOUT 0x10
#define FIO_WDT_PET 0x14
#define WDT_KEY 0x5afe

#define ENVELOPE 500   /* the actuator's safe envelope (torque units) */
#define RUN_MS 6000    /* virtual milliseconds of flight */
#define MANEUVER_MS 1500
#define SCRUB_MS 10
#define WDT_TIMEOUT_US 20000

#define MIP_MTIP (1UL << 7)

static inline uint32_t rd32(uintptr_t a) { return *(volatile uint32_t *)a; }
static inline void wr32(uintptr_t a, uint32_t v) { *(volatile uint32_t *)a = v; }
static inline uint64_t rd64(uintptr_t a) { return *(volatile uint64_t *)a; }
static inline void wr64(uintptr_t a, uint64_t v) { *(volatile uint64_t *)a = v; }

/* ---------------------------------------------------------------- console (NS16550) */
static void uart_putc(char c) {
    while (!(*(volatile uint8_t *)(UART_BASE + 5) & 0x20)) {
    }
    *(volatile uint8_t *)UART_BASE = (uint8_t)c;
}
static int uart_stdio_putc(char c, FILE *f) {
    (void)f;
    uart_putc(c);
    return (unsigned char)c;
}
static FILE uart_file = FDEV_SETUP_STREAM(uart_stdio_putc, NULL, NULL, _FDEV_SETUP_WRITE);
FILE *const stdout = &uart_file;

/* ---------------------------------------------------------------- promises */
static void sdk_line(const char *s) {
    while (*s) wr32(SDK_BASE, (uint8_t)*s++);
    wr32(SDK_BASE, '\n');
}

struct promise {
    const char *id;
    const char *type; /* always / sometimes */
    const char *display;
    int seen_true, seen_false;
};

static struct promise p_envelope = {"actuator command within its safe envelope", "always",
                                    "Always", 0, 0};
static struct promise p_watchdog = {"watchdog never fires", "always", "Always", 0, 0};
static struct promise p_settled = {"a maneuver completes", "sometimes", "Sometimes", 0, 0};

static void promise_line(const struct promise *p, int hit, int cond, const char *details) {
    char buf[512];
    snprintf(buf, sizeof buf,
             "{\"antithesis_assert\":{\"id\":\"%s\",\"message\":\"%s\",\"assert_type\":\"%s\","
             "\"display_type\":\"%s\",\"hit\":%s,\"must_hit\":true,\"condition\":%s,"
             "\"location\":{\"file\":\"flight.c\",\"function\":\"control\"},\"details\":%s}}",
             p->id, p->id, p->type, p->display, hit ? "true" : "false", cond ? "true" : "false",
             details ? details : "null");
    sdk_line(buf);
}

/* Reports an evaluation the first time its condition is seen true and the first time false. */
static void promise(struct promise *p, int cond, const char *details) {
    int *seen = cond ? &p->seen_true : &p->seen_false;
    if (*seen) return;
    *seen = 1;
    promise_line(p, 1, cond, details);
}

/* ---------------------------------------------------------------- device tree */
static uint32_t be32(const uint8_t *p) {
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

/* /chosen/bootargs of the flattened device tree at `fdt`, or NULL. */
static const char *fdt_bootargs(const uint8_t *fdt) {
    if (!fdt || be32(fdt) != 0xd00dfeed) return NULL;
    const uint8_t *st = fdt + be32(fdt + 8);
    const char *strings = (const char *)fdt + be32(fdt + 12);
    const uint8_t *end = st + be32(fdt + 36);
    int depth = 0, in_chosen = 0;
    while (st + 4 <= end) {
        uint32_t tok = be32(st);
        st += 4;
        if (tok == 1) { /* BEGIN_NODE */
            const char *name = (const char *)st;
            depth++;
            if (depth == 2) in_chosen = strcmp(name, "chosen") == 0;
            st += (strlen(name) + 4) & ~3u;
        } else if (tok == 2) { /* END_NODE */
            if (depth == 2) in_chosen = 0;
            depth--;
        } else if (tok == 3) { /* PROP */
            uint32_t len = be32(st), nameoff = be32(st + 4);
            const char *val = (const char *)st + 8;
            if (in_chosen && strcmp(strings + nameoff, "bootargs") == 0) return val;
            st += 8 + ((len + 3) & ~3u);
        } else if (tok == 4) { /* NOP */
        } else {
            break; /* END */
        }
    }
    return NULL;
}

/* ---------------------------------------------------------------- protected state */
enum { W_SETPOINT, W_KP, W_KD, W_LIMIT, W_MANEUVER, NWORDS };

/* Three copies; copy 0 is the only one used without protection. */
__attribute__((section(".critical"))) volatile uint32_t state[3][NWORDS];

static int protect = 1;
static uint32_t scrub_fixes;

#ifndef FLIGHT_VECTOR
static uint32_t state_get(int w) {
    if (!protect) return state[0][w];
    uint32_t a = state[0][w], b = state[1][w], c = state[2][w];
    return (a & b) | (a & c) | (b & c);
}
#endif

static void state_set(int w, uint32_t v) {
    state[0][w] = v;
    if (protect) state[1][w] = state[2][w] = v;
}

#ifndef FLIGHT_VECTOR
static void scrub(void) {
    for (int w = 0; w < NWORDS; w++) {
        uint32_t v = state_get(w);
        for (int c = 0; c < 3; c++) {
            if (state[c][w] != v) {
                state[c][w] = v;
                scrub_fixes++;
            }
        }
    }
}
#else
/* ---------------------------------------------------------------- the vector variant
 * The loop's working copy of the control state lives in vector register v8 (lanes 0-4 at
 * SEW 32; LMUL 2, so that the five words fit at every VLEN from 128 bits) between
 * refreshes: voted from the three copies in one pass (copy 0 alone
 * without protection) every SCRUB_MS and after every maneuver change, as flight software
 * often votes once per frame rather than on every read (refresh=cycle in the bootargs:
 * every 1 ms cycle). The scrub is the refresh plus a masked store of the voted words into
 * every copy that disagrees. The control law is a widening dot product of the gains (v8
 * lanes 1-2) with (error, rate) and a reduction.
 *
 * Nothing else in the program touches vector registers (gcc 12 emits no vector code and
 * picolibc is built for rv64gc), so v8 keeps its value from one asm statement to the
 * next. A radiation upset there is not outvoted until the next refresh, up to 10 ms
 * later: memory TMR does not cover a copy held in registers. images/flight/geo-vector.toml
 * aims the same orbit's rate at RAM and at the vector register file. */

/* Turns the vector unit on (mstatus.VS = Initial), or powers off with status 3 on a hart
 * without one (misa.V clear), saying so. */
void power_off(int status);

/* refresh=cycle in the bootargs: refresh the working copy at the start of every 1 ms
 * cycle instead of every SCRUB_MS, so an upset in v8 lives only until the next cycle. */
static int refresh_each_cycle;

static void vector_on(void) {
    uint64_t misa;
    __asm__ volatile("csrr %0, misa" : "=r"(misa));
    if (!(misa & (1UL << ('V' - 'A')))) {
        printf("flight: this is the vector variant and the hart has no vector unit "
               "(misa.V clear; run it with wio's --isa rv64gcv)\n");
        power_off(3);
        for (;;) __asm__ volatile("wfi");
    }
    __asm__ volatile("csrs mstatus, %0" ::"r"(1UL << 9));
}

static uint64_t vlen_bits(void) {
    uint64_t vlenb;
    __asm__ volatile("csrr %0, vlenb" : "=r"(vlenb));
    return vlenb * 8;
}

/* v8 = the bitwise majority of the three copies (copy 0 without protection). */
static void refresh(void) {
    if (!protect) {
        __asm__ volatile("vsetivli zero, %0, e32, m2, ta, ma\n\t"
                         "vle32.v v8, (%1)" ::"i"(NWORDS), "r"(state[0])
                         : "memory");
        return;
    }
    __asm__ volatile("vsetivli zero, %0, e32, m2, ta, ma\n\t"
                     "vle32.v v16, (%1)\n\t"
                     "vle32.v v18, (%2)\n\t"
                     "vle32.v v20, (%3)\n\t"
                     "vand.vv v8, v16, v18\n\t"
                     "vand.vv v22, v16, v20\n\t"
                     "vor.vv v8, v8, v22\n\t"
                     "vand.vv v22, v18, v20\n\t"
                     "vor.vv v8, v8, v22" ::"i"(NWORDS), "r"(state[0]), "r"(state[1]), "r"(state[2])
                     : "memory");
}

/* Word w of the working copy. */
static uint32_t state_get(int w) {
    uint64_t v;
    __asm__ volatile("vsetivli zero, %1, e32, m2, ta, ma\n\t"
                     "vslidedown.vx v10, v8, %2\n\t"
                     "vmv.x.s %0, v10"
                     : "=r"(v)
                     : "i"(NWORDS), "r"((uint64_t)w));
    return (uint32_t)v;
}

static void vstate_set(int w, uint32_t v) {
    state_set(w, v);
    refresh();
}

static void scrub(void) {
    refresh();
    if (!protect) return;
    for (int c = 0; c < 3; c++) {
        uint64_t fixed;
        __asm__ volatile("vsetivli zero, %1, e32, m2, ta, ma\n\t"
                         "vle32.v v16, (%2)\n\t"
                         "vmsne.vv v0, v16, v8\n\t"
                         "vcpop.m %0, v0\n\t"
                         "vse32.v v8, (%2), v0.t"
                         : "=r"(fixed)
                         : "i"(NWORDS), "r"(state[c])
                         : "memory");
        scrub_fixes += (uint32_t)fixed;
    }
}

/* KP * err + KD * rate in 64 bits: the gains are lanes 1-2 of the working copy. */
static int64_t pd_sum(int32_t err, int32_t rate) {
    int64_t sum;
    __asm__ volatile("vsetivli zero, 2, e32, m1, ta, ma\n\t"
                     "vslidedown.vi v12, v8, 1\n\t"
                     "vmv.v.x v13, %2\n\t"
                     "vmv.s.x v13, %1\n\t"
                     "vwmul.vv v14, v12, v13\n\t"
                     "vsetivli zero, 2, e64, m2, ta, ma\n\t"
                     "vmv.s.x v16, zero\n\t"
                     "vredsum.vs v16, v14, v16\n\t"
                     "vmv.x.s %0, v16"
                     : "=r"(sum)
                     : "r"((int64_t)err), "r"((int64_t)rate));
    return sum;
}
#endif

/* ---------------------------------------------------------------- traps */
void trap_report(uint64_t cause, uint64_t epc, uint64_t tval) {
    printf("flight: trap mcause=%#llx mepc=%#llx mtval=%#llx; waiting for the watchdog\n",
           (unsigned long long)cause, (unsigned long long)epc, (unsigned long long)tval);
}

void power_off(int status) {
    wr32(TEST_BASE, status == 0 ? 0x5555 : (0x3333 | ((uint32_t)status << 16)));
}

/* ---------------------------------------------------------------- the loop */
static const int32_t maneuvers[] = {0, 12000, -8000, 15000, 3000, -10000, 0, 6000};
#define NMANEUVERS (int)(sizeof maneuvers / sizeof maneuvers[0])

static void wait_until(uint64_t ticks) {
    wr64(CLINT_MTIMECMP, ticks);
    for (;;) {
        uint64_t mip;
        __asm__ volatile("csrr %0, mip" : "=r"(mip));
        if (mip & MIP_MTIP) break;
        __asm__ volatile("wfi");
    }
}

int main(const uint8_t *fdt) {
    const char *args = fdt_bootargs(fdt);
    if (args && strstr(args, "protect=off")) protect = 0;
    uint32_t cause = rd32(FIO_BASE + FIO_RESET_CAUSE);
    printf("flight: start (reset cause %s), protection %s\n", cause ? "watchdog" : "power-on",
           protect ? "on: TMR voting, scrubber every 10 ms" : "off");
#ifdef FLIGHT_VECTOR
    vector_on();
    if (args && strstr(args, "refresh=cycle")) refresh_each_cycle = 1;
    printf("flight: vector variant, VLEN %lu bits, working state in v8 (refreshed every %d ms)\n",
           (unsigned long)vlen_bits(), refresh_each_cycle ? 1 : SCRUB_MS);
#define state_set vstate_set
#endif

    /* The catalogue: every promise, before any is evaluated. */
    promise_line(&p_envelope, 0, 0, NULL);
    promise_line(&p_watchdog, 0, 0, NULL);
    promise_line(&p_settled, 0, 0, NULL);
    promise(&p_watchdog, cause == 0, cause ? "{\"reset_cause\":\"watchdog\"}" : NULL);

    for (int c = 0; c < 3; c++)
        for (int w = 0; w < NWORDS; w++) state[c][w] = 0;
    state_set(W_SETPOINT, (uint32_t)maneuvers[0]);
    state_set(W_KP, 160);
    state_set(W_KD, 64);
    state_set(W_LIMIT, ENVELOPE);
    state_set(W_MANEUVER, 0);

    /* The CLINT timer wakes WFI (mie.MTIE) without traps (mstatus.MIE stays 0). */
    __asm__ volatile("csrs mie, %0" ::"r"(MIP_MTIP));
    wr32(FIO_BASE + FIO_WDT_TIMEOUT, WDT_TIMEOUT_US);
    sdk_line("{\"antithesis_setup\":{\"status\":\"complete\",\"details\":null}}");

    uint64_t start = rd64(CLINT_MTIME);
    int32_t peak = 0;
    uint32_t settled = 0;
    for (uint32_t ms = 1; ms <= RUN_MS; ms++) {
        wait_until(start + ms * TICKS_PER_MS);
        if (ms % MANEUVER_MS == 0) {
            uint32_t m = (state_get(W_MANEUVER) + 1) % NMANEUVERS;
            state_set(W_MANEUVER, m);
            state_set(W_SETPOINT, (uint32_t)maneuvers[m]);
            printf("flight: t=%lu ms maneuver %lu to %ld mdeg\n", (unsigned long)ms,
                   (unsigned long)m, (long)maneuvers[m]);
        }
#ifdef FLIGHT_VECTOR
        if (refresh_each_cycle) refresh();
#endif
        int32_t angle = (int32_t)rd32(FIO_BASE + FIO_ANGLE);
        int32_t rate = (int32_t)rd32(FIO_BASE + FIO_RATE);
        int32_t err = angle - (int32_t)state_get(W_SETPOINT);
#ifndef FLIGHT_VECTOR
        int64_t cmd = -((int64_t)(int32_t)state_get(W_KP) * err +
                        (int64_t)(int32_t)state_get(W_KD) * rate) / 1000;
#else
        int64_t cmd = -pd_sum(err, rate) / 1000;
#endif
        int64_t limit = (int32_t)state_get(W_LIMIT);
        if (cmd > limit) cmd = limit;
        if (cmd < -limit) cmd = -limit;
        int inside = cmd >= -ENVELOPE && cmd <= ENVELOPE;
        char details[160];
        snprintf(details, sizeof details, "{\"command\":%lld,\"limit\":%lld,\"t_ms\":%lu}",
                 (long long)cmd, (long long)limit, (unsigned long)ms);
        promise(&p_envelope, inside, details);
        if (cmd > peak) peak = (int32_t)cmd;
        if (-cmd > peak) peak = (int32_t)-cmd;
        wr32(FIO_BASE + FIO_COMMAND, (uint32_t)(int32_t)cmd);
        if (state_get(W_MANEUVER) != 0 && err < 500 && err > -500 && rate < 1000 && rate > -1000) {
            settled++;
            promise(&p_settled, 1, NULL);
        }
        wr32(FIO_BASE + FIO_WDT_PET, WDT_KEY);
#ifndef FLIGHT_VECTOR
        if (protect && ms % SCRUB_MS == 0) scrub();
#else
        if (ms % SCRUB_MS == 0) scrub();
#endif
    }
    printf("flight: done after %d ms: peak command %ld, settled samples %lu, scrub repairs %lu\n",
           RUN_MS, (long)peak, (unsigned long)settled, (unsigned long)scrub_fixes);
    return 0;
}
