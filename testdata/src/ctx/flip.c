/* flip: moves itself between CPU 0 and CPU 1 with sched_setaffinity, over
 * and over.  Each move of a running task is done by the CPU stopper, a
 * kernel thread (migration/N), so a system-wide capture of it has kthread
 * samples; the CPU it has just left is idle.
 *   main -> flip_loop -> sched_setaffinity
 * usage: flip [SECONDS]   (default 1)
 */
#define _GNU_SOURCE
#include <sched.h>
#include "fx-common.h"

volatile unsigned long sink;

NOINLINE void flip_loop(const int cpus[2])
{
	cpu_set_t set;
	for (int i = 0; i < 64; i++) {
		CPU_ZERO(&set);
		CPU_SET(cpus[i & 1], &set);
		if (sched_setaffinity(0, sizeof set, &set) != 0)
			abort();
	}
	sink++;
}

int main(int argc, char **argv)
{
	double end = fx_now() + fx_seconds(argc, argv, 1.0);
	cpu_set_t all;
	int cpus[2] = { -1, -1 }, n = 0;

	/* the first two CPUs it may run on (the same one twice if only one) */
	if (sched_getaffinity(0, sizeof all, &all) != 0)
		return 1;
	for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
		if (CPU_ISSET(c, &all))
			cpus[n++] = c;
	if (n == 0)
		return 1;
	if (n == 1)
		cpus[1] = cpus[0];
	while (fx_now() < end)
		flip_loop(cpus);
	return 0;
}
