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

void kf_dwidx_fini(struct kf_dwidx *ix)
{
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

int kf_inline_chain(struct kf_dwidx *ix, uint64_t vaddr, struct kf_inl *out,
		    int max)
{
	Dwarf_Die cu, *scopes = NULL;
	Dwarf_Files *files = NULL;
	Dwarf_Line *ln;
	size_t nfiles = 0;
	int n, i, fn = -1, k = 0;

	if (!ix->dw || max <= 0 || !find_cu(ix, vaddr, &cu))
		return 0;
	n = dwarf_getscopes(&cu, vaddr, &scopes);
	if (n <= 0) {
		free(scopes);
		return n < 0 ? -1 : 0;
	}
	/* For an inlined instance dwarf_getscopes goes on with the scopes of
	 * its abstract definition; the functions it was inlined into are
	 * the DIE tree's parents of the innermost scope. */
	{
		Dwarf_Die inner = scopes[0];

		free(scopes);
		scopes = NULL;
		n = dwarf_getscopes_die(&inner, &scopes);
		if (n <= 0) {
			free(scopes);
			return n < 0 ? -1 : 0;
		}
	}
	/* scopes run from the innermost to the CU; the function that owns
	 * the code is the innermost subprogram */
	for (i = 0; i < n; i++) {
		if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram) {
			fn = i;
			break;
		}
	}
	if (fn < 0) {
		free(scopes);
		return 0;
	}
	if (dwarf_getsrcfiles(&cu, &files, &nfiles) != 0)
		files = NULL;
	/* outermost first: the function, then each inlined instance in it */
	for (i = fn; i >= 0; i--) {
		int tag = dwarf_tag(&scopes[i]);

		if (i != fn && tag != DW_TAG_inlined_subroutine)
			continue;       /* lexical blocks */
		if (i != fn && k > 0 && k <= max)
			call_site(&scopes[i], files, nfiles, &out[k - 1]);
		if (k < max)
			describe(&scopes[i], &out[k]);
		k++;
	}
	free(scopes);
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
