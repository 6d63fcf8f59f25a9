/*
 * wio-exec: starts an imported container image's process the way its config says.
 *
 * The launcher (images/image/launch.sh, the image machine's /workload.sh) mounts the
 * image's disk at ROOT and runs `wio-exec CONFIG ROOT [PROGRAM]` (PROGRAM, a path inside
 * the image, in place of the config's argv: the test composer's commands run so). CONFIG is written by
 * `wio run --image` into the run's initramfs; NUL-separated fields:
 *
 *   "wio-image-run 1", user, workdir, N, N env entries (NAME=VALUE), M, M argv entries
 *
 * wio-exec then:
 *   - resolves user ("", name, uid, name:group, uid:gid, ...) with ROOT/etc/passwd and
 *     ROOT/etc/group (a numeric id needs no entry; a name must have one);
 *   - chroot(ROOT); chdir(workdir or "/"), creating it (owned by the user) if missing;
 *   - setgroups (the user's supplementary groups in /etc/group), setgid, setuid;
 *   - execs argv[0] with exactly the image's environment (HOME added from /etc/passwd
 *     when the image sets none, PATH the usual default when the image sets none, as
 *     container engines do), searching PATH when argv[0] has no '/'.
 * Exit status as a shell's: 127 not found, 126 found but not runnable, 125 for a setup
 * failure (bad config, unknown user, chroot). Messages go to stderr, prefixed
 * "wio-exec:". Static, with glibc, but no NSS (no getpwnam): /etc files are read here.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define MAX_CONFIG (1 << 20)
#define MAX_ITEMS 4096
#define MAX_GROUPS 64
#define DEFAULT_PATH "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

static void die(int status, const char *what, const char *detail) {
    fprintf(stderr, "wio-exec: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    exit(status);
}

static int all_digits(const char *s) {
    if (!*s) return 0;
    for (; *s; s++)
        if (*s < '0' || *s > '9') return 0;
    return 1;
}

/* Reads a whole file into a NUL-terminated buffer (NULL when it cannot). */
static char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = malloc(MAX_CONFIG + 1);
    if (!buf) die(125, "out of memory", NULL);
    size_t n = fread(buf, 1, MAX_CONFIG, f);
    fclose(f);
    buf[n] = 0;
    if (len) *len = n;
    return buf;
}

/* Field FIELD (0-based, ':'-separated) of LINE, copied into OUT. */
static int field(const char *line, int fieldno, char *out, size_t cap) {
    for (int i = 0; i < fieldno; i++) {
        line = strchr(line, ':');
        if (!line) return 0;
        line++;
    }
    size_t n = strcspn(line, ":\n");
    if (n >= cap) return 0;
    memcpy(out, line, n);
    out[n] = 0;
    return 1;
}

