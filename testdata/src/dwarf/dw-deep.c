/* dw-deep: a recursion deeper than perf's 127-frame limit, no frame
 * pointers.
 *   main -> run -> plunge (x 200, recursive) -> bottom
 * Each plunge frame is small (about 32 bytes), so with an 8 KiB stack copy
 * the whole stack is in the sample: the unwind stops at the depth limit,
 * not at the end of the copy.
 */
#include "dw-common.h"

volatile unsigned long sink;

DW_FN unsigned long bottom(unsigned long x)
{
	for (int i = 0; i < 20000; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

DW_FN unsigned long plunge(int depth, unsigned long x)
{
	unsigned long r;

	if (depth <= 1)
		r = bottom(x);
	else
		r = plunge(depth - 1, x + 1);
	return r + (unsigned long)depth;   /* not a tail call */
}

DW_FN void run(double secs)
{
	double end = fx_now() + secs;

	while (fx_now() < end)
		sink += plunge(200, sink);
}

int main(int argc, char **argv)
{
	run(fx_seconds(argc, argv, 0.2));
	return 0;
}
