/* inline.h - what DWARF says about a code address: the chain of functions
 * inlined there, and the source lines.
 *
 * At an address inside `compute` where gcc inlined `stage`, and `mix`
 * into that, the chain is compute -> stage -> mix: the function that owns
 * the machine code first, the innermost inlined one last.  Each link's
 * line is where it called the next one (DW_AT_call_file/line of the
 * inlined instance); the last link's line is the address's own line
 * (the line table).  This is what `addr2line -f -i` prints, in reverse.
 *
 * May use: util (and libdw).
 */
#ifndef KF_INLINE_H
#define KF_INLINE_H

#include <stddef.h>
#include <stdint.h>

#include <elfutils/libdw.h>

#include "util.h"

struct kf_inl {
	const char *name;     /* DW_AT_name; NULL when the DIE has none */
	const char *linkage;  /* DW_AT_linkage_name (mangled), or NULL */
	/* only when there is no linkage name: DW_AT_name with the scopes
	 * of the DIE that declares the function (DW_AT_abstract_origin and
	 * DW_AT_specification followed to their end), built from its parent
	 * DIEs: namespaces, classes, an enclosing function for a local class
	 * such as a lambda's ("shop::make_rule::<lambda(uint32_t)>::operator()");
	 * NULL when it is declared at the unit's top level (C) or unnamed */
	const char *qualified;
	uint64_t lo;          /* link 0 only: the start of the function's
				 address range that holds the address */
	uint64_t first_lo;    /* the start of the DIE's first range */
	uint64_t die;         /* the DIE's offset (of the function, or of
				 the inlined instance) */
	bool mangled;         /* its unit's language mangles names: its
				 DW_AT_name is not a linkage name (binutils'
				 rule: all but C, Ada, COBOL, Fortran 77,
				 Pascal, PL/I, UPC and assembler) */
	const char *file;     /* source file, or NULL when unknown */
	int line;             /* 0 when unknown */
	int decl_line;        /* DW_AT_decl_line of the function (through
				 its abstract origin), 0 when unknown */
};

/* The address ranges of a module's compilation units, sorted, built
 * once: .debug_aranges is optional (clang does not write it), and a
 * lookup in a sorted table beats walking the units. */
struct kf_dwidx {
	Dwarf *dw;
	struct kf_dwrange {
		uint64_t lo, hi;      /* [lo, hi) */
		uint64_t cu;          /* the unit's DIE offset */
	} *r;
	size_t n;
	/* relative source paths joined to their unit's DW_AT_comp_dir,
	 * once per (directory, file) */
	struct kf_arena paths;
	struct kf_map64 joined;       /* hash of the two strings' addresses */
	char **jv;
	size_t njv, capjv;
	/* per unit, built on its first lookup: the address ranges of its
	 * functions and inlined instances, so that a lookup does not walk
	 * the unit's DIE tree */
	struct kf_map64 cumap;        /* unit DIE offset -> index in cus */
	struct kf_cuscopes **cus;
	size_t ncus, capcus;
	/* per Dwarf a name's DIE may be in (the module's, a dwz file's):
	 * the parents of its scope DIEs, each unit walked once when a
	 * qualified name is first asked of it, and the names built */
	struct kf_dwparents **par;
	size_t npar, cappar;
	struct kf_arena names;
};

/* Builds the index of dw (which stays the caller's).  0, or -1 when out
 * of memory (the index is then empty). */
int kf_dwidx_init(struct kf_dwidx *ix, Dwarf *dw);
void kf_dwidx_fini(struct kf_dwidx *ix);

/* The chain at vaddr (a link-time address of the module the index
 * describes), outermost first, at most `max` links (the outermost ones
 * are kept: the innermost are dropped past max).  Returns the number of
 * links (0: no function DIE covers vaddr) or -1 on failure (out of
 * memory, bad DWARF).  Strings belong to the Dwarf. */
int kf_inline_chain(struct kf_dwidx *ix, uint64_t vaddr, struct kf_inl *out,
		    int max);

#endif
