/* symtab.c - perf-compatible symbol tables. */
#include "symtab.h"

#include <stdlib.h>
#include <string.h>

void kf_symtab_init(struct kf_symtab *t)
{
	memset(t, 0, sizeof(*t));
}

void kf_symtab_fini(struct kf_symtab *t)
{
	free(t->v);
	free(t->names);
	free(t->tree);
	free(t->ops);
	memset(t, 0, sizeof(*t));
}

/* ---- the red-black tree (CLRS, with index 0 as the nil node) ----------- */

#define RB(i) (t->tree[i])

static void rb_rotate_left(struct kf_symtab *t, uint32_t x)
{
	uint32_t y = RB(x).right;

	RB(x).right = RB(y).left;
	if (RB(y).left)
		RB(RB(y).left).parent = x;
	RB(y).parent = RB(x).parent;
	if (!RB(x).parent)
		t->root = y;
	else if (x == RB(RB(x).parent).left)
		RB(RB(x).parent).left = y;
	else
		RB(RB(x).parent).right = y;
	RB(y).left = x;
	RB(x).parent = y;
}

static void rb_rotate_right(struct kf_symtab *t, uint32_t x)
{
	uint32_t y = RB(x).left;

	RB(x).left = RB(y).right;
	if (RB(y).right)
		RB(RB(y).right).parent = x;
	RB(y).parent = RB(x).parent;
	if (!RB(x).parent)
		t->root = y;
	else if (x == RB(RB(x).parent).right)
		RB(RB(x).parent).right = y;
	else
		RB(RB(x).parent).left = y;
	RB(y).right = x;
	RB(x).parent = y;
}

/* __symbols__insert: left if start < node's, else right (ties go right) */
static void rb_insert(struct kf_symtab *t, uint32_t z)
{
	uint32_t y = 0, x = t->root;

	while (x) {
		y = x;
		x = RB(z).sym.start < RB(x).sym.start ? RB(x).left : RB(x).right;
	}
	RB(z).parent = y;
	RB(z).left = RB(z).right = 0;
	RB(z).red = true;
	if (!y)
		t->root = z;
	else if (RB(z).sym.start < RB(y).sym.start)
		RB(y).left = z;
	else
		RB(y).right = z;
	while (RB(z).parent && RB(RB(z).parent).red) {
		uint32_t p = RB(z).parent, g = RB(p).parent;

		if (p == RB(g).left) {
			uint32_t u = RB(g).right;

			if (u && RB(u).red) {
				RB(p).red = false;
				RB(u).red = false;
				RB(g).red = true;
				z = g;
			} else {
				if (z == RB(p).right) {
					z = p;
					rb_rotate_left(t, z);
					p = RB(z).parent;
					g = RB(p).parent;
				}
				RB(p).red = false;
				RB(g).red = true;
				rb_rotate_right(t, g);
			}
		} else {
			uint32_t u = RB(g).left;

			if (u && RB(u).red) {
				RB(p).red = false;
				RB(u).red = false;
				RB(g).red = true;
				z = g;
			} else {
				if (z == RB(p).left) {
					z = p;
					rb_rotate_right(t, z);
					p = RB(z).parent;
					g = RB(p).parent;
				}
				RB(p).red = false;
				RB(g).red = true;
				rb_rotate_left(t, g);
			}
		}
	}
	RB(t->root).red = false;
}

/* Replaces the subtree at u by the one at v (v may be nil; its parent is
 * returned through *vp since nil has no storage of its own). */
static void rb_transplant(struct kf_symtab *t, uint32_t u, uint32_t v)
{
	if (!RB(u).parent)
		t->root = v;
	else if (u == RB(RB(u).parent).left)
		RB(RB(u).parent).left = v;
	else
		RB(RB(u).parent).right = v;
	if (v)
		RB(v).parent = RB(u).parent;
}

