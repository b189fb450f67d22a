/* order.c - records in (time, arrival) order with perf's flush rules.
 *
 * The records come as sorted runs: perf record drains each CPU's ring
 * buffer in turn, and a ring's records are in time order, so a round is a
 * few runs one after the other.  The queue keeps the records in arrival
 * order, cut into runs wherever the time goes back, and pops the least
 * of the runs' first records, kept in a binary heap of runs.  That is the
 * order of a heap of every record by (time, arrival), at a cost per
 * record of a heap of a few runs instead of a heap of the whole round
 * (the round's records are far more than its runs: each pop of a heap of
 * them moved log2(n) entries of 72 bytes, cache misses all).  Records
 * out of any order make runs of one record each: a heap of every record
 * again, never worse.
 *
 * Popped records stay in the array until the dead ones outnumber the
 * live ones; then the live runs are moved to its front. */
#include "order.h"

#include <stdlib.h>
#include <string.h>

#include "error.h"

struct qent {
	uint64_t time, seq;
	struct kf_rec rec;
	uint8_t *copy;          /* owned copy, NULL when rec is stable */
};

struct run {
	size_t head, end;       /* its live records: v[head .. end) */
};

#define NO_RUN SIZE_MAX

struct kf_order {
	struct qent *v;         /* records in arrival order (some popped) */
	size_t nv, cap_v, live;
	struct run *runs;
	size_t nruns, cap_runs;
	size_t *heap;           /* runs with live records, least head first */
	size_t nheap, cap_heap;
	size_t cur;             /* the run the next record may extend */
	uint64_t cur_time;      /* the time of the last record pushed */
	uint64_t seq;
	uint64_t max_ts;        /* perf's max_timestamp */
	uint64_t next_flush;    /* limit the next ROUND flush will use */
	uint64_t limit;         /* current release limit */
	uint64_t last_flush;    /* timestamp of the last released record */
	uint64_t out_of_order;
	size_t bytes, max_bytes, peak;
	uint8_t *popped;        /* copy of the last popped record */
};

int kf_order_new(struct kf_order **out, size_t max_bytes)
{
	struct kf_order *q = calloc(1, sizeof(*q));

	*out = q;
	if (!q)
		return KF_ENOMEM;
	q->max_bytes = max_bytes;
	q->cur = NO_RUN;
	return 0;
}

void kf_order_free(struct kf_order *q)
{
	size_t i, k;

	if (!q)
		return;
	for (i = 0; i < q->nheap; i++) {
		const struct run *r = &q->runs[q->heap[i]];

		for (k = r->head; k < r->end; k++)
			free(q->v[k].copy);
	}
	free(q->v);
	free(q->runs);
	free(q->heap);
	free(q->popped);
	free(q);
}

