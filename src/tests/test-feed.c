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
	struct kf_feed f;
	struct kf_work_total work = { 0 };
	static struct kf_frame frames[300];
	struct kf_frame root;
	uint64_t x = 0xfeed, bytes = 0;
	size_t i;
	int round;

	CHECK_EQ(kf_stacks_init(&a), 0);
	CHECK_EQ(kf_stacks_init(&b), 0);
	CHECK_EQ(kf_feed_start(&f, &a, &work), 0);
	for (round = 0; round < 30000; round++) {
		size_t n = (size_t)(rnd(&x) % 200);
		uint64_t w = rnd(&x) % 1000;
		uint32_t node;

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
		CHECK(kf_feed_push(&f, &root, frames, n, w));
		bytes += 16 + (n + 1) * sizeof(struct kf_frame);
		node = kf_stacks_path(&b, &root, frames, n);
		CHECK(node != 0);
		CHECK(kf_stacks_add(&b, node, w));
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
	CHECK_EQ(kf_feed_start(&f, &a, &work), 0);
	CHECK_EQ(kf_feed_finish(&f), 0);
	CHECK_EQ(a.n, 1);         /* the trie's own first node only */
	/* a stack longer than a push may carry is refused, and the trie
	 * is then said to be incomplete */
	root.flags = KF_FRAME_ROOT;
	root.root = 1;
	CHECK_EQ(kf_feed_start(&f, &a, &work), 0);
	CHECK(kf_feed_push(&f, &root, frames, 2, 1));
	CHECK(!kf_feed_push(&f, &root, frames, KF_FEED_MAX_FRAMES + 1, 1));
	CHECK(!kf_feed_push(&f, &root, frames, 1, 1));
	CHECK_EQ(kf_feed_finish(&f), KF_ENOMEM);
	kf_stacks_fini(&a);
}

int main(void)
{
	RUN(test_same_trie);
	RUN(test_empty_and_refused);
	return CHECK_DONE();
}
