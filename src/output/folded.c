/* emit-folded.c - sorted folded output without building every line.
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
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "kfold.h"

struct em {
	const struct kf_stacks *st;
	struct kf_namer *namer;
	const struct kf_fold_style *fs;
	struct kf_strtab rtexts;  /* the roots' texts */
	uint32_t *text;          /* per node: text id (roots: id in rtexts) */
	uint32_t *first, *next;  /* child lists */
	FILE *out;
	struct kf_buf line;
	uint64_t lines;
	int err;
};

static const char *text_of(const struct em *e, uint32_t node)
{
	if (e->st->nodes[node].parent == 0)
		return kf_strtab_get(&e->rtexts, e->text[node]);
	return kf_strtab_get(&e->namer->texts, e->text[node]);
}

/* ---- one level ------------------------------------------------------------ */

struct group {
	uint32_t text_node;      /* a node whose text the group has */
	kf_u128 weight;          /* of the lines ending at this group */
	uint64_t samples;
	uint32_t *kids;          /* children of the group's nodes, flattened */
	size_t n_kids, cap_kids;
};

struct item {
	const char *text;
	uint32_t group;
	int sub;                 /* 0: the line ending here, 1: deeper lines */
};

static int push(uint32_t **v, size_t *n, size_t *cap, uint32_t x)
{
	if (!kf_grow((void **)v, cap, *n + 1, sizeof(**v)))
		return KF_ENOMEM;
	(*v)[(*n)++] = x;
	return 0;
}

/* Adds node's weight to g, and its children to g->kids; a child whose text
 * is empty (stackcollapse drops that frame) is looked through. */
