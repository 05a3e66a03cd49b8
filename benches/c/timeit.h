/* The stop signal of UnixBench's fixed-time programs (unixbench.md §4, "wake_me"): install the
 * handler with signal() (glibc: BSD semantics, SA_RESTART) and arm alarm(seconds). The handler
 * prints the COUNT line on stderr and exits the process with exit(0). */
#ifndef FIDELITY_TIMEIT_H
#define FIDELITY_TIMEIT_H
#include <signal.h>
#include <unistd.h>

static void wake_me(int seconds, void (*handler)(int))
{
	signal(SIGALRM, handler);
	alarm((unsigned) seconds);
}
#endif
