/* folded.c - folded text: structured frames -> stackcollapse text, and
 * sorted folded output without building every line.
 *
 * The text of a frame is made from the namer's structured frames by
 * stackcollapse-perf.pl's rules (its per-name tidying, and in
 * --compat=perf its regexes over the line perf script would print),
 * once per distinct raw frame (kf_fold_texts).
 *
 * Perl's `sort { $a cmp $b }` orders whole stack strings.  Walking the
 * trie gives the same order if, at each level, the children are ordered
 * by their text followed by a terminator: the end of the string for the
 * line that ends at that frame, ';' for the lines that go deeper.  That
 * holds as long as no frame text contains ';' itself; inline chains and
 * perf-compatible names split at "->" do, so such frames are first split
 * into a trie of single pieces (emit_pieces).  Only a root (a comm) with
 * ';' makes the output be sorted as whole strings.
 */
#include "folded.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "chunkq.h"
#include "context.h"
#include "frameids.h"
#include "kfold.h"
#include "offcpu.h"

struct em {
	const struct kf_stacks *st;
	struct kf_fold_texts *ft;     /* frame texts */
	struct kf_strtab rtexts;  /* the roots' texts */
	uint32_t *text;          /* per node: text id (roots: id in rtexts) */
	uint32_t *first, *next;  /* child lists */
	const uint32_t *rank;    /* per text: its order (text_ranks; set by level_top) */
	FILE *out;
	struct kf_buf line;
	uint64_t lines;
	int err;
	struct lvlbufs *bufs;    /* the levels' arrays, by depth */
};

static const char *text_of(const struct em *e, uint32_t node)
{
	if (e->st->nodes[node].parent == 0)
		return kf_strtab_get(&e->rtexts, e->text[node]);
	return kf_strtab_get(&e->ft->texts, e->text[node]);
}

/* ---- one level ------------------------------------------------------------ */

struct group {
	uint32_t text_node;      /* a node whose text the group has */
	kf_u128 weight;          /* of the lines ending at this group */
	uint64_t samples;
	size_t kid0, n_kids;     /* children of the group's nodes, flattened:
				    the level's kids[kid0 .. kid0 + n_kids) */
};

struct item {
	const char *text;
	uint32_t group;
	int sub;                 /* 0: the line ending here, 1: deeper lines */
	uint64_t key;            /* with ranks: the order of text + terminator */
};

/* The arrays of the levels at one depth of the walk.  The walk is depth
 * first, so a level is done with them before the next level at its depth
 * begins: each depth's arrays are made once and reused (a level per
 * group with children: half a million of them on the bench capture,
 * whose allocations and frees were a tenth of the run). */
struct lvlbuf {
	struct group *groups;
	struct item *items;
	uint32_t *kids;
	uint64_t *keys;
	size_t cap_groups, cap_items, cap_kids, cap_keys;
};

struct lvlbufs {
	struct lvlbuf *v;
	size_t n;
};

static void lvlbuf_free(struct lvlbuf *lb)
{
	free(lb->groups);
	free(lb->items);
	free(lb->kids);
	free(lb->keys);
	memset(lb, 0, sizeof(*lb));
}

static void lvlbufs_fini(struct lvlbufs *b)
{
	size_t i;

	for (i = 0; i < b->n; i++)
		lvlbuf_free(&b->v[i]);
	free(b->v);
	memset(b, 0, sizeof(*b));
}

/* A depth's arrays are kept for the next level there while they are
 * small; past this many groups (a level of a few roots or of the first
 * frames under them), given back, so that what stays is at most this
 * much a depth. */
#define LVL_KEEP 1024

static void lvlbuf_release(struct lvlbufs *b, size_t depth)
{
	struct lvlbuf *lb = &b->v[depth];

	if (lb->cap_groups > LVL_KEEP || lb->cap_kids > 2 * LVL_KEEP)
		lvlbuf_free(lb);
}

/* depth's arrays; NULL on ENOMEM.  (A pointer into b->v: good until
 * a deeper level is made.) */
static struct lvlbuf *lvlbuf_at(struct lvlbufs *b, size_t depth)
{
	if (depth >= b->n) {
		size_t n = depth + 1 > 2 * b->n ? depth + 1 : 2 * b->n;
		struct lvlbuf *v = kf_reallocarray(b->v, n, sizeof(*v));

		if (!v)
			return NULL;
		memset(v + b->n, 0, (n - b->n) * sizeof(*v));
		b->v = v;
		b->n = n;
	}
	return &b->v[depth];
}

/* Adds node's weight to g, and its children to the level's kids (*nk of
 * them so far); a child whose text is empty (stackcollapse drops that
 * frame) is looked through. */
static int absorb(struct em *e, struct lvlbuf *lb, size_t *nk, struct group *g,
		  uint32_t node)
{
	uint32_t c;
	int r;

	g->weight += kf_stacks_weight(e->st, node);
	g->samples += e->st->nodes[node].samples;
	for (c = e->first[node]; c; c = e->next[c]) {
		if (e->text[c] == 0) {
			r = absorb(e, lb, nk, g, c);
			if (r)
				return r;
		} else {
			if (!KF_GROW(lb->kids, lb->cap_kids, *nk + 1))
				return KF_ENOMEM;
			lb->kids[(*nk)++] = c;
			g->n_kids++;
		}
	}
	return 0;
}

static int cmp_nodes(const void *a, const void *b, void *ctx)
{
	return strcmp(text_of(ctx, *(const uint32_t *)a),
		      text_of(ctx, *(const uint32_t *)b));
}

/* text + terminator order: the end of a string sorts before anything,
 * ';' where it would stand */
static int cmp_items(const void *pa, const void *pb)
{
	const struct item *a = pa, *b = pb;
	const unsigned char *x = (const unsigned char *)a->text;
	const unsigned char *y = (const unsigned char *)b->text;
	int cx, cy;

	while (*x && *x == *y) {
		x++;
		y++;
	}
	cx = *x ? *x : a->sub ? ';' : -1;
	cy = *y ? *y : b->sub ? ';' : -1;
	if (cx != cy)
		return cx < cy ? -1 : 1;
	/* both strings ended: the own line first */
	return a->sub - b->sub;
}

static int cmp_u64(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;

	return a < b ? -1 : a > b;
}

static int cmp_item_keys(const void *pa, const void *pb)
{
	const struct item *a = pa, *b = pb;

	return a->key < b->key ? -1 : a->key > b->key;
}

/* ---- the order of the frame texts ------------------------------------------
 *
 * Each level sorts its nodes by text and its items by text and
 * terminator.  There are far fewer distinct texts than nodes (7,800
 * texts for 1.7 million nodes on the bench capture), so every text is
 * put in order once, with both of its terminators, and the levels sort
 * integers.  A text id is the text's offset in the table and every text
 * but "" takes at least two bytes there, so (id + 1) / 2 is a dense
 * enough index: rank[2 * ((id + 1) / 2) + sub] is the place of the text
 * followed by its terminator (sub 0: the end of the line, 1: ';') among
 * all of them: 4 bytes per byte of text. */

struct tkey {
	const char *text;
	uint32_t id;
	int sub;
};

static int cmp_tkeys(const void *pa, const void *pb)
{
	const struct tkey *a = pa, *b = pb;
	struct item x = { a->text, 0, a->sub, 0 }, y = { b->text, 0, b->sub, 0 };

	return cmp_items(&x, &y);
}

static size_t rank_slot(uint32_t id, int sub)
{
	return 2 * (((size_t)id + 1) / 2) + (size_t)sub;
}

/* The ranks of every text of t; NULL on ENOMEM. */
static uint32_t *text_ranks(const struct kf_strtab *t)
{
	struct tkey *v;
	uint32_t *rank;
	size_t n = 0, off, i, nslots = rank_slot((uint32_t)t->len, 0) + 2;

	rank = kf_calloc(nslots, sizeof(*rank));
	v = kf_calloc(t->n + 1, 2 * sizeof(*v));
	if (!rank || !v) {
		free(rank);
		free(v);
		return NULL;
	}
	/* "" at 0, then each text after the previous one's NUL */
	for (off = 0; off < t->len && n + 2 <= 2 * (t->n + 1); off += strlen(t->buf + off) + 1) {
		v[n++] = (struct tkey){ t->buf + off, (uint32_t)off, 0 };
		v[n++] = (struct tkey){ t->buf + off, (uint32_t)off, 1 };
	}
	qsort(v, n, sizeof(*v), cmp_tkeys);
	for (i = 0; i < n; i++)
		rank[rank_slot(v[i].id, v[i].sub)] = (uint32_t)i;
	free(v);
	return rank;
}

static uint64_t rank_of(const struct em *e, uint32_t node, int sub)
{
	return e->rank[rank_slot(e->text[node], sub)];
}

static int level(struct em *e, uint32_t *nodes, size_t n, bool root, size_t depth);

/* A weight past 2^64 - 1 is printed as stackcollapse-perf.pl prints it:
 * Perl adds in floating point once a sum leaves its unsigned integers,
 * and prints that with 15 significant digits.  (Perl rounds after every
 * addition; kfold rounds the exact sum once, which can differ in the last
 * digit.) */
static int emit_line(struct em *e, kf_u128 weight)
{
	int n;

	if (weight >> 64)
		n = fprintf(e->out, "%s %.15g\n", kf_buf_cstr(&e->line), (double)weight);
	else
		n = fprintf(e->out, "%s %" PRIu64 "\n", kf_buf_cstr(&e->line),
			    (uint64_t)weight);
	if (n < 0) {
		e->err = KF_EIO;
		return KF_EIO;
	}
	e->lines++;
	return 0;
}

/* One level: nodes sorted and grouped by text, and the items to print
 * in order (a group's own line, then the lines below it); the arrays are
 * its depth's (struct lvlbuf). */
struct lvl {
	struct group *groups;
	struct item *items;
	uint32_t *kids;
	size_t ng, ni, depth;
};

/* qsort, but by insertion when there are few (most levels hold a node
 * or two, and qsort's setup cost more than their sort); the keys sorted
 * here are distinct, so any sort gives the one order.  Elements of at
 * most sizeof(struct item) bytes. */
