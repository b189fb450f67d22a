/* context.c - classify each distinct stack's kernel part; rewrite stacks
 * with context pseudo-frames. */
#include "context.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "kfold.h"

/* a looked-up symbol that is not there */
static const char unnamed;

/* An entry index of the classifier's names[] (which starts `off` frames
 * leafward of the stack's kernel part) as an index of that kernel part;
 * "no frame" stays n_kernel. */
static void shift_level(struct kf_ctx_level *l, size_t ncls, size_t off, size_t nk)
{
	l->entry = l->entry >= ncls ? (uint32_t)nk : (uint32_t)(l->entry + off);
}

/* Classifies a stack's kernel part: names[0 .. nk), the leaf first
 * (NULL: unnamed); dup: names[0] is the same address as names[1] (some
 * kernels store the first entry twice: tracepoints, software events),
 * classified once.  The levels' entries index names[]. */
static void classify(const struct kf_ctx_rules *rules, const char *const *names,
		     size_t nk, bool dup, const struct kf_stack_root *rootd,
		     struct kf_ctx *ctx)
{
	size_t off = dup ? 1 : 0, ncls = nk - off, i;
	unsigned in = 0;
	int k;

	if (rootd->ctx & KF_ROOT_CTX_USER_PART)
		in |= KF_CTX_IN_USER_PART;
	if (rootd->ctx & KF_ROOT_CTX_TRUNCATED)
		in |= KF_CTX_IN_TRUNCATED;
	if (rootd->ctx & KF_ROOT_CTX_NO_CHAIN)
		in |= KF_CTX_IN_NO_CHAIN;
	if (rootd->ctx & KF_ROOT_CTX_KTHREAD)
		in |= KF_CTX_IN_KTHREAD;
	if (rootd->pid == 0)
		in |= KF_CTX_IN_PID0;
	kf_ctx_classify(rules, names + off, ncls, rootd->cpumode, in, ctx);
	/* without kernel symbols no rule can apply: say so rather than
	 * guess why the chain told nothing */
	if (ctx->verdict == KF_CTX_VERDICT_UNKNOWN && ncls) {
		for (i = 0; i < ncls && !names[off + i]; i++)
			;
		if (i == ncls)
			ctx->why = KF_CTX_WHY_NO_SYMBOLS;
	}
	shift_level(&ctx->leaf, ncls, off, nk);
	shift_level(&ctx->base, ncls, off, nk);
	for (k = 0; k < ctx->n_nest; k++)
		shift_level(&ctx->nest[k], ncls, off, nk);
}

/* ---- kernel parts ---------------------------------------------------------------
 *
 * The same kernel part (the same frames from the kernel entry to the
 * leaf) ends thousands of stacks that differ in their user parts.  So
 * the kernel parts are interned first, in a trie of their own (a "kpart":
 * its parent kpart and its frame), and a stack is classified through its
 * kpart: each kpart's frames are named once, and each distinct (kpart,
 * what the root tells the classifier) is classified once. */

struct kpart {
	struct kf_frame frame;
	uint32_t parent;         /* the kpart one frame rootward, 0 at the
				    kernel entry */
	uint32_t depth;          /* its kernel frames */
	const char *sym;         /* its frame's symbol: NULL not looked up,
				    &unnamed none */
};

struct kparts {
	struct kpart *p;         /* from 1 */
	size_t n, cap;
	uint32_t *slot;          /* open addressing: kpart ids, 0 empty */
	size_t nslot;            /* a power of two */
};

static uint64_t kpart_hash(uint32_t parent, const struct kf_frame *f)
{
	return kf_hash64(f->addr ^ kf_hash64((uint64_t)parent << 32 | f->module) ^
			 kf_hash64((uint64_t)f->flags + 1));
}

static bool kpart_grow_slots(struct kparts *kp)
{
	size_t nslot = kp->nslot ? kp->nslot * 2 : 1024, i, j;
	uint32_t *slot = kf_calloc(nslot, sizeof(*slot));

	if (!slot)
		return false;
	for (i = 1; i < kp->n; i++) {
		j = kpart_hash(kp->p[i].parent, &kp->p[i].frame) & (nslot - 1);
		while (slot[j])
			j = (j + 1) & (nslot - 1);
		slot[j] = (uint32_t)i;
	}
	free(kp->slot);
	kp->slot = slot;
	kp->nslot = nslot;
	return true;
}

