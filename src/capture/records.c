/* records.c - views of LOST, LOST_SAMPLES and MMAP/MMAP2 (records.h). */
#include "records.h"

#include <string.h>

#include "cur.h"

bool kf_rec_lost(const struct kf_rec *rec, bool swap, uint64_t *count)
{
	struct kf_cur c = kf_cur_make(rec->data, rec->size, swap);

	/* perf_event_header, then LOST: id, lost; LOST_SAMPLES: lost */
	if (!kf_cur_skip(&c, 8))
		return false;
	if (rec->type == KF_REC_LOST)
		return kf_cur_skip(&c, 8) && kf_cur_u64(&c, count);
	if (rec->type == KF_REC_LOST_SAMPLES)
		return kf_cur_u64(&c, count);
	return false;
}

bool kf_rec_mmap(const struct kf_rec *rec, bool swap, struct kf_mmap_view *out)
{
	struct kf_cur c = kf_cur_make(rec->data, rec->size, swap);
	size_t left;

	if (rec->type != KF_REC_MMAP && rec->type != KF_REC_MMAP2)
		return false;
	memset(out, 0, sizeof(*out));
	if (!(kf_cur_skip(&c, 8) && kf_cur_u32(&c, &out->pid) &&
	      kf_cur_u32(&c, &out->tid) && kf_cur_u64(&c, &out->start) &&
	      kf_cur_u64(&c, &out->len) && kf_cur_u64(&c, &out->pgoff)))
		return false;
	/* MMAP2: maj, min (4 each), ino, ino_generation (8 each; or the
	 * build-id's 24 bytes), then prot and flags (4 each) before the name,
	 * which starts at 72 (tasks.c reads the same fields) */
	if (rec->type == KF_REC_MMAP2 && !kf_cur_skip(&c, 32))
		return false;
	left = kf_cur_left(&c);
	if (!left)
		return false;
	out->filename = (const char *)c.p;
	out->filename_len = strnlen(out->filename, left);
	return true;
}
