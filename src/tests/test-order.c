/* test-order.c - the time-ordering queue (order.h): a capped queue
 * flushed by halves keeps its memory bounded and pops in time order.
 * How the session uses it across FINISHED_ROUND records (a mapping one
 * or two rounds late) is checked end to end in test-session.c
 * (test_time_order). */
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

int main(void)
{
	RUN(test_order_half);
	return CHECK_DONE();
}
