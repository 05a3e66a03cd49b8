/* C reference for `patchbench aim7` (aim7.md §1-§3, aim7-jobs.md §0, §1b, §1c, §4, §5, §6):
 * what AIM Suite VII's `multitask` does for a one-line workfile, written from the spec.
 *
 *   aim7 TEST LOAD JOBS DIR BLOCKS DELAY LOG
 *
 * TEST is creat-clo, disk_rr, disk_rw, disk_rd, disk_wrt or disk_cp; LOAD the number of tasks;
 * JOBS AIM's LOADNUM (100); DIR the one `config` directory; BLOCKS the disk files' size in
 * 1 KiB blocks (FILESIZE + POOLSIZE / LOAD); DELAY the seconds between parking and release
 * (AIM: 10); LOG 1 to append AIM's per-job line to logfile.suite7 in the working directory.
 *
 * Driver (multitask.c runtap): write DIR/tmpa.common (B blocks, byte j = j mod 127), sync
 * three times, open the log with fopen "a" before forking, then fork LOAD tasks. Each task
 * seeds both generators with its index, installs SIGINT as "go", writes one word to a pipe
 * and pause()s. The parent reads LOAD words, takes the start mark with times(), sleeps DELAY,
 * sends SIGINT to its process group (it ignores SIGINT itself), then wait()s: at each reaped
 * task it takes the completion time (times()) and logs `<load> job_timing <ms> 0 0`. After
 * the last: real = end - start in clock ticks, jobs/min = JOBS * LOAD * 60 / real, cpu = the
 * reaped tasks' user + system time. Prints `jobs/min|<value>|real|<seconds>|cpu|<seconds>`.
 *
 * Task: draws aim_rand2() % 1 for its first directory, then per job: aim_rand() % 1 (the
 * one workfile line), times() twice (rtmsec and the CPU times), the job, times() twice,
 * fprintf + fflush of `<load> <test> <ms> <user ms> <sys ms>`; at the end fclose and exit(0).
 * The disk jobs share one static 1 KiB buffer, zeros until a read fills it. Temp names are
 * DIR/tmpb.<pid mod 100000, 5 digits><counter, 5 digits> (aim_mktemp). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/times.h>
#include <sys/wait.h>
#include <unistd.h>

#define NBUFSIZE 1024

static unsigned long rand_state = 1, rand2_state = 1;

/* AIM's 15-bit generator: s = s * 1103515245 + 12345 (mod 2^64), output bits 16..30. */
static int aim_rand(void)
{
	rand_state = rand_state * 1103515245UL + 12345UL;
	return (int) ((rand_state >> 16) & 0x7fff);
}

static int aim_rand2(void)
{
	rand2_state = rand2_state * 1103515245UL + 12345UL;
	return (int) ((rand2_state >> 16) & 0x7fff);
}

static char nbuf[NBUFSIZE];
static long blocks;
static char dir[4096];
static int mktemp_counter;

static void fail(const char *what)
{
	fprintf(stderr, "aim7 reference: %s: %s\n", what, strerror(errno));
	kill(getppid(), SIGTERM);
	exit(1);
}

/* AIM's aim_mktemp: <prefix><pid mod 100000><counter mod 100000>, five digits each. */
static void temp_name(char *out, size_t size, const char *prefix)
{
	snprintf(out, size, "%s/%s%05d%05d", dir, prefix, (int) (getpid() % 100000),
		 mktemp_counter);
	mktemp_counter = (mktemp_counter + 1) % 100000;
}

static void creat_clo(void)
{
	char name[4200];
	int fd = -1, i;

	temp_name(name, sizeof name, "tmpb.");
	for (i = 0; i < 1000; i++) {
		fd = creat(name, 0777);
		if (fd < 0)
			fail("creat");
		if (close(fd) < 0)
			fail("close");
	}
	if (unlink(name) < 0)
		fail("unlink");
}

