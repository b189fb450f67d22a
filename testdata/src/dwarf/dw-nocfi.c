/* dw-nocfi: code with no .eh_frame, built twice (scripts/record-fixtures.sh):
 *   main -> run -> outer -> middle -> inner_loop
 *   main -> run -> outer -> side
 *
 * dw-nocfi: frame pointers, no unwind tables, .debug_frame removed: no CFI
 *   at all for these functions.  An unwinder may only follow the frame
 *   pointers, and kfold marks the frames found that way as guessed.
 * dw-dbgframe: no frame pointers, no unwind tables; the CFI exists only as
 *   .debug_frame in the separate debug file (symfs /usr/lib/debug/.build-id),
 *   the recorded binary has none.  The stack can only be walked with the
 *   debug file's .debug_frame.
 * libc and _start keep their .eh_frame in both.
 */
#include "dw-common.h"

volatile unsigned long sink;

DW_FN unsigned long inner_loop(unsigned long x)
{
	for (int i = 0; i < 3000; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

DW_FN unsigned long middle(unsigned long x)
{
	volatile unsigned long pad[4];

	pad[x & 3] = x;
	return inner_loop(x + 1) ^ pad[x & 3];
}

DW_FN unsigned long side(unsigned long x)
{
	for (int i = 0; i < 1000; i++)
		x ^= x << 7 ^ x >> 9;
	return x;
}

DW_FN unsigned long outer(unsigned long x)
{
	unsigned long r = middle(x);

	return r + side(r);
}

DW_FN void run(double secs)
{
	double end = fx_now() + secs;
	unsigned long x = 1;

	while (fx_now() < end)
		for (int i = 0; i < 32; i++)
			sink += outer(x++);
}

int main(int argc, char **argv)
{
	run(fx_seconds(argc, argv, 0.2));
	return 0;
}
