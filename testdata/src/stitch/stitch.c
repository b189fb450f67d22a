/* stitch.c - a recursion whose depth rises and falls slowly, for
 * --stitch (src/tests/stitch-live.sh).
 *
 * descend() recurses MAXD levels deep, spinning about 0.3 ms at every
 * level on the way down and again on the way up, and main() repeats that
 * for the seconds given (default 0.4).  Each level's frame is about 96
 * bytes (a 64-byte array), so the deepest stack is about 6 KiB: a stack
 * copy cut to 1 KiB holds ten frames, and two samples 2 ms apart (perf
 * record -F 500) share most of theirs.  Built without frame pointers, so
 * only the DWARF unwinder finds the callers.
 */
#include <stdlib.h>
#include <time.h>

#define MAXD 60

static volatile unsigned long sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void spin(unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		sink += i ^ (sink >> 3);
}

__attribute__((noinline)) static void descend(int depth, int target, unsigned long work)
{
	volatile char pad[64];

	pad[0] = (char)depth;
	pad[63] = (char)target;
	spin(work);
	if (depth < target)
		descend(depth + 1, target, work);
	spin(work);
	sink += (unsigned long)pad[0] + (unsigned long)pad[63];
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0.4, end = now() + secs;

	while (now() < end)
		descend(0, MAXD, 300000);
	return 0;
}
