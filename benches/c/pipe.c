/* Reference for `pipe`: 512-byte write then read on one pipe. */
#include "common.h"
int main(int argc, char **argv) {
    int fd[2];
    char buf[512] = {0};
    unsigned long n = 0;
    if (argc < 2 || pipe(fd)) return 2;
    arm(argv[1]);
    while (!stop_flag) {
        if (write(fd[1], buf, 512) != 512 || read(fd[0], buf, 512) != 512) return 1;
        n++;
    }
    report(n);
    return 0;
}
