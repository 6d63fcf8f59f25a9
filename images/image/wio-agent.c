/*
 * wio-agent: the test composer's hands inside an image node (`wio sim` worlds whose nodes
 * run container images). The composer itself runs in wio, on the host: it chooses which
 * command runs when (vmm/world/src/composer.rs); this agent finds the node's commands,
 * starts and kills them when told, and says how each ended.
 *
 *   wio-agent PORT ROOT SDK RANDOM
 *                           the launcher (images/image/launch.sh) starts it as root, once
 *                           the image's disk is mounted at ROOT; PORT, SDK and RANDOM are
 *                           the virtio-console ports wio.composer, wio.sdk and wio.random
 *                           (/dev/vportNpM). It returns once it is ready (a child carries
 *                           on), so what the launcher starts next finds the shared ports.
 *   wio-stop-faults N       (the same binary, under that name: ANTITHESIS_STOP_FAULTS)
 *                           asks the composer to hold faults off for N seconds.
 *
 * Line protocol on PORT (one line each, '\n'-terminated):
 *   agent -> wio   command TEMPLATE/NAME     one per command found, then
 *                  ready                     the list is complete
 *                  exited ID STATUS          run ID ended (STATUS: exit code, or 128 + signal)
 *                  stop_faults N             a program ran $ANTITHESIS_STOP_FAULTS N
 *   wio -> agent   start ID TEMPLATE/NAME    run ROOT/opt/antithesis/test/v1/TEMPLATE/NAME
 *                  kill ID                   SIGKILL run ID's process group
 *
 * Commands: regular files (or links to them) with an execute bit, directly in a template
 * folder ROOT/opt/antithesis/test/v1/TEMPLATE/, named with a test-composer prefix
 * (first_, parallel_driver_, serial_driver_, singleton_driver_, anytime_, eventually_,
 * finally_); helper_ files and anything else are not commands. Links are followed inside
 * ROOT (the scan runs chrooted). Each run is `/bin/wio-exec /wio/run.cfg ROOT PATH`: the
 * image's user, environment and working directory, in its own process group, its output
 * on the console.
 *
 * Shared ports: a virtio-console port opens in one process at a time, and a node's
 * service, its commands and their children all state promises. The agent holds wio.sdk
 * and wio.random and puts in their place, in ROOT/dev/virtio-ports/: wio.sdk, a FIFO
 * whose whole lines it forwards (the image's libvoidstar.so writes each line in one write
 * under an flock), and wio.random, a Unix socket answering each 8-byte request with 8
 * bytes from the port. Static, glibc.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define TESTS "/opt/antithesis/test/v1"
#define FIFO "/dev/wio-agent.fifo"
#define MAX_RUNS 4096
#define MAX_LINE 1024
#define MAX_CLIENTS 64
#define SDK_BUF (128 * 1024)

static const char *PREFIXES[] = {"first_", "parallel_driver_", "serial_driver_", "singleton_driver_",
                                 "anytime_", "eventually_", "finally_"};

static int port = -1;

static void say(const char *fmt, const char *a, const char *b) {
    fprintf(stderr, "wio-agent: ");
    fprintf(stderr, fmt, a, b);
    fprintf(stderr, "\n");
}

/* Writes n bytes to fd (retrying short writes). */
static void send_all(int fd, const char *line, size_t n) {
    size_t done = 0;
    while (done < n) {
        ssize_t w = write(fd, line + done, n - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            say("cannot write to the composer's port: %s%s", strerror(errno), "");
            return;
        }
        done += (size_t)w;
    }
}

/* Writes one whole line to the composer's port. */
static void send_line(const char *line) { send_all(port, line, strlen(line)); }

