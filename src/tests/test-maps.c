/* test-maps.c - a task's address space (maps.h): inserts that split
 * mappings, and the persistent treap against a page model through
 * random inserts, copies (FORK), removals and clears, looked up directly
 * and through one kf_maps_hint shared by every tree (as the callchain
 * builder shares one between the tasks it resolves). */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "maps.h"

static void test_maps(void)
{
	struct kf_maps m;
	struct kf_map a = { 0x1000, 0x4000, 0, 1, 5, 0 };
	struct kf_map b = { 0x2000, 0x3000, 0x10000, 2, 5, 0 };
	const struct kf_map *f;

	kf_maps_init(&m);
	CHECK(kf_maps_insert(&m, &a));
	CHECK(kf_maps_insert(&m, &b));
	CHECK_EQ(kf_maps_count(&m), 3);
	f = kf_maps_find(&m, 0x1fff);
	CHECK(f && f->module == 1 && f->end == 0x2000);
	f = kf_maps_find(&m, 0x2000);
	CHECK(f && f->module == 2);
	/* the part after keeps mapping the same file bytes */
	f = kf_maps_find(&m, 0x3000);
	CHECK(f && f->module == 1 && f->pgoff == 0x2000);
	CHECK(kf_maps_find(&m, 0x4000) == NULL);
	CHECK(kf_maps_find(&m, 0xfff) == NULL);
	kf_maps_fini(&m);
}

/* The persistent treap against a model that keeps, per page, which
 * module maps it and at which file offset: random inserts, copies (a
 * FORK) after which the two must not see each other's changes, removals
 * and clears. */
#define MODEL_PAGES 96
struct model {
	uint32_t module[MODEL_PAGES];
	uint64_t off[MODEL_PAGES];
};

static uint64_t model_rng = 0x243f6a8885a308d3ull;

static uint64_t model_rand(uint64_t n)
{
	model_rng ^= model_rng << 13;
	model_rng ^= model_rng >> 7;
	model_rng ^= model_rng << 17;
	return model_rng % n;
}

static struct kf_maps_hint model_hint;
static unsigned long model_hint_hits;

static void model_check(const struct kf_maps *m, const struct model *md)
{
	size_t pg, runs = 0;

	for (pg = 0; pg < MODEL_PAGES; pg++) {
		const struct kf_map *f = kf_maps_find(m, pg * 0x1000 + 0x10);
		/* the page's last byte through the hint: mostly the mapping
		 * the page's first lookup below left in it, else a stale
		 * one (another tree's, or this tree's before a change) */
		const struct kf_map *h = kf_maps_find_hint(m, pg * 0x1000 + 0xfff, &model_hint);

		if (h == &model_hint.m)
			model_hint_hits++;
		CHECK((h == NULL) == (f == NULL));
		if (h && f) {
			CHECK_EQ(h->start, f->start);
			CHECK_EQ(h->end, f->end);
			CHECK_EQ(h->pgoff, f->pgoff);
			CHECK_EQ(h->module, f->module);
		}
		h = kf_maps_find_hint(m, pg * 0x1000 + 0x10, &model_hint);
		CHECK((h == NULL) == (f == NULL));
		if (h && f)
			CHECK(h->start == f->start && h->end == f->end && h->module == f->module);
		if (!md->module[pg]) {
			CHECK(f == NULL);
			continue;
		}
		CHECK(f != NULL);
		if (!f)
			continue;
		CHECK_EQ(f->module, md->module[pg]);
		CHECK_EQ(f->pgoff + (pg * 0x1000 - f->start), md->off[pg]);
		if (pg == 0 || f->start == pg * 0x1000)
			runs++;
	}
	CHECK(kf_maps_count(m) >= runs);
}

static void test_maps_model(void)
{
	struct kf_maps m[4];
	struct model md[4];
	unsigned op, k;

	memset(md, 0, sizeof(md));
	for (k = 0; k < 4; k++)
		kf_maps_init(&m[k]);
	for (op = 0; op < 4000; op++) {
		unsigned w = (unsigned)model_rand(4), r = (unsigned)model_rand(20);
		/* the hint left on tree w just before w changes */
		uint64_t probe = model_rand(MODEL_PAGES) * 0x1000 + model_rand(0x1000);
		const struct kf_map *f, *h;

		(void)kf_maps_find_hint(&m[w], probe, &model_hint);

		if (r < 14) {
			uint64_t s = model_rand(MODEL_PAGES), e = s + 1 + model_rand(12);
			struct kf_map nm = { 0 };
			uint64_t pg;

			if (e > MODEL_PAGES)
				e = MODEL_PAGES;
			nm.start = s * 0x1000;
			nm.end = e * 0x1000;
			nm.pgoff = model_rand(1000) * 0x1000;
			nm.module = 1 + op;
			CHECK(kf_maps_insert(&m[w], &nm));
			for (pg = s; pg < e; pg++) {
				md[w].module[pg] = nm.module;
				md[w].off[pg] = nm.pgoff + (pg - s) * 0x1000;
			}
		} else if (r < 18) {
			unsigned from = (unsigned)model_rand(4);

			CHECK(kf_maps_copy(&m[w], &m[from]));
			md[w] = md[from];
		} else if (r < 19) {
			uint64_t pg = model_rand(MODEL_PAGES);
			const struct kf_map *at = kf_maps_find(&m[w], pg * 0x1000);

			if (at && at->start == pg * 0x1000) {
				uint64_t start = at->start, end = at->end, p;

				CHECK(kf_maps_remove_at(&m[w], start));
				for (p = start / 0x1000; p < end / 0x1000; p++)
					md[w].module[p] = 0;
			}
		} else {
			kf_maps_clear(&m[w]);
			memset(&md[w], 0, sizeof(md[w]));
		}
		/* that hint answers for the tree as it is now */
		f = kf_maps_find(&m[w], probe);
		h = kf_maps_find_hint(&m[w], probe, &model_hint);
		CHECK((h == NULL) == (f == NULL));
		if (h && f)
			CHECK(h->start == f->start && h->end == f->end && h->pgoff == f->pgoff &&
			      h->module == f->module);
		for (k = 0; k < 4; k++)
			model_check(&m[k], &md[k]);
	}
	for (k = 0; k < 4; k++)
		kf_maps_fini(&m[k]);
	/* a tree made where a changed one was (its generation is new) */
	kf_maps_init(&m[0]);
	{
		struct kf_map a = { 0x1000, 0x9000, 0, 7, 5, 0 }, b = { 0x1000, 0x9000, 0, 8, 5, 0 };
		const struct kf_map *f;

		CHECK(kf_maps_insert(&m[0], &a));
		f = kf_maps_find_hint(&m[0], 0x2000, &model_hint);
		CHECK(f && f->module == 7);
		kf_maps_fini(&m[0]);
		kf_maps_init(&m[0]);
		CHECK(kf_maps_insert(&m[0], &b));
		f = kf_maps_find_hint(&m[0], 0x2000, &model_hint);
		CHECK(f && f->module == 8);
		kf_maps_fini(&m[0]);
	}
	/* both paths were taken */
	CHECK(model_hint_hits > 0);
	CHECK(model_hint_hits < 4000ul * 4 * MODEL_PAGES);
}

int main(void)
{
	RUN(test_maps);
	RUN(test_maps_model);
	return CHECK_DONE();
}
