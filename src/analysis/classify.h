/* classify.h - kernel call chain -> the contexts the CPU was in.
 *
 * Tells, for one sample, what the kernel was doing and for whom: the leaf
 * context (innermost: a syscall, a page fault, a hard IRQ of some kind, a
 * softirq vector, the scheduler, return-to-user work, idle, a kthread...),
 * the base context (what the task itself was doing underneath: user mode,
 * a syscall, kthread work, idle), every context in between with the frame
 * where it was entered, and a verdict: was the work done on behalf of the
 * task, or merely attributed to it because it was current on that CPU?
 * The design, with the marker tables for every kernel era and the reasons,
 * is ../shared/reference/kernel-contexts.md; the rules themselves are data
 * in classify.def.
 *
 * Input is names, not addresses: the kernel part of the call chain after
 * symbolization, leaf first, as perf prints them (no "+0x.." offsets;
 * compiler clone suffixes such as ".isra.0", ".constprop.0", ".part.0",
 * ".cold", ".llvm.N" are fine, they are ignored).  The caller is expected to
 * have dropped a duplicated first entry (some kernels emit ips[1] twice for
 * tracepoint and software events) and the PERF_CONTEXT_* markers.  Return
 * addresses may be named at ra (perf's way) or at ra - 1 (kfold's default):
 * where the two differ at an entry (a call that is the last instruction of
 * entry_SYSCALL_compat names sysret32_from_system_call at ra), classify.def
 * lists both names.
 *
 * kf_ctx_classify is a pure function of its arguments and the rules; it
 * allocates nothing and keeps no state, so it may run on many threads with
 * one shared struct kf_ctx_rules.
 *
 * May use: libc only.
 */
#ifndef KF_CLASSIFY_H
#define KF_CLASSIFY_H

#include <stddef.h>
#include <stdint.h>

/* Context classes (classify.def KF_CTX_CLASS): KF_CTX_UNKNOWN,
 * KF_CTX_USER, KF_CTX_SYSCALL, KF_CTX_FAULT, KF_CTX_EXCEPTION,
 * KF_CTX_EXIT_TO_USER, KF_CTX_SCHED, KF_CTX_HARDIRQ, KF_CTX_SOFTIRQ,
 * KF_CTX_NMI, KF_CTX_IDLE, KF_CTX_KTHREAD, KF_CTX_GUEST. */
enum kf_ctx_class {
#define KF_CTX_CLASS(id, name, verdict, irq_verdict, search, dsub, entry) \
	KF_CTX_##id,
#include "classify.def"
	KF_CTX_NCLASSES
};

/* Sub-classes (classify.def KF_CTX_SUB), e.g. KF_CTX_SUB_IRQ_TIMER,
 * KF_CTX_SUB_SI_NET_RX, KF_CTX_SUB_SCHED_PREEMPT.  KF_CTX_SUB_NONE (0) is
 * "none or not known"; KF_CTX_SUB_SYS_NAME means the sub is the syscall's
 * name, found in kf_ctx_level.name. */
enum kf_ctx_sub {
#define KF_CTX_SUB(id, cls, name, verdict, irq_verdict) KF_CTX_SUB_##id,
#include "classify.def"
	KF_CTX_NSUBS
};

/* How a context was entered when its entry frame does not say it
 * (classify.def KF_CTX_VIA_ID): softirq on irq_exit / bh_enable /
 * ksoftirqd, IPI work polled from the idle loop.  KF_CTX_VIA_NONE = 0. */
enum kf_ctx_via {
#define KF_CTX_VIA_ID(id, name) KF_CTX_VIA_##id,
#include "classify.def"
	KF_CTX_NVIAS
};

/* The verdict for the whole sample.
 *   ON_BEHALF   work the task asked for: its syscalls, faults, traps, its
 *               own blocking, its return-to-user work (signals, task_work);
 *   ATTRIBUTED  work that only happened on its CPU while it was current:
 *               hard IRQs, softirqs, NMIs, preemption, bare IRQ-return work;
 *   IDLE        the idle task (pid 0), whatever it was interrupted by;
 *   KTHREAD     a kernel thread's own work;
 *   USER        no kernel frame: the sample is in user mode;
 *   UNKNOWN     no rule applies (kf_ctx.why says why, kf_ctx.guess guesses).
 * (kernel-contexts.md calls IDLE and KTHREAD "not_a_process".) */
