/* test-symtab.c - symbol tables (symtab.h): which alias perf keeps,
 * zero-size symbols, kallsyms sizes, and the red-black tree perf's
 * lookup walks (its invariants and its answers against a plain search). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "symtab.h"

static void test_symtab(void)
{
	struct kf_symtab t;
	const struct kf_sym *s;

	kf_symtab_init(&t);
	/* aliases at one address: perf keeps __GI___libc_write (non-weak,
	 * then most leading underscores equal, then the longest name) */
	kf_symtab_add(&t, 0x100, 0x20, KF_BIND_LOCAL, "__GI___write", 12);
	kf_symtab_add(&t, 0x100, 0x20, KF_BIND_LOCAL, "__GI___libc_write", 17);
	kf_symtab_add(&t, 0x100, 0x20, KF_BIND_WEAK, "write", 5);
	kf_symtab_add(&t, 0x100, 0x20, KF_BIND_LOCAL, "__libc_write", 12);
	/* a zero-size symbol gets the next one's start as its end */
	kf_symtab_add(&t, 0x200, 0, KF_BIND_GLOBAL, "asm_func", 8);
	kf_symtab_add(&t, 0x240, 0x10, KF_BIND_GLOBAL, "after", 5);
	kf_symtab_fixup(&t, false);
	s = kf_symtab_find(&t, 0x110);
	CHECK(s != NULL);
	CHECK_STR(s ? kf_sym_name(&t, s) : NULL, "__GI___libc_write");
	s = kf_symtab_find(&t, 0x23f);
	CHECK_STR(s ? kf_sym_name(&t, s) : NULL, "asm_func");
	CHECK(kf_symtab_find(&t, 0x120) == NULL);   /* end is exclusive */
	kf_symtab_fini(&t);

	/* kallsyms: only the last alias listed gets a size, and wins */
	kf_symtab_init(&t);
	kf_symtab_add(&t, 0x1000, 0, KF_BIND_GLOBAL, "_stext", 6);
	kf_symtab_add(&t, 0x1000, 0, KF_BIND_GLOBAL, "_text", 5);
	kf_symtab_add(&t, 0x1000, 0, KF_BIND_LOCAL, "__pi__text", 10);
	kf_symtab_add(&t, 0x1100, 0, KF_BIND_GLOBAL, "next", 4);
	kf_symtab_fixup(&t, true);
	s = kf_symtab_find(&t, 0x1010);
	CHECK_STR(s ? kf_sym_name(&t, s) : NULL, "__pi__text");
	kf_symtab_fini(&t);
}

/* Checks the red-black invariants and returns the black height. */
static int rb_check(const struct kf_symtab *t, uint32_t n, uint64_t lo,
		    uint64_t hi)
{
	int hl, hr;

	if (!n)
		return 1;
	CHECK(t->tree[n].sym.start >= lo && t->tree[n].sym.start <= hi);
	if (t->tree[n].red) {
		CHECK(!t->tree[t->tree[n].left].red || !t->tree[n].left);
		CHECK(!t->tree[t->tree[n].right].red || !t->tree[n].right);
	}
	if (t->tree[n].left)
		CHECK_EQ(t->tree[t->tree[n].left].parent, n);
	if (t->tree[n].right)
		CHECK_EQ(t->tree[t->tree[n].right].parent, n);
	hl = rb_check(t, t->tree[n].left, lo, t->tree[n].sym.start);
	hr = rb_check(t, t->tree[n].right, t->tree[n].sym.start, hi);
	CHECK_EQ(hl, hr);
	return hl + !t->tree[n].red;
}