/* The kpart of frame f below kpart parent (0: f is the entry), added if
 * new; 0 on ENOMEM. */
static uint32_t kpart_get(struct kparts *kp, uint32_t parent, const struct kf_frame *f)
{
	struct kpart *e;
	size_t j;
	uint32_t id;

	if (kp->n == 0)
		kp->n = 1;   /* id 0 is "none" */
	if ((kp->n + 1) * 2 > kp->nslot && !kpart_grow_slots(kp))
		return 0;
	j = kpart_hash(parent, f) & (kp->nslot - 1);
	for (; (id = kp->slot[j]) != 0; j = (j + 1) & (kp->nslot - 1))
		if (kp->p[id].parent == parent && kp->p[id].frame.addr == f->addr &&
		    kp->p[id].frame.module == f->module && kp->p[id].frame.flags == f->flags)
			return id;
	if (kp->n >= UINT32_MAX || !KF_GROW(kp->p, kp->cap, kp->n + 1))
		return 0;
	id = (uint32_t)kp->n++;
	e = &kp->p[id];
	e->frame = *f;
	e->parent = parent;
	e->depth = parent ? kp->p[parent].depth + 1 : 1;
	e->sym = NULL;
	kp->slot[j] = id;
	return id;
}

static void kparts_fini(struct kparts *kp)
{
	free(kp->p);
	free(kp->slot);
}

static const char *kpart_sym(struct kparts *kp, struct kf_namer *namer, uint32_t id)
{
	struct kpart *e = &kp->p[id];
	const char *s = e->sym;

	if (!s) {
		s = kf_namer_symbol(namer, &e->frame);
		e->sym = s ? s : &unnamed;
	}
	return s == &unnamed ? NULL : s;
}

/* A trie's kernel parts and their classifications. */
struct kclass {
	const struct kf_stacks *st;
	const struct kf_roots *roots;
	const struct kf_ctx_rules *rules;
	struct kf_namer *namer;
	struct kparts kp;
	uint32_t *kpart;         /* per node: its kpart (0: not a kernel
				    frame) */
	uint32_t *rootof;        /* per node: its root's node */
	/* what kclass_get made: the one part a walk does not share */
	struct kclass_memo {
		struct kf_map64 memo;    /* (kpart, root's bits) -> ctxs[] */
		struct kf_ctx *ctxs;
		size_t n_ctxs, cap_ctxs;
		const char **names;      /* one kpart's symbols, the leaf
					    first */
		size_t cap_names;
	} m;
};

static void kclass_memo_init(struct kclass_memo *m)
{
	memset(m, 0, sizeof(*m));
	kf_map64_init(&m->memo);
}

static void kclass_memo_fini(struct kclass_memo *m)
{
	free(m->ctxs);
	free(m->names);
	kf_map64_fini(&m->memo);
}

static void kclass_fini(struct kclass *kc)
{
	kparts_fini(&kc->kp);
	free(kc->kpart);
	free(kc->rootof);
	kclass_memo_fini(&kc->m);
}

/* One pass in node order (parents are older nodes) gives each node its
 * root and its kpart. */
static int kclass_init(struct kclass *kc, const struct kf_stacks *st,
		       const struct kf_roots *roots, struct kf_namer *namer,
		       const struct kf_ctx_rules *rules)
{
	size_t n = st->n ? st->n : 1, i;

	memset(kc, 0, sizeof(*kc));
	kc->st = st;
	kc->roots = roots;
	kc->rules = rules;
	kc->namer = namer;
	kclass_memo_init(&kc->m);
	kc->kpart = kf_calloc(n, sizeof(*kc->kpart));
	kc->rootof = kf_calloc(n, sizeof(*kc->rootof));
	if (!kc->kpart || !kc->rootof)
		return KF_ENOMEM;
	for (i = 1; i < st->n; i++) {
		const struct kf_node *nd = &st->nodes[i];
		uint32_t p = nd->parent;

		kc->rootof[i] = p ? kc->rootof[p] : (uint32_t)i;
		if (p && (nd->frame.flags & (KF_FRAME_KERNEL | KF_FRAME_PSEUDO)) ==
			 KF_FRAME_KERNEL) {
			kc->kpart[i] = kpart_get(&kc->kp, kc->kpart[p], &nd->frame);
			if (!kc->kpart[i])
				return KF_ENOMEM;
		}
	}
	return 0;
}

