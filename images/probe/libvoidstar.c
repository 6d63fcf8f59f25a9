/*
 * libvoidstar.so for wio: the native library the Antithesis SDKs (C++, Go, Rust, Python,
 * Java, JavaScript) load from /usr/lib/libvoidstar.so when it is there. Under wio it
 * sends what they say to wio's promise channel (the "wio.sdk" virtio-console port, one
 * JSON object a line) and draws their random numbers from the run's seed (the
 * "wio.random" port), so programs instrumented with those SDKs run unchanged and their
 * assertions show in wio's summary and explore reports.
 *
 * Built for riscv64 with the cross compiler's libc (dynamic programs in rootfs images).
 * Without the channel (not under wio) JSON is dropped and randomness comes from
 * getrandom(2), so a program never fails because of this library.
 *
 * Built with -DWIO_SHARED_PORTS (the image runtime's copy, images/riscv64-image-runtime.sh)
 * for image nodes of a world, where the agent (images/image/wio-agent.c) holds the ports
 * and shares them between processes (a virtio-console port opens in one process at a
 * time): wio.sdk is then a FIFO, each line written whole in one write under an flock so
 * lines of concurrent processes never mix, and wio.random a Unix socket (8 bytes asked,
 * 8 bytes answered). The default build is unchanged.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/random.h>
#include <unistd.h>
#ifdef WIO_SHARED_PORTS
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/un.h>
#endif

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int sdk_fd = -2;
static int random_fd = -2;

static int open_port(const char *a, const char *b) {
    int fd = open(a, O_RDWR | O_CLOEXEC);
#ifdef WIO_SHARED_PORTS
    if (fd < 0 && errno == ENXIO) {
        /* The agent's socket. */
        struct sockaddr_un addr = {.sun_family = AF_UNIX};
        strncpy(addr.sun_path, a, sizeof addr.sun_path - 1);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd >= 0 && connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
            close(fd);
            fd = -1;
        }
    }
#endif
    if (fd < 0) fd = open(b, O_RDWR | O_CLOEXEC);
    return fd;
}

static int write_all(int fd, const char *p, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w <= 0) return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* One JSON object from an SDK; wio reads one per line. */
void fuzz_json_data(const char *message, size_t length) {
    pthread_mutex_lock(&lock);
    if (sdk_fd == -2) sdk_fd = open_port("/dev/virtio-ports/wio.sdk", "/dev/wio.sdk");
    if (sdk_fd >= 0 && length > 0) {
#ifdef WIO_SHARED_PORTS
        /* The whole line in one write, under the FIFO's lock. */
        bool nl = message[length - 1] != '\n';
        char *line = malloc(length + 1);
        if (line) {
            memcpy(line, message, length);
            if (nl) line[length] = '\n';
            flock(sdk_fd, LOCK_EX);
            write_all(sdk_fd, line, length + nl);
            flock(sdk_fd, LOCK_UN);
            free(line);
        }
#else
        write_all(sdk_fd, message, length);
        if (message[length - 1] != '\n') write_all(sdk_fd, "\n", 1);
#endif
    }
    pthread_mutex_unlock(&lock);
}

/* A uniformly distributed u64 from the run's seed. */
uint64_t fuzz_get_random(void) {
    uint64_t v = 0;
    pthread_mutex_lock(&lock);
    if (random_fd == -2) random_fd = open_port("/dev/virtio-ports/wio.random", "/dev/wio.random");
    int ok = random_fd >= 0 && write(random_fd, &v, sizeof v) == (ssize_t)sizeof v;
    size_t got = 0;
    while (ok && got < sizeof v) {
        ssize_t r = read(random_fd, (char *)&v + got, sizeof v - got);
        if (r <= 0) ok = 0;
        else got += (size_t)r;
    }
    pthread_mutex_unlock(&lock);
    if (!ok) {
        if (getrandom(&v, sizeof v, 0) != (ssize_t)sizeof v) v = 0;
    }
    return v;
}

/* Lines are written as they come: nothing to flush. */
void fuzz_flush(void) {}

/* Coverage from programs instrumented for the SDKs. Each module (a program or library)
 * registers its edge count and gets the offset of its edges in one numbering; an edge is
 * reported as {"wio_coverage":{"module":NAME,"edge":N}}, N its index in its module (the
 * same in every process, whatever else was loaded first), NAME its symbol file's base
 * name. notify_coverage answers false: the SDKs then never report that edge again in this
 * process, so each edge costs one line per process. The v2 lease entry points
 * (notify_coverage_v2, coverage_lease_generation_addr) are left out on purpose: the SDKs
 * then use notify_coverage (checked with the Python SDK, antithesis 0.4.0). */
#define MAX_MODULES 64

static struct {
    size_t offset, count;
    char name[128];
} modules[MAX_MODULES];
static size_t module_count = 0;
static size_t next_offset = 0;

size_t init_coverage_module(size_t edge_count, const char *symbol_file_name) {
    pthread_mutex_lock(&lock);
    size_t offset = next_offset;
    if (module_count < MAX_MODULES) {
        const char *base = symbol_file_name ? symbol_file_name : "unknown";
        for (const char *p = base; *p; p++)
            if (*p == '/') base = p + 1;
        size_t n = 0;
        /* Kept JSON-safe: quotes, backslashes and control characters become '_'. */
        for (; base[n] && n < sizeof modules[0].name - 1; n++) {
            char c = base[n];
            modules[module_count].name[n] = (c == '"' || c == '\\' || (unsigned char)c < 0x20) ? '_' : c;
        }
        modules[module_count].name[n] = 0;
        modules[module_count].offset = offset;
        modules[module_count].count = edge_count;
        module_count++;
    }
    next_offset += edge_count;
    pthread_mutex_unlock(&lock);
    return offset;
}

bool notify_coverage(size_t edge_plus_module) {
    const char *name = 0;
    size_t edge = 0;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < module_count; i++) {
        if (edge_plus_module >= modules[i].offset &&
            edge_plus_module - modules[i].offset < modules[i].count) {
            name = modules[i].name;
            edge = edge_plus_module - modules[i].offset;
            break;
        }
    }
    pthread_mutex_unlock(&lock);
    if (name) {
        char line[256];
        int n = snprintf(line, sizeof line, "{\"wio_coverage\":{\"module\":\"%s\",\"edge\":%zu}}\n", name, edge);
        if (n > 0 && (size_t)n < sizeof line) fuzz_json_data(line, (size_t)n);
    }
    return false;
}