static void test_symtab_tree(void)
{
	struct kf_symtab t;
	const struct kf_sym *s;
	uint64_t x = 12345;
	int round;

	/* overlapping symbols: perf answers with the first node on its search
	 * path, so the insertion order decides; kfold's own lookup takes the
	 * innermost */
	kf_symtab_init(&t);
	kf_symtab_add(&t, 0x10, 0xf0, KF_BIND_GLOBAL, "outer", 5);
	kf_symtab_add(&t, 0x20, 0x10, KF_BIND_GLOBAL, "inner", 5);
	/* no tree until it is asked for */
	CHECK(kf_symtab_find_perf(&t, 0x25) == NULL);
	kf_symtab_perf_tree(&t);
	s = kf_symtab_find_perf(&t, 0x25);
	CHECK_STR(s ? kf_sym_name(&t, s) : NULL, "outer");   /* root */
	kf_symtab_sort(&t);
	s = kf_symtab_find(&t, 0x25);
	CHECK_STR(s ? kf_sym_name(&t, s) : NULL, "inner");
	kf_symtab_fini(&t);
	kf_symtab_init(&t);
	kf_symtab_add(&t, 0x20, 0x10, KF_BIND_GLOBAL, "inner", 5);
	kf_symtab_add(&t, 0x10, 0xf0, KF_BIND_GLOBAL, "outer", 5);
	kf_symtab_perf_tree(&t);
	s = kf_symtab_find_perf(&t, 0x25);
	CHECK_STR(s ? kf_sym_name(&t, s) : NULL, "inner");   /* root now */
	kf_symtab_fini(&t);

	/* random tables with duplicates: the tree stays a red-black tree
	 * through perf's inserts and erases, and without overlaps its
	 * answers equal a plain search; odd rounds build the tree before
	 * the adds (every insert and erase done at once), even ones after
	 * the fixup (all of them replayed) */
	for (round = 0; round < 50; round++) {
		int i, n = 10 + round * 7;
		uint64_t a;

		kf_symtab_init(&t);
		if (round % 2)
			kf_symtab_perf_tree(&t);
		for (i = 0; i < n; i++) {
			char name[16];

			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			snprintf(name, sizeof(name), "s%d", i);
			kf_symtab_add(&t, (x % 64) * 16, 0, (uint8_t)(x % 3), name,
				      strlen(name));
		}
		kf_symtab_fixup(&t, false);
		kf_symtab_perf_tree(&t);
		CHECK(t.root != 0);
		rb_check(&t, t.root, 0, UINT64_MAX);
		CHECK(!t.tree[t.root].red);
		for (a = 0; a < 64 * 16 + 8192; a += 5) {
			const struct kf_sym *p = kf_symtab_find_perf(&t, a);
			const struct kf_sym *q = kf_symtab_find(&t, a);

			CHECK((p == NULL) == (q == NULL));
			if (p && q)
				CHECK_EQ(p->start, q->start);
		}
		kf_symtab_fini(&t);
	}
}

/* A table built without a tree, moved, and given its tree afterwards
 * (kallsyms' way) answers as one built with its tree: the same symbols,
 * names and perf tree, over overlapping sizes. */
static void test_symtab_tree_later(void)
{
	static const char *const names[] = { "alpha", "beta", "gamma", "delta", "eps",
					      "zeta", "eta" };
	static const uint64_t starts[] = { 0x40, 0x10, 0x10, 0x80, 0x30, 0x10, 0x90 };
	static const uint64_t sizes[] = { 0x60, 0, 0x20, 0, 0x8, 0x40, 0 };
	struct kf_symtab a, b, moved;
	size_t i;
	uint64_t x;

	kf_symtab_init(&a);
	kf_symtab_init(&b);
	kf_symtab_init(&moved);
	moved.no_tree = true;
	for (i = 0; i < sizeof(starts) / sizeof(starts[0]); i++) {
		kf_symtab_add(&b, starts[i], sizes[i], KF_BIND_GLOBAL, names[i],
			      strlen(names[i]));
		kf_symtab_add(&moved, starts[i], sizes[i], KF_BIND_GLOBAL, names[i],
			      strlen(names[i]));
	}
	CHECK_EQ(moved.n_ops, 0);
	kf_symtab_move(&a, &moved);
	CHECK_EQ(moved.n, 0);
	CHECK(moved.names == NULL);
	kf_symtab_tree_from_list(&a);
	kf_symtab_sort(&a);
	kf_symtab_sort(&b);
	kf_symtab_perf_tree(&a);
	kf_symtab_perf_tree(&b);
	CHECK_EQ(a.n, b.n);
	for (i = 0; i < a.n && i < b.n; i++) {
		CHECK_EQ(a.v[i].start, b.v[i].start);
		CHECK_EQ(a.v[i].end, b.v[i].end);
		CHECK_STR(kf_sym_name(&a, &a.v[i]), kf_sym_name(&b, &b.v[i]));
	}
	for (x = 0; x < 0xa0; x++) {
		const struct kf_sym *p = kf_symtab_find_perf(&a, x), *q = kf_symtab_find_perf(&b, x);
		const struct kf_sym *r = kf_symtab_find(&a, x), *u = kf_symtab_find(&b, x);

		CHECK_STR(p ? kf_sym_name(&a, p) : "-", q ? kf_sym_name(&b, q) : "-");
		CHECK_STR(r ? kf_sym_name(&a, r) : "-", u ? kf_sym_name(&b, u) : "-");
	}
	kf_symtab_fini(&a);
	kf_symtab_fini(&b);
	kf_symtab_fini(&moved);
}

int main(void)
{
	RUN(test_symtab);
	RUN(test_symtab_tree);
	RUN(test_symtab_tree_later);
	return CHECK_DONE();
}
