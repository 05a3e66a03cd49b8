/* Reference loops for patchbench's harness-overhead benchmark: the same system calls as the
 * patchbench workloads, in plain C, stopped by a SIGALRM flag. Prints "COUNT|n" and "WALL|s". */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop_flag;
static void on_alarm(int sig) { (void)sig; stop_flag = 1; }
static struct timespec started;

static void arm(const char *secs) {
    double d = atof(secs);
    struct sigaction sa = {0};
    struct itimerval it = {0};
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    it.it_value.tv_sec = (time_t)d;
    it.it_value.tv_usec = (suseconds_t)((d - (double)(time_t)d) * 1e6);
    clock_gettime(CLOCK_MONOTONIC, &started);
    setitimer(ITIMER_REAL, &it, NULL);
}

static void report(unsigned long count) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double wall = (double)(now.tv_sec - started.tv_sec) + (double)(now.tv_nsec - started.tv_nsec) / 1e9;
    printf("COUNT|%lu\nWALL|%f\n", count, wall);
}
