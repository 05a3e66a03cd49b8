/* C reference for the arithmetic tests (unixbench.md §5, UnixBench's src/arith.c): built once
 * per type with -DDATUM=<type> (short, int, long, float, double), or with -DEMPTY for
 * `arithoh` (the loop without a body). Each loop: ++iter on a volatile counter, then a call
 * that, for i = 2..101, computes x = i, y = x*x, z += y/(y-1) and returns x+y+z, its result
 * fed back as the next (ignored) argument. SIGALRM prints COUNT|iter|1|lps and exits. */
#include <stdio.h>
#include <stdlib.h>
#include "timeit.h"

static volatile unsigned long iter;

int dumb_stuff(int);

static void report(int sig)
{
	(void) sig;
	fprintf(stderr, "COUNT|%lu|1|lps\n", iter);
	exit(0);
}

int main(int argc, char **argv)
{
	int result = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: %s seconds\n", argv[0]);
		exit(1);
	}
	iter = 0;
	wake_me(atoi(argv[1]), report);
	for (;;) {
		++iter;
		result = dumb_stuff(result);
	}
}

int dumb_stuff(int i)
{
#ifndef EMPTY
	DATUM x = 0, y = 0, z = 0;
#endif
	for (i = 2; i <= 101; i++) {
#ifndef EMPTY
		x = i;
		y = x * x;
		z += y / (y - 1);
	}
	return x + y + z;
#else
	}
	return 0;
#endif
}