/* The kernel frames at the leaf end of the stack ending at node. */
static size_t kclass_depth(const struct kclass *kc, uint32_t node)
{
	uint32_t kid = kc->kpart[node];

	return kid ? kc->kp.p[kid].depth : 0;
}

/* The classification of the stack ending at node (valid until the next
 * call); NULL on ENOMEM. */
static const struct kf_ctx *kclass_get(struct kclass *kc, uint32_t node)
{
	const struct kf_stack_root *rootd =
		kf_roots_get(kc->roots, kc->st->nodes[kc->rootof[node]].frame.root);
	uint32_t kid = kc->kpart[node], idx, y;
	uint64_t key = (uint64_t)(kid + 1) << 16 | (uint64_t)rootd->ctx << 8 |
		       (uint64_t)(rootd->cpumode & 0x7f) << 1 | (rootd->pid == 0);
	size_t nk = kclass_depth(kc, node), i;
	struct kclass_memo *m = &kc->m;

	if (kf_map64_get(&m->memo, key, &idx))
		return &m->ctxs[idx];
	KF_WORK(nk + 1);
	if (!KF_GROW(m->names, m->cap_names, nk + 1) ||
	    !KF_GROW(m->ctxs, m->cap_ctxs, m->n_ctxs + 1))
		return NULL;
	for (i = 0, y = kid; i < nk; i++, y = kc->kp.p[y].parent)
		m->names[i] = kpart_sym(&kc->kp, kc->namer, y);
	/* some kernels store the first entry twice (tracepoints, software
	 * events): classify it once */
	classify(kc->rules, m->names, nk,
		 nk >= 2 && kc->kp.p[kid].frame.addr ==
			    kc->kp.p[kc->kp.p[kid].parent].frame.addr,
		 rootd, &m->ctxs[m->n_ctxs]);
	if (!kf_map64_put(&m->memo, key, (uint32_t)m->n_ctxs))
		return NULL;
	return &m->ctxs[m->n_ctxs++];
}

/* What every walk of a trie reads and none writes: the kernel parts and,
 * per node, its root, depth and symbol, all looked up before any walk
 * (the namer is not for threads to share). */
struct kf_ctx_prep {
	struct kclass kc;        /* its memo unused: each walk has its own */
	struct kf_namer *namer;  /* for kf_ctx_prepare_nodes's lookups */
	struct pnode {
		const char *sym;     /* its symbol, &unnamed for none (a
					kernel frame's is its kernel part's,
					named once per part) */
		uint32_t parent;     /* the trie's */
		uint32_t mod;        /* kf_ctx_stack.mods's */
	} *pn;                   /* per node, what the walk reads of it: a
				    frame new to the path is one miss here,
				    where the trie's node and a symbol
				    array were two */
	uint32_t *depth;         /* per node: frames above it */
	const struct kf_tsums *ts; /* NULL, or each node's threads */
};

void kf_ctx_prep_free(struct kf_ctx_prep *p)
{
	if (!p)
		return;
	kclass_fini(&p->kc);
	free(p->pn);
	free(p->depth);
	free(p);
}

int kf_ctx_prepare_begin(struct kf_ctx_prep **out, const struct kf_stacks *st,
			 const struct kf_roots *roots, struct kf_namer *namer,
			 const struct kf_ctx_rules *rules)
{
	size_t n = st->n ? st->n : 1, i, cap_ready = 0;
	struct kf_ctx_prep *p = kf_calloc(1, sizeof(*p));
	bool *ready = NULL;      /* per module id: made ready */
	int r = KF_ENOMEM;

	*out = NULL;
	if (!p)
		return KF_ENOMEM;
	p->namer = namer;
	p->depth = kf_calloc(n, sizeof(*p->depth));
	p->pn = kf_calloc(n, sizeof(*p->pn));
	if (kclass_init(&p->kc, st, roots, namer, rules) || !p->depth || !p->pn)
		goto out;
	/* the kernel parts' symbols now; the other frames' on any thread */
	for (i = 1; i < p->kc.kp.n; i++)
		(void)kpart_sym(&p->kc.kp, namer, (uint32_t)i);
	for (i = 1; i < st->n; i++) {
		const struct kf_frame *f = &st->nodes[i].frame;

		KF_WORK(1);
		if (p->kc.kpart[i] || (f->module < cap_ready && ready[f->module]))
			continue;
		if (f->module >= cap_ready) {
			size_t old = cap_ready;

			if (!KF_GROW(ready, cap_ready, (size_t)f->module + 1))
				goto out;
			memset(ready + old, 0, (cap_ready - old) * sizeof(*ready));
		}
		ready[f->module] = kf_namer_symbol_ready(namer, f);
	}
	p->kc.namer = NULL;      /* the kernel parts are named */
	*out = p;
	p = NULL;
	r = 0;
out:
	free(ready);
	kf_ctx_prep_free(p);
	return r;
}

