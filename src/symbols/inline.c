/* inline.c - inline chains and source lines from DWARF (see inline.h). */
#include "inline.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <dwarf.h>

#include "util.h"

static const char *attr_string(Dwarf_Die *die, unsigned name)
{
	Dwarf_Attribute a;

	return dwarf_attr_integrate(die, name, &a) ? dwarf_formstring(&a) : NULL;
}

/* Where an inlined instance was called from: its DW_AT_call_file/line,
 * a line of the function it was inlined into. */
static void call_site(Dwarf_Die *inlined, Dwarf_Files *files, size_t nfiles,
		      struct kf_inl *caller)
{
	Dwarf_Attribute a;
	Dwarf_Word v;

	if (files && dwarf_attr(inlined, DW_AT_call_file, &a) &&
	    dwarf_formudata(&a, &v) == 0 && v < nfiles)
		caller->file = dwarf_filesrc(files, v, NULL, NULL);
	if (dwarf_attr(inlined, DW_AT_call_line, &a) && dwarf_formudata(&a, &v) == 0 &&
	    v <= INT32_MAX)
		caller->line = (int)v;
}

static int range_cmp(const void *a, const void *b)
{
	const struct kf_dwrange *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo ? 1 : 0;
}

int kf_dwidx_init(struct kf_dwidx *ix, Dwarf *dw)
{
	Dwarf_CU *cu = NULL, *next;
	Dwarf_Die cudie, subdie;
	Dwarf_Half version;
	uint8_t type;
	size_t cap = 0;

	memset(ix, 0, sizeof(*ix));
	ix->dw = dw;
	kf_arena_init(&ix->paths);
	kf_map64_init(&ix->joined);
	kf_map64_init(&ix->cumap);
	kf_arena_init(&ix->names);
	while (dw && dwarf_get_units(dw, cu, &next, &version, &type, &cudie, &subdie) == 0) {
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;

		cu = next;
		if (type != DW_UT_compile && type != DW_UT_skeleton)
			continue;       /* type and partial units hold no code */
		while ((off = dwarf_ranges(&cudie, off, &base, &lo, &hi)) > 0) {
			if (hi <= lo)
				continue;
			if (!KF_GROW(ix->r, cap, ix->n + 1)) {
				free(ix->r);
				ix->r = NULL;
				ix->n = 0;
				return -1;
			}
			ix->r[ix->n].lo = lo;
			ix->r[ix->n].hi = hi;
			ix->r[ix->n].cu = dwarf_dieoffset(&cudie);
			ix->n++;
		}
	}
	if (ix->n > 1)
		qsort(ix->r, ix->n, sizeof(*ix->r), range_cmp);
	return 0;
}

struct kf_cuscopes {
	struct kf_scope {
		uint64_t lo, hi;          /* one range of the DIE: [lo, hi) */
		uint64_t die;             /* DIE offset */
		int32_t parent;           /* the enclosing function or inlined
					     instance (an entry of the same
					     DIE's first range), or -1 */
		uint16_t depth;           /* of nesting among these DIEs */
		uint16_t subprogram;      /* DW_TAG_subprogram (else inlined) */
	} *v;                             /* in DIE tree order */
	uint32_t *by_lo;                  /* indices into v, sorted by lo */
	size_t n, cap;
};

static void cuscopes_free(struct kf_cuscopes *cs)
{
	if (cs) {
		free(cs->v);
		free(cs->by_lo);
		free(cs);
	}
}

static void parents_free(struct kf_dwparents *p);

void kf_dwidx_fini(struct kf_dwidx *ix)
{
	size_t i;

	for (i = 0; i < ix->ncus; i++)
		cuscopes_free(ix->cus[i]);
	for (i = 0; i < ix->npar; i++)
		parents_free(ix->par[i]);
	free(ix->par);
	kf_arena_fini(&ix->names);
	free(ix->cus);
	kf_map64_fini(&ix->cumap);
	free(ix->r);
	free(ix->jv);
	kf_map64_fini(&ix->joined);
	kf_arena_fini(&ix->paths);
	memset(ix, 0, sizeof(*ix));
}

