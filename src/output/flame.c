/* flame.c - the stacks as one self-contained HTML flame graph.
 *
 * The tree: node 0 is "all"; a node is one frame (name and kind) under
 * its caller, so every stack is a path from node 0 and its weight is the
 * self value of the node it ends at.  Nodes are numbered as they are
 * made, so a parent's number is below its children's, which the page's
 * script relies on to sum totals in one backward pass.  A node keeps the
 * file:line of its frames while they agree (the file alone when only the
 * lines differ), and their module while they agree on one.
 *
 * The page is the tree as JSON, gzip-compressed in base64, in a <script
 * type="application/octet-stream"> (the browser inflates it:
 * DecompressionStream), flame.css and flame.js from flame-assets.h (made
 * from them by scripts/embed.py at build time).
 */
#include "flame.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "flame-assets.h"

/* kinds: flame.js's KIND table */
enum {
	K_ROOT = 0, K_USER = 1, K_ON_BEHALF = 2, K_ATTRIBUTED = 3, K_IDLE = 4,
	K_KTHREAD = 5, K_KERNEL = 6, K_JIT = 7, K_INLINED = 8, K_UNKNOWN = 9,
	K_MARKER = 10, K_NEUTRAL = 11,
};

#define NAME_BITS 27u
#define F_FILE_DIFFERS 1u
#define F_LINE_DIFFERS 2u
#define F_SEEN 4u           /* file and line were set from a frame */
#define F_MODULE_DIFFERS 8u
#define F_MODULE_SEEN 16u

struct node {
	uint32_t parent, name, file, line;
	uint32_t module;             /* name index of its frames' module, 0:
					none or not one */
	uint8_t kind, flags;
	uint64_t self;
	uint64_t samples;            /* self samples */
	uint64_t a, b;               /* a difference: self weight before and
					after (self is after's, or before's
					for stacks found only before) */
};

struct tree {
	struct node *nodes;
	size_t n, cap;
	struct kf_map64 child;       /* parent << 32 | kind << 27 | name -> node */
	struct kf_strtab strs;
	struct kf_map64 dense;       /* strtab id -> name index */
	uint32_t *names;             /* name index -> strtab id; 0 is "" */
	size_t n_names, names_cap;
	uint32_t *module_name;       /* by module index: name index + 1, 0 not
					looked up yet */
	bool diff;                   /* the source is a difference */
	/* the previous stack: the node each of its frames ended at, and its
	 * verdict (kernel frames' kinds come from it) */
	uint32_t *prev_node;
	size_t prev_n, prev_cap;
	const char *prev_verdict;
};

/* the dense index of s[0..len) in the names (0 for "") */
static int name_index(struct tree *t, const char *s, size_t len, uint32_t *out)
{
	uint32_t id, idx;

	if (!kf_strtab_intern(&t->strs, s, len, &id))
		return KF_ENOMEM;
	if (kf_map64_get(&t->dense, id, &idx)) {
		*out = idx;
		return 0;
	}
	if (t->n_names >= (1u << NAME_BITS))
		return KF_EUNSUPP;
	if (!KF_GROW(t->names, t->names_cap, t->n_names + 1) ||
	    !kf_map64_put(&t->dense, id, (uint32_t)t->n_names))
		return KF_ENOMEM;
	t->names[t->n_names] = id;
	*out = (uint32_t)t->n_names++;
	return 0;
}

static int child(struct tree *t, uint32_t parent, uint32_t name, unsigned kind, uint32_t *out)
{
	uint64_t key = (uint64_t)parent << 32 | (uint64_t)kind << NAME_BITS | name;
	uint32_t id;

	if (kf_map64_get(&t->child, key, &id)) {
		*out = id;
		return 0;
	}
	if (t->n >= UINT32_MAX || !KF_GROW(t->nodes, t->cap, t->n + 1) ||
	    !kf_map64_put(&t->child, key, (uint32_t)t->n))
		return KF_ENOMEM;
	t->nodes[t->n] = (struct node){ parent, name, 0, 0, 0, (uint8_t)kind, 0, 0, 0, 0, 0 };
	*out = (uint32_t)t->n++;
	return 0;
}

static bool ends_with(const char *s, size_t n, const char *suf)
{
	size_t k = strlen(suf);

	return n >= k && memcmp(s + n - k, suf, k) == 0;
}

