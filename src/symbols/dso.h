/* dso.h - find the file behind a module and load its symbols.
 *
 * For an ELF module the candidates are tried in perf 6.1's order
 * (dso__load: .gnu_debuglink targets, the build-id cache's elf and debug
 * entries, /usr/lib/debug/<path>.debug, /usr/lib/debug/<path>,
 * /usr/lib/debug/.build-id/xx/yyyy.debug, then the recorded path), each
 * under --symfs when one is given.  A candidate whose build-id differs
 * from the recorded one is never used; the first with .symtab gives the
 * names, the first with .dynsym the runtime view, as in perf.  When none
 * has a .symtab, the runtime file's MiniDebugInfo (.gnu_debugdata, an
 * xz-compressed ELF with the .symtab stripping removed) adds its names,
 * and makes a static binary (no .dynsym) the runtime view; when still no
 * file gives a symbol table (or, for kf_dso_debuginfo, DWARF) and a
 * build-id was recorded, debuginfod is asked last (debuginfod.h).  Not
 * with the policy's no_minidebuginfo, no_debuginfod: perf 6.1 reads
 * neither.  The kernel
 * and its modules take their symbols from a kallsyms file (--kallsyms, the
 * build-id cache's copy, or /proc/kallsyms when the running kernel is the
 * recorded one); JIT regions from perf-PID.map.
 *
 * Of the places above, the recorded paths (without --symfs),
 * /usr/lib/debug, /boot, /proc/kallsyms, /tmp, this process's vdso and
 * debuginfod are the host's: they are looked at only with a host
 * (kf_dso_opts.host, host.h), and a module that could have been found
 * only there gets KF_DSO_NO_HOST.
 *
 * The kernel's DWARF (inline frames, source lines) comes from a vmlinux:
 * --vmlinux, or one found by the recorded build-id in the places
 * distributions and perf's build-id cache put it; its names stay
 * kallsyms' (see kernel_debuginfo in dwarf.c for why).
 *
 * Symbol addresses are file offsets for ELF modules (what a mapping's
 * pgoff counts in) and absolute addresses for the kernel, kernel modules
 * and JIT maps, so a frame's address (maps.h) can be looked up directly.
 *
 * The layer is one file per job (locate.c, elf.c, kallsyms.c, perfmap.c,
 * dwarf.c, cfi.c, with dso.c the entry points; dso-int.h says which is
 * which).  This header is its face for other folders; it names no
 * libelf or libdw type.
 *
 * May use: util, fs, host, debuginfod, xz, module, symtab, libelf and
 * libdw's libdwelf (only in this layer).  Never forks; opens files only
 * through fs.h.
 */
#ifndef KF_DSO_H
#define KF_DSO_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "debuginfod.h"
#include "fs.h"
#include "host.h"
#include "module.h"
#include "perfdata.h"
#include "policy.h"
#include "inline.h"
#include "symtab.h"

/* Why a module has (or lacks) symbols. */
enum kf_dso_status {
	KF_DSO_UNTRIED = 0,
	KF_DSO_OK,            /* symbols from a file whose build-id matched */
	KF_DSO_UNVERIFIED,    /* symbols from a file, no build-id to check */
	KF_DSO_MISSING,       /* no candidate file exists */
	KF_DSO_MISMATCH,      /* files exist, but none has the recorded build-id */
	KF_DSO_NO_SYMBOLS,    /* the file has no symbol table */
	KF_DSO_BAD_FILE,      /* the file is not a readable ELF / kallsyms */
	KF_DSO_NO_FILE,       /* nothing to load: [heap], [stack], ... */
	KF_DSO_UNTRUSTED,     /* a kernel symbol source that cannot be shown
				 to belong to the recorded kernel */
	KF_DSO_GIVEN,         /* kernel symbols from --kallsyms: trusted as
				 given, a kallsyms file has no build-id */
	KF_DSO_CHANGED,       /* no build-id recorded, and the file at the
				 recorded path on the recording host is not
				 the one mapped (same device, other inode or
				 generation) */
	KF_DSO_NOT_RECORDED,  /* no build-id recorded, and the file's
				 segments cannot have made the recorded
				 mappings (kf_host_layout_fits) */
	KF_DSO_NO_HOST,       /* no file given for it, and the places it
				 could be are this machine's, which kfold
				 may not ask (no host, kf_options.host) */
};

