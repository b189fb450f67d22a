/* annotate.c - the hot functions, instruction by instruction (annotate.h).
 *
 * The counting rule is perf annotate's (symbol__inc_addr_samples): a
 * sample is charged to the symbol whose [start, end) holds its ip, with
 * perf's end fix-ups, and within the function to the instruction whose
 * bytes hold it.  Everything else here is what perf annotate does not do.
 */
#include "annotate.h"

#include <inttypes.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demangle.h"
#include "error.h"
#include "inline.h"
#include "symtab.h"

#define MAX_CHAIN 32
/* a function bigger than this is not disassembled (a symbol whose size
 * lies, or a fix-up that ran to the end of .text) */
#define MAX_FUNC_BYTES ((uint64_t)4 << 20)

/* One sampled ip and the function it belongs to. */
struct hit {
	uint32_t module;
	bool fde;
	uint64_t key;                 /* symbol start (frame addresses), or
					 the FDE's low address (ELF) */
	uint64_t end;                 /* symbol end, or the FDE's high */
	const struct kf_sym *sym;
	const struct kf_symtab *tab;
	size_t ip;                    /* index into the ipcounts */
};

struct cand {
	size_t h0, h1;                /* its hits: [h0, h1) of the sorted array */
	uint64_t samples, period, exact;
	const char *name, *raw;
	bool kernel;
};

static int hit_cmp(const void *pa, const void *pb)
{
	const struct hit *a = pa, *b = pb;

	if (a->module != b->module)
		return a->module < b->module ? -1 : 1;
	if (a->fde != b->fde)
		return a->fde ? 1 : -1;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return a->ip < b->ip ? -1 : a->ip > b->ip;
}

static int cand_cmp(const void *pa, const void *pb)
{
	const struct cand *a = pa, *b = pb;
	int c;

	if (a->samples != b->samples)
		return a->samples > b->samples ? -1 : 1;
	c = strcmp(a->name, b->name);
	if (c)
		return c;
	return a->h0 < b->h0 ? -1 : a->h0 > b->h0;
}

static const char *arena_str(struct kf_annot *an, const char *s)
{
	return s ? kf_arena_strndup(&an->arena, s, strlen(s)) : NULL;
}

static const char *arena_printf(struct kf_annot *an, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static const char *arena_printf(struct kf_annot *an, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return arena_str(an, buf);
}

/* a + b in the arena */
static const char *arena_cat(struct kf_annot *an, const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	char *r = kf_arena_alloc(&an->arena, la + lb + 1);

	if (!r)
		return NULL;
	memcpy(r, a, la);
	memcpy(r + la, b, lb + 1);
	return r;
}

/* A symbol's name as annotate shows it: the table's (demangled, as perf
 * names frames) with the clone suffix demangling dropped
 * (".constprop.0", ".cold"). */
static const char *sym_display(struct kf_annot *an, const struct kf_symtab *t,
			       const struct kf_sym *s)
{
	return arena_cat(an, kf_sym_name(t, s), kf_sym_clone(t, s));
}

static int add_skip(struct kf_annot *an, size_t *cap, const char *what, uint32_t module,
		    uint64_t addr, const struct kf_ipcount *c, const char *reason,
		    const char *fix)
{
	size_t i;

	/* one entry per module and reason */
	for (i = 0; i < an->n_skipped; i++) {
		struct kf_annot_skip *k = &an->skipped[i];

		KF_WORK(1);
		if (k->module == module && strcmp(k->reason, reason) == 0) {
			k->samples += c->samples;
			k->period += c->period;
			return 0;
		}
	}
	if (!KF_GROW(an->skipped, *cap, an->n_skipped + 1))
		return KF_ENOMEM;
	an->skipped[an->n_skipped++] = (struct kf_annot_skip){
		arena_str(an, what), module, addr, c->samples, c->period,
		arena_str(an, reason), arena_str(an, fix) };
	return 0;
}

static const char *symbols_fix(enum kf_dso_status st)
{
	switch (st) {
	case KF_DSO_MISMATCH:
		return "give the file with the recorded build-id (--symfs, --buildid-dir, --debug-dir)";
	case KF_DSO_MISSING:
	case KF_DSO_NO_HOST:
		return "give the file (--symfs DIR with it under its recorded path, or --buildid-dir)";
	case KF_DSO_NO_SYMBOLS:
		return "install its debug file (--debug-dir) or give an unstripped copy";
	default:
		return NULL;
	}
}

/* ---- ranking and selection ------------------------------------------------ */

static bool base_is(const char *path, const char *want)
{
	const char *b = strrchr(path, '/');

	return strcmp(path, want) == 0 || (b && strcmp(b + 1, want) == 0);
}

struct matcher {
	regex_t *re;
	bool *is_re;
	size_t n;
};

static int matcher_init(struct matcher *m, const struct kf_annot_opts *o, char *err,
			size_t errlen)
{
	size_t i;

	memset(m, 0, sizeof(*m));
	if (!o->n_symbols)
		return 0;
	m->re = calloc(o->n_symbols, sizeof(*m->re));
	m->is_re = calloc(o->n_symbols, sizeof(*m->is_re));
	if (!m->re || !m->is_re)
		return KF_ENOMEM;
	for (i = 0; i < o->n_symbols; i++) {
		const char *s = o->symbols[i];
		size_t len = strlen(s);

		if (len >= 2 && s[0] == '/' && s[len - 1] == '/') {
			char *pat = kf_strndup(s + 1, len - 2);
			int r;

			if (!pat)
				return KF_ENOMEM;
			r = regcomp(&m->re[i], pat, REG_EXTENDED | REG_NOSUB);
			free(pat);
			if (r) {
				char msg[128];

				regerror(r, &m->re[i], msg, sizeof(msg));
				snprintf(err, errlen, "--symbol %s: %s", s, msg);
				return KF_EINVAL;
			}
			m->is_re[i] = true;
		}
		m->n = i + 1;
	}
	return 0;
}

static void matcher_fini(struct matcher *m)
{
	size_t i;

	for (i = 0; m->is_re && i < m->n; i++)
		if (m->is_re[i])
			regfree(&m->re[i]);
	free(m->re);
	free(m->is_re);
}

static bool name_matches(const struct matcher *m, const struct kf_annot_opts *o,
			 const char *name)
{
	size_t i;

	if (!name)
		return false;
	for (i = 0; i < o->n_symbols; i++) {
		if (m->is_re[i] ? regexec(&m->re[i], name, 0, NULL, 0) == 0 :
				  strcmp(name, o->symbols[i]) == 0)
			return true;
	}
	return false;
}

/* ---- one function ----------------------------------------------------------- */

static struct kf_disasm *disasm_for(struct kf_annot *an, uint16_t machine, bool intel)
{
	size_t i;

	for (i = 0; i < 3 && an->dis[i]; i++)
		if (an->dis_machine[i] == machine)
			return an->dis[i];
	if (i == 3 || kf_disasm_open(&an->dis[i], machine, intel) != 0)
		return NULL;
	an->dis_machine[i] = machine;
	return an->dis[i];
}

/* The instruction holding addr (insns sorted, contiguous), or -1. */
static long insn_at(const struct kf_annot_func *f, uint64_t addr)
{
	size_t lo = 0, hi = f->n_insns;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct kf_annot_insn *in = &f->insns[mid];

		KF_WORK(1);
		if (addr < in->in.addr)
			hi = mid;
		else if (addr - in->in.addr >= (in->in.size ? in->in.size : 1))
			lo = mid + 1;
		else
			return (long)mid;
	}
	return -1;
}

