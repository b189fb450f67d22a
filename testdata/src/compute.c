/* compute: pure user-space work with a small call tree.
 *   main -> run -> fib (recursive)
 *   main -> run -> matmul
 *   main -> run -> sort_ints -> qsort (libc) -> cmp_int
 */
#include <string.h>
#include "fx-common.h"

volatile unsigned long sink;
static double A[48][48], B[48][48], C[48][48];
static int arr[4096];

NOINLINE unsigned long fib(unsigned n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

NOINLINE void matmul(void)
{
	FX_LEAF_FRAME();
	for (int i = 0; i < 48; i++)
		for (int j = 0; j < 48; j++) {
			double s = 0;
			for (int k = 0; k < 48; k++)
				s += A[i][k] * B[k][j];
			C[i][j] = s;
		}
}

NOINLINE int cmp_int(const void *a, const void *b)
{
	FX_LEAF_FRAME();
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

NOINLINE void sort_ints(unsigned seed)
{
	for (int i = 0; i < 4096; i++) {
		seed = seed * 1103515245u + 12345u;
		arr[i] = (int)(seed >> 8);
	}
	qsort(arr, 4096, sizeof arr[0], cmp_int);
}

NOINLINE void run(double secs)
{
	double end = fx_now() + secs;
	unsigned round = 0;
	while (fx_now() < end) {
		sink += fib(20);
		matmul();
		sort_ints(round++);
	}
}

int main(int argc, char **argv)
{
	for (int i = 0; i < 48; i++)
		for (int j = 0; j < 48; j++) {
			A[i][j] = i + j;
			B[i][j] = i - j;
		}
	run(fx_seconds(argc, argv, 0.2));
	sink += (unsigned long)C[1][2];
	return 0;
}
