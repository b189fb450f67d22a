/* test-stacks.c - the stack trie (stacks.h): a whole stack interned at
 * once (kf_stacks_path) gives the nodes a frame-by-frame walk
 * (kf_stacks_child) gives, through random stacks that share prefixes,
 * repeat, run longer than one fetch batch and make the index grow, and
 * after the index was dropped and rebuilt; the same when the recent
 * stacks kf_stacks_path finds at once share their hashes; a copy changed
 * in place and pruned (the --context rewrite's steps); and the map the
 * namer's cache uses, whose add and intern keep what a put replaces,
 * and its copy. */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "stacks.h"
#include "util.h"

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

/* One stack of test_recent's, made from its seed: a few roots, a small
 * alphabet of frames (so that stacks share prefixes and differ in one
 * frame, one module or one flag), mostly short, now and then past the
 * longest stack the recent ones keep (256 frames). */
static size_t recent_stack(uint64_t seed, struct kf_frame *root, struct kf_frame *frames)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
	size_t n = rnd(&x) % 16 == 0 ? (size_t)(rnd(&x) % 300) : (size_t)(rnd(&x) % 20), i;

	memset(root, 0, sizeof(*root));
	root->flags = KF_FRAME_ROOT;
	root->root = (uint32_t)(rnd(&x) % 3) + 1;
	for (i = 0; i < n; i++) {
		memset(&frames[i], 0, sizeof(frames[i]));
		frames[i].addr = rnd(&x) % 6;
		frames[i].module = (uint32_t)(rnd(&x) % 2);
		frames[i].flags = rnd(&x) % 4 == 0 ? KF_FRAME_RA : 0;
	}
	return n;
}

/* kf_stacks_path's recent stacks.  With the whole hash and 4 bits of it
 * (16 hashes: stacks share them all the time), with none (every stack in
 * one slot), with the usual ring of 2^18 frames and with rings so short
 * that a stack's slot often outlives its frames: stacks come new or
 * again (the one before, or one of the last 64); each answer is the
 * frame-by-frame walk's, the ring wraps, and repeats are found there. */
static void test_recent(void)
{
	static const struct {
		uint64_t mask;
		size_t ring;
	} cfg[] = {
		{ UINT64_MAX, 1u << 18 }, { 0xf, 1u << 18 }, { 0xf, 256 }, { 0xf, 1024 },
		{ 0, 1024 },
	};
	static struct kf_frame frames[300];
	struct kf_frame root;
	size_t k;

	for (k = 0; k < sizeof(cfg) / sizeof(cfg[0]); k++) {
		struct kf_stacks a, b;
		uint64_t seeds[64] = { 0 }, x = 0xfeed + k, next = 1, frames_in = 0;
		int round;

		CHECK_EQ(kf_stacks_init(&a), 0);
		CHECK_EQ(kf_stacks_init(&b), 0);
		CHECK(kf_stacks_recent_test(&a, cfg[k].mask, cfg[k].ring));
		for (round = 0; round < 20000; round++) {
			uint64_t r = rnd(&x) % 8, seed;
			uint32_t pa, pb;
			size_t n;

			/* new, the one before, or one of the last 64 */
			seed = r < 3 ? next++ : r < 5 ? seeds[(round + 63) % 64] :
			       seeds[rnd(&x) % 64];
			if (!seed)
				seed = next++;
			seeds[round % 64] = seed;
			n = recent_stack(seed, &root, frames);
			frames_in += n + 1;
			pa = kf_stacks_path(&a, &root, frames, n);
			pb = by_child(&b, &root, frames, n);
			CHECK(pa != 0);
			CHECK_EQ(pa, pb);
			CHECK_EQ(a.n, b.n);
		}
		CHECK(frames_in > cfg[k].ring);
		CHECK(kf_stacks_recent_hits(&a) > 1000);
		kf_stacks_fini(&a);
		kf_stacks_fini(&b);
	}
	/* a ring too short for the longest stack kept, or not a power of
	 * two, is refused */
	{
		struct kf_stacks a;

		CHECK_EQ(kf_stacks_init(&a), 0);
		CHECK(!kf_stacks_recent_test(&a, 0, 128));
		CHECK(!kf_stacks_recent_test(&a, 0, 1000));
		kf_stacks_fini(&a);
	}
}