/* A sum keyed by (name, line), found by a hash of both. */
struct totals {
	struct kf_annot_total *v;
	size_t n, cap;
	struct kf_map64 idx;
};

static int totals_add(struct totals *t, const char *name, unsigned line, uint64_t samples,
		      uint64_t period)
{
	uint64_t key = kf_hash_bytes(name, strlen(name), line) | 1;
	uint32_t i;

	/* on a hash collision the probe walks on to the next key */
	for (;; key += 2) {
		KF_WORK(1);
		if (!kf_map64_get(&t->idx, key, &i))
			break;
		if (t->v[i].line == line && strcmp(t->v[i].name, name) == 0) {
			t->v[i].samples += samples;
			t->v[i].period += period;
			return 0;
		}
	}
	if (!KF_GROW(t->v, t->cap, t->n + 1) || !kf_map64_put(&t->idx, key, (uint32_t)t->n))
		return KF_ENOMEM;
	t->v[t->n++] = (struct kf_annot_total){ name, line, samples, period };
	return 0;
}

static int total_cmp(const void *pa, const void *pb)
{
	const struct kf_annot_total *a = pa, *b = pb;
	int c;

	if (a->samples != b->samples)
		return a->samples > b->samples ? -1 : 1;
	if (a->period != b->period)
		return a->period > b->period ? -1 : 1;
	c = strcmp(a->name, b->name);
	return c ? c : (a->line < b->line ? -1 : a->line > b->line);
}

static int loop_cmp(const void *pa, const void *pb)
{
	const struct kf_annot_loop *a = pa, *b = pb;

	if (a->samples != b->samples)
		return a->samples > b->samples ? -1 : 1;
	if (a->head != b->head)
		return a->head < b->head ? -1 : 1;
	return a->end < b->end ? -1 : a->end > b->end;
}

static int loop_range_cmp(const void *pa, const void *pb)
{
	const struct kf_annot_loop *a = pa, *b = pb;

	if (a->head != b->head)
		return a->head < b->head ? -1 : 1;
	return a->end < b->end ? -1 : a->end > b->end;
}

static int u64_cmp(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;

	return a < b ? -1 : a > b;
}

static int insn_cmp(const void *pa, const void *pb)
{
	const struct kf_annot_insn *a = pa, *b = pb;

	return a->in.addr < b->in.addr ? -1 : a->in.addr > b->in.addr;
}

/* A DWARF function's name: its demangled linkage name, else its name with
 * the scopes of its DIEs, else its bare name ("" when it has none), as the
 * namer gives inline frames.  NULL when out of memory. */
static const char *link_name(struct kf_annot *an, const struct kf_inl *l)
{
	char *dem = l->linkage ? kf_demangle(l->linkage) : NULL;
	const char *r;

	if (!dem)
		return l->qualified ? l->qualified : l->name ? l->name : "";
	r = arena_str(an, dem);
	free(dem);
	return r;
}

/* The DWARF name of the function that owns the code at vaddr, or NULL. */
static const char *dwarf_name(struct kf_annot *an, struct kf_dsos *d, uint32_t module,
			      bool kernel, uint64_t vaddr)
{
	struct kf_dwidx *ix;
	struct kf_inl ch[MAX_CHAIN];

	if (kf_dsos_load(d, module, KF_DSO_LOAD_DWARF | KF_DSO_LOAD_CODE))
		return NULL;
	ix = kf_dso_debuginfo(d, module);
	if (!ix || (kernel && !kf_dso_vaddr(d, module, vaddr, &vaddr)) ||
	    kf_inline_chain(ix, vaddr, ch, MAX_CHAIN) <= 0)
		return NULL;
	return link_name(an, &ch[0]);
}