struct kf_dso_opts {
	const char *symfs;        /* NULL = none */
	const char *buildid_dir;  /* NULL = none */
	const char *kallsyms;     /* NULL = look for one */
	const char *vmlinux;      /* the kernel's image with DWARF; NULL =
				     look for it by build-id */
	const char *perf_map_dir; /* where perf-PID.map files are */
	const struct kf_policy *pol; /* where to follow perf (policy.h):
					borrowed, static; never NULL */
	const char *const *debug_dirs; /* more roots like /usr/lib/debug */
	size_t n_debug_dirs;
	const struct kf_host *host;    /* what may be asked of this machine
					  (host.h); NULL: nothing */
	/* --root KEY=DIR: the directory a file module's recorded path is
	 * under (its container's root), NULL for none; root_ctx is its
	 * first argument.  Asked when the module is first loaded. */
	const char *(*root_of)(void *root_ctx, const struct kf_module *mod);
	void *root_ctx;
};

struct kf_nametab;
struct kf_dsos;

/* Whether a file module's recorded path was mapped from files on several
 * devices (mount namespaces) so that the BUILD_ID table's one entry for
 * the path cannot be taken for its build-id. */
bool kf_dso_bid_ambiguous(const struct kf_dsos *d, uint32_t module);

/* JIT code named from the jitdump whose file is module `dump` (the
 * process's jit-PID.dump mapping): the module of the code load that held
 * addr at the sample's time (any time without has_time), made at first
 * use; 0 when the jitdump cannot be read or no load covers addr then. */
uint32_t kf_dsos_jit_code(struct kf_dsos *d, uint32_t dump, uint64_t addr, uint64_t time,
			  bool has_time);

typedef void (*kf_dso_warn_fn)(void *payload, const char *msg);

struct kf_dsos {
	struct kf_dso_opts o;
	struct kf_fs *fs;
	struct kf_modules *modules;
	const struct kf_env *env;     /* build-id table, osrelease */
	/* the recorded kernel image: "[kernel.kallsyms]_text" gives the
	 * reference symbol and the kernel map's pgoff its address */
	char kref_name[64];
	uint64_t kref_addr;
	bool kernel_loaded;
	struct kf_dinfod dinfod;      /* off in no_debuginfod and no_files */
	bool dinfod_warned;           /* a failed fetch was reported */
	bool dinfod_cap_warned;       /* KF_DINFOD_MAX_ASKS was reported */
	kf_dso_warn_fn warn;
	void *warn_payload;
	/* the empty dwz file set as the alternate of debug info whose dwz
	 * file was not found, so that libdw does not look for one itself on
	 * this machine (dwarf.c): its Dwarf, Elf and bytes, made at the
	 * first such file, shared, freed last */
	void *noalt_dw, *noalt_elf, *noalt_image;
	/* for files without a recorded build-id: the capture's clock (-1:
	 * perf's default) and the latest sample time the session has seen
	 * (set by the session), and whether this is the recording host,
	 * decided once, when the first such file is loaded (host.h) */
	int clockid;
	bool has_time;
	uint64_t last_time;
	bool host_decided;
	enum kf_host_verdict host;
	const char *host_why;
	int fs_witness;               /* another file at its recorded inode:
				         0 not asked, 1 yes, -1 no */
	/* files used unverified: no build-id recorded and no device/inode
	 * check possible; why, when they all share one reason (else NULL) */
	uint32_t n_unverified;
	const char *unverified_why;
	/* parts read by kf_dsos_load so far (one per module and part), for
	 * tests that check when loads happen */
	uint64_t n_loads;
	bool load_failed;             /* a load ran out of memory: getters
					 may then meet modules not loaded */
	/* a --symbols-only bundle's name table (nametab.h), borrowed: its
	 * user-space modules load from it, never from files; NULL: none */
	const struct kf_nametab *names;
	/* kallsyms' addresses less the capture's (KASLR), once loaded */
	uint64_t ksyms_delta;
};

void kf_dsos_init(struct kf_dsos *d, const struct kf_dso_opts *o,
		  struct kf_fs *fs, struct kf_modules *modules,
		  const struct kf_env *env, kf_dso_warn_fn warn, void *payload);
