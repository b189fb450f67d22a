/* inflate.h - a -z capture rewritten with its compressed records
 * inflated in place.
 *
 * `perf record -z` packs records into PERF_RECORD_COMPRESSED (and
 * COMPRESSED2) records: one zstd stream across them, a record of the
 * stream possibly split between two of them.  A bundle that must change
 * records (kfold archive --symbols-only zeroes stack copies, --redact
 * masks strings) writes such a capture with that stream's bytes in place
 * of its COMPRESSED records: the same records in the same order, so
 * kf_pd_next returns the same sequence (kf_rec.seq) and every analysis
 * the same answer, only the data section longer.  A file's header and
 * feature table are fixed for the new length; its HEADER_COMPRESSED
 * feature stays (it describes how the capture was recorded).  Data that
 * follows AUXTRACE and HEADER_TRACING_DATA records is copied with them.
 *
 * May use: util, libzstd.
 */
#ifndef KF_INFLATE_H
#define KF_INFLATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

/* Inflates the capture b[0..n) (a file or a pipe stream, either byte
 * order) into *out (malloc'd, *out_len bytes; at most max_out).  A
 * capture without compressed records is copied as it is.  Damage past
 * which the records cannot be walked (a record shorter than its header,
 * a size past the end) ends the walk: the rest is copied as it is.
 * 0; KF_EFORMAT (not a perf.data, corrupt compressed data: the message
 * names the offset), KF_ENOMEM, KF_EUNSUPP (more than max_out bytes). */
int kf_inflate_capture(const uint8_t *b, size_t n, size_t max_out, uint8_t **out,
		       size_t *out_len, struct kf_error *e);

/* The same for one data.N file of a perf record --threads directory: a
 * stream of records (in the byte order of its data file's header, swap)
 * with no header of its own; its compressed records are their own zstd
 * stream, as perf writes them. */
int kf_inflate_records(const uint8_t *b, size_t n, bool swap, size_t max_out, uint8_t **out,
		       size_t *out_len, struct kf_error *e);

#endif
