/* symbolize.h - raw frames -> structured symbol frames.
 *
 * Each distinct raw frame (module, address, flags) is named once and
 * cached; its names are an array of struct kf_symframe, outermost first
 * (more than one when it is an inline chain).  This is naming policy
 * only: which symbol a frame is in, and what a name is.  How a name is
 * printed (stackcollapse's tidying, "_[k]", perf script's line and its
 * regexes) is the folded emitter's business (folded.h).  Two modes:
 *  - perf compatibility (the policy's perf_names): the symbol perf 6.1
 *    finds at the address as is (kf_symtab_find_perf); with a2l_inline
 *    (addr2line_emulation and inline frames on), the DWARF-unwound frames
 *    that perf hands to addr2line get what addr2line says (the inline
 *    chain from DWARF, else addr2line's own symbol choice, a2l.h),
 *    demangled as perf demangles it (KF_SYMF_INLINED);
 *  - kfold's own: the documented corrections (return addresses looked up
 *    at ra - 1, a static binary's .plt, a kernel entry at a function's
 *    very start), the module's trust (its dso status: a file with the
 *    wrong build-id gives no names), and with inline_frames (or srcline)
 *    the inline chain from DWARF (the kernel's from its vmlinux), each
 *    link named from DWARF (the linkage name demangled, else the name
 *    with its scopes), the owning function keeping its ELF symbol's name
 *    where that symbol starts where the function does; source file and
 *    line per link (the call site, the address's own line for the
 *    innermost; with srcline alone, one frame with the innermost line).
 *
 * May use: util, module, dso, symtab, stacks, inline, demangle.
 * Owns its names (kf_namer.strings) and frames; the caller owns dsos and
 * modules, which must outlive it.
 */
#ifndef KF_SYMBOLIZE_H
#define KF_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dso.h"
#include "module.h"
#include "policy.h"
#include "stacks.h"
#include "util.h"

/* What a symbol frame is. */
enum kf_symkind {
	KF_SYM_USER,          /* code of a user-space module */
	KF_SYM_KERNEL,        /* the kernel's or a kernel module's code */
	KF_SYM_JIT,           /* JIT code named by a perf map */
	KF_SYM_MARKER,        /* a context marker (pseudo-frame) */
	KF_SYM_ROOT,          /* the stack's root: its thread */
	KF_SYM_TRUNCATED,     /* where the copy of the user stack ran out */
	KF_SYM_UNKNOWN        /* no mapping contained the address */
};

/* Why a code frame has no name (name == 0). */
enum kf_symwhy {
	KF_SYMWHY_NONE,
	KF_SYMWHY_NO_MAP,     /* no mapping contained the address */
	KF_SYMWHY_NO_SYMBOL,  /* the module's symbols have none there */
	KF_SYMWHY_NO_SYMBOLS, /* no symbols for the module (dso status says
				 why: missing, no table, bad file, ...) */
	KF_SYMWHY_UNTRUSTED   /* the module's file is not the recorded one
				 (build-id mismatch, changed, not recorded:
				 status says which): its names are not used */
};

#define KF_SYMF_VERIFIED 1u   /* names from a file whose build-id matched */
#define KF_SYMF_DWARF    2u   /* named from debug info (a chain's link) */
#define KF_SYMF_INLINED  4u   /* --compat=perf: one of perf's "(inlined)"
				 lines from addr2line */
#define KF_SYMF_FILE     8u   /* file and line are known (file may still
				 be "", id 0) */
#define KF_SYMF_STITCHED 16u  /* --stitch: its raw frame came from an
				 earlier sample (KF_FRAME_STITCHED) */

struct kf_symframe {
	uint64_t addr;        /* the raw frame's address (kf_frame.addr) */
	uint64_t sym_start;   /* where the symbol starts (same space as
				 addr); 0 without a symbol */
	uint64_t offset;      /* the looked-up address - sym_start (kfold's
				 own mode: ra - 1 for a return address) */
	uint32_t name;        /* id in kf_namer.strings; 0 = no name */
	uint32_t module;      /* module id; 0 = none (no mapping) */
	uint32_t file;        /* source file, id in kf_namer.strings; 0 =
				 not known */
	uint32_t line;        /* 0 = not known */
	uint32_t linkage;     /* the function's name as its file has it
				 (mangled), id in kf_namer.strings; 0 = the
				 name's (not demangled, or not known) */
	uint32_t decl_line;   /* the line where its function is declared
				 (DWARF), 0 = not known */
	uint16_t inline_depth; /* 0: the function owning the code; k: the
				 k-th inlined callee inside it */
	uint8_t kind;         /* enum kf_symkind */
	uint8_t why;          /* enum kf_symwhy (name == 0) */
	uint8_t status;       /* the module's enum kf_dso_status (0 without
				 a module) */
	uint8_t flags;        /* KF_SYMF_* */
};

