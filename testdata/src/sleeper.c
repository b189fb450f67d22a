/* sleeper: alternates short bursts of work with short sleeps, so the
 * capture is full of context switches.
 *   main -> burst -> burst_leaf
 *   main -> nap -> nanosleep
 *   main -> nap_poll -> poll (1 ms timeout)
 */
#include <poll.h>
#include "fx-common.h"

volatile unsigned long sink;

NOINLINE unsigned long burst_leaf(unsigned long x)
{
	FX_LEAF_FRAME();
	for (int i = 0; i < 20000; i++)
		x = x * 69069UL + 1UL;
	return x;
}

NOINLINE void burst(void)
{
	unsigned long x = 5;
	for (int i = 0; i < 20; i++)
		x = burst_leaf(x);
	sink += x;
}

NOINLINE void nap(void)
{
	struct timespec ts = { 0, 300000 };	/* 0.3 ms */
	nanosleep(&ts, NULL);
}

NOINLINE void nap_poll(void)
{
	poll(NULL, 0, 1);
}

int main(int argc, char **argv)
{
	double end = fx_now() + fx_seconds(argc, argv, 0.25);
	for (unsigned i = 0; fx_now() < end; i++) {
		burst();
		if (i & 1)
			nap_poll();
		else
			nap();
	}
	return 0;
}