static void write_blocks(int fd, long n)
{
	long i;
	for (i = 0; i < n; i++)
		if (write(fd, nbuf, NBUFSIZE) != NBUFSIZE)
			fail("write");
}

static void read_blocks(int fd, long n)
{
	long i;
	for (i = 0; i < n; i++)
		if (read(fd, nbuf, NBUFSIZE) != NBUFSIZE)
			fail("read");
}

/* disk_rr / disk_rw: a fresh file of B blocks, reopened, unlinked, then B random blocks. */
static void disk_random(int writes)
{
	char name[4200];
	long i;
	int fd;

	temp_name(name, sizeof name, "tmpb.");
	if ((fd = creat(name, 0777)) < 0)
		fail("creat");
	write_blocks(fd, blocks);
	if (close(fd) < 0)
		fail("close");
	if ((fd = open(name, writes ? O_WRONLY : O_RDONLY)) < 0)
		fail("open");
	if (unlink(name) < 0)
		fail("unlink");
	for (i = 0; i < blocks; i++) {
		if (lseek(fd, (off_t) (aim_rand() % blocks) * NBUFSIZE, SEEK_SET) < 0)
			fail("lseek");
		if (writes)
			write_blocks(fd, 1);
		else
			read_blocks(fd, 1);
	}
	if (close(fd) < 0)
		fail("close");
}

static void disk_rr(void)
{
	disk_random(0);
}

static void disk_rw(void)
{
	disk_random(1);
}

static int open_common(void)
{
	char name[4200];
	int fd;

	snprintf(name, sizeof name, "%s/tmpa.common", dir);
	if ((fd = open(name, O_RDONLY)) < 0)
		fail("open tmpa.common");
	return fd;
}

static void disk_rd(void)
{
	int fd = open_common();
	if (lseek(fd, 0, SEEK_SET) < 0)
		fail("lseek");
	read_blocks(fd, blocks);
	if (close(fd) < 0)
		fail("close");
}

static void disk_wrt(void)
{
	char name[4200];
	int fd;

	temp_name(name, sizeof name, "tmpb.");
	if ((fd = creat(name, 0777)) < 0)
		fail("creat");
	if (unlink(name) < 0)
		fail("unlink");
	write_blocks(fd, blocks);
	if (close(fd) < 0)
		fail("close");
}

static void disk_cp(void)
{
	char name[4200];
	int src = open_common(), dst;
	long i;

	temp_name(name, sizeof name, "tmpb.");
	if ((dst = creat(name, 0777)) < 0)
		fail("creat");
	if (unlink(name) < 0)
		fail("unlink");
	if (lseek(src, 0, SEEK_SET) < 0)
		fail("lseek");
	for (i = 0; i < blocks; i++) {
		read_blocks(src, 1);
		write_blocks(dst, 1);
	}
	if (close(src) < 0 || close(dst) < 0)
		fail("close");
}

static volatile sig_atomic_t go;

static void on_go(int sig)
{
	(void) sig;
	go = 1;
}

static long hz;

/* AIM's rtmsec: elapsed clock ticks from times(), in milliseconds. */
static double rtmsec(void)
{
	struct tms t;
	return (double) times(&t) * 1000.0 / (double) hz;
}

static void run_task(int index, const char *test, void (*job)(void), int jobs, int load, int word_fd,
		     FILE *log)
{
	int counts = jobs, j;
	struct tms t0, t1;
	double start, end;

	rand_state = rand2_state = (unsigned long) index;
	signal(SIGINT, on_go);
	if (write(word_fd, &index, sizeof index) != sizeof index)
		fail("write to the driver");
	while (!go)
		pause();
	(void) (aim_rand2() % 1); /* the first DISKS directory of one */
	for (j = 0; j < jobs; j++) {
		if (aim_rand() % 1 == 0 && counts > 0)
			counts--;
		start = rtmsec();
		times(&t0);
		job();
		end = rtmsec();
		times(&t1);
		if (log) {
			fprintf(log, "%d %s %g %g %g\n", load, test, end - start,
				(double) (t1.tms_utime - t0.tms_utime) * 1000.0 / (double) hz,
				(double) (t1.tms_stime - t0.tms_stime) * 1000.0 / (double) hz);
			fflush(log);
		}
	}
	if (log)
		fclose(log);
	exit(0);
}

