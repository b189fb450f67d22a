/* classify.c - kernel-context classification (kernel-contexts.md sec. 3).
 *
 * The chain is cut into segments at entry frames (a syscall, interrupt,
 * exception or thread-start entry); inside a segment, contexts open where
 * the class of the markers changes, innermost first.  Everything that names
 * a kernel function is in classify.def; this file is only the walk.
 */
#include "classify.h"

#include <stdbool.h>
#include <string.h>

/* "Same as the class's verdict" in classify.def; never returned. */
#define KF_CTX_VERDICT_INHERIT KF_CTX_NVERDICTS

/* Longest chain looked at; longer ones are treated as cut there. */
#define MAX_FRAMES (1u << 16)
/* Rules one name may match (do_softirq: a MARK and a VIA). */
#define MAX_HITS 4
/* Longest name looked up (KSYM_NAME_LEN is 512); longer ones match
 * nothing. */
#define MAX_NAME (1u << 16)
/* Frames whose lookups are kept for the whole call: perf's default
 * max_stack is 127, so this is every frame in practice. */
#define CACHED 128

enum search {
	SEARCH_NONE, SEARCH_OUTWARD, SEARCH_NEAR_IN, SEARCH_INNERMOST,
	SEARCH_OUTERMOST,
};

enum entry_kind {
	ENTRYK_NONE, ENTRYK_BOTTOM, ENTRYK_FORK, ENTRYK_ASYNC, ENTRYK_SYNC,
};

enum role {
	ROLE_ENTRY, ROLE_ENTRY_FORK, ROLE_ENTRY_SYNC, ROLE_MARK, ROLE_MARK_SC,
	ROLE_SUB, ROLE_GUESS, ROLE_VIA,
};

struct class_info {
	const char *name;
	uint8_t verdict, irq_verdict, search, dsub, entry;
};