static void sort_few(void *base, size_t n, size_t size,
		     int (*cmp)(const void *, const void *))
{
	unsigned char *v = base, x[sizeof(struct item)];
	size_t i, j;

	if (n > 16 || size > sizeof(x)) {
		qsort(base, n, size, cmp);
		return;
	}
	for (i = 1; i < n; i++) {
		memcpy(x, v + i * size, size);
		for (j = i; j > 0 && cmp(v + (j - 1) * size, x) > 0; j--)
			memcpy(v + j * size, v + (j - 1) * size, size);
		memcpy(v + j * size, x, size);
	}
}

/* nodes in order of their texts: by rank below the roots (whose texts
 * are not frame texts), by strcmp among the roots */
static int sort_nodes(struct em *e, struct lvlbuf *lb, uint32_t *nodes, size_t n, bool root)
{
	size_t i;

	if (root) {
		qsort_r(nodes, n, sizeof(*nodes), cmp_nodes, e);
		return 0;
	}
	if (!KF_GROW(lb->keys, lb->cap_keys, n ? n : 1))
		return KF_ENOMEM;
	for (i = 0; i < n; i++)
		lb->keys[i] = rank_of(e, nodes[i], 0) << 32 | nodes[i];
	sort_few(lb->keys, n, sizeof(*lb->keys), cmp_u64);
	for (i = 0; i < n; i++)
		nodes[i] = (uint32_t)lb->keys[i];
	return 0;
}

static int lvl_make(struct em *e, uint32_t *nodes, size_t n, bool root, size_t depth,
		    struct lvl *l)
{
	struct lvlbuf *lb = lvlbuf_at(e->bufs, depth);
	bool ranked = !root;
	size_t i, j, nk = 0;
	int r;

	memset(l, 0, sizeof(*l));
	l->depth = depth;
	if (!lb)
		return KF_ENOMEM;
	if ((r = sort_nodes(e, lb, nodes, n, root)) != 0)
		return r;
	if (!KF_GROW(lb->groups, lb->cap_groups, n ? n : 1) ||
	    !KF_GROW(lb->items, lb->cap_items, n ? 2 * n : 1))
		return KF_ENOMEM;
	l->groups = lb->groups;
	l->items = lb->items;
	/* equal texts have one id: they are interned */
	for (i = 0; i < n; i = j) {
		struct group *g = &l->groups[l->ng];
		uint32_t t = nodes[i];
		const char *txt = text_of(e, t);

		memset(g, 0, sizeof(*g));
		g->text_node = t;
		g->kid0 = nk;
		l->ng++;
		for (j = i; j < n && e->text[nodes[j]] == e->text[t]; j++) {
			r = absorb(e, lb, &nk, g, nodes[j]);
			if (r)
				return r;
		}
		if (g->samples)
			l->items[l->ni++] = (struct item){ txt, (uint32_t)(l->ng - 1), 0,
							   ranked ? rank_of(e, t, 0) : 0 };
		if (g->n_kids)
			l->items[l->ni++] = (struct item){ txt, (uint32_t)(l->ng - 1), 1,
							   ranked ? rank_of(e, t, 1) : 0 };
	}
	l->kids = lb->kids;       /* where absorb left them */
	sort_few(l->items, l->ni, sizeof(*l->items), ranked ? cmp_item_keys : cmp_items);
	return 0;
}

/* Items [from, to) of a level: each a line, or the level below it. */
static int lvl_emit(struct em *e, const struct lvl *l, size_t from, size_t to, bool root)
{
	size_t i;
	int r = 0;

	for (i = from; i < to && !r; i++) {
		const struct item *it = &l->items[i];
		const struct group *g = &l->groups[it->group];
		size_t keep = e->line.len;

		if (!root)
			kf_buf_put(&e->line, ";", 1);
		kf_buf_puts(&e->line, it->text);
		if (e->line.oom)
			return KF_ENOMEM;
		if (!it->sub)
			r = emit_line(e, g->weight);
		else
			r = level(e, l->kids + g->kid0, g->n_kids, false, l->depth + 1);
		e->line.len = keep;
		e->line.p[keep] = '\0';
	}
	return r;
}

/* Emits, in order, every line below the frames in nodes (one level at
 * `depth`: all children of the previous group, or all roots). */
static int level(struct em *e, uint32_t *nodes, size_t n, bool root, size_t depth)
{
	struct lvl l;
	int r;

	if (!n)
		return 0;
	r = lvl_make(e, nodes, n, root, depth, &l);
	if (!r)
		r = lvl_emit(e, &l, 0, l.ni, root);
	if (depth < e->bufs->n)
		lvlbuf_release(e->bufs, depth);
	return r;
}

/* ---- the levels on two threads ------------------------------------------------
 *
 * The lines below one level's items are independent of each other's, so
 * with jobs > 1 the items of the first level with more than one (the
 * roots, or below a lone root) are cut in two of about the same number
 * of nodes: a worker writes the second part's lines into an anonymous
 * memory file (memfd: no path, so a run that may open nothing but its
 * input opens nothing more) while this thread writes the first part's,
 * and the worker's file is then copied after them.  The same lines in
 * the same order. */

struct half {
	struct em e;              /* the worker's: its own line, out, counts */
	const struct lvl *l;
	size_t from, to;
	bool root;
	int r;
};

static void *emit_half(void *arg)
{
	struct half *h = arg;

	h->r = lvl_emit(&h->e, h->l, h->from, h->to, h->root);
	return NULL;
}

/* Nodes in each node's subtree (a child's id is above its parent's). */
static uint32_t *subtree_sizes(const struct kf_stacks *st)
{
	uint32_t *sz = kf_calloc(st->n ? st->n : 1, sizeof(*sz));
	size_t i;

	if (!sz)
		return NULL;
	for (i = st->n; i-- > 1;) {
		sz[i]++;
		if (st->nodes[i].parent)
			sz[st->nodes[i].parent] += sz[i];
	}
	return sz;
}

/* What an item's lines cost: its group's kids' subtrees, or one line. */
static uint64_t item_cost(const struct lvl *l, const struct item *it, const uint32_t *sz)
{
	const struct group *g = &l->groups[it->group];
	uint64_t c = 1;
	size_t k;

	if (it->sub)
		for (k = 0; k < g->n_kids; k++)
			c += sz[l->kids[g->kid0 + k]];
	return c;
}

/* A scratch stream without a name; NULL if none can be had. */
static FILE *scratch_file(void)
{
	int fd = memfd_create("kfold-output", MFD_CLOEXEC);
	FILE *f;

	if (fd < 0)
		return NULL;
	f = fdopen(fd, "w+");
	if (!f)
		close(fd);
	return f;
}

static int copy_file(FILE *from, FILE *to)
{
	char buf[1 << 16];
	size_t got;

	if (fflush(from) != 0 || fseek(from, 0, SEEK_SET) != 0)
		return KF_EIO;
	while ((got = fread(buf, 1, sizeof(buf), from)) > 0)
		if (fwrite(buf, 1, got, to) != got)
			return KF_EIO;
	return ferror(from) ? KF_EIO : 0;
}

static int level_par(struct em *e, uint32_t *nodes, size_t n, bool root,
		     const uint32_t *sz, size_t depth)
{
	struct lvl l;
	struct half h;
	struct lvlbufs hbufs;     /* the worker's levels */
	pthread_t th;
	uint64_t total = 0, acc = 0;
	size_t i, cut;
	int r;

	if (!n)
		return 0;
	r = lvl_make(e, nodes, n, root, depth, &l);
	if (r)
		return r;
	if (l.ni == 1 && l.items[0].sub) {
		/* a lone item: cut the level below it */
		const struct item *it = &l.items[0];
		const struct group *g = &l.groups[it->group];
		size_t keep = e->line.len;

		if (!root)
			kf_buf_put(&e->line, ";", 1);
		kf_buf_puts(&e->line, it->text);
		r = e->line.oom ? KF_ENOMEM :
		    level_par(e, l.kids + g->kid0, g->n_kids, false, sz, depth + 1);
		e->line.len = keep;
		e->line.p[keep] = '\0';
		return r;
	}
	for (i = 0; i < l.ni; i++)
		total += item_cost(&l, &l.items[i], sz);
	for (cut = 0; cut < l.ni && acc * 2 < total; cut++)
		acc += item_cost(&l, &l.items[cut], sz);
	memset(&h, 0, sizeof(h));
	memset(&hbufs, 0, sizeof(hbufs));
	h.e = *e;
	h.e.lines = 0;
	h.e.err = 0;
	h.e.bufs = &hbufs;
	kf_buf_init(&h.e.line);
	kf_buf_put(&h.e.line, e->line.p ? e->line.p : "", e->line.len);
	h.e.out = cut < l.ni && cut > 0 && !h.e.line.oom ? scratch_file() : NULL;
	h.l = &l;
	h.from = cut;
	h.to = l.ni;
	h.root = root;
	if (!h.e.out || pthread_create(&th, NULL, emit_half, &h) != 0) {
		/* one thread after all */
		if (h.e.out)
			fclose(h.e.out);
		kf_buf_fini(&h.e.line);
		r = lvl_emit(e, &l, 0, l.ni, root);
		goto out;
	}
	r = lvl_emit(e, &l, 0, cut, root);
	pthread_join(th, NULL);
	if (!r)
		r = h.r;
	if (!r && h.e.err)
		r = h.e.err;
	if (!r)
		r = copy_file(h.e.out, e->out);
	if (r == KF_EIO)
		e->err = KF_EIO;
	e->lines += h.e.lines;
	fclose(h.e.out);
	kf_buf_fini(&h.e.line);
out:
	lvlbufs_fini(&hbufs);
	return r;
}

/* level() of the roots, on two threads when jobs > 1. */
static int level_top(struct em *e, uint32_t *rootv, size_t n_roots, unsigned jobs)
{
	uint32_t *sz, *rank = text_ranks(&e->ft->texts);
	int r;

	if (!rank)
		return KF_ENOMEM;
	e->rank = rank;
	if (jobs < 2 || !(sz = subtree_sizes(e->st))) {
		r = level(e, rootv, n_roots, true, 0);
	} else {
		r = level_par(e, rootv, n_roots, true, sz, 0);
		free(sz);
	}
	e->rank = NULL;
	free(rank);
	return r;
}

/* ---- fallback: whole lines, sorted --------------------------------------- */

struct wline {
	char *text;
	kf_u128 weight;
};

static int cmp_wlines(const void *a, const void *b)
{
	return strcmp(((const struct wline *)a)->text, ((const struct wline *)b)->text);
}

