/* C reference for `syscall` (unixbench.md §4.11). Default mode `mix`: a private read fd from a
 * pipe whose write end is closed; each loop close(dup(fd)), the raw getpid system call,
 * getuid(), umask(022): five system calls. Mode `exec` (`sysexec`): each loop fork(); the child
 * execl("/bin/true", ...) (exit(1) if that fails); the parent waitpid()s. SIGALRM prints
 * COUNT|loops|1|lps and exits. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "timeit.h"

static unsigned long loops;

static void report(int sig)
{
	(void) sig;
	fprintf(stderr, "COUNT|%lu|1|lps\n", loops);
	exit(0);
}

int main(int argc, char **argv)
{
	int fds[2];

	if (argc < 2) {
		fprintf(stderr, "usage: %s seconds\n", argv[0]);
		exit(1);
	}
	int seconds = atoi(argv[1]);
	if (pipe(fds) != 0) {
		perror("pipe");
		exit(1);
	}
	close(fds[1]);
	loops = 0;
	wake_me(seconds, report);
	if (argc > 2 && argv[2][0] == 'e') {
		for (;;) {
			pid_t pid = fork();
			if (pid < 0) {
				fprintf(stderr, "%s: fork failed\n", argv[0]);
				exit(1);
			}
			if (pid == 0) {
				execl("/bin/true", "/bin/true", (char *) 0);
				fprintf(stderr, "%s: exec /bin/true failed\n", argv[0]);
				exit(1);
			}
			if (waitpid(pid, NULL, 0) < 0) {
				fprintf(stderr, "%s: waitpid failed\n", argv[0]);
				exit(1);
			}
			loops++;
		}
	}
	for (;;) {
		close(dup(fds[0]));
		syscall(SYS_getpid);
		getuid();
		umask(022);
		loops++;
	}
}
