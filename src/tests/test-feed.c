/* test-feed.c - the trie built on a worker thread (feed.h) is the trie
 * built in place: random stacks, enough of them to fill many chunks (so
 * the reading thread waits for the worker), pushed through a feed and
 * walked into a second trie directly, then compared node for node
 * (parent, frame, samples, weight).  Also: a feed that is finished at
 * once, and a push of more frames than a chunk may carry. */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "feed.h"
#include "kfold.h"
#include "stacks.h"

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void test_same_trie(void)
{
	struct kf_stacks a, b;
	struct kf_tsums ta, tb;
	struct kf_feed f;
	struct kf_work_total work = { 0 };
	static struct kf_frame frames[300];
	struct kf_frame root;
	uint64_t x = 0xfeed, bytes = 0;
	size_t i;
	int round;

	CHECK_EQ(kf_stacks_init(&a), 0);
	CHECK_EQ(kf_stacks_init(&b), 0);
	kf_tsums_init(&ta);
	kf_tsums_init(&tb);
	CHECK_EQ(kf_feed_start(&f, &a, &ta, &work), 0);
	for (round = 0; round < 30000; round++) {
		size_t n = (size_t)(rnd(&x) % 200);
		uint64_t w = rnd(&x) % 1000;
		uint32_t node, thread = (uint32_t)(rnd(&x) % 5);

		if (round % 100 == 0)
			w = UINT64_MAX;   /* weights that carry past 2^64 */
		memset(&root, 0, sizeof(root));
		root.flags = KF_FRAME_ROOT;
		root.root = (uint32_t)(rnd(&x) % 7) + 1;
		for (i = 0; i < n; i++) {
			memset(&frames[i], 0, sizeof(frames[i]));
			frames[i].addr = rnd(&x) % (i < n / 2 ? 50 : 3);
			frames[i].module = (uint32_t)(rnd(&x) % 3);
			frames[i].flags = (uint32_t)(rnd(&x) % 2) * KF_FRAME_KERNEL;
		}
		/* every tenth push carries no thread */
		if (round % 10 == 3)
			thread = KF_FEED_NO_THREAD;
		CHECK(kf_feed_push(&f, &root, frames, n, w, thread));
		bytes += 16 + (n + 1) * sizeof(struct kf_frame);
		node = kf_stacks_path(&b, &root, frames, n);
		CHECK(node != 0);
		CHECK(kf_stacks_add(&b, node, w));
		if (thread != KF_FEED_NO_THREAD)
			CHECK(kf_tsums_add(&tb, node, thread, w));
	}
	/* many more bytes than the chunks hold: the reader waited */
	CHECK(bytes > 10 * KF_CHUNKQ_CHUNKS * KF_CHUNKQ_CHUNK);
	CHECK_EQ(f.pushed, 30000);
	CHECK_EQ(kf_feed_finish(&f), 0);
	CHECK(work.n > 0);        /* the worker's work was added */
	CHECK_EQ(a.n, b.n);
	CHECK(a.n > 100000);
	for (i = 1; i < a.n; i++) {
		CHECK_EQ(a.nodes[i].parent, b.nodes[i].parent);
		CHECK_EQ(a.nodes[i].frame.addr, b.nodes[i].frame.addr);
		CHECK_EQ(a.nodes[i].frame.module, b.nodes[i].frame.module);
		CHECK_EQ(a.nodes[i].frame.flags, b.nodes[i].frame.flags);
		CHECK_EQ(a.nodes[i].samples, b.nodes[i].samples);
		CHECK(kf_stacks_weight(&a, (uint32_t)i) == kf_stacks_weight(&b, (uint32_t)i));
	}
	/* the thread sums too, entry for entry */
	CHECK_EQ(ta.n, tb.n);
	CHECK_EQ(ta.cap, tb.cap);
	CHECK(ta.n > 20000);
	for (i = 0; i < ta.cap; i++) {
		CHECK_EQ(ta.v[i].node, tb.v[i].node);
		CHECK_EQ(ta.v[i].thread, tb.v[i].thread);
		CHECK_EQ(ta.v[i].samples, tb.v[i].samples);
		CHECK_EQ(ta.v[i].weight, tb.v[i].weight);
	}
	kf_tsums_fini(&ta);
	kf_tsums_fini(&tb);
	/* finishing twice is harmless; the trie is the caller's again */
	CHECK_EQ(kf_feed_finish(&f), 0);
	CHECK(kf_stacks_path(&a, &root, frames, 3) != 0);
	kf_stacks_fini(&a);
	kf_stacks_fini(&b);
}

static void test_empty_and_refused(void)
{
	struct kf_stacks a;
	struct kf_feed f;
	struct kf_work_total work = { 0 };
	static struct kf_frame frames[KF_FEED_MAX_FRAMES + 1];
	struct kf_frame root = { 0 };

	CHECK_EQ(kf_stacks_init(&a), 0);
	/* nothing pushed */
	CHECK_EQ(kf_feed_start(&f, &a, NULL, &work), 0);
	CHECK_EQ(kf_feed_finish(&f), 0);
	CHECK_EQ(a.n, 1);         /* the trie's own first node only */
	/* a stack longer than a push may carry is refused, and the trie
	 * is then said to be incomplete */
	root.flags = KF_FRAME_ROOT;
	root.root = 1;
	CHECK_EQ(kf_feed_start(&f, &a, NULL, &work), 0);
	CHECK(kf_feed_push(&f, &root, frames, 2, 1, KF_FEED_NO_THREAD));
	CHECK(!kf_feed_push(&f, &root, frames, KF_FEED_MAX_FRAMES + 1, 1, KF_FEED_NO_THREAD));
	CHECK(!kf_feed_push(&f, &root, frames, 1, 1, KF_FEED_NO_THREAD));
	CHECK_EQ(kf_feed_finish(&f), KF_ENOMEM);
	kf_stacks_fini(&a);
}