static int push(uint32_t **v, size_t *n, size_t *cap, uint32_t x)
{
	if (!kf_grow((void **)v, cap, *n + 1, sizeof(**v)))
		return KF_ENOMEM;
	(*v)[(*n)++] = x;
	return 0;
}

static int sorted_lines(struct em *e)
{
	struct wline *v = NULL;
	size_t n = 0, cap = 0, i, j;
	uint32_t *path = NULL;
	size_t cap_path = 0;
	int r = 0;

	for (i = 1; i < e->st->n; i++) {
		size_t depth = 0, k;
		uint32_t id;

		if (!e->st->nodes[i].samples)
			continue;
		for (id = (uint32_t)i; id; id = e->st->nodes[id].parent) {
			if (push(&path, &depth, &cap_path, id)) {
				r = KF_ENOMEM;
				goto out;
			}
		}
		e->line.len = 0;
		kf_buf_puts(&e->line, text_of(e, path[depth - 1]));
		for (k = depth - 1; k-- > 0;) {
			if (e->text[path[k]] == 0)
				continue;
			kf_buf_put(&e->line, ";", 1);
			kf_buf_puts(&e->line, text_of(e, path[k]));
		}
		if (e->line.oom || !KF_GROW(v, cap, n + 1)) {
			r = KF_ENOMEM;
			goto out;
		}
		v[n].text = kf_strndup(kf_buf_cstr(&e->line), e->line.len);
		v[n].weight = kf_stacks_weight(e->st, (uint32_t)i);
		if (!v[n++].text) {
			r = KF_ENOMEM;
			goto out;
		}
	}
	if (n)
		qsort(v, n, sizeof(*v), cmp_wlines);
	for (i = 0; i < n && !r; i = j) {
		kf_u128 w = v[i].weight;

		for (j = i + 1; j < n && strcmp(v[j].text, v[i].text) == 0; j++)
			w += v[j].weight;
		e->line.len = 0;
		kf_buf_puts(&e->line, v[i].text);
		r = emit_line(e, w);
	}
out:
	for (i = 0; i < n; i++)
		free(v[i].text);
	free(v);
	free(path);
	return r;
}

/* ---- frames that are several folded frames ------------------------------------ */

/* A frame whose text holds ';' (an inline chain, or perf's "a->b" split)
 * is several frames of the folded line, so sibling texts no longer sort
 * as whole lines do.  Rebuild the trie with one node per ';'-separated
 * piece, the pieces interned with the frame texts, and walk that one. */

/* Each distinct text split once: its pieces' ids, looked up by text id
 * (far fewer distinct texts than nodes; the table stays in cache). */
struct pieces {
	struct kf_map64 at;       /* text id -> index in ids of its count */
	uint32_t *ids;            /* per text: count, then the piece ids */
	size_t n_ids, cap_ids;
	struct kf_buf copy;
};

#define PIECES_SEMI 0x80000000u   /* in a text's count: it holds ';' */

/* The pieces of text id t: *v, *n; *semi: the text holds ';' (NULL: not
 * asked).  0 or KF_ENOMEM. */
static int pieces_of(struct em *e, struct pieces *pc, uint32_t t,
		     const uint32_t **v, uint32_t *n, bool *semi)
{
	uint32_t at;
	const char *txt;
	size_t len, a, b, start;

	if (!kf_map64_get(&pc->at, t, &at)) {
		txt = kf_strtab_get(&e->ft->texts, t);
		len = strlen(txt);
		start = pc->n_ids;
		if (!KF_GROW(pc->ids, pc->cap_ids, pc->n_ids + 1))
			return KF_ENOMEM;
		pc->ids[pc->n_ids++] = 0;
		if (!memchr(txt, ';', len)) {
			/* one piece: the text itself (interned already),
			 * none for "" */
			if (len) {
				if (!KF_GROW(pc->ids, pc->cap_ids, pc->n_ids + 1))
					return KF_ENOMEM;
				pc->ids[pc->n_ids++] = t;
				pc->ids[start] = 1;
			}
		} else {
			pc->ids[start] = PIECES_SEMI;
			/* copied: interning moves the buffer */
			pc->copy.len = 0;
			kf_buf_put(&pc->copy, txt, len);
			if (pc->copy.oom)
				return KF_ENOMEM;
			for (a = 0; a < len; a = b + 1) {
				uint32_t id;

				for (b = a; b < len && pc->copy.p[b] != ';'; b++)
					;
				if (b == a)
					continue;
				if (!kf_strtab_intern(&e->ft->texts, pc->copy.p + a, b - a, &id) ||
				    !KF_GROW(pc->ids, pc->cap_ids, pc->n_ids + 1))
					return KF_ENOMEM;
				pc->ids[pc->n_ids++] = id;
				pc->ids[start]++;
			}
		}
		if (start > UINT32_MAX - 1 || !kf_map64_put(&pc->at, t, (uint32_t)start))
			return KF_ENOMEM;
		at = (uint32_t)start;
	}
	*n = pc->ids[at] & ~PIECES_SEMI;
	*v = pc->ids + at + 1;
	if (semi)
		*semi = (pc->ids[at] & PIECES_SEMI) != 0;
	return 0;
}

/* Node ids are in insertion order, so most nodes (two in three on a
 * system-wide capture) are the child of the node before them: a stack
 * that left the known ones adds its remaining frames one after the
 * other.  Such a run of nodes is one walk down the piece trie, whose
 * pieces kf_stacks_walk fetches together instead of one miss after the
 * other.  Runs are short (three nodes on average on the bench capture,
 * half of them one), and each walk starts with three misses one after
 * the other: its parent's path hash, the slot, the node.  So the
 * builder keeps a window of runs and asks for those of every run whose
 * parent is known (it came before the window) in passes, each pass's
 * misses together, before it walks them in order.  It takes the nodes in
 * id order with their pieces (struct ptb); it touches only the piece
 * trie, its own arrays and the nodes of e->st, so it can run on a
 * thread of its own while the texts are being made (kf_emit_folded). */
enum { WIN_NODES = 64, WIN_FRAMES = 256 };

struct ptb {
	const struct kf_stacks *st;
	struct kf_stacks *pt;
	uint32_t *map;            /* per node of st: its node in pt (two
				     builders of disjoint parts may share
				     it: each writes its own nodes') */
	bool own_map;
	struct kf_frame *frames;  /* the window's pieces */
	uint32_t *got;            /* their nodes in pt */
	size_t cap_frames, cap_got, nf;
	uint32_t nodes[WIN_NODES]; /* the window's nodes, in id order (with
				     a split trie, not always one after
				     the other) */
	uint32_t ends[WIN_NODES]; /* per node of the window: pieces up to it */
	uint32_t runs[WIN_NODES]; /* where each run starts in the window */
	uint32_t n_win, n_runs;
	int err;
};

/* map NULL: a map of its own */
static int ptb_init(struct ptb *b, const struct kf_stacks *st, struct kf_stacks *pt,
		    uint32_t *map)
{
	memset(b, 0, sizeof(*b));
	b->st = st;
	b->pt = pt;
	b->own_map = !map;
	b->map = map ? map : kf_calloc(st->n ? st->n : 1, sizeof(*b->map));
	return b->map ? 0 : KF_ENOMEM;
}

static void ptb_fini(struct ptb *b)
{
	if (b->own_map)
		free(b->map);
	free(b->frames);
	free(b->got);
}

/* Run k of the window: its nodes [*a, *z) (window positions), pieces
 * [*fa, *fz). */
static void ptb_run(const struct ptb *b, uint32_t k, uint32_t *a, uint32_t *z, uint32_t *fa,
		    uint32_t *fz)
{
	*a = b->runs[k];
	*z = k + 1 < b->n_runs ? b->runs[k + 1] : b->n_win;
	*fa = *a ? b->ends[*a - 1] : 0;
	*fz = b->ends[*z - 1];
}

/* The window walked, run by run: each node of a run is the node of its
 * last piece; one without pieces ("") is its parent's. */
static void ptb_flush(struct ptb *b)
{
	uint32_t k, q, a, z, fa, fz;
	uint32_t from[WIN_NODES];  /* per run: its parent in pt, if known */
	bool known[WIN_NODES];

	if (!b->n_win || b->err)
		return;
	if (b->nf && !KF_GROW(b->got, b->cap_got, b->nf)) {
		b->err = KF_ENOMEM;
		return;
	}
	/* the parents outside the window (older than its first node) are
	 * known: their fetches first */
	for (k = 0; k < b->n_runs; k++) {
		uint32_t p = b->st->nodes[b->nodes[b->runs[k]]].parent;

		known[k] = p < b->nodes[0];
		from[k] = !p ? 0 : known[k] ? b->map[p] : 0;
		if (known[k])
			kf_stacks_prefetch_parent(b->pt, from[k]);
	}
	for (q = 0; q < 2; q++)
		for (k = 0; k < b->n_runs; k++) {
			ptb_run(b, k, &a, &z, &fa, &fz);
			if (known[k] && fz > fa)
				kf_stacks_prefetch_child(b->pt, from[k], &b->frames[fa], q);
		}
	for (k = 0; k < b->n_runs; k++) {
		uint32_t prev, up;

		ptb_run(b, k, &a, &z, &fa, &fz);
		/* a parent in the window was walked by an earlier run */
		up = known[k] ? from[k] : b->map[b->st->nodes[b->nodes[a]].parent];
		if (fz > fa && !kf_stacks_walk(b->pt, up, b->frames + fa, fz - fa, b->got + fa)) {
			b->err = KF_ENOMEM;
			return;
		}
		for (q = a, prev = fa; q < z; q++) {
			uint32_t x = b->nodes[q], end = b->ends[q];
			/* (within a run, the node before is the parent) */
			uint32_t cur = end > prev ? b->got[end - 1] :
				       q == a ? up : b->map[b->nodes[q - 1]];
			const struct kf_node *nd = &b->st->nodes[x];
			struct kf_node *pn;

			prev = end;
			b->map[x] = cur;
			if (!cur || !kf_stacks_add_weight(b->pt, cur, kf_stacks_weight(b->st, x))) {
				b->err = KF_ENOMEM;
				return;
			}
			pn = &b->pt->nodes[cur];
			pn->samples = pn->samples > UINT32_MAX - nd->samples ? UINT32_MAX :
				      pn->samples + nd->samples;
		}
	}
	b->n_win = 0;
	b->n_runs = 0;
	b->nf = 0;
}

