/* Reference for `spawn`: fork, the child exits at once, the parent waits. */
#include "common.h"
#include <sys/wait.h>
int main(int argc, char **argv) {
    unsigned long n = 0;
    int status;
    if (argc < 2) return 2;
    arm(argv[1]);
    while (!stop_flag) {
        pid_t pid = fork();
        if (pid < 0) return 1;
        if (pid == 0) _exit(0);
        if (waitpid(pid, &status, 0) != pid || status != 0) return 1;
        n++;
    }
    report(n);
    return 0;
}