/* Finds the /etc/passwd or /etc/group line whose field KEYFIELD is KEY. */
static const char *find_line(const char *file, int keyfield, const char *key) {
    char got[256];
    for (const char *line = file; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        if (field(line, keyfield, got, sizeof got) && strcmp(got, key) == 0) return line;
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 3 && argc != 4) die(125, "usage: wio-exec CONFIG ROOT [PROGRAM]", NULL);
    size_t len = 0;
    char *cfg = slurp(argv[1], &len);
    if (!cfg) die(125, "cannot read the run's config", argv[1]);
    char *items[2 * MAX_ITEMS + 8];
    size_t count = 0;
    for (size_t at = 0; at < len && count < sizeof items / sizeof items[0]; at += strlen(cfg + at) + 1)
        items[count++] = cfg + at;
    if (count < 5 || strcmp(items[0], "wio-image-run 1") != 0) die(125, "the run's config is not one wio wrote", argv[1]);
    const char *user = items[1], *workdir = items[2];
    size_t nenv = strtoul(items[3], NULL, 10);
    if (4 + nenv >= count || nenv > MAX_ITEMS) die(125, "the run's config is damaged (env)", NULL);
    char **env = items + 4;
    size_t nargs = strtoul(items[4 + nenv], NULL, 10);
    if (5 + nenv + nargs > count || nargs == 0 || nargs > MAX_ITEMS) die(125, "the image has no program to run: give one after --", NULL);
    char **args = items + 5 + nenv;
    args[nargs] = NULL; /* the slot after argv (a later item, or past count: inside items[]) */
    char *program[2] = {argc == 4 ? argv[3] : NULL, NULL};
    if (argc == 4) args = program;

    /* The user, in the image's own files. */
    char path[4096];
    snprintf(path, sizeof path, "%s/etc/passwd", argv[2]);
    char *passwd = slurp(path, NULL);
    snprintf(path, sizeof path, "%s/etc/group", argv[2]);
    char *group = slurp(path, NULL);
    char name[256] = "", grp[256] = "", home[1024] = "/";
    const char *colon = strchr(user, ':');
    snprintf(name, sizeof name, "%.*s", colon ? (int)(colon - user) : (int)strlen(user), user);
    if (colon) snprintf(grp, sizeof grp, "%s", colon + 1);
    uid_t uid = 0;
    gid_t gid = 0;
    int have_gid = 0;
    char uname[256] = "root";
    if (*name) {
        const char *line = passwd ? find_line(passwd, all_digits(name) ? 2 : 0, name) : NULL;
        if (line) {
            char buf[64];
            field(line, 0, uname, sizeof uname);
            field(line, 2, buf, sizeof buf);
            uid = (uid_t)strtoul(buf, NULL, 10);
            field(line, 3, buf, sizeof buf);
            gid = (gid_t)strtoul(buf, NULL, 10);
            have_gid = 1;
            field(line, 5, home, sizeof home);
        } else if (all_digits(name)) {
            uid = (uid_t)strtoul(name, NULL, 10);
            uname[0] = 0;
        } else {
            die(125, "the image's user is not in its /etc/passwd", name);
        }
    }
    if (*grp) {
        if (all_digits(grp)) {
            gid = (gid_t)strtoul(grp, NULL, 10);
        } else {
            const char *line = group ? find_line(group, 0, grp) : NULL;
            char buf[64];
            if (!line || !field(line, 2, buf, sizeof buf)) die(125, "the image's group is not in its /etc/group", grp);
            gid = (gid_t)strtoul(buf, NULL, 10);
        }
        have_gid = 1;
    }
    if (!have_gid) gid = 0;
    /* Supplementary groups: every /etc/group line listing the user (when named). */
    gid_t groups[MAX_GROUPS];
    size_t ngroups = 0;
    groups[ngroups++] = gid;
    if (group && uname[0] && !*grp) {
        for (const char *line = group; line && *line && ngroups < MAX_GROUPS; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
            char members[4096], buf[64];
            if (!field(line, 3, members, sizeof members) || !field(line, 2, buf, sizeof buf)) continue;
            for (char *m = strtok(members, ","); m; m = strtok(NULL, ","))
                if (strcmp(m, uname) == 0) groups[ngroups++] = (gid_t)strtoul(buf, NULL, 10);
        }
    }

    if (chroot(argv[2]) != 0 || chdir("/") != 0) die(125, "cannot enter the image's root", strerror(errno));
    const char *wd = *workdir ? workdir : "/";
    if (chdir(wd) != 0) {
        /* As container engines do: a missing working directory is made. */
        char part[4096];
        snprintf(part, sizeof part, "%s", wd);
        for (char *p = part + 1; *p; p++) {
            if (*p != '/') continue;
            *p = 0;
            mkdir(part, 0755);
            *p = '/';
        }
        mkdir(part, 0755);
        if (chown(part, uid, gid) != 0 || chdir(wd) != 0) die(125, "cannot enter the working directory", wd);
    }
    if (setgroups(ngroups, groups) != 0 || setgid(gid) != 0 || setuid(uid) != 0)
        die(125, "cannot become the image's user", strerror(errno));

    /* The environment: the image's, with HOME and PATH defaulted. */
    char *envp[MAX_ITEMS + 3];
    size_t ne = 0;
    int has_home = 0, has_path = 0;
    for (size_t i = 0; i < nenv; i++) {
        if (strncmp(env[i], "HOME=", 5) == 0) has_home = 1;
        if (strncmp(env[i], "PATH=", 5) == 0) has_path = 1;
        envp[ne++] = env[i];
    }
    char homevar[1100];
    if (!has_home) {
        snprintf(homevar, sizeof homevar, "HOME=%s", home);
        envp[ne++] = homevar;
    }
    if (!has_path) envp[ne++] = DEFAULT_PATH;
    envp[ne] = NULL;
    environ = envp;
    execvpe(args[0], args, envp);
    int err = errno;
    fprintf(stderr, "wio-exec: cannot run %s: %s\n", args[0], strerror(err));
    return err == ENOENT ? 127 : 126;
}