/* A kernel frame's kind: its stack's verdict (kfold.h's names). */
static unsigned kernel_kind(const char *verdict)
{
	if (!verdict)
		return K_KERNEL;
	if (strcmp(verdict, "on-behalf") == 0)
		return K_ON_BEHALF;
	if (strcmp(verdict, "attributed") == 0)
		return K_ATTRIBUTED;
	if (strcmp(verdict, "idle") == 0)
		return K_IDLE;
	if (strcmp(verdict, "kthread") == 0)
		return K_KTHREAD;
	return K_KERNEL;
}

static bool bracketed(const char *s, size_t n)
{
	return n >= 3 && s[0] == '[' && s[n - 1] == ']';
}

/* "[word]" or "[word:sub]", word lower case: a --context marker
 * ("[syscall]", "[softirq:NET_RX]", "[on-behalf]"), not "[unknown]" nor
 * the "[file]" of an unnamed frame ("[libc.so.6]", "[[vdso]]") */
static bool marker(const char *s, size_t n)
{
	size_t i = 1;

	if (!bracketed(s, n) || (n == 9 && memcmp(s, "[unknown]", 9) == 0))
		return false;
	while (i < n - 1 && ((s[i] >= 'a' && s[i] <= 'z') || s[i] == '-' || s[i] == '_'))
		i++;
	if (i == 1)
		return false;
	if (s[i] == ':')
		for (i++; i < n - 1 && s[i] != '[' && s[i] != ']' && s[i] != ' ' &&
			  s[i] != '/'; i++)
			;
	return i == n - 1;
}

/* A frame's name and kind.  Folded text: the suffixes stackcollapse
 * writes (_[k] kernel, _[j] JIT, _[i] inlined) say the kind and are cut,
 * as kfold's _[s] (a frame --stitch took from an earlier sample) is;
 * "[unknown]" and "[file]" are unknown frames, other bracketed words
 * context markers; the rest has no kind. */
static unsigned frame_kind(const struct kf_stack_src *src, const kf_frame_info *f,
			   const char *verdict, const char **name, size_t *len)
{
	/* the root as folded output prints it ("comm", "comm-PID/TID") */
	const char *s = *f->name && f->kind != KF_KIND_ROOT ? f->name : f->text;
	size_t n = strlen(s);

	*name = s;
	*len = n;
	if (f->kind == KF_KIND_ROOT)
		return K_ROOT;
	if (src->folded) {
		if (ends_with(s, n, "_[k]") || ends_with(s, n, "_[j]") ||
		    ends_with(s, n, "_[i]")) {
			*len = n - 4;
			return s[n - 2] == 'k' ? K_KERNEL : s[n - 2] == 'j' ? K_JIT : K_INLINED;
		}
		if (ends_with(s, n, "_[s]")) {
			*len = n - 4;   /* --stitch's: a frame like any other */
			return K_NEUTRAL;
		}
		if (bracketed(s, n))
			return marker(s, n) ? K_MARKER : K_UNKNOWN;
		return K_NEUTRAL;
	}
	switch (f->kind) {
	case KF_KIND_KERNEL: return kernel_kind(verdict);
	case KF_KIND_JIT: return K_JIT;
	case KF_KIND_MARKER: return K_MARKER;
	case KF_KIND_TRUNCATED:
	case KF_KIND_UNKNOWN: return K_UNKNOWN;
	default: return f->inline_depth ? K_INLINED : K_USER;
	}
}

/* the name index of a frame's module (0: none) */
static int module_index(struct tree *t, const struct kf_stack_src *src,
			const kf_frame_info *f, uint32_t *out)
{
	kf_module_info mi;
	int r;

	*out = 0;
	if (f->module == KF_NO_MODULE || f->module >= src->n_modules || !src->module)
		return 0;
	if (t->module_name[f->module]) {
		*out = t->module_name[f->module] - 1;
		return 0;
	}
	if (src->module(src->ctx, f->module, &mi) != 0 || !mi.name)
		return 0;
	if ((r = name_index(t, mi.name, strlen(mi.name), out)))
		return r;
	t->module_name[f->module] = *out + 1;
	return 0;
}

static uint64_t clamp53(uint64_t v)
{
	return v > (1ull << 53) ? 1ull << 53 : v;
}