static void rb_erase(struct kf_symtab *t, uint32_t z)
{
	uint32_t x, xp, y = z;
	bool y_red = RB(y).red;

	if (!RB(z).left) {
		x = RB(z).right;
		xp = RB(z).parent;
		rb_transplant(t, z, x);
	} else if (!RB(z).right) {
		x = RB(z).left;
		xp = RB(z).parent;
		rb_transplant(t, z, x);
	} else {
		/* the successor takes z's place */
		y = RB(z).right;
		while (RB(y).left)
			y = RB(y).left;
		y_red = RB(y).red;
		x = RB(y).right;
		if (RB(y).parent == z) {
			xp = y;
		} else {
			xp = RB(y).parent;
			rb_transplant(t, y, x);
			RB(y).right = RB(z).right;
			RB(RB(y).right).parent = y;
		}
		rb_transplant(t, z, y);
		RB(y).left = RB(z).left;
		RB(RB(y).left).parent = y;
		RB(y).red = RB(z).red;
	}
	if (y_red)
		return;
	while (x != t->root && !(x && RB(x).red)) {
		if (x == RB(xp).left) {
			uint32_t w = RB(xp).right;

			if (RB(w).red) {
				RB(w).red = false;
				RB(xp).red = true;
				rb_rotate_left(t, xp);
				w = RB(xp).right;
			}
			if (!(RB(w).left && RB(RB(w).left).red) &&
			    !(RB(w).right && RB(RB(w).right).red)) {
				RB(w).red = true;
				x = xp;
				xp = RB(x).parent;
			} else {
				if (!(RB(w).right && RB(RB(w).right).red)) {
					RB(RB(w).left).red = false;
					RB(w).red = true;
					rb_rotate_right(t, w);
					w = RB(xp).right;
				}
				RB(w).red = RB(xp).red;
				RB(xp).red = false;
				if (RB(w).right)
					RB(RB(w).right).red = false;
				rb_rotate_left(t, xp);
				x = t->root;
			}
		} else {
			uint32_t w = RB(xp).left;

			if (RB(w).red) {
				RB(w).red = false;
				RB(xp).red = true;
				rb_rotate_right(t, xp);
				w = RB(xp).left;
			}
			if (!(RB(w).right && RB(RB(w).right).red) &&
			    !(RB(w).left && RB(RB(w).left).red)) {
				RB(w).red = true;
				x = xp;
				xp = RB(x).parent;
			} else {
				if (!(RB(w).left && RB(RB(w).left).red)) {
					RB(RB(w).right).red = false;
					RB(w).red = true;
					rb_rotate_left(t, w);
					w = RB(xp).left;
				}
				RB(w).red = RB(xp).red;
				RB(xp).red = false;
				if (RB(w).left)
					RB(RB(w).left).red = false;
				rb_rotate_right(t, xp);
				x = t->root;
			}
		}
	}
	if (x)
		RB(x).red = false;
}

const struct kf_sym *kf_symtab_find_perf(const struct kf_symtab *t,
					 uint64_t addr)
{
	uint32_t n = t->root;

	while (n) {
		const struct kf_sym *s = &t->tree[n].sym;

		if (addr < s->start)
			n = t->tree[n].left;
		else if (addr > s->end || (addr == s->end && addr != s->start))
			n = t->tree[n].right;
		else
			return s;
	}
	return NULL;
}

/* An insert or erase of the tree: done now once the tree is built,
 * else logged for kf_symtab_perf_tree. */
static void tree_op(struct kf_symtab *t, uint32_t op)
{
	if (t->no_tree)
		return;
	if (t->tree_ready) {
		if (op & KF_SYMTAB_ERASE)
			rb_erase(t, op & ~KF_SYMTAB_ERASE);
		else
			rb_insert(t, op);
		return;
	}
	if (!KF_GROW(t->ops, t->cap_ops, t->n_ops + 1)) {
		t->oom = true;
		return;
	}
	t->ops[t->n_ops++] = op;
}

void kf_symtab_perf_tree(struct kf_symtab *t)
{
	size_t i;

	if (t->tree_ready)
		return;
	t->tree_ready = true;
	t->root = 0;
	for (i = 0; i < t->n_ops; i++)
		tree_op(t, t->ops[i]);
	free(t->ops);
	t->ops = NULL;
	t->n_ops = t->cap_ops = 0;
}

/* Room for one more node (and the nil node); false (oom set) if none. */
static bool tree_room(struct kf_symtab *t)
{
	if (t->n_tree >= KF_SYMTAB_ERASE - 1 ||
	    !KF_GROW(t->tree, t->cap_tree, (t->n_tree ? t->n_tree : 1) + !t->no_tree)) {
		t->oom = true;
		return false;
	}
	if (!t->n_tree) {
		memset(&t->tree[0], 0, sizeof(t->tree[0]));   /* nil */
		t->n_tree = 1;
	}
	return true;
}

/* Gives v[i] the next node and logs its insert. */
static void tree_add(struct kf_symtab *t, size_t i)
{
	struct kf_sym *s = &t->v[i];

	s->node = (uint32_t)t->n_tree++;
	memset(&t->tree[s->node], 0, sizeof(t->tree[s->node]));
	t->tree[s->node].sym = *s;
	tree_op(t, s->node);
}

