/* splt: a static program whose loops call strlen, memcpy, memset and
 * strchr, which glibc resolves at startup (IFUNC): in a static binary the
 * calls go through .plt stubs that jump via IRELATIVE-relocated slots, so
 * samples land in .plt.  Built by scripts/record-cxx-scope.sh with
 * gcc -O2 -static -fno-builtin (so that gcc calls them instead of inlining
 * them).  A stub keeps no frame, so a frame-pointer chain from it skips
 * the loop that called it and shows the loop's caller: each function has
 * its own caller (via_strlen -> loop_strlen -> strlen@plt), which keeps
 * the samples in different stubs apart in the folded stacks. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

char buf[64];
const char *volatile word = "k";

#define LOOP(name, stmt)                                                  \
	__attribute__((noinline)) static size_t loop_##name(void)         \
	{                                                                 \
		size_t n = 0;                                             \
		for (int i = 0; i < 4096; i++) {                          \
			stmt;                                             \
		}                                                         \
		return n;                                                 \
	}                                                                 \
	__attribute__((noinline)) static size_t via_##name(void)          \
	{                                                                 \
		return loop_##name() + 1;                                 \
	}

LOOP(strlen, n += strlen(word))
LOOP(memcpy, memcpy(buf, word, 1); n += (size_t)buf[0])
LOOP(memset, memset(buf + 8, 0, 1); n += (size_t)buf[8])
LOOP(strchr, n += strchr(word, 'k') != NULL)

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0.2;
	double until = now() + (secs > 0 ? secs : 0.2);
	size_t n = 0;

	while (now() < until)
		n += via_strlen() + via_memcpy() + via_memset() + via_strchr();
	return n == 1;
}
