/* secret: a program that keeps a secret on its stack while it burns CPU,
 * for src/tests/archive-secret.sh (kfold archive --symbols-only must not
 * carry the stack copies of a --call-graph dwarf capture).
 *   main -> hold (copies $KFOLD_SECRET into a local buffer, wipes the
 *                 environment's copy) -> spin -> churn -> mix
 * Every call is noinline, so each sample's 8 KiB user stack copy starts a
 * few small frames below hold's and holds the buffer. The secret comes from
 * the environment, never argv: perf records the command line in the
 * capture's header, and a literal would be in the binary.
 * Usage: KFOLD_SECRET=... secret [SECONDS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile unsigned long sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static unsigned long mix(unsigned long x)
{
	x ^= x >> 31;
	x *= 0x9e3779b97f4a7c15UL;
	return x ^ (x >> 29);
}

__attribute__((noinline)) static unsigned long churn(unsigned long x)
{
	for (int i = 0; i < 1000; i++)
		x = mix(x + (unsigned long)i);
	return x;
}

__attribute__((noinline)) static void spin(double secs)
{
	double end = now() + secs;

	while (now() < end)
		sink += churn(sink);
}

__attribute__((noinline)) static void hold(char *secret, double secs)
{
	volatile char buf[256];
	size_t n = strlen(secret);

	if (n >= sizeof(buf))
		n = sizeof(buf) - 1;
	for (size_t i = 0; i < n; i++)
		buf[i] = secret[i];
	buf[n] = '\0';
	/* the buffer is now the process's only copy */
	for (size_t i = 0; secret[i]; i++)
		((volatile char *)secret)[i] = 'x';
	spin(secs);
	/* read the buffer after the loop, so it must stay on the stack */
	for (size_t i = 0; i < n; i++)
		sink += (unsigned char)buf[i];
}

int main(int argc, char **argv)
{
	char *secret = getenv("KFOLD_SECRET");

	if (!secret || !*secret) {
		fprintf(stderr, "secret: set KFOLD_SECRET\n");
		return 2;
	}
	hold(secret, argc > 1 ? atof(argv[1]) : 0.3);
	return 0;
}