enum kf_ctx_verdict {
	KF_CTX_VERDICT_UNKNOWN = 0,
	KF_CTX_VERDICT_ON_BEHALF,
	KF_CTX_VERDICT_ATTRIBUTED,
	KF_CTX_VERDICT_IDLE,
	KF_CTX_VERDICT_KTHREAD,
	KF_CTX_VERDICT_USER,
	KF_CTX_NVERDICTS
};

/* Why the chain could not tell everything (the leaf, the base, or both are
 * unknown, or came from the fallback).  NONE for a complete chain. */
enum kf_ctx_why {
	KF_CTX_WHY_NONE = 0,
	KF_CTX_WHY_TRUNCATED,      /* the caller says the chain was cut
				      (max_stack reached, empty user part) */
	KF_CTX_WHY_UNWIND_STOPPED, /* the chain ends before any entry frame
				      and was not cut: the kernel's unwinder
				      gave up (retpoline thunk, no ORC) */
	KF_CTX_WHY_NO_USER_PART,   /* ends in an entry from user mode but no
				      user part follows (and not cut): e.g.
				      --kernel-callchains */
	KF_CTX_WHY_NO_CHAIN,       /* no call chain: leaf symbol only */
	KF_CTX_WHY_NO_SYMBOLS,     /* the kernel frames have no names (set by
				      the caller: no kallsyms for the
				      recorded kernel) */
	KF_CTX_NWHYS
};

/* Input flags (kf_ctx_classify `flags`). */
#define KF_CTX_IN_USER_PART  0x01u /* a user part follows the kernel part
				      (PERF_CONTEXT_USER with >= 1 entry) */
#define KF_CTX_IN_PID0       0x02u /* the sample's pid is 0 (idle task) */
#define KF_CTX_IN_TRUNCATED  0x04u /* the chain was cut: kernel frames ==
				      sample_max_stack, or PERF_CONTEXT_USER
				      with no entries, or too many contexts */
#define KF_CTX_IN_NO_CHAIN   0x08u /* no call chain: names[] holds only the
				      sample ip's symbol (n <= 1) */
#define KF_CTX_IN_KTHREAD    0x10u /* the task is known to be a kernel thread
				      (e.g. its parent is kthreadd); used only
				      when the chain cannot tell */

/* cpumode as in perf's header.misc & 7 (PERF_RECORD_MISC_*). */
#define KF_CTX_CPUMODE_UNKNOWN       0u /* treated from the chain alone */
#define KF_CTX_CPUMODE_KERNEL        1u
#define KF_CTX_CPUMODE_USER          2u
#define KF_CTX_CPUMODE_HYPERVISOR    3u
#define KF_CTX_CPUMODE_GUEST_KERNEL  4u
#define KF_CTX_CPUMODE_GUEST_USER    5u

/* Output flags (kf_ctx.flags). */
#define KF_CTX_OUT_LEAF_ONLY  0x01u /* classified from the leaf symbol only
				       (KF_CTX_IN_NO_CHAIN) */
#define KF_CTX_OUT_FROM_TASK  0x02u /* the base came from pid 0 or
				       KF_CTX_IN_KTHREAD, not from the chain */
#define KF_CTX_OUT_NEST_CUT   0x04u /* more than KF_CTX_MAX_NEST contexts: the
				       innermost ones and the outermost one
				       are kept */

/* Most contexts kept per sample (the deepest real nest seen is 4: irq_work
 * in softirq on a timer IRQ's exit in a syscall). */
#define KF_CTX_MAX_NEST 8

/* One context.  `entry` is the index into names[] of the outermost frame
 * that belongs to this context: the frame where it was entered, e.g. the
 * entry_SYSCALL_64 frame of a syscall, do_softirq of a softirq run by
 * local_bh_enable, the asm_sysvec_* frame of a hard IRQ.  A pseudo-frame
 * "[class:sub]" goes right outside it (between entry and entry + 1).
 * entry == n: the context has no frame of its own in the kernel part
 * (user mode, or a base the chain does not show). */
