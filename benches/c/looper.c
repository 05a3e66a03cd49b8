/* C reference for the shell tests' driver `looper` (unixbench.md §4.10): for the duration,
 * fork; the child execvp()s the command (exit(99) if that fails); the parent wait()s and checks
 * the status; one loop per completed command. SIGALRM prints COUNT|loops|60|lpm and exits; the
 * command in progress at that moment is not counted but keeps running (and keeps the output
 * pipe open) until it ends. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include "timeit.h"

static volatile unsigned long loops;

static void report(int sig)
{
	(void) sig;
	fprintf(stderr, "COUNT|%lu|60|lpm\n", loops);
	exit(0);
}

int main(int argc, char **argv)
{
	int status, seconds;

	if (argc < 3 || (seconds = atoi(argv[1])) < 1) {
		fprintf(stderr, "usage: %s seconds command [args...]\n", argv[0]);
		exit(1);
	}
	loops = 0;
	wake_me(seconds, report);
	for (;;) {
		pid_t child = fork();
		if (child == 0) {
			execvp(argv[2], argv + 2);
			exit(99);
		} else if (child < 0) {
			fprintf(stderr, "fork failed at iteration %lu\n", loops);
			perror("reason");
			exit(2);
		}
		wait(&status);
		if (status == 99 << 8) {
			fprintf(stderr, "command \"%s\" didn't exec\n", argv[2]);
			exit(2);
		} else if (status != 0) {
			fprintf(stderr, "bad wait status: 0x%x\n", status);
			exit(2);
		}
		loops++;
	}
}
