// SPDX-License-Identifier: MIT
/*
 * macro-run: run one program in a process (group) of its own and say what
 * it cost, as GNU time does for mimalloc-bench, but with the elapsed time
 * in microseconds and the allocator preloaded into the child only, never
 * into the timer.
 *
 * Prints one line of JSON members (without the braces, for the runner to
 * put in its run object):
 *
 *   "elapsed_s": 1.234567, "user_s": ..., "system_s": ...,
 *   "max_rss_kb": N, "minor_faults": N, "major_faults": N,
 *   "voluntary_switches": N, "involuntary_switches": N,
 *   "exit_status": N or null, "signal": N or null, "timed_out": bool
 *
 * The times, faults and switches are wait4()'s rusage of the child, which
 * includes every descendant it waited for (make's compilers, a shell's
 * pipeline); max_rss_kb is the largest resident set of any one of them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char usage[] =
	"usage: macro-run [-C DIR] [-i FILE] [-o FILE] [-e FILE] [-t SECONDS]\n"
	"                 [-p LIBRARY] [-v NAME=VALUE]... -- PROGRAM [ARG]...\n"
	"  -C  run in DIR             -i  stdin from FILE (default /dev/null)\n"
	"  -o  stdout to FILE         -e  stderr to FILE (default: this one's)\n"
	"  -t  kill it (and its group) after SECONDS (default: never)\n"
	"  -p  LD_PRELOAD=LIBRARY in the child (default: LD_PRELOAD unset)\n"
	"  -v  set NAME=VALUE in the child's environment\n"
	"exit status: 0 when PROGRAM exited 0, 1 when it did not (or timed\n"
	"out, or could not be started), 2 on bad usage, 128 + the signal\n"
	"when interrupted (the program's group is killed first)\n";

static void bad_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "macro-run: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n%s", usage);
	exit(2);
}

/* In the child: point @fd at @path, or die saying why. */
static void redirect(int fd, const char *path, int flags)
{
	int f = open(path, flags, 0644);

	if (f < 0 || dup2(f, fd) < 0) {
		dprintf(2, "macro-run: %s: %s\n", path, strerror(errno));
		_exit(127);
	}
	if (f != fd)
		close(f);
}