struct kf_ctx_level {
	uint8_t cls;          /* enum kf_ctx_class */
	uint8_t sub;          /* enum kf_ctx_sub */
	uint8_t via;          /* enum kf_ctx_via */
	uint32_t entry;
	/* KF_CTX_SUB_SYS_NAME: the syscall's name, borrowed from names[]
	 * (valid as long as those strings are; not NUL-terminated at
	 * name_len).  NULL otherwise. */
	const char *name;
	uint32_t name_len;
};

/* The result.  leaf == nest[0] and base == nest[n_nest - 1] whenever the
 * context they describe appears in the chain; otherwise they are filled
 * in with entry == n (user, unknown, idle from pid 0, guest). */
struct kf_ctx {
	struct kf_ctx_level leaf;
	struct kf_ctx_level base;
	struct kf_ctx_level nest[KF_CTX_MAX_NEST]; /* leaf first */
	uint8_t n_nest;
	uint8_t verdict;      /* enum kf_ctx_verdict */
	uint8_t why;          /* enum kf_ctx_why */
	uint8_t guess;        /* enum kf_ctx_class: when the leaf is unknown,
				 the likeliest class from the leaf-symbol
				 families and the user part (sec. 5), else
				 KF_CTX_UNKNOWN */
	uint8_t flags;        /* KF_CTX_OUT_* */
};

/* ---- the compiled rules ------------------------------------------------- */

enum {
	KF_CTX_NRULES = 0
#define KF_CTX_RULE(role, cls, sub, pattern) + 1
#define KF_CTX_VIA(cls, via, pattern) + 1
#include "classify.def"
};

#define KF_CTX_SLOTS 2048u  /* exact-name hash slots, a power of two, at
			       least twice KF_CTX_NRULES (checked) */

/* classify.def indexed for lookup.  Plain data, no pointers to free: build
 * it once per session (or on the stack), share it read-only. */
struct kf_ctx_rules {
	uint16_t slot[KF_CTX_SLOTS];    /* exact rules: index + 1, 0 = none */
	uint16_t prefix[KF_CTX_NRULES]; /* rules whose pattern ends in '*',
					   by first byte */
	uint16_t first[257];            /* prefix[first[c] .. first[c+1]]
					   start with byte c */
	uint16_t n_prefix;
};

/* Fills *r from classify.def.  Returns 0, or -1 if the table breaks its
 * own rules (a sub used with another class, too many rules for one name, a
 * pattern longer than 255 bytes): a bug in classify.def, which the unit
 * test catches. */
int kf_ctx_rules_init(struct kf_ctx_rules *r);

/* Classifies one sample.
 *   names    the kernel part of the chain, leaf first, n entries; NULL for
 *            a frame without a name.  May be NULL when n == 0.
 *   cpumode  KF_CTX_CPUMODE_*: GUEST_* gives guest/kernel or guest/user and
 *            USER gives user, whatever names[] holds; otherwise names[]
 *            decides.
 *   flags    KF_CTX_IN_*.
 * Writes *out completely.  Never fails: what cannot be told is UNKNOWN with
 * out->why set. */
void kf_ctx_classify(const struct kf_ctx_rules *r, const char *const *names,
		     size_t n, unsigned cpumode, unsigned flags,
		     struct kf_ctx *out);

/* Names as used in output and in kctx-vectors.tsv ("softirq", "NET_RX",
 * "bh_enable", "on-behalf", "unwind_stopped").  "" for *_NONE and for
 * KF_CTX_SUB_SYS_NAME; "?" for an out-of-range value.  Static strings. */
const char *kf_ctx_class_name(unsigned cls);
const char *kf_ctx_sub_name(unsigned sub);
const char *kf_ctx_via_name(unsigned via);
const char *kf_ctx_verdict_name(unsigned verdict);
const char *kf_ctx_why_name(unsigned why);

#endif
