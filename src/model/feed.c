/* feed.c - the stacks trie built on a thread of its own (feed.h).
 *
 * The chunks form a ring: the reading thread fills chunk `fill`; the
 * `in_flight` chunks before it, from `take` on, wait for the worker or
 * are being walked.  The reading thread may fill a chunk only while fewer
 * than KF_FEED_CHUNKS are in flight, i.e. the one it is about to fill has
 * come back.  One mutex guards the three counters; the chunks' bytes are
 * handed over with it (a chunk is written by one thread, then read by the
 * other after the lock passed between them).
 *
 * A stack in a chunk: struct ent, then n + 1 frames (the root first).
 */
#include "feed.h"

#include <stdlib.h>
#include <string.h>

#include "kfold.h"

struct ent {
	uint64_t weight;
	uint32_t n;                   /* frames after the root */
	uint32_t pad;
};

_Static_assert(sizeof(struct ent) % 8 == 0 && sizeof(struct kf_frame) % 8 == 0,
	       "a chunk's stacks stay 8-byte aligned");

static size_t ent_size(size_t n)
{
	return sizeof(struct ent) + (n + 1) * sizeof(struct kf_frame);
}

static void walk_chunk(struct kf_feed *f, const unsigned char *p, size_t len)
{
	const unsigned char *end = p + len;

	while (p < end) {
		struct ent e;
		const struct kf_frame *frames;
		uint32_t node;

		/* every size in a chunk is a multiple of 8 and the chunk is
		 * malloc's: the frames are aligned; memcpy gave them their
		 * type */
		memcpy(&e, p, sizeof(e));
		frames = (const struct kf_frame *)(const void *)(p + sizeof(e));
		p += ent_size(e.n);
		if (atomic_load_explicit(&f->failed, memory_order_relaxed))
			continue;
		node = kf_stacks_path(f->stacks, &frames[0], frames + 1, e.n);
		if (!node || !kf_stacks_add(f->stacks, node, e.weight))
			atomic_store_explicit(&f->failed, true, memory_order_relaxed);
	}
}

static void *worker(void *arg)
{
	struct kf_feed *f = arg;
	uint64_t w0 = kf_work;

	pthread_mutex_lock(&f->mu);
	for (;;) {
		unsigned c;
		size_t len;

		while (f->in_flight == 0 && !f->closing)
			pthread_cond_wait(&f->cv_ready, &f->mu);
		if (f->in_flight == 0)
			break;                /* closing, and nothing left */
		c = f->take;
		len = f->len[c];
		pthread_mutex_unlock(&f->mu);
		walk_chunk(f, f->chunk[c], len);
		pthread_mutex_lock(&f->mu);
		f->take = (c + 1) % KF_FEED_CHUNKS;
		f->in_flight--;
		pthread_cond_signal(&f->cv_free);
	}
	pthread_mutex_unlock(&f->mu);
	kf_work_flush(f->work, w0);
	return NULL;
}

static void free_chunks(struct kf_feed *f)
{
	unsigned i;

	for (i = 0; i < KF_FEED_CHUNKS; i++) {
		free(f->chunk[i]);
		f->chunk[i] = NULL;
	}
}

int kf_feed_start(struct kf_feed *f, struct kf_stacks *stacks,
		  struct kf_work_total *work)
{
	unsigned i;

	memset(f, 0, sizeof(*f));
	f->stacks = stacks;
	f->work = work;
	atomic_init(&f->failed, false);
	for (i = 0; i < KF_FEED_CHUNKS; i++) {
		f->chunk[i] = malloc(KF_FEED_CHUNK);
		if (!f->chunk[i]) {
			free_chunks(f);
			return KF_ENOMEM;
		}
	}
	if (pthread_mutex_init(&f->mu, NULL) != 0) {
		free_chunks(f);
		return KF_ENOMEM;
	}
	if (pthread_cond_init(&f->cv_ready, NULL) != 0) {
		pthread_mutex_destroy(&f->mu);
		free_chunks(f);
		return KF_ENOMEM;
	}
	if (pthread_cond_init(&f->cv_free, NULL) != 0) {
		pthread_cond_destroy(&f->cv_ready);
		pthread_mutex_destroy(&f->mu);
		free_chunks(f);
		return KF_ENOMEM;
	}
	if (pthread_create(&f->thread, NULL, worker, f) != 0) {
		pthread_cond_destroy(&f->cv_free);
		pthread_cond_destroy(&f->cv_ready);
		pthread_mutex_destroy(&f->mu);
		free_chunks(f);
		return KF_ENOMEM;
	}
	f->started = true;
	return 0;
}

/* The chunk being filled goes to the worker (if it holds anything); the
 * next one is filled once it is back. */
static void hand_over(struct kf_feed *f)
{
	if (f->len[f->fill] == 0)
		return;
	pthread_mutex_lock(&f->mu);
	f->in_flight++;
	pthread_cond_signal(&f->cv_ready);
	f->fill = (f->fill + 1) % KF_FEED_CHUNKS;
	while (f->in_flight == KF_FEED_CHUNKS)
		pthread_cond_wait(&f->cv_free, &f->mu);
	pthread_mutex_unlock(&f->mu);
	f->len[f->fill] = 0;
}

bool kf_feed_push(struct kf_feed *f, const struct kf_frame *root,
		  const struct kf_frame *frames, size_t n, uint64_t weight)
{
	struct ent e;
	unsigned char *p;
	size_t need = ent_size(n);

	if (n > KF_FEED_MAX_FRAMES) {
		atomic_store_explicit(&f->failed, true, memory_order_relaxed);
		return false;
	}
	if (atomic_load_explicit(&f->failed, memory_order_relaxed))
		return false;
	if (KF_FEED_CHUNK - f->len[f->fill] < need)
		hand_over(f);
	p = f->chunk[f->fill] + f->len[f->fill];
	memset(&e, 0, sizeof(e));
	e.weight = weight;
	e.n = (uint32_t)n;
	memcpy(p, &e, sizeof(e));
	memcpy(p + sizeof(e), root, sizeof(*root));
	if (n)
		memcpy(p + sizeof(e) + sizeof(*root), frames, n * sizeof(*frames));
	f->len[f->fill] += need;
	f->pushed++;
	return true;
}

int kf_feed_finish(struct kf_feed *f)
{
	if (!f->started)
		return 0;
	hand_over(f);
	pthread_mutex_lock(&f->mu);
	f->closing = true;
	pthread_cond_signal(&f->cv_ready);
	pthread_mutex_unlock(&f->mu);
	pthread_join(f->thread, NULL);
	pthread_cond_destroy(&f->cv_free);
	pthread_cond_destroy(&f->cv_ready);
	pthread_mutex_destroy(&f->mu);
	free_chunks(f);
	f->started = false;
	return atomic_load_explicit(&f->failed, memory_order_relaxed) ? KF_ENOMEM : 0;
}
