/* records.h - views of the non-sample records the session reads itself
 * (LOST, LOST_SAMPLES, the kernel's MMAP/MMAP2).
 *
 * Pure functions of (record bytes, byte order), like sample.h: the fields
 * are read through the bounded cursor (cur.h) at the offsets of
 * include/uapi/linux/perf_event.h, so no file above the reader counts
 * offsets into a record.  tasks.c applies the sideband records to its
 * state itself; these views are for the facts kept elsewhere.
 *
 * May use: util, cur, perfdata (struct kf_rec and the constants).
 *
 * Ownership: a view borrows the record's bytes (valid as long as they
 * are, see perfdata.h).
 */
#ifndef KF_RECORDS_H
#define KF_RECORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perfdata.h"

/* The count of a LOST (events lost) or LOST_SAMPLES (samples lost)
 * record.  False for another type or a record too short to hold it. */
bool kf_rec_lost(const struct kf_rec *rec, bool swap, uint64_t *count);

/* The fields of a MMAP or MMAP2 record before and including its file
 * name. */
struct kf_mmap_view {
	uint32_t pid, tid;
	uint64_t start, len, pgoff;
	const char *filename;   /* not NUL-terminated when the record is cut
				   inside it: use filename_len */
	size_t filename_len;    /* up to the NUL or the end of the record */
};

/* False for another type or a record that ends before its file name. */
bool kf_rec_mmap(const struct kf_rec *rec, bool swap, struct kf_mmap_view *out);

#endif
