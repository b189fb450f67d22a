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
 * The root frame (comm, or comm-PID[/TID]) is named here too.
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
	const struct kf_strtab *comms;   /* where root frames' comm ids live */
	bool compat;
	unsigned suffixes;               /* KF_SUFFIX_* (kfold.h) */
	bool inline_frames;              /* expand inline chains (DWARF) */
	bool srcline;                    /* append :file:line from DWARF */
	bool compat_inline;              /* --compat=perf: perf's inline
					    frames on KF_FRAME_UNWOUND frames */
	bool show_addrs;
	int root_mode;                   /* KF_ROOT_* (kfold.h) */
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

/* How frames are named; the fields of struct kf_namer of the same names. */
struct kf_namer_opts {
	bool compat;                     /* --compat=perf */
	unsigned suffixes;               /* KF_SUFFIX_* (kfold.h) */
	bool show_addrs;
	int root_mode;                   /* KF_ROOT_* (kfold.h) */
	bool inline_frames, srcline, compat_inline;
};

int kf_namer_init(struct kf_namer *n, struct kf_dsos *dsos,
		  struct kf_modules *modules, const struct kf_strtab *comms,
		  const struct kf_namer_opts *o);
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

/* A pseudo-frame (KF_FRAME_PSEUDO) names as the text whose id in
 * n->texts is its `module`; intern the text with kf_strtab_intern. */

/* The root frame's text (comm with spaces turned into '_', plus -PID or
 * -PID/TID).  `line` is the rest of the perf script header line in compat
 * mode (see session.c), used to reproduce how stackcollapse splits the
 * comm from the numbers.  Writes into out. */
void kf_namer_root(struct kf_namer *n, const char *comm, int32_t pid,
		   int32_t tid, const char *header_rest, struct kf_buf *out);

/* The length of the comm part of a root text kf_namer_root made for
 * (pid, tid): without the "-PID" or "-PID/TID" that --pid and --tid
 * append. */
size_t kf_namer_root_comm_len(const struct kf_namer *n, const char *root,
			      int32_t pid, int32_t tid);

/* stackcollapse-perf.pl's /:\s*(\d+)*\s+(\S+):\s*$/ on a header line:
 * returns true when it matches, with the event name (borrowed slice of
 * line) and the period digits (period_len 0 when absent). */
bool kf_collapse_header_event(const char *line, size_t len,
			      const char **event, size_t *event_len,
			      const char **period, size_t *period_len);

#endif
