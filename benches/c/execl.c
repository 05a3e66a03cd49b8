/* Reference for `execl`: the program execs itself until the deadline; state travels in argv.
 * Usage: execl SECS  (continuation: execl - COUNT START_NS DEADLINE_NS). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static unsigned long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (unsigned long long)t.tv_sec * 1000000000ULL + (unsigned long long)t.tv_nsec;
}

int main(int argc, char **argv) {
    unsigned long long count = 0, start, deadline;
    char c[32], s[32], d[32];
    if (argc == 2) {
        start = now_ns();
        deadline = start + (unsigned long long)(atof(argv[1]) * 1e9);
    } else if (argc == 5 && strcmp(argv[1], "-") == 0) {
        count = strtoull(argv[2], NULL, 10);
        start = strtoull(argv[3], NULL, 10);
        deadline = strtoull(argv[4], NULL, 10);
    } else {
        return 2;
    }
    count++;
    if (now_ns() >= deadline) {
        printf("COUNT|%llu\nWALL|%f\n", count, (double)(now_ns() - start) / 1e9);
        return 0;
    }
    snprintf(c, sizeof c, "%llu", count);
    snprintf(s, sizeof s, "%llu", start);
    snprintf(d, sizeof d, "%llu", deadline);
    execl(argv[0], argv[0], "-", c, s, d, (char *)NULL);
    return 1;
}
