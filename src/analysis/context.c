/* context.c - classify each distinct stack's kernel part; rewrite stacks
 * with context pseudo-frames. */
#include "context.h"

#include <stdlib.h>
#include <string.h>

#include "kfold.h"

struct walk {
	const struct kf_stacks *st;
	struct kf_namer *namer;
	const char **sym;        /* per node: its symbol (memo) */
	uint8_t *named;          /* per node: sym[] is filled in */
	uint32_t *path;
	const char **psyms;
	const char **names;
	size_t cap_path, cap_psyms, cap_names;
};

static const char *node_sym(struct walk *w, uint32_t node)
{
	if (!w->named[node]) {
		const struct kf_frame *f = &w->st->nodes[node].frame;

		w->sym[node] = (f->flags & KF_FRAME_ROOT) ? NULL :
			       kf_namer_symbol(w->namer, f);
		w->named[node] = 1;
	}
	return w->sym[node];
}

/* An entry index of the classifier's names[] (which starts `off` frames
 * leafward of the stack's kernel part) as an index of that kernel part;
 * "no frame" stays n_kernel. */
static void shift_level(struct kf_ctx_level *l, size_t ncls, size_t off, size_t nk)
{
	l->entry = l->entry >= ncls ? (uint32_t)nk : (uint32_t)(l->entry + off);
}