/* Reads exactly n bytes from fd (blocking). */
static int read_all(int fd, char *p, size_t n) {
    while (n > 0) {
        ssize_t r = read(fd, p, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

static int is_command(const char *name) {
    for (size_t i = 0; i < sizeof PREFIXES / sizeof PREFIXES[0]; i++) {
        size_t n = strlen(PREFIXES[i]);
        if (strncmp(name, PREFIXES[i], n) == 0 && name[n]) return 1;
    }
    return 0;
}

/* A name the protocol carries: printable, no spaces or slashes. */
static int plain(const char *s) {
    if (!*s || strlen(s) > 120) return 0;
    for (; *s; s++)
        if (*s <= ' ' || *s > '~' || *s == '/') return 0;
    return 1;
}

/* Lists ROOT's commands on fd `out`, one "command T/N" line each, chrooted in a child so
 * that links resolve inside the image. */
static void scan(const char *root, int out) {
    if (chroot(root) != 0 || chdir("/") != 0) _exit(1);
    DIR *d = opendir(TESTS);
    if (!d) _exit(0);
    struct dirent *t;
    while ((t = readdir(d))) {
        if (t->d_name[0] == '.' || strncmp(t->d_name, "helper_", 7) == 0) continue;
        char dir[512];
        snprintf(dir, sizeof dir, TESTS "/%s", t->d_name);
        struct stat st;
        if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) continue;
        if (!plain(t->d_name)) {
            say("template %s skipped: its name has spaces or unprintable characters%s", t->d_name, "");
            continue;
        }
        DIR *e = opendir(dir);
        if (!e) continue;
        struct dirent *c;
        while ((c = readdir(e))) {
            if (!is_command(c->d_name)) continue;
            char path[1024];
            snprintf(path, sizeof path, "%s/%s", dir, c->d_name);
            if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || !(st.st_mode & 0111)) {
                say("%s skipped: not an executable file%s", path, "");
                continue;
            }
            if (!plain(c->d_name)) {
                say("%s skipped: its name has spaces or unprintable characters%s", path, "");
                continue;
            }
            dprintf(out, "command %s/%s\n", t->d_name, c->d_name);
        }
        closedir(e);
    }
    closedir(d);
    _exit(0);
}

static int stop_faults(int argc, char **argv) {
    char *end = NULL;
    unsigned long n = argc == 2 ? strtoul(argv[1], &end, 10) : 0;
    if (argc != 2 || !end || *end || !*argv[1]) {
        fprintf(stderr, "usage: %s SECONDS (holds the test composer's faults off)\n", argv[0]);
        return 2;
    }
    int fd = open(FIFO, O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "%s: no wio agent here (%s: %s)\n", argv[0], FIFO, strerror(errno));
        return 1;
    }
    char line[64];
    int len = snprintf(line, sizeof line, "stop_faults %lu\n", n);
    return write(fd, line, (size_t)len) == len ? 0 : 1;
}

