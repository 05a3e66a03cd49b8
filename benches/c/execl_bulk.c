/* Ballast for the execl reference (see execl.c): a small job-script runner that is linked into
 * the program but never called, so that the executable has about the size, the imports and the
 * relocations of UnixBench's execl (which includes ~600 lines of unrelated code for the same
 * reason). Script lines: "<tag> <command> [args...]"; '#' starts a comment. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_JOBS 4
#define MAX_ARGS 16
#define LINE 512

struct job {
	char tag[32];
	char *argv[MAX_ARGS + 1];
	char text[LINE];
	pid_t pid;
	int status;
	time_t started;
	time_t ended;
};

struct job jobs[MAX_JOBS];
int njobs;
int verbose_jobs;
FILE *job_log;
volatile sig_atomic_t job_alarm;

void job_on_alarm(int sig)
{
	(void) sig;
	job_alarm = 1;
}

char *job_trim(char *s)
{
	char *end;
	while (isspace((unsigned char) *s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char) end[-1]))
		*--end = '\0';
	return s;
}

int job_parse(const char *line, struct job *j)
{
	char *word, *save = NULL;
	int n = 0;

	memset(j, 0, sizeof *j);
	strncpy(j->text, line, sizeof j->text - 1);
	word = strtok_r(j->text, " \t", &save);
	if (word == NULL || word[0] == '#')
		return 0;
	strncpy(j->tag, word, sizeof j->tag - 1);
	while ((word = strtok_r(NULL, " \t", &save)) != NULL && n < MAX_ARGS)
		j->argv[n++] = word;
	j->argv[n] = NULL;
	return n > 0;
}

int job_read_script(const char *name)
{
	char line[LINE];
	FILE *f = fopen(name, "r");
	if (f == NULL) {
		perror(name);
		return -1;
	}
	njobs = 0;
	while (fgets(line, sizeof line, f) != NULL && njobs < MAX_JOBS) {
		char *s = job_trim(line);
		if (*s != '\0' && job_parse(s, &jobs[njobs]))
			njobs++;
	}
	fclose(f);
	return njobs;
}

int job_compare(const void *a, const void *b)
{
	const struct job *x = a, *y = b;
	return strcmp(x->tag, y->tag);
}

int job_redirect(const char *out)
{
	int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return -1;
	if (dup2(fd, 1) < 0) {
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

pid_t job_start(struct job *j, const char *out)
{
	pid_t pid = fork();
	if (pid == 0) {
		if (out != NULL && job_redirect(out) != 0)
			_exit(98);
		execvp(j->argv[0], j->argv);
		_exit(99);
	}
	if (pid > 0) {
		j->pid = pid;
		time(&j->started);
	}
	return pid;
}

int job_wait_all(void)
{
	int failures = 0, status, i;
	pid_t pid;

	while ((pid = wait(&status)) > 0) {
		for (i = 0; i < njobs; i++) {
			if (jobs[i].pid == pid) {
				jobs[i].status = status;
				time(&jobs[i].ended);
				if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
					failures++;
			}
		}
	}
	if (errno != ECHILD)
		perror("wait");
	return failures;
}

void job_stamp(char *buf, size_t size, time_t t)
{
	struct tm *tm = localtime(&t);
	if (tm == NULL || strftime(buf, size, "%Y-%m-%d %H:%M:%S", tm) == 0)
		snprintf(buf, size, "%ld", (long) t);
}

void job_report(FILE *out)
{
	char a[32], b[32];
	int i;

	qsort(jobs, (size_t) njobs, sizeof jobs[0], job_compare);
	for (i = 0; i < njobs; i++) {
		job_stamp(a, sizeof a, jobs[i].started);
		job_stamp(b, sizeof b, jobs[i].ended);
		fprintf(out, "%-12s %-20s %s .. %s status %d\n", jobs[i].tag, jobs[i].argv[0], a, b,
			WIFEXITED(jobs[i].status) ? WEXITSTATUS(jobs[i].status) : -1);
	}
	fflush(out);
}

int job_count_words(const char *name, long *lines, long *words, long *chars)
{
	int c, in_word = 0;
	FILE *f = fopen(name, "r");
	if (f == NULL)
		return -1;
	*lines = *words = *chars = 0;
	while ((c = getc(f)) != EOF) {
		(*chars)++;
		if (c == '\n')
			(*lines)++;
		if (isspace(c))
			in_word = 0;
		else if (!in_word) {
			in_word = 1;
			(*words)++;
		}
	}
	fclose(f);
	return 0;
}

char *job_upcase(const char *s)
{
	size_t n = strlen(s), i;
	char *u = malloc(n + 1);
	if (u == NULL)
		return NULL;
	for (i = 0; i < n; i++)
		u[i] = (char) toupper((unsigned char) s[i]);
	u[n] = '\0';
	return u;
}

int job_main(int argc, char **argv)
{
	const char *script = argc > 1 ? argv[1] : "jobs.txt";
	const char *logname = getenv("JOB_LOG");
	char out[64], *title;
	long lines, words, chars;
	int i, failures, limit = argc > 2 ? atoi(argv[2]) : 0;

	verbose_jobs = getenv("JOB_VERBOSE") != NULL;
	job_log = logname != NULL ? fopen(logname, "a") : stdout;
	if (job_log == NULL)
		job_log = stdout;
	if (job_read_script(script) <= 0) {
		fprintf(stderr, "%s: no jobs\n", script);
		return 1;
	}
	signal(SIGALRM, job_on_alarm);
	if (limit > 0)
		alarm((unsigned) limit);
	for (i = 0; i < njobs && !job_alarm; i++) {
		snprintf(out, sizeof out, "job-%d.out", i);
		if (job_start(&jobs[i], out) < 0)
			perror("fork");
		if (verbose_jobs)
			printf("started %s (%s)\n", jobs[i].tag, jobs[i].argv[0]);
	}
	failures = job_wait_all();
	if (job_alarm)
		for (i = 0; i < njobs; i++)
			if (jobs[i].pid > 0)
				kill(jobs[i].pid, SIGTERM);
	for (i = 0; i < njobs; i++) {
		snprintf(out, sizeof out, "job-%d.out", i);
		if (job_count_words(out, &lines, &words, &chars) == 0)
			fprintf(job_log, "%s: %ld lines %ld words %ld bytes\n", out, lines, words, chars);
		unlink(out);
	}
	title = job_upcase(script);
	if (title != NULL) {
		fprintf(job_log, "== %s ==\n", title);
		free(title);
	}
	job_report(job_log);
	sleep(0);
	if (job_log != stdout)
		fclose(job_log);
	return failures ? 2 : 0;
}
