/* chunkq.h - a one-way queue of byte chunks to a worker thread.
 *
 * One producing thread writes records into the chunk it fills
 * (kf_chunkq_space, kf_chunkq_commit); a full chunk goes to a worker
 * thread, which calls the consumer on it and hands it back.  The chunks
 * are walked one at a time in the order they were filled, so the
 * consumer sees the records in the order they were written, as a single
 * thread calling it after each record would.  There are KF_CHUNKQ_CHUNKS
 * chunks of KF_CHUNKQ_CHUNK bytes: memory is bounded, and the producer
 * waits only when all of them are full or being consumed.
 *
 * The chunks form a ring: the producer fills chunk `fill`; the
 * `in_flight` chunks before it, from `take` on, wait for the worker or
 * are being consumed.  The producer may fill a chunk only while fewer
 * than KF_CHUNKQ_CHUNKS are in flight; once it had to wait, it is woken
 * when half of them are back.  One mutex guards the counters; a chunk's
 * bytes pass between the threads with it.
 *
 * Why 16 chunks and the half: the two threads' speeds swing with the
 * stacks (a new stack costs the trie's thread more than one it has), and
 * with 4 chunks, woken at each one back, the queue went from full to
 * empty and back hundreds of times on the bench capture: 900-1,000
 * voluntary context switches, each wakeup liable to land on the other
 * thread's CPU and take it.  With 16 and the half: 240-340, and folding
 * 5% faster (10 alternated pairs), for 3 MiB more memory.
 *
 * May use: util.
 */
#ifndef KF_CHUNKQ_H
#define KF_CHUNKQ_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

#define KF_CHUNKQ_CHUNKS 16
#define KF_CHUNKQ_CHUNK ((size_t)256 << 10)

/* Called on the worker with one chunk's records (len bytes, 8-aligned
 * start). */
typedef void (*kf_chunkq_fn)(void *ctx, const unsigned char *p, size_t len);

struct kf_chunkq {
	kf_chunkq_fn fn;
	void *ctx;
	struct kf_work_total *work;   /* where the worker's work is added */
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv_ready;      /* a chunk was handed over, or closing */
	pthread_cond_t cv_free;       /* a chunk was handed back */
	unsigned char *chunk[KF_CHUNKQ_CHUNKS];
	size_t len[KF_CHUNKQ_CHUNKS]; /* bytes used in each */
	unsigned fill, take, in_flight;
	bool closing;                 /* no more chunks: the worker ends */
	bool started;                 /* the worker runs (until finish) */
};

/* Starts the worker.  0, or KF_ENOMEM when the chunks or the thread
 * could not be had (then q holds nothing). */
int kf_chunkq_start(struct kf_chunkq *q, kf_chunkq_fn fn, void *ctx,
		    struct kf_work_total *work);

/* Room for a record of `need` bytes (a multiple of 8, at most
 * KF_CHUNKQ_CHUNK) in the chunk being filled, handing that chunk over
 * first when it has no such room (which may wait); NULL if need is too
 * big.  Write the record there, then kf_chunkq_commit(q, need). */
void *kf_chunkq_space(struct kf_chunkq *q, size_t need);
void kf_chunkq_commit(struct kf_chunkq *q, size_t need);

/* Hands over what is left, waits for the worker to consume it and end,
 * and frees the chunks.  Nothing on a queue not started or finished. */
void kf_chunkq_finish(struct kf_chunkq *q);

#endif
