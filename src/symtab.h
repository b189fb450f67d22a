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

#include "util.h"

enum { KF_BIND_LOCAL = 0, KF_BIND_GLOBAL = 1, KF_BIND_WEAK = 2 };

struct kf_sym {
	uint64_t start, end;     /* [start, end); end == start: zero-sized */
	uint32_t name;           /* offset into the table's names */
	uint8_t binding;         /* KF_BIND_* */
	bool kmodule;            /* kallsyms: name had a "\t[module]" */
};

struct kf_symtab {
	struct kf_sym *v;
	size_t n, cap;
	char *names;
	size_t names_len, names_cap;
	bool oom;                /* an add failed: the table is incomplete */
};

void kf_symtab_init(struct kf_symtab *t);
void kf_symtab_fini(struct kf_symtab *t);

/* Appends a symbol (order matters for ties: earlier first). */
void kf_symtab_add(struct kf_symtab *t, uint64_t start, uint64_t size,
		   uint8_t binding, const char *name, size_t name_len);

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

static inline const char *kf_sym_name(const struct kf_symtab *t,
				      const struct kf_sym *s)
{
	return t->names + s->name;
}

#endif