void kf_ctx_prepare_threads(struct kf_ctx_prep *p, const struct kf_tsums *ts)
{
	p->ts = ts;
}

void kf_ctx_prepare_nodes(struct kf_ctx_prep *p)
{
	const struct kf_stacks *st = p->kc.st;
	size_t i;

	/* parents are always older nodes */
	for (i = 1; i < st->n; i++) {
		const struct kf_node *nd = &st->nodes[i];
		uint32_t kid = p->kc.kpart[i];
		const char *s;

		p->depth[i] = nd->parent ? p->depth[nd->parent] + 1 : 0;
		KF_WORK(1);
		if (kid)
			s = p->kc.kp.p[kid].sym;   /* named by _begin */
		else if (nd->frame.flags & KF_FRAME_ROOT)
			s = NULL;
		else
			s = kf_namer_symbol(p->namer, &nd->frame);
		p->pn[i].sym = s ? s : &unnamed;
		p->pn[i].parent = nd->parent;
		p->pn[i].mod = (nd->frame.flags & KF_FRAME_TRUNCATED) ? KF_CTX_MOD_CUT :
			       (nd->frame.flags & (KF_FRAME_NOMAP | KF_FRAME_ROOT)) ? 0 :
			       nd->frame.module;
	}
}


struct walk {
	const struct kf_ctx_prep *p;
	struct kclass kc;        /* p's, with a memo of this walk's own */
	uint32_t *path;          /* the last stack's, root first */
	const char **psyms;
	uint32_t *pmods;
	size_t n_path, cap_path, cap_psyms, cap_pmods;
};

int kf_ctx_walk_range(const struct kf_ctx_prep *p, size_t from, size_t to,
		      kf_ctx_visit_fn fn, void *payload)
{
	const struct kf_stacks *st = p->kc.st;
	size_t node;
	struct walk w;
	int r = 0;

	memset(&w, 0, sizeof(w));
	w.p = p;
	/* the shared parts by pointer, and a memo of its own */
	w.kc = p->kc;
	kclass_memo_init(&w.kc.m);
	if (from < 1)
		from = 1;
	for (node = from; node < to && node < st->n && !r; node++) {
		const struct kf_node *nd = &st->nodes[node];
		const struct kf_stack_root *rootd;
		struct kf_ctx_stack cs;
		size_t len, i;
		uint32_t x;

		if (nd->samples == 0 && nd->weight == 0)
			continue;
		len = (size_t)p->depth[node] + 1;
		if (!KF_GROW(w.path, w.cap_path, len) || !KF_GROW(w.psyms, w.cap_psyms, len) ||
		    !KF_GROW(w.pmods, w.cap_pmods, len)) {
			r = KF_ENOMEM;
			break;
		}
		/* the path up to where it meets the last stack's: node ids
		 * are in insertion order, so most stacks share all but their
		 * last few frames with the one before */
		for (x = (uint32_t)node, i = len; x; x = p->pn[x].parent) {
			const struct pnode *pn = &p->pn[x];

			i--;
			if (i < w.n_path && w.path[i] == x)
				break;
			KF_WORK(1);
			w.path[i] = x;
			w.psyms[i] = pn->sym == &unnamed ? NULL : pn->sym;
			w.pmods[i] = pn->mod;
		}
		w.n_path = len;
		rootd = kf_roots_get(w.kc.roots, st->nodes[w.path[0]].frame.root);
		cs.ctx = kclass_get(&w.kc, (uint32_t)node);
		if (!cs.ctx) {
			r = KF_ENOMEM;
			break;
		}
		cs.node = (uint32_t)node;
		cs.path = w.path;
		cs.n_path = len;
		cs.n_kernel = kclass_depth(&w.kc, (uint32_t)node);
		cs.syms = w.psyms;
		cs.mods = w.pmods;
		cs.weight = nd->weight;
		cs.samples = nd->samples;
		cs.pid = rootd->pid;
		cs.tid = rootd->tid;
		cs.ts = p->ts;
		cs.threads = NULL;
		cs.n_threads = 0;
		if (p->ts) {
			size_t k;

			cs.threads = kf_tsums_of(p->ts, (uint32_t)node, &cs.n_threads);
			cs.samples = cs.weight = 0;
			for (k = 0; k < cs.n_threads; k++) {
				const struct kf_tsum *t = &cs.threads[k];

				cs.samples += t->samples;   /* below 2^32 each */
				cs.weight = t->weight > UINT64_MAX - cs.weight ? UINT64_MAX :
					    cs.weight + t->weight;
			}
		}
		r = fn(payload, &cs);
	}
	kclass_memo_fini(&w.kc.m);
	free(w.path);
	free(w.psyms);
	free(w.pmods);
	return r;
}