int main(int argc, char **argv)
{
	const char *test;
	void (*job)(void);
	int load, jobs, delay, use_log, i, p[2], word, status;
	FILE *log = NULL;
	struct tms t;
	clock_t start, now, cpu_start;
	char common[4200];
	char block[NBUFSIZE];
	int fd;

	if (argc != 8) {
		fprintf(stderr, "usage: %s TEST LOAD JOBS DIR BLOCKS DELAY LOG\n", argv[0]);
		return 2;
	}
	test = argv[1];
	load = atoi(argv[2]);
	jobs = atoi(argv[3]);
	snprintf(dir, sizeof dir, "%s", argv[4]);
	blocks = atol(argv[5]);
	delay = atoi(argv[6]);
	use_log = atoi(argv[7]);
	hz = sysconf(_SC_CLK_TCK);
	if (!strcmp(test, "creat-clo"))
		job = creat_clo;
	else if (!strcmp(test, "disk_rr"))
		job = disk_rr;
	else if (!strcmp(test, "disk_rw"))
		job = disk_rw;
	else if (!strcmp(test, "disk_rd"))
		job = disk_rd;
	else if (!strcmp(test, "disk_wrt"))
		job = disk_wrt;
	else if (!strcmp(test, "disk_cp"))
		job = disk_cp;
	else {
		fprintf(stderr, "unknown test %s\n", test);
		return 2;
	}

	/* The shared input file and the sync, before the load point. */
	snprintf(common, sizeof common, "%s/tmpa.common", dir);
	if ((fd = creat(common, 0666)) < 0)
		fail("creat tmpa.common");
	for (i = 0; i < NBUFSIZE; i++)
		block[i] = (char) (i % 127);
	for (i = 0; i < blocks; i++)
		if (write(fd, block, NBUFSIZE) != NBUFSIZE)
			fail("write tmpa.common");
	close(fd);
	sync();
	sync();
	sync();

	if (use_log && (log = fopen("logfile.suite7", "a")) == NULL)
		fail("open logfile.suite7");
	setpgid(0, 0);
	signal(SIGINT, SIG_IGN);
	if (pipe(p) < 0)
		fail("pipe");
	fflush(stdout);
	fflush(stderr);
	for (i = 0; i < load; i++) {
		pid_t pid = fork();
		if (pid < 0)
			fail("fork");
		if (pid == 0) {
			close(p[0]);
			run_task(i, test, job, jobs, load, p[1], log);
		}
	}
	close(p[1]);
	for (i = 0; i < load; i++)
		if (read(p[0], &word, sizeof word) != sizeof word)
			fail("read from the tasks");
	start = times(&t);
	cpu_start = t.tms_cutime + t.tms_cstime;
	sleep((unsigned) delay);
	kill(0, SIGINT);
	for (i = 0; i < load; i++) {
		if (wait(&status) < 0)
			fail("wait");
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			fprintf(stderr, "aim7 reference: a task failed (status %#x)\n", status);
			return 1;
		}
		now = times(&t);
		if (log) {
			fprintf(log, "%d job_timing %g 0 0\n", load,
				(double) (now - start) * 1000.0 / (double) hz);
			fflush(log);
		}
	}
	now = times(&t);
	unlink(common);
	{
		double real = (double) (now - start) / (double) hz;
		double cpu = (double) (t.tms_cutime + t.tms_cstime - cpu_start) / (double) hz;
		if (real <= 0)
			real = 1.0 / (double) hz;
		printf("jobs/min|%.2f|real|%.2f|cpu|%.2f\n", (double) jobs * load * 60.0 / real,
		       real, cpu);
	}
	return 0;
}
