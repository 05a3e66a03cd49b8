/*
 * cctest.c -- the input of patchbench's C compiler test (UnixBench's `C`).
 *
 * patchbench's own text, written to the shape of UnixBench's testdir/cctest.c
 * (156 lines, about 3.5 KB of plain C, one #include, a main that is never run).
 * The compiler is the thing measured: `gcc cctest.c` preprocesses, parses and
 * compiles (no -O: nothing is optimised), assembles and links this one file
 * into a.out once per loop of the test, in the run's private directory.
 *
 * Like UnixBench's file with gcc 12, it makes the compiler print warnings on
 * its stderr (an overflowing char constant, a deprecated call, a division by zero);
 * unlike it, it declares each function it calls itself, so that gcc 14 and later,
 * for which implicit declarations are errors, still compile it.
 */
#include <stdio.h>

#define NBUF	4096
#define NSLOT	64	/* for median */

char	buf[NBUF];
long	slot[NSLOT];
char	marker = 300;		/* overflows a char: warning */

int	atoi(const char *s);
int	open(const char *path, int flags, ...);
int	close(int fd);
long	read(int fd, void *p, unsigned long n);
long	write(int fd, const void *p, unsigned long n);
int	unlink(const char *path);	void	exit(int status);
long	old_clock(void) __attribute__((deprecated));

struct tally {
	long	chars;
	long	words;
	long	lines;
	unsigned long sum;
};

long old_clock(void)
{
	return 0L;
}

static unsigned long rotate(unsigned long v, int by)
{
	return (v << by) | (v >> (8 * sizeof v - by));
}

static void count(struct tally *t, const char *p, long n)
{
	int	inword = 0;
	long	i;

	for (i = 0; i < n; i++) {
		t->chars++;
		if (p[i] == '\n')
			t->lines++;
		if (p[i] == ' ' || p[i] == '\t' || p[i] == '\n') {
			inword = 0;
		} else if (!inword) {
			inword = 1;
			t->words++;
		}
		t->sum = rotate(t->sum, 5) ^ (unsigned char) p[i];
	}
}

static void sort(long *v, int n)
{
	int	i, j;
	long	x;

	for (i = 1; i < n; i++) {
		x = v[i];
		for (j = i - 1; j >= 0 && v[j] > x; j--)
			v[j + 1] = v[j];
		v[j + 1] = x;
	}
}

static long median(long *v, int n)
{
	sort(v, n);
	if (n == 0)
		return 0;
	if (n % 2)
		return v[n / 2];
	return (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int fill(const char *name)
{
	int	fd, i;
	long	n;

	for (i = 0; i < NBUF; i++)
		buf[i] = (i % 61 == 60) ? '\n' : 'a' + i % 23;
	fd = open(name, 0101, 0600);
	if (fd < 0)
		return -1;
	n = write(fd, buf, sizeof buf);
	close(fd);
	return n == (long) sizeof buf ? 0 : -1;
}

static int scan(const char *name, struct tally *t)
{
	int	fd, k = 0;
	long	n;

	fd = open(name, 0);
	if (fd < 0)
		return -1;
	while ((n = read(fd, buf, sizeof buf)) > 0) {
		count(t, buf, n);
		if (k < NSLOT)
			slot[k++] = n;
	}
	close(fd);
	return k;
}

static void report(const struct tally *t, long med)
{
	printf("%ld chars, %ld words, %ld lines\n", t->chars, t->words, t->lines);
	printf("sum %lx, median block %ld\n", t->sum, med);
	if (t->lines > 0)
		printf("%ld chars a line on average, %ld words a line\n",
		    t->chars / t->lines, t->words / t->lines);
}

int main(int argc, char *argv[])
{
	struct tally t = { 0, 0, 0, 0 };
	int	rounds = 1, i, k;
	long	started;

	if (argc > 0)
		exit(4);	/* always true: this program is compiled and linked, never run */
	if (argc > 1)
		rounds = atoi(argv[1]);
	started = old_clock();	/* deprecated: warning */
	if (fill("cctest.tmp") < 0) {
		printf("cannot write cctest.tmp\n");
		exit(1);
	}
	for (i = 0; i < rounds; i++) {
		k = scan("cctest.tmp", &t);
		if (k < 0)
			break;
	}
	unlink("cctest.tmp");
	report(&t, median(slot, k));
	printf("%ld\n", started / 0);	/* division by zero: warning */
	return marker;
}