/* The inline chain at each instruction, as arena links. */
static int chains(struct kf_annot *an, struct kf_dsos *d, struct kf_annot_func *f)
{
	struct kf_dwidx *ix = kf_dso_debuginfo(d, f->module);
	struct kf_inl ch[MAX_CHAIN];
	/* the previous instruction's chain: the same DIE at the same depth
	 * has the same name, named once */
	uint64_t prev_die[MAX_CHAIN];
	const struct kf_annot_link *prev = NULL;
	int n_prev = 0;
	size_t i;

	if (!ix)
		return 0;
	for (i = 0; i < f->n_insns; i++) {
		struct kf_annot_insn *in = &f->insns[i];
		struct kf_annot_link *links;
		uint64_t va = in->in.addr;
		int n, k;

		KF_WORK(1);
		if (f->kernel && !kf_dso_vaddr(d, f->module, in->in.addr, &va))
			continue;
		n = kf_inline_chain(ix, va, ch, MAX_CHAIN);
		if (n <= 0)
			continue;
		links = kf_arena_alloc(&an->arena, (size_t)n * sizeof(*links));
		if (!links)
			return KF_ENOMEM;
		for (k = 0; k < n; k++) {
			links[k].function = k < n_prev && prev_die[k] == ch[k].die ?
					    prev[k].function : link_name(an, &ch[k]);
			if (!links[k].function)
				return KF_ENOMEM;
			links[k].file = ch[k].file;
			links[k].line = ch[k].line > 0 ? (unsigned)ch[k].line : 0;
			prev_die[k] = ch[k].die;
		}
		prev = links;
		n_prev = n;
		in->chain = links;
		in->n_chain = (unsigned)n;
	}
	if (f->n_insns && f->insns[0].n_chain)
		f->function = f->insns[0].chain[0].function;
	return 0;
}

/* Totals per source line and per inlined callee. */
static int sums(struct kf_annot_func *f)
{
	struct totals lines = { 0 }, inl = { 0 };
	size_t i;
	int r = 0;

	kf_map64_init(&lines.idx);
	kf_map64_init(&inl.idx);
	for (i = 0; i < f->n_insns && !r; i++) {
		const struct kf_annot_insn *in = &f->insns[i];
		const struct kf_annot_link *last;
		unsigned k, j;

		if (!in->n_chain || !in->samples)
			continue;
		last = &in->chain[in->n_chain - 1];
		if (last->file && last->line)
			r = totals_add(&lines, last->file, last->line, in->samples, in->period);
		/* each callee once per instruction, however often it nests */
		for (k = 1; k < in->n_chain && !r; k++) {
			for (j = 1; j < k; j++)
				if (strcmp(in->chain[j].function, in->chain[k].function) == 0)
					break;
			if (j == k && in->chain[k].function[0])
				r = totals_add(&inl, in->chain[k].function, 0, in->samples,
					       in->period);
		}
	}
	kf_map64_fini(&lines.idx);
	kf_map64_fini(&inl.idx);
	if (r) {
		free(lines.v);
		free(inl.v);
		return r;
	}
	if (lines.n)
		qsort(lines.v, lines.n, sizeof(*lines.v), total_cmp);
	if (inl.n)
		qsort(inl.v, inl.n, sizeof(*inl.v), total_cmp);
	f->lines = lines.v;
	f->n_lines = lines.n;
	f->inlinees = inl.v;
	f->n_inlinees = inl.n;
	return 0;
}

/* Loops: each backward direct branch inside the function closes one,
 * from its target to the branch's end. */
static int loops(struct kf_annot_func *f)
{
	size_t i, cap = 0, n = 0;
	uint64_t *pre_s, *pre_p;
	struct kf_annot_loop *v = NULL;

	pre_s = calloc(f->n_insns + 1, sizeof(*pre_s));
	pre_p = calloc(f->n_insns + 1, sizeof(*pre_p));
	if (!pre_s || !pre_p) {
		free(pre_s);
		free(pre_p);
		return KF_ENOMEM;
	}
	for (i = 0; i < f->n_insns; i++) {
		pre_s[i + 1] = pre_s[i] + f->insns[i].samples;
		pre_p[i + 1] = pre_p[i] + f->insns[i].period;
	}
	for (i = 0; i < f->n_insns; i++) {
		const struct kf_annot_insn *in = &f->insns[i];
		long h;

		KF_WORK(1);
		if (!in->in.has_target || (in->in.kind != KF_INSN_JUMP && in->in.kind != KF_INSN_COND) ||
		    in->in.target > in->in.addr || in->in.target < f->start)
			continue;
		h = insn_at(f, in->in.target);
		if (h < 0)
			continue;
		if (!KF_GROW(v, cap, n + 1)) {
			free(pre_s);
			free(pre_p);
			free(v);
			return KF_ENOMEM;
		}
		v[n++] = (struct kf_annot_loop){ in->in.target, in->in.addr + in->in.size,
			pre_s[i + 1] - pre_s[h], pre_p[i + 1] - pre_p[h] };
	}
	free(pre_s);
	free(pre_p);
	/* one loop per (head, end): the branches to one head from one
	 * place are one loop (each range is counted once whatever jumps) */
	if (n) {
		size_t w = 1;

		qsort(v, n, sizeof(*v), loop_range_cmp);
		for (i = 1; i < n; i++)
			if (v[i].head != v[w - 1].head || v[i].end != v[w - 1].end)
				v[w++] = v[i];
		n = w;
		qsort(v, n, sizeof(*v), loop_cmp);
	}
	f->loops = v;
	f->n_loops = n;
	return 0;
}

/* An instruction a sample's ip may have skidded past: it waits for memory
 * or for a long computation. */
static bool stalls(const struct kf_insn *in)
{
	static const char *const slow[] = { "div", "idiv", "sqrt", "lock", "xchg", "cmpxchg" };
	size_t i;

	if (in->kind != KF_INSN_PLAIN)
		return false;
	if (in->reads_mem)
		return true;
	for (i = 0; i < sizeof(slow) / sizeof(slow[0]); i++)
		if (strncmp(in->text, slow[i], strlen(slow[i])) == 0)
			return true;
	return false;
}

/* The skid view: samples without exact IPs right after a stalling
 * instruction, moved back to it. */
static void skid(struct kf_annot_func *f)
{
	size_t i;

	for (i = 0; i < f->n_insns; i++) {
		f->insns[i].shifted_samples = f->insns[i].samples;
		f->insns[i].shifted_period = f->insns[i].period;
	}
	for (i = 1; i < f->n_insns; i++) {
		struct kf_annot_insn *in = &f->insns[i], *pv = &f->insns[i - 1];
		uint64_t moved, mp;

		if (!in->samples || in->exact >= in->samples || !stalls(&pv->in))
			continue;
		in->skid_suspect = true;
		moved = in->samples - in->exact;
		/* the period moves in proportion to the samples that move */
		mp = (uint64_t)((double)in->period * ((double)moved / (double)in->samples));
		in->shifted_samples -= moved;
		in->shifted_period -= mp;
		pv->shifted_samples += moved;
		pv->shifted_period += mp;
	}
}

