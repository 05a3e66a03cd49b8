/* C reference for `context1` (unixbench.md §4.8): alarm armed, SIGPIPE ignored, two pipes,
 * fork. The parent writes its counter down pipe 1 and reads the echo from pipe 2; the child
 * reads pipe 1, checks the value against its own counter and writes it back. SIGALRM (parent
 * only; alarms are not inherited) prints the parent's COUNT line and exits; the child then
 * sees EOF or EPIPE and prints its own COUNT line, which comes last. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include "timeit.h"

static unsigned long loops;

static void report(int sig)
{
	(void) sig;
	fprintf(stderr, "COUNT|%lu|1|lps\n", loops);
	exit(0);
}

static void failed(const char *what, ssize_t n)
{
	if (n == -1 && errno != 0 && errno != EINTR)
		perror(what);
	exit(1);
}

int main(int argc, char **argv)
{
	unsigned long echo;
	int down[2], up[2];
	ssize_t n;

	if (argc != 2) {
		fprintf(stderr, "usage: %s seconds\n", argv[0]);
		exit(1);
	}
	int seconds = atoi(argv[1]);
	loops = 0;
	wake_me(seconds, report);
	signal(SIGPIPE, SIG_IGN);
	if (pipe(down) || pipe(up)) {
		perror("pipe");
		exit(1);
	}
	if (fork()) {
		close(down[0]);
		close(up[1]);
		for (;;) {
			if ((n = write(down[1], &loops, sizeof loops)) != sizeof loops) {
				if (n == -1 && errno == EPIPE) {
					alarm(0);
					report(0);
				}
				failed("parent write", n);
			}
			if ((n = read(up[0], &echo, sizeof echo)) != sizeof echo) {
				if (n == 0) {
					alarm(0);
					report(0);
				}
				failed("parent read", n);
			}
			if (echo != loops) {
				fprintf(stderr, "master sync error: expected %lu, got %lu\n", loops, echo);
				exit(2);
			}
			loops++;
		}
	}
	close(down[1]);
	close(up[0]);
	for (;;) {
		if ((n = read(down[0], &echo, sizeof echo)) != sizeof echo) {
			if (n == 0) {
				alarm(0);
				report(0);
			}
			failed("child read", n);
		}
		if (echo != loops) {
			fprintf(stderr, "slave sync error: expected %lu, got %lu\n", loops, echo);
			exit(2);
		}
		if ((n = write(up[1], &loops, sizeof loops)) != sizeof loops) {
			if (n == -1 && errno == EPIPE) {
				alarm(0);
				report(0);
			}
			failed("child write", n);
		}
		loops++;
	}
}
