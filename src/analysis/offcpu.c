/* offcpu.c - the switched-out stacks of --off-cpu (offcpu.h). */
#include "offcpu.h"

#include <stdlib.h>
#include <string.h>

static const char *const state_names[KF_OFFCPU_NSTATES] = {
	[KF_OFFCPU_PREEMPTED] = "preempted",
	[KF_OFFCPU_SLEEPING] = "sleeping",   [KF_OFFCPU_BLOCKED] = "blocked",
	[KF_OFFCPU_STOPPED] = "stopped",     [KF_OFFCPU_TRACED] = "traced",
	[KF_OFFCPU_DEAD] = "dead",           [KF_OFFCPU_PARKED] = "parked",
	[KF_OFFCPU_IDLE] = "idle",
};

enum kf_offcpu_state kf_offcpu_state_of(uint64_t v)
{
	/* the kernel reports one state bit; should there be more, the
	 * lowest decides, as perf's letter for it does */
	if (v & 0x01)
		return KF_OFFCPU_SLEEPING;
	if (v & 0x02)
		return KF_OFFCPU_BLOCKED;
	if (v & 0x04)
		return KF_OFFCPU_STOPPED;
	if (v & 0x08)
		return KF_OFFCPU_TRACED;
	if (v & 0x30)
		return KF_OFFCPU_DEAD;
	if (v & 0x40)
		return KF_OFFCPU_PARKED;
	if (v & 0x80)
		return KF_OFFCPU_IDLE;
	return KF_OFFCPU_PREEMPTED;
}

const char *kf_offcpu_state_name(enum kf_offcpu_state st)
{
	return (unsigned)st < KF_OFFCPU_NSTATES ? state_names[st] : "unknown";
}

void kf_offcpu_init(struct kf_offcpu *oc)
{
	memset(oc, 0, sizeof(*oc));
	kf_map64_init(&oc->slot);
}

void kf_offcpu_fini(struct kf_offcpu *oc)
{
	size_t i;

	for (i = 0; i < oc->n; i++) {
		free(oc->waits[i].frames);
		free(oc->waits[i].wframes);
	}
	free(oc->waits);
	kf_map64_fini(&oc->slot);
	memset(oc, 0, sizeof(*oc));
}

/* tids are 32-bit: the key is the value as unsigned, -1 included */
static uint64_t key_of(int32_t tid)
{
	return (uint64_t)(uint32_t)tid;
}

/* Copies n frames into a buffer of the wait's, grown as needed. */
static bool copy_frames(struct kf_frame **buf, size_t *cap, size_t *nbuf,
			const struct kf_frame *frames, size_t n)
{
	if (n && !KF_GROW(*buf, *cap, n))
		return false;
	if (n)
		memcpy(*buf, frames, n * sizeof(*frames));
	*nbuf = n;
	return true;
}

/* tid's wait, when it is waiting; NULL: none */
static struct kf_offcpu_wait *waiting(const struct kf_offcpu *oc, int32_t tid)
{
	uint32_t k;

	if (!oc->n_waiting || !kf_map64_get(&oc->slot, key_of(tid), &k) ||
	    !oc->waits[k].waiting)
		return NULL;
	return &oc->waits[k];
}

bool kf_offcpu_hold(struct kf_offcpu *oc, int32_t tid, uint64_t time,
		    const struct kf_frame *root,
		    const struct kf_frame *frames, size_t n, uint32_t thread,
		    int32_t th_pid, int32_t th_tid, bool *replaced)
{
	struct kf_offcpu_wait *w;
	uint32_t k;

	*replaced = false;
	if (!kf_map64_get(&oc->slot, key_of(tid), &k)) {
		if (oc->n >= UINT32_MAX || !KF_GROW(oc->waits, oc->cap, oc->n + 1))
			return false;
		k = (uint32_t)oc->n;
		memset(&oc->waits[k], 0, sizeof(oc->waits[k]));
		if (!kf_map64_put(&oc->slot, key_of(tid), k))
			return false;
		oc->n++;
	}
	w = &oc->waits[k];
	if (!copy_frames(&w->frames, &w->cap, &w->n, frames, n))
		return false;
	if (w->waiting) {
		*replaced = true;
		oc->n_waiting--;
	}
	w->root = *root;
	w->time = time;
	w->thread = thread;
	w->pid = th_pid;
	w->tid = th_tid;
	w->waiting = true;
	w->woken = false;
	w->wn = 0;
	oc->n_waiting++;
	return true;
}

bool kf_offcpu_wants_waker(const struct kf_offcpu *oc, int32_t tid)
{
	const struct kf_offcpu_wait *w = waiting(oc, tid);

	return w && !w->woken;
}

bool kf_offcpu_woken(struct kf_offcpu *oc, int32_t tid, const struct kf_stack_root *waker,
		     const struct kf_frame *frames, size_t n)
{
	struct kf_offcpu_wait *w = waiting(oc, tid);

	if (!w || w->woken)
		return true;
	if (!copy_frames(&w->wframes, &w->wcap, &w->wn, frames, n))
		return false;
	w->waker = *waker;
	w->woken = true;
	return true;
}

struct kf_offcpu_wait *kf_offcpu_take(struct kf_offcpu *oc, int32_t tid)
{
	struct kf_offcpu_wait *w = waiting(oc, tid);

	if (w) {
		w->waiting = false;
		oc->n_waiting--;
	}
	return w;
}

struct kf_offcpu_wait *kf_offcpu_next_waiting(struct kf_offcpu *oc, size_t *it)
{
	for (; *it < oc->n; (*it)++) {
		struct kf_offcpu_wait *w = &oc->waits[*it];

		if (w->waiting) {
			w->waiting = false;
			oc->n_waiting--;
			(*it)++;
			return w;
		}
	}
	return NULL;
}
