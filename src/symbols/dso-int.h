/* dso-int.h - the state the files of the DSO layer share; not for other
 * folders (they see dso.h).
 *
 * The layer is cut by job:
 *   dso.c       per-module state, the load step, the getters
 *   locate.c    which file holds a module's symbols: --symfs, the build-id
 *               cache, debug directories, .gnu_debuglink, debuginfod, and
 *               whether a file without a recorded build-id is the mapped
 *               one; where a dwz file or a kernel's vmlinux may be (no
 *               symbol is read there)
 *   elf.c       symbols from ELF files (.symtab, .dynsym, .plt,
 *               MiniDebugInfo, this process's vdso)
 *   kallsyms.c  the kernel's and its modules' symbols from kallsyms
 *   kmodule.c   a kernel module's .ko: its symbols, DWARF and code
 *   perfmap.c   JIT symbols from perf-PID.map
 *   jitcode.c   JIT code loads from a jitdump (jit-PID.dump)
 *   dwarf.c     debug info: DWARF, dwz files, the kernel's vmlinux, KASLR
 *   cfi.c       what unwinding needs (.eh_frame, .debug_frame, segments)
 *
 * Each module's state (struct dso_state) hangs on kf_module.priv, made by
 * dso_state_of and freed by kf_dsos_fini.  Open files (struct cand) belong
 * to the state they are stored in.
 *
 * May use: what dso.h may, libelf and libdw (this header names their
 * types: it is included by the layer's own files only).
 */
#ifndef KF_DSO_INT_H
#define KF_DSO_INT_H

#include <gelf.h>
#include <elfutils/libdw.h>

#include "a2l.h"
#include "dso.h"

#define KF_MAX_KALLSYMS ((size_t)256 << 20)
#define KF_MAX_PERFMAP ((size_t)1 << 30)
#define KSYM_NAME_LEN 512
/* a MiniDebugInfo ELF holds a symbol table: a few MB for the largest
 * programs; more than this is taken for a decompression bomb */
#define KF_MAX_MINIDEBUGINFO ((size_t)256 << 20)

/* An open candidate file.  fd -1: none; -2: shares another cand's Elf
 * (which closes it). */
struct cand {
	int fd;
	Elf *elf;
	char *path;
	bool has_symtab, has_dynsym;
	uint8_t got_bid[20];     /* CAND_MISMATCH: the file's build-id */
	size_t got_bid_len;
	bool has_mdi;            /* a .gnu_debugdata (MiniDebugInfo) */
};

