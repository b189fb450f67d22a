/* test-stacks.c - the stack trie (stacks.h): a whole stack interned at
 * once (kf_stacks_path) gives the nodes a frame-by-frame walk
 * (kf_stacks_child) gives, through random stacks that share prefixes,
 * repeat, run longer than one fetch batch and make the index grow, and
 * after the index was dropped and rebuilt. */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "stacks.h"

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static uint32_t by_child(struct kf_stacks *s, const struct kf_frame *root,
			 const struct kf_frame *frames, size_t n)
{
	uint32_t node = kf_stacks_child(s, 0, root);
	size_t i;

	for (i = n; node && i-- > 0;)
		node = kf_stacks_child(s, node, &frames[i]);
	return node;
}

static void test_path_equals_child(void)
{
	struct kf_stacks a, b;
	struct kf_frame frames[100], root;
	uint64_t x = 0x5eed;
	int round;

	CHECK_EQ(kf_stacks_init(&a), 0);
	CHECK_EQ(kf_stacks_init(&b), 0);
	for (round = 0; round < 20000; round++) {
		/* few distinct roots and frames, so prefixes repeat; depths
		 * up to 99 (more than one batch of 32) */
		size_t n = (size_t)(rnd(&x) % 100), i;
		uint32_t pa, pb;

		memset(&root, 0, sizeof(root));
		root.flags = KF_FRAME_ROOT;
		root.root = (uint32_t)(rnd(&x) % 5) + 1;
		for (i = 0; i < n; i++) {
			memset(&frames[i], 0, sizeof(frames[i]));
			frames[i].addr = rnd(&x) % (i < n / 2 ? 40 : 4);
			frames[i].module = (uint32_t)(rnd(&x) % 3);
			frames[i].flags = (uint32_t)(rnd(&x) % 2) * KF_FRAME_KERNEL;
		}
		/* now and then a's index is dropped: the next insert
		 * rebuilds it and finds the same nodes */
		if (round % 997 == 0)
			kf_stacks_drop_index(&a);
		/* the same stack through both: the same node ids */
		pa = kf_stacks_path(&a, &root, frames, n);
		pb = by_child(&b, &root, frames, n);
		CHECK(pa != 0);
		CHECK_EQ(pa, pb);
		/* again: found, nothing added */
		CHECK_EQ(kf_stacks_path(&a, &root, frames, n), pa);
		CHECK_EQ(a.n, b.n);
		/* and the walk over the batched trie agrees */
		CHECK_EQ(by_child(&a, &root, frames, n), pa);
		CHECK_EQ(a.n, b.n);
	}
	CHECK(a.n > 10000);
	for (size_t i = 1; i < a.n; i++) {
		CHECK_EQ(a.nodes[i].parent, b.nodes[i].parent);
		CHECK_EQ(a.nodes[i].frame.addr, b.nodes[i].frame.addr);
		CHECK_EQ(a.nodes[i].frame.module, b.nodes[i].frame.module);
	}
	kf_stacks_fini(&a);
	kf_stacks_fini(&b);
}

/* a path of one frame, the root alone, and the root's node found from
 * kf_stacks_child */
static void test_short_paths(void)
{
	struct kf_stacks s;
	struct kf_frame root = { 0 }, f = { 0 };
	uint32_t r, leaf;

	CHECK_EQ(kf_stacks_init(&s), 0);
	root.flags = KF_FRAME_ROOT;
	root.root = 7;
	r = kf_stacks_path(&s, &root, NULL, 0);
	CHECK_EQ(r, 1);
	CHECK_EQ(kf_stacks_child(&s, 0, &root), r);
	f.addr = 0x1234;
	f.module = 2;
	leaf = kf_stacks_path(&s, &root, &f, 1);
	CHECK_EQ(s.nodes[leaf].parent, r);
	CHECK_EQ(kf_stacks_child(&s, r, &f), leaf);
	CHECK_EQ(s.n, 3);
	kf_stacks_drop_index(&s);
	CHECK_EQ(kf_stacks_child(&s, r, &f), leaf);
	kf_stacks_drop_index(&s);
	CHECK_EQ(kf_stacks_path(&s, &root, &f, 1), leaf);
	CHECK_EQ(s.n, 3);
	kf_stacks_fini(&s);
}

int main(void)
{
	RUN(test_path_equals_child);
	RUN(test_short_paths);
	return CHECK_DONE();
}
