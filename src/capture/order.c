/* order.c - a binary heap keyed by (time, arrival) with perf's flush rules. */
#include "order.h"

#include <stdlib.h>
#include <string.h>

#include "error.h"

struct qent {
	uint64_t time, seq;
	struct kf_rec rec;
	uint8_t *copy;          /* owned copy, NULL when rec is stable */
};

struct kf_order {
	struct qent *heap;
	size_t n, cap;
	uint64_t seq;
	uint64_t max_ts;        /* perf's max_timestamp */
	uint64_t next_flush;    /* limit the next ROUND flush will use */
	uint64_t limit;         /* current release limit */
	uint64_t last_flush;    /* timestamp of the last released record */
	uint64_t out_of_order;
	size_t bytes, max_bytes, peak;
	uint8_t *popped;        /* copy of the last popped record */
	size_t popped_size;
};

int kf_order_new(struct kf_order **out, size_t max_bytes)
{
	struct kf_order *q = calloc(1, sizeof(*q));

	*out = q;
	if (!q)
		return KF_ENOMEM;
	q->max_bytes = max_bytes;
	return 0;
}

void kf_order_free(struct kf_order *q)
{
	size_t i;

	if (!q)
		return;
	for (i = 0; i < q->n; i++)
		free(q->heap[i].copy);
	free(q->heap);
	free(q->popped);
	free(q);
}

static bool before(const struct qent *a, const struct qent *b)
{
	return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

int kf_order_push(struct kf_order *q, const struct kf_rec *rec, uint64_t time)
{
	struct qent e;
	size_t i;

	memset(&e, 0, sizeof(e));
	e.time = time;
	e.seq = q->seq++;
	e.rec = *rec;
	if (!rec->stable) {
		e.copy = malloc(rec->size);
		if (!e.copy)
			return KF_ENOMEM;
		memcpy(e.copy, rec->data, rec->size);
		e.rec.data = e.copy;
		q->bytes += rec->size;
		if (q->bytes > q->peak)
			q->peak = q->bytes;
	}
	if (!KF_GROW(q->heap, q->cap, q->n + 1)) {
		free(e.copy);
		return KF_ENOMEM;
	}
	if (time < q->last_flush)
		q->out_of_order++;
	/* perf resets max_timestamp when the queue was empty */
	if (q->n == 0 || time > q->max_ts)
		q->max_ts = time;
	i = q->n++;
	while (i > 0) {
		size_t parent = (i - 1) / 2;

		KF_WORK(1);
		if (!before(&e, &q->heap[parent]))
			break;
		q->heap[i] = q->heap[parent];
		i = parent;
	}
	q->heap[i] = e;
	return 0;
}

void kf_order_flush(struct kf_order *q, enum kf_order_flush how)
{
	switch (how) {
	case KF_ORDER_ROUND:
		/* release what was seen before the previous round ended;
		 * next time, what has been seen until now */
		q->limit = q->next_flush;
		q->next_flush = q->max_ts;
		break;
	case KF_ORDER_HALF:
		if (q->n) {
			uint64_t first = q->heap[0].time;

			q->limit = first + (q->max_ts - first) / 2;
		}
		break;
	case KF_ORDER_FINAL:
		q->limit = UINT64_MAX;
		break;
	}
}

bool kf_order_pop(struct kf_order *q, struct kf_rec *out, uint64_t *time)
{
	struct qent top, last;
	size_t i, n;

	/* perf's do_flush does nothing while the limit is 0 */
	if (!q->n || q->limit == 0 || q->heap[0].time > q->limit)
		return false;
	top = q->heap[0];
	last = q->heap[--q->n];
	n = q->n;
	i = 0;
	while (n) {
		size_t l = 2 * i + 1, r = l + 1, m;

		KF_WORK(1);
		if (l >= n)
			break;
		m = (r < n && before(&q->heap[r], &q->heap[l])) ? r : l;
		if (!before(&q->heap[m], &last))
			break;
		q->heap[i] = q->heap[m];
		i = m;
	}
	if (n)
		q->heap[i] = last;
	free(q->popped);
	q->popped = top.copy;
	if (top.copy)
		q->bytes -= top.rec.size;
	q->last_flush = top.time;
	*out = top.rec;
	*time = top.time;
	return true;
}

bool kf_order_over(const struct kf_order *q)
{
	return q->bytes > q->max_bytes;
}

const uint8_t *kf_order_min_stable(const struct kf_order *q)
{
	const uint8_t *m = NULL;
	size_t i;

	for (i = 0; i < q->n; i++)
		if (!q->heap[i].copy && (!m || q->heap[i].rec.data < m))
			m = q->heap[i].rec.data;
	return m;
}

uint64_t kf_order_out_of_order(const struct kf_order *q)
{
	return q->out_of_order;
}

size_t kf_order_peak_bytes(const struct kf_order *q)
{
	return q->peak;
}
