/* forkexec-child: exec'ed by forkexec.
 *   main -> child_work -> child_leaf
 *   main -> child_work -> child_mid -> child_leaf */
#include "fx-common.h"

volatile unsigned long sink;

NOINLINE unsigned long child_leaf(unsigned long x)
{
	FX_LEAF_FRAME();
	for (int i = 0; i < 5000; i++)
		x = x * 2862933555777941757UL + 3037000493UL;
	return x;
}

NOINLINE unsigned long child_mid(unsigned long x)
{
	return child_leaf(x * 3) + 1;
}

NOINLINE void child_work(double secs)
{
	double end = fx_now() + secs;
	unsigned long x = 3;
	while (fx_now() < end) {
		x = child_leaf(x);
		x = child_mid(x);
	}
	sink = x;
}

int main(int argc, char **argv)
{
	child_work(fx_seconds(argc, argv, 0.15));
	return 0;
}
