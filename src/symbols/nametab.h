/* nametab.h - a --symbols-only bundle's name table: what naming found for
 * the user-space modules of a capture, kept instead of their files.
 *
 * `kfold archive --symbols-only` leaves every ELF file (binaries, debug
 * files, dwz files, the vdso) out of the bundle.  What the analysis took
 * from them is kept instead, for exactly the frames the capture's stacks
 * use:
 *  - per raw frame (module, address, naming flags) and naming variant
 *    (inline frames on or off, source lines on or off): the frames the
 *    namer made (name, inline chain, file:line, kind, status) and the ELF
 *    symbol kf_namer_symbol gives;
 *  - per module: what its load found (status and its text, the file
 *    named, whether it had a symbol table, MiniDebugInfo, debuginfod,
 *    whether debug info was found and else why), which the report,
 *    --explain and --stats read through dso.h's getters;
 *  - the recording host's verdict (host.h), which its loads asked for.
 * Reading such a bundle, the DSO layer loads a table module from here
 * (dso.c, nametab_load) and the namer names its frames from here
 * (symbolize.c), so every consumer above them takes the branches it took
 * on the capture host.  The kernel, JIT maps and KSYMBOL regions are named
 * as usual (their kallsyms and perf maps are in the bundle: they are
 * symbol lists, not binaries).
 *
 * May use: util, module, dso (dso-int.h, for kf_nametab_take and the
 * load), symbolize, symtab.  The table owns its strings and arrays; it
 * must outlive the DSO layer and namers it is given to.
 */
#ifndef KF_NAMETAB_H
#define KF_NAMETAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dso.h"
#include "module.h"
#include "symbolize.h"
#include "symtab.h"
#include "util.h"

/* naming variants: bit 0 inline frames, bit 1 source lines */
#define KF_NT_VARIANTS 4u

/* What a module's load found; strings are 1 + an id in
 * kf_nametab.strings, 0 for none (a NULL getter answer). */
struct kf_nt_module {
	uint32_t id;              /* module id (kf_modules) */
	uint32_t name;            /* the module's name, checked at load */
	uint8_t status;           /* enum kf_dso_status */
	bool named;               /* it had a symbol table */
	bool inode_checked;
	bool mdi_used;
	bool syms_dinfod;
	bool dw_known;            /* the DWARF fields below were recorded */
	bool dw_found;            /* debug info was found */
	bool dw_dinfod;
	uint32_t status_text;     /* kf_dso_status_text's answer */
	uint32_t file, mdi_note, unverified_why, dw_file, dw_hint;
};

/* One named raw frame in one variant: its frames are
 * kf_nametab.frames[first .. first + count), name and file ids in
 * kf_nametab.strings. */
struct kf_nt_entry {
	uint64_t addr;
	uint32_t module, flags;
	uint8_t variant;
	uint32_t sym;             /* kf_namer_symbol's answer: 1 + a string
				     id, 0: NULL */
	uint32_t first, count;
	uint32_t next;            /* 1 + the next entry of its hash, 0: none */
};

struct kf_nametab {
	struct kf_strtab strings;
	struct kf_nt_module *mods;    /* sorted by id */
	size_t n_mods, cap_mods;
	struct kf_nt_entry *entries;
	size_t n, cap;
	struct kf_map64 index;        /* hash of the entry's key -> the first
					 index of its chain */
	uint64_t seed;                /* mixed into that hash: a bundle's table
					 is keyed by its own SHA-256, so that
					 frames chosen to collide are not a
					 quadratic read */
	struct kf_symframe *frames;
	size_t n_frames, cap_frames;
	/* the recording host's verdict (struct kf_dsos) */
	bool host_decided;
	uint8_t host;                 /* enum kf_host_verdict */
	uint32_t host_why;            /* 1 + a string id, 0: NULL */
	struct kf_symtab empty;       /* the symbol table of a named module */
	/* writing only (not in names.json): the kallsyms addresses the
	 * kernel's frames were looked up at (kf_kallsyms_trim) */
	uint64_t *kaddrs;
	size_t n_kaddrs, cap_kaddrs;
};

/* 0 or KF_ENOMEM. */
int kf_nametab_init(struct kf_nametab *t);
void kf_nametab_fini(struct kf_nametab *t);

/* The variant of a namer's options. */
static inline unsigned kf_nt_variant(bool inline_frames, bool srcline)
{
	return (inline_frames ? 1u : 0u) | (srcline ? 2u : 0u);
}

/* Whether modules of this kind are named from a table: the ones named
 * from ELF files (the files a --symbols-only bundle leaves out). */
static inline bool kf_nt_kind(unsigned kind)
{
	return kind == KF_MOD_FILE || kind == KF_MOD_VDSO || kind == KF_MOD_KMODULE;
}

/* Whether a reader takes mod's names and state from the table t: a
 * table kind's module, except a kernel module the table has no record of
 * (a bundle from before kernel modules were kept, whose module frames
 * are named from its cut kallsyms). */
bool kf_nt_from_table(const struct kf_nametab *t, const struct kf_module *mod);

/* Adds what a finished run's DSO layer and namer (kfold's own naming,
 * not --compat=perf) found for the table modules: every frame the namer
 * made, in its variant; each loaded module's state (the first record of
 * a module stands; DWARF fields are taken from the first record that
 * tried it); and the kallsyms addresses of its kernel frames (the frame's
 * and the one before: a return address is looked up there).  0 or
 * KF_ENOMEM. */
int kf_nametab_take(struct kf_nametab *t, struct kf_dsos *d, struct kf_namer *n);

/* Gives a DSO layer the table (d->names) and the recording host's
 * verdict, which its loads would have asked for. */
void kf_nametab_attach(const struct kf_nametab *t, struct kf_dsos *d);

/* The entry of a raw frame in a variant, or NULL. */
const struct kf_nt_entry *kf_nametab_find(const struct kf_nametab *t, unsigned variant,
					  uint32_t module, uint64_t addr, uint32_t flags);
/* The module record of a module id, or NULL. */
const struct kf_nt_module *kf_nametab_module(const struct kf_nametab *t, uint32_t id);

/* A string of the table (NULL for 0; ref is 1 + an id). */
const char *kf_nametab_get(const struct kf_nametab *t, uint32_t ref);
/* Building a table from its serialized form (bundle.c): a string's ref,
 * 1 + its id, 0 for NULL (false on ENOMEM), a module (kept sorted; false on ENOMEM or a
 * duplicate id), an entry with its frames (false on ENOMEM or a
 * duplicate key).  Frames' name and file fields are string ids (refs
 * less one; 0 also for none, as the namer's). */
bool kf_nametab_str(struct kf_nametab *t, const char *s, uint32_t *id);
bool kf_nametab_add_module(struct kf_nametab *t, const struct kf_nt_module *m);
bool kf_nametab_add(struct kf_nametab *t, const struct kf_nt_entry *e,
		    const struct kf_symframe *frames, size_t n);

#endif