struct dso_state {
	enum kf_dso_status status;
	struct kf_symtab syms;
	bool has_syms;
	/* a static binary's .plt entries (not perf's: kf_dso_static_plt) */
	struct kf_symtab splt;
	bool has_splt;
	char *file;
	/* what came of the runtime file's .gnu_debugdata (NULL: it has
	 * none, or it was not looked at) and whether names came from it */
	const char *mdi_note;
	char mdi_why[160];
	bool mdi_used;
	/* kept open for unwinding: the file with the symbols (maybe a debug
	 * file with .debug_frame) and the runtime image (.eh_frame) */
	struct cand syms_file, run_file;
	char *image;             /* our own vdso's copy, when used; a JIT
				    code load's table image (jit_elf) */
	bool cfi_tried;
	struct kf_cfi cfi;
	/* debug info, for inline chains and source lines */
	bool dw_tried;
	Dwarf *dw;
	bool tab_dw;             /* a name table's module (nametab.h): debug
				    info was found on the capture host (dw
				    stays NULL) */
	const char *dw_file;     /* the path of the file it came from */
	struct cand alt;         /* dwz's supplementary file, if any */
	bool dw_unusable;        /* --compat=perf: perf would not read it */
	Dwarf *dw_alt;
	/* debuginfod: whether the debug file was asked for; a file fetched
	 * that had DWARF but no symbol table (kept for kf_dso_debuginfo);
	 * whether the symbols and the DWARF came from there */
	bool dinfod_tried;
	struct cand dinfod_dbg;
	bool syms_dinfod, run_dinfod, dw_dinfod;
	struct kf_dwidx dwidx;
	/* no build-id recorded: the device and inode were checked on the
	 * recording host; else why the file is unverified */
	bool inode_checked;
	const char *unverified_why;
	char *status_text;
	/* the kernel: its vmlinux, what its link addresses are off by at
	 * run time (KASLR), and why there is no DWARF when there is none */
	struct cand kimage;
	uint64_t kdelta;
	/* a kernel module: whether its .ko was looked for (kmodule.c), the
	 * runtime range of its .text and that section's file offset, the
	 * libdwfl session that owns its relocated DWARF (dw), and why no .ko
	 * was used when one was refused */
	struct kf_jitstate *jit;  /* a jitdump file's module: its parsed
				     contents (jitcode.c) */
	Elf *jit_elf;             /* a code load's: the image of its
				     unwinding table (in image) */
	bool ko_tried;
	uint64_t ko_text_start, ko_text_end, ko_text_off;
	struct Dwfl *ko_dwfl;
	char *ko_why;
	char *dw_hint;
	struct kf_dso_seg load[KF_CFI_MAX_LOADS];
	size_t n_load;
	bool load_tried;
	/* machine code (code.c): the code sections of the file it comes
	 * from, copied out of its section headers at the load step */
	bool code_tried;
	struct dso_code_scn {
		uint64_t addr, size, offset;
		bool nobits;
	} *code_scn;
	size_t n_code_scn;
	const uint8_t *code_image;     /* that file's bytes */
	size_t code_image_len;
	const char *code_file;
	uint16_t code_machine;
	const char *code_why;          /* why there is no code */
	/* --compat=perf: what perf's addr2line child said, per file offset
	 * (index into a2l_names, NULL for "??"), and its bfd's memory */
	int a2l_file;            /* perf runs addr2line on it: 0 not yet
				    known, 1 yes, -1 no */
	struct kf_map64 a2l_seen;
	const char **a2l_names;
	uint64_t *a2l_starts;    /* the symbol's address, with its name */
	size_t a2l_n, a2l_cap, a2l_scap;
	/* its DWARF functions' names once settled (kf_dso_a2l_settle): DIE
	 * offset -> index into a2l_fnames (NULL: the DWARF name) */
	struct kf_map64 a2l_fn;
	const char **a2l_fnames;
	size_t a2l_fn_n, a2l_fn_cap;
	struct kf_a2l_cache a2l;
};

/* ---- dwarf.c ---- */
void dso_noalt_fini(struct kf_dsos *d);

/* ---- kmodule.c ---- */
/* Looks for a kernel module's .ko and, when one fits, takes its symbols
 * instead of kallsyms' (the kernel's kallsyms is loaded first). */
void dso_load_kmodule(struct kf_dsos *d, struct kf_module *mod, struct dso_state *st);
/* The DWARF of the .ko dso_load_kmodule took, relocated by libdwfl. */
void dso_kmodule_dwarf(struct kf_dsos *d, struct kf_module *mod, struct dso_state *st);
/* A runtime address of the module's .text as its DWARF's address. */
bool dso_kmodule_vaddr(const struct dso_state *st, uint64_t addr, uint64_t *vaddr);
void dso_kmodule_fini(struct dso_state *st);

/* ---- jitcode.c ---- */
void dso_jit_fini(struct dso_state *st);
void dso_jit_load_cfi(struct kf_dsos *d, const struct kf_module *mod, struct dso_state *st);
/* The code bytes of a jitdump code load's module (NULL: none). */
const uint8_t *dso_jit_code_bytes(struct kf_dsos *d, const struct kf_module *mod,
				  size_t *len, uint16_t *machine);

/* ---- code.c ---- */
void dso_load_code(struct kf_dsos *d, struct kf_module *mod, struct dso_state *st);
void dso_code_fini(struct dso_state *st);