int kf_ctx_walk(const struct kf_stacks *st, const struct kf_roots *roots,
		struct kf_namer *namer, const struct kf_ctx_rules *rules,
		kf_ctx_visit_fn fn, void *payload)
{
	struct walk w;
	size_t node;
	int r = 0;

	memset(&w, 0, sizeof(w));
	w.st = st;
	w.namer = namer;
	w.sym = kf_calloc(st->n ? st->n : 1, sizeof(*w.sym));
	w.named = kf_calloc(st->n ? st->n : 1, 1);
	if (!w.sym || !w.named) {
		r = KF_ENOMEM;
		goto out;
	}
	for (node = 1; node < st->n && !r; node++) {
		const struct kf_node *nd = &st->nodes[node];
		const struct kf_stack_root *rootd;
		struct kf_ctx_stack cs;
		struct kf_ctx ctx;
		size_t len = 0, i, nk = 0, off = 0, ncls;
		uint32_t x;
		unsigned in = 0, cpumode;
		int k;

		if (nd->samples == 0 && nd->weight == 0)
			continue;
		/* parents are always older nodes: the walk up ends */
		for (x = (uint32_t)node; x; x = st->nodes[x].parent)
			len++;
		KF_WORK(len);
		if (!KF_GROW(w.path, w.cap_path, len) ||
		    !KF_GROW(w.psyms, w.cap_psyms, len) ||
		    !KF_GROW(w.names, w.cap_names, len)) {
			r = KF_ENOMEM;
			break;
		}
		i = len;
		for (x = (uint32_t)node; x; x = st->nodes[x].parent)
			w.path[--i] = x;
		rootd = kf_roots_get(roots, st->nodes[w.path[0]].frame.root);
		for (i = 0; i < len; i++)
			w.psyms[i] = node_sym(&w, w.path[i]);
		while (nk + 1 < len &&
		       (st->nodes[w.path[len - 1 - nk]].frame.flags &
			(KF_FRAME_KERNEL | KF_FRAME_PSEUDO)) == KF_FRAME_KERNEL)
			nk++;
		for (i = 0; i < nk; i++)
			w.names[i] = w.psyms[len - 1 - i];
		/* some kernels store the first entry twice (tracepoints,
		 * software events): classify it once */
		if (nk >= 2 && st->nodes[w.path[len - 1]].frame.addr ==
			       st->nodes[w.path[len - 2]].frame.addr)
			off = 1;
		ncls = nk - off;
		cpumode = rootd->cpumode;
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
		kf_ctx_classify(rules, w.names + off, ncls, cpumode, in, &ctx);
		/* without kernel symbols no rule can apply: say so rather
		 * than guess why the chain told nothing */
		if (ctx.verdict == KF_CTX_VERDICT_UNKNOWN && ncls) {
			for (i = 0; i < ncls && !w.names[off + i]; i++)
				;
			if (i == ncls)
				ctx.why = KF_CTX_WHY_NO_SYMBOLS;
		}
		shift_level(&ctx.leaf, ncls, off, nk);
		shift_level(&ctx.base, ncls, off, nk);
		for (k = 0; k < ctx.n_nest; k++)
			shift_level(&ctx.nest[k], ncls, off, nk);

		cs.node = (uint32_t)node;
		cs.path = w.path;
		cs.n_path = len;
		cs.n_kernel = nk;
		cs.syms = w.psyms;
		cs.ctx = &ctx;
		cs.weight = nd->weight;
		cs.samples = nd->samples;
		cs.pid = rootd->pid;
		cs.tid = rootd->tid;
		r = fn(payload, &cs);
	}
out:
	free(w.sym);
	free(w.named);
	free(w.path);
	free(w.psyms);
	free(w.names);
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

/* ---- the rewrite ---------------------------------------------------------------- */

struct rewrite {
	const struct kf_stacks *in;
	struct kf_stacks *out;
	uint32_t *memo;          /* per input node: the output node of the
				    same path when no pseudo-frame comes
				    before it (0: not made yet) */
	enum kf_context_frames frames;
	unsigned exclude;
	/* scratch: one stack's output frames from the first one not made
	 * yet, and their nodes (one kf_stacks_walk) */
	struct kf_frame *fv;
	uint32_t *nv;
	size_t cap_fv, cap_nv;
};

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

/* The frame the output gets for real frame f: a copy that the folded
 * emitter keeps from reading like a marker (KF_FRAME_UNMARKED), when the
 * output has markers. */
static void real_frame(const struct rewrite *rw, const struct kf_frame *f,
		       struct kf_frame *out)
{
	*out = *f;
	if (rw->frames != KF_CONTEXT_NONE &&
	    !(f->flags & (KF_FRAME_ROOT | KF_FRAME_PSEUDO)))
		out->flags |= KF_FRAME_UNMARKED;
}

static int rewrite_one(void *payload, const struct kf_ctx_stack *cs)
{
	struct rewrite *rw = payload;
	const struct kf_ctx *ctx = cs->ctx;
	struct {
		size_t pos;          /* before path[pos] */
		uint32_t marker;     /* enum kf_marker */
		uint64_t addr;       /* its payload */
	} ins[KF_CTX_MAX_NEST + 1];
	size_t n_ins = 0, i, j;
	uint32_t node;
	int k;

	if (rw->exclude & (1u << ctx->verdict))
		return 0;
	if (rw->frames == KF_CONTEXT_FRAMES) {
		/* outermost first, so nested contexts nest */
		for (k = ctx->n_nest - 1; k >= 0; k--) {
			const struct kf_ctx_level *l = &ctx->nest[k];

			if (l->entry >= cs->n_kernel)
				continue;   /* no frame of its own */
			ins[n_ins].pos = cs->n_path - 1 - l->entry;
			ins[n_ins].marker = KF_MARKER_CONTEXT;
			ins[n_ins].addr = (uint64_t)l->cls << 8 | l->sub;
			n_ins++;
		}
	} else if (rw->frames == KF_CONTEXT_VERDICT && cs->n_kernel > 0) {
		ins[n_ins].pos = cs->n_path - cs->n_kernel;
		ins[n_ins].marker = KF_MARKER_VERDICT;
		ins[n_ins].addr = (uint64_t)ctx->verdict << 8 | ctx->why;
		n_ins++;
	}
	/* ins[] is in path order: outer contexts have larger entries.  The
	 * part of the path before the first pseudo-frame is the input's own
	 * prefix: made once, whatever the number of stacks sharing it.  The
	 * rest (that prefix's new part, then the pseudo-frames among the
	 * path's frames) is one walk down the output trie */
	{
		size_t first = n_ins ? ins[0].pos : cs->n_path, start, nf = 0;

		for (i = first; i > 0 && !rw->memo[cs->path[i - 1]]; i--)
			;
		node = i ? rw->memo[cs->path[i - 1]] : 0;
		start = i;
		if (!KF_GROW(rw->fv, rw->cap_fv, cs->n_path - start + n_ins) ||
		    !KF_GROW(rw->nv, rw->cap_nv, cs->n_path - start + n_ins))
			return KF_ENOMEM;
		for (j = 0; i < cs->n_path; i++) {
			for (; j < n_ins && ins[j].pos == i; j++) {
				struct kf_frame f = { .addr = ins[j].addr, .marker = ins[j].marker,
						      .flags = KF_FRAME_PSEUDO };

				rw->fv[nf++] = f;
			}
			real_frame(rw, &rw->in->nodes[cs->path[i]].frame, &rw->fv[nf++]);
		}
		if (nf) {
			if (!kf_stacks_walk(rw->out, node, rw->fv, nf, rw->nv))
				return KF_ENOMEM;
			node = rw->nv[nf - 1];
		}
		/* the prefix's nodes, for the stacks that share it */
		for (i = start; i < first; i++)
			rw->memo[cs->path[i]] = rw->nv[i - start];
	}
	/* cs->weight is the low 64 bits; the wraps come along too */
	if (!kf_stacks_add_weight(rw->out, node, kf_stacks_weight(rw->in, cs->node)))
		return KF_ENOMEM;
	rw->out->nodes[node].samples = cs->samples > UINT32_MAX - rw->out->nodes[node].samples ?
		UINT32_MAX : rw->out->nodes[node].samples + (uint32_t)cs->samples;
	return 0;
}

int kf_ctx_rewrite(const struct kf_stacks *st, struct kf_namer *namer,
		   const struct kf_roots *roots,
		   const struct kf_ctx_rules *rules, enum kf_context_frames frames,
		   unsigned exclude, struct kf_stacks *out)
{
	struct rewrite rw;
	int r;

	memset(&rw, 0, sizeof(rw));
	if (kf_stacks_init(out))
		return KF_ENOMEM;
	rw.in = st;
	rw.out = out;
	rw.memo = kf_calloc(st->n ? st->n : 1, sizeof(*rw.memo));
	if (!rw.memo) {
		kf_stacks_fini(out);
		memset(out, 0, sizeof(*out));
		return KF_ENOMEM;
	}
	rw.frames = frames;
	rw.exclude = exclude;
	r = kf_ctx_walk(st, roots, namer, rules, rewrite_one, &rw);
	free(rw.memo);
	free(rw.fv);
	free(rw.nv);
	if (r) {
		kf_stacks_fini(out);
		memset(out, 0, sizeof(*out));
		return r;
	}
	return 0;
}
