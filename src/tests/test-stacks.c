/* test-stacks.c - the stack trie (stacks.h): a whole stack interned at
 * once (kf_stacks_path) gives the nodes a frame-by-frame walk
 * (kf_stacks_child) gives, through random stacks that share prefixes,
 * repeat, run longer than one fetch batch and make the index grow, and
 * after the index was dropped and rebuilt; a copy changed in place and
 * pruned (the --context rewrite's steps). */
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

/* The weight of every stack, as the sum over the nodes of one path
 * (frames compared, not ids): what a copy, a move and a prune must keep. */
static kf_u128 path_weight(const struct kf_stacks *s, const struct kf_frame *root,
			   const struct kf_frame *frames, size_t n)
{
	kf_u128 w = 0;
	size_t i, k;

	for (i = 1; i < s->n; i++) {
		uint32_t x = (uint32_t)i;
		const struct kf_node *nd;

		for (k = 0; k < n; k++, x = s->nodes[x].parent) {
			nd = &s->nodes[x];
			if (!x || nd->frame.addr != frames[k].addr ||
			    nd->frame.flags != frames[k].flags)
				break;
		}
		if (k == n && x && s->nodes[x].parent == 0 &&
		    s->nodes[x].frame.root == root->root)
			w += kf_stacks_weight(s, (uint32_t)i);
	}
	return w;
}

/* kf_stacks_copy, then a stack moved onto a new branch (kf_stacks_append,
 * kf_stacks_move), another cleared, then kf_stacks_prune: the other
 * stacks keep their weights, the moved one is found on its branch, the
 * nodes nothing ends under are gone, and the source trie is untouched. */
static void test_copy_move_prune(void)
{
	struct kf_stacks a, c;
	struct kf_frame root, f[3], mark;
	uint32_t n1, n2, n3, b1, b2, along[8];
	struct kf_frame old_frame[8];
	size_t before, i;

	CHECK_EQ(kf_stacks_init(&a), 0);
	memset(&root, 0, sizeof(root));
	root.flags = KF_FRAME_ROOT;
	root.root = 1;
	memset(f, 0, sizeof(f));
	f[0].addr = 10;
	f[1].addr = 20;
	f[2].addr = 30;
	f[0].flags = f[1].flags = KF_FRAME_KERNEL;
	n1 = kf_stacks_path(&a, &root, f, 3);           /* 30;20;10 */
	n2 = kf_stacks_path(&a, &root, f + 1, 2);       /* 30;20 */
	n3 = kf_stacks_path(&a, &root, f + 2, 1);       /* 30 */
	CHECK(n1 && n2 && n3);
	CHECK(kf_stacks_add(&a, n1, 5));
	CHECK(kf_stacks_add(&a, n2, 7));
	CHECK(kf_stacks_add(&a, n3, 11));
	CHECK(kf_stacks_add_weight(&a, n3, (kf_u128)3 << 64));
	kf_stacks_drop_index(&a);
	before = a.n;
	CHECK_EQ(kf_stacks_copy(&c, &a), 0);
	CHECK_EQ(c.n, a.n);
	/* 30;[m];20;10 takes the samples of 30;20;10 */
	memset(&mark, 0, sizeof(mark));
	mark.flags = KF_FRAME_PSEUDO;
	mark.addr = 1;
	b1 = kf_stacks_append(&c, n3, &mark);
	CHECK(b1 != 0);
	b2 = kf_stacks_append(&c, b1, &c.nodes[n2].frame);
	CHECK(b2 != 0);
	b2 = kf_stacks_append(&c, b2, &f[0]);
	CHECK(b2 != 0);
	CHECK(kf_stacks_move(&c, n1, b2));
	CHECK_EQ(c.nodes[n1].samples, 0u);
	CHECK_EQ(c.nodes[b2].samples, 1u);
	CHECK(kf_stacks_weight(&c, b2) == 5);
	/* 30;20 dropped */
	CHECK(kf_stacks_clear(&c, n2));
	/* 30 moved onto itself: nothing changes (wraps included) */
	CHECK(kf_stacks_move(&c, n3, n3));
	CHECK(kf_stacks_weight(&c, n3) == (((kf_u128)3 << 64) | 11));
	/* along follows the nodes: each keeps the old id it was given */
	CHECK_EQ(c.n, (size_t)8);
	for (i = 0; i < c.n; i++) {
		old_frame[i] = c.nodes[i].frame;
		along[i] = (uint32_t)i;
	}
	CHECK(kf_stacks_prune(&c, along));
	/* the nodes of 30;20 and 30;20;10 are gone: root, 30, [m], 20, 10 */
	CHECK_EQ(c.n, (size_t)6);
	CHECK_EQ(along[0], 0u);
	for (i = 1; i < c.n; i++) {
		CHECK(along[i] > along[i - 1]);
		CHECK(memcmp(&c.nodes[i].frame, &old_frame[along[i]], sizeof(old_frame[0])) == 0);
	}
	CHECK_EQ(along[1], 1u);   /* the root */
	CHECK_EQ(along[5], 7u);   /* 10, the moved leaf, appended last */
	{
		struct kf_frame moved[4] = { f[0], f[1], mark, f[2] };

		CHECK(path_weight(&c, &root, moved, 4) == 5);
		CHECK(path_weight(&c, &root, f + 1, 2) == 0);
		CHECK(path_weight(&c, &root, f + 2, 1) == (((kf_u128)3 << 64) | 11));
	}
	/* the source is as it was */
	CHECK_EQ(a.n, before);
	CHECK(path_weight(&a, &root, f, 3) == 5);
	CHECK(path_weight(&a, &root, f + 1, 2) == 7);
	/* an indexed trie refuses appends (they would bypass the index) */
	CHECK(kf_stacks_path(&a, &root, f, 1) != 0);
	CHECK_EQ(kf_stacks_append(&a, n3, &mark), 0u);
	CHECK(!kf_stacks_prune(&a, NULL));
	kf_stacks_fini(&a);
	kf_stacks_fini(&c);
}

int main(void)
{
	RUN(test_path_equals_child);
	RUN(test_short_paths);
	RUN(test_copy_move_prune);
	return CHECK_DONE();
}