/* A one-frame stack of root 1 (its frame at addr). */
static void one_frame(struct kf_frame *root, struct kf_frame *f, uint64_t addr)
{
	memset(root, 0, sizeof(*root));
	memset(f, 0, sizeof(*f));
	root->flags = KF_FRAME_ROOT;
	root->root = 1;
	f->addr = addr;
}

/* Whether stack (root, f, n) takes another slot than (ra, fa, 1) in the
 * probe trie p: after it, (ra, fa) is found again there. */
static bool other_slot(struct kf_stacks *p, const struct kf_frame *ra,
		       const struct kf_frame *fa, const struct kf_frame *root,
		       const struct kf_frame *f, size_t n)
{
	uint64_t h0;

	CHECK(kf_stacks_path(p, ra, fa, 1) != 0);
	h0 = kf_stacks_recent_hits(p);
	CHECK(kf_stacks_path(p, root, f, n) != 0);
	CHECK(kf_stacks_path(p, ra, fa, 1) != 0);
	/* (root, f) is new each time: not found itself */
	return kf_stacks_recent_hits(p) > h0;
}

/* A recent stack whose slot outlives its frames: stack A is kept at the
 * ring's start, other slots' stacks fill the ring (256 frames) and wrap
 * onto it with the frames of stack Q, which shares A's hash (4 bits of
 * it) and length.  Q is then not taken for A: the ring wrapped past A's
 * frames.  The stacks of each part are found by probing a trie of the
 * same hash (a stack in another slot leaves A to be found again). */
