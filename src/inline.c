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

static void describe(Dwarf_Die *die, struct kf_inl *out)
{
	out->name = attr_string(die, DW_AT_name);
	out->linkage = attr_string(die, DW_AT_linkage_name);
	if (!out->linkage)
		out->linkage = attr_string(die, DW_AT_MIPS_linkage_name);
	out->file = NULL;
	out->line = 0;
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

void kf_dwidx_fini(struct kf_dwidx *ix)
{
	size_t i;

	for (i = 0; i < ix->ncus; i++)
		cuscopes_free(ix->cus[i]);
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
				cs->v[cs->n].parent = parent;
				cs->v[cs->n].depth = (uint16_t)(depth < UINT16_MAX ? depth : UINT16_MAX);
				cs->v[cs->n].subprogram = tag == DW_TAG_subprogram;
				cs->n++;
			}
			if (cs->n == first)
				continue;   /* a declaration or an abstract instance */
			me = (int32_t)first;
			d = depth + 1;
		} else if (tag != DW_TAG_lexical_block && tag != DW_TAG_namespace &&
			   tag != DW_TAG_module) {
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
	/* outermost first: the function, then each inlined instance in it */
	for (i = np - 1; i >= 0; i--) {
		if (!dwarf_offdie(ix->dw, cs->v[path[i]].die, &die))
			return -1;
		if (i != np - 1 && k > 0 && k <= max)
			call_site(&die, files, nfiles, &out[k - 1]);
		if (k < max)
			describe(&die, &out[k]);
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
