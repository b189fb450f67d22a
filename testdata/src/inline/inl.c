/* inl: a program whose hot code is mostly inlined, for the inline
 * expansion tests (src/tests/inline.sh, and captures of it).
 *   main -> run -> compute_stats (noinline) -> accumulate (inline)
 *                                               -> mix (inline) -> rotl (inline)
 *   main -> run -> scale (noinline, called with a constant: gcc makes a
 *                         .constprop clone) -> clamp (inline)
 *   main -> run -> walk (recursive, noinline) -> step (inline)
 * Built by scripts/record-fixtures.sh with gcc -O2, clang -O2 and gcc -O0
 * (the control: nothing inlined).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

static inline unsigned long rotl(unsigned long x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static inline unsigned long mix(unsigned long x)
{
	x ^= rotl(x, 13);
	x *= 0x9e3779b97f4a7c15UL;
	return x ^ rotl(x, 29);
}

static inline void accumulate(unsigned long *acc, unsigned long v)
{
	for (int i = 0; i < 8; i++)
		*acc += mix(v + (unsigned long)i);
}

__attribute__((noinline)) unsigned long compute_stats(const unsigned long *v, int n)
{
	unsigned long acc = 0;

	for (int i = 0; i < n; i++)
		accumulate(&acc, v[i]);
	return acc;
}

static inline long clamp(long x, long lo, long hi)
{
	return x < lo ? lo : x > hi ? hi : x;
}

__attribute__((noinline)) static long scale(const long *v, int n, long factor)
{
	long s = 0;

	for (int i = 0; i < n; i++)
		s += clamp(v[i] * factor, -1000000, 1000000);
	return s;
}

static inline unsigned long step(unsigned long x)
{
	return mix(x) >> 1;
}

__attribute__((noinline)) unsigned long walk(unsigned long x, int depth)
{
	if (depth == 0)
		return step(x);
	return walk(step(x), depth - 1) + 1;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void run(double secs)
{
	unsigned long v[64];
	long w[64];
	double end = now() + secs;

	for (int i = 0; i < 64; i++) {
		v[i] = (unsigned long)i * 7919u;
		w[i] = i - 32;
	}
	while (now() < end) {
		sink += compute_stats(v, 64);
		sink += (unsigned long)scale(w, 64, 3);
		sink += walk(sink, 20);
	}
}

int main(int argc, char **argv)
{
	run(argc > 1 ? atof(argv[1]) : 0.2);
	return 0;
}

#ifdef DWZ_TWIN
/* the twin build (scripts/record-fixtures.sh, inl-dwz) differs a little */
unsigned long twin_only(unsigned long x)
{
	return step(x) + 1;
}
#endif