/* A source path as the unit names it, made absolute with the unit's
 * compilation directory when it is relative. */
static const char *full_path(struct kf_dwidx *ix, Dwarf_Die *cu, const char *file)
{
	const char *dir;
	uint64_t key;
	uint32_t idx;
	size_t dl, fl;
	char *p;

	if (!file || file[0] == '/' || !(dir = attr_string(cu, DW_AT_comp_dir)) || !*dir)
		return file;
	key = kf_hash64((uint64_t)(uintptr_t)dir) ^
	      kf_hash64((uint64_t)(uintptr_t)file * 0x9e3779b97f4a7c15ull);
	if (key == UINT64_MAX)
		key = 0;
	if (kf_map64_get(&ix->joined, key, &idx))
		return ix->jv[idx];
	while (file[0] == '.' && file[1] == '/')
		file += 2;
	dl = strlen(dir);
	fl = strlen(file);
	p = kf_arena_alloc(&ix->paths, dl + fl + 2);
	if (!p)
		return file;
	memcpy(p, dir, dl);
	if (dir[dl - 1] != '/')
		p[dl++] = '/';
	memcpy(p + dl, file, fl + 1);
	if (ix->njv < UINT32_MAX && KF_GROW(ix->jv, ix->capjv, ix->njv + 1) &&
	    kf_map64_put(&ix->joined, key, (uint32_t)ix->njv))
		ix->jv[ix->njv++] = p;
	return p;
}

