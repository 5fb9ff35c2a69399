// SPDX-License-Identifier: MIT
/*
 * /init of the system rig's guests (scripts/check-system, doc/testing.md).
 *
 * The guest has no shell: this program is all of its user space besides
 * the programs under test.  It mounts what they need, runs the commands of
 * /plan one after the other, and writes everything back on the console,
 * each line tagged so that the host can pick it out of whatever else the
 * kernel prints:
 *
 *   @ak:begin NAME                a command starts
 *   @ak:NAME|LINE                 one line of its stdout and stderr
 *   @ak:end NAME rc=N secs=S      it exited (or signal=N, or timeout)
 *   @ak:file PATH|LINE            one line of a file the plan sends back
 *   @ak:sent PATH lines=N         the file ended (or missing)
 *   @ak:kmsg|LINE                 a kernel message of warning level or
 *                                 worse, at the end (the console shows none)
 *   @ak:done                      the plan is finished; power off follows
 *
 * /plan, one directive a line ('#' starts a comment):
 *
 *   env KEY=VALUE                 set for every later command
 *   run NAME SECS [KEY=VALUE...] /PROG [ARG...] [>FILE]
 *                                 run PROG with the extra variables, killed
 *                                 (with its process group) after SECS; its
 *                                 stdout into FILE instead, if given
 *   send PATH                     send the file back
 *   write PATH VALUE              write VALUE to PATH (a /proc/sys knob)
 *
 * Words are separated by blanks; no quoting.  Built static for each arch
 * with its cross compiler; it must stay free of everything but libc.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/klog.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#define MAX_WORDS	128
#define MAX_ENV		64
#define LINE_MAX_LEN	8192

static char *genv[MAX_ENV + 1];
static int ngenv;

static void put(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void put(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
}

static void mount_one(const char *src, const char *dir, const char *type)
{
	mkdir(dir, 0755);
	if (mount(src, dir, type, 0, NULL) && errno != EBUSY)
		put("@ak:warn mount %s on %s: %s\n", type, dir, strerror(errno));
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Pass on each whole line of buf[0..*len) tagged with name; keep the rest. */
static void relay(const char *name, char *buf, size_t *len, int flush)
{
	char *p = buf, *nl;

	while ((nl = memchr(p, '\n', *len - (size_t)(p - buf)))) {
		*nl = '\0';
		put("@ak:%s|%s\n", name, p);
		p = nl + 1;
	}
	*len -= (size_t)(p - buf);
	memmove(buf, p, *len);
	if (*len && (flush || *len >= LINE_MAX_LEN - 1)) {
		buf[*len] = '\0';
		put("@ak:%s|%s\n", name, buf);
		*len = 0;
	}
}

static void run(char **w, int n)
{
	static char buf[LINE_MAX_LEN];
	char *envp[MAX_ENV * 2 + 1];
	const char *name = w[1], *to = NULL;
	int secs = atoi(w[2]), ne = 0, i, fds[2], status = 0;
	int timed_out = 0;
	size_t len = 0;
	double t0 = now();
	pid_t pid;

	if (n > 4 && w[n - 1][0] == '>') {
		to = w[n - 1] + 1;
		w[--n] = NULL;
	}
	for (i = 0; i < ngenv; i++)
		envp[ne++] = genv[i];
	for (i = 3; i < n && w[i][0] != '/'; i++)
		if (ne < MAX_ENV * 2)
			envp[ne++] = w[i];
	envp[ne] = NULL;
	if (i >= n) {
		put("@ak:begin %s\n@ak:%s|plan: no program\n", name, name);
		put("@ak:end %s rc=127 secs=0\n", name);
		return;
	}
	put("@ak:begin %s\n", name);
	if (pipe(fds) || (pid = fork()) < 0) {
		put("@ak:%s|init: %s\n@ak:end %s rc=127 secs=0\n", name,
		    strerror(errno), name);
		return;
	}
	if (pid == 0) {
		setpgid(0, 0);
		close(fds[0]);
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		close(fds[1]);
		if (to) {
			int fd = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);

			if (fd < 0 || dup2(fd, 1) < 0)
				_exit(126);
			close(fd);
		}
		if (chdir("/tmp"))
			_exit(126);
		execve(w[i], &w[i], envp);
		fprintf(stderr, "init: exec %s: %s\n", w[i], strerror(errno));
		_exit(127);
	}
	setpgid(pid, pid);
	close(fds[1]);
	for (;;) {
		struct pollfd pfd = { .fd = fds[0], .events = POLLIN };
		int left = (int)((t0 + secs - now()) * 1000);
		ssize_t got;

		if (left <= 0) {
			timed_out = 1;
			kill(-pid, SIGKILL);
			break;
		}
		if (poll(&pfd, 1, left) <= 0)
			continue;
		got = read(fds[0], buf + len, sizeof(buf) - 1 - len);
		if (got <= 0)
			break;
		len += (size_t)got;
		relay(name, buf, &len, 0);
	}
	relay(name, buf, &len, 1);
	close(fds[0]);
	/* the command's leftovers (a child that kept running) go with it */
	kill(-pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (timed_out)
		put("@ak:end %s timeout secs=%d\n", name, secs);
	else if (WIFSIGNALED(status))
		put("@ak:end %s signal=%d secs=%.1f\n", name, WTERMSIG(status),
		    now() - t0);
	else
		put("@ak:end %s rc=%d secs=%.1f\n", name, WEXITSTATUS(status),
		    now() - t0);
}