/* Node x (after every node added before, whose parent was added before
 * it) with its pieces ids[0 .. n); a root's one "piece" is its text id. */
static void ptb_add(struct ptb *b, uint32_t x, const uint32_t *ids, uint32_t n)
{
	const struct kf_node *nd = &b->st->nodes[x];
	uint32_t k;

	if (b->err)
		return;
	/* a full window is walked (one frame with more pieces than
	 * WIN_FRAMES, a symbol full of perf's "->", makes a longer one of
	 * its own) */
	if (b->n_win && (b->n_win == WIN_NODES || b->nf >= WIN_FRAMES))
		ptb_flush(b);
	if (b->err)
		return;
	/* a run continues with a child of its last node */
	if (!b->n_win || nd->parent != b->nodes[b->n_win - 1])
		b->runs[b->n_runs++] = b->n_win;
	if (!KF_GROW(b->frames, b->cap_frames, b->nf + (n ? n : 1))) {
		b->err = KF_ENOMEM;
		return;
	}
	if (!nd->parent) {
		/* a root (only first in a run): its copy carries its text
		 * id (a root's addr is 0) */
		b->frames[b->nf] = nd->frame;
		b->frames[b->nf++].addr = n ? ids[0] : 0;
	} else {
		for (k = 0; k < n; k++) {
			memset(&b->frames[b->nf], 0, sizeof(b->frames[b->nf]));
			b->frames[b->nf++].addr = ids[k];
		}
	}
	b->nodes[b->n_win] = x;
	b->ends[b->n_win++] = (uint32_t)b->nf;
}

static int piece_trie(struct em *e, struct kf_stacks *pt)
{
	struct pieces pc;
	struct ptb b;
	size_t i;
	int r;

	if ((r = ptb_init(&b, e->st, pt, NULL)) != 0)
		return r;
	memset(&pc, 0, sizeof(pc));
	kf_map64_init(&pc.at);
	kf_buf_init(&pc.copy);
	for (i = 1; i < e->st->n && !r && !b.err; i++) {
		const uint32_t *v = &e->text[i];
		uint32_t n = 1;

		if (e->st->nodes[i].parent)
			r = pieces_of(e, &pc, e->text[i], &v, &n, NULL);
		if (!r)
			ptb_add(&b, (uint32_t)i, v, n);
	}
	if (!r)
		ptb_flush(&b);
	if (!r)
		r = b.err;
	ptb_fini(&b);
	free(pc.ids);
	kf_map64_fini(&pc.at);
	kf_buf_fini(&pc.copy);
	return r;
}

/* first/next child lists of e->st, and its roots */
static int link_nodes(struct em *e, uint32_t **rootv, size_t *n_roots, size_t *cap_roots)
{
	size_t i;

	e->first = kf_calloc(e->st->n, sizeof(*e->first));
	e->next = kf_calloc(e->st->n, sizeof(*e->next));
	if (!e->first || !e->next)
		return KF_ENOMEM;
	kf_prefault(e->first, e->st->n * sizeof(*e->first));   /* read, then written */
	for (i = e->st->n; i-- > 1;) {
		uint32_t p = e->st->nodes[i].parent;

		if (p) {
			e->next[i] = e->first[p];
			e->first[p] = (uint32_t)i;
		} else if (push(rootv, n_roots, cap_roots, (uint32_t)i)) {
			return KF_ENOMEM;
		}
	}
	return 0;
}

/* The lines of the piece trie pt (complete), written as e's. */
static int emit_trie(struct em *e, struct kf_stacks *pt, unsigned jobs)
{
	struct em p;
	uint32_t *rootv = NULL;
	size_t n_roots = 0, cap_roots = 0, i;
	int r = 0;

	kf_stacks_drop_index(pt);   /* complete: only read from here */
	p = *e;
	p.st = pt;
	p.text = NULL;
	p.first = p.next = NULL;
	p.lines = 0;
	if (!r)
		r = link_nodes(&p, &rootv, &n_roots, &cap_roots);
	if (!r) {
		p.text = kf_calloc(pt->n, sizeof(*p.text));
		if (!p.text)
			r = KF_ENOMEM;
	}
	for (i = 1; !r && i < pt->n; i++)
		p.text[i] = (uint32_t)pt->nodes[i].frame.addr;
	if (!r)
		r = level_top(&p, rootv, n_roots, jobs);
	e->lines += p.lines;
	e->err = p.err;
	e->line = p.line;        /* the buffer may have grown */
	free(p.text);
	free(p.first);
	free(p.next);
	free(rootv);
	return r;
}

static int emit_pieces(struct em *e, unsigned jobs)
{
	struct kf_stacks pt;
	int r;

	if (kf_stacks_init(&pt))
		return KF_ENOMEM;
	r = piece_trie(e, &pt);
	if (!r)
		r = emit_trie(e, &pt, jobs);
	kf_stacks_fini(&pt);
	return r;
}

/* ---- naming and the piece trie side by side ----------------------------------
 *
 * With jobs > 1 the piece trie is built on a worker while the frames
 * are named: this thread names each node, splits its text (interning
 * the pieces) and queues (node, pieces); the worker adds them to the
 * trie in id order, which is what piece_trie does on one thread.  The
 * texts interned meanwhile are this thread's alone; the worker reads
 * only ids.  Built whether or not some text turns out to hold ';'
 * (only known once every node is named); without one it is dropped. */

struct qent {
	uint32_t node, n;          /* then n piece ids, padded to 8 bytes */
};

static size_t qent_size(uint32_t n)
{
	return (sizeof(struct qent) + (size_t)n * sizeof(uint32_t) + 7) & ~(size_t)7;
}

static void consume(void *ctx, const unsigned char *p, size_t len)
{
	struct ptb *b = ctx;
	const unsigned char *end = p + len;

	while (p < end) {
		struct qent q;

		memcpy(&q, p, sizeof(q));
		ptb_add(b, q.node, (const uint32_t *)(const void *)(p + sizeof(q)), q.n);
		p += qent_size(q.n);
	}
}

struct rtcount {
	uint64_t nodes;          /* under this root */
	uint32_t idx;            /* the root's index, in id order */
};

static int cmp_rtcount(const void *pa, const void *pb)
{
	const struct rtcount *a = pa, *b = pb;

	if (a->nodes != b->nodes)
		return a->nodes > b->nodes ? -1 : 1;   /* heaviest first */
	return (a->idx > b->idx) - (a->idx < b->idx);
}

/* When the texts are made already (the --context rewrite named them),
 * this thread only feeds the worker, which then bounds the run.  So the
 * piece trie is built in two parts, the stacks under some roots here and
 * under the others on the worker, and the parts are joined after.  Each
 * root is a piece node of its own already (two roots of one text are
 * two nodes, whose lines the emitter's levels merge, as every level
 * merges siblings of equal text), so the joined trie gives the same
 * lines.  Per node of e->st, which part (1: the worker's): the roots,
 * heaviest in nodes first, each to the part with fewer nodes so far.
 * NULL on ENOMEM. */
static uint8_t *split_parts(const struct em *e)
{
	const struct kf_stacks *st = e->st;
	size_t n = st->n ? st->n : 1, n_c = 0, cap_c = 0, i;
	uint32_t *root = kf_calloc(n, sizeof(*root));   /* per node: its root's index */
	uint8_t *part = kf_calloc(n, sizeof(*part)), *side = NULL;
	struct rtcount *c = NULL;
	uint64_t load[2] = { 0, 0 };
	bool ok = root && part;

	/* a parent comes before its children */
	for (i = 1; ok && i < st->n; i++) {
		uint32_t p = st->nodes[i].parent;

		if (!p) {
			if (n_c >= UINT32_MAX || !KF_GROW(c, cap_c, n_c + 1)) {
				ok = false;
				break;
			}
			c[n_c] = (struct rtcount){ 0, (uint32_t)n_c };
			root[i] = (uint32_t)n_c++;
		} else {
			root[i] = root[p];
		}
		c[root[i]].nodes++;
	}
	if (ok && !(side = kf_calloc(n_c ? n_c : 1, sizeof(*side))))
		ok = false;
	if (ok) {
		/* the worker takes the heaviest and the ties: this thread
		 * feeds it besides */
		qsort(c, n_c, sizeof(*c), cmp_rtcount);
		for (i = 0; i < n_c; i++) {
			uint8_t w = load[1] <= load[0];

			load[w] += c[i].nodes;
			side[c[i].idx] = w;
		}
		for (i = 1; i < st->n; i++)
			part[i] = side[root[i]];
	}
	free(root);
	free(c);
	free(side);
	if (!ok) {
		free(part);
		return NULL;
	}
	return part;
}

/* src's nodes appended to dst (a piece trie of other roots), its index
 * dropped: its roots become roots of dst. */
static int graft(struct kf_stacks *dst, const struct kf_stacks *src)
{
	uint32_t off, i;

	kf_stacks_drop_index(dst);
	off = (uint32_t)dst->n - 1;
	for (i = 1; i < src->n; i++) {
		const struct kf_node *sn = &src->nodes[i];
		uint32_t id = kf_stacks_append(dst, sn->parent ? sn->parent + off : 0, &sn->frame);

		if (!id || !kf_stacks_add_weight(dst, id, kf_stacks_weight(src, i)))
			return KF_ENOMEM;
		dst->nodes[id].samples = sn->samples;
	}
	return 0;
}

static bool queue_node(struct kf_chunkq *q, uint32_t node, const uint32_t *ids, uint32_t n)
{
	struct qent h = { node, n };
	unsigned char *p = kf_chunkq_space(q, qent_size(n));

	if (!p)
		return false;   /* more pieces than a chunk holds: never */
	memcpy(p, &h, sizeof(h));
	memcpy(p + sizeof(h), ids, (size_t)n * sizeof(uint32_t));
	kf_chunkq_commit(q, qent_size(n));
	return true;
}


/* ---- stackcollapse-perf.pl's per-name rules ------------------------------ */

/* tidy_generic: ';' -> ':', drop everything from the first '(' that does
 * not open "(anonymous namespace)" unless the name looks like a Go method
 * ("pkg.(*T).M"), drop quotes.  The cut at '(' removes the argument list
 * of a name perf printed with one; `cut_args` false skips it for a name
 * that has none: demangled without parameters, a '(' there is part of the
 * name ("KeyLess::operator()", "lang_start::<()>::{closure#0}"). */
