/* Reference for `context1`: a counter echoed between parent and child over two pipes. */
#include "common.h"
#include <sys/wait.h>
int main(int argc, char **argv) {
    int p1[2], p2[2];
    unsigned long n = 0, v;
    if (argc < 2 || pipe(p1) || pipe(p2)) return 2;
    signal(SIGPIPE, SIG_IGN);
    pid_t pid = fork();
    if (pid == 0) {
        unsigned long c = 0;
        close(p1[1]); close(p2[0]);
        while (read(p1[0], &v, sizeof v) == sizeof v && v == c) {
            if (write(p2[1], &v, sizeof v) != sizeof v) break;
            c++;
        }
        _exit(0);
    }
    close(p1[0]); close(p2[1]);
    arm(argv[1]);
    while (!stop_flag) {
        if (write(p1[1], &n, sizeof n) != sizeof n) return 1;
        if (read(p2[0], &v, sizeof v) != sizeof v || v != n) return 1;
        n++;
    }
    close(p1[1]); close(p2[0]);
    waitpid(pid, NULL, 0);
    report(n);
    return 0;
}
