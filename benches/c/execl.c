/* C reference for `execl` (unixbench.md §4.3): the program replaces itself with itself until
 * the duration (whole seconds of time()) has passed; the state travels in argv.
 *
 * First invocation `execl SECONDS`: the path to exec is $UB_BINDIR/execl, the start is time().
 * Continuation `execl 0 SECONDS COUNT START`: three atoi() and one sscanf("%lu"), the path is
 * argv[0]. Every image then formats the count and the start with sprintf(), calls time(), and
 * either prints COUNT|count|1|lps on stderr and exits, or execl()s itself with five arguments.
 *
 * UnixBench's program carries about 600 lines of unrelated code (big.c, never called) and an
 * 8 KiB bss array so that the image is not trivially small; execl_bulk.c plays that part here
 * (unrelated, never called), so that size, imports and relocations are of the same order. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

char bss[8 * 1024];

int main(int argc, char **argv)
{
	unsigned long count = 0;
	char count_str[12], start_str[24], path_str[256], *dur_str, *path, *bindir;
	time_t start, now;
	int seconds;

	if (argc < 2) {
		fprintf(stderr, "usage: %s seconds\n", argv[0]);
		exit(1);
	}
	seconds = atoi(argv[1]);
	if (seconds > 0) {
		dur_str = argv[1];
		if ((bindir = getenv("UB_BINDIR")) != NULL)
			sprintf(path_str, "%s/execl", bindir);
		path = path_str;
		time(&start);
	} else {
		seconds = atoi(argv[2]);
		dur_str = argv[2];
		count = (unsigned long) atoi(argv[3]);
		sscanf(argv[4], "%lu", (unsigned long *) &start);
		path = argv[0];
	}
	sprintf(count_str, "%lu", ++count);
	sprintf(start_str, "%lu", (unsigned long) start);
	time(&now);
	if (now - start >= seconds) {
		fprintf(stderr, "COUNT|%lu|1|lps\n", count);
		exit(0);
	}
	execl(path, path, "0", dur_str, count_str, start_str, (char *) 0);
	fprintf(stderr, "exec failed at iteration %lu\n", count);
	perror("reason");
	exit(1);
}
