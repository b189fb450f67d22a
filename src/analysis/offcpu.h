/* offcpu.h - off-CPU time: where threads waited, and how long.
 *
 * With --off-cpu the folded event is sched:sched_switch.  Its samples
 * are taken as a thread leaves its CPU, on the thread's own stack; each
 * is weighed by the time until that thread runs again (a sched_switch
 * whose next_pid is the thread, on any CPU, or a PERF_RECORD_SWITCH
 * switching it in), so a stack's weight is nanoseconds spent off the
 * CPU.  Until then the stack waits here, one per thread.  The state the
 * thread left in (prev_state: sleeping, blocked, preempted, ...) is kept
 * on the stack's root (struct kf_stack_root's offcpu), which folded text
 * prints right after the comm ("[off-cpu:sleeping]"): a flame graph
 * splits each thread's time by state first, and the frames at the leaf
 * end stay the kernel's, as the context classifier and the reports read
 * them.
 *
 * This module only keeps the waiting stacks and says what a state is
 * called; the session reads the tracepoint's fields and adds the stacks
 * to its trie when their weight is known.
 *
 * May use: util, stacks.
 */
#ifndef KF_OFFCPU_H
#define KF_OFFCPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stacks.h"
#include "util.h"

/* What a switched-out thread was doing, from sched_switch's prev_state
 * as kernels since 4.14 report it (__trace_sched_switch_state): one
 * state bit (S 0x1, D 0x2, T 0x4, t 0x8, X 0x10, Z 0x20, P 0x40, I 0x80),
 * 0 for a task that stayed runnable ("R": preempted on its way back to
 * user mode, or sched_yield), and TASK_REPORT_MAX (0x100) for one
 * preempted in the kernel ("R+"). */
enum kf_offcpu_state {
	KF_OFFCPU_PREEMPTED = 0,  /* R, R+: still runnable; its time off the
				     CPU is time waiting for one */
	KF_OFFCPU_SLEEPING,       /* S: interruptible sleep (waiting for an
				     event, a timer, a lock, input) */
	KF_OFFCPU_BLOCKED,        /* D: uninterruptible (mostly disk I/O,
				     page-ins, some locks) */
	KF_OFFCPU_STOPPED,        /* T: stopped by a signal */
	KF_OFFCPU_TRACED,         /* t: stopped by a tracer */
	KF_OFFCPU_DEAD,           /* X or Z: exiting, never runs again */
	KF_OFFCPU_PARKED,         /* P: a parked kernel thread */
	KF_OFFCPU_IDLE,           /* I: an idle kernel thread (TASK_IDLE) */
	KF_OFFCPU_NSTATES
};

/* The event --off-cpu folds. */
#define KF_OFFCPU_EVENT "sched:sched_switch"

enum kf_offcpu_state kf_offcpu_state_of(uint64_t prev_state);

/* "sleeping", "preempted", ...: folded text says "[off-cpu:NAME]". */
const char *kf_offcpu_state_name(enum kf_offcpu_state st);

/* One thread's stack, switched out at `time`, not switched in yet. */
struct kf_offcpu_wait {
	uint64_t time;
	struct kf_frame root;
	struct kf_frame *frames;  /* leaf first */
	size_t n, cap;
	uint32_t thread;          /* the trie's thread slot (tsums), or
				     KF_FEED_NO_THREAD */
	int32_t pid, tid;         /* the thread's, as the tasks know it */
	bool waiting;
	/* --off-cpu=wakers: the first wakeup of the thread while it waited */
	bool woken;
	struct kf_stack_root waker; /* the waker's root facts: its comm, and
				     what the context classifier reads */
	struct kf_frame *wframes;   /* the waker's stack, leaf first */
	size_t wn, wcap;
};

struct kf_offcpu {
	struct kf_map64 slot;     /* tid -> index of waits */
	struct kf_offcpu_wait *waits;
	size_t n, cap;
	size_t n_waiting;
};

void kf_offcpu_init(struct kf_offcpu *oc);
void kf_offcpu_fini(struct kf_offcpu *oc);

/* Keeps tid's stack (root, then frames leaf first; thread, th_pid and
 * th_tid: its slot in the trie's thread table and its pid and tid as the
 * tasks know them) as switched out at `time`.  *replaced is set when tid already had a stack waiting, whose
 * switch-in was never seen (lost events): that stack is dropped.  false
 * on ENOMEM. */
bool kf_offcpu_hold(struct kf_offcpu *oc, int32_t tid, uint64_t time,
		    const struct kf_frame *root,
		    const struct kf_frame *frames, size_t n, uint32_t thread,
		    int32_t th_pid, int32_t th_tid, bool *replaced);

/* Whether tid waits and has no waker yet: a wakeup of it would end its
 * wait (--off-cpu=wakers). */
bool kf_offcpu_wants_waker(const struct kf_offcpu *oc, int32_t tid);

/* Keeps the first wakeup of waiting tid: the waker's root facts and
 * stack (leaf first).  A tid that is not waiting, or already woken, is
 * left as it is.  false on ENOMEM. */
bool kf_offcpu_woken(struct kf_offcpu *oc, int32_t tid, const struct kf_stack_root *waker,
		     const struct kf_frame *frames, size_t n);

/* tid's waiting stack, now taken (NULL: none).  Valid until the next
 * kf_offcpu_hold. */
struct kf_offcpu_wait *kf_offcpu_take(struct kf_offcpu *oc, int32_t tid);

/* Every stack still waiting, in the order of their threads' first
 * switch-outs, each taken (for the end of the capture).  NULL: no more;
 * *it starts at 0. */
struct kf_offcpu_wait *kf_offcpu_next_waiting(struct kf_offcpu *oc, size_t *it);

#endif