static void tidy(struct kf_buf *out, const char *s, size_t len, bool java,
		 bool cut_args)
{
	size_t i, cut = len;
	bool keep = !cut_args;	/* no cut: see above, or a Go method */

	/* /\.\(.*\)\./ */
	for (i = 0; i + 1 < len && !keep; i++) {
		if (s[i] == '.' && s[i + 1] == '(') {
			size_t j;

			for (j = len; j-- > i + 2;) {
				if (s[j] == '.' && s[j - 1] == ')') {
					keep = true;
					break;
				}
			}
		}
	}
	if (!keep) {
		for (i = 0; i < len; i++) {
			static const char anon[] = "anonymous namespace)";

			if (s[i] != '(')
				continue;
			if (len - i - 1 >= sizeof(anon) - 1 &&
			    memcmp(s + i + 1, anon, sizeof(anon) - 1) == 0)
				continue;
			cut = i;
			break;
		}
	}
	i = 0;
	/* $tidy_java: s/^L// if the name has a '/' (only for java comms) */
	if (java && cut > 0 && s[0] == 'L' && memchr(s, '/', cut))
		i = 1;
	for (; i < cut; i++) {
		char c = s[i];

		if (c == '"' || c == '\'')
			continue;
		if (c == ';')
			c = ':';
		kf_buf_put(out, &c, 1);
	}
}

static bool ends_with(const char *s, size_t n, const char *suf)
{
	size_t k = strlen(suf);

	return n >= k && memcmp(s + n - k, suf, k) == 0;
}

static bool contains(const char *s, size_t n, const char *what)
{
	size_t k = strlen(what), i;

	for (i = 0; i + k <= n; i++)
		if (memcmp(s + i, what, k) == 0)
			return true;
	return false;
}

/* mod =~ m:/tmp/perf-\d+\.map: */
static bool is_perf_map_name(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i + 10 <= n; i++) {
		size_t j;

		if (memcmp(s + i, "/tmp/perf-", 10) != 0)
			continue;
		j = i + 10;
		if (j >= n || !isdigit((unsigned char)s[j]))
			continue;
		while (j < n && isdigit((unsigned char)s[j]))
			j++;
		if (j + 4 <= n && s[j + 1] == 'm' && s[j + 2] == 'a' &&
		    s[j + 3] == 'p')
			return true;   /* '.' in the regex matches any char */
	}
	return false;
}

/* Folds one `perf script` callchain line the way stackcollapse-perf.pl
 * does.  rawline = "SYM (DSO)" (what follows the address), pc = the
 * printed address. */
static void collapse_line(const struct kf_fold_style *fs, struct kf_buf *out,
			  const char *pc, const char *line, size_t len, bool java)
{
	size_t i, split = SIZE_MAX, fstart, flen, mlen = 0, npieces = 0;
	const char *mod, *raw;
	size_t rawlen;

	/* /^\s*(\w+)\s*(.+) \((.*)\)/: the name/module split is the last
	 * " (" that has a ')' somewhere after it */
	for (i = len; i-- > 1;) {
		if (line[i - 1] == ' ' && line[i] == '(' &&
		    memchr(line + i + 1, ')', len - i - 1)) {
			split = i - 1;
			break;
		}
	}
	if (split == SIZE_MAX || split == 0)
		return;   /* "Unrecognized line": nothing folded */
	raw = line;
	rawlen = split;
	mod = line + split + 2;
	{
		const char *close = NULL;
		size_t k;

		for (k = len; k-- > split + 2;)
			if (line[k] == ')') {
				close = line + k;
				break;
			}
		mlen = (size_t)(close - mod);
	}
	/* s/\+0x[\da-f]+$// */
	{
		size_t k = rawlen;

		while (k > 0 && (isdigit((unsigned char)raw[k - 1]) ||
				 (raw[k - 1] >= 'a' && raw[k - 1] <= 'f')))
			k--;
		if (k < rawlen && k >= 3 && memcmp(raw + k - 3, "+0x", 3) == 0)
			rawlen = k - 3;
	}
	if (rawlen && raw[0] == '(')
		return;   /* "skip process names" */

	/* split /\->/; perl drops trailing empty fields */
	{
		size_t starts[64], lens[64], nf = 0, k, pos = 0;

		for (;;) {
			size_t e = pos;

			while (e + 1 < rawlen && !(raw[e] == '-' && raw[e + 1] == '>'))
				e++;
			if (e + 1 >= rawlen)
				e = rawlen;
			if (nf < 64) {
				starts[nf] = pos;
				lens[nf] = e - pos;
				nf++;
			}
			if (e >= rawlen)
				break;
			pos = e + 2;
			if (pos > rawlen)
				break;
		}
		while (nf > 0 && lens[nf - 1] == 0)
			nf--;
		for (k = 0; k < nf; k++) {
			size_t before;

			fstart = starts[k];
			flen = lens[k];
			if (npieces)
				kf_buf_put(out, ";", 1);
			before = out->len;
			if (flen == 9 && memcmp(raw + fstart, "[unknown]", 9) == 0) {
				struct kf_buf f;
				const char *base = mod;
				size_t j;

				kf_buf_init(&f);
				kf_buf_put(&f, "[", 1);
				if (!(mlen == 9 && memcmp(mod, "[unknown]", 9) == 0)) {
					for (j = 0; j < mlen; j++)
						if (mod[j] == '/')
							base = mod + j + 1;
					kf_buf_put(&f, base, (size_t)(mod + mlen - base));
				} else {
					kf_buf_puts(&f, "unknown");
				}
				if (fs->show_addrs) {
					kf_buf_puts(&f, " <");
					kf_buf_puts(&f, pc);
					kf_buf_puts(&f, ">");
				}
				kf_buf_put(&f, "]", 1);
				tidy(out, kf_buf_cstr(&f), f.len, java, true);
				kf_buf_fini(&f);
			} else {
				tidy(out, raw + fstart, flen, java, true);
			}
			/* annotations */
			{
				const char *ft = out->p ? out->p + before : "";
				size_t fl = out->len - before;

				if (npieces > 0) {
					if (!contains(ft, fl, "_[i]"))
						kf_buf_puts(out, "_[i]");
				} else if ((fs->suffixes & KF_SUFFIX_KERNEL) &&
					   ((mlen && mod[0] == '[') ||
					    ends_with(mod, mlen, "vmlinux")) &&
					   !contains(mod, mlen, "unknown")) {
					kf_buf_puts(out, "_[k]");
				} else if ((fs->suffixes & KF_SUFFIX_JIT) &&
					   is_perf_map_name(mod, mlen)) {
					if (!contains(ft, fl, "_[j]"))
						kf_buf_puts(out, "_[j]");
				}
			}
			npieces++;
		}
	}
}

/* ---- one symbol frame's text ------------------------------------------------------ */

/* --srcline's suffix: ":file:line" (';' in a path would split the frame) */
static void put_srcline(struct kf_buf *out, const char *file, uint32_t line)
{
	const char *c;

	kf_buf_put(out, ":", 1);
	for (c = file; *c; c++)
		kf_buf_put(out, *c == ';' ? ":" : c, 1);
	kf_buf_printf(out, ":%d", (int)line);
}

/* An unnamed frame: [module], [unknown], or why the module's names cannot
 * be trusted. */
static void put_unnamed(const struct kf_fold_style *fs, const struct kf_namer *n,
			const struct kf_symframe *sf, struct kf_buf *out)
{
	kf_buf_put(out, "[", 1);
	if (sf->module) {
		const char *c;

		/* the module's own name: not cut at '(' like a symbol */
		for (c = kf_modules_at(n->modules, sf->module)->base; *c; c++)
			kf_buf_put(out, *c == ';' ? ":" : c, 1);
		switch (sf->status) {
		case KF_DSO_MISMATCH:
			kf_buf_puts(out, " (build-id mismatch)");
			break;
		case KF_DSO_CHANGED:
			kf_buf_puts(out, " (changed since recording)");
			break;
		case KF_DSO_NOT_RECORDED:
			kf_buf_puts(out, " (not the recorded file)");
			break;
		default:
			break;
		}
	} else {
		kf_buf_puts(out, "unknown");
	}
	if (fs->show_addrs)
		kf_buf_printf(out, " <%" PRIx64 ">", sf->addr);
	kf_buf_put(out, "]", 1);
}

/* kfold's own text of one symbol frame. */
static void fold_own(const struct kf_fold_style *fs, const struct kf_namer *n,
		     const struct kf_symframe *sf, bool java, struct kf_buf *out)
{
	size_t before = out->len;
	bool dwarf = sf->flags & KF_SYMF_DWARF;

	if (sf->kind == KF_SYM_TRUNCATED) {
		kf_buf_puts(out, "[truncated]");
		return;
	}
	if (sf->name) {
		const char *nm = kf_strtab_get(&n->strings, sf->name);

		/* a perf map's names are free text (a JIT may write a
		 * signature): cut like perf's; a demangled or DWARF name has
		 * no argument list to cut */
		tidy(out, nm, strlen(nm), java, sf->kind == KF_SYM_JIT && !dwarf);
	}
	if (out->len == before) {
		if (dwarf)
			kf_buf_puts(out, "[unknown]");   /* a link without a name */
		else
			put_unnamed(fs, n, sf, out);
	}
	if (fs->srcline && (sf->flags & KF_SYMF_FILE))   /* DWARF, a jitdump */
		put_srcline(out, kf_strtab_get(&n->strings, sf->file), sf->line);
	if ((fs->suffixes & KF_SUFFIX_KERNEL) && sf->kind == KF_SYM_KERNEL)
		kf_buf_puts(out, "_[k]");
	else if ((fs->suffixes & KF_SUFFIX_JIT) && sf->kind == KF_SYM_JIT)
		kf_buf_puts(out, "_[j]");
	else if ((fs->suffixes & KF_SUFFIX_STITCHED) && (sf->flags & KF_SYMF_STITCHED))
		kf_buf_puts(out, "_[s]");
}

/* perf_script_line_text: the line perf script prints for the frame,
 * folded. */