/* Names direct branch targets: local labels inside, symbols outside. */
static int targets(struct kf_annot *an, struct kf_dsos *d, struct kf_annot_func *f,
		   const struct kf_symtab *tab)
{
	uint64_t *t = NULL;
	size_t i, n = 0, cap = 0;

	for (i = 0; i < f->n_insns; i++) {
		struct kf_annot_insn *in = &f->insns[i];

		if (!in->in.has_target)
			continue;
		if (in->in.target >= f->start && in->in.target < f->end &&
		    !(in->in.target == f->start && in->in.kind == KF_INSN_CALL)) {
			if (!KF_GROW(t, cap, n + 1)) {
				free(t);
				return KF_ENOMEM;
			}
			t[n++] = in->in.target;
		} else if (in->in.kind == KF_INSN_JUMP) {
			in->in.kind = KF_INSN_TAILCALL;
		}
	}
	/* the distinct targets in address order: L<k> is the k-th */
	if (n) {
		size_t w = 1;

		qsort(t, n, sizeof(*t), u64_cmp);
		for (i = 1; i < n; i++)
			if (t[i] != t[w - 1])
				t[w++] = t[i];
		n = w;
	}
	for (i = 0; i < f->n_insns; i++) {
		struct kf_annot_insn *in = &f->insns[i];
		uint64_t off;

		KF_WORK(1);
		if (!in->in.has_target)
			continue;
		if (in->in.target == f->start && in->in.kind == KF_INSN_CALL) {
			in->target_name = f->symbol;   /* recursion */
		} else if (in->in.target >= f->start && in->in.target < f->end) {
			const uint64_t *at = bsearch(&in->in.target, t, n, sizeof(*t), u64_cmp);
			size_t k = (size_t)(at - t) + 1;
			long h = insn_at(f, in->in.target);

			in->target_name = arena_printf(an, "L%zu", k);
			if (h >= 0)
				f->insns[h].label = (unsigned)k;
		} else if (tab && kf_dso_frame_addr(d, f->module, in->in.target, &off)) {
			const struct kf_sym *s = kf_symtab_find(tab, off);

			char plus[24];
			const char *nm = s ? sym_display(an, tab, s) : NULL;

			if (nm && off == s->start) {
				in->target_name = nm;
			} else if (nm) {
				snprintf(plus, sizeof(plus), "+0x%" PRIx64, off - s->start);
				in->target_name = arena_cat(an, nm, plus);
			}
		}
	}
	free(t);
	return 0;
}

/* Disassembles [f->start, f->end) from the module's code, section by
 * section: a range that spans sections (perf's end fix-ups stretch a
 * zero-sized _init over .plt) is decoded from each section's start, as
 * objdump does, and the bytes between sections are not listed.  On no
 * code at all, *why says why and f->insns stays NULL. */
static int disassemble(struct kf_annot *an, struct kf_dsos *d, struct kf_annot_func *f,
		       const struct kf_annot_opts *o, const char **why)
{
	struct kf_disasm *dis = NULL;
	struct kf_insn *raw = NULL;
	size_t rcap = 0, n = 0, i;
	uint64_t at = f->start;

	while (at < f->end) {
		uint64_t got, next;
		const uint8_t *code = kf_dso_code(d, f->module, at, f->end - at, &got, &next, why);

		KF_WORK(1);
		if (!code) {
			if (next == UINT64_MAX || next >= f->end || !n)
				break;
			at = next;         /* between two sections */
			continue;
		}
		if (!dis && !(dis = disasm_for(an, kf_dso_code_machine(d, f->module), o->intel))) {
			*why = "no disassembler for the file's architecture";
			break;
		}
		if (kf_disasm_run(dis, code, (size_t)got, at, &raw, &n, &rcap)) {
			free(raw);
			return KF_ENOMEM;
		}
		at += got;
	}
	if (n) {
		f->insns = calloc(n, sizeof(*f->insns));
		if (!f->insns) {
			free(raw);
			return KF_ENOMEM;
		}
		for (i = 0; i < n; i++)
			f->insns[i].in = raw[i];
		f->n_insns = n;
		f->code_file = kf_dso_code_file(d, f->module);
		*why = NULL;
	}
	free(raw);
	return 0;
}