static void test_recent_stale(void)
{
	struct kf_stacks p, a, b;
	struct kf_frame ra, fa, rq, fq, rx, fx[2];
	uint64_t fill[127], addr = 1000;
	size_t nf = 0, i;
	bool found = false;

	CHECK_EQ(kf_stacks_init(&p), 0);
	CHECK(kf_stacks_recent_test(&p, 0xf, 1u << 18));
	one_frame(&ra, &fa, 1);
	/* Q: one frame, the same slot as A */
	for (addr = 2; addr < 2000 && !found; addr++) {
		one_frame(&rq, &fq, addr);
		found = !other_slot(&p, &ra, &fa, &rq, &fq, 1);
	}
	CHECK(found);
	/* the fillers: one frame each, other slots */
	for (addr = 100000; nf < 127 && addr < 110000; addr++) {
		one_frame(&rx, &fx[0], addr);
		if (other_slot(&p, &ra, &fa, &rx, &fx[0], 1))
			fill[nf++] = addr;
	}
	CHECK_EQ(nf, 127u);
	/* D: Q's root and frame, then one more; another slot */
	found = false;
	for (addr = 200000; addr < 210000 && !found; addr++) {
		one_frame(&rx, &fx[0], fq.addr);
		fx[1] = fx[0];
		fx[1].addr = addr;
		found = other_slot(&p, &ra, &fa, &rx, fx, 2);
	}
	CHECK(found);
	kf_stacks_fini(&p);

	CHECK_EQ(kf_stacks_init(&a), 0);
	CHECK_EQ(kf_stacks_init(&b), 0);
	CHECK(kf_stacks_recent_test(&a, 0xf, 256));
	/* A at ring position 0, 127 * 2 frames of fillers, D from 256 */
	CHECK_EQ(kf_stacks_path(&a, &ra, &fa, 1), by_child(&b, &ra, &fa, 1));
	for (i = 0; i < nf; i++) {
		struct kf_frame r1, f1;

		one_frame(&r1, &f1, fill[i]);
		CHECK_EQ(kf_stacks_path(&a, &r1, &f1, 1), by_child(&b, &r1, &f1, 1));
	}
	CHECK_EQ(kf_stacks_path(&a, &rx, fx, 2), by_child(&b, &rx, fx, 2));
	/* A's slot names A's node, and the ring there holds Q's frames */
	CHECK_EQ(kf_stacks_path(&a, &rq, &fq, 1), by_child(&b, &rq, &fq, 1));
	CHECK_EQ(a.n, b.n);
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
	/* the root alone (no frames array) once the recent stacks are
	 * kept: kept, then found there */
	CHECK_EQ(kf_stacks_path(&s, &root, NULL, 0), r);
	CHECK_EQ(kf_stacks_path(&s, &root, NULL, 0), r);
	CHECK(kf_stacks_recent_hits(&s) >= 1);
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

/* kf_map64_add against kf_map64_put and a plain array, through growth:
 * an add of a present key leaves its value, of a new one inserts it */
static void test_map64_add(void)
{
	enum { N = 5000 };
	static uint32_t want[N];
	struct kf_map64 m, c;
	uint64_t x = 77;
	uint32_t v;
	size_t i, n = 0;

	kf_map64_init(&m);
	for (i = 0; i < N; i++) {
		uint64_t k = i * 0x9e3779b97f4a7c15ull;   /* distinct keys */

		want[i] = (uint32_t)rnd(&x);
		if (i % 3 == 0) {
			CHECK(kf_map64_put(&m, k, want[i]));
			CHECK(kf_map64_add(&m, k, want[i] + 1));   /* kept */
		} else {
			CHECK(kf_map64_add(&m, k, want[i]));
			CHECK(kf_map64_add(&m, k, 0));             /* kept */
		}
		n++;
	}
	CHECK(m.n == n);
	for (i = 0; i < N; i++) {
		CHECK(kf_map64_get(&m, i * 0x9e3779b97f4a7c15ull, &v));
		CHECK(v == want[i]);
	}
	CHECK(kf_map64_put(&m, 0, 9));   /* key 0 is the first one's */
	CHECK(kf_map64_get(&m, 0, &v) && v == 9);
	CHECK(!kf_map64_add(&m, UINT64_MAX, 1));   /* the empty marker */
	CHECK(!kf_map64_get(&m, UINT64_MAX, &v));
	CHECK(m.n == n);
	/* intern gives what is there, or adds */
	CHECK(kf_map64_intern(&m, 3 * 0x9e3779b97f4a7c15ull, 1, &v) && v == want[3]);
	CHECK(kf_map64_intern(&m, 2, 42, &v) && v == 42 && m.n == ++n);
	CHECK(kf_map64_intern(&m, 2, 43, &v) && v == 42 && m.n == n);
	CHECK(!kf_map64_intern(&m, UINT64_MAX, 1, &v));
	CHECK(kf_map64_put(&m, 2, 0) && kf_map64_get(&m, 2, &v) && v == 0);
	/* a copy holds the same, and is its own */
	CHECK(kf_map64_copy(&c, &m));
	CHECK(c.n == m.n && c.n == n);
	for (i = 0; i < N; i++) {
		CHECK(kf_map64_get(&c, i * 0x9e3779b97f4a7c15ull, &v));
		CHECK(v == (i ? want[i] : 9));
	}
	CHECK(kf_map64_put(&c, 1, 5) && !kf_map64_get(&m, 1, &v));
	kf_map64_fini(&c);
	kf_map64_fini(&m);
}

int main(void)
{
	RUN(test_path_equals_child);
	RUN(test_recent);
	RUN(test_recent_stale);
	RUN(test_short_paths);
	RUN(test_copy_move_prune);
	RUN(test_map64_add);
	return CHECK_DONE();
}
