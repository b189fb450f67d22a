/* a2l.c - addr2line's choice of a function symbol (see a2l.h).
 *
 * The rules, as binutils 2.40 applies them (bfd/elf.c:
 * _bfd_elf_find_function, _bfd_elf_maybe_function_sym, better_fit), and
 * as the `a2l` test confirms against Debian's addr2line:
 *  - addr2line tries each allocated section holding the address, in
 *    section header order, until one gives a name;
 *  - candidates are the section's NOTYPE, FUNC and IFUNC symbols that
 *    start at or before the address; a size of 0 counts as 1; hidden
 *    local NOTYPE symbols of size 0 (annobin's markers) are not
 *    candidates;
 *  - the closest start wins; at the same start, a symbol that covers the
 *    address beats one that does not, and among those that do not the
 *    larger one wins; among those that do, a function beats a
 *    non-function, a typed symbol an untyped one, then the smaller one;
 *    on a full tie the earlier symbol in the table stays;
 *  - the symbol chosen last answers every later address it covers in
 *    the same section, unseen (struct kf_a2l_cache).
 */
#include "a2l.h"

#include <stdbool.h>
#include <stddef.h>

struct best {
	const GElf_Sym *sym;
	GElf_Sym copy;
	uint64_t start, size;
	bool func;
};

/* Only NOTYPE, FUNC and IFUNC symbols get here, so "a function" and "a
 * typed symbol" are the same test. */
static bool better(const struct best *b, uint64_t start, uint64_t size,
		   bool func, uint64_t addr)
{
	if (!b->sym)
		return true;
	if (start < b->start)
		return false;
	if (start > b->start)
		return true;
	if (b->start + b->size <= addr)
		return size > b->size;
	if (start + size <= addr)
		return false;
	if (b->func != func)
		return func;
	return size < b->size;
}

static void scan(Elf *elf, Elf_Data *syms, size_t nsyms, size_t strndx,
		 size_t shndx, uint64_t addr, struct kf_a2l_cache *c)
{
	struct best b = { 0 };
	size_t i;

	for (i = 1; i < nsyms; i++) {
		GElf_Sym s;
		int type, bind;
		uint64_t size;

		if (!gelf_getsym(syms, (int)i, &s) || s.st_shndx != shndx ||
		    s.st_value > addr)
			continue;
		type = GELF_ST_TYPE(s.st_info);
		bind = GELF_ST_BIND(s.st_info);
		if (type != STT_NOTYPE && type != STT_FUNC && type != STT_GNU_IFUNC)
			continue;
		if (s.st_size == 0 && bind == STB_LOCAL && type == STT_NOTYPE &&
		    GELF_ST_VISIBILITY(s.st_other) == STV_HIDDEN)
			continue;
		size = s.st_size ? s.st_size : 1;
		if (better(&b, s.st_value, size, type != STT_NOTYPE, addr)) {
			b.copy = s;
			b.sym = &b.copy;
			b.start = s.st_value;
			b.size = size;
			b.func = type != STT_NOTYPE;
		}
	}
	c->section = shndx;
	c->found = b.sym != NULL;
	c->start = b.start;
	c->size = b.size;
	c->name = b.sym ? elf_strptr(elf, strndx, b.copy.st_name) : NULL;
}

const char *kf_a2l_symtab_name(Elf *elf, uint64_t vaddr, struct kf_a2l_cache *cache)
{
	struct kf_a2l_cache fresh = { 0 };
	struct kf_a2l_cache *c = cache ? cache : &fresh;
	Elf_Scn *scn = NULL, *symscn = NULL;
	GElf_Shdr sh, symsh;
	Elf_Data *syms;
	size_t nsyms;

	if (!elf)
		return NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB) {
			symscn = scn;
			symsh = sh;
			break;
		}
	}
	if (!symscn || symsh.sh_entsize == 0)
		return NULL;
	syms = elf_getdata(symscn, NULL);
	if (!syms)
		return NULL;
	nsyms = syms->d_size / symsh.sh_entsize;
	scn = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		size_t ndx = elf_ndxscn(scn);

		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC) ||
		    vaddr < sh.sh_addr || vaddr - sh.sh_addr >= sh.sh_size)
			continue;
		if (c->section != ndx || !c->found || vaddr < c->start ||
		    vaddr - c->start >= c->size)
			scan(elf, syms, nsyms, symsh.sh_link, ndx, vaddr, c);
		if (c->found)
			return c->name && *c->name ? c->name : NULL;
	}
	return NULL;
}