static int annotate_one(struct kf_annot *an, struct kf_dsos *d, const struct kf_ipcounts *ips,
			const struct hit *hits, const struct cand *c,
			const struct kf_annot_opts *o, struct kf_annot_func *f)
{
	const struct hit *h = &hits[c->h0];
	uint64_t len, maxv = 0;
	const char *why = NULL;
	size_t i;
	int r;

	memset(f, 0, sizeof(*f));
	f->symbol = c->name;
	f->raw = c->raw;
	f->module = h->module;
	f->kernel = c->kernel;
	f->fde = h->fde;
	f->samples = c->samples;
	f->period = c->period;
	f->exact = c->exact;
	{
		const char *cold = strstr(f->symbol, ".cold");

		if (cold && (cold[5] == '\0' || cold[5] == '.'))
			f->cold_of = kf_arena_strndup(&an->arena, f->symbol,
						      (size_t)(cold - f->symbol));
	}
	r = kf_dsos_load(d, f->module, KF_DSO_LOAD_SYMS | KF_DSO_LOAD_CODE |
			 (o->lines ? KF_DSO_LOAD_DWARF : 0));
	if (r)
		return r;
	if (h->fde) {
		f->start = h->key;
		f->end = h->end;
	} else if (!kf_dso_elf_addr(d, f->module, h->key, &f->start)) {
		f->start = h->key;   /* no segment: keep the file offset */
		why = "the symbol lies in no loaded segment";
	} else {
		f->end = f->start + (h->end - h->key);
	}
	/* every sampled address, as ELF addresses; a zero-sized symbol
	 * reaches to the last of them */
	for (i = c->h0; i < c->h1; i++) {
		const struct kf_ipcount *ic = &ips->v[hits[i].ip];
		uint64_t va = ic->addr;

		kf_dso_elf_addr(d, f->module, ic->addr, &va);
		if (va > maxv)
			maxv = va;
	}
	if (f->end <= maxv)
		f->end = maxv + 1;
	len = f->end - f->start;
	if (!why && len > MAX_FUNC_BYTES)
		why = "the function is larger than 4 MiB (its symbol's size is not believable)";
	if (!why) {
		r = disassemble(an, d, f, o, &why);
		if (r)
			return r;
	}
	if (!f->insns) {
		/* no code: the sampled addresses alone, in order */
		f->no_code = why ? why : "no code";
		f->insns = calloc(c->h1 - c->h0, sizeof(*f->insns));
		if (!f->insns)
			return KF_ENOMEM;
		for (i = c->h0; i < c->h1; i++) {
			const struct kf_ipcount *ic = &ips->v[hits[i].ip];
			struct kf_annot_insn *in = &f->insns[f->n_insns++];

			in->in.addr = ic->addr;
			kf_dso_elf_addr(d, f->module, ic->addr, &in->in.addr);
		}
		qsort(f->insns, f->n_insns, sizeof(*f->insns), insn_cmp);
		/* merge equal addresses (a JIT map and an exact duplicate) */
		{
			size_t w = 0;

			for (i = 0; i < f->n_insns; i++)
				if (!w || f->insns[w - 1].in.addr != f->insns[i].in.addr)
					f->insns[w++] = f->insns[i];
			f->n_insns = w;
		}
	}
	/* the samples, instruction by instruction */
	for (i = c->h0; i < c->h1; i++) {
		const struct kf_ipcount *ic = &ips->v[hits[i].ip];
		uint64_t va = ic->addr;
		long k;

		kf_dso_elf_addr(d, f->module, ic->addr, &va);
		k = insn_at(f, va);
		if (k < 0)
			continue;
		f->insns[k].samples += ic->samples;
		f->insns[k].period += ic->period;
		f->insns[k].exact += ic->exact;
	}
	if (!f->no_code) {
		skid(f);
		r = targets(an, d, f, h->tab);
		if (!r)
			r = loops(f);
		if (r)
			return r;
	}
	if (o->lines) {
		bool looked;

		r = chains(an, d, f);
		if (!r)
			r = sums(f);
		if (r)
			return r;
		f->lines_file = kf_dso_debuginfo_file(d, f->module, &looked);
	}
	return 0;
}

/* ---- cycles per basic block ------------------------------------------------------ */

/* The block pairs sorted by their end's (module, address). */
struct bbindex {
	const struct kf_bbcycles *bb;
	uint32_t *by;
};

static int bb_cmp(const void *pa, const void *pb, void *ctx)
{
	const struct kf_bbcycles *bb = ctx;
	const struct kf_frame *a = &bb->v[*(const uint32_t *)pa].end;
	const struct kf_frame *b = &bb->v[*(const uint32_t *)pb].end;

	if (a->module != b->module)
		return a->module < b->module ? -1 : 1;
	return (a->addr > b->addr) - (a->addr < b->addr);
}

/* The indexes 0 .. n-1 in the order cmp gives their entries of ctx, or
 * NULL on ENOMEM. */
static uint32_t *sorted_index(size_t n, int (*cmp)(const void *, const void *, void *),
			      const void *ctx)
{
	uint32_t *by = malloc((n ? n : 1) * sizeof(*by));
	size_t i;

	if (!by)
		return NULL;
	for (i = 0; i < n; i++)
		by[i] = (uint32_t)i;
	qsort_r(by, n, sizeof(*by), cmp, (void *)ctx);
	return by;
}

static int bb_sort(struct bbindex *x, const struct kf_bbcycles *bb)
{
	x->bb = bb;
	x->by = sorted_index(bb->n, bb_cmp, bb);
	return x->by ? 0 : KF_ENOMEM;
}

/* One pair as the function sees it: ELF addresses, the start 0 when it
 * cannot start the block. */
struct bbref {
	uint64_t end, start;
	const struct kf_bbpair *p;
};

static int bbref_cmp(const void *pa, const void *pb)
{
	const struct bbref *a = pa, *b = pb;

	if (a->end != b->end)
		return a->end < b->end ? -1 : 1;
	return (a->start > b->start) - (a->start < b->start);
}

/* t: the sampled addresses of ips, then each block end of bb that is
 * not among them, without samples (a function can have measured blocks
 * and no samples). */
static int with_block_ends(struct kf_ipcounts *t, const struct kf_ipcounts *ips,
			   const struct kf_bbcycles *bb)
{
	size_t i;

	/* kf_ipcounts_add_once with the stamp entries start with (0) finds
	 * or adds an entry and counts nothing: ips' addresses take its
	 * first ips->n entries, in its order (the same key), and get its
	 * counts; the block ends not among them stay at zero */
	for (i = 0; i < ips->n; i++) {
		const struct kf_ipcount *c = &ips->v[i];

		if (kf_ipcounts_add_once(t, c->module, c->addr, c->kernel, 0, 0))
			return KF_ENOMEM;
	}
	for (i = 0; i < bb->n; i++) {
		const struct kf_frame *e = &bb->v[i].end;

		KF_WORK(1);
		if (kf_ipcounts_add_once(t, e->module, e->addr, (e->flags & KF_FRAME_KERNEL) != 0,
					 0, 0))
			return KF_ENOMEM;
	}
	if (ips->n)
		memcpy(t->v, ips->v, ips->n * sizeof(*t->v));
	t->samples = ips->samples;
	t->period = ips->period;
	return 0;
}

/* The instruction that starts at addr, or -1. */
static long insn_starting(const struct kf_annot_func *f, uint64_t addr)
{
	long k = insn_at(f, addr);

	return k >= 0 && f->insns[k].in.addr == addr && f->insns[k].in.size ? k : -1;
}