int main(int argc, char **argv) {
    const char *base = strrchr(argv[0], '/');
    base = base ? base + 1 : argv[0];
    if (strcmp(base, "wio-stop-faults") == 0) return stop_faults(argc, argv);
    if (argc != 5) {
        fprintf(stderr, "usage: wio-agent PORT ROOT SDK RANDOM\n");
        return 2;
    }
    const char *root = argv[2];
    port = open(argv[1], O_RDWR | O_CLOEXEC);
    if (port < 0) {
        say("cannot open the composer's port %s: %s", argv[1], strerror(errno));
        return 1;
    }
    /* The helper's FIFO, inside the image's /dev (any user may hold faults off). */
    char fifo[1024];
    snprintf(fifo, sizeof fifo, "%s" FIFO, root);
    unlink(fifo);
    if (mkfifo(fifo, 0666) != 0 || chmod(fifo, 0666) != 0) say("cannot make %s: %s", fifo, strerror(errno));
    int ff = open(fifo, O_RDWR | O_NONBLOCK | O_CLOEXEC);

    /* The shared ports (see the top). */
    int sdk_port = open(argv[3], O_RDWR | O_CLOEXEC), rnd_port = open(argv[4], O_RDWR | O_CLOEXEC);
    if (sdk_port < 0 || rnd_port < 0) say("cannot open the promise channel's ports: %s%s", strerror(errno), "");
    char path[1024];
    snprintf(path, sizeof path, "%s/dev/virtio-ports/wio.sdk", root);
    unlink(path);
    if (mkfifo(path, 0666) != 0 || chmod(path, 0666) != 0) say("cannot make %s: %s", path, strerror(errno));
    int sdk_fifo = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
    snprintf(path, sizeof path, "%s/dev/virtio-ports/wio.random", root);
    unlink(path);
    int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    size_t plen = strlen(path);
    if (plen >= sizeof addr.sun_path) plen = 0; /* too long a root: bind fails, said below */
    memcpy(addr.sun_path, path, plen);
    if (listener < 0 || plen == 0 || bind(listener, (struct sockaddr *)&addr, sizeof addr) != 0 || chmod(path, 0666) != 0 ||
        listen(listener, MAX_CLIENTS) != 0)
        say("cannot make %s: %s", path, strerror(errno));
    /* Ready: the launcher goes on while a child carries on. */
    pid_t daemon = fork();
    if (daemon < 0) return 1;
    if (daemon > 0) _exit(0);

    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGCHLD);
    sigprocmask(SIG_BLOCK, &mask, NULL);
    int sf = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);

    /* The inventory. */
    int p[2];
    if (pipe(p) != 0) return 1;
    pid_t scanner = fork();
    if (scanner == 0) {
        close(p[0]);
        scan(root, p[1]);
    }
    close(p[1]);
    FILE *in = fdopen(p[0], "r");
    char line[MAX_LINE];
    int found = 0;
    while (in && fgets(line, sizeof line, in)) {
        send_line(line);
        found++;
    }
    if (in) fclose(in);
    waitpid(scanner, NULL, 0);
    send_line("ready\n");
    fprintf(stderr, "wio-agent: %d test command(s) found under %s\n", found, TESTS);

    static pid_t pids[MAX_RUNS];
    static char sdk_buf[SDK_BUF];
    char buf[MAX_LINE], fbuf[256];
    size_t have = 0, fhave = 0, sdk_have = 0;
    int sdk_overlong = 0;
    int clients[MAX_CLIENTS];
    char asked[MAX_CLIENTS][8];
    size_t asked_n[MAX_CLIENTS];
    int nclients = 0;
    for (;;) {
        struct pollfd fds[5 + MAX_CLIENTS] = {
            {port, POLLIN, 0}, {sf, POLLIN, 0}, {ff, POLLIN, 0}, {sdk_fifo, POLLIN, 0}, {listener, POLLIN, 0}};
        for (int i = 0; i < nclients; i++) fds[5 + i] = (struct pollfd){clients[i], POLLIN, 0};
        if (poll(fds, 5 + (nfds_t)nclients, -1) < 0) {
            if (errno == EINTR) continue;
            return 1;
        }
        /* Lines for wio.sdk: forwarded whole, in the order they came. */
        if (fds[3].revents & POLLIN) {
            ssize_t n;
            while ((n = read(sdk_fifo, sdk_buf + sdk_have, SDK_BUF - sdk_have)) > 0) {
                sdk_have += (size_t)n;
                char *start = sdk_buf, *nl;
                while ((nl = memchr(start, '\n', sdk_have - (size_t)(start - sdk_buf)))) {
                    if (!sdk_overlong && sdk_port >= 0) send_all(sdk_port, start, (size_t)(nl + 1 - start));
                    sdk_overlong = 0;
                    start = nl + 1;
                }
                sdk_have -= (size_t)(start - sdk_buf);
                memmove(sdk_buf, start, sdk_have);
                if (sdk_have == SDK_BUF) {
                    /* Longer than wio keeps anyway: dropped up to its newline. */
                    sdk_have = 0;
                    sdk_overlong = 1;
                }
            }
        }
        /* wio.random: new clients, and 8 bytes for every 8 asked. */
        if (fds[4].revents & POLLIN) {
            int c;
            while ((c = accept4(listener, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
                if (nclients == MAX_CLIENTS) {
                    close(c);
                    continue;
                }
                asked_n[nclients] = 0;
                clients[nclients++] = c;
            }
        }
        for (int i = nclients - 1; i >= 0; i--) {
            if (!(fds[5 + i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            ssize_t n = read(clients[i], asked[i] + asked_n[i], 8 - asked_n[i]);
            if (n > 0) asked_n[i] += (size_t)n;
            if (n > 0 && asked_n[i] == 8) {
                char v[8] = {0};
                if (rnd_port < 0 || write(rnd_port, v, 8) != 8 || read_all(rnd_port, v, 8) != 0) n = 0;
                else send_all(clients[i], v, 8);
                asked_n[i] = 0;
            }
            if (n <= 0) {
                close(clients[i]);
                clients[i] = clients[--nclients];
                asked_n[i] = asked_n[nclients];
                memcpy(asked[i], asked[nclients], 8);
            }
        }
        if (fds[1].revents & POLLIN) {
            struct signalfd_siginfo si;
            while (read(sf, &si, sizeof si) == (ssize_t)sizeof si) {
            }
            int status;
            pid_t pid;
            while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
                for (int id = 0; id < MAX_RUNS; id++) {
                    if (pids[id] != pid) continue;
                    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
                    char out[64];
                    snprintf(out, sizeof out, "exited %d %d\n", id, code);
                    send_line(out);
                    pids[id] = 0;
                    break;
                }
            }
        }
        if (ff >= 0 && (fds[2].revents & POLLIN)) {
            ssize_t n = read(ff, fbuf + fhave, sizeof fbuf - 1 - fhave);
            if (n > 0) fhave += (size_t)n;
            char *nl;
            while ((nl = memchr(fbuf, '\n', fhave))) {
                *nl = 0;
                unsigned long secs;
                char tail;
                if (sscanf(fbuf, "stop_faults %lu%c", &secs, &tail) == 1) {
                    char out[64];
                    snprintf(out, sizeof out, "stop_faults %lu\n", secs);
                    send_line(out);
                }
                fhave -= (size_t)(nl + 1 - fbuf);
                memmove(fbuf, nl + 1, fhave);
            }
            if (fhave == sizeof fbuf - 1) fhave = 0; /* a line too long: dropped */
        }
        if (fds[0].revents & POLLIN) {
            ssize_t n = read(port, buf + have, sizeof buf - 1 - have);
            if (n > 0) have += (size_t)n;
            char *nl;
            while ((nl = memchr(buf, '\n', have))) {
                *nl = 0;
                int id = -1;
                char path[MAX_LINE];
                if (sscanf(buf, "start %d %1000s", &id, path) == 2 && id >= 0 && id < MAX_RUNS && !pids[id]) {
                    char full[MAX_LINE + 64];
                    snprintf(full, sizeof full, TESTS "/%s", path);
                    fprintf(stderr, "wio-agent: run %d: %s\n", id, path);
                    pid_t pid = fork();
                    if (pid == 0) {
                        sigprocmask(SIG_UNBLOCK, &mask, NULL);
                        setsid();
                        execl("/bin/wio-exec", "wio-exec", "/wio/run.cfg", root, full, (char *)NULL);
                        _exit(125);
                    }
                    if (pid > 0) {
                        pids[id] = pid;
                    } else {
                        char out[64];
                        snprintf(out, sizeof out, "exited %d 125\n", id);
                        send_line(out);
                    }
                } else if (sscanf(buf, "kill %d", &id) == 1 && id >= 0 && id < MAX_RUNS && pids[id] > 0) {
                    /* Its group (what it started too), and itself should it not lead one yet. */
                    kill(-pids[id], SIGKILL);
                    kill(pids[id], SIGKILL);
                }
                have -= (size_t)(nl + 1 - buf);
                memmove(buf, nl + 1, have);
            }
            if (have == sizeof buf - 1) have = 0;
        }
    }
}
