/* dw-recursion: deep recursion without frame pointers.
 *   main -> run -> descend (x depth, recursive) -> leaf_compute
 * Each round recurses to depth 8, 24, 40 or 56 (in that order).  Every
 * descend frame holds a 96-byte volatile pad, so a frame is about 128 bytes
 * and the deep rounds use far more than 4096 bytes of stack: a
 * --call-graph dwarf,4096 copy does not reach main for them (the unwind
 * ends inside the descend chain), while depth 8 fits.  With dwarf,512 almost
 * no stack reaches main.  descend does work after its recursive call, so
 * the recursion is not turned into a loop.
 */
#include "dw-common.h"

volatile unsigned long sink;

DW_FN unsigned long leaf_compute(unsigned long x)
{
	for (int i = 0; i < 4000; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

DW_FN unsigned long descend(int depth, unsigned long x)
{
	volatile unsigned char pad[96];
	unsigned long r;

	pad[depth % 96] = (unsigned char)x;
	if (depth <= 1)
		r = leaf_compute(x);
	else
		r = descend(depth - 1, x + (unsigned long)depth);
	return r ^ pad[depth % 96];
}

DW_FN void run(double secs)
{
	static const int depths[] = { 8, 24, 40, 56 };
	double end = fx_now() + secs;
	unsigned round = 0;

	while (fx_now() < end) {
		for (int i = 0; i < 16; i++)
			sink += descend(depths[round & 3], round);
		round++;
	}
}

int main(int argc, char **argv)
{
	run(fx_seconds(argc, argv, 0.2));
	return 0;
}