static int absorb(struct em *e, struct group *g, uint32_t node)
{
	uint32_t c;
	int r;

	g->weight += kf_stacks_weight(e->st, node);
	g->samples += e->st->nodes[node].samples;
	for (c = e->first[node]; c; c = e->next[c]) {
		if (e->text[c] == 0) {
			r = absorb(e, g, c);
		} else {
			r = push(&g->kids, &g->n_kids, &g->cap_kids, c);
		}
		if (r)
			return r;
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

static int level(struct em *e, uint32_t *nodes, size_t n, bool root);

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

/* Emits, in order, every line below the frames in nodes (one level: all
 * children of the previous group, or all roots). */
static int level(struct em *e, uint32_t *nodes, size_t n, bool root)
{
	struct group *groups = NULL;
	struct item *items = NULL;
	size_t ng = 0, ni = 0, i, j;
	int r = 0;

	if (!n)
		return 0;
	qsort_r(nodes, n, sizeof(*nodes), cmp_nodes, e);
	groups = kf_calloc(n ? n : 1, sizeof(*groups));
	items = kf_calloc(n ? 2 * n : 1, sizeof(*items));
	if (!groups || !items) {
		r = KF_ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i = j) {
		struct group *g = &groups[ng];

		g->text_node = nodes[i];
		for (j = i; j < n && strcmp(text_of(e, nodes[j]),
					    text_of(e, nodes[i])) == 0; j++) {
			r = absorb(e, g, nodes[j]);
			if (r)
				goto out;
		}
		if (g->samples)
			items[ni++] = (struct item){ text_of(e, g->text_node),
						     (uint32_t)ng, 0 };
		if (g->n_kids)
			items[ni++] = (struct item){ text_of(e, g->text_node),
						     (uint32_t)ng, 1 };
		ng++;
	}
	qsort(items, ni, sizeof(*items), cmp_items);
	for (i = 0; i < ni && !r; i++) {
		struct group *g = &groups[items[i].group];
		size_t keep = e->line.len;

		if (!root)
			kf_buf_put(&e->line, ";", 1);
		kf_buf_puts(&e->line, items[i].text);
		if (e->line.oom) {
			r = KF_ENOMEM;
			break;
		}
		if (!items[i].sub)
			r = emit_line(e, g->weight);
		else
			r = level(e, g->kids, g->n_kids, false);
		e->line.len = keep;
		e->line.p[keep] = '\0';
	}
out:
	for (i = 0; i < ng; i++)
		free(groups[i].kids);
	free(groups);
	free(items);
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
static int piece_trie(struct em *e, struct kf_stacks *pt)
{
	struct kf_buf copy;
	uint32_t *map;
	size_t i;
	int r = 0;

	map = kf_calloc(e->st->n, sizeof(*map));
	if (!map)
		return KF_ENOMEM;
	kf_buf_init(&copy);
	for (i = 1; i < e->st->n && !r; i++) {
		const struct kf_node *nd = &e->st->nodes[i];
		uint32_t cur;

		if (!nd->parent) {
			struct kf_frame f = nd->frame;

			/* the copy carries its text id (a root's addr is 0) */
			f.addr = e->text[i];
			cur = kf_stacks_child(pt, 0, &f);
		} else {
			const char *t;
			size_t len, a, b;

			cur = map[nd->parent];
			/* the text, copied: interning moves the buffer */
			t = text_of(e, (uint32_t)i);
			len = strlen(t);
			copy.len = 0;
			kf_buf_put(&copy, t, len);
			if (copy.oom) {
				r = KF_ENOMEM;
				break;
			}
			for (a = 0; a < len && cur; a = b + 1) {
				struct kf_frame f = { 0 };
				uint32_t id;

				for (b = a; b < len && copy.p[b] != ';'; b++)
					;
				if (b == a)
					continue;
				if (!kf_strtab_intern(&e->namer->texts, copy.p + a,
						      b - a, &id)) {
					r = KF_ENOMEM;
					break;
				}
				f.addr = id;
				cur = kf_stacks_child(pt, cur, &f);
			}
		}
		if (!cur && !r)
			r = KF_ENOMEM;
		if (r)
			break;
		map[i] = cur;
		if (!kf_stacks_add_weight(pt, cur, kf_stacks_weight(e->st, (uint32_t)i))) {
			r = KF_ENOMEM;
			break;
		}
		pt->nodes[cur].samples = pt->nodes[cur].samples > UINT32_MAX - nd->samples ?
					 UINT32_MAX : pt->nodes[cur].samples + nd->samples;
	}
	free(map);
	kf_buf_fini(&copy);
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

static int emit_pieces(struct em *e)
{
	struct kf_stacks pt;
	struct em p;
	uint32_t *rootv = NULL;
	size_t n_roots = 0, cap_roots = 0, i;
	int r;

	if (kf_stacks_init(&pt))
		return KF_ENOMEM;
	r = piece_trie(e, &pt);
	p = *e;
	p.st = &pt;
	p.text = NULL;
	p.first = p.next = NULL;
	p.lines = 0;
	if (!r)
		r = link_nodes(&p, &rootv, &n_roots, &cap_roots);
	if (!r) {
		p.text = kf_calloc(pt.n, sizeof(*p.text));
		if (!p.text)
			r = KF_ENOMEM;
	}
	for (i = 1; !r && i < pt.n; i++)
		p.text[i] = (uint32_t)pt.nodes[i].frame.addr;
	if (!r)
		r = level(&p, rootv, n_roots, true);
	e->lines += p.lines;
	e->err = p.err;
	e->line = p.line;        /* the buffer may have grown */
	free(p.text);
	free(p.first);
	free(p.next);
	free(rootv);
	kf_stacks_fini(&pt);
	return r;
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

	/* --compat=perf: the comm is what stackcollapse's regex took from
	 * the header line; only its spaces change */
	for (; *c; c++) {
		char ch = *c == ' ' ? '_' : *c;

		if (!fs->compat && (ch == ';' || ch == '\n'))
			ch = ch == ';' ? ':' : '_';
		kf_buf_put(out, &ch, 1);
	}
	if (out->len == before && !fs->compat)
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

int kf_emit_folded(const struct kf_stacks *st, struct kf_namer *namer,
		   const struct kf_fold_style *fs, const struct kf_roots *roots,
		   const struct kf_strtab *comms, FILE *out, uint64_t *lines)
{
	struct em e;
	uint32_t *rootv = NULL, *stack = NULL;
	size_t n_roots = 0, cap_roots = 0, sp = 0, cap_stack = 0, i;
	bool separable = true, pieces = false;
	int r = 0;

	memset(&e, 0, sizeof(e));
	e.st = st;
	e.namer = namer;
	e.fs = fs;
	e.out = out;
	kf_buf_init(&e.line);
	if (!kf_strtab_init(&e.rtexts)) {
		r = KF_ENOMEM;
		goto out;
	}
	e.text = kf_calloc(st->n, sizeof(*e.text));
	if (!e.text) {
		r = KF_ENOMEM;
		goto out;
	}
	r = link_nodes(&e, &rootv, &n_roots, &cap_roots);
	if (r)
		goto out;
	/* name every frame, each under its root (Java tidying depends on the
	 * root's comm) */
	for (i = 0; i < n_roots && !r; i++) {
		uint32_t root = rootv[i];
		const struct kf_stack_root *rd = kf_roots_get(roots, st->nodes[root].frame.root);
		bool java = kf_fold_root_java(comms, rd);

		e.line.len = 0;
		kf_fold_root(fs, comms, rd, &e.line);
		if (e.line.oom || !kf_strtab_intern(&e.rtexts, kf_buf_cstr(&e.line), e.line.len,
						    &e.text[root])) {
			r = KF_ENOMEM;
			break;
		}
		if (strchr(kf_buf_cstr(&e.line), ';'))
			separable = false;
		sp = 0;
		if (push(&stack, &sp, &cap_stack, root)) {
			r = KF_ENOMEM;
			break;
		}
		while (sp && !r) {
			uint32_t nd = stack[--sp], c;

			for (c = e.first[nd]; c; c = e.next[c]) {
				const struct kf_frame *f = &st->nodes[c].frame;

				KF_WORK(1);
				if (f->flags & KF_FRAME_PSEUDO) {
					e.line.len = 0;
					kf_ctx_marker_text(f, &e.line);
					r = e.line.oom || !kf_strtab_intern(&namer->texts,
						kf_buf_cstr(&e.line), e.line.len, &e.text[c]) ?
					    KF_ENOMEM : 0;
				} else {
					r = kf_namer_frame_id(namer, f, java, &e.text[c]);
				}
				if (r)
					break;
				if (push(&stack, &sp, &cap_stack, c)) {
					r = KF_ENOMEM;
					break;
				}
			}
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
	for (i = 1; i < st->n && !pieces; i++)
		if (st->nodes[i].parent && strchr(text_of(&e, (uint32_t)i), ';'))
			pieces = true;
	r = !separable ? sorted_lines(&e) : pieces ? emit_pieces(&e) :
	    level(&e, rootv, n_roots, true);
	if (!r && fflush(out) != 0)
		r = KF_EIO;
out:
	if (lines)
		*lines = e.lines;
	free(e.text);
	free(e.first);
	free(e.next);
	free(rootv);
	free(stack);
	kf_buf_fini(&e.line);
	kf_strtab_fini(&e.rtexts);
	return r ? r : e.err;
}