struct kf_namer {
	struct kf_dsos *dsos;
	struct kf_modules *modules;
	const struct kf_policy *pol;     /* perf_names: perf's naming */
	bool inline_frames;              /* expand inline chains (DWARF) */
	bool srcline;                    /* file and line from DWARF */
	bool a2l_inline;                 /* addr2line_emulation with inline
					    frames: perf's inline frames on
					    KF_FRAME_UNWOUND frames */
	struct kf_strtab strings;        /* names and file names */
	struct kf_map64 cache;           /* frame hash -> index in entries */
	struct kf_namer_entry {
		struct kf_frame frame;   /* to check for hash collisions */
		uint32_t first, count;   /* its frames: symframes[first..] */
	} *entries;
	size_t n, cap;
	struct kf_symframe *symframes;
	size_t n_symframes, cap_symframes;
	/* per module id: a name made so far read its debug info
	 * (kf_namer_asked_debuginfo); n_asked entries are set */
	uint8_t *asked;
	size_t n_asked, cap_asked;
};

/* Names for reports: "user", "kernel", "jit", "marker", "root",
 * "truncated", "unknown"; "", "no_map", "no_symbol", "no_symbols",
 * "untrusted".  "?" out of range. */
const char *kf_symkind_name(unsigned kind);
const char *kf_symwhy_name(unsigned why);

/* pol (borrowed, static): perf_names, perf's naming; with
 * addr2line_emulation, inline_frames means perf's addr2line inline lines
 * on unwound frames.  Else inline_frames, srcline: kfold's own DWARF
 * names and lines (perf_names has neither).  0 or KF_ENOMEM. */
int kf_namer_init(struct kf_namer *n, struct kf_dsos *dsos,
		  struct kf_modules *modules, const struct kf_policy *pol,
		  bool inline_frames, bool srcline);
void kf_namer_fini(struct kf_namer *n);

/* Room for `frames` more entries and symbol frames, asked for before
 * naming about that many frames (a trie's nodes: at most a frame each):
 * the arrays are not copied again as they fill, and a large block's pages
 * never filled are never mapped.  A hint: without the room, the naming
 * grows them as it goes. */
void kf_namer_room(struct kf_namer *n, size_t frames);

/* What naming reads of a module's files (KF_DSO_LOAD_* bits), for the
 * load steps that must come before kf_namer_name (dso.h: the getters
 * load nothing).  kf_namer_wants: of any frame of `module` (a
 * kf_dso_want_fn for kf_dsos_prepare; ctx is the namer): its symbols, and
 * in kfold's own mode with inline frames or source lines the debug info
 * of a user file or the kernel.  kf_namer_needs: of frame f, whose
 * module's symbols are loaded; it adds to kf_namer_wants the debug info
 * --compat=perf --inline reads for an unwound frame with a symbol, which
 * perf's addr2line child is run for. */
unsigned kf_namer_wants(void *namer, uint32_t module);
unsigned kf_namer_needs(struct kf_namer *n, const struct kf_frame *f);

/* Whether a name made so far read the module's debug info.  The
 * report's "no debug info" gaps count a stack's frame only then: when the
 * getters still loaded what they were asked for, a module's debug info
 * was looked for by the first name that needed it, and the gaps of the
 * stacks the report met before that were not counted; this keeps that
 * count byte for byte (a later change may count every stack). */
bool kf_namer_asked_debuginfo(const struct kf_namer *n, uint32_t module);

/* Names code frame f (not a root, marker or KF_FRAME_UNMARKED copy:
 * those bits are not looked at) once: *entry is the index of its names
 * in n->entries, stable for the namer's life.  0 or KF_ENOMEM. */
int kf_namer_name(struct kf_namer *n, const struct kf_frame *f, uint32_t *entry);

/* The frames of an entry, outermost first; *count of them (>= 1). */
static inline const struct kf_symframe *kf_namer_frames(const struct kf_namer *n,
							 uint32_t entry, size_t *count)
{
	*count = n->entries[entry].count;
	return n->symframes + n->entries[entry].first;
}


/* The symbol (ELF or kallsyms name, as the symbol table has it) a frame
 * falls in, looked up as kfold's own mode does (a return address at
 * ra - 1); NULL when there is none or the frame is not a mapped one.
 * Borrowed from the module's symbol table: valid until kf_dsos_fini. */
const char *kf_namer_symbol(struct kf_namer *n, const struct kf_frame *f);
/* Makes kf_namer_symbol for frames of f's module read only what stays
 * as it is (the module's loaded symbol tables, perf's search tree of them
 * built now if asked for): after it, those calls may run on another
 * thread while this namer names.  False, doing nothing, for a frame
 * kf_namer_symbol does not look up (no module, unmapped, not code). */
bool kf_namer_symbol_ready(struct kf_namer *n, const struct kf_frame *f);

#endif
