/* dw-i386: a small 32-bit (-m32) program without frame pointers.
 *   main -> run -> descend (x 12, recursive) -> leaf_compute
 *   main -> run -> sort_ints -> qsort (libc) -> cmp_ints -> int_key
 * On i386 the arguments go on the stack and ebp is a general register: the
 * stack can only be walked with CFI (.eh_frame).
 */
#include "dw-common.h"

volatile unsigned long sink;
static int arr[1024];

DW_FN unsigned leaf_compute(unsigned x)
{
	for (int i = 0; i < 3000; i++)
		x = x * 1664525u + 1013904223u;
	return x;
}

DW_FN unsigned descend(int depth, unsigned x)
{
	volatile unsigned char pad[32];
	unsigned r;

	pad[depth % 32] = (unsigned char)x;
	if (depth <= 1)
		r = leaf_compute(x);
	else
		r = descend(depth - 1, x + (unsigned)depth);
	return r ^ pad[depth % 32];
}

DW_FN unsigned int_key(int v)
{
	unsigned k = (unsigned)v;
	for (int i = 0; i < 4; i++)
		k = k * 2654435761u + 1u;
	return k;
}

DW_FN int cmp_ints(const void *a, const void *b)
{
	unsigned ka = int_key(*(const int *)a), kb = int_key(*(const int *)b);
	return (ka > kb) - (ka < kb);
}

DW_FN void sort_ints(unsigned seed)
{
	for (int i = 0; i < 1024; i++) {
		seed = seed * 1103515245u + 12345u;
		arr[i] = (int)(seed >> 8);
	}
	qsort(arr, 1024, sizeof arr[0], cmp_ints);
}

DW_FN void run(double secs)
{
	double end = fx_now() + secs;
	unsigned round = 0;

	while (fx_now() < end) {
		for (int i = 0; i < 8; i++)
			sink += descend(12, round + (unsigned)i);
		sort_ints(round++);
	}
}

int main(int argc, char **argv)
{
	run(fx_seconds(argc, argv, 0.2));
	return 0;
}