static int add_stack(struct tree *t, const struct kf_stack_src *src, size_t i)
{
	const char *verdict = NULL, *leaf = NULL;
	kf_stack_info st;
	uint32_t node = 0;
	uint64_t w;
	struct node *nd;
	size_t k;
	int r;

	if ((r = src->stack(src->ctx, i, &st)))
		return r;
	if (src->contexts)
		src->contexts(src->ctx, i, &verdict, &leaf);
	if (!KF_GROW(t->prev_node, t->prev_cap, st.n_frames ? st.n_frames : 1))
		return KF_ENOMEM;
	/* the callers this stack shares with the previous one end where they
	 * did, when their kinds are the same */
	k = 0;
	if (st.n_shared && st.n_shared <= t->prev_n &&
	    (verdict == t->prev_verdict ||
	     (verdict && t->prev_verdict && strcmp(verdict, t->prev_verdict) == 0))) {
		k = st.n_shared;
		node = t->prev_node[k - 1];
	}
	t->prev_verdict = verdict;
	t->prev_n = 0;           /* until this stack is in */
	for (; k < st.n_frames; t->prev_node[k++] = node) {
		const kf_frame_info *f = &st.frames[k];
		const char *name;
		size_t len;
		unsigned kind;
		uint32_t nm, file = 0, mod;

		if (!*f->text)
			continue;   /* folded output drops it too */
		KF_WORK(1);
		kind = frame_kind(src, f, verdict, &name, &len);
		if ((r = name_index(t, name, len, &nm)) || (r = child(t, node, nm, kind, &node)))
			return r;
		if (f->file && (r = name_index(t, f->file, strlen(f->file), &file)))
			return r;
		if ((r = module_index(t, src, f, &mod)))
			return r;
		nd = &t->nodes[node];
		if (!(nd->flags & F_MODULE_SEEN)) {
			nd->flags |= F_MODULE_SEEN;
			nd->module = mod;
		} else if (nd->module != mod) {
			nd->flags |= F_MODULE_DIFFERS;
			nd->module = 0;
		}
		if (nd->flags & F_FILE_DIFFERS)
			continue;
		if (!(nd->flags & F_SEEN)) {
			nd->flags |= F_SEEN;
			nd->file = file;
			nd->line = f->line;
		} else if (nd->file != file) {
			nd->flags |= F_FILE_DIFFERS;
			nd->file = 0;
			nd->line = 0;
		} else if (nd->line != f->line) {
			nd->flags |= F_LINE_DIFFERS;
			nd->line = 0;
		}
	}
	t->prev_n = st.n_frames;
	/* the weight as the page's numbers can hold it exactly (2^53) */
	w = st.weight_high || st.weight > (1ull << 53) ? 1ull << 53 : st.weight;
	nd = &t->nodes[node];
	nd->samples += st.samples;
	if (t->diff) {
		uint64_t a = src->base(src->ctx, i);

		a = a > (1ull << 53) ? 1ull << 53 : a;
		/* a stack gone after is drawn in its width before */
		nd->self = clamp53(nd->self + (w ? w : a));
		nd->a = clamp53(nd->a + a);
		nd->b = clamp53(nd->b + w);
	} else {
		nd->self = clamp53(nd->self + w);
	}
	return 0;
}

/* text for HTML: &, <, >, " escaped */
static void html(FILE *out, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		default: fputc(*s, out);
		}
	}
}

/* a JSON string; '<' as \u003c, so the data cannot close its element */
static void json_str(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', out);
	for (; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else if (*p < 0x20 || *p == '<' || *p == 0x7f)
			fprintf(out, "\\u%04x", *p);
		else
			fputc(*p, out);
	}
	fputc('"', out);
}

static void puts_lines(FILE *out, const char *const *lines)
{
	for (; *lines; lines++)
		fputs(*lines, out);
}

static int write_data(const struct tree *t, const struct kf_flame_facts *f, FILE *out);

