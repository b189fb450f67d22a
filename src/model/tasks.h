/* tasks.h - processes, threads and their address spaces, as the sideband
 * records (COMM, FORK, EXIT, MMAP, MMAP2, KSYMBOL) describe them.
 *
 * The model is perf's (tools/perf/util/machine.c, thread.c), so that a
 * sample resolves against the same state perf would use: threads keyed by
 * tid; the threads of a process share one address space; a FORK of a new
 * process copies its parent's mappings; a FORK that reuses a tid replaces
 * the old thread; an unknown thread is created on first sight with the comm
 * ":TID"; the idle thread 0 is "swapper".  Records must arrive in time
 * order (order.h) for the state to be the one at each sample's time.
 *
 * May use: util, cur, perfdata (record constants), maps, module.
 * Everything is owned by struct kf_tasks and freed by kf_tasks_fini.
 */
#ifndef KF_TASKS_H
#define KF_TASKS_H

#include <stdbool.h>
#include <stdint.h>

#include "maps.h"
#include "module.h"
#include "perfdata.h"
#include "util.h"

struct kf_thread {
	int32_t pid, tid, ppid;
	uint32_t comm;           /* string id */
	bool comm_set;           /* a COMM (or fork from a named parent) set it */
	bool exited;
	struct kf_maps *maps;    /* shared by the threads of a process */
	uint64_t mntns;          /* its mount namespace's inode, from
				    PERF_RECORD_NAMESPACES (perf record
				    --namespaces); 0: not recorded */
	uint64_t cgroup;         /* the cgroup id of its latest sample that
				    has one (PERF_SAMPLE_CGROUP); 0: none */
	uint32_t lbr_stitch;     /* --stitch-lbr: 1 + the index of its
				    latest LBR sample in the callchain
				    stage's lbr_refs; 0: none */
	uint32_t stitch;         /* --stitch: 1 + the index of its latest
				    unwound user stack in the callchain
				    stage's references (callchain.h); 0:
				    none.  Forgotten at exec */
};

struct kf_tasks {
	struct kf_arena arena;
	struct kf_map64 by_tid;      /* tid -> index in threads */
	struct kf_thread **threads;
	size_t n_threads, cap_threads;
	struct kf_maps **spaces;     /* every address space, for _fini */
	size_t n_spaces, cap_spaces;
	struct kf_maps kernel;       /* kernel and kernel-module mappings */
	uint32_t kernel_module;      /* module id of [kernel.kallsyms], 0 = none */
	struct kf_strtab *strings;   /* borrowed from the session */
	struct kf_modules *modules;  /* borrowed from the session */
	bool swap;
	bool exec_flushes_maps;      /* drop a process's mappings at exec
					(perf 6.1 keeps them) */
	uint64_t bad_records;        /* sideband records too short to read */
	/* BPF programs' KSYMBOL regions since the last BPF_EVENT load: the
	 * kernel (and perf's synthesis) writes a program's KSYMBOLs, one
	 * per function, just before its BPF_EVENT, which gives its id */
	uint32_t bpf_pending[16];
	unsigned n_bpf_pending;
	/* the jitdump files processes mapped (jit-PID.dump): pid -> the
	 * file's module, the first mapping of each pid's */
	struct kf_map64 jitdumps;
};

/* The module of the jitdump file process pid mapped, 0: none. */
uint32_t kf_tasks_jitdump(const struct kf_tasks *t, int32_t pid);

/* swap: the capture's byte order differs from the host's;
 * exec_flushes_maps: drop a process's mappings at exec (the kernel does;
 * perf 6.1 keeps them, and so does kfold to fold as perf does). */
int kf_tasks_init(struct kf_tasks *t, struct kf_strtab *strings,
		  struct kf_modules *modules, bool swap, bool exec_flushes_maps);
void kf_tasks_fini(struct kf_tasks *t);

/* Applies one sideband record (COMM, FORK, EXIT, MMAP, MMAP2, KSYMBOL,
 * BPF_EVENT, NAMESPACES);
 * other types are ignored.  Returns 0 or KF_ENOMEM; a malformed record is
 * counted in bad_records and skipped. */
int kf_tasks_apply(struct kf_tasks *t, const struct kf_rec *rec);

/* perf's machine__findnew_thread: the thread with this tid, created (and
 * joined to its process) if unknown.  NULL only on ENOMEM. */
struct kf_thread *kf_tasks_findnew(struct kf_tasks *t, int32_t pid, int32_t tid);

/* The thread with this tid, exited or not; NULL if none is known. */
struct kf_thread *kf_tasks_find(const struct kf_tasks *t, int32_t tid);

/* The comm of a thread.  Borrowed until the next string is interned. */
const char *kf_thread_comm(const struct kf_tasks *t, const struct kf_thread *th);

#endif
