/* test-order.c - the time-ordering queue (order.h): a capped queue
 * flushed by halves keeps its memory bounded and pops in time order.
 * How the session uses it across FINISHED_ROUND records (a mapping one
 * or two rounds late) is checked end to end in test-session.c
 * (test_time_order).  Also: records pushed as sorted runs with some out
 * of order, popped at rounds and by halves, come out one by one as a
 * plain heap of every record pops them, across the compactions of the
 * queue's array. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "order.h"

static void test_order_half(void)
{
	struct kf_order *q;
	struct kf_rec rec, out;
	uint8_t bytes[64];
	uint64_t t, last = 0;
	int i, n = 0;

	memset(bytes, 0, sizeof(bytes));
	memset(&rec, 0, sizeof(rec));
	rec.data = bytes;
	rec.size = 64;
	CHECK_EQ(kf_order_new(&q, 640), 0);
	for (i = 0; i < 100; i++) {
		CHECK_EQ(kf_order_push(q, &rec, 1000 - (uint64_t)i * 3 % 97), 0);
		if (kf_order_over(q)) {
			kf_order_flush(q, KF_ORDER_HALF);
			while (kf_order_pop(q, &out, &t))
				n++;
		}
	}
	/* memory stayed bounded by the cap */
	CHECK(kf_order_peak_bytes(q) <= 640 + 64);
	kf_order_flush(q, KF_ORDER_FINAL);
	while (kf_order_pop(q, &out, &t)) {
		CHECK(t >= last);
		last = t;
		n++;
	}
	CHECK_EQ(n, 100);
	kf_order_free(q);
}

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* the reference: every queued record in a plain binary heap by (time,
 * arrival), which is what the queue kept before it kept runs */
struct ref {
	uint64_t (*h)[2];
	size_t n;
};

static bool ref_less(const uint64_t *a, const uint64_t *b)
{
	return a[0] < b[0] || (a[0] == b[0] && a[1] < b[1]);
}

static void ref_push(struct ref *r, uint64_t time, uint64_t seq)
{
	size_t i = r->n++;

	r->h[i][0] = time;
	r->h[i][1] = seq;
	while (i > 0 && ref_less(r->h[i], r->h[(i - 1) / 2])) {
		uint64_t t0 = r->h[i][0], t1 = r->h[i][1];

		r->h[i][0] = r->h[(i - 1) / 2][0];
		r->h[i][1] = r->h[(i - 1) / 2][1];
		i = (i - 1) / 2;
		r->h[i][0] = t0;
		r->h[i][1] = t1;
	}
}

static void ref_pop(struct ref *r, uint64_t *time, uint64_t *seq)
{
	size_t i = 0;

	*time = r->h[0][0];
	*seq = r->h[0][1];
	r->n--;
	r->h[0][0] = r->h[r->n][0];
	r->h[0][1] = r->h[r->n][1];
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		uint64_t t0, t1;

		if (l < r->n && ref_less(r->h[l], r->h[m]))
			m = l;
		if (l + 1 < r->n && ref_less(r->h[l + 1], r->h[m]))
			m = l + 1;
		if (m == i)
			break;
		t0 = r->h[i][0];
		t1 = r->h[i][1];
		r->h[i][0] = r->h[m][0];
		r->h[i][1] = r->h[m][1];
		r->h[m][0] = t0;
		r->h[m][1] = t1;
		i = m;
	}
}

/* Rounds of four CPUs' records, each CPU's in time order with equal
 * times and now and then a late one, popped at every round's flush and
 * sometimes by halves: each record popped is the least queued one (the
 * reference's), with its own bytes, and in the end
 * every record comes out. */
/* pops what the queue releases, each checked against the reference */
static uint64_t drain_check(struct kf_order *q, struct ref *ref)
{
	struct kf_rec out;
	uint64_t t, n = 0;

	while (kf_order_pop(q, &out, &t)) {
		uint64_t id, rt, rs;

		memcpy(&id, out.data, sizeof(id));
		CHECK(ref->n > 0);
		if (!ref->n)
			break;
		ref_pop(ref, &rt, &rs);
		CHECK_EQ(t, rt);
		CHECK_EQ(id, rs);
		n++;
	}
	return n;
}

static void test_order_runs(void)
{
	enum { N = 300000 };
	static uint64_t heap[N][2];
	struct ref ref = { heap, 0 };
	struct kf_order *q;
	struct kf_rec rec;
	uint64_t x = 0x0de5, t, seq = 0, base = 1000, cpu_t[4] = { 0 }, got = 0, halves = 0;

	CHECK_EQ(kf_order_new(&q, 4096), 0);
	memset(&rec, 0, sizeof(rec));
	while (seq < N) {
		int cpu;

		for (cpu = 0; cpu < 4 && seq < N; cpu++) {
			size_t n = (size_t)(rnd(&x) % 400), k;

			if (cpu_t[cpu] < base)
				cpu_t[cpu] = base;
			for (k = 0; k < n && seq < N; k++) {
				uint8_t payload[8];

				cpu_t[cpu] += rnd(&x) % 4;      /* 0: an equal time */
				t = cpu_t[cpu];
				if (rnd(&x) % 64 == 0)
					t -= rnd(&x) % 900;     /* a late record */
				memcpy(payload, &seq, sizeof(seq));
				rec.data = payload;
				rec.size = sizeof(payload);
				CHECK_EQ(kf_order_push(q, &rec, t), 0);
				ref_push(&ref, t, seq);
				seq++;
				if (kf_order_over(q)) {
					kf_order_flush(q, KF_ORDER_HALF);
					got += drain_check(q, &ref);
					halves++;
				}
			}
		}
		base += 900;
		kf_order_flush(q, KF_ORDER_ROUND);
		got += drain_check(q, &ref);
	}
	kf_order_flush(q, KF_ORDER_FINAL);
	got += drain_check(q, &ref);
	CHECK_EQ(got, N);
	CHECK_EQ(ref.n, 0);
	CHECK(halves > 100);        /* the cap was met often */
	/* the copies' memory stayed at the cap */
	CHECK(kf_order_peak_bytes(q) <= 4096 + 8);
	kf_order_free(q);
}

int main(void)
{
	RUN(test_order_half);
	RUN(test_order_runs);
	return CHECK_DONE();
}
