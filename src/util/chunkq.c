/* chunkq.c - a one-way queue of byte chunks to a worker thread
 * (chunkq.h). */
#include "chunkq.h"

#include <stdlib.h>
#include <string.h>

#include "kfold.h"

static void *worker(void *arg)
{
	struct kf_chunkq *q = arg;
	uint64_t w0 = kf_work;

	pthread_mutex_lock(&q->mu);
	for (;;) {
		unsigned c;
		size_t len;

		while (q->in_flight == 0 && !q->closing)
			pthread_cond_wait(&q->cv_ready, &q->mu);
		if (q->in_flight == 0)
			break;                /* closing, and nothing left */
		c = q->take;
		len = q->len[c];
		pthread_mutex_unlock(&q->mu);
		q->fn(q->ctx, q->chunk[c], len);
		pthread_mutex_lock(&q->mu);
		q->take = (c + 1) % KF_CHUNKQ_CHUNKS;
		/* the producer waits only with all of them in flight: it is
		 * woken once, with half the ring to fill */
		if (--q->in_flight == KF_CHUNKQ_CHUNKS / 2)
			pthread_cond_signal(&q->cv_free);
	}
	pthread_mutex_unlock(&q->mu);
	if (q->work)
		kf_work_flush(q->work, w0);
	return NULL;
}

static void free_chunks(struct kf_chunkq *q)
{
	unsigned i;

	for (i = 0; i < KF_CHUNKQ_CHUNKS; i++) {
		free(q->chunk[i]);
		q->chunk[i] = NULL;
	}
}

int kf_chunkq_start(struct kf_chunkq *q, kf_chunkq_fn fn, void *ctx,
		    struct kf_work_total *work)
{
	unsigned i;
	int steps = 0;

	memset(q, 0, sizeof(*q));
	q->fn = fn;
	q->ctx = ctx;
	q->work = work;
	for (i = 0; i < KF_CHUNKQ_CHUNKS; i++) {
		q->chunk[i] = malloc(KF_CHUNKQ_CHUNK);
		if (!q->chunk[i])
			goto fail;
	}
	if (pthread_mutex_init(&q->mu, NULL) != 0)
		goto fail;
	steps++;
	if (pthread_cond_init(&q->cv_ready, NULL) != 0)
		goto fail;
	steps++;
	if (pthread_cond_init(&q->cv_free, NULL) != 0)
		goto fail;
	steps++;
	if (pthread_create(&q->thread, NULL, worker, q) != 0)
		goto fail;
	q->started = true;
	return 0;
fail:
	if (steps >= 3)
		pthread_cond_destroy(&q->cv_free);
	if (steps >= 2)
		pthread_cond_destroy(&q->cv_ready);
	if (steps >= 1)
		pthread_mutex_destroy(&q->mu);
	free_chunks(q);
	return KF_ENOMEM;
}

/* The chunk being filled goes to the worker (if it holds anything); the
 * next one is filled once it is back. */
static void hand_over(struct kf_chunkq *q)
{
	if (q->len[q->fill] == 0)
		return;
	pthread_mutex_lock(&q->mu);
	q->in_flight++;
	pthread_cond_signal(&q->cv_ready);
	q->fill = (q->fill + 1) % KF_CHUNKQ_CHUNKS;
	while (q->in_flight == KF_CHUNKQ_CHUNKS)
		pthread_cond_wait(&q->cv_free, &q->mu);
	pthread_mutex_unlock(&q->mu);
	q->len[q->fill] = 0;
}

void *kf_chunkq_space(struct kf_chunkq *q, size_t need)
{
	if (need > KF_CHUNKQ_CHUNK)
		return NULL;
	if (KF_CHUNKQ_CHUNK - q->len[q->fill] < need)
		hand_over(q);
	return q->chunk[q->fill] + q->len[q->fill];
}

void kf_chunkq_commit(struct kf_chunkq *q, size_t need)
{
	q->len[q->fill] += need;
}

void kf_chunkq_finish(struct kf_chunkq *q)
{
	if (!q->started)
		return;
	hand_over(q);
	pthread_mutex_lock(&q->mu);
	q->closing = true;
	pthread_cond_signal(&q->cv_ready);
	pthread_mutex_unlock(&q->mu);
	pthread_join(q->thread, NULL);
	pthread_cond_destroy(&q->cv_free);
	pthread_cond_destroy(&q->cv_ready);
	pthread_mutex_destroy(&q->mu);
	free_chunks(q);
	q->started = false;
}