/* Appends a symbol whose name is at offset `name` of the names. */
static void add_at(struct kf_symtab *t, uint64_t start, uint64_t size,
		   uint8_t binding, uint32_t name)
{
	struct kf_sym *s;

	if (t->oom)
		return;
	if ((t->n == t->cap && !KF_GROW(t->v, t->cap, t->n + 1)) ||
	    ((!t->no_tree || !t->n_tree) && !tree_room(t))) {
		t->oom = true;
		return;
	}
	s = &t->v[t->n++];
	/* symbol__new: a size that wraps is kept as perf keeps it */
	*s = (struct kf_sym){ .start = start, .end = size ? start + size : start,
			      .name = name, .binding = binding };
	if (!t->no_tree)   /* else node 0: the nil node, which its updates do not harm */
		tree_add(t, t->n - 1);
}

void kf_symtab_add(struct kf_symtab *t, uint64_t start, uint64_t size,
		   uint8_t binding, const char *name, size_t name_len)
{
	size_t need, at = t->names_len;

	if (t->oom)
		return;
	if (!kf_add_ok(t->names_len, name_len + 1, &need) || need > UINT32_MAX ||
	    !KF_GROW(t->names, t->names_cap, need)) {
		t->oom = true;
		return;
	}
	memcpy(t->names + at, name, name_len);
	t->names[at + name_len] = '\0';
	t->names_len = need;
	add_at(t, start, size, binding, (uint32_t)at);
}

void kf_symtab_move(struct kf_symtab *dst, struct kf_symtab *src)
{
	kf_symtab_fini(dst);
	*dst = *src;
	kf_symtab_init(src);
}

void kf_symtab_tree_from_list(struct kf_symtab *t)
{
	size_t i;

	if (t->oom || t->n_tree > 1 || t->n_ops)
		return;
	t->no_tree = false;
	if (!KF_GROW(t->ops, t->cap_ops, t->n)) {
		t->oom = true;
		return;
	}
	for (i = 0; i < t->n && tree_room(t); i++)
		tree_add(t, i);
}

void kf_symtab_reserve(struct kf_symtab *t, size_t n, size_t names_len)
{
	if (t->oom || n > UINT32_MAX || names_len > UINT32_MAX)
		return;
	(void)(KF_GROW(t->v, t->cap, t->n + n) &&
	       KF_GROW(t->names, t->names_cap, t->names_len + names_len) &&
	       (t->no_tree || (KF_GROW(t->tree, t->cap_tree, (t->n_tree ? t->n_tree : 1) + n) &&
			       KF_GROW(t->ops, t->cap_ops, t->n_ops + n))));
}

void kf_symtab_set_kmodule(struct kf_symtab *t, size_t i, bool kmodule)
{
	t->v[i].kmodule = kmodule;
	t->tree[t->v[i].node].sym.kmodule = kmodule;
}

void kf_symtab_set_mangled(struct kf_symtab *t, size_t i, const char *name, size_t len)
{
	size_t need;

	if (t->oom || i >= t->n)
		return;
	if (!kf_add_ok(t->names_len, len + 1, &need) || need > UINT32_MAX ||
	    !KF_GROW(t->names, t->names_cap, need)) {
		t->oom = true;
		return;
	}
	memcpy(t->names + t->names_len, name, len);
	t->names[t->names_len + len] = '\0';
	t->v[i].mangled = (uint32_t)t->names_len + 1;
	t->tree[t->v[i].node].sym.mangled = t->v[i].mangled;
	t->names_len = need;
}

/* Stable merge sort by start: qsort is not stable, and perf's rbtree puts
 * a new symbol after existing ones with the same start. */
static void msort(struct kf_sym *v, struct kf_sym *tmp, size_t n)
{
	size_t mid, i, j, k;

	if (n < 2)
		return;
	if (n < 16) {
		for (i = 1; i < n; i++) {
			struct kf_sym x = v[i];

			for (j = i; j > 0 && v[j - 1].start > x.start; j--)
				v[j] = v[j - 1];
			v[j] = x;
		}
		return;
	}
	mid = n / 2;
	msort(v, tmp, mid);
	msort(v + mid, tmp, n - mid);
	if (v[mid - 1].start <= v[mid].start)
		return;
	memcpy(tmp, v, n * sizeof(*v));
	for (i = 0, j = mid, k = 0; i < mid && j < n;)
		v[k++] = tmp[j].start < tmp[i].start ? tmp[j++] : tmp[i++];
	while (i < mid)
		v[k++] = tmp[i++];
	while (j < n)
		v[k++] = tmp[j++];
}

