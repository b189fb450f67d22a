/* counters.h - the last value of each counter that PERF_SAMPLE_READ
 * samples read, so that a sample weighs what its counter grew by.
 *
 * perf 6.1 keeps one last value per event id; the kernel (6.12 and later)
 * counts an inherited counter per thread, so kfold's own mode keeps one
 * per (id, thread) for such an event (README, "Weights of
 * PERF_SAMPLE_READ samples").  State carried from sample to sample, owned
 * by whoever folds the samples.
 *
 * May use: util.
 */
#ifndef KF_COUNTERS_H
#define KF_COUNTERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

struct kf_counters {
	struct kf_map64 ids;      /* id -> its index */
	struct kf_map64 slots;    /* index << 33 | thread key -> slot */
	uint64_t *last;           /* per slot: the last value read */
	size_t n, cap;
};

void kf_counters_init(struct kf_counters *c);
/* Safe on a zeroed struct. */
void kf_counters_fini(struct kf_counters *c);

/* Records `value` as the counter's latest (per_thread: the counter of
 * thread tid) and sets *delta to how much it grew since the last value
 * (u64 arithmetic: a counter that went back gives a huge delta, as in
 * perf; the first value is all delta).  0 or KF_ENOMEM (kfold.h). */
int kf_counters_update(struct kf_counters *c, uint64_t id, bool per_thread,
		       uint32_t tid, uint64_t value, uint64_t *delta);

#endif