static void send_file(const char *path)
{
	char line[LINE_MAX_LEN];
	FILE *f = fopen(path, "r");
	unsigned long n = 0;

	if (!f) {
		put("@ak:sent %s missing (%s)\n", path, strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		put("@ak:file %s|%s\n", path, line);
		n++;
	}
	fclose(f);
	put("@ak:sent %s lines=%lu\n", path, n);
}

static void write_file(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY);

	if (fd < 0 || write(fd, value, strlen(value)) < 0)
		put("@ak:warn write %s: %s\n", path, strerror(errno));
	if (fd >= 0)
		close(fd);
}

/* Kernel messages of level 4 (warning) or worse: a BUG, an rseq error. */
static void send_kmsg(void)
{
	int size = klogctl(10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0);
	char *buf, *p, *nl;
	int got;

	if (size <= 0 || !(buf = malloc((size_t)size + 1)))
		return;
	got = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, buf, size);
	if (got > 0) {
		buf[got] = '\0';
		for (p = buf; (nl = strchr(p, '\n')); p = nl + 1) {
			*nl = '\0';
			if (p[0] == '<' && p[1] >= '0' && p[1] <= '4')
				put("@ak:kmsg|%s\n", p);
		}
	}
	free(buf);
}

static void do_plan(const char *path)
{
	char line[LINE_MAX_LEN], *w[MAX_WORDS], *save;
	FILE *f = fopen(path, "r");
	int n;

	if (!f) {
		put("@ak:warn no plan %s: %s\n", path, strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		char *copy = strdup(line), *tok;

		n = 0;
		for (tok = strtok_r(copy, " \t\n", &save); tok && n < MAX_WORDS - 1;
		     tok = strtok_r(NULL, " \t\n", &save))
			w[n++] = tok;
		w[n] = NULL;
		if (!n || w[0][0] == '#') {
			free(copy);
			continue;
		}
		if (!strcmp(w[0], "env") && n == 2 && ngenv < MAX_ENV) {
			genv[ngenv++] = w[1];	/* kept: copy is not freed */
			continue;
		}
		if (!strcmp(w[0], "run") && n >= 4)
			run(w, n);
		else if (!strcmp(w[0], "send") && n == 2)
			send_file(w[1]);
		else if (!strcmp(w[0], "write") && n == 3)
			write_file(w[1], w[2]);
		else
			put("@ak:warn bad plan line: %s", line);
		free(copy);
	}
	fclose(f);
}

int main(void)
{
	struct utsname u;
	int fd;

	mount_one("proc", "/proc", "proc");
	mount_one("sysfs", "/sys", "sysfs");
	mount_one("devtmpfs", "/dev", "devtmpfs");
	mount_one("tmpfs", "/tmp", "tmpfs");
	mount_one("tmpfs", "/dev/shm", "tmpfs");
	fd = open("/dev/console", O_RDWR);
	if (fd >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		if (fd > 2)
			close(fd);
	}
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	if (!uname(&u))
		put("\n@ak:init kernel %s %s, %d CPUs online\n", u.release,
		    u.machine, get_nprocs());
	do_plan("/plan");
	send_kmsg();
	put("@ak:done\n");
	sync();
	reboot(RB_POWER_OFF);
	return 0;
}
