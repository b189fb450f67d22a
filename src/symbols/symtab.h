/* symtab.h - a symbol table: sorted address ranges with names.
 *
 * Built the way perf 6.1 builds its per-DSO symbol trees, so that lookups
 * give perf's answers: symbols are added in file order, kept stable-sorted
 * by start; kf_symtab_fixup() gives zero-sized symbols the start of the
 * next one as their end (symbols__fixup_end) and then keeps one symbol per
 * start address by perf's preference (symbols__fixup_duplicate /
 * choose_best_symbol: non-zero size, not weak, global, fewer leading
 * underscores, longer name).
 *
 * May use: util.
 */
#ifndef KF_SYMTAB_H
#define KF_SYMTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util.h"

enum { KF_BIND_LOCAL = 0, KF_BIND_GLOBAL = 1, KF_BIND_WEAK = 2 };

struct kf_sym {
	uint64_t start, end;     /* [start, end); end == start: zero-sized */
	uint32_t name;           /* offset into the table's names */
	uint8_t binding;         /* KF_BIND_* */
	bool kmodule;            /* kallsyms: name had a "\t[module]" */
	uint32_t node;           /* its node in the search tree (1-based) */
	uint32_t mangled;        /* 1 + offset into the names of the name
				    as the file has it, when demangling
				    changed it; 0: none */
};

/* perf keeps symbols in a red-black tree and, where symbols overlap,
 * answers with whichever one its search path meets first.  To give the
 * same answers kfold replays perf's inserts and erases on a tree of the
 * same kind (equal starts go right, an erased node with two children is
 * replaced by its successor, as in tools/lib/rbtree.c). */
struct kf_rbnode {
	struct kf_sym sym;       /* the symbol, ends kept up to date */
	uint32_t left, right, parent;
	bool red;
};

struct kf_symtab {
	struct kf_sym *v;
	size_t n, cap;
	char *names;
	size_t names_len, names_cap;
	struct kf_rbnode *tree;  /* tree[0] is the nil sentinel */
	size_t n_tree, cap_tree;
	uint32_t root;
	/* the tree is built on demand (kf_symtab_perf_tree): until then
	 * the inserts and erases it replays, in order (a node id, with
	 * KF_SYMTAB_ERASE for an erase) */
	uint32_t *ops;
	size_t n_ops, cap_ops;
	bool tree_ready;
	bool no_tree;            /* a scratch table (kallsyms' whole list,
				    before it is split): no search tree is
				    kept, every symbol's node is the nil one */
	bool oom;                /* an add failed: the table is incomplete */
};

void kf_symtab_init(struct kf_symtab *t);
void kf_symtab_fini(struct kf_symtab *t);

/* Appends a symbol (order matters for ties: earlier first). */
void kf_symtab_add(struct kf_symtab *t, uint64_t start, uint64_t size,
		   uint8_t binding, const char *name, size_t name_len);

/* dst (finished first) takes src's symbols, names and tree; src is left
 * empty. */
void kf_symtab_move(struct kf_symtab *dst, struct kf_symtab *src);

/* Gives a table built without a tree (no_tree) the search tree of a
 * table that had its present symbols added in their present order, as
 * kf_symtab_add would have logged it. */
void kf_symtab_tree_from_list(struct kf_symtab *t);

/* Room for n more symbols whose names total names_len bytes (with their
 * NULs), so that adding them moves no memory: kallsyms' 100,000 and more.
 * Only a hint: what it cannot reserve, the adds grow as they go. */
void kf_symtab_reserve(struct kf_symtab *t, size_t n, size_t names_len);

/* Marks symbol i (in add order, before any sort) as a kernel module's. */
void kf_symtab_set_kmodule(struct kf_symtab *t, size_t i, bool kmodule);

/* Keeps the name in the file (mangled) of symbol i (in add order, before
 * any sort) whose name was demangled, for kf_sym_mangled and
 * kf_sym_clone. */
void kf_symtab_set_mangled(struct kf_symtab *t, size_t i, const char *name, size_t len);

/* Sorts (stable) and applies perf's end and duplicate fixups.
 * `kallsyms` selects the kallsyms variant of the end fixup. */
void kf_symtab_fixup(struct kf_symtab *t, bool kallsyms);

/* Sorts (stable) without fixups (perf inserts PLT and perf-map symbols
 * without fixing them up). */
void kf_symtab_sort(struct kf_symtab *t);

/* The symbol covering addr, or NULL.  perf's rule: start <= addr < end,
 * or addr == start for a zero-sized symbol; among overlapping symbols
 * the one starting last. */
const struct kf_sym *kf_symtab_find(const struct kf_symtab *t, uint64_t addr);

#define KF_SYMTAB_ERASE 0x80000000u

/* Builds the search tree of kf_symtab_find_perf: the red-black tree perf
 * would hold after the same inserts and erases, replayed now (only
 * --compat=perf searches it, so nothing else pays for it); later adds go
 * into it at once.  Out of memory leaves t->oom set. */
void kf_symtab_perf_tree(struct kf_symtab *t);

/* perf's own search (symbols__find) over the replayed tree (built by
 * kf_symtab_perf_tree; NULL before): the first
 * node on the search path with start <= addr < end (or addr == start for
 * a zero-sized symbol).  NULL if none. */
const struct kf_sym *kf_symtab_find_perf(const struct kf_symtab *t,
					 uint64_t addr);

static inline const char *kf_sym_name(const struct kf_symtab *t,
				      const struct kf_sym *s)
{
	return t->names + s->name;
}

/* Its name as the file has it (mangled): kf_sym_name when that was not
 * demangled. */
static inline const char *kf_sym_mangled(const struct kf_symtab *t,
					 const struct kf_sym *s)
{
	return s->mangled ? t->names + s->mangled - 1 : t->names + s->name;
}

/* The clone suffix its demangled C++ name lost (".constprop.0",
 * ".cold"; "" when none). */
static inline const char *kf_sym_clone(const struct kf_symtab *t,
				       const struct kf_sym *s)
{
	const char *m = s->mangled ? t->names + s->mangled - 1 : NULL, *dot;

	if (!m || m[0] != '_' || m[1] != 'Z' || !(dot = strchr(m, '.')))
		return "";
	return dot;
}

#endif