/* Frees every module's loaded state. */
void kf_dsos_fini(struct kf_dsos *d);

/* The recorded kernel map's reference symbol (the name after
 * "[kernel.kallsyms]" in its MMAP, "_text") and address (its pgoff),
 * known once that record is read: kallsyms is relocated by it. */
static inline void kf_dsos_kernel_ref(struct kf_dsos *d, const char *name,
				      uint64_t addr)
{
	snprintf(d->kref_name, sizeof(d->kref_name), "%s", name);
	d->kref_addr = addr;
}

/* The load steps.  kf_dsos_load reads a module's files: its symbols
 * always (for the kernel or a kernel module, kallsyms for all of them at
 * once), and its debug info and unwinding data when `what` asks; each
 * part at most once per module.  It and kf_dsos_prepare are the only
 * functions of the layer that read files.  The getters below only read
 * what a load gave: a part not loaded yet answers as not loaded (NULL,
 * false, KF_DSO_UNTRIED), and a debug build stops there (assert), so no
 * consumer loads a module as a side effect of asking first.  Who loads
 * when: the callchain stage, while the samples are read, the kernel's
 * symbols at its first kernel frame (the kernel map is widened to them)
 * and what the unwinder and --compat=perf --inline's namer read of a
 * module they step into; then the session, after the run and before any
 * output, every hit module at once (kf_dsos_prepare).  0, or
 * KF_ENOMEM. */
enum {
	KF_DSO_LOAD_SYMS = 1,    /* symbol table, status, the files found */
	KF_DSO_LOAD_DWARF = 2,   /* debug info (kf_dso_debuginfo) */
	KF_DSO_LOAD_CFI = 4,     /* unwinding data (kf_dso_cfi) */
	KF_DSO_LOAD_CODE = 8,    /* machine code (kf_dso_code): the runtime
				    file's code sections, or for the kernel
				    its vmlinux's (so this loads the DWARF
				    part of the kernel too) */
};
int kf_dsos_load(struct kf_dsos *d, uint32_t module, unsigned what);

/* What a consumer will read of a module (KF_DSO_LOAD_* bits). */
typedef unsigned (*kf_dso_want_fn)(void *ctx, uint32_t module);
/* The prepare step: kf_dsos_load of modules[0..n) in that order, each
 * for what want(ctx, module) says (want NULL: the symbols).  Where a
 * later version loads modules in parallel.  0, or KF_ENOMEM. */
int kf_dsos_prepare(struct kf_dsos *d, const uint32_t *modules, size_t n,
		    kf_dso_want_fn want, void *ctx);

/* Whether the parts `what` of a module were loaded (module 0: yes). */
bool kf_dso_loaded(const struct kf_dsos *d, uint32_t module, unsigned what);

/* The symbols of a module (KF_DSO_LOAD_SYMS); NULL when there are none
 * (kf_dso_status says why). */
const struct kf_symtab *kf_dso_symtab(struct kf_dsos *d, uint32_t module);

/* A static binary's .plt entries as kfold's own mode names them
 * ("strlen@plt", or "[prog .plt]" where the slot does not tell), which
 * perf does not synthesize (so kf_dso_symtab, perf's view, has none);
 * NULL for a file with .dynsym or without .plt. */
const struct kf_symtab *kf_dso_static_plt(struct kf_dsos *d, uint32_t module);

enum kf_dso_status kf_dso_status(struct kf_dsos *d, uint32_t module);

/* The file the symbols came from, or NULL.  Borrowed. */
const char *kf_dso_file(struct kf_dsos *d, uint32_t module);

/* What came of the module file's .gnu_debugdata (MiniDebugInfo): a
 * sentence for --stats, or NULL when it has none (or was not looked at);
 * *used tells whether names came from it.  Borrowed. */
const char *kf_dso_minidebuginfo(struct kf_dsos *d, uint32_t module, bool *used);

/* A PT_LOAD segment of a module's file. */
struct kf_dso_seg {
	uint64_t offset, vaddr, filesz, memsz;
	bool exec;               /* PF_X */
};

/* What unwinding needs from a module's files: the CFI of its .eh_frame
 * and of a .debug_frame (libdw's Dwarf_CFI, opaque here), where file
 * offsets land in the ELF's address space, and the file's bytes. */
