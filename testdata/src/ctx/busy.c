/* busy: the user-only thread of kernel-contexts.md sec. 7.  Pins itself to
 * one CPU, faults in its buffers and the code it runs, prints "ready PID"
 * and then copies random slices of a buffer forever (memcpy only: no
 * syscall, no page fault).  Kernel samples of this process can therefore
 * only be work done on its CPU while it was current (IRQs, softirqs on IRQ
 * exit, preemption, return-to-user work): never on its behalf.
 *   main -> copy_round -> memcpy
 * usage: busy CPU [MAX_SECONDS]   (SIGALRM ends it after MAX_SECONDS, 60 by
 * default, should the test that started it die without killing it)
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "fx-common.h"

#define BUF_BYTES (1UL << 20)
#define MAX_COPY 4096UL

static char buf[BUF_BYTES];
static char dst[MAX_COPY];
volatile unsigned long sink;

NOINLINE unsigned long copy_round(unsigned long x)
{
	for (int i = 0; i < 256; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		size_t len = 1 + (x & (MAX_COPY - 1));
		size_t off = (x >> 12) % (BUF_BYTES - len);
		memcpy(dst, buf + off, len);
		sink += (unsigned char)dst[len / 2];
	}
	return x;
}

int main(int argc, char **argv)
{
	int cpu = argc > 1 ? atoi(argv[1]) : 1;
	unsigned max_secs = argc > 2 ? (unsigned)atoi(argv[2]) : 60;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof set, &set) != 0) {
		perror("sched_setaffinity");
		return 1;
	}
	memset(buf, 0x5a, sizeof buf);
	memset(dst, 0, sizeof dst);
	unsigned long x = 88172645463325252UL;
	x = copy_round(x);   /* binds memcpy, faults in the code */
	alarm(max_secs);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (;;)
		x = copy_round(x);
}
