/* Shared helpers for the kfold test fixtures (see testdata/README.md). */
#ifndef KFOLD_FX_COMMON_H
#define KFOLD_FX_COMMON_H

#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))

/*
 * GCC omits the frame pointer in leaf functions that need no stack slot,
 * even with -fno-omit-frame-pointer; the caller of such a function is then
 * missing from frame-pointer callchains.  A volatile local forces a frame.
 */
#define FX_LEAF_FRAME()                  \
	volatile int fx_leaf_frame = 0; \
	(void)fx_leaf_frame

static inline double fx_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Run time in seconds: argv[1] if given, else the default. */
static inline double fx_seconds(int argc, char **argv, double dflt)
{
	if (argc > 1) {
		double s = atof(argv[1]);
		if (s > 0)
			return s;
	}
	return dflt;
}

#endif