#define KF_CFI_MAX_LOADS 16
struct kf_cfi {
	void *eh;                /* Dwarf_CFI of .eh_frame, or NULL */
	void *dbg;               /* Dwarf_CFI of .debug_frame, or NULL */
	void *dwarf;             /* the Dwarf that owns dbg */
	void *elf;               /* the runtime image's Elf */
	bool is64;
	uint16_t machine;        /* e_machine */
	uint64_t entry;          /* e_entry: where the program starts */
	bool has_eh_hdr;         /* .eh_frame_hdr is there (perf 6.1's
				    libunwind finds FDEs only through it) */
	uint64_t eh_hdr_addr;    /* its sh_addr */
	struct kf_dso_seg load[KF_CFI_MAX_LOADS];
	size_t n_load;
	const uint8_t *image;    /* the whole file, for memory reads */
	size_t image_len;
};

/* The unwinding data of a module (KF_DSO_LOAD_CFI), or
 * NULL when it has no CFI (kf_dso_status says whether a file was found
 * at all).  Valid until kf_dsos_fini. */
const struct kf_cfi *kf_dso_cfi(struct kf_dsos *d, uint32_t module);

/* The DWARF index of a module's debug info (its debug file, or the
 * binary; KF_DSO_LOAD_DWARF); NULL when there is none.  Valid
 * until kf_dsos_fini. */
struct kf_dwidx *kf_dso_debuginfo(struct kf_dsos *d, uint32_t module);

/* The file a module's debug info came from (NULL: none); *looked tells
 * whether kf_dso_debuginfo was called for it. */
const char *kf_dso_debuginfo_file(struct kf_dsos *d, uint32_t module, bool *looked);

/* Why a module has no debug info and what would give it, or NULL when
 * there is nothing to add to the generic advice (the kernel's: "give
 * --vmlinux ...").  Valid until kf_dsos_fini. */
const char *kf_dso_debuginfo_hint(struct kf_dsos *d, uint32_t module);

/* Whether a module's symbols (syms) and its debug info (dwarf) came from
 * a debuginfod server; their kf_dso_file / kf_dso_debuginfo_file is then
 * the file in libdebuginfod's cache.  Either pointer may be NULL. */
void kf_dso_debuginfod(struct kf_dsos *d, uint32_t module, bool *syms, bool *dwarf);

/* A frame address of a module as the link-time address its debug info
 * uses: for an ELF module a file offset (how user frames are kept), for
 * the kernel a runtime address (moved by the KASLR offset).  False when
 * no segment holds it or the module has no debug info. */
bool kf_dso_vaddr(struct kf_dsos *d, uint32_t module, uint64_t off, uint64_t *vaddr);

/* --compat=perf's view of perf's `addr2line -i -f` child (a2l.h): whether
 * perf would run one for the module, and the name it would print for
 * file offset `off` from the symbol table (NULL: "??").  The first answer
 * for an offset is kept, so ask in the order perf does. */
bool kf_dso_a2l_file(struct kf_dsos *d, uint32_t module);
/* `start` (may be NULL): the symbol's link-time address. */
const char *kf_dso_a2l_symtab_name(struct kf_dsos *d, uint32_t module, uint64_t off,
				   uint64_t *start);
/* The child's memory of a DWARF function (by DIE offset) without a
 * linkage name in a language whose names are mangled: bfd names the first
 * address asked in it after the symbol there, then keeps that symbol's
 * name for the function if the symbol starts where the function does, and
 * its DWARF name otherwise (binutils 2.40 dwarf2.c,
 * _bfd_dwarf2_find_nearest_line_with_alt).  settled: true once it was
 * asked, *name the name kept (NULL: the DWARF name). */
bool kf_dso_a2l_settled(struct kf_dsos *d, uint32_t module, uint64_t die, const char **name);
void kf_dso_a2l_settle(struct kf_dsos *d, uint32_t module, uint64_t die, const char *name);

/* What was checked of the file a module's names came from: "build-id"
 * (verified), "inode" (no build-id recorded; on the recording host, the
 * recorded device and inode), "unverified" (no build-id recorded, nothing
 * could be checked but the cheap layout checks), "given" (--kallsyms),
 * "refused" (mismatch, changed, not the recorded file), "none" (no file
 * was used). */
