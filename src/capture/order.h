/* order.h - put records back into time order, as perf's ordered-events
 * queue does (tools/perf/util/ordered-events.c).
 *
 * perf record drains the per-CPU ring buffers in passes and writes a
 * FINISHED_ROUND record after each pass, so file order is not time order.
 * A record with a timestamp is queued; at a FINISHED_ROUND the queue
 * releases every record up to the largest timestamp seen before the
 * *previous* round ended (a record can arrive one round late, never two);
 * at the end everything is released.  Records with no timestamp (0 or ~0:
 * synthesized ones) are not queued: the caller delivers them at once.
 * Equal timestamps keep file order.
 *
 * Memory: records from a stable buffer (an mmap'd file) are queued by
 * reference; others are copied.  When the copies pass max_bytes, the older
 * half of the queue is released early (perf's OE_FLUSH__HALF), so memory
 * stays bounded whatever the input.
 *
 * May use: util, perfdata (struct kf_rec).
 */
#ifndef KF_ORDER_H
#define KF_ORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perfdata.h"

struct kf_order;

int kf_order_new(struct kf_order **out, size_t max_bytes);
void kf_order_free(struct kf_order *q);

/* Queues rec with its timestamp (not 0 or ~0).  Returns 0 or KF_ENOMEM.
 * Counts the record as out of order if it is older than the last
 * released one. */
int kf_order_push(struct kf_order *q, const struct kf_rec *rec, uint64_t time);

enum kf_order_flush {
	KF_ORDER_ROUND,   /* a FINISHED_ROUND was read */
	KF_ORDER_HALF,    /* memory pressure: release the older half */
	KF_ORDER_FINAL,   /* end of input: release everything */
};

/* Sets how far kf_order_pop may go. */
void kf_order_flush(struct kf_order *q, enum kf_order_flush how);

/* Pops the oldest record if it may be released under the current flush
 * limit.  The record is valid until the next kf_order_pop or
 * kf_order_free.  Returns false when nothing may be released. */
bool kf_order_pop(struct kf_order *q, struct kf_rec *out, uint64_t *time);

/* True when the queue holds more copied bytes than it may. */
bool kf_order_over(const struct kf_order *q);

/* The lowest address of a queued record that points into the caller's
 * stable buffer (rec->stable), or NULL if none: the buffer below it is no
 * longer needed; *offset the lowest file offset (kf_rec.offset) of such a
 * record, UINT64_MAX if none. */
const uint8_t *kf_order_min_stable(const struct kf_order *q, uint64_t *offset);

uint64_t kf_order_out_of_order(const struct kf_order *q);
size_t kf_order_peak_bytes(const struct kf_order *q);

#endif
