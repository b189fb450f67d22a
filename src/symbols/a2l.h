/* a2l.h - the function name GNU addr2line gives an address from a file's
 * symbol table.
 *
 * perf 6.1 names the inlined frames of DWARF-unwound callchains with an
 * `addr2line -i -f` child.  Where the file has no DWARF for the address,
 * addr2line (binutils' bfd, _bfd_elf_find_function) falls back to the
 * symbol table and chooses among the symbols there by its own rules,
 * which are not perf's: at one address of glibc it says
 * `__libc_start_main_alias_2` where perf's own lookup says
 * `__libc_start_main@@GLIBC_2.34`.  perf prints addr2line's name.  This
 * module reproduces that choice so --compat=perf can print it too; the
 * test `a2l` checks it against addr2line itself on whole libraries.
 *
 * May use: util (and libelf).
 */
#ifndef KF_A2L_H
#define KF_A2L_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <gelf.h>

/* bfd remembers the last symbol it chose and answers any later address
 * inside it with that symbol without looking again, so one addr2line
 * process can name the same address differently depending on what it was
 * asked before (an assembler label like `.L12` inside a function, say).
 * perf keeps one process per file; keep one cache per file, zeroed,
 * and ask in perf's order to get its answers. */
struct kf_a2l_cache {
	size_t section;      /* the section index of the last scan; 0: none */
	bool found;
	uint64_t start, size;
	const char *name;
};

/* The name addr2line -f prints for link-time address `vaddr` of `elf`
 * from the static symbol table (.symtab), or NULL when it would print
 * "??" (no .symtab, no allocated section holds the address, or no
 * symbol in that section starts at or before it).  The string lives in
 * the ELF's data.  `cache` may be NULL (a fresh process). */
const char *kf_a2l_symtab_name(Elf *elf, uint64_t vaddr, struct kf_a2l_cache *cache);

#endif
