/* test-frameids.c - the frames of a trie's nodes, numbered (frameids.h):
 * random stacks over few distinct frames, numbered inline (jobs 1) and
 * on a thread (jobs 2) while this thread reads the numbers as they come
 * and overwrites them, as the namer does.  Both against a numbering made
 * here by a linear search: numbers by first appearance in id order, one
 * per distinct (addr, module, flags), the roots' entries untouched, the
 * same work counted either way.  Also: a trie with roots only. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "frameids.h"
#include "kfold.h"
#include "stacks.h"

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void build(struct kf_stacks *st)
{
	static struct kf_frame frames[40];
	struct kf_frame root;
	uint64_t x = 0xf1d5;
	int round;
	size_t i;

	CHECK_EQ(kf_stacks_init(st), 0);
	for (round = 0; round < 20000; round++) {
		size_t n = (size_t)(rnd(&x) % 40);

		memset(&root, 0, sizeof(root));
		root.flags = KF_FRAME_ROOT;
		root.root = (uint32_t)(rnd(&x) % 5) + 1;
		for (i = 0; i < n; i++) {
			memset(&frames[i], 0, sizeof(frames[i]));
			frames[i].addr = rnd(&x) % 300;
			frames[i].module = (uint32_t)(rnd(&x) % 4);
			frames[i].flags = (uint32_t)(rnd(&x) % 2) * KF_FRAME_RA;
		}
		CHECK(kf_stacks_path(st, &root, frames, n) != 0);
	}
}

/* The numbers by a linear search over the frames met so far. */
static uint32_t *expected(const struct kf_stacks *st, size_t *distinct)
{
	uint32_t *want = calloc(st->n, sizeof(*want));
	struct kf_frame *seen = calloc(st->n, sizeof(*seen));
	size_t n = 0, i, j;

	for (i = 1; want && seen && i < st->n; i++) {
		const struct kf_frame *f = &st->nodes[i].frame;

		if (!st->nodes[i].parent)
			continue;
		for (j = 0; j < n; j++)
			if (seen[j].addr == f->addr && seen[j].module == f->module &&
			    seen[j].flags == f->flags)
				break;
		if (j == n)
			seen[n++] = *f;
		want[i] = (uint32_t)j;
	}
	free(seen);
	*distinct = n;
	return want;
}

static void test_numbers(void)
{
	struct kf_stacks st;
	size_t distinct, i;
	uint32_t *want, *got;
	uint64_t work_of[2];
	unsigned jobs;

	build(&st);
	want = expected(&st, &distinct);
	CHECK(want != NULL);
	CHECK(st.n > 50000);
	CHECK(distinct > 2000 && distinct < 2500);   /* 300 x 4 x 2 at most */
	got = calloc(st.n, sizeof(*got));
	CHECK(got != NULL);
	if (!want || !got)
		return;
	for (jobs = 1; jobs <= 2; jobs++) {
		struct kf_frameids f;
		struct kf_work_total work = { 0 };
		uint64_t w0 = kf_work;
		size_t numbers = 0;

		for (i = 0; i < st.n; i++)
			got[i] = 0xdeadbeef;
		CHECK_EQ(kf_frameids_start(&f, &st, jobs, &work, got), 0);
		CHECK_EQ(f.threaded, jobs > 1);
		for (i = 1; i < st.n; i++) {
			uint32_t id = 0;

			if (!st.nodes[i].parent) {
				CHECK_EQ(got[i], 0xdeadbeef);
				continue;
			}
			CHECK(kf_frameids_get(&f, i, &id));
			CHECK_EQ(id, want[i]);
			if (id >= numbers)
				numbers = (size_t)id + 1;
			got[i] = 7;     /* the caller's again */
		}
		CHECK_EQ(numbers, distinct);
		kf_frameids_finish(&f);
		work_of[jobs - 1] = (kf_work - w0) + work.n;
		for (i = 1; i < st.n; i++)
			CHECK_EQ(got[i], st.nodes[i].parent ? 7u : 0xdeadbeef);
	}
	CHECK(work_of[0] > 0);
	CHECK_EQ(work_of[0], work_of[1]);
	/* an array of its own */
	{
		struct kf_frameids f;
		uint32_t id = 0;

		CHECK_EQ(kf_frameids_start(&f, &st, 2, NULL, NULL), 0);
		CHECK(kf_frameids_get(&f, st.n - 1, &id));
		CHECK_EQ(id, want[st.n - 1]);
		kf_frameids_finish(&f);
	}
	free(want);
	free(got);
	kf_stacks_fini(&st);
}

static void test_roots_only(void)
{
	struct kf_stacks st;
	struct kf_frameids f;
	struct kf_frame root = { 0 };
	unsigned jobs;

	CHECK_EQ(kf_stacks_init(&st), 0);
	root.flags = KF_FRAME_ROOT;
	root.root = 1;
	CHECK(kf_stacks_path(&st, &root, NULL, 0) != 0);
	for (jobs = 1; jobs <= 2; jobs++) {
		CHECK_EQ(kf_frameids_start(&f, &st, jobs, NULL, NULL), 0);
		if (jobs == 1)
			CHECK_EQ(f.n, 0);   /* numbered before start returned */
		kf_frameids_finish(&f);
	}
	kf_stacks_fini(&st);
}

int main(void)
{
	RUN(test_numbers);
	RUN(test_roots_only);
	return CHECK_DONE();
}