const char *kf_dso_verification(struct kf_dsos *d, uint32_t module);

/* kf_dso_status_str, with the reason for an unverified file ("symbols
 * from a file, unverified: no build-id recorded; not the recording host
 * (another host name)").  Valid until kf_dsos_fini. */
const char *kf_dso_status_text(struct kf_dsos *d, uint32_t module);

/* ---- machine code (code.c; KF_DSO_LOAD_CODE) ----
 *
 * Code is only ever taken from the file whose build-id matched (or, with
 * no build-id recorded, the file the names came from): the runtime file
 * of an ELF module, the vmlinux of the kernel.  A debug file's code
 * sections are NOBITS, so code never comes from one. */

/* An address of a module as objdump prints it, the ELF virtual address:
 * a user frame's file offset through the runtime file's PT_LOADs, the
 * kernel's and JIT addresses as they are.  False when no segment holds
 * it. */
bool kf_dso_elf_addr(struct kf_dsos *d, uint32_t module, uint64_t off, uint64_t *vaddr);

/* The other way: an ELF virtual address as the module's frame address
 * (a file offset for ELF modules). */
bool kf_dso_frame_addr(struct kf_dsos *d, uint32_t module, uint64_t vaddr, uint64_t *off);

/* The source line a jitdump gives for addr (a runtime address) in the
 * code load of module (KF_MOD_JIT made from a jitdump: its
 * CODE_DEBUG_INFO): false when it gives none.  *file points into the
 * jitdump's bytes (valid until kf_dsos_fini). */
bool kf_dso_jit_line(struct kf_dsos *d, uint32_t module, uint64_t addr, const char **file,
		     uint32_t *line);

/* The module's code at vaddr (an ELF virtual address, kf_dso_elf_addr):
 * *got bytes, to vaddr + maxlen or the end of its code section, whichever
 * comes first.  NULL when there are none there: *why says why ("no
 * vmlinux", "a debug file without code", ...), and when vaddr lies
 * between code sections, *next is where the next one starts (UINT64_MAX:
 * none; a range may span sections, as perf's end fix-ups make _init
 * reach over .plt).  Borrowed until kf_dsos_fini. */
const uint8_t *kf_dso_code(struct kf_dsos *d, uint32_t module, uint64_t vaddr,
			   uint64_t maxlen, uint64_t *got, uint64_t *next, const char **why);

/* The file code comes from (NULL: none) and its e_machine (0: none). */
const char *kf_dso_code_file(struct kf_dsos *d, uint32_t module);
uint16_t kf_dso_code_machine(struct kf_dsos *d, uint32_t module);

/* The range of the .eh_frame FDE that covers a module's file offset, as
 * ELF virtual addresses, for code without a symbol (KF_DSO_LOAD_CFI and
 * KF_DSO_LOAD_CODE).  False when no FDE covers it. */
bool kf_dso_fde_range(struct kf_dsos *d, uint32_t module, uint64_t off,
		      uint64_t *lo, uint64_t *hi);

/* The build-id recorded for a module (its MMAP2 record's, else the
 * capture's build-id table entry) into out; its length, 0: none. */
size_t kf_dso_recorded_build_id(struct kf_dsos *d, uint32_t module, uint8_t out[20]);

/* The GNU build-id of the ELF file open at fd (its length, 0 if none or
 * not ELF).  The descriptor's offset is not used. */
size_t kf_dso_fd_build_id(int fd, uint8_t out[20]);

/* Text for a status ("build-id mismatch", ...). */
const char *kf_dso_status_str(enum kf_dso_status s);

/* A kallsyms file cut down to the lines lookups of the given addresses
 * (the file's own, before the KASLR delta) need to give the same answers
 * as the whole file: the symbol each falls in and the one after it (its
 * end), the relocation reference `kref` (NULL: none), and the kernel
 * table's first and last symbols; the lines kfold does not load are
 * dropped.  Lines stay in file order.  malloc'd, NULL on ENOMEM.  For
 * --symbols-only bundles, which carry no more of the kernel's names than
 * the stacks use. */
char *kf_kallsyms_trim(const char *buf, size_t len, const char *kref,
		       const uint64_t *addrs, size_t n_addrs, size_t *out_len);

#endif