static void fold_perf(const struct kf_fold_style *fs, const struct kf_namer *n,
		      const struct kf_symframe *sf, bool java, struct kf_buf *out)
{
	const struct kf_module *mod = kf_modules_at(n->modules, sf->module);
	struct kf_buf line;
	char pc[32];

	snprintf(pc, sizeof(pc), "%" PRIx64, sf->addr);
	kf_buf_init(&line);
	if (sf->flags & KF_SYMF_INLINED) {
		kf_buf_puts(&line, kf_strtab_get(&n->strings, sf->name));
		kf_buf_puts(&line, "+0x0 (inlined)");
	} else {
		if (sf->name) {
			kf_buf_puts(&line, kf_strtab_get(&n->strings, sf->name));
			kf_buf_printf(&line, "+0x%" PRIx64, sf->offset);
		} else {
			kf_buf_puts(&line, "[unknown]");
		}
		kf_buf_puts(&line, " (");
		kf_buf_puts(&line, sf->module && mod->name[0] ? mod->name : "[unknown]");
		kf_buf_puts(&line, ")");
	}
	collapse_line(fs, out, pc, kf_buf_cstr(&line), line.len, java);
	if (line.oom)
		out->oom = true;
	kf_buf_fini(&line);
}

void kf_fold_symframe(const struct kf_fold_style *fs, const struct kf_namer *n,
		      const struct kf_symframe *sf, bool java, struct kf_buf *out)
{
	if (fs->pol->perf_script_line_text)
		fold_perf(fs, n, sf, java, out);
	else
		fold_own(fs, n, sf, java, out);
}

/* ---- frame texts, cached ------------------------------------------------------------ */

int kf_fold_texts_init(struct kf_fold_texts *ft, struct kf_namer *namer,
		       const struct kf_fold_style *fs)
{
	memset(ft, 0, sizeof(*ft));
	ft->namer = namer;
	ft->fs = fs;
	kf_buf_init(&ft->tmp);
	kf_buf_init(&ft->tmp2);
	return kf_strtab_init(&ft->texts) ? 0 : KF_ENOMEM;
}

/* Waits for the numbering started ahead (if any) and drops it. */
static void drop_ahead(struct kf_fold_texts *ft)
{
	if (ft->ahead) {
		kf_frameids_finish(ft->ahead);
		free(ft->ahead);
		ft->ahead = NULL;
	}
}

/* The numbering started ahead for st, not taken yet; NULL if none. */
static struct kf_frameids *ahead_of(const struct kf_fold_texts *ft,
				    const struct kf_stacks *st)
{
	return ft->ahead && ft->ahead->st == st ? ft->ahead : NULL;
}

void kf_fold_texts_fini(struct kf_fold_texts *ft)
{
	drop_ahead(ft);
	kf_strtab_fini(&ft->texts);
	free(ft->text[0]);
	free(ft->text[1]);
	kf_buf_fini(&ft->tmp);
	kf_buf_fini(&ft->tmp2);
	memset(ft, 0, sizeof(*ft));
}

/* Room in *v (capacity *cap) for index i, the new entries 0. */
static bool grow_zeroed(uint32_t **v, size_t *cap, uint32_t i)
{
	return kf_grow_zeroed((void **)v, cap, (size_t)i + 1, sizeof(**v));
}

static int intern_tmp(struct kf_fold_texts *ft, struct kf_buf *b, uint32_t *id)
{
	if (b->oom || !kf_strtab_intern(&ft->texts, kf_buf_cstr(b), b->len, id))
		return KF_ENOMEM;
	return 0;
}

/* A frame of a stack with context markers whose text (or one of its ';'
 * pieces: an inline chain) reads like a marker gets " (file)" (no
 * symbol) or " (symbol)" before the piece's closing bracket, so the two
 * kinds never look alike. */
static bool reads_like_marker(const char *t)
{
	const char *p, *e;

	for (p = t;; p = e + 1) {
		e = strchr(p, ';');
		if (!e)
			e = p + strlen(p);
		if (kf_ctx_marker_like(p, (size_t)(e - p)))
			return true;
		if (!*e)
			return false;
	}
}

static int unmark(struct kf_fold_texts *ft, const struct kf_frame *f, uint32_t *id)
{
	const char *t, *p, *e;
	struct kf_buf *b = &ft->tmp2;

	t = kf_strtab_get(&ft->texts, *id);
	if (!reads_like_marker(t))
		return 0;
	b->len = 0;
	for (p = t;; p = e + 1) {
		e = strchr(p, ';');
		if (!e)
			e = p + strlen(p);
		if (kf_ctx_marker_like(p, (size_t)(e - p))) {
			kf_buf_put(b, p, (size_t)(e - p) - 1);
			kf_buf_puts(b, kf_namer_symbol(ft->namer, f) ? " (symbol)]" : " (file)]");
		} else {
			kf_buf_put(b, p, (size_t)(e - p));
		}
		if (!*e)
			break;
		kf_buf_put(b, ";", 1);
	}
	return intern_tmp(ft, b, id);
}

/* kf_fold_text_id, with the namer entry the frame was named by into
 * *entry (UINT32_MAX for a marker: kf_fold_node_entry's) */
static int text_id(struct kf_fold_texts *ft, const struct kf_frame *fin, bool java,
		   uint32_t *id, uint32_t *entry)
{
	struct kf_frame f = *fin;
	const struct kf_symframe *sf;
	size_t n, i;
	int r;

	*entry = UINT32_MAX;
	f.flags &= ~(uint32_t)KF_FRAME_UNMARKED;
	if (f.flags & KF_FRAME_PSEUDO) {
		ft->tmp.len = 0;
		kf_ctx_marker_text(&f, &ft->tmp);
		return intern_tmp(ft, &ft->tmp, id);
	}
	if (f.flags & KF_FRAME_ROOT)
		return KF_EINVAL;
	r = kf_namer_name(ft->namer, &f, entry);
	if (r)
		return r;
	if (!grow_zeroed(&ft->text[java], &ft->cap[java], *entry))
		return KF_ENOMEM;
	if (ft->text[java][*entry]) {
		*id = ft->text[java][*entry] - 1;
	} else {
		sf = kf_namer_frames(ft->namer, *entry, &n);
		ft->tmp.len = 0;
		for (i = 0; i < n; i++) {
			if (i > 0)
				kf_buf_put(&ft->tmp, ";", 1);
			kf_fold_symframe(ft->fs, ft->namer, &sf[i], java, &ft->tmp);
		}
		if ((r = intern_tmp(ft, &ft->tmp, id)))
			return r;
		ft->text[java][*entry] = *id + 1;
	}
	if (fin->flags & KF_FRAME_UNMARKED)
		return unmark(ft, &f, id);
	return 0;
}

int kf_fold_text_id(struct kf_fold_texts *ft, const struct kf_frame *f, bool java,
		    uint32_t *id)
{
	uint32_t entry;

	return text_id(ft, f, java, id, &entry);
}

/* ---- naming a trie's nodes ----------------------------------------------------
 *
 * A trie's nodes are named in id order (a parent before its children),
 * each under its root's Java tidying.  Many nodes share a frame; the
 * frames are numbered beside (frameids.h), and a node's text is looked
 * up by its frame's number and made (kf_fold_text_id) only at the
 * first node with that frame and tidying: the same calls of
 * kf_fold_text_id in the same order as naming every node makes, less
 * the repeats, which find what the first one made. */

struct node_namer {
	struct kf_frameids own, *ids;  /* ids: &own, or kf_fold_number_ahead's */
	bool *java_of;           /* per node: under a Java root */
	uint32_t *text[2];       /* per frame number: text id + 1, 0: not yet */
	size_t cap[2];
	uint32_t *entry;         /* per frame number: its namer entry, known
				    where a text[] is */
	size_t cap_entry;
};

int kf_fold_number_ahead(struct kf_fold_texts *ft, const struct kf_stacks *st,
			 unsigned jobs, struct kf_work_total *work)
{
	struct kf_frameids *f;
	int r;

	if (jobs <= 1 || ft->ahead)
		return 0;
	f = kf_calloc(1, sizeof(*f));
	if (!f)
		return KF_ENOMEM;
	if ((r = kf_frameids_start(f, st, jobs, work, NULL)) != 0) {
		free(f);
		return r;
	}
	ft->ahead = f;
	return 0;
}

uint32_t *kf_fold_name_array(struct kf_fold_texts *ft, const struct kf_stacks *st)
{
	struct kf_frameids *f = ahead_of(ft, st);

	if (f && f->own_id) {
		f->own_id = false;
		return f->id;
	}
	return kf_calloc(st->n ? st->n : 1, sizeof(uint32_t));
}

void kf_fold_name_array_free(struct kf_fold_texts *ft, uint32_t *text)
{
	if (text && ft->ahead && ft->ahead->id == text)
		drop_ahead(ft);
	free(text);
}

/* ids: NULL, or the array node_namer_text will write the nodes' texts
 * to (the numbering writes there first, unless ft holds st's numbering
 * started ahead, which is taken instead) */
static int node_namer_start(struct node_namer *nn, struct kf_fold_texts *ft,
			    const struct kf_stacks *st, unsigned jobs,
			    struct kf_work_total *work, uint32_t *ids)
{
	memset(nn, 0, sizeof(*nn));
	kf_namer_room(ft->namer, st->n);   /* a frame a node at most */
	nn->java_of = kf_calloc(st->n ? st->n : 1, sizeof(*nn->java_of));
	if (!nn->java_of)
		return KF_ENOMEM;
	if ((nn->ids = ahead_of(ft, st)) != NULL) {
		ft->ahead = NULL;
		return 0;
	}
	nn->ids = &nn->own;
	return kf_frameids_start(&nn->own, st, jobs, work, ids);
}

static void node_namer_fini(struct node_namer *nn)
{
	if (nn->ids && nn->ids->id)
		kf_frameids_finish(nn->ids);
	if (nn->ids != &nn->own)
		free(nn->ids);
	free(nn->java_of);
	free(nn->text[0]);
	free(nn->text[1]);
	free(nn->entry);
}

/* Node x's text into *id and its namer entry into *entry (as
 * kf_fold_node_entry gives it), x > 0 being the next node in id order
 * after the ones asked for before.  For a root, whose text kf_fold_root
 * makes, *id is left as it is: only its Java tidying is set here. */