static int write_page(const struct tree *t, const struct kf_flame_facts *f, FILE *out)
{
	size_t i;
	int r;

	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	      /* the self-test's first mark (flame.js): the page starts */
	      "<script>if (/[?&]selftest=1(&|$)/.test(location.search)) "
	      "console.log('kfold-selftest: page start');</script>\n<title>", out);
	html(out, f->title);
	fputs("</title>\n<style>\n", out);
	puts_lines(out, kf_flame_css);
	fputs("</style></head>\n<body>\n<h1>", out);
	html(out, f->title);
	fputs("</h1>\n<div id=\"sub\">", out);
	html(out, f->subtitle);
	fputs("</div>\n<div id=\"notes\">", out);
	for (i = 0; i < f->n_notes; i++) {
		fputs("<div>", out);
		html(out, f->notes[i]);
		fputs("</div>", out);
	}
	fputs("</div>\n<div id=\"bar\"><button id=\"reset\">reset zoom</button>"
	      "<button id=\"orient\">icicle</button>"
	      "<button id=\"reverse\" aria-pressed=\"false\">reverse (callers)</button>"
	      "<input id=\"term\" type=\"search\" placeholder=\"search: text or /regex/\">"
	      "<span id=\"match\"></span></div>\n<div id=\"legend\"></div>\n"
	      "<canvas id=\"fg\"></canvas>\n<div id=\"status\"></div>"
	      "<div id=\"hidden\"></div>\n<pre id=\"selftest\" hidden></pre>\n"
	      "<script type=\"application/octet-stream\" id=\"data\">\n", out);
	r = write_data(t, f, out);
	fputs("</script>\n<script>\n", out);
	puts_lines(out, kf_flame_js);
	fputs("</script>\n</body></html>\n", out);
	return r;
}

static const struct tree *sort_tree;

/* children in byte order of their names, then by kind (flame.js's) */
static int cmp_kids(const void *pa, const void *pb)
{
	const struct node *a = &sort_tree->nodes[*(const uint32_t *)pa];
	const struct node *b = &sort_tree->nodes[*(const uint32_t *)pb];
	int c = strcmp(kf_strtab_get(&sort_tree->strs, sort_tree->names[a->name]),
		       kf_strtab_get(&sort_tree->strs, sort_tree->names[b->name]));

	return c ? c : (int)a->kind - (int)b->kind;
}

static uint32_t tree_parent(const void *ctx, size_t i)
{
	return ((const struct tree *)ctx)->nodes[i].parent;
}

/* The nodes in preorder, each node's children in cmp_kids' order:
 * order[k] is the k-th node, newof[x] node x's place.  Then a subtree
 * is a run of places and the page lays the tree out without sorting.
 * 0 or KF_ENOMEM. */
static int preorder(const struct tree *t, uint32_t **order_out, uint32_t **newof_out)
{
	uint32_t *order = kf_calloc(t->n, sizeof(*order)), *newof = kf_calloc(t->n, sizeof(*newof));
	size_t k;
	int r;

	sort_tree = t;
	r = order && newof ? kf_tree_preorder(t->n, tree_parent, t, cmp_kids, order) : KF_ENOMEM;
	sort_tree = NULL;
	if (r) {
		free(order);
		free(newof);
		return r;
	}
	for (k = 0; k < t->n; k++)
		newof[order[k]] = (uint32_t)k;
	*order_out = order;
	*newof_out = newof;
	return 0;
}

static bool has_weight(const struct node *nd)
{
	return nd->self || nd->samples || nd->a || nd->b;
}

/* little-endian words, whatever the host's order */
static void put_u32(FILE *out, uint32_t v)
{
	unsigned char b[4] = { (unsigned char)v, (unsigned char)(v >> 8),
			       (unsigned char)(v >> 16), (unsigned char)(v >> 24) };

	fwrite(b, 1, 4, out);
}

static void put_f64(FILE *out, double d)
{
	uint64_t v;
	int k;

	memcpy(&v, &d, sizeof(v));
	for (k = 0; k < 8; k++)
		fputc((int)(v >> (8 * k) & 0xff), out);
}

static void pad8(FILE *out, size_t *off, size_t n)
{
	*off += n;
	for (; *off % 8; ++*off)
		fputc(0, out);
}

