/* nsprog.c - the program of src/tests/ns-live.sh: built twice with
 * -DTAG=alpha and -DTAG=beta, so that two builds installed at one path in
 * two mount namespaces have functions of different names (alpha_outer,
 * alpha_work; beta_outer, beta_work).  Spins for the seconds given. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define CAT2(a, b) a##_##b
#define CAT(a, b) CAT2(a, b)
#define WORK CAT(TAG, work)
#define OUTER CAT(TAG, outer)

__attribute__((noinline)) unsigned long WORK(unsigned long n)
{
	volatile unsigned long r = 0;

	for (unsigned long i = 0; i < n; i++)
		r += (i * i) ^ (r >> 3);
	return r;
}

__attribute__((noinline)) unsigned long OUTER(unsigned long n)
{
	return WORK(n) + 1;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double end = now() + (argc > 1 ? atof(argv[1]) : 1.0);
	unsigned long t = 0;

	while (now() < end)
		t += OUTER(100000);
	printf("%lu\n", t);
	return 0;
}
