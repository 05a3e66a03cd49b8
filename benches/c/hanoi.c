/* C reference for `hanoi` (unixbench.md §5, UnixBench's src/hanoi.c): loop solving the
 * Towers of Hanoi with 10 disks by recursion, on a global int num[4] of peg counts set once,
 * counting solutions on a volatile counter. SIGALRM prints COUNT|iter|1|lps and exits. */
#include <stdio.h>
#include <stdlib.h>
#include "timeit.h"

static volatile unsigned long iter;
int num[4];

static void report(int sig)
{
	(void) sig;
	fprintf(stderr, "COUNT|%lu|1|lps\n", iter);
	exit(0);
}

static void mov(int n, int f, int t)
{
	int o;

	if (n == 1) {
		num[f]--;
		num[t]++;
		return;
	}
	o = 6 - (f + t);
	mov(n - 1, f, o);
	mov(1, f, t);
	mov(n - 1, o, t);
}

int main(int argc, char **argv)
{
	int disks = 10;

	if (argc < 2) {
		fprintf(stderr, "usage: %s seconds [disks]\n", argv[0]);
		exit(1);
	}
	if (argc > 2)
		disks = atoi(argv[2]);
	num[1] = disks;
	wake_me(atoi(argv[1]), report);
	for (;;) {
		mov(disks, 1, 3);
		iter++;
	}
}