static const struct class_info classes[] = {
#define KF_CTX_CLASS(id, nm, v, iv, s, d, e) \
	{ nm, KF_CTX_VERDICT_##v, KF_CTX_VERDICT_##iv, SEARCH_##s, \
	  KF_CTX_SUB_##d, ENTRYK_##e },
#include "classify.def"
};

struct sub_info {
	const char *name;
	uint8_t cls, verdict, irq_verdict;
};

static const struct sub_info subs[] = {
#define KF_CTX_SUB(id, c, nm, v, iv) \
	{ nm, KF_CTX_##c, KF_CTX_VERDICT_##v, KF_CTX_VERDICT_##iv },
#include "classify.def"
};

static const char *const via_names[] = {
#define KF_CTX_VIA_ID(id, nm) nm,
#include "classify.def"
};

static const char *const suffixes[] = {
#define KF_CTX_SUFFIX(w) w,
#include "classify.def"
};

struct rule {
	const char *pat;
	uint16_t len;             /* strlen(pat), '*' included */
	uint8_t role, cls, val;   /* val: enum kf_ctx_sub, kf_ctx_via for VIA */
};

static const struct rule rules[] = {
#define KF_CTX_RULE(r, c, s, p) \
	{ p, sizeof(p) - 1, ROLE_##r, KF_CTX_##c, KF_CTX_SUB_##s },
#define KF_CTX_VIA(c, v, p) \
	{ p, sizeof(p) - 1, ROLE_VIA, KF_CTX_##c, KF_CTX_VIA_##v },
#include "classify.def"
};

_Static_assert(sizeof(rules) / sizeof(rules[0]) == KF_CTX_NRULES,
	       "rule count");
_Static_assert(KF_CTX_NRULES < UINT16_MAX, "rule index fits uint16_t");
_Static_assert(2 * KF_CTX_NRULES <= KF_CTX_SLOTS,
	       "classify.def outgrew KF_CTX_SLOTS: double it");
_Static_assert(sizeof(classes) / sizeof(classes[0]) == KF_CTX_NCLASSES,
	       "class count");

static const char *const verdict_names[] = {
	[KF_CTX_VERDICT_UNKNOWN] = "unknown",
	[KF_CTX_VERDICT_ON_BEHALF] = "on-behalf",
	[KF_CTX_VERDICT_ATTRIBUTED] = "attributed",
	[KF_CTX_VERDICT_IDLE] = "idle",
	[KF_CTX_VERDICT_KTHREAD] = "kthread",
	[KF_CTX_VERDICT_USER] = "user",
};

static const char *const why_names[] = {
	[KF_CTX_WHY_NONE] = "",
	[KF_CTX_WHY_TRUNCATED] = "truncated",
	[KF_CTX_WHY_UNWIND_STOPPED] = "unwind_stopped",
	[KF_CTX_WHY_NO_USER_PART] = "no_user_part",
	[KF_CTX_WHY_NO_CHAIN] = "no_chain",
	[KF_CTX_WHY_NO_SYMBOLS] = "no_symbols",
};

/* ---- names -------------------------------------------------------------- */

static bool is_suffix_word(const char *w, size_t len)
{
	size_t i;
	bool digits = len > 0;

	for (i = 0; i < len; i++)
		if (w[i] < '0' || w[i] > '9')
			digits = false;
	if (digits)
		return true;
	for (i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++)
		if (strlen(suffixes[i]) == len && !memcmp(suffixes[i], w, len))
			return true;
	return false;
}

/* Length of the name without a compiler clone suffix.  Only a suffix made
 * entirely of known words and numbers is dropped ("do_softirq.part.0",
 * "finish_task_switch.isra.0", "foo.cold", "bar.llvm.123"): C identifiers
 * have no dots, so a dot starts a suffix, and anything unexpected keeps
 * the name whole so that it matches nothing by accident. */
static size_t base_len(const char *name)
{
	const char *dot = strchr(name, '.'), *p = dot;

	if (!dot)
		return strlen(name);
	while (*p == '.') {
		const char *w = p + 1, *e = w;

		while (*e && *e != '.')
			e++;
		if (!is_suffix_word(w, (size_t)(e - w)))
			return strlen(name);
		p = e;
	}
	return (size_t)(dot - name);
}

/* Length and the first and last 8 bytes: O(1) per name, and kernel
 * symbols sharing all three are rare (a collision only costs a compare).
 * Only ever compared within one process, so byte order does not matter. */
static uint32_t name_hash(const char *s, size_t n)
{
	uint64_t a = 0, b = 0, x;

	memcpy(&a, s, n < 8 ? n : 8);
	if (n > 8)
		memcpy(&b, s + n - 8, 8);
	x = a * 0x9e3779b97f4a7c15ull ^ (b + n) * 0xc2b2ae3d27d4eb4full;
	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 29;
	return (uint32_t)x;
}

/* ---- rule lookup -------------------------------------------------------- */

struct hits {
	uint16_t r[MAX_HITS];     /* rule indices, in classify.def order */
	uint8_t n;
	uint32_t len;             /* base_len of the name */
};

static void add_hit(struct hits *h, uint16_t idx)
{
	unsigned i;

	if (h->n == MAX_HITS)
		return;
	for (i = h->n++; i > 0 && h->r[i - 1] > idx; i--)
		h->r[i] = h->r[i - 1];
	h->r[i] = idx;
}

/* Exact patterns first; prefix patterns only if no exact one matched, so
 * "asm_exc_page_fault" is a fault and never "asm_exc_*". */
static void lookup(const struct kf_ctx_rules *rs, const char *name,
		   struct hits *h)
{
	size_t len, i;
	uint32_t j;

	h->n = 0;
	h->len = 0;
	if (!name)
		return;
	len = base_len(name);
	if (len >= MAX_NAME)
		return;
	h->len = (uint32_t)len;
	for (j = name_hash(name, len) & (KF_CTX_SLOTS - 1); rs->slot[j];
	     j = (j + 1) & (KF_CTX_SLOTS - 1)) {
		const struct rule *ru = &rules[rs->slot[j] - 1];

		if (ru->len == len && !memcmp(ru->pat, name, len))
			add_hit(h, (uint16_t)(rs->slot[j] - 1));
	}
	if (h->n || len == 0)
		return;
	for (i = rs->first[(unsigned char)name[0]];
	     i < rs->first[(unsigned char)name[0] + 1]; i++) {
		const struct rule *ru = &rules[rs->prefix[i]];
		size_t plen = ru->len - 1u, k;

		/* byte loop, not memcmp: almost every name differs from
		 * almost every prefix within two or three bytes */
		if (len < plen)
			continue;
		for (k = 0; k < plen && ru->pat[k] == name[k]; k++)
			;
		if (k == plen)
			add_hit(h, rs->prefix[i]);
	}
}

int kf_ctx_rules_init(struct kf_ctx_rules *r)
{
	uint16_t tmp[KF_CTX_NRULES], fill[257];
	size_t i;
	int bad = 0;

	memset(r, 0, sizeof(*r));
	for (i = 0; i < KF_CTX_NCLASSES; i++)
		if (classes[i].dsub != KF_CTX_SUB_NONE &&
		    subs[classes[i].dsub].cls != i)
			bad = -1;
	for (i = 0; i < KF_CTX_NRULES; i++) {
		const struct rule *ru = &rules[i];
		const char *star = memchr(ru->pat, '*', ru->len);
		unsigned same = 0;
		uint32_t j;

		if (ru->len == 0 || ru->len > 255 ||
		    memchr(ru->pat, '.', ru->len))
			bad = -1;
		if (ru->role == ROLE_VIA ? ru->val == KF_CTX_VIA_NONE :
		    ru->val != KF_CTX_SUB_NONE && subs[ru->val].cls != ru->cls)
			bad = -1;
		if (star) {
			if (star != ru->pat + ru->len - 1 || ru->len < 2)
				bad = -1;
			r->prefix[r->n_prefix++] = (uint16_t)i;
			continue;
		}
		for (j = name_hash(ru->pat, ru->len) & (KF_CTX_SLOTS - 1);
		     r->slot[j]; j = (j + 1) & (KF_CTX_SLOTS - 1)) {
			const struct rule *o = &rules[r->slot[j] - 1];

			if (o->len == ru->len &&
			    !memcmp(o->pat, ru->pat, ru->len))
				same++;
		}
		if (same >= MAX_HITS)
			bad = -1;
		r->slot[j] = (uint16_t)(i + 1);
	}
	/* counting sort of the prefix rules by first byte, keeping file
	 * order within a bucket: first[c] .. first[c + 1] */
	memcpy(tmp, r->prefix, r->n_prefix * sizeof(tmp[0]));
	for (i = 0; i < r->n_prefix; i++)
		r->first[(unsigned char)rules[tmp[i]].pat[0] + 1]++;
	for (i = 1; i <= 256; i++)
		r->first[i] = (uint16_t)(r->first[i] + r->first[i - 1]);
	memcpy(fill, r->first, sizeof(fill));
	for (i = 0; i < r->n_prefix; i++)
		r->prefix[fill[(unsigned char)rules[tmp[i]].pat[0]]++] = tmp[i];
	return bad;
}

/* ---- the walk ----------------------------------------------------------- */

struct walk {
	const struct kf_ctx_rules *rs;
	const char *const *names;
	size_t n;
	struct hits cache[CACHED];
	struct hits tmp;          /* frames past CACHED, one at a time */
};

/* Valid until the next hits_at() for a frame past CACHED. */
static const struct hits *hits_at(struct walk *w, size_t i)
{
	if (i < CACHED)
		return &w->cache[i];
	lookup(w->rs, w->names[i], &w->tmp);
	return &w->tmp;
}

/* A segment: frames [lo, hi], entered at frame `at` (the first entry frame
 * from the leaf), whose class is `cls`.  A segment without an entry frame
 * (`tail`) is the end of a cut or stopped chain. */
struct seg {
	size_t lo, hi, at;
	uint8_t cls;
	bool tail;
};

static bool is_entry(uint8_t role)
{
	return role == ROLE_ENTRY || role == ROLE_ENTRY_FORK ||
	       role == ROLE_ENTRY_SYNC;
}

/* The class a rule gives its frame inside segment s, or -1 for rules that
 * open no context. */
static int rule_class(const struct seg *s, const struct rule *ru)
{
	switch (ru->role) {
	case ROLE_ENTRY:
	case ROLE_MARK:
		return ru->cls;
	case ROLE_ENTRY_FORK:
	case ROLE_ENTRY_SYNC:
		/* only ever after the segment's own entry: resolved there */
		return s->tail ? ru->cls : s->cls;
	case ROLE_MARK_SC:
		return !s->tail && s->cls == KF_CTX_SYSCALL ? ru->cls : -1;
	default:
		return -1;
	}
}

static int frame_class(struct walk *w, const struct seg *s, size_t i)
{
	const struct hits *h = hits_at(w, i);
	unsigned k;

	for (k = 0; k < h->n; k++) {
		int c = rule_class(s, &rules[h->r[k]]);

		if (c >= 0)
			return c;
	}
	return -1;
}

/* The sub a frame gives to a context of class cls (KF_CTX_SUB_NONE if
 * none); *rule_out is the rule that gave it. */
static uint8_t frame_sub(struct walk *w, const struct seg *s, size_t i,
			 int cls, const struct rule **rule_out)
{
	const struct hits *h = hits_at(w, i);
	unsigned k;

	for (k = 0; k < h->n; k++) {
		const struct rule *ru = &rules[h->r[k]];

		if (ru->val == KF_CTX_SUB_NONE || ru->role == ROLE_VIA ||
		    ru->role == ROLE_GUESS)
			continue;
		if (ru->role == ROLE_SUB ? ru->cls != cls :
		    rule_class(s, ru) != cls || ru->cls != cls)
			continue;
		*rule_out = ru;
		return ru->val;
	}
	return KF_CTX_SUB_NONE;
}

static uint8_t frame_via(struct walk *w, size_t i, int cls)
{
	const struct hits *h = hits_at(w, i);
	unsigned k;

	for (k = 0; k < h->n; k++) {
		const struct rule *ru = &rules[h->r[k]];

		if (ru->role == ROLE_VIA && ru->cls == cls)
			return ru->val;
	}
	return KF_CTX_VIA_NONE;
}

/* True if the frame belongs to another context only: an outward search
 * for cls's sub or entry path ends there. */
static bool frame_stops(struct walk *w, const struct seg *s, size_t i,
			int cls)
{
	const struct hits *h = hits_at(w, i);
	bool ours = false, other = false;
	unsigned k;

	for (k = 0; k < h->n; k++) {
		const struct rule *ru = &rules[h->r[k]];
		int c;

		if (ru->role == ROLE_GUESS)
			continue;
		c = ru->role == ROLE_SUB || ru->role == ROLE_VIA ? ru->cls :
		    rule_class(s, ru);
		if (c < 0)
			continue;
		if (c == cls)
			ours = true;
		else
			other = true;
	}
	return other && !ours;
}

static const struct rule *entry_rule(struct walk *w, size_t i)
{
	const struct hits *h = hits_at(w, i);
	unsigned k;

	for (k = 0; k < h->n; k++)
		if (is_entry(rules[h->r[k]].role))
			return &rules[h->r[k]];
	return NULL;
}

/* Class of the first plain MARK of frame i, or -1. */
static int mark_class(struct walk *w, size_t i)
{
	const struct hits *h = hits_at(w, i);
	unsigned k;

	for (k = 0; k < h->n; k++)
		if (rules[h->r[k]].role == ROLE_MARK)
			return rules[h->r[k]].cls;
	return -1;
}

static void find_segment(struct walk *w, size_t lo, struct seg *s)
{
	const struct rule *ru = NULL;
	size_t i;
	uint8_t kind;

	s->lo = lo;
	s->hi = w->n - 1;
	s->at = w->n;
	s->cls = KF_CTX_UNKNOWN;
	s->tail = true;
	for (i = lo; i < w->n && !ru; i++)
		ru = entry_rule(w, i);
	if (!ru)
		return;
	s->at = i - 1;
	s->tail = false;
	s->cls = ru->cls;
	if (ru->role == ROLE_ENTRY_FORK) {
		/* ret_from_fork: a kthread if `kthread` (or a user worker's
		 * thread function) is under it, else a user child's first
		 * return (sec. 3 rule 7) */
		for (i = lo; i < w->n; i++)
			if (mark_class(w, i) == KF_CTX_KTHREAD) {
				s->cls = KF_CTX_KTHREAD;
				break;
			}
	} else if (ru->role == ROLE_ENTRY_SYNC) {
		for (i = s->at; i-- > lo;) {
			int c = mark_class(w, i);

			if (c >= 0) {
				s->cls = (uint8_t)c;
				break;
			}
		}
	}
	kind = classes[s->cls].entry;
	if (kind == ENTRYK_BOTTOM || kind == ENTRYK_FORK)
		return;     /* the task's outermost context: the rest is its */
	s->hi = s->at;
	while (s->hi + 1 < w->n) {
		ru = entry_rule(w, s->hi + 1);
		if (!ru || ru->role != ROLE_ENTRY || ru->cls != s->cls)
			break;
		s->hi++;
	}
}

/* A context being built: its innermost marker, its outermost frame, and
 * the first frame that belongs to it (after the context inside it). */
struct lvl {
	uint8_t cls;
	size_t mark, entry, lo;
};

static uint8_t take_sub(struct walk *w, size_t i, const struct rule *ru,
			uint8_t sub, struct kf_ctx_level *out)
{
	if (sub == KF_CTX_SUB_SYS_NAME) {
		size_t plen = ru->pat[ru->len - 1] == '*' ? ru->len - 1u :
			      ru->len;
		const struct hits *h = hits_at(w, i);

		if (h->len <= plen)
			return KF_CTX_SUB_NONE;
		out->name = w->names[i] + plen;
		out->name_len = (uint32_t)(h->len - plen);
	}
	return sub;
}

static uint8_t find_sub(struct walk *w, const struct seg *s,
			const struct lvl *l, struct kf_ctx_level *out)
{
	const struct class_info *ci = &classes[l->cls];
	const struct rule *ru = NULL;
	uint8_t sub;
	size_t i;

#define TRY(i) do {							\
		sub = frame_sub(w, s, (i), l->cls, &ru);		\
		if (sub && (sub = take_sub(w, (i), ru, sub, out)))	\
			return sub;					\
	} while (0)

	switch (ci->search) {
	case SEARCH_OUTWARD:
		for (i = l->mark; i <= s->hi; i++) {
			TRY(i);
			if (i > l->mark && frame_stops(w, s, i, l->cls))
				return ci->dsub;
		}
		/* ran off a cut chain: the default would be a guess */
		return s->tail ? KF_CTX_SUB_NONE : ci->dsub;
	case SEARCH_NEAR_IN:
		for (i = l->mark + 1; i-- > l->lo;)
			TRY(i);
		break;
	case SEARCH_INNERMOST:
		for (i = l->lo; i <= l->entry; i++)
			TRY(i);
		break;
	case SEARCH_OUTERMOST:
		for (i = l->entry + 1; i-- > l->lo;)
			TRY(i);
		break;
	default:
		return KF_CTX_SUB_NONE;
	}
#undef TRY
	return ci->dsub;
}

static uint8_t find_via(struct walk *w, const struct seg *s,
			const struct lvl *l)
{
	size_t i;

	for (i = l->mark; i <= s->hi; i++) {
		uint8_t v = frame_via(w, i, l->cls);

		if (v != KF_CTX_VIA_NONE)
			return v;
		if (i > l->mark && frame_stops(w, s, i, l->cls))
			break;
	}
	return KF_CTX_VIA_NONE;
}

struct state {
	struct kf_ctx *out;
	bool leaf_async;           /* the leaf's segment is an interrupt's */
	bool have_tail_base;
	struct kf_ctx_level tail_base;
};

static void close_level(struct walk *w, const struct seg *s,
			const struct lvl *l, struct state *st)
{
	struct kf_ctx *out = st->out;
	struct kf_ctx_level lv;

	memset(&lv, 0, sizeof(lv));
	lv.cls = l->cls;
	lv.entry = (uint32_t)l->entry;
	lv.sub = find_sub(w, s, l, &lv);
	lv.via = find_via(w, s, l);
	if (out->n_nest == 0)
		st->leaf_async = !s->tail &&
				 classes[s->cls].entry == ENTRYK_ASYNC;
	if (s->tail && classes[l->cls].entry == ENTRYK_BOTTOM) {
		st->tail_base = lv;
		st->have_tail_base = true;
	}
	if (out->n_nest < KF_CTX_MAX_NEST) {
		out->nest[out->n_nest++] = lv;
	} else {
		/* keep the outermost: it is the base */
		out->nest[KF_CTX_MAX_NEST - 1] = lv;
		out->flags |= KF_CTX_OUT_NEST_CUT;
	}
}

static void build_levels(struct walk *w, const struct seg *s,
			 struct state *st)
{
	struct lvl cur = { 0, 0, 0, 0 };
	bool open = false;
	size_t i;

	for (i = s->lo; i <= s->hi; i++) {
		int c = frame_class(w, s, i);
		size_t lo = s->lo;

		if (c < 0)
			continue;
		if (open && cur.cls == c) {
			cur.entry = i;
			continue;
		}
		if (open) {
			close_level(w, s, &cur, st);
			lo = cur.entry + 1;
		}
		cur.cls = (uint8_t)c;
		cur.mark = cur.entry = i;
		cur.lo = lo;
		open = true;
	}
	if (open)
		close_level(w, s, &cur, st);
}

static uint8_t pick_guess(struct walk *w, unsigned flags)
{
	size_t i;
	unsigned k;

	for (i = 0; i < w->n; i++) {
		const struct hits *h = hits_at(w, i);

		for (k = 0; k < h->n; k++)
			if (rules[h->r[k]].role == ROLE_GUESS)
				return rules[h->r[k]].cls;
	}
	/* a user task stopped in the kernel: likely a syscall (sec. 5) */
	return flags & KF_CTX_IN_USER_PART ? KF_CTX_SYSCALL : KF_CTX_UNKNOWN;
}

static uint8_t pick_verdict(const struct kf_ctx *c, bool leaf_async)
{
	const struct kf_ctx_level *l = &c->leaf;
	uint8_t v, iv;

	if (c->base.cls == KF_CTX_IDLE)
		return KF_CTX_VERDICT_IDLE;
	if (c->base.cls == KF_CTX_KTHREAD)
		return KF_CTX_VERDICT_KTHREAD;
	v = subs[l->sub].verdict;
	if (v == KF_CTX_VERDICT_INHERIT)
		v = classes[l->cls].verdict;
	if (leaf_async) {
		iv = subs[l->sub].irq_verdict;
		if (iv == KF_CTX_VERDICT_INHERIT)
			iv = classes[l->cls].irq_verdict;
		if (iv != KF_CTX_VERDICT_INHERIT)
			v = iv;
	}
	return v;
}

static void set_level(struct kf_ctx_level *l, uint8_t cls, uint8_t sub,
		      size_t entry)
{
	memset(l, 0, sizeof(*l));
	l->cls = cls;
	l->sub = sub;
	l->entry = (uint32_t)entry;
}

void kf_ctx_classify(const struct kf_ctx_rules *r, const char *const *names,
		     size_t n, unsigned cpumode, unsigned flags,
		     struct kf_ctx *out)
{
	struct walk w;
	struct state st;
	struct seg s;
	size_t i, lo;

	memset(out, 0, sizeof(*out));
	if (!names)
		n = 0;
	if (n > MAX_FRAMES) {
		n = MAX_FRAMES;
		flags |= KF_CTX_IN_TRUNCATED;
	}
	if (cpumode == KF_CTX_CPUMODE_GUEST_KERNEL ||
	    cpumode == KF_CTX_CPUMODE_GUEST_USER) {
		/* perf records no guest call chain: the VMM thread ran it */
		set_level(&out->leaf, KF_CTX_GUEST,
			  cpumode == KF_CTX_CPUMODE_GUEST_KERNEL ?
			  KF_CTX_SUB_GUEST_KERNEL : KF_CTX_SUB_GUEST_USER, n);
		out->base = out->leaf;
		out->verdict = KF_CTX_VERDICT_ON_BEHALF;
		return;
	}
	if (cpumode == KF_CTX_CPUMODE_USER ||
	    (n == 0 && cpumode != KF_CTX_CPUMODE_KERNEL &&
	     (flags & KF_CTX_IN_USER_PART))) {
		set_level(&out->leaf, KF_CTX_USER, KF_CTX_SUB_NONE, n);
		out->base = out->leaf;
		out->verdict = KF_CTX_VERDICT_USER;
		return;
	}

	w.rs = r;
	w.names = names;
	w.n = n;
	for (i = 0; i < n && i < CACHED; i++)
		lookup(r, names[i], &w.cache[i]);
	memset(&st, 0, sizeof(st));
	st.out = out;
	memset(&s, 0, sizeof(s));
	s.tail = true;
	for (lo = 0; lo < n; lo = s.hi + 1) {
		find_segment(&w, lo, &s);
		build_levels(&w, &s, &st);
	}

	/* base: what the last segment's entry says (sec. 3) */
	if (n == 0) {
		out->why = flags & KF_CTX_IN_TRUNCATED ? KF_CTX_WHY_TRUNCATED :
			   KF_CTX_WHY_NO_CHAIN;
		set_level(&out->base, KF_CTX_UNKNOWN, KF_CTX_SUB_NONE, n);
	} else if (!s.tail) {
		uint8_t kind = classes[s.cls].entry;

		if (kind == ENTRYK_BOTTOM || kind == ENTRYK_FORK) {
			const struct kf_ctx_level *outer =
				&out->nest[out->n_nest ? out->n_nest - 1 : 0];

			if (out->n_nest && outer->cls == s.cls)
				out->base = *outer;
			else
				set_level(&out->base, s.cls, KF_CTX_SUB_NONE,
					  s.at);
		} else if ((flags & KF_CTX_IN_USER_PART) &&
			   !(flags & KF_CTX_IN_TRUNCATED)) {
			/* an entry from user mode: the user part is what
			 * ran underneath */
			set_level(&out->base, KF_CTX_USER, KF_CTX_SUB_NONE, n);
		} else {
			/* an interrupt or trap with nothing under it: the
			 * rest of the chain is missing */
			out->why = flags & KF_CTX_IN_TRUNCATED ?
				   KF_CTX_WHY_TRUNCATED :
				   KF_CTX_WHY_NO_USER_PART;
			set_level(&out->base, KF_CTX_UNKNOWN, KF_CTX_SUB_NONE,
				  n);
		}
	} else {
		out->why = flags & KF_CTX_IN_TRUNCATED ? KF_CTX_WHY_TRUNCATED :
			   flags & KF_CTX_IN_NO_CHAIN ? KF_CTX_WHY_NO_CHAIN :
			   KF_CTX_WHY_UNWIND_STOPPED;
		if (st.have_tail_base)
			out->base = st.tail_base;
		else
			set_level(&out->base, KF_CTX_UNKNOWN, KF_CTX_SUB_NONE,
				  n);
	}
	if ((flags & KF_CTX_IN_PID0) && out->base.cls != KF_CTX_IDLE) {
		set_level(&out->base, KF_CTX_IDLE, KF_CTX_SUB_NONE, n);
		out->flags |= KF_CTX_OUT_FROM_TASK;
	} else if ((flags & KF_CTX_IN_KTHREAD) &&
		   out->base.cls == KF_CTX_UNKNOWN) {
		set_level(&out->base, KF_CTX_KTHREAD, KF_CTX_SUB_NONE, n);
		out->flags |= KF_CTX_OUT_FROM_TASK;
	}

	if (out->n_nest) {
		out->leaf = out->nest[0];
	} else {
		set_level(&out->leaf, KF_CTX_UNKNOWN, KF_CTX_SUB_NONE, n);
		out->guess = pick_guess(&w, flags);
	}
	if (flags & KF_CTX_IN_NO_CHAIN)
		out->flags |= KF_CTX_OUT_LEAF_ONLY;
	out->verdict = pick_verdict(out, st.leaf_async);
}

/* ---- names -------------------------------------------------------------- */

const char *kf_ctx_class_name(unsigned cls)
{
	return cls < KF_CTX_NCLASSES ? classes[cls].name : "?";
}

const char *kf_ctx_sub_name(unsigned sub)
{
	return sub < KF_CTX_NSUBS ? subs[sub].name : "?";
}

const char *kf_ctx_via_name(unsigned via)
{
	return via < KF_CTX_NVIAS ? via_names[via] : "?";
}

const char *kf_ctx_verdict_name(unsigned verdict)
{
	return verdict < KF_CTX_NVERDICTS ? verdict_names[verdict] : "?";
}

const char *kf_ctx_why_name(unsigned why)
{
	return why < KF_CTX_NWHYS ? why_names[why] : "?";
}
