/* symbolize.h - raw frames -> the names folded stacks show.
 *
 * Each distinct (module, address, flags) is named once and cached.  Two
 * modes:
 *  - perf compatibility: the frame is named exactly as `perf script`
 *    prints it ("ADDR sym+0xOFF (dso)", symbol looked up at the address
 *    as is) and that line is folded by stackcollapse-perf.pl's rules,
 *    quirks included;
 *  - kfold's own: the same names with the documented corrections
 *    (return addresses looked up at ra - 1; module names never parsed
 *    out of a text line; files with the wrong build-id named as such).
 *
 * With inline_frames (kfold's own mode), a user or kernel frame whose
 * address has DWARF (the kernel's from its vmlinux) becomes its inline
 * chain, outermost first, each link named from
 * DWARF (the linkage name demangled, else DW_AT_name); with srcline,
 * each of those links gets ":file:line" (the call site, or the address's
 * own line for the innermost).
 *
 * May use: util, module, dso, symtab, stacks, inline, demangle.
 */
#ifndef KF_SYMBOLIZE_H
#define KF_SYMBOLIZE_H

#include <stdbool.h>
#include <stdint.h>

#include "dso.h"
#include "module.h"
#include "stacks.h"
#include "util.h"

struct kf_namer {
	struct kf_dsos *dsos;
	struct kf_modules *modules;
	bool compat;
	unsigned suffixes;               /* KF_SUFFIX_* (kfold.h) */
	bool inline_frames;              /* expand inline chains (DWARF) */
	bool srcline;                    /* append :file:line from DWARF */
	bool compat_inline;              /* --compat=perf: perf's inline
					    frames on KF_FRAME_UNWOUND frames */
	bool show_addrs;
	struct kf_strtab texts;          /* frame texts, interned */
	struct kf_map64 cache;           /* frame hash -> index in entries */
	struct kf_namer_entry {
		struct kf_frame frame;   /* to check for hash collisions */
		uint32_t text;           /* text id */
	} *entries;
	size_t n, cap;
	struct kf_buf tmp;
	uint64_t mismatch_frames;        /* frames named as build-id mismatch */
};

int kf_namer_init(struct kf_namer *n, struct kf_dsos *dsos,
		  struct kf_modules *modules, bool compat, unsigned suffixes,
		  bool show_addrs);
void kf_namer_fini(struct kf_namer *n);

/* The folded text of a frame: zero or more ';'-separated pieces ("" when
 * the frame folds to nothing, as stackcollapse drops some lines).  `java`
 * says whether the stack's comm starts with "java" (stackcollapse tidies
 * Java names then).  Borrowed until the next call; NULL on ENOMEM. */
const char *kf_namer_frame(struct kf_namer *n, const struct kf_frame *f,
			   bool java);

/* The same as an id into n->texts (0 = ""); 0 or KF_ENOMEM.  The text
 * stays at kf_strtab_get(&n->texts, id) once naming is over. */
int kf_namer_frame_id(struct kf_namer *n, const struct kf_frame *f, bool java,
		      uint32_t *id_out);

/* The symbol (ELF or kallsyms name, as the symbol table has it) a frame
 * falls in, looked up as kfold's own mode does (a return address at
 * ra - 1); NULL when there is none or the frame is not a mapped one.
 * Borrowed from the module's symbol table: valid until kf_dsos_fini. */
const char *kf_namer_symbol(struct kf_namer *n, const struct kf_frame *f);

/* Pseudo-frames (KF_FRAME_PSEUDO) and root frames are not named here:
 * context.h says how a marker prints, folded.h how a root does. */

#endif