void kf_ctx_label(const struct kf_ctx_level *l, bool with_name,
		  struct kf_buf *out)
{
	const char *sub = kf_ctx_sub_name(l->sub);

	kf_buf_puts(out, kf_ctx_class_name(l->cls));
	if (l->sub == KF_CTX_SUB_SYS_NAME) {
		if (with_name && l->name && l->name_len) {
			kf_buf_put(out, ":", 1);
			kf_buf_put(out, l->name, l->name_len);
		}
	} else if (*sub) {
		kf_buf_put(out, ":", 1);
		kf_buf_puts(out, sub);
	}
}

void kf_ctx_marker_text(const struct kf_frame *f, struct kf_buf *out)
{
	unsigned hi = (unsigned)(f->addr >> 8) & 0xffu, lo = (unsigned)f->addr & 0xffu;

	if (f->marker == KF_MARKER_CONTEXT) {
		struct kf_ctx_level l;

		memset(&l, 0, sizeof(l));
		l.cls = (uint8_t)hi;
		l.sub = (uint8_t)lo;
		kf_buf_put(out, "[", 1);
		kf_ctx_label(&l, false, out);
		kf_buf_put(out, "]", 1);
	} else if (f->marker == KF_MARKER_VERDICT) {
		/* "[unknown]" is the frame of an unmapped address: the
		 * unknown verdict says why instead */
		if (hi == KF_CTX_VERDICT_UNKNOWN)
			kf_buf_printf(out, "[unknown:%s]", lo ? kf_ctx_why_name(lo) : "no_rule");
		else
			kf_buf_printf(out, "[%s]", kf_ctx_verdict_name(hi));
	}
}

bool kf_ctx_marker_like(const char *t, size_t n)
{
	size_t w;
	unsigned k;

	if (n < 3 || t[0] != '[' || t[n - 1] != ']')
		return false;
	t++;
	n -= 2;
	if (memchr(t, ' ', n) || memchr(t, '[', n) || memchr(t, ']', n))
		return false;
	for (w = 0; w < n && t[w] != ':'; w++)
		;
	if (w == n && w == 7 && memcmp(t, "unknown", 7) == 0)
		return false;   /* an address outside every mapping */
	if (w == 4 && memcmp(t, "user", 4) == 0)
		return false;   /* user mode gets no marker */
	for (k = 0; k < KF_CTX_NCLASSES; k++) {
		const char *c = kf_ctx_class_name(k);

		if (strlen(c) == w && memcmp(c, t, w) == 0)
			return true;
	}
	for (k = 0; k < KF_CTX_NVERDICTS; k++) {
		const char *v = kf_ctx_verdict_name(k);

		if (strlen(v) == w && memcmp(v, t, w) == 0)
			return true;
	}
	return false;
}

/* ---- the rewrite ----------------------------------------------------------------
 *
 * The output starts as a copy of the input trie.  A stack that gets
 * pseudo-frames gets them in its kernel part, at the leaf end: from the
 * node before its outermost pseudo-frame, a new branch holds the
 * pseudo-frames among copies of the kernel frames below it, and the
 * stack's samples move to the branch's end.  Nothing else is walked: a
 * stack costs its kernel frames, not its length, and the user parts the
 * stacks share are neither copied frame by frame nor looked up.  The
 * nodes the samples left print nothing (the emitter prints a line only
 * where samples end, and merges siblings of one text).
 *
 * A new node is found again by (parent, what it holds): a pseudo-frame
 * by its kind and payload (a 64-bit key), a real frame by the input node
 * it copies (below a given output node, two stacks with the same next
 * frame have the same input path so far, so the same input node).
 * A stack is classified through its kernel part (struct kclass), and
 * walks its kernel frames only as far as its outermost pseudo-frame. */

