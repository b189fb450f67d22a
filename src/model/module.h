/* module.h - the registry of mapped objects ("modules": ELF files, the
 * kernel, kernel modules, the vdso, JIT regions) as the capture names them.
 *
 * A module is what an MMAP record names, plus what the capture says about
 * it: the recorded build-id (BUILD_ID feature, HEADER_BUILD_ID, MMAP2
 * build-id form) and the device/inode of the MMAP2 record.  It does not
 * open files: finding and loading the file is the DSO layer's (dso.h),
 * which keeps its state behind `priv`.
 *
 * Modules are identified by a uint32_t id, stable for the session; id 0 is
 * "no module" (an address outside every mapping).  Like perf's dsos, a
 * module is keyed by its recorded name and, when MMAP2 gives one, its
 * (maj, min, ino, ino_generation).
 *
 * May use: util.
 */
#ifndef KF_MODULE_H
#define KF_MODULE_H

#include <stdbool.h>
#include <stdint.h>

#include "util.h"

enum kf_module_kind {
	KF_MOD_NONE = 0,     /* id 0 only */
	KF_MOD_FILE,         /* an ELF file mapped by a process */
	KF_MOD_KERNEL,       /* [kernel.kallsyms] */
	KF_MOD_KMODULE,      /* a kernel module ([name] or a .ko path) */
	KF_MOD_VDSO,         /* [vdso] */
	KF_MOD_JIT,          /* anonymous executable memory: perf-PID.map */
	KF_MOD_SPECIAL,      /* [heap], [stack], [vsyscall], memory without file */
	KF_MOD_KSYM,         /* a KSYMBOL region (BPF program, trampoline):
				its one symbol is its name */
};

#define KF_MODULE_SHAPES 4

struct kf_module {
	uint32_t id;
	enum kf_module_kind kind;
	char *name;          /* as perf names it: recorded path, "[vdso]",
				"[kernel.kallsyms]", "/tmp/perf-PID.map" */
	const char *base;    /* part of name after the last '/' */
	uint8_t bid[20];
	uint8_t bid_len;     /* 0 = no build-id recorded */
	bool has_dev;        /* maj/min/ino come from MMAP2 */
	uint32_t maj, min;
	uint64_t ino, ino_gen;
	/* KF_MOD_FILE: the first distinct (pgoff, len, prot) of its mappings,
	 * for locate.c's consistency checks when no build-id was recorded */
	struct { uint64_t pgoff, len; uint32_t prot; } shape[KF_MODULE_SHAPES];
	uint8_t n_shapes;
	uint32_t jit_pid;    /* KF_MOD_JIT: the pid in perf-PID.map */
	/* KF_MOD_FILE: the process of its first map record, and that
	 * process's mount namespace then (0: not recorded): where its
	 * recorded path meant what it did */
	int32_t map_pid;
	uint64_t map_mntns;
	/* KF_MOD_KMODULE: the .ko path of its first map record naming one
	 * (NULL: only "[name]" was recorded), and where its first map was
	 * (/proc/modules' address: the start of its .text) */
	const char *kpath;
	uint64_t kstart, klen;
	uint64_t ksym_addr;  /* KF_MOD_KSYM: where the KSYMBOL region is */
	uint32_t ksym_len;
	uint16_t ksym_type;  /* its PERF_RECORD_KSYMBOL_TYPE_* (1: BPF) */
	/* KF_MOD_JIT made from a jitdump's code load (jitcode.c): its
	 * function's name (at ksym_addr, ksym_len bytes); NULL for a perf
	 * map's module */
	const char *jit_sym;
	uint32_t jit_dump;   /* the module of the jitdump file it came from */
	uint32_t jit_entry;  /* its code load's index in that file */
	bool bpf_known;      /* a BPF_EVENT load gave its program's id */
	uint32_t bpf_id;
	bool hit;            /* a sample frame resolved into it */
	void *priv;          /* the DSO layer's state; NULL until kf_dsos_load */
};

struct kf_modules {
	struct kf_module **v;    /* v[0] is the "no module" entry */
	size_t n, cap;
	struct kf_map64 index;   /* hash of (name, dev) -> id */
	struct kf_arena arena;
};

int kf_modules_init(struct kf_modules *m);
void kf_modules_fini(struct kf_modules *m);

/* Finds or adds the module with this name and device identity (dev may be
 * NULL).  Returns its id, or 0 on ENOMEM. */
uint32_t kf_modules_get(struct kf_modules *m, enum kf_module_kind kind,
			const char *name, size_t name_len,
			const uint32_t dev[2], const uint64_t ino[2]);

static inline struct kf_module *kf_modules_at(const struct kf_modules *m,
					      uint32_t id)
{
	return id < m->n ? m->v[id] : m->v[0];
}

/* Records a build-id for a module (first one wins, like perf). */
void kf_module_set_bid(struct kf_module *mod, const uint8_t *bid, size_t len);

/* Notes one mapping of a file module (kept when there is room). */
void kf_module_add_shape(struct kf_module *mod, uint64_t pgoff, uint64_t len,
			 uint32_t prot);

/* A kernel module's name as perf gives it (kmod_path__parse): "[name]"
 * kept as it is; from a path, the file name up to its first '.', '-'
 * turned into '_', in brackets.  Into out (n bytes, cut to fit). */
void kf_kmodule_name(const char *path, size_t len, char *out, size_t n);

/* Notes where a kernel module's map record put it: the first record's
 * .ko path (path_len 0: none) and range are kept.  False on ENOMEM. */
bool kf_module_set_kmap(struct kf_modules *m, struct kf_module *mod,
			const char *path, size_t path_len, uint64_t start,
			uint64_t len);

/* Whether a mapped path names a jitdump file: its file name is
 * "jit-PID.dump" (*pid set), as perf's jit_detect takes it. */
bool kf_jitdump_name(const char *path, uint32_t *pid);

/* Copies a jitted function's name into the registry (for jit_sym).
 * NULL on ENOMEM. */
const char *kf_modules_strdup(struct kf_modules *m, const char *s);

/* Hex form of a build-id into buf (at least 41 bytes). */
const char *kf_bid_hex(const uint8_t *bid, size_t len, char *buf);

#endif