/* The tree for the page (flame.js reads it with typed arrays over the
 * inflated bytes, no JSON parse of millions of numbers), little-endian,
 * each part starting at a multiple of 8:
 *   "KFFG", version 2, nodes, length of the JSON (u32 each);
 *   the JSON {"unit":..., "names":[...], "preorder":true}: the nodes
 *   come in preorder, children in byte order of their names, so the
 *   page lays them out without sorting;
 *   per node: the distance back to its parent, name, file, line,
 *   module (u32 arrays); kind (u8);
 *   the number m of nodes with a weight (where stacks end: most nodes
 *   have none) and their places (u32); their self weights, samples (f64:
 *   exact to 2^53, which the weights are clamped to), and for a
 *   difference ("diff" in the JSON) their self weights before and after
 *   (f64). */
static void write_tree(const struct tree *t, const struct kf_flame_facts *f, FILE *out)
{
	char *json = NULL;
	size_t jlen = 0, i, off = 0, m_n = 0;
	uint32_t *order = NULL, *newof = NULL;
	FILE *m = preorder(t, &order, &newof) ? NULL : open_memstream(&json, &jlen);
	const struct node *nd = t->nodes;

	if (m) {
		fputs("{\"unit\":", m);
		json_str(m, f->unit);
		if (t->diff)
			fputs(",\"diff\":true", m);
		fputs(",\"preorder\":true", m);
		fputs(",\"names\":[", m);
		for (i = 0; i < t->n_names; i++) {
			if (i)
				fputc(',', m);
			json_str(m, kf_strtab_get(&t->strs, t->names[i]));
		}
		fputs("]}", m);
	}
	if (!m || fclose(m) != 0 || !json) {
		free(json);
		free(order);
		free(newof);
		fputs("\x01", out);   /* not the magic: the page says it cannot read it */
		return;
	}
	fputs("KFFG", out);
	put_u32(out, 2);
	put_u32(out, (uint32_t)t->n);
	put_u32(out, (uint32_t)jlen);
	fwrite(json, 1, jlen, out);
	off = 16;
	pad8(out, &off, jlen);
	free(json);
	/* in preorder: the k-th node is nd[order[k]] */
	for (i = 0; i < t->n; i++)
		put_u32(out, i ? (uint32_t)(i - newof[nd[order[i]].parent]) : 0);
	for (i = 0; i < t->n; i++)
		put_u32(out, nd[order[i]].name);
	for (i = 0; i < t->n; i++)
		put_u32(out, nd[order[i]].file);
	for (i = 0; i < t->n; i++)
		put_u32(out, nd[order[i]].line);
	for (i = 0; i < t->n; i++)
		put_u32(out, nd[order[i]].module);
	for (i = 0; i < t->n; i++)
		fputc(nd[order[i]].kind, out);
	pad8(out, &off, 20 * t->n + t->n);
	/* the weights of the nodes that have any (where stacks end) */
	for (i = 0; i < t->n; i++)
		m_n += has_weight(&nd[order[i]]);
	put_u32(out, (uint32_t)m_n);
	for (i = 0; i < t->n; i++)
		if (has_weight(&nd[order[i]]))
			put_u32(out, (uint32_t)i);
	off = 0;
	pad8(out, &off, 4 + 4 * m_n);
	for (i = 0; i < t->n; i++)
		if (has_weight(&nd[order[i]]))
			put_f64(out, (double)nd[order[i]].self);
	for (i = 0; i < t->n; i++)
		if (has_weight(&nd[order[i]]))
			put_f64(out, (double)clamp53(nd[order[i]].samples));
	for (i = 0; i < t->n && t->diff; i++)
		if (has_weight(&nd[order[i]]))
			put_f64(out, (double)nd[order[i]].a);
	for (i = 0; i < t->n && t->diff; i++)
		if (has_weight(&nd[order[i]]))
			put_f64(out, (double)nd[order[i]].b);
	free(order);
	free(newof);
}

/* The tree, gzip-compressed and in base64 (lines of 76), for the page to
 * inflate: little for the browser's HTML parser to read, and no text of
 * the data can end the element.  0 or KF_ENOMEM. */