struct kf_ctx_rewriter {
	const struct kf_stacks *in;
	struct kf_stacks *out;
	struct kclass kc;
	struct kf_map64 marks;   /* (parent, kind << 16 | payload) -> node */
	uint32_t *copy;          /* per input node: its newest copy, or 0 */
	uint32_t *copy_parent;   /* and that copy's parent (read together:
				    the copy's own node is far away) */
	uint32_t *older;         /* per new node (from base): the copy of the
				    same input node made before it, or 0 */
	size_t cap_older;
	uint32_t base;           /* the first new node */
	uint32_t *origin;        /* NULL, or per output node the input node
				    it copies (0: a new pseudo-frame) */
	size_t cap_origin;
	uint32_t *kn;            /* one stack's kernel nodes, the leaf first */
	size_t cap_kn;
	enum kf_context_frames frames;
	unsigned exclude;
	size_t mapped;           /* bytes of out->nodes known mapped */
	pthread_t copier;        /* rewrite_copy's, while kclass_init runs */
	bool copying;            /* copier started, not joined */
	int copied;              /* rewrite_copy's result */
};

/* A new node of the output copying input node x (0: a pseudo-frame),
 * its origin noted when asked for; its memory mapped a megabyte at a
 * time ahead of the appends (a page fault each 128 nodes cost more than
 * the rest of the append).  0 on ENOMEM. */
static uint32_t rw_append(struct kf_ctx_rewriter *rw, uint32_t parent, const struct kf_frame *f,
			  uint32_t x)
{
	struct kf_stacks *out = rw->out;
	uint32_t node = kf_stacks_append(out, parent, f);

	if (!node)
		return 0;
	kf_prefault_ahead(out->nodes, out->n * sizeof(*out->nodes),
			  out->cap * sizeof(*out->nodes), &rw->mapped);
	if (rw->origin) {
		if (!KF_GROW(rw->origin, rw->cap_origin, (size_t)node + 1))
			return 0;
		rw->origin[node] = x;
	}
	return node;
}

/* The pseudo-frame child of output node parent, added if new; 0 on
 * ENOMEM. */
static uint32_t rw_marker(struct kf_ctx_rewriter *rw, uint32_t parent, uint32_t marker,
			  uint32_t addr)
{
	struct kf_frame f = { .addr = addr, .marker = marker, .flags = KF_FRAME_PSEUDO };
	uint64_t key = (uint64_t)parent << 32 | marker << 16 | addr;
	uint32_t node;

	if (kf_map64_get(&rw->marks, key, &node))
		return node;
	node = rw_append(rw, parent, &f, 0);
	if (!node || !kf_map64_put(&rw->marks, key, node))
		return 0;
	return node;
}

/* Input node x's frame as the output has it (marked when pseudo-frames
 * come: see real frames in context.h), read from the input, whose node
 * the stack's walk just brought into the cache. */
static struct kf_frame out_frame(const struct kf_ctx_rewriter *rw, uint32_t x)
{
	struct kf_frame f = rw->in->nodes[x].frame;

	if (rw->frames != KF_CONTEXT_NONE && !(f.flags & (KF_FRAME_ROOT | KF_FRAME_PSEUDO)))
		f.flags |= KF_FRAME_UNMARKED;
	return f;
}

/* The copy of input node x below output node parent, added if new; 0
 * on ENOMEM.  An input node's copies are a list, newest first: nearly
 * always one long (the same contexts above the same frames). */
static uint32_t rw_copy(struct kf_ctx_rewriter *rw, uint32_t parent, uint32_t x)
{
	struct kf_frame f;
	uint32_t c, node;

	if (rw->copy[x] && rw->copy_parent[x] == parent)
		return rw->copy[x];
	for (c = rw->copy[x]; c; c = rw->older[c - rw->base])
		if (rw->out->nodes[c].parent == parent)
			return c;
	f = out_frame(rw, x);
	node = rw_append(rw, parent, &f, x);
	if (!node || !KF_GROW(rw->older, rw->cap_older, node - rw->base + 1))
		return 0;
	rw->older[node - rw->base] = rw->copy[x];
	rw->copy[x] = node;
	rw->copy_parent[x] = parent;
	return node;
}

