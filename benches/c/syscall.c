/* Reference for `syscall` (mix): close(dup(fd)), raw getpid, getuid, umask. */
#define _GNU_SOURCE
#include "common.h"
#include <sys/stat.h>
#include <sys/syscall.h>
int main(int argc, char **argv) {
    int fd[2];
    unsigned long n = 0;
    if (argc < 2 || pipe(fd)) return 2;
    close(fd[1]);
    arm(argv[1]);
    while (!stop_flag) {
        close(dup(fd[0]));
        syscall(SYS_getpid);
        getuid();
        umask(022);
        n++;
    }
    report(n);
    return 0;
}