static int node_namer_text(struct node_namer *nn, struct kf_fold_texts *ft,
			   const struct kf_stacks *st, const struct kf_roots *roots,
			   const struct kf_strtab *comms, size_t x, uint32_t *id,
			   uint32_t *entry)
{
	const struct kf_node *nd = &st->nodes[x];
	uint32_t fid;
	bool java;
	int r;

	*entry = UINT32_MAX;
	if (!nd->parent) {
		nn->java_of[x] = kf_fold_root_java(comms, kf_roots_get(roots, nd->frame.root));
		return 0;
	}
	java = nn->java_of[x] = nn->java_of[nd->parent];
	if (!kf_frameids_get(nn->ids, x, &fid))
		return KF_ENOMEM;
	if (!grow_zeroed(&nn->text[java], &nn->cap[java], fid) ||
	    !grow_zeroed(&nn->entry, &nn->cap_entry, fid))
		return KF_ENOMEM;
	if (nn->text[java][fid]) {
		*id = nn->text[java][fid] - 1;
		*entry = nn->entry[fid];
		return 0;
	}
	if ((r = text_id(ft, &nd->frame, java, id, entry)) != 0)
		return r;
	nn->text[java][fid] = *id + 1;
	nn->entry[fid] = *entry;
	return 0;
}

int kf_fold_name_nodes(struct kf_fold_texts *ft, const struct kf_stacks *st,
		       const struct kf_roots *roots, const struct kf_strtab *comms,
		       unsigned jobs, struct kf_work_total *work, uint32_t *text,
		       uint32_t *entry)
{
	struct node_namer nn;
	size_t i;
	int r;

	r = node_namer_start(&nn, ft, st, jobs, work, text);
	for (i = 1; i < st->n && !r; i++) {
		uint32_t id = 0, e;

		r = node_namer_text(&nn, ft, st, roots, comms, i, &id, &e);
		if (text)
			text[i] = id;
		if (entry)
			entry[i] = e;
	}
	node_namer_fini(&nn);
	return r;
}

/* Node x's symbol frames (or its root or marker frame) into o[0..c): c is
 * what kf_namer_frames gave for x's entry (1 for a root or marker). */
static int node_frames(struct kf_fold_texts *ft, const struct kf_stacks *st,
		       const struct kf_roots *roots, const struct kf_strtab *comms,
		       uint32_t x, bool java, const struct kf_symframe *sf, size_t c,
		       struct kf_fold_frame *o)
{
	const struct kf_frame *f = &st->nodes[x].frame;
	size_t k;
	int r;

	for (k = 0; k < c; k++, o++) {
		memset(o, 0, sizeof(*o));
		o->node = x;
		ft->tmp.len = 0;
		if (sf) {
			o->sf = sf[k];
			kf_fold_symframe(ft->fs, ft->namer, &sf[k], java, &ft->tmp);
		} else if (f->flags & KF_FRAME_ROOT) {
			o->sf.kind = KF_SYM_ROOT;
			kf_fold_root(ft->fs, comms, kf_roots_get(roots, f->root), &ft->tmp);
		} else {
			o->sf.kind = KF_SYM_MARKER;
			o->sf.addr = f->addr;
			kf_ctx_marker_text(f, &ft->tmp);
		}
		if ((r = intern_tmp(ft, &ft->tmp, &o->text)))
			return r;
	}
	return 0;
}

/* Names node x: its namer entry's symbol frames and how many (*sf NULL
 * and *c 1 for a root or marker). */
static int node_symframes(struct kf_fold_texts *ft, const struct kf_frame *f,
			  const struct kf_symframe **sf, size_t *c)
{
	struct kf_frame g = *f;
	uint32_t entry;
	int r;

	*sf = NULL;
	*c = 1;
	if (f->flags & (KF_FRAME_ROOT | KF_FRAME_PSEUDO))
		return 0;
	g.flags &= ~(uint32_t)KF_FRAME_UNMARKED;
	if ((r = kf_namer_name(ft->namer, &g, &entry)))
		return r;
	*sf = kf_namer_frames(ft->namer, entry, c);
	return 0;
}

int kf_fold_stack_frames(struct kf_fold_texts *ft, const struct kf_stacks *st,
			 const struct kf_roots *roots, const struct kf_strtab *comms,
			 uint32_t node, struct kf_fold_frame **v, size_t *nv, size_t *cap)
{
	size_t len = 0, at;
	uint32_t x, root = 0;
	bool java;

	/* how many: the path's frames, each one or more symbol frames */
	for (x = node; x; x = st->nodes[x].parent) {
		const struct kf_symframe *sf;
		size_t c;
		int r;

		KF_WORK(1);
		if ((r = node_symframes(ft, &st->nodes[x].frame, &sf, &c)))
			return r;
		len += c;
		root = x;
	}
	if (!root)
		return KF_EINVAL;
	java = kf_fold_root_java(comms, kf_roots_get(roots, st->nodes[root].frame.root));
	if (!kf_grow((void **)v, cap, len ? len : 1, sizeof(**v)))
		return KF_ENOMEM;
	at = len;
	for (x = node; x; x = st->nodes[x].parent) {
		const struct kf_symframe *sf;
		size_t c;
		int r;

		if ((r = node_symframes(ft, &st->nodes[x].frame, &sf, &c)))
			return r;
		at -= c;
		if ((r = node_frames(ft, st, roots, comms, x, java, sf, c, *v + at)))
			return r;
	}
	*nv = len;
	return 0;
}

int kf_fold_node_entry(struct kf_fold_texts *ft, const struct kf_stacks *st, uint32_t node,
		       uint32_t *entry)
{
	const struct kf_frame *f;
	struct kf_frame g;

	*entry = UINT32_MAX;
	if (!node || node >= st->n)
		return KF_EINVAL;
	f = &st->nodes[node].frame;
	if (f->flags & (KF_FRAME_ROOT | KF_FRAME_PSEUDO))
		return 0;
	/* as node_symframes names it */
	g = *f;
	g.flags &= ~(uint32_t)KF_FRAME_UNMARKED;
	return kf_namer_name(ft->namer, &g, entry);
}

bool kf_fold_entry_text(const struct kf_fold_texts *ft, uint32_t entry, bool java,
			const char **text)
{
	if (entry >= ft->cap[java] || !ft->text[java][entry])
		return false;
	*text = kf_strtab_get(&ft->texts, ft->text[java][entry] - 1);
	return true;
}

int kf_fold_entry_frames(struct kf_fold_texts *ft, uint32_t node, uint32_t entry,
			 struct kf_fold_frame **v, size_t *nv, size_t *cap)
{
	const struct kf_symframe *sf;
	size_t c, k;

	if (entry >= ft->namer->n)
		return KF_EINVAL;
	sf = kf_namer_frames(ft->namer, entry, &c);
	if (!kf_grow((void **)v, cap, c ? c : 1, sizeof(**v)))
		return KF_ENOMEM;
	for (k = 0; k < c; k++) {
		memset(&(*v)[k], 0, sizeof((*v)[k]));
		(*v)[k].sf = sf[k];
		(*v)[k].node = node;
	}
	*nv = c;
	return 0;
}

int kf_fold_node_frames(struct kf_fold_texts *ft, const struct kf_stacks *st,
			const struct kf_roots *roots, const struct kf_strtab *comms,
			uint32_t node, bool java, struct kf_fold_frame **v, size_t *nv,
			size_t *cap)
{
	const struct kf_symframe *sf;
	size_t c;
	int r;

	if (!node || node >= st->n)
		return KF_EINVAL;
	if ((r = node_symframes(ft, &st->nodes[node].frame, &sf, &c)))
		return r;
	if (!kf_grow((void **)v, cap, c, sizeof(**v)))
		return KF_ENOMEM;
	if ((r = node_frames(ft, st, roots, comms, node, java, sf, c, *v)))
		return r;
	*nv = c;
	return 0;
}

/* ---- roots and perf script's header line ------------------------------------ */

static bool is_ws(char c)
{
	/* perl's \s */
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
	       c == '\v';
}

size_t kf_collapse_header_comm(const char *s, size_t len)
{
	size_t e;

	if (len < 2 || is_ws(s[0]) || s[0] == '\n')
		return 0;
	for (e = 2; e < len; e++) {
		size_t p = e;

		if (s[e - 1] == '\n')
			return 0;   /* '.' does not match a newline */
		if (!is_ws(s[p]))
			continue;
		while (p < len && is_ws(s[p]))
			p++;
		if (p >= len || !isdigit((unsigned char)s[p]))
			continue;
		while (p < len && isdigit((unsigned char)s[p]))
			p++;
		while (p < len && s[p] == '/')
			p++;
		while (p < len && isdigit((unsigned char)s[p]))
			p++;
		if (p < len && is_ws(s[p]))
			return e;
	}
	return 0;
}

void kf_fold_root_comm(const struct kf_fold_style *fs, const struct kf_strtab *comms,
		       const struct kf_stack_root *root, struct kf_buf *out)
{
	const char *c = kf_strtab_get(comms, root->comm);
	size_t before = out->len;

	/* perf_script_line_text: the comm is what stackcollapse's regex
	 * took from the header line; only its spaces change */
	for (; *c; c++) {
		char ch = *c == ' ' ? '_' : *c;

		if (!fs->pol->perf_script_line_text && (ch == ';' || ch == '\n'))
			ch = ch == ';' ? ':' : '_';
		kf_buf_put(out, &ch, 1);
	}
	if (out->len == before && !fs->pol->perf_script_line_text)
		kf_buf_puts(out, "[unknown]");
}

void kf_fold_root(const struct kf_fold_style *fs, const struct kf_strtab *comms,
		  const struct kf_stack_root *root, struct kf_buf *out)
{
	kf_fold_root_comm(fs, comms, root, out);
	if (fs->root_mode == KF_ROOT_PID)
		kf_buf_printf(out, "-%d", (int)root->pid);
	else if (fs->root_mode == KF_ROOT_TID)
		kf_buf_printf(out, "-%d/%d", (int)root->pid, (int)root->tid);
	if (root->cgroup) {
		const char *c;

		/* a path is free text: ';' would split the frame */
		kf_buf_puts(out, ";[cgroup:");
		for (c = kf_strtab_get(comms, root->cgroup - 1); *c; c++)
			kf_buf_put(out, *c == ';' ? ":" : *c == '\n' ? "_" : c, 1);
		kf_buf_put(out, "]", 1);
	}
	if (root->offcpu)
		kf_buf_printf(out, ";[off-cpu:%s]", kf_offcpu_state_name(
				      (enum kf_offcpu_state)(root->offcpu - 1)));
	if (root->waker) {
		struct kf_stack_root w = *root;

		w.comm = root->waker - 1;
		kf_buf_puts(out, ";[woken-by];");
		kf_fold_root_comm(fs, comms, &w, out);
	}
}