static int rewrite_one(struct kf_ctx_rewriter *rw, uint32_t x)
{
	const struct kf_stacks *in = rw->in;
	const struct kf_ctx *ctx = kclass_get(&rw->kc, x);
	struct {
		size_t dist;         /* before the kernel frame kn[dist] */
		uint32_t marker;     /* enum kf_marker */
		uint32_t addr;       /* its payload (16 bits) */
	} ins[KF_CTX_MAX_NEST + 1];
	size_t nk = kclass_depth(&rw->kc, x), n_ins = 0, i, j, d;
	uint32_t node, y;
	int k;

	if (!ctx)
		return KF_ENOMEM;
	if (rw->exclude & (1u << ctx->verdict))
		return kf_stacks_clear(rw->out, x) ? 0 : KF_ENOMEM;
	if (rw->frames == KF_CONTEXT_FRAMES) {
		/* outermost first, so nested contexts nest */
		for (k = ctx->n_nest - 1; k >= 0; k--) {
			const struct kf_ctx_level *l = &ctx->nest[k];

			if (l->entry >= nk)
				continue;   /* no frame of its own */
			ins[n_ins].dist = l->entry;
			ins[n_ins].marker = KF_MARKER_CONTEXT;
			ins[n_ins].addr = (uint32_t)l->cls << 8 | l->sub;
			n_ins++;
		}
	} else if (rw->frames == KF_CONTEXT_VERDICT && nk > 0) {
		ins[n_ins].dist = nk - 1;
		ins[n_ins].marker = KF_MARKER_VERDICT;
		ins[n_ins].addr = (uint32_t)ctx->verdict << 8 | ctx->why;
		n_ins++;
	}
	if (!n_ins)
		return 0;   /* the stack stays where it is */
	/* ins[] goes leafward (outer contexts have larger entries); only
	 * the kernel frames up to the outermost pseudo-frame are walked */
	d = ins[0].dist + 1;
	KF_WORK(d);
	if (!KF_GROW(rw->kn, rw->cap_kn, d))
		return KF_ENOMEM;
	for (i = 0, y = x; i < d; i++, y = in->nodes[y].parent)
		rw->kn[i] = y;
	node = in->nodes[rw->kn[d - 1]].parent;
	for (j = 0; d-- > 0 && node;) {
		for (; j < n_ins && ins[j].dist == d && node; j++)
			node = rw_marker(rw, node, ins[j].marker, ins[j].addr);
		if (node)
			node = rw_copy(rw, node, rw->kn[d]);
	}
	if (!node || !kf_stacks_move(rw->out, x, node))
		return KF_ENOMEM;
	return 0;
}

/* The input copied into out, the copy's real frames marked when
 * pseudo-frames come.  It reads only the input and rw->frames, and writes
 * only out and rw's base, mapped, copy and copy_parent (which
 * kf_ctx_rewrite_end reads after joining it): it may run beside
 * kclass_init (kf_ctx_rewrite_begin), whose fresh pages it then does not
 * wait for, nor kclass_init for its own (on a machine where a page's
 * first touch is the cost, the copy's 40-odd MiB of pages were most of
 * the rewrite's time). */
static int rewrite_copy(struct kf_ctx_rewriter *rw)
{
	const struct kf_stacks *st = rw->in;
	struct kf_stacks *out = rw->out;
	size_t n = st->n ? st->n : 1, i;

	if (kf_stacks_copy(out, st))
		return KF_ENOMEM;
	rw->base = (uint32_t)out->n;
	rw->mapped = out->n * sizeof(*out->nodes);   /* the copy mapped them */
	rw->copy = kf_calloc(n, sizeof(*rw->copy));
	rw->copy_parent = kf_calloc(n, sizeof(*rw->copy_parent));
	if (!rw->copy || !rw->copy_parent)
		return KF_ENOMEM;
	/* rw_copy reads an input node's entries before it writes them */
	kf_prefault(rw->copy, n * sizeof(*rw->copy));
	kf_prefault(rw->copy_parent, n * sizeof(*rw->copy_parent));
	for (i = 1; rw->frames != KF_CONTEXT_NONE && i < st->n; i++)
		out->nodes[i].frame = out_frame(rw, (uint32_t)i);
	return 0;
}

