/* frameids.c - the distinct frames of a trie's nodes, numbered (frameids.h). */
#include "frameids.h"

#include <stdlib.h>
#include <string.h>

#include "kfold.h"

/* nodes numbered between two publications of `done` */
enum { PUBLISH = 4096, BATCH = 16 };

static uint64_t frame_hash(const struct kf_frame *fr)
{
	return kf_hash64(fr->addr * 0x9e3779b97f4a7c15ull ^
			 ((uint64_t)fr->module << 32 | fr->flags));
}

static bool same_frame(const struct kf_frame *a, const struct kf_frame *b)
{
	return a->addr == b->addr && a->module == b->module && a->flags == b->flags;
}

static bool rehash(struct kf_frameids *f, size_t nslots)
{
	uint64_t *slots = kf_calloc(nslots, sizeof(*slots));
	size_t i;

	if (!slots)
		return false;
	/* mapped for writing now: a probe reads a slot before a write
	 * fills it (kf_prefault) */
	kf_prefault(slots, nslots * sizeof(*slots));
	for (i = 0; i < f->n; i++) {
		uint64_t h = frame_hash(&f->frames[i]);
		size_t j = h & (nslots - 1);

		while (slots[j])
			j = (j + 1) & (nslots - 1);
		slots[j] = (h >> 32) << 32 | (uint64_t)(i + 1);
	}
	free(f->slots);
	f->slots = slots;
	f->nslots = nslots;
	return true;
}

/* The number of frame fr (of hash h), given now if it has none. */
static bool number(struct kf_frameids *f, const struct kf_frame *fr, uint64_t h,
		   uint32_t *out)
{
	uint64_t tag = (h >> 32) << 32;
	size_t mask = f->nslots - 1, j;

	for (j = h & mask; f->slots[j]; j = (j + 1) & mask) {
		uint64_t sl = f->slots[j];

		KF_WORK(1);
		if ((sl & 0xffffffff00000000ull) == tag &&
		    same_frame(&f->frames[(uint32_t)sl - 1], fr)) {
			*out = (uint32_t)sl - 1;
			return true;
		}
	}
	if (f->n >= UINT32_MAX - 1 || !KF_GROW(f->frames, f->cap, f->n + 1))
		return false;
	f->frames[f->n] = *fr;
	f->slots[j] = tag | (uint64_t)(f->n + 1);
	*out = (uint32_t)f->n++;
	return true;
}

static void publish(struct kf_frameids *f, size_t done)
{
	atomic_store_explicit(&f->done, done, memory_order_release);
	if (!f->threaded)
		return;
	pthread_mutex_lock(&f->mu);
	if (f->waiting)
		pthread_cond_broadcast(&f->cv);
	pthread_mutex_unlock(&f->mu);
}

/* Numbers every node, BATCH at a time: their hashes first and their home
 * slots fetched together, then the probes. */
static void run(struct kf_frameids *f)
{
	const struct kf_stacks *st = f->st;
	uint64_t h[BATCH];
	size_t x, k, b;

	for (x = 1; x < st->n; x += b) {
		b = st->n - x < BATCH ? st->n - x : BATCH;
		/* at most one number per node: rehash before the batch */
		if ((f->n + b) * 4 >= f->nslots * 3) {
			size_t ns = f->nslots ? f->nslots : 1024;

			while ((f->n + b) * 4 >= ns * 3)
				ns *= 2;
			if (!rehash(f, ns))
				goto fail;
		}
		for (k = 0; k < b; k++) {
			h[k] = frame_hash(&st->nodes[x + k].frame);
			__builtin_prefetch(&f->slots[h[k] & (f->nslots - 1)]);
		}
		for (k = 0; k < b; k++)
			if (st->nodes[x + k].parent &&
			    !number(f, &st->nodes[x + k].frame, h[k], &f->id[x + k]))
				goto fail;
		if ((x + b) % PUBLISH < b || x + b == st->n)
			publish(f, x + b);
	}
	return;
fail:
	atomic_store_explicit(&f->failed, true, memory_order_release);
	publish(f, atomic_load_explicit(&f->done, memory_order_relaxed));
}

static void *worker(void *arg)
{
	struct kf_frameids *f = arg;
	uint64_t w0 = kf_work;

	run(f);
	if (f->work)
		kf_work_flush(f->work, w0);
	return NULL;
}

int kf_frameids_start(struct kf_frameids *f, const struct kf_stacks *st, unsigned jobs,
		      struct kf_work_total *work, uint32_t *ids)
{
	memset(f, 0, sizeof(*f));
	f->st = st;
	f->work = work;
	atomic_init(&f->done, 1);
	atomic_init(&f->failed, false);
	f->id = ids;
	if (!ids) {
		f->id = kf_calloc(st->n ? st->n : 1, sizeof(*f->id));
		f->own_id = true;
		if (!f->id)
			return KF_ENOMEM;
	}
	if (jobs > 1 && st->n > 1 && pthread_mutex_init(&f->mu, NULL) == 0) {
		if (pthread_cond_init(&f->cv, NULL) == 0) {
			f->threaded = true;
			if (pthread_create(&f->thread, NULL, worker, f) == 0)
				return 0;
			pthread_cond_destroy(&f->cv);
			f->threaded = false;
		}
		pthread_mutex_destroy(&f->mu);
	}
	run(f);
	if (atomic_load(&f->failed)) {
		kf_frameids_finish(f);
		return KF_ENOMEM;
	}
	return 0;
}

bool kf_frameids_wait(struct kf_frameids *f, size_t x)
{
	bool ok;

	if (!f->threaded)
		return x < atomic_load_explicit(&f->done, memory_order_acquire);
	pthread_mutex_lock(&f->mu);
	while (x >= atomic_load_explicit(&f->done, memory_order_acquire) &&
	       !atomic_load_explicit(&f->failed, memory_order_acquire)) {
		f->waiting = true;
		pthread_cond_wait(&f->cv, &f->mu);
	}
	f->waiting = false;
	ok = x < atomic_load_explicit(&f->done, memory_order_acquire);
	pthread_mutex_unlock(&f->mu);
	return ok;
}

void kf_frameids_finish(struct kf_frameids *f)
{
	if (f->threaded) {
		pthread_join(f->thread, NULL);
		pthread_cond_destroy(&f->cv);
		pthread_mutex_destroy(&f->mu);
	}
	if (f->own_id)
		free(f->id);
	free(f->frames);
	free(f->slots);
	memset(f, 0, sizeof(*f));
}