int main(int argc, char **argv)
{
	const char *dir = NULL, *in = "/dev/null", *out = NULL, *err = NULL;
	const char *preload = NULL;
	char **vars = calloc((size_t)argc, sizeof(*vars));
	int nvars = 0, i, status, timed_out = 0;
	unsigned long timeout = 0;
	struct timespec t0, t1, left;
	sigset_t sigs, old;
	struct rusage ru;
	long long us;
	pid_t pid;
	char *end;

	if (!vars)
		return 2;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--"))
			break;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(usage, stdout);
			return 0;
		}
		if (a[0] != '-' || !a[1] || a[2] || !strchr("Cioetpv", a[1]))
			bad_usage("unknown option '%s'", a);
		if (i + 1 >= argc)
			bad_usage("%s needs a value", a);
		switch (a[1]) {
		case 'C': dir = argv[++i]; break;
		case 'i': in = argv[++i]; break;
		case 'o': out = argv[++i]; break;
		case 'e': err = argv[++i]; break;
		case 'p': preload = argv[++i]; break;
		case 'v':
			if (!strchr(argv[i + 1], '=') || argv[i + 1][0] == '=')
				bad_usage("-v '%s': expected NAME=VALUE",
					  argv[i + 1]);
			vars[nvars++] = argv[++i];
			break;
		case 't':
			errno = 0;
			timeout = strtoul(argv[++i], &end, 10);
			if (argv[i][0] < '0' || argv[i][0] > '9' || *end ||
			    errno || !timeout || timeout > 86400)
				bad_usage("-t '%s': expected 1 to 86400 seconds",
					  argv[i]);
			break;
		}
	}
	if (i + 1 >= argc)
		bad_usage("%s", "no program to run (after --)");
	argv += i + 1;

	/*
	 * The child's end arrives as a pending SIGCHLD that sigtimedwait()
	 * takes: no window between checking for it and sleeping.  Its
	 * disposition must not be SIG_IGN (inherited), which would reap the
	 * child before wait4 could read its rusage.
	 */
	signal(SIGCHLD, SIG_DFL);
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGCHLD);
	/* and an interrupt ends the child's group before this process */
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	sigprocmask(SIG_BLOCK, &sigs, &old);
	fflush(stdout);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "macro-run: fork: %s\n", strerror(errno));
		return 2;
	}
	if (!pid) {
		/* a group of its own, so that a timeout reaches make's jobs */
		setpgid(0, 0);
		sigprocmask(SIG_SETMASK, &old, NULL);
		if (dir && chdir(dir)) {
			dprintf(2, "macro-run: %s: %s\n", dir, strerror(errno));
			_exit(127);
		}
		redirect(0, in, O_RDONLY);
		if (out)
			redirect(1, out, O_WRONLY | O_CREAT | O_TRUNC);
		if (err)
			redirect(2, err, O_WRONLY | O_CREAT | O_TRUNC);
		for (i = 0; i < nvars; i++)
			putenv(vars[i]);
		if (preload && *preload)
			setenv("LD_PRELOAD", preload, 1);
		else
			unsetenv("LD_PRELOAD");
		execvp(argv[0], argv);
		dprintf(2, "macro-run: %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	setpgid(pid, pid);
	for (;;) {
		pid_t r = wait4(pid, &status, WNOHANG, &ru);
		int sig;

		if (r == pid)
			break;
		if (r < 0 && errno != EINTR) {
			fprintf(stderr, "macro-run: wait4: %s\n",
				strerror(errno));
			kill(-pid, SIGKILL);
			return 2;
		}
		sig = 0;
		if (timeout && !timed_out) {
			clock_gettime(CLOCK_MONOTONIC, &t1);
			us = (long long)timeout * 1000000 -
			     ((t1.tv_sec - t0.tv_sec) * 1000000ll +
			      (t1.tv_nsec - t0.tv_nsec) / 1000);
			if (us <= 0) {
				timed_out = 1;
				kill(-pid, SIGKILL);
				continue;
			}
			left.tv_sec = us / 1000000;
			left.tv_nsec = us % 1000000 * 1000;
			sig = sigtimedwait(&sigs, NULL, &left);
		} else {
			sig = sigtimedwait(&sigs, NULL, NULL);
		}
		if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) {
			kill(-pid, SIGKILL);
			waitpid(pid, NULL, 0);
			fprintf(stderr, "macro-run: interrupted: %s killed\n",
				argv[0]);
			return 128 + sig;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	/* whatever it left running in its group (a daemon, a stray job) */
	kill(-pid, SIGKILL);

	us = (t1.tv_sec - t0.tv_sec) * 1000000ll +
	     (t1.tv_nsec - t0.tv_nsec) / 1000;
	printf("\"elapsed_s\": %lld.%06lld, \"user_s\": %ld.%06ld, "
	       "\"system_s\": %ld.%06ld, \"max_rss_kb\": %ld, "
	       "\"minor_faults\": %ld, \"major_faults\": %ld, "
	       "\"voluntary_switches\": %ld, \"involuntary_switches\": %ld, ",
	       us / 1000000, us % 1000000, (long)ru.ru_utime.tv_sec,
	       (long)ru.ru_utime.tv_usec, (long)ru.ru_stime.tv_sec,
	       (long)ru.ru_stime.tv_usec, ru.ru_maxrss, ru.ru_minflt,
	       ru.ru_majflt, ru.ru_nvcsw, ru.ru_nivcsw);
	if (WIFEXITED(status))
		printf("\"exit_status\": %d, \"signal\": null, ",
		       WEXITSTATUS(status));
	else
		printf("\"exit_status\": null, \"signal\": %d, ",
		       WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	printf("\"timed_out\": %s\n", timed_out ? "true" : "false");
	free(vars);
	return WIFEXITED(status) && !WEXITSTATUS(status) && !timed_out ? 0 : 1;
}