static void *copier_main(void *arg)
{
	struct kf_ctx_rewriter *rw = arg;

	rw->copied = rewrite_copy(rw);
	return NULL;
}

/* The copy, made here or, if the copier made it, joined. */
static int copy_done(struct kf_ctx_rewriter *rw)
{
	if (!rw->copying)
		return rewrite_copy(rw);
	pthread_join(rw->copier, NULL);
	rw->copying = false;
	return rw->copied;
}

static void rewrite_free(struct kf_ctx_rewriter *rw)
{
	if (rw->copying)
		pthread_join(rw->copier, NULL);
	kclass_fini(&rw->kc);
	free(rw->copy_parent);
	free(rw->kn);
	free(rw->copy);
	free(rw->older);
	free(rw->origin);
	kf_map64_fini(&rw->marks);
	free(rw);
}

int kf_ctx_rewrite_begin(struct kf_ctx_rewriter **out_rw, const struct kf_stacks *st,
			 struct kf_namer *namer, const struct kf_roots *roots,
			 const struct kf_ctx_rules *rules, enum kf_context_frames frames,
			 unsigned exclude, unsigned jobs, struct kf_stacks *out)
{
	struct kf_ctx_rewriter *rw;
	size_t i;

	*out_rw = NULL;
	memset(out, 0, sizeof(*out));
	rw = kf_calloc(1, sizeof(*rw));
	if (!rw)
		return KF_ENOMEM;
	rw->in = st;
	rw->out = out;
	rw->frames = frames;
	rw->exclude = exclude;
	kf_map64_init(&rw->marks);
	if (jobs > 1 && pthread_create(&rw->copier, NULL, copier_main, rw) == 0)
		rw->copying = true;
	if (kclass_init(&rw->kc, st, roots, namer, rules)) {
		rewrite_free(rw);   /* joins the copier */
		kf_stacks_fini(out);
		return KF_ENOMEM;
	}
	/* every kernel part named now: the rest needs no namer */
	for (i = 1; i < rw->kc.kp.n; i++)
		kpart_sym(&rw->kc.kp, namer, (uint32_t)i);
	rw->kc.namer = NULL;
	*out_rw = rw;
	return 0;
}

int kf_ctx_rewrite_end(struct kf_ctx_rewriter *rw, uint32_t **origin)
{
	struct kf_stacks *out = rw->out;
	size_t i;
	int r = 0, c;

	if (origin) {
		*origin = NULL;
		rw->origin = kf_calloc(rw->in->n ? rw->in->n : 1, sizeof(*rw->origin));
		if (!rw->origin)
			r = KF_ENOMEM;
		else
			rw->cap_origin = rw->in->n ? rw->in->n : 1;
	}
	/* the copy; the copier is joined even after an error (it writes rw) */
	if (rw->copying || !r) {
		c = copy_done(rw);
		r = r ? r : c;
	}
	if (!r && rw->origin) {
		/* asked for: the copy is its own origin */
		for (i = 0; i < rw->in->n; i++)
			rw->origin[i] = (uint32_t)i;
	}

	for (i = 1; !r && i < rw->in->n; i++) {
		const struct kf_node *nd = &rw->in->nodes[i];

		/* a stack with no kernel frame gets no pseudo-frame: only
		 * --exclude needs its verdict */
		if ((nd->samples || nd->weight) && (rw->exclude || rw->kc.kpart[i]))
			r = rewrite_one(rw, (uint32_t)i);
	}
	/* the nodes the samples left, gone: the emitter then walks what
	 * the old trie would have been */
	if (!r && !kf_stacks_prune(out, rw->origin))
		r = KF_ENOMEM;
	if (!r && origin) {
		*origin = rw->origin;
		rw->origin = NULL;
	}
	rewrite_free(rw);
	if (r) {
		kf_stacks_fini(out);
		memset(out, 0, sizeof(*out));
	}
	return r;
}

int kf_ctx_rewrite(const struct kf_stacks *st, struct kf_namer *namer,
		   const struct kf_roots *roots,
		   const struct kf_ctx_rules *rules, enum kf_context_frames frames,
		   unsigned exclude, struct kf_stacks *out)
{
	struct kf_ctx_rewriter *rw;
	int r = kf_ctx_rewrite_begin(&rw, st, namer, roots, rules, frames, exclude, 1, out);

	return r ? r : kf_ctx_rewrite_end(rw, NULL);
}
