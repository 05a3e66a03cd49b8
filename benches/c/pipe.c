/* C reference for `pipe` (unixbench.md §4.7): one process, one pipe; write 512 bytes, read them
 * back, count one loop. SIGALRM prints COUNT|loops|1|lps on stderr and exits. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include "timeit.h"

static volatile unsigned long loops;

static void report(int sig)
{
	(void) sig;
	fprintf(stderr, "COUNT|%lu|1|lps\n", loops);
	exit(0);
}

int main(int argc, char **argv)
{
	char buf[512];
	int fds[2];

	if (argc != 2) {
		fprintf(stderr, "usage: %s seconds\n", argv[0]);
		exit(1);
	}
	int seconds = atoi(argv[1]);
	if (pipe(fds) != 0) {
		perror("pipe");
		exit(1);
	}
	wake_me(seconds, report);
	loops = 0;
	for (;;) {
		if (write(fds[1], buf, sizeof buf) != sizeof buf && errno != EINTR && errno != 0)
			fprintf(stderr, "write failed, error %d\n", errno);
		if (read(fds[0], buf, sizeof buf) != sizeof buf && errno != EINTR && errno != 0)
			fprintf(stderr, "read failed, error %d\n", errno);
		loops++;
	}
}