static int write_data(const struct tree *t, const struct kf_flame_facts *f, FILE *out)
{
	static const char b64[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *tree = NULL, *gzp = NULL;
	size_t len = 0, gzlen = 0, i, col = 0;
	FILE *m = open_memstream(&tree, &len), *g;
	int r;

	if (!m)
		return KF_ENOMEM;
	write_tree(t, f, m);
	if (fclose(m) != 0 || !tree) {
		free(tree);
		return KF_ENOMEM;
	}
	if (!(g = open_memstream(&gzp, &gzlen))) {
		free(tree);
		return KF_ENOMEM;
	}
	r = kf_gzip_write(tree, len, g);
	free(tree);
	if (fclose(g) != 0 || !gzp || r) {
		free(gzp);
		return KF_ENOMEM;
	}
	for (i = 0; i < gzlen; i += 3) {
		const unsigned char *p = (const unsigned char *)gzp + i;
		uint32_t v = (uint32_t)p[0] << 16 | (i + 1 < gzlen ? (uint32_t)p[1] << 8 : 0) |
			     (i + 2 < gzlen ? p[2] : 0);
		char q[4] = { b64[v >> 18], b64[v >> 12 & 63],
			      i + 1 < gzlen ? b64[v >> 6 & 63] : '=',
			      i + 2 < gzlen ? b64[v & 63] : '=' };

		fwrite(q, 1, 4, out);
		if ((col += 4) == 76) {
			fputc('\n', out);
			col = 0;
		}
	}
	fputc('\n', out);
	free(gzp);
	return 0;
}

/* ---- the static SVG -------------------------------------------------------- */

/* flamegraph.pl's geometry: 1200 wide, 16 a row, 10 of padding */
#define SVG_W 1200.0
#define SVG_PAD 10.0
#define SVG_ROW 16.0
#define SVG_MINW 0.1

static uint32_t fnv(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static void hsl_rgb(double h, double sat, double l, int rgb[3]);

/* flame.js's colour(): the same hue, saturation and lightness per kind
 * and name */
static void svg_colour(unsigned kind, const char *name, int rgb[3])
{
	double v = fnv(name) / 4294967296.0, h, sat, l;

	switch (kind) {
	case K_ROOT: h = 0; sat = 0; l = 80 + 6 * v; break;
	case K_USER: h = 5 + 40 * v; sat = 80; l = 55 + 8 * v; break;
	case K_ON_BEHALF: h = 185 + 25 * v; sat = 60; l = 50 + 10 * v; break;
	case K_ATTRIBUTED: h = 270 + 25 * v; sat = 45; l = 60 + 10 * v; break;
	case K_IDLE: h = 0; sat = 0; l = 68 + 10 * v; break;
	case K_KTHREAD: h = 35 + 15 * v; sat = 30; l = 50 + 10 * v; break;
	case K_KERNEL: h = 210 + 20 * v; sat = 35; l = 58 + 10 * v; break;
	case K_JIT: h = 95 + 35 * v; sat = 55; l = 45 + 10 * v; break;
	case K_INLINED: h = 20 + 30 * v; sat = 90; l = 72 + 6 * v; break;
	case K_UNKNOWN: h = 350; sat = 15 + 15 * v; l = 55 + 8 * v; break;
	case K_MARKER: h = 55; sat = 90; l = 58 + 8 * v; break;
	default: h = 25 + 30 * v; sat = 45; l = 62 + 8 * v; break;
	}
	hsl_rgb(h, sat, l, rgb);
}

/* flame.js's diffColour(): red for growth, blue for shrinkage, deeper
 * the nearer the change is to the largest (square root: small changes
 * still show); a frame found only before pale blue-grey */
static void svg_diff_colour(double a, double b, double max_change, int rgb[3])
{
	double v = max_change > 0 ? (b - a) / max_change : 0, m = v < 0 ? -v : v;

	if (b == 0 && a > 0)
		hsl_rgb(215, 20, 80, rgb);
	else
		hsl_rgb(v < 0 ? 220 : 0, 10 + 75 * sqrt(m > 1 ? 1 : m),
			90 - 34 * sqrt(m > 1 ? 1 : m), rgb);
}

static void hsl_rgb(double h, double sat, double l, int rgb[3])
{
	double c, x, m, mod, r = 0, g = 0, b = 0;

	sat /= 100;
	l /= 100;
	/* hsl to rgb: chroma c, the second largest component x */
	c = (1 - (2 * l - 1 < 0 ? 1 - 2 * l : 2 * l - 1)) * sat;
	mod = h / 60 - 2 * (int)(h / 120);     /* (h / 60) mod 2, h >= 0 */
	x = c * (1 - (mod - 1 < 0 ? 1 - mod : mod - 1));
	m = l - c / 2;
	switch ((int)(h / 60) % 6) {
	case 0: r = c; g = x; break;
	case 1: r = x; g = c; break;
	case 2: g = c; b = x; break;
	case 3: g = x; b = c; break;
	case 4: r = x; b = c; break;
	default: r = c; b = x; break;
	}
	rgb[0] = (int)((r + m) * 255 + 0.5);
	rgb[1] = (int)((g + m) * 255 + 0.5);
	rgb[2] = (int)((b + m) * 255 + 0.5);
}


static void svg_amount(FILE *out, const char *unit, double v)
{
	if (strcmp(unit, "ns") == 0)
		fprintf(out, "%.3f ms", v / 1e6);
	else
		fprintf(out, "%.0f %s", v, unit);
}

/* One SVG a la flamegraph.pl: a <g> per frame with a <title> (name,
 * weight, share: the tooltip), its <rect> and, where it fits, its
 * name; frames narrower than 0.1 of a pixel left out. */
static int write_svg(const struct tree *t, const struct kf_flame_facts *f, FILE *out)
{
	double *total = kf_calloc(t->n, sizeof(*total)), *x = kf_calloc(t->n, sizeof(*x));
	double *next = kf_calloc(t->n, sizeof(*next)), *ta = NULL, *tb = NULL, max_change = 0;
	uint32_t *depth = kf_calloc(t->n, sizeof(*depth)), *order = NULL, *newof = NULL;
	uint32_t max_depth = 0;
	uint8_t *gone = kf_calloc(t->n, 1);
	double scale, height, width = SVG_W - 2 * SVG_PAD;
	size_t i, k, hidden = 0;
	int r = 0;

	if (t->diff) {
		ta = kf_calloc(t->n, sizeof(*ta));
		tb = kf_calloc(t->n, sizeof(*tb));
	}
	if (!total || !x || !next || !depth || !gone || (t->diff && (!ta || !tb)) ||
	    preorder(t, &order, &newof)) {
		r = KF_ENOMEM;
		goto out;
	}
	for (i = t->n; i-- > 0;) {
		total[i] += (double)t->nodes[i].self;
		if (i)
			total[t->nodes[i].parent] += total[i];
		if (!t->diff)
			continue;
		ta[i] += (double)t->nodes[i].a;
		tb[i] += (double)t->nodes[i].b;
		if (i) {
			ta[t->nodes[i].parent] += ta[i];
			tb[t->nodes[i].parent] += tb[i];
		}
	}
	for (i = 1; t->diff && i < t->n; i++)
		if (fabs(tb[i] - ta[i]) > max_change)
			max_change = fabs(tb[i] - ta[i]);
	for (i = 1; i < t->n; i++) {
		depth[i] = depth[t->nodes[i].parent] + 1;
		if (depth[i] > max_depth)
			max_depth = depth[i];
	}
	scale = total[0] > 0 ? width / total[0] : 0;
	height = (max_depth + 1) * SVG_ROW + 3 * SVG_ROW + 2 * SVG_PAD;
	fprintf(out, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
		"xmlns=\"http://www.w3.org/2000/svg\">\n"
		"<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" fill=\"#fafaf7\"/>\n"
		"<text x=\"%.0f\" y=\"24\" font-family=\"Verdana\" font-size=\"17\" "
		"text-anchor=\"middle\">", SVG_W, height, SVG_W, height, SVG_W / 2);
	html(out, f->title);
	fprintf(out, "</text>\n<text x=\"%.0f\" y=\"42\" font-family=\"Verdana\" font-size=\"12\" "
		"fill=\"#555\" text-anchor=\"middle\">", SVG_W / 2);
	html(out, f->subtitle);
	fputs("</text>\n<g font-family=\"Verdana\" font-size=\"12\">\n", out);
	/* in preorder (children sorted): x is each frame's left edge, next
	 * where its next child starts; a frame too narrow to draw is counted,
	 * and its subtree is gone with it */
	x[0] = next[0] = SVG_PAD;
	for (k = 0; k < t->n; k++) {
		uint32_t n = order[k], p = t->nodes[n].parent;
		double w = total[n] * scale, y = height - SVG_PAD - (depth[n] + 1) * SVG_ROW;
		const char *name = n ? kf_strtab_get(&t->strs, t->names[t->nodes[n].name]) : "all";
		int rgb[3];

		KF_WORK(1);
		if (n && gone[p]) {
			gone[n] = 1;
			continue;
		}
		if (n) {
			x[n] = next[p];
			next[p] += w;
			next[n] = x[n];
		}
		if (w < SVG_MINW) {
			gone[n] = 1;
			hidden++;
			continue;
		}
		if (t->diff)
			svg_diff_colour(ta[n], tb[n], max_change, rgb);
		else
			svg_colour(t->nodes[n].kind, name, rgb);
		fputs("<g><title>", out);
		html(out, name);
		fputs(" (", out);
		if (t->diff) {
			svg_amount(out, f->unit, ta[n]);
			fputs(" before, ", out);
			svg_amount(out, f->unit, tb[n]);
			fprintf(out, " after: %s%.0f", tb[n] >= ta[n] ? "+" : "", tb[n] - ta[n]);
			if (ta[n] > 0)
				fprintf(out, ", %+.1f%%", 100 * (tb[n] - ta[n]) / ta[n]);
			fputs(")</title>", out);
		} else {
			svg_amount(out, f->unit, total[n]);
			fprintf(out, ", %.2f%%)</title>",
				total[0] > 0 ? 100 * total[n] / total[0] : 0);
		}
		fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
			"height=\"%.1f\" fill=\"rgb(%d,%d,%d)\" rx=\"2\" ry=\"2\"/>",
			x[n], y, w, SVG_ROW - 1, rgb[0], rgb[1], rgb[2]);
		/* the name where it fits: about 7 pixels a character */
		if (w > 21) {
			size_t fit = (size_t)((w - 6) / 7), len = strlen(name);

			fprintf(out, "<text x=\"%.1f\" y=\"%.1f\">", x[n] + 3, y + 11.5);
			if (len <= fit) {
				html(out, name);
			} else if (fit > 2) {
				char *cut = kf_malloc(fit + 1);

				if (cut) {
					memcpy(cut, name, fit - 2);
					memcpy(cut + fit - 2, "..", 3);
					html(out, cut);
					free(cut);
				}
			}
			fputs("</text>", out);
		}
		fputs("</g>\n", out);
	}
	fputs("</g>\n", out);
	if (hidden)
		fprintf(out, "<text x=\"%.0f\" y=\"%.0f\" font-family=\"Verdana\" font-size=\"11\" "
			"fill=\"#777\">%zu frames narrower than 0.1 pixel not drawn</text>\n",
			SVG_PAD, height - 2, hidden);
	fputs("</svg>\n", out);
out:
	free(total);
	free(ta);
	free(tb);
	free(x);
	free(next);
	free(depth);
	free(gone);
	free(order);
	free(newof);
	return r;
}

int kf_flame_write(const struct kf_stack_src *src, const struct kf_flame_facts *f, FILE *out)
{
	struct tree t;
	uint32_t empty;
	size_t i;
	int r = 0;

	memset(&t, 0, sizeof(t));
	kf_map64_init(&t.child);
	kf_map64_init(&t.dense);
	if (!kf_strtab_init(&t.strs) || !KF_GROW(t.nodes, t.cap, 1) ||
	    !(t.module_name = kf_calloc(src->n_modules + 1, sizeof(*t.module_name)))) {
		r = KF_ENOMEM;
		goto out;
	}
	/* name 0 is "" (no file), node 0 "all" */
	if ((r = name_index(&t, "", 0, &empty)))
		goto out;
	t.nodes[t.n++] = (struct node){ 0, 0, 0, 0, 0, K_ROOT, 0, 0, 0, 0, 0 };
	t.diff = src->base != NULL;
	for (i = 0; i < src->n_stacks && !r; i++)
		r = add_stack(&t, src, i);
	if (r)
		goto out;
	errno = 0;
	r = f->svg ? write_svg(&t, f, out) : write_page(&t, f, out);
	if (!r && (fflush(out) != 0 || ferror(out)))
		r = KF_EIO;
out:
	free(t.nodes);
	free(t.names);
	free(t.module_name);
	free(t.prev_node);
	kf_map64_fini(&t.child);
	kf_map64_fini(&t.dense);
	kf_strtab_fini(&t.strs);
	return r;
}
