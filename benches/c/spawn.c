/* C reference for `spawn` (unixbench.md §4.9): fork; the child leaves at once with exit(0)
 * (atexit handlers, stdio flush and the loader's destructors run, as in UnixBench's program);
 * the parent wait()s and checks the status. SIGALRM prints COUNT|loops|1|lps and exits. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
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
	int status;

	if (argc != 2) {
		fprintf(stderr, "usage: %s seconds\n", argv[0]);
		exit(1);
	}
	int seconds = atoi(argv[1]);
	loops = 0;
	wake_me(seconds, report);
	for (;;) {
		pid_t child = fork();
		if (child == 0) {
			exit(0);
		} else if (child < 0) {
			fprintf(stderr, "fork failed at iteration %lu\n", loops);
			perror("reason");
			exit(2);
		}
		wait(&status);
		if (status != 0) {
			fprintf(stderr, "bad wait status: 0x%x\n", status);
			exit(2);
		}
		loops++;
	}
}