void kf_symtab_sort(struct kf_symtab *t)
{
	struct kf_sym *tmp;

	if (t->n < 2)
		return;
	tmp = kf_reallocarray(NULL, t->n, sizeof(*tmp));
	if (!tmp) {
		t->oom = true;
		return;
	}
	msort(t->v, tmp, t->n);
	free(tmp);
}

static int leading_underscores(const char *s)
{
	int n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/* choose_best_symbol (util/symbol.c): true if a is preferred over b. */
static bool prefer_a(const struct kf_symtab *t, const struct kf_sym *a,
		     const struct kf_sym *b)
{
	uint64_t la = a->end - a->start, lb = b->end - b->start;
	bool wa, wb, ga, gb;
	int ua, ub;
	size_t na, nb;

	if (lb == 0 && la > 0)
		return true;
	if (la == 0 && lb > 0)
		return false;
	wa = a->binding == KF_BIND_WEAK;
	wb = b->binding == KF_BIND_WEAK;
	if (wb && !wa)
		return true;
	if (wa && !wb)
		return false;
	ga = a->binding == KF_BIND_GLOBAL;
	gb = b->binding == KF_BIND_GLOBAL;
	if (ga && !gb)
		return true;
	if (gb && !ga)
		return false;
	ua = leading_underscores(t->names + a->name);
	ub = leading_underscores(t->names + b->name);
	if (ub > ua)
		return true;
	if (ua > ub)
		return false;
	na = strlen(t->names + a->name);
	nb = strlen(t->names + b->name);
	if (na > nb)
		return true;
	if (na < nb)
		return false;
	/* arch__choose_best_symbol (the generic one, used on x86): the
	 * earlier symbol, unless it is a "SyS"/"compat_SyS" syscall alias */
	{
		const char *an = t->names + a->name;

		if (strncmp(an, "SyS", 3) == 0 || strncmp(an, "compat_SyS", 10) == 0)
			return false;
	}
	return true;
}

static uint64_t roundup4k(uint64_t v)
{
	return (v + 4095) & ~(uint64_t)4095;
}

void kf_symtab_fixup(struct kf_symtab *t, bool kallsyms)
{
	size_t i, out;

	kf_symtab_sort(t);
	if (!t->n)
		return;
	/* symbols__fixup_end */
	for (i = 1; i < t->n; i++) {
		struct kf_sym *prev = &t->v[i - 1], *curr = &t->v[i];

		if (prev->end != prev->start)
			continue;
		/* kallsyms: do not stretch the last kernel symbol over the
		 * gap up to the modules (or the reverse) */
		if (kallsyms && prev->kmodule != curr->kmodule)
			prev->end = roundup4k(prev->end + 4096);
		else
			prev->end = curr->start;
		t->tree[prev->node].sym.end = prev->end;
	}
	if (t->v[t->n - 1].end == t->v[t->n - 1].start) {
		t->v[t->n - 1].end = roundup4k(t->v[t->n - 1].start) + 4096;
		t->tree[t->v[t->n - 1].node].sym.end = t->v[t->n - 1].end;
	}

	/* symbols__fixup_duplicate: a tournament over each run of equal
	 * starts, in tree order */
	out = 0;
	for (i = 0; i < t->n; i++) {
		if (out && t->v[out - 1].start == t->v[i].start) {
			if (!prefer_a(t, &t->v[out - 1], &t->v[i])) {
				tree_op(t, t->v[out - 1].node | KF_SYMTAB_ERASE);
				t->v[out - 1] = t->v[i];
			} else {
				tree_op(t, t->v[i].node | KF_SYMTAB_ERASE);
			}
			continue;
		}
		t->v[out++] = t->v[i];
	}
	t->n = out;
}

const struct kf_sym *kf_symtab_find(const struct kf_symtab *t, uint64_t addr)
{
	size_t lo = 0, hi = t->n, k;

	/* the last symbol with start <= addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* it, or (when symbols overlap) a few before it may cover addr */
	for (k = 0; lo > 0 && k < 8; k++, lo--) {
		const struct kf_sym *s = &t->v[lo - 1];

		if (addr < s->end || (addr == s->start && s->end == s->start))
			return s;
	}
	return NULL;
}