bool kf_fold_root_java(const struct kf_strtab *comms, const struct kf_stack_root *root)
{
	/* the root's text starts with the comm's first bytes as they are
	 * (only spaces, ';' and newlines change) */
	return strncmp(kf_strtab_get(comms, root->comm), "java", 4) == 0;
}

bool kf_collapse_header_event(const char *line, size_t len,
			      const char **event, size_t *event_len,
			      const char **period, size_t *period_len)
{
	size_t end = len, tok, p;

	/* (\S+):\s*$ : the last token, which must end with ':' */
	while (end > 0 && is_ws(line[end - 1]))
		end--;
	if (end < 2 || line[end - 1] != ':')
		return false;
	tok = end - 1;
	while (tok > 0 && !is_ws(line[tok - 1]))
		tok--;
	if (tok == end - 1 || tok == 0)
		return false;   /* empty (\S+), or no \s+ before it */
	/* the leftmost ':' before the token whose tail is \s*(\d+)*\s+ */
	for (p = 0; p < tok; p++) {
		size_t q = p + 1, ds, de;

		if (line[p] != ':')
			continue;
		while (q < tok && is_ws(line[q]))
			q++;
		ds = q;
		while (q < tok && isdigit((unsigned char)line[q]))
			q++;
		de = q;
		if (q == tok) {
			/* all whitespace (and digits directly before the
			 * token would need \s+ after them) */
			if (de == ds && tok > p + 1) {
				*period = NULL;
				*period_len = 0;
				*event = line + tok;
				*event_len = end - 1 - tok;
				return true;
			}
			continue;
		}
		if (!is_ws(line[q]))
			continue;
		while (q < tok && is_ws(line[q]))
			q++;
		if (q != tok)
			continue;
		*period = de > ds ? line + ds : NULL;
		*period_len = de - ds;
		*event = line + tok;
		*event_len = end - 1 - tok;
		return true;
	}
	return false;
}

/* ---- entry --------------------------------------------------------------------- */

int kf_fold_name_derived(struct kf_fold_texts *ft, const struct kf_stacks *st,
			 const uint32_t *origin, const uint32_t *from, uint32_t *text)
{
	uint32_t *like = NULL;   /* per text id: 0 not known, 1 plain, 2 reads
				    like a marker */
	size_t cap_like = 0, i;
	int r = 0;

	for (i = 1; i < st->n && !r; i++) {
		const struct kf_node *nd = &st->nodes[i];
		uint32_t t;

		KF_WORK(1);
		if (!nd->parent)
			continue;   /* a root: the emitter makes its text */
		if (!origin[i]) {
			/* a pseudo-frame of the rewrite's: few kinds */
			r = kf_fold_text_id(ft, &nd->frame, false, &text[i]);
			continue;
		}
		t = from[origin[i]];
		if (nd->frame.flags & KF_FRAME_UNMARKED) {
			if (!grow_zeroed(&like, &cap_like, t)) {
				r = KF_ENOMEM;
				break;
			}
			if (!like[t])
				like[t] = reads_like_marker(kf_strtab_get(&ft->texts, t)) ? 2 : 1;
			/* as kf_fold_text_id makes it for this frame (its
			 * symbol decides the mark) */
			if (like[t] == 2) {
				struct kf_frame f = nd->frame;

				f.flags &= ~(uint32_t)KF_FRAME_UNMARKED;
				if ((r = unmark(ft, &f, &t)) != 0)
					break;
			}
		}
		text[i] = t;
	}
	free(like);
	return r;
}

int kf_emit_folded(const struct kf_stacks *st, struct kf_fold_texts *ft,
		   const struct kf_roots *roots, const struct kf_strtab *comms,
		   const uint32_t *text, unsigned jobs, bool may_split,
		   struct kf_work_total *work, FILE *out, uint64_t *lines)
{
	struct kf_stacks pt;      /* jobs > 1: the piece trie, built beside */
	struct kf_stacks pt0;     /* with text given, the part built here */
	struct ptb b, b0;
	uint8_t *part = NULL;     /* with pt0: per node, 1 on the worker */
	struct kf_chunkq q;
	struct pieces pc;
	bool have_pt = false, side = false, have_pt0 = false;
	struct em e;
	struct lvlbufs bufs;
	uint32_t *rootv = NULL;
	struct node_namer nn;
	size_t n_roots = 0, cap_roots = 0, i;
	bool separable = true, pieces = false;
	int r = 0;

	memset(&e, 0, sizeof(e));
	memset(&nn, 0, sizeof(nn));
	memset(&bufs, 0, sizeof(bufs));
	e.bufs = &bufs;
	e.st = st;
	e.ft = ft;
	e.out = out;
	kf_buf_init(&e.line);
	if (!kf_strtab_init(&e.rtexts)) {
		r = KF_ENOMEM;
		goto out;
	}
	/* (the array the numbering started ahead writes to, if any) */
	e.text = text ? kf_calloc(st->n, sizeof(*e.text)) : kf_fold_name_array(ft, st);
	if (!e.text) {
		r = KF_ENOMEM;
		goto out;
	}
	r = link_nodes(&e, &rootv, &n_roots, &cap_roots);
	if (r)
		goto out;
	/* each root's text; then every other frame, in id order (the node
	 * array is read front to back, and a parent comes before its
	 * children), under its root's Java tidying (it depends on the
	 * root's comm) */
	for (i = 0; i < n_roots && !r; i++) {
		uint32_t root = rootv[i];
		const struct kf_stack_root *rd = kf_roots_get(roots, st->nodes[root].frame.root);

		e.line.len = 0;
		if (e.line.p)
			e.line.p[0] = '\0';
		kf_fold_root(ft->fs, comms, rd, &e.line);
		if (e.line.oom || !kf_strtab_intern(&e.rtexts, kf_buf_cstr(&e.line), e.line.len,
						    &e.text[root])) {
			r = KF_ENOMEM;
			break;
		}
		if (strchr(kf_buf_cstr(&e.line), ';'))
			separable = false;
	}
	/* with jobs > 1 and frames that may be inline chains, the piece
	 * trie is built beside the naming (see above); if the worker cannot
	 * be had, the one-thread path below */
	memset(&q, 0, sizeof(q));
	memset(&pc, 0, sizeof(pc));
	if (jobs > 1 && separable && may_split && kf_stacks_init(&pt) == 0) {
		have_pt = true;
		kf_stacks_room(&pt, st->n);   /* about a node a node */
		kf_map64_init(&pc.at);
		kf_buf_init(&pc.copy);
		if (ptb_init(&b, st, &pt, NULL) == 0 && kf_chunkq_start(&q, consume, &b, work) == 0)
			side = true;
	}
	if (side && text && !r && kf_stacks_init(&pt0) == 0) {
		have_pt0 = true;
		if (ptb_init(&b0, st, &pt0, b.map) != 0 || !(part = split_parts(&e)))
			r = KF_ENOMEM;
	}
	if (!r && !text)
		r = node_namer_start(&nn, ft, st, jobs, work, e.text);
	for (i = 1; i < st->n && !r; i++) {
		uint32_t p = st->nodes[i].parent;
		const uint32_t *v = &e.text[i];
		uint32_t n = 1, entry;
		bool semi = false;

		/* a root's text is its id in rtexts, made above */
		if (!text)
			r = node_namer_text(&nn, ft, st, roots, comms, i, &e.text[i], &entry);
		else if (p)
			e.text[i] = text[i];
		if (p) {
			KF_WORK(1);
			if (!r && side)
				r = pieces_of(&e, &pc, e.text[i], &v, &n, &semi);
			pieces = pieces || semi;
		}
		if (r || !side)
			continue;
		if (part && !part[i])
			ptb_add(&b0, (uint32_t)i, v, n);
		else if (!queue_node(&q, (uint32_t)i, v, n))
			r = KF_ENOMEM;
	}
	if (side) {
		if (part && !r) {
			ptb_flush(&b0);
			r = b0.err;
		}
		if (have_pt0) {
			/* what the joining does not need, freed first */
			ptb_fini(&b0);
			kf_stacks_drop_index(&pt0);
			free(part);
			part = NULL;
		}
		kf_chunkq_finish(&q);
		if (!r)
			ptb_flush(&b);
		if (!r)
			r = b.err;
		if (!r && have_pt0)
			r = graft(&pt, &pt0);
		if (have_pt0) {
			kf_stacks_fini(&pt0);
			have_pt0 = false;
		}
	}
	if (r)
		goto out;
	e.line.len = 0;   /* it held the roots' texts */
	if (e.line.p)
		e.line.p[0] = '\0';
	/* frames with ';' are split into a trie of their own (which interns
	 * the pieces); a root (a comm) with ';' is only handled by sorting
	 * whole lines */
	for (i = 1; i < st->n && !pieces && !side; i++)
		if (st->nodes[i].parent && strchr(text_of(&e, (uint32_t)i), ';'))
			pieces = true;
	r = !separable ? sorted_lines(&e) : !pieces ? level_top(&e, rootv, n_roots, jobs) :
	    side ? emit_trie(&e, &pt, jobs) : emit_pieces(&e, jobs);
	if (!r && fflush(out) != 0)
		r = KF_EIO;
out:
	if (have_pt0) {
		ptb_fini(&b0);
		kf_stacks_fini(&pt0);
	}
	free(part);
	if (have_pt) {
		kf_chunkq_finish(&q);   /* after an error too: the worker ends */
		ptb_fini(&b);
		free(pc.ids);
		kf_map64_fini(&pc.at);
		kf_buf_fini(&pc.copy);
		kf_stacks_fini(&pt);
	}
	if (lines)
		*lines = e.lines;
	/* first: after an error its thread may still be writing to e.text
	 * (or the one started ahead, not taken: kf_fold_name_array_free) */
	node_namer_fini(&nn);
	kf_fold_name_array_free(ft, e.text);
	free(e.first);
	free(e.next);
	free(rootv);
	lvlbufs_fini(&bufs);
	kf_buf_fini(&e.line);
	kf_strtab_fini(&e.rtexts);
	return r ? r : e.err;
}