/* The cycles of the blocks that end in f, by perf annotate's rules
 * (symbol__account_cycles, annotation__compute_ipc):
 *  - every record that ends at an address counts for its Cycles column
 *    (average, min, max), shown where an instruction starts there;
 *  - a record's start counts only when it lies in the same function and
 *    before the end (else the block has no start); of the records with a
 *    start, perf keeps those of the earliest start (the longest block) and
 *    forgets the others; without any, there is no IPC;
 *  - the block's IPC is its instructions (those that start in [start,
 *    end]) over its average cycles, given to each of its instructions
 *    that a block ending later did not already cover; the function's
 *    IPC is the instructions over the cycles of the blocks that covered
 *    some.
 * perf also hides a block whose longest form changed 32767 times; kfold
 * counts in no order, so it shows it. */
static int block_cycles(struct kf_dsos *d, const struct bbindex *x, struct kf_annot_func *f)
{
	const struct kf_bbcycles *bb = x->bb;
	struct bbref *refs = NULL;
	size_t lo = 0, hi = bb->n, n = 0, cap = 0, i, j, nb = 0;

	/* the first pair of f's module */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (bb->v[x->by[mid]].end.module < f->module)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo; i < bb->n && bb->v[x->by[i]].end.module == f->module; i++) {
		const struct kf_bbpair *p = &bb->v[x->by[i]];
		uint64_t va = p->end.addr, sva = p->start.addr;

		KF_WORK(1);
		kf_dso_elf_addr(d, f->module, p->end.addr, &va);
		if (va < f->start || va >= f->end)
			continue;
		if ((p->start.flags & KF_FRAME_NOMAP) || p->start.module != f->module)
			sva = 0;
		else
			kf_dso_elf_addr(d, f->module, p->start.addr, &sva);
		if (sva < f->start || sva >= f->end || sva >= va)
			sva = 0;
		if (!KF_GROW(refs, cap, n + 1)) {
			free(refs);
			return KF_ENOMEM;
		}
		refs[n++] = (struct bbref){ va, sva, p };
	}
	if (!n)
		return 0;
	qsort(refs, n, sizeof(*refs), bbref_cmp);
	for (i = 0; i + 1 < n; i++)
		nb += refs[i].end != refs[i + 1].end;
	f->blocks = calloc(nb + 1, sizeof(*f->blocks));
	if (!f->blocks) {
		free(refs);
		return KF_ENOMEM;
	}
	/* the ends from the last down, as perf fills the IPCs */
	for (j = n; j > 0;) {
		size_t g1 = j, g0 = j - 1;
		uint64_t recs = 0, cyc = 0, mn = UINT64_MAX, mx = 0, start = 0;
		uint64_t brecs = 0, bcyc = 0;
		long k;

		while (g0 > 0 && refs[g0 - 1].end == refs[g1 - 1].end)
			g0--;
		j = g0;
		for (i = g0; i < g1; i++) {
			const struct kf_bbpair *p = refs[i].p;

			recs += p->records;
			cyc += p->cycles;
			mn = p->min < mn ? p->min : mn;
			mx = p->max > mx ? p->max : mx;
			if (refs[i].start && (!start || refs[i].start == start)) {
				start = refs[i].start;   /* sorted: the earliest first */
				brecs += p->records;
				bcyc += p->cycles;
			}
		}
		f->bb_records += recs;
		k = insn_starting(f, refs[g0].end);
		if (k >= 0) {
			struct kf_annot_insn *in = &f->insns[k];

			in->bb_records = recs;
			in->bb_cycles = cyc;
			in->bb_min = mn;
			in->bb_max = mx;
		}
		if (start && bcyc) {
			struct kf_annot_block *b = &f->blocks[f->n_blocks];
			long a = insn_at(f, start);
			size_t m;

			memset(b, 0, sizeof(*b));
			b->start = start;
			b->end = refs[g0].end;
			b->records = brecs;
			b->cycles = bcyc;
			/* the instructions that start in [start, end] */
			for (m = a >= 0 ? (size_t)a : 0; m < f->n_insns; m++) {
				const struct kf_annot_insn *in = &f->insns[m];

				if (in->in.addr > b->end)
					break;
				if (in->in.addr >= start && in->in.size)
					b->insns++;
			}
			if (!b->insns)
				continue;
			/* perf's arithmetic: a float of the double quotient */
			b->ipc = (float)((double)b->insns / ((double)bcyc / (double)brecs));
			for (m = a >= 0 ? (size_t)a : 0; m < f->n_insns; m++) {
				struct kf_annot_insn *in = &f->insns[m];

				if (in->in.addr > b->end)
					break;
				if (in->in.addr >= start && in->in.size && in->ipc == 0.0) {
					in->ipc = b->ipc;
					b->covered++;
				}
			}
			if (b->covered) {
				f->hit_cycles += bcyc;
				f->hit_insns += (uint64_t)b->insns * brecs;
				f->covered += b->covered;
			}
			f->n_blocks++;
		}
	}
	free(refs);
	return 0;
}

/* ---- call sites ------------------------------------------------------------------ */

/* Return addresses sorted by (module, address), to find a function's. */
struct sites {
	const struct kf_ipcounts *t;
	uint32_t *by;                 /* indices into t->v */
	size_t n;
};

