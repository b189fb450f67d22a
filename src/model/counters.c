/* counters.c - last counter values of PERF_SAMPLE_READ samples. */
#include <stdlib.h>
#include <string.h>

#include "counters.h"
#include "kfold.h"

void kf_counters_init(struct kf_counters *c)
{
	memset(c, 0, sizeof(*c));
	kf_map64_init(&c->ids);
	kf_map64_init(&c->slots);
}

void kf_counters_fini(struct kf_counters *c)
{
	kf_map64_fini(&c->ids);
	kf_map64_fini(&c->slots);
	free(c->last);
	memset(c, 0, sizeof(*c));
}

int kf_counters_update(struct kf_counters *c, uint64_t id, bool per_thread,
		       uint32_t tid, uint64_t value, uint64_t *delta)
{
	uint32_t idx, slot;
	uint64_t key;

	/* ids are those of the header (at most KF_MAX_IDS < 2^32), so the
	 * key never is the map's reserved ~0 */
	if (!kf_map64_get(&c->ids, id, &idx)) {
		idx = (uint32_t)c->ids.n;
		if (!kf_map64_put(&c->ids, id, idx))
			return KF_ENOMEM;
	}
	key = (uint64_t)idx << 33 | (per_thread ? 1ull << 32 | tid : 0);
	if (!kf_map64_get(&c->slots, key, &slot)) {
		if (c->n >= UINT32_MAX || !KF_GROW(c->last, c->cap, c->n + 1))
			return KF_ENOMEM;
		slot = (uint32_t)c->n;
		c->last[slot] = 0;
		if (!kf_map64_put(&c->slots, key, slot))
			return KF_ENOMEM;
		c->n++;
	}
	*delta = value - c->last[slot];
	c->last[slot] = value;
	return 0;
}