/* ---- dso.c ---- */
void dso_warnf(struct kf_dsos *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
struct dso_state *dso_state_of(struct kf_module *mod);
/* A getter's view of a module: its state once the parts `what` were
 * loaded (kf_dsos_load), else NULL (and an assert in debug builds). */
struct dso_state *dso_loaded(struct kf_dsos *d, uint32_t module, unsigned what);

/* ---- locate.c: build-ids, candidates, ELF section helpers ---- */

/* Whether the BUILD_ID table's entry for a file module's path cannot be
 * its own: the path was mapped from files on several devices (the same
 * path in several mount namespaces), and the table holds one build-id
 * per path (perf's choice among them is not the first mapping's). */
bool dso_bid_ambiguous(const struct kf_dsos *d, const struct kf_module *mod);
/* The recorded build-id of a module (0: none). */
size_t dso_recorded_bid(struct kf_dsos *d, struct kf_module *mod, uint8_t out[20]);
/* A file's own build-id note (0: none). */
size_t dso_elf_bid(Elf *elf, uint8_t out[20]);
Elf_Scn *dso_section(Elf *elf, const char *name, GElf_Shdr *shdr, size_t *idx_out);
/* The section exists and has bytes in the file. */
bool dso_has_section(Elf *elf, const char *name);
/* A file's PT_LOAD segments, at most max of them: how many. */
size_t dso_pt_loads(Elf *elf, struct kf_dso_seg *out, size_t max);

enum cand_result { CAND_NONE, CAND_MISMATCH, CAND_BAD, CAND_OK };
/* Opens path (under root, NULL: none) and checks it the way perf's
 * symsrc__init does; want_len > 0: only a file with that build-id. */
enum cand_result dso_cand_open(struct kf_dsos *d, const char *root, const char *path,
			       const uint8_t *want, size_t want_len, struct cand *c);
void dso_cand_close(struct cand *c);
/* A file from debuginfod with that build-id (checked). */
enum cand_result dso_dinfod_cand(struct kf_dsos *d, enum kf_dinfod_kind kind,
				 const uint8_t *bid, size_t bid_len, struct cand *c);
/* Whether this machine's own paths may be read where a capture recorded
 * them (recorded paths, /usr/lib/debug, /boot): under --symfs (they are
 * then the symfs's, which an option named), or with a host. */
bool dso_sys_paths(const struct kf_dsos *d);
/* Whether the running kernel is the recorded one (*verified: by
 * build-id). */
bool dso_running_is_recorded(struct kf_dsos *d, bool *verified);

/* What dso_locate_elf found for an ELF module: the file to read symbols
 * from and the runtime image (fd -1: none), and what the rejected
 * candidates were like. */
struct dso_located {
	struct cand syms, run;
	bool found, mismatch, bad;
	bool no_host;            /* places of the host's were not looked at */
	bool verified;           /* a build-id was recorded */
	bool syms_dinfod, run_dinfod;
	uint8_t bid[20];         /* recorded, or read from the file */
	size_t bid_len;
	char hex[41];
};
/* The local candidates, in perf 6.1's order.  False when the module is
 * refused before any candidate (st->status says why). */
bool dso_locate_elf(struct kf_dsos *d, struct kf_module *mod, struct dso_state *st,
		    struct dso_located *loc);
/* The i-th place (from 0) a dwz file may be: .gnu_debugaltlink's `name`
 * and build-id `hex`, `from` the debug file's path (NULL: none to look
 * next to).  False past the last; *path "" for a place that does not
 * apply.  The path is under --symfs. */
bool dso_dwz_place(const struct kf_dsos *d, int i, const char *name, const char *hex,
		   const char *from, char *path, size_t n);
/* The same for the kernel's vmlinux by its build-id and release (NULL:
 * none recorded): the path (written to `path`; "" for a place that does
 * not apply), or NULL past the last; *root the directory it is under. */
const char *dso_vmlinux_place(const struct kf_dsos *d, size_t i, const char *rel,
			      const char *hex, const char **root, char *path, size_t n);
/* debuginfod, last: when no local file has a symbol table. */
void dso_locate_dinfod(struct kf_dsos *d, struct dso_state *st, struct dso_located *loc);

/* ---- the loaders ---- */
void dso_load_elf(struct kf_dsos *d, struct kf_module *mod, struct dso_state *st);
void dso_load_kernel(struct kf_dsos *d);
void dso_load_perf_map(struct kf_dsos *d, struct kf_module *mod, struct dso_state *st);
/* dwarf.c: the module's debug info (st->dw, st->dwidx), once. */
void dso_load_dwarf(struct kf_dsos *d, struct kf_module *mod, struct dso_state *st);
/* cfi.c: its unwinding data (st->cfi), once. */
void dso_load_cfi(struct dso_state *st);
/* dwarf.c: file offsets to link-time addresses, through the runtime
 * image's segments (read once). */
void dso_read_loads(struct dso_state *st, Elf *fallback);
bool dso_off_to_vaddr(const struct dso_state *st, uint64_t off, uint64_t *vaddr);

#endif