static int site_cmp(const void *pa, const void *pb, void *ctx)
{
	const struct kf_ipcounts *t = ctx;
	const struct kf_ipcount *a = &t->v[*(const uint32_t *)pa];
	const struct kf_ipcount *b = &t->v[*(const uint32_t *)pb];

	if (a->module != b->module)
		return a->module < b->module ? -1 : 1;
	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

/* The first entry of ss at or after (module, addr). */
static size_t first_at(const struct sites *ss, uint32_t module, uint64_t addr)
{
	size_t a = 0, b = ss->n;

	while (a < b) {
		size_t mid = a + (b - a) / 2;
		const struct kf_ipcount *c = &ss->t->v[ss->by[mid]];

		KF_WORK(1);
		if (c->module < module || (c->module == module && c->addr < addr))
			a = mid + 1;
		else
			b = mid;
	}
	return a;
}

/* Charges each return address inside f to the call before it. */
static void call_sites(struct kf_dsos *d, const struct sites *ss, struct kf_annot_func *f)
{
	uint64_t lo, hi;
	size_t a;

	if (f->no_code || !kf_dso_frame_addr(d, f->module, f->start, &lo) ||
	    !kf_dso_frame_addr(d, f->module, f->end - 1, &hi))
		return;
	/* from the first return address past lo: its call is at ra - 1 >= lo */
	for (a = first_at(ss, f->module, lo + 1); a < ss->n; a++) {
		const struct kf_ipcount *c = &ss->t->v[ss->by[a]];
		uint64_t va;
		long k;

		KF_WORK(1);
		if (c->module != f->module || c->addr - 1 > hi)
			break;
		if (!kf_dso_elf_addr(d, f->module, c->addr - 1, &va) || (k = insn_at(f, va)) < 0)
			continue;
		f->insns[k].call_samples += c->samples;
		f->insns[k].call_period += c->period;
	}
}

/* Each event's samples in f, at its instructions and in all: the entries
 * of each table in [f->start, f->end) (as frame addresses). */
static int event_counts(struct kf_dsos *d, const struct sites *ev, size_t n_events,
			struct kf_annot_func *f)
{
	uint64_t lo, hi;
	size_t e, i;

	/* one block: the function's counts, then each instruction's */
	f->ev = calloc((f->n_insns + 1) * 2 * n_events, sizeof(*f->ev));
	if (!f->ev)
		return KF_ENOMEM;
	for (i = 0; i < f->n_insns; i++)
		f->insns[i].ev = f->ev + (i + 1) * 2 * n_events;
	if (!kf_dso_frame_addr(d, f->module, f->start, &lo) ||
	    !kf_dso_frame_addr(d, f->module, f->end - 1, &hi))
		return 0;
	for (e = 0; e < n_events; e++) {
		const struct sites *ss = &ev[e];
		size_t a;

		for (a = first_at(ss, f->module, lo); a < ss->n; a++) {
			const struct kf_ipcount *c = &ss->t->v[ss->by[a]];
			uint64_t va;
			long k;

			KF_WORK(1);
			if (c->module != f->module || c->addr > hi)
				break;
			f->ev[2 * e] += c->samples;
			f->ev[2 * e + 1] += c->period;
			if (!kf_dso_elf_addr(d, f->module, c->addr, &va) || (k = insn_at(f, va)) < 0)
				continue;
			f->insns[k].ev[2 * e] += c->samples;
			f->insns[k].ev[2 * e + 1] += c->period;
		}
	}
	return 0;
}

/* An index of a table's entries sorted by (module, address). */
static int sort_table(struct sites *ss, const struct kf_ipcounts *t)
{
	ss->t = t;
	ss->n = t->n;
	ss->by = sorted_index(t->n, site_cmp, t);
	return ss->by ? 0 : KF_ENOMEM;
}

/* ---- the whole capture -------------------------------------------------------- */

int kf_annot_build(struct kf_annot *an, struct kf_dsos *d, struct kf_modules *mods,
		   const struct kf_ipcounts *ips, const struct kf_ipcounts *sites,
		   const struct kf_ipcounts *const *events, size_t n_events,
		   const struct kf_bbcycles *bb,
		   const struct kf_annot_opts *o, char *err, size_t errlen)
{
	struct sites ss = { sites, NULL, 0 };
	struct bbindex bx = { NULL, NULL };
	struct kf_ipcounts all;
	struct sites *ev = NULL;
	struct hit *hits = NULL;
	struct cand *cands = NULL;
	struct matcher m;
	size_t nh = 0, nc = 0, i, skcap = 0, fcap = 0;
	int r = 0;

	memset(an, 0, sizeof(*an));
	kf_ipcounts_init(&all);
	kf_arena_init(&an->arena);
	an->samples = ips->samples;
	an->period = ips->period;
	/* capstone is loaded at run time (disasm.h): without it there is
	 * nothing to annotate, whatever the capture */
	if ((r = kf_disasm_load(err, errlen)) != 0)
		return r;
	if (sites) {
		an->call_sites = true;
		if ((r = sort_table(&ss, sites)) != 0)
			goto out_sites;
	}
	if (bb && bb->n) {
		if ((r = bb_sort(&bx, bb)) != 0 || (r = with_block_ends(&all, ips, bb)) != 0)
			goto out_sites;
		ips = &all;
	}
	if (n_events > 1) {
		ev = calloc(n_events, sizeof(*ev));
		if (!ev) {
			r = KF_ENOMEM;
			goto out_sites;
		}
		an->n_events = n_events;
		for (i = 0; i < n_events && !r; i++)
			r = sort_table(&ev[i], events[i]);
		if (r)
			goto out_sites;
	}
	r = matcher_init(&m, o, err, errlen);
	if (r)
		goto out;
	hits = calloc(ips->n ? ips->n : 1, sizeof(*hits));
	if (!hits) {
		r = KF_ENOMEM;
		goto out;
	}
	/* each sampled address to its function; a block end without
	 * samples only to a symbol */
	for (i = 0; i < ips->n && !r; i++) {
		const struct kf_ipcount *c = &ips->v[i];
		const struct kf_module *mod = kf_modules_at(mods, c->module);
		const struct kf_symtab *t;
		const struct kf_sym *s;
		uint64_t lo, hi;

		KF_WORK(1);
		if (!c->samples) {
			if (c->module && !(r = kf_dsos_load(d, c->module, KF_DSO_LOAD_SYMS)) &&
			    (t = kf_dso_symtab(d, c->module)) && (s = kf_symtab_find(t, c->addr)))
				hits[nh++] = (struct hit){ c->module, false, s->start, s->end, s, t, i };
			continue;
		}
		if (!c->module) {
			r = add_skip(an, &skcap, "[unknown]", 0, c->addr, c,
				     "no mapping covered the address",
				     "a capture from the start of the process (its mmap events)");
			continue;
		}
		r = kf_dsos_load(d, c->module, KF_DSO_LOAD_SYMS);
		if (r)
			break;
		t = kf_dso_symtab(d, c->module);
		if (!t) {
			enum kf_dso_status st = kf_dso_status(d, c->module);

			r = add_skip(an, &skcap, mod->name, c->module, c->addr, c,
				     kf_dso_status_text(d, c->module), symbols_fix(st));
			continue;
		}
		s = kf_symtab_find(t, c->addr);
		if (s) {
			hits[nh++] = (struct hit){ c->module, false, s->start, s->end, s, t, i };
			continue;
		}
		if (mod->kind == KF_MOD_FILE &&
		    (r = kf_dsos_load(d, c->module, KF_DSO_LOAD_CFI | KF_DSO_LOAD_CODE)) == 0 &&
		    kf_dso_fde_range(d, c->module, c->addr, &lo, &hi)) {
			hits[nh++] = (struct hit){ c->module, true, lo, hi, NULL, t, i };
			continue;
		}
		if (!r)
			r = add_skip(an, &skcap, mod->name, c->module, c->addr, c,
				     mod->kind == KF_MOD_FILE ?
				     "no symbol and no .eh_frame FDE covers the address" :
				     "no symbol covers the address", NULL);
	}
	if (r)
		goto out;
	if (nh)
		qsort(hits, nh, sizeof(*hits), hit_cmp);
	cands = calloc(nh ? nh : 1, sizeof(*cands));
	if (!cands) {
		r = KF_ENOMEM;
		goto out;
	}
	for (i = 0; i < nh; i++) {
		const struct kf_ipcount *c = &ips->v[hits[i].ip];
		struct cand *cd;

		if (!i || hits[i].module != hits[i - 1].module || hits[i].fde != hits[i - 1].fde ||
		    hits[i].key != hits[i - 1].key) {
			const struct kf_module *mod = kf_modules_at(mods, hits[i].module);

			cd = &cands[nc++];
			cd->h0 = i;
			cd->kernel = mod->kind == KF_MOD_KERNEL || mod->kind == KF_MOD_KMODULE;
			if (hits[i].fde) {
				cd->raw = cd->name = arena_printf(an, "%s+0x%" PRIx64, mod->base,
								  hits[i].key);
			} else {
				/* the table's (demangled) name with the clone
				 * suffix demangling dropped */
				cd->raw = arena_str(an, kf_sym_name(hits[i].tab, hits[i].sym));
				cd->name = sym_display(an, hits[i].tab, hits[i].sym);
			}
			if (!cd->name || !cd->raw) {
				r = KF_ENOMEM;
				goto out;
			}
		}
		cd = &cands[nc - 1];
		cd->h1 = i + 1;
		cd->samples += c->samples;
		cd->period += c->period;
		cd->exact += c->exact;
	}
	for (i = 0; i < nc; i++)
		an->n_candidates += cands[i].samples > 0;
	if (nc)
		qsort(cands, nc, sizeof(*cands), cand_cmp);
	for (i = 0; i < nc && !r; i++) {
		const struct cand *cd = &cands[i];
		const struct kf_module *mod = kf_modules_at(mods, hits[cd->h0].module);

		if (o->top && an->n_funcs >= o->top)
			break;
		if ((o->only == KF_ANNOT_KERNEL && !cd->kernel) ||
		    (o->only == KF_ANNOT_USER && cd->kernel))
			continue;
		if (o->dso && !base_is(mod->name, o->dso))
			continue;
		if (o->min_percent > 0 &&
		    (!an->period || 100.0 * (double)cd->period / (double)an->period < o->min_percent))
			continue;
		if (o->n_symbols && !name_matches(&m, o, cd->name) &&
		    !name_matches(&m, o, cd->raw)) {
			/* the DWARF name, asked only here: it needs debug info */
			const struct hit *h = &hits[cd->h0];
			uint64_t va = h->key;

			if (!o->lines || h->fde ||
			    kf_dsos_load(d, h->module, KF_DSO_LOAD_CODE) ||
			    !kf_dso_elf_addr(d, h->module, h->key, &va) ||
			    !name_matches(&m, o, dwarf_name(an, d, h->module, cd->kernel, va)))
				continue;
		}
		if (!KF_GROW(an->funcs, fcap, an->n_funcs + 1)) {
			r = KF_ENOMEM;
			break;
		}
		r = annotate_one(an, d, ips, hits, cd, o, &an->funcs[an->n_funcs]);
		if (!r && sites)
			call_sites(d, &ss, &an->funcs[an->n_funcs]);
		if (!r && ev)
			r = event_counts(d, ev, n_events, &an->funcs[an->n_funcs]);
		if (!r && bx.bb && !an->funcs[an->n_funcs].no_code && !an->funcs[an->n_funcs].fde)
			r = block_cycles(d, &bx, &an->funcs[an->n_funcs]);
		/* on failure too: kf_annot_fini frees what it holds */
		an->n_funcs++;
	}
out:
	matcher_fini(&m);
out_sites:
	free(ss.by);
	free(bx.by);
	kf_ipcounts_fini(&all);
	for (i = 0; ev && i < n_events; i++)
		free(ev[i].by);
	free(ev);
	free(hits);
	free(cands);
	return r;
}

void kf_annot_fini(struct kf_annot *an)
{
	size_t i;

	for (i = 0; i < an->n_funcs; i++) {
		free(an->funcs[i].ev);
		free(an->funcs[i].insns);
		free(an->funcs[i].lines);
		free(an->funcs[i].inlinees);
		free(an->funcs[i].loops);
		free(an->funcs[i].blocks);
	}
	free(an->funcs);
	free(an->skipped);
	for (i = 0; i < 3; i++)
		kf_disasm_close(an->dis[i]);
	kf_arena_fini(&an->arena);
	memset(an, 0, sizeof(*an));
}