/* The unit whose ranges hold vaddr. */
static bool find_cu(const struct kf_dwidx *ix, uint64_t vaddr, Dwarf_Die *cu)
{
	size_t lo = 0, hi = ix->n, i;

	while (lo < hi) {         /* the first range starting past vaddr */
		size_t mid = lo + (hi - lo) / 2;

		if (ix->r[mid].lo <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* ranges of different units may overlap (rarely): look back a few */
	for (i = lo; i > 0 && lo - i < 16; i--) {
		if (vaddr < ix->r[i - 1].hi)
			return dwarf_offdie(ix->dw, ix->r[i - 1].cu, cu) != NULL;
	}
	return false;
}

#define MAX_DIE_DEPTH 256

/* Collects the ranges of every function and inlined instance under die. */
static bool collect(struct kf_cuscopes *cs, Dwarf_Die *die, int32_t parent,
		    unsigned depth, unsigned nest)
{
	Dwarf_Die child;

	if (nest > MAX_DIE_DEPTH || dwarf_child(die, &child) != 0)
		return true;
	do {
		int tag = dwarf_tag(&child);
		int32_t me = parent;
		unsigned d = depth;

		if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
			Dwarf_Addr base, lo, hi;
			ptrdiff_t off = 0;
			size_t first = cs->n;

			while ((off = dwarf_ranges(&child, off, &base, &lo, &hi)) > 0) {
				if (hi <= lo)
					continue;
				if (cs->n >= INT32_MAX || !KF_GROW(cs->v, cs->cap, cs->n + 1))
					return false;
				cs->v[cs->n].lo = lo;
				cs->v[cs->n].hi = hi;
				cs->v[cs->n].die = dwarf_dieoffset(&child);
				/* a function with code starts a chain of its own,
				 * wherever its DIE is (a lambda's static invoker
				 * _FUN is defined inside its closure class, inside
				 * the function the lambda is in) */
				cs->v[cs->n].parent = tag == DW_TAG_subprogram ? -1 : parent;
				cs->v[cs->n].depth = tag == DW_TAG_subprogram ? 0 :
					(uint16_t)(depth < UINT16_MAX ? depth : UINT16_MAX);
				cs->v[cs->n].subprogram = tag == DW_TAG_subprogram;
				cs->n++;
			}
			/* a declaration or an abstract instance is no entry,
			 * but may hold code: an abstract instance's local
			 * class (a lambda's) has its concrete _FUN in it */
			if (cs->n > first) {
				me = (int32_t)first;
				d = tag == DW_TAG_subprogram ? 1 : depth + 1;
			}
		} else if (tag != DW_TAG_lexical_block && tag != DW_TAG_namespace &&
			   tag != DW_TAG_module && tag != DW_TAG_class_type &&
			   tag != DW_TAG_structure_type && tag != DW_TAG_union_type &&
			   tag != DW_TAG_interface_type) {
			continue;
		}
		if (!collect(cs, &child, me, d, nest + 1))
			return false;
	} while (dwarf_siblingof(&child, &child) == 0);
	return true;
}

static int by_lo_cmp(const void *a, const void *b, void *arg)
{
	const struct kf_cuscopes *cs = arg;
	uint64_t x = cs->v[*(const uint32_t *)a].lo;
	uint64_t y = cs->v[*(const uint32_t *)b].lo;

	return x < y ? -1 : x > y ? 1 : 0;
}

/* The scope table of a unit, built on first use; NULL on ENOMEM. */
static const struct kf_cuscopes *cu_scopes(struct kf_dwidx *ix, Dwarf_Die *cu)
{
	uint64_t key = dwarf_dieoffset(cu);
	struct kf_cuscopes *cs;
	uint32_t idx;
	size_t i;

	if (key == UINT64_MAX)
		key = 0;
	if (kf_map64_get(&ix->cumap, key, &idx))
		return ix->cus[idx];
	cs = kf_calloc(1, sizeof(*cs));
	if (!cs || !collect(cs, cu, -1, 0, 0) ||
	    !(cs->by_lo = malloc((cs->n ? cs->n : 1) * sizeof(*cs->by_lo))) ||
	    !KF_GROW(ix->cus, ix->capcus, ix->ncus + 1) ||
	    !kf_map64_put(&ix->cumap, key, (uint32_t)ix->ncus)) {
		cuscopes_free(cs);
		return NULL;
	}
	for (i = 0; i < cs->n; i++)
		cs->by_lo[i] = (uint32_t)i;
	qsort_r(cs->by_lo, cs->n, sizeof(*cs->by_lo), by_lo_cmp, cs);
	ix->cus[ix->ncus++] = cs;
	return cs;
}

/* The innermost entry whose range holds vaddr, or -1. */
static int32_t innermost(const struct kf_cuscopes *cs, uint64_t vaddr)
{
	size_t lo = 0, hi = cs->n, j;
	int32_t best = -1;

	while (lo < hi) {         /* the first entry starting past vaddr */
		size_t mid = lo + (hi - lo) / 2;

		if (cs->v[cs->by_lo[mid]].lo <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* back from there to the function holding vaddr: every inlined
	 * instance around vaddr starts after the range of it that does */
	for (j = lo; j > 0; j--) {
		const struct kf_scope *e = &cs->v[cs->by_lo[j - 1]];

		if (vaddr >= e->hi)
			continue;
		if (best < 0 || e->depth > cs->v[best].depth)
			best = (int32_t)cs->by_lo[j - 1];
		if (e->depth == 0)
			break;
	}
	return best;
}

/* ---- qualified names from the parent DIEs ---------------------------------
 *
 * A function without DW_AT_linkage_name (gcc writes none for a lambda's
 * operator(), nor for a template instantiated with a lambda's type) has
 * only its DW_AT_name, "operator()" or "__invoke_r<...>"; its scope is in
 * the DIEs around the DIE that declares it.  DIEs have no parent links, so
 * a unit's scope DIEs are walked once, on the first name asked of it. */

struct kf_dwparents {
	Dwarf *dw;
	struct kf_map64 units;        /* unit DIE offsets walked */
	struct kf_map64 at;           /* scope DIE offset -> index in parent */
	uint64_t *parent;             /* the offset of its parent DIE */
	size_t n, cap;
	struct kf_map64 named;        /* declaring DIE offset -> index in qv */
	const char **qv;              /* the names built (NULL: none) */
	size_t nqv, capqv;
};

#define MAX_SCOPES 32

static bool scope_tag(int tag)
{
	switch (tag) {
	case DW_TAG_namespace:
	case DW_TAG_module:
	case DW_TAG_class_type:
	case DW_TAG_structure_type:
	case DW_TAG_union_type:
	case DW_TAG_interface_type:
	case DW_TAG_enumeration_type:
	case DW_TAG_subprogram:
	case DW_TAG_lexical_block:
		return true;
	default:
		return false;
	}
}

static bool walk_parents(struct kf_dwparents *p, Dwarf_Die *die, unsigned nest)
{
	uint64_t me = dwarf_dieoffset(die);
	Dwarf_Die child;

	if (nest > MAX_DIE_DEPTH || dwarf_child(die, &child) != 0)
		return true;
	do {
		KF_WORK(1);
		if (!scope_tag(dwarf_tag(&child)))
			continue;
		if (p->n >= UINT32_MAX || !KF_GROW(p->parent, p->cap, p->n + 1) ||
		    !kf_map64_put(&p->at, dwarf_dieoffset(&child), (uint32_t)p->n))
			return false;
		p->parent[p->n++] = me;
		if (!walk_parents(p, &child, nest + 1))
			return false;
	} while (dwarf_siblingof(&child, &child) == 0);
	return true;
}

static void parents_free(struct kf_dwparents *p)
{
	if (p) {
		kf_map64_fini(&p->units);
		kf_map64_fini(&p->at);
		kf_map64_fini(&p->named);
		free(p->parent);
		free(p->qv);
		free(p);
	}
}

/* The parent table of die's Dwarf, with die's unit walked; NULL on
 * ENOMEM or when die's unit cannot be found. */
static struct kf_dwparents *parents_for(struct kf_dwidx *ix, Dwarf_Die *die)
{
	Dwarf *dw = dwarf_cu_getdwarf(die->cu);
	struct kf_dwparents *p = NULL;
	Dwarf_Die cu;
	uint32_t v;
	size_t i;

	if (!dw || !dwarf_diecu(die, &cu, NULL, NULL))
		return NULL;
	for (i = 0; i < ix->npar && !p; i++)
		if (ix->par[i]->dw == dw)
			p = ix->par[i];
	if (!p) {
		if (!KF_GROW(ix->par, ix->cappar, ix->npar + 1) ||
		    !(p = kf_calloc(1, sizeof(*p))))
			return NULL;
		p->dw = dw;
		kf_map64_init(&p->units);
		kf_map64_init(&p->at);
		kf_map64_init(&p->named);
		ix->par[ix->npar++] = p;
	}
	if (!kf_map64_get(&p->units, dwarf_dieoffset(&cu), &v)) {
		if (!kf_map64_put(&p->units, dwarf_dieoffset(&cu), 0) ||
		    !walk_parents(p, &cu, 0))
			return NULL;
	}
	return p;
}

/* The DIE that declares die: DW_AT_abstract_origin (an inlined instance,
 * a concrete out-of-line one) and DW_AT_specification (a definition
 * outside its class or namespace) followed to the end. */
static void declaring_die(Dwarf_Die *die, Dwarf_Die *out)
{
	Dwarf_Die cur = *die, next;
	Dwarf_Attribute a;
	int i;

	for (i = 0; i < 16; i++) {
		if (!dwarf_attr(&cur, DW_AT_abstract_origin, &a) &&
		    !dwarf_attr(&cur, DW_AT_specification, &a))
			break;
		if (!dwarf_formref_die(&a, &next))
			break;
		cur = next;
	}
	*out = cur;
}

/* A type without DW_AT_name: gcc writes none for a lambda's closure type,
 * but names its artificial destructor "~<lambda>", so the type is
 * "<lambda>"; any other is "{unnamed type}". */
static const char *unnamed_type(Dwarf_Die *type)
{
	Dwarf_Die child;
	int n = 0;

	if (dwarf_child(type, &child) != 0)
		return "{unnamed type}";
	do {
		const char *s;

		KF_WORK(1);
		if (dwarf_tag(&child) == DW_TAG_subprogram && dwarf_hasattr(&child, DW_AT_artificial) &&
		    (s = attr_string(&child, DW_AT_name)) != NULL && s[0] == '~' && s[1])
			return s + 1;
	} while (++n < 4096 && dwarf_siblingof(&child, &child) == 0);
	return "{unnamed type}";
}

/* See struct kf_inl's `qualified`.  depth bounds the enclosing functions
 * followed (a lambda in a lambda in a function...). */
static const char *qualified(struct kf_dwidx *ix, Dwarf_Die *die, unsigned depth)
{
	const char *parts[MAX_SCOPES], *name = attr_string(die, DW_AT_name), *res = NULL;
	struct kf_dwparents *p;
	Dwarf_Die decl, cur, up;
	uint64_t key;
	uint32_t v;
	size_t n = 0, len, i;
	bool stop = false;
	char *buf;

	if (!name || depth > 8)
		return NULL;
	declaring_die(die, &decl);
	if (!(p = parents_for(ix, &decl)))
		return NULL;
	key = dwarf_dieoffset(&decl);
	if (kf_map64_get(&p->named, key, &v))
		return p->qv[v];
	cur = decl;
	while (n < MAX_SCOPES && !stop && kf_map64_get(&p->at, dwarf_dieoffset(&cur), &v) &&
	       dwarf_offdie(p->dw, p->parent[v], &up)) {
		const char *s = NULL;

		KF_WORK(1);
		switch (dwarf_tag(&up)) {
		case DW_TAG_namespace:
			s = attr_string(&up, DW_AT_name);
			if (!s)
				s = "(anonymous namespace)";
			break;
		case DW_TAG_module:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
		case DW_TAG_interface_type:
		case DW_TAG_enumeration_type:
			s = attr_string(&up, DW_AT_name);
			if (!s)
				s = unnamed_type(&up);
			break;
		case DW_TAG_subprogram:
			/* a local class (a lambda's): the enclosing function
			 * names the rest of the scope */
			s = qualified(ix, &up, depth + 1);
			if (!s)
				s = attr_string(&up, DW_AT_name);
			stop = true;
			break;
		default:
			break;        /* a lexical block */
		}
		if (s)
			parts[n++] = s;
		cur = up;
	}
	if (n > 0) {
		len = strlen(name) + 1;
		for (i = 0; i < n; i++)
			len += strlen(parts[i]) + 2;
		if ((buf = kf_arena_alloc(&ix->names, len)) != NULL) {
			for (i = n; i-- > 0;) {
				strcat(buf, parts[i]);
				strcat(buf, "::");
			}
			strcat(buf, name);
			res = buf;
		}
	}
	if (p->nqv < UINT32_MAX && KF_GROW(p->qv, p->capqv, p->nqv + 1) &&
	    kf_map64_put(&p->named, key, (uint32_t)p->nqv))
		p->qv[p->nqv++] = res;
	return res;
}

/* `mangled`: the unit's language has scoped names (not C: there the
 * DIEs around a function hold no scope, and walking them would cost a
 * pass over every unit asked of) */
static void describe(struct kf_dwidx *ix, Dwarf_Die *die, bool mangled, struct kf_inl *out)
{
	out->name = attr_string(die, DW_AT_name);
	out->linkage = attr_string(die, DW_AT_linkage_name);
	if (!out->linkage)
		out->linkage = attr_string(die, DW_AT_MIPS_linkage_name);
	out->qualified = out->linkage || !mangled ? NULL : qualified(ix, die, 0);
	out->lo = 0;
	out->file = NULL;
	out->line = 0;
	if (dwarf_decl_line(die, &out->decl_line) != 0 || out->decl_line < 0)
		out->decl_line = 0;
}

/* Whether a unit's DW_AT_name is not its functions' linkage names
 * (binutils dwarf2.c, non_mangled, negated). */
static bool lang_mangles(int lang)
{
	switch (lang) {
	case DW_LANG_C89:
	case DW_LANG_C:
	case DW_LANG_Ada83:
	case DW_LANG_Cobol74:
	case DW_LANG_Cobol85:
	case DW_LANG_Fortran77:
	case DW_LANG_Pascal83:
	case DW_LANG_C99:
	case DW_LANG_Ada95:
	case DW_LANG_PLI:
	case DW_LANG_UPC:
	case DW_LANG_C11:
	case DW_LANG_Mips_Assembler:
		return false;
	default:
		return true;
	}
}

/* The start of die's range that holds vaddr (0 if none does). */
static uint64_t range_start(Dwarf_Die *die, uint64_t vaddr)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;

	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0)
		if (lo <= vaddr && vaddr < hi)
			return lo;
	return 0;
}

int kf_inline_chain(struct kf_dwidx *ix, uint64_t vaddr, struct kf_inl *out,
		    int max)
{
	const struct kf_cuscopes *cs;
	int32_t path[MAX_DIE_DEPTH + 1], e;
	Dwarf_Die cu, die;
	Dwarf_Files *files = NULL;
	Dwarf_Line *ln;
	size_t nfiles = 0;
	int np = 0, i, k = 0;
	bool mangled;

	if (!ix->dw || max <= 0 || !find_cu(ix, vaddr, &cu))
		return 0;
	cs = cu_scopes(ix, &cu);
	if (!cs)
		return -1;
	/* from the innermost up to the function that owns the code (the
	 * innermost subprogram) */
	for (e = innermost(cs, vaddr); e >= 0 && np <= MAX_DIE_DEPTH; e = cs->v[e].parent) {
		path[np++] = e;
		if (cs->v[e].subprogram)
			break;
	}
	if (np == 0 || !cs->v[path[np - 1]].subprogram)
		return 0;
	if (dwarf_getsrcfiles(&cu, &files, &nfiles) != 0)
		files = NULL;
	mangled = lang_mangles(dwarf_srclang(&cu));
	/* outermost first: the function, then each inlined instance in it */
	for (i = np - 1; i >= 0; i--) {
		if (!dwarf_offdie(ix->dw, cs->v[path[i]].die, &die))
			return -1;
		if (i != np - 1 && k > 0 && k <= max)
			call_site(&die, files, nfiles, &out[k - 1]);
		if (k < max) {
			Dwarf_Addr base, lo, hi;

			describe(ix, &die, mangled, &out[k]);
			if (k == 0)
				out[k].lo = range_start(&die, vaddr);
			out[k].first_lo = dwarf_ranges(&die, 0, &base, &lo, &hi) > 0 ? lo : 0;
			out[k].die = dwarf_dieoffset(&die);
			out[k].mangled = mangled;
		}
		k++;
	}
	if (k > max)
		k = max;
	for (i = 0; i + 1 < k; i++)
		out[i].file = full_path(ix, &cu, out[i].file);
	/* the innermost link's own line, from the line table (when the
	 * innermost ones were dropped, the last kept link keeps its call
	 * site) */
	if (k > 0 && out[k - 1].line == 0 && (ln = dwarf_getsrc_die(&cu, vaddr)) != NULL) {
		int l = 0;

		out[k - 1].file = dwarf_linesrc(ln, NULL, NULL);
		if (dwarf_lineno(ln, &l) == 0)
			out[k - 1].line = l;
	}
	if (k > 0)
		out[k - 1].file = full_path(ix, &cu, out[k - 1].file);
	return k;
}
