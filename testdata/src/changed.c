/* changed: built twice from this file.  VERSION=1 is what gets recorded;
 * VERSION=2 (different code, so a different build-id and different symbol
 * addresses) is what the case's symfs holds, as if the binary had been
 * rebuilt after the recording.
 */
#include "fx-common.h"

#ifndef VERSION
#define VERSION 1
#endif

volatile unsigned long sink;

#if VERSION == 1
NOINLINE unsigned long v1_leaf(unsigned long x)
{
	FX_LEAF_FRAME();
	for (int i = 0; i < 4000; i++)
		x = x * 6364136223846793005UL + (unsigned long)i;
	return x;
}

/* recursion of varying depth: several distinct (unresolvable) stacks */
NOINLINE unsigned long v1_recurse(unsigned depth, unsigned long x)
{
	if (depth == 0)
		return v1_leaf(x);
	return v1_recurse(depth - 1, x + depth) ^ depth;
}

NOINLINE void v1_work(double secs)
{
	double end = fx_now() + secs;
	unsigned long x = 1;
	for (unsigned i = 0; fx_now() < end; i++)
		x = v1_recurse(i % 6, x);
	sink = x;
}
#define WORK v1_work
#else
NOINLINE unsigned long v2_padding(unsigned long x)
{
	FX_LEAF_FRAME();
	/* shifts the addresses of everything after it */
	for (int i = 0; i < 100; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		x += (unsigned long)i * 0x9e3779b97f4a7c15UL;
	}
	return x;
}

NOINLINE unsigned long v2_leaf(unsigned long x)
{
	FX_LEAF_FRAME();
	for (int i = 0; i < 3000; i++)
		x = (x ^ (unsigned long)i) * 0x100000001b3UL;
	return x;
}

NOINLINE void v2_work(double secs)
{
	double end = fx_now() + secs;
	unsigned long x = 2;
	while (fx_now() < end)
		x = v2_leaf(v2_padding(x));
	sink = x;
}
#define WORK v2_work
#endif

int main(int argc, char **argv)
{
	WORK(fx_seconds(argc, argv, 0.2));
	return 0;
}
