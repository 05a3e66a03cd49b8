/* C reference for the file copy tests (`fstime -c|-r|-w -t SECS -d DIR -b BUFSIZE -m MAXBLOCKS`,
 * unixbench.md §4.4-4.6). Files dummy0-<pid> and dummy1-<pid> in DIR, created with
 * creat(0600), closed and reopened read-write, unlinked at the end. The buffer is a static
 * 8 KiB array filled with i & 0xff. Every phase starts with sync and sleeps (write and read:
 * sync, 2 s, sync, 2 s; copy: sync, 2 s, sync, 1 s). Bytes are counted in 256-byte units;
 * a phase's score is counts / (seconds * 4), truncated: KiB per second. Each phase prints
 * COUNT|score|0|KBps and TIME|seconds on stderr (the last pair, the copy's in -c mode, is the
 * result). -c runs write 2 s, read 2 s, then copy for the duration. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <unistd.h>

#define MAX_BUFSIZE 8192
#define COUNTSIZE 256
#define HALFCOUNT (COUNTSIZE / 2)

char name0[] = "dummy0-XXXXXXXXXX";
char name1[] = "dummy1-XXXXXXXXXX";
long read_score = 1, write_score = 1, copy_score = 1;
int bufsize = 1024, max_blocks = 2000, max_buffs, count_per_k, count_per_buf;
char buf[MAX_BUFSIZE];
int f, g;
int sigalarm;

static void stop_count(int sig)
{
	(void) sig;
	sigalarm = 1;
}

static void clean_up(void)
{
	unlink(name0);
	unlink(name1);
}

static double now(void)
{
	struct timeval t;
	gettimeofday(&t, 0);
	return (double) t.tv_sec + (double) t.tv_usec / 1000000.0;
}

static void settle(int second_pause)
{
	sync();
	sleep(2);
	sync();
	sleep((unsigned) second_pause);
}

static void arm(int seconds)
{
	sigalarm = 0;
	signal(SIGALRM, stop_count);
	alarm((unsigned) seconds);
}

static void result(const char *what, unsigned long counted, double start, double end, long *score)
{
	*score = (long) ((double) counted / ((end - start) * count_per_k));
	printf("%s done: %lu in %.4f, score %ld\n", what, counted, end - start, *score);
	fprintf(stderr, "COUNT|%ld|0|KBps\n", *score);
	fprintf(stderr, "TIME|%.1f\n", end - start);
}

static int w_test(int seconds)
{
	unsigned long counted = 0, n;
	long blocks;
	double start;

	settle(2);
	arm(seconds);
	start = now();
	while (!sigalarm) {
		for (blocks = 0; blocks < max_buffs; ++blocks) {
			if ((n = (unsigned long) write(f, buf, (size_t) bufsize)) != (unsigned long) bufsize) {
				if (errno != EINTR) {
					perror("fstime: write");
					return -1;
				}
				stop_count(0);
				counted += (n + HALFCOUNT) / COUNTSIZE;
			} else {
				counted += (unsigned long) count_per_buf;
			}
		}
		lseek(f, 0L, SEEK_SET);
	}
	result("Write", counted, start, now(), &write_score);
	return 0;
}

static int r_test(int seconds)
{
	unsigned long counted = 0, n;
	double start;

	settle(2);
	errno = 0;
	lseek(f, 0L, SEEK_SET);
	arm(seconds);
	start = now();
	while (!sigalarm) {
		if ((n = (unsigned long) read(f, buf, (size_t) bufsize)) != (unsigned long) bufsize) {
			switch (errno) {
			case 0:
			case EINVAL:
				lseek(f, 0L, SEEK_SET);
				counted += (n + HALFCOUNT) / COUNTSIZE;
				continue;
			case EINTR:
				stop_count(0);
				counted += (n + HALFCOUNT) / COUNTSIZE;
				break;
			default:
				perror("fstime: read");
				return -1;
			}
		} else {
			counted += (unsigned long) count_per_buf;
		}
	}
	result("Read", counted, start, now(), &read_score);
	return 0;
}

static int c_test(int seconds)
{
	unsigned long counted = 0, n;
	double start;

	sync();
	sleep(2);
	sync();
	sleep(1);
	errno = 0;
	lseek(f, 0L, SEEK_SET);
	arm(seconds);
	start = now();
	while (!sigalarm) {
		if ((n = (unsigned long) read(f, buf, (size_t) bufsize)) != (unsigned long) bufsize) {
			switch (errno) {
			case 0:
			case EINVAL:
				lseek(f, 0L, SEEK_SET);
				lseek(g, 0L, SEEK_SET);
				continue;
			case EINTR:
				counted += ((n * (unsigned long) write_score) /
					    (unsigned long) (read_score + write_score) + HALFCOUNT) / COUNTSIZE;
				stop_count(0);
				break;
			default:
				perror("fstime: copy read");
				return -1;
			}
		} else if ((n = (unsigned long) write(g, buf, (size_t) bufsize)) != (unsigned long) bufsize) {
			if (errno != EINTR) {
				perror("fstime: copy write");
				return -1;
			}
			counted += (n + (((unsigned long) bufsize - n) * (unsigned long) write_score) /
				    (unsigned long) (read_score + write_score) + HALFCOUNT) / COUNTSIZE;
			stop_count(0);
		} else {
			counted += (unsigned long) count_per_buf;
		}
	}
	result("Copy", counted, start, now(), &copy_score);
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: fstime [-c|-r|-w] [-b bufsize] [-m max_blocks] [-t seconds] [-d dir]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int seconds = 10, status, i;
	char test = 'c';

	for (i = 1; i < argc; ++i) {
		if (argv[i][0] != '-')
			usage();
		switch (argv[i][1]) {
		case 'c':
		case 'r':
		case 'w':
			test = argv[i][1];
			break;
		case 'b':
		case 'm':
		case 't':
		case 'd':
			if (i + 1 >= argc)
				usage();
			if (argv[i][1] == 'b')
				bufsize = atoi(argv[++i]);
			else if (argv[i][1] == 'm')
				max_blocks = atoi(argv[++i]);
			else if (argv[i][1] == 't')
				seconds = atoi(argv[++i]);
			else if (chdir(argv[++i]) < 0) {
				perror("fstime: chdir");
				exit(1);
			}
			break;
		default:
			usage();
		}
	}
	if (bufsize < COUNTSIZE || bufsize > MAX_BUFSIZE || max_blocks < 1 ||
	    max_blocks > 1024 * 1024 || seconds < 1 || seconds > 3600) {
		fprintf(stderr, "fstime: argument out of range\n");
		exit(3);
	}
	max_buffs = max_blocks * 1024 / bufsize;
	count_per_k = 1024 / COUNTSIZE;
	count_per_buf = bufsize / COUNTSIZE;

	int pid = getpid();
	snprintf(name0 + sizeof "dummy0", sizeof name0 - sizeof "dummy0", "%d", pid);
	snprintf(name1 + sizeof "dummy1", sizeof name1 - sizeof "dummy1", "%d", pid);
	if ((f = creat(name0, 0600)) == -1 || close(f) != 0 || (g = creat(name1, 0600)) == -1 ||
	    close(g) != 0) {
		perror("fstime: creat");
		exit(1);
	}
	if ((f = open(name0, O_RDWR)) == -1 || (g = open(name1, O_RDWR)) == -1) {
		perror("fstime: open");
		exit(1);
	}
	for (i = 0; i < bufsize; ++i)
		buf[i] = (char) (i & 0xff);

	switch (test) {
	case 'w':
		status = w_test(seconds);
		break;
	case 'r':
		w_test(2);
		status = r_test(seconds);
		break;
	default:
		w_test(2);
		r_test(2);
		status = c_test(seconds);
		break;
	}
	clean_up();
	exit(status ? 1 : 0);
}