static bool before(const struct qent *a, const struct qent *b)
{
	return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

/* the first live record of heap entry i's run */
static const struct qent *head_of(const struct kf_order *q, size_t i)
{
	return &q->v[q->runs[q->heap[i]].head];
}

static void sift_up(struct kf_order *q, size_t i)
{
	size_t r = q->heap[i];

	while (i > 0) {
		size_t parent = (i - 1) / 2;

		KF_WORK(1);
		if (!before(&q->v[q->runs[r].head], head_of(q, parent)))
			break;
		q->heap[i] = q->heap[parent];
		i = parent;
	}
	q->heap[i] = r;
}

static void sift_down(struct kf_order *q, size_t i)
{
	size_t r = q->heap[i], n = q->nheap;

	for (;;) {
		size_t l = 2 * i + 1, m;

		KF_WORK(1);
		if (l >= n)
			break;
		m = (l + 1 < n && before(head_of(q, l + 1), head_of(q, l))) ? l + 1 : l;
		if (!before(head_of(q, m), &q->v[q->runs[r].head]))
			break;
		q->heap[i] = q->heap[m];
		i = m;
	}
	q->heap[i] = r;
}

static bool heap_add(struct kf_order *q, size_t run)
{
	if (!KF_GROW(q->heap, q->cap_heap, q->nheap + 1))
		return false;
	q->heap[q->nheap++] = run;
	sift_up(q, q->nheap - 1);
	return true;
}

/* The live runs moved to the front of v, in arrival order, and numbered
 * again; the heap made again (the same keys: the same order). */
static void compact(struct kf_order *q)
{
	size_t i, n = 0, at = 0, k;

	/* the live runs by where they start; the current one, live or not,
	 * is the last (it holds the last records pushed) */
	for (i = 0; i < q->nruns; i++) {
		struct run r = q->runs[i];
		size_t len = r.end - r.head;

		if (!len && i != q->cur)
			continue;
		if (at != r.head)
			memmove(&q->v[at], &q->v[r.head], len * sizeof(q->v[0]));
		if (i == q->cur)
			q->cur = n;
		q->runs[n].head = at;
		q->runs[n].end = at + len;
		at += len;
		n++;
	}
	q->nruns = n;
	q->nv = at;
	q->nheap = 0;
	for (k = 0; k < n; k++)
		if (q->runs[k].end > q->runs[k].head)
			q->heap[q->nheap++] = k;
	for (k = q->nheap / 2; k-- > 0;)
		sift_down(q, k);
}

int kf_order_push(struct kf_order *q, const struct kf_rec *rec, uint64_t time)
{
	struct qent e;
	size_t idx;

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
	}
	/* room for the record, its run and its run's heap entry first, so
	 * that nothing below can fail half done */
	if (!KF_GROW(q->v, q->cap_v, q->nv + 1) ||
	    !KF_GROW(q->runs, q->cap_runs, q->nruns + 1) ||
	    !KF_GROW(q->heap, q->cap_heap, q->nheap + 1)) {
		free(e.copy);
		return KF_ENOMEM;
	}
	if (e.copy) {
		q->bytes += rec->size;
		if (q->bytes > q->peak)
			q->peak = q->bytes;
	}
	if (time < q->last_flush)
		q->out_of_order++;
	/* perf resets max_timestamp when the queue was empty */
	if (q->live == 0 || time > q->max_ts)
		q->max_ts = time;
	idx = q->nv++;
	q->v[idx] = e;
	q->live++;
	if (q->cur != NO_RUN && time >= q->cur_time) {
		struct run *r = &q->runs[q->cur];

		/* the current run's records are the last ones: it goes on */
		if (r->head == r->end) {
			r->head = idx;
			r->end = idx + 1;
			(void)heap_add(q, q->cur);     /* room was made */
		} else {
			r->end = idx + 1;
		}
	} else {
		q->cur = q->nruns++;
		q->runs[q->cur].head = idx;
		q->runs[q->cur].end = idx + 1;
		(void)heap_add(q, q->cur);
	}
	q->cur_time = time;
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
		if (q->nheap) {
			uint64_t first = head_of(q, 0)->time;

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
	struct qent top;
	struct run *r;
	size_t run;

	/* perf's do_flush does nothing while the limit is 0 */
	if (!q->nheap || q->limit == 0 || head_of(q, 0)->time > q->limit)
		return false;
	run = q->heap[0];
	r = &q->runs[run];
	top = q->v[r->head++];
	q->live--;
	if (r->head == r->end) {
		/* the run is out of records (until more extend it, if it is
		 * the current one) */
		q->heap[0] = q->heap[--q->nheap];
	}
	if (q->nheap)
		sift_down(q, 0);
	free(q->popped);
	q->popped = top.copy;
	if (top.copy)
		q->bytes -= top.rec.size;
	q->last_flush = top.time;
	if (q->nv - q->live > q->live + 4096)
		compact(q);
	*out = top.rec;
	*time = top.time;
	return true;
}

bool kf_order_over(const struct kf_order *q)
{
	return q->bytes > q->max_bytes;
}

const uint8_t *kf_order_min_stable(const struct kf_order *q, uint64_t *offset)
{
	const uint8_t *m = NULL;
	size_t i, k;

	*offset = UINT64_MAX;
	for (i = 0; i < q->nheap; i++) {
		const struct run *r = &q->runs[q->heap[i]];

		for (k = r->head; k < r->end; k++) {
			if (q->v[k].copy)
				continue;
			if (!m || q->v[k].rec.data < m)
				m = q->v[k].rec.data;
			if (q->v[k].rec.offset < *offset)
				*offset = q->v[k].rec.offset;
		}
	}
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