/* The table by itself: sums as a node's (saturating samples, weights
 * modulo 2^64), threads by (pid, tid) with (-1, -1) among them, and each
 * node's entries listed in the order they came. */
static void test_tsums(void)
{
	struct kf_tsums t;
	uint32_t th[4], k;
	const struct kf_tsum *a, *e;
	size_t n;

	kf_tsums_init(&t);
	CHECK(kf_tsums_thread(&t, 10, 11, 7, &th[0]));
	CHECK(kf_tsums_thread(&t, -1, -1, 8, &th[1]));
	CHECK(kf_tsums_thread(&t, -1, 0x7fffffff, 9, &th[2]));
	CHECK(kf_tsums_thread(&t, 0, 0, 10, &th[3]));
	CHECK_EQ(th[0], 0);
	CHECK_EQ(th[1], 1);
	CHECK_EQ(th[2], 2);
	CHECK_EQ(th[3], 3);
	/* a thread's root is its first call's */
	CHECK(kf_tsums_thread(&t, -1, -1, 11, &k));
	CHECK_EQ(k, 1);
	CHECK(kf_tsums_thread(&t, 10, 11, 12, &k));
	CHECK_EQ(k, 0);
	CHECK_EQ(t.n_threads, 4);
	CHECK_EQ(t.threads[1].pid, -1);
	CHECK_EQ(t.threads[1].root, 8);
	CHECK_EQ(t.threads[0].root, 7);
	CHECK_EQ(t.threads[2].tid, 0x7fffffff);
	/* node 5: threads 2 then 0; node 2: thread 1; node 5 thread 2
	 * again (no new entry) */
	CHECK(kf_tsums_add(&t, 5, 2, UINT64_MAX));
	CHECK(kf_tsums_add(&t, 2, 1, 7));
	CHECK(kf_tsums_add(&t, 5, 0, 1));
	CHECK(kf_tsums_add(&t, 5, 2, 3));
	CHECK_EQ(t.n, 3);
	CHECK((a = kf_tsums_find(&t, 5, 2)) != NULL);
	CHECK_EQ(a->samples, 2);
	CHECK_EQ(a->weight, 2);               /* 2^64 - 1 + 3, modulo 2^64 */
	CHECK(kf_tsums_find(&t, 5, 1) == NULL);
	CHECK(kf_tsums_find(&t, 2, 2) == NULL);
	CHECK((a = kf_tsums_find(&t, 2, 1)) != NULL);
	((struct kf_tsum *)a)->samples = UINT32_MAX;
	CHECK(kf_tsums_add(&t, 2, 1, 1));
	CHECK_EQ(a->samples, UINT32_MAX);     /* saturates */
	CHECK_EQ(a->weight, 8);
	/* many entries: the table grows, every sum stays */
	for (k = 0; k < 50000; k++)
		CHECK(kf_tsums_add(&t, 100 + k % 7000, k % 13, k));
	/* 7000 and 13 are coprime: each k below 7000 * 13 a pair of its own */
	CHECK_EQ(t.n, 3 + 50000);
	CHECK(t.cap >= 2 * t.n);
	for (k = 0; k < 7000; k++) {
		uint32_t th2, want_n = 0;

		for (th2 = 0; th2 < 13; th2++) {
			const struct kf_tsum *x = kf_tsums_find(&t, 100 + k, th2);

			if (x)
				want_n += x->samples;
		}
		/* k, k + 7000, ... below 50000 */
		CHECK_EQ(want_n, (50000 - k + 6999) / 7000);
	}
	/* before the index: no lists */
	CHECK(kf_tsums_of(&t, 5, &n) == NULL && n == 0);
	/* node 9 and the nodes from 100 are past the nodes indexed: left out */
	CHECK(kf_tsums_add(&t, 9, 0, 1));
	CHECK(kf_tsums_index(&t, 6));
	/* the table is gone: nothing more to add or find */
	CHECK(!kf_tsums_add(&t, 5, 2, 1));
	CHECK(kf_tsums_find(&t, 5, 2) == NULL);
	e = kf_tsums_of(&t, 5, &n);
	CHECK_EQ(n, 2);
	CHECK(e[0].thread != e[1].thread);
	for (k = 0; k < 2; k++) {
		CHECK_EQ(e[k].node, 5);
		CHECK_EQ(e[k].samples, e[k].thread == 2 ? 2 : 1);
		CHECK_EQ(e[k].weight, e[k].thread == 2 ? 2 : 1);
	}
	e = kf_tsums_of(&t, 2, &n);
	CHECK_EQ(n, 1);
	CHECK_EQ(e[0].samples, UINT32_MAX);
	CHECK_EQ(e[0].weight, 8);
	kf_tsums_of(&t, 0, &n);
	CHECK_EQ(n, 0);
	kf_tsums_of(&t, 4, &n);
	CHECK_EQ(n, 0);
	kf_tsums_of(&t, 9, &n);
	CHECK_EQ(n, 0);
	kf_tsums_of(&t, 100, &n);
	CHECK_EQ(n, 0);
	kf_tsums_fini(&t);
}

int main(void)
{
	RUN(test_tsums);
	RUN(test_same_trie);
	RUN(test_empty_and_refused);
	return CHECK_DONE();
}
