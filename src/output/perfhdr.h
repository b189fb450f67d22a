/* perfhdr.h - the header line `perf script` prints for a sample, read
 * back as stackcollapse-perf.pl reads it.
 *
 * Under the policy's perf_script_header (--compat=perf), a sample's comm,
 * weight and event are not taken from the record but from what
 * stackcollapse-perf.pl's regexes find in perf script's header line for
 * it (docs/perf-compat.md F1, F3, F4, S1): the comm group may end inside
 * the comm or run past it into the numbers, the period comes from the
 * text, and a line the regex does not match folds nothing.  This stage
 * prints that line (comm, " %5d [%03d] %12s: %10lu %*s: " with cpu and
 * time only when the event type's first non-dummy event samples them,
 * the name width taken at the first sample from the events known then)
 * and applies the regexes (folded.h's kf_collapse_header_*).
 *
 * May use: util, capture (attrs, event names, samples), output/folded.
 *
 * Ownership: struct kf_perf_header owns its line, the per-sample
 * scratch, and what it learnt at the first sample (the width); the
 * results of kf_perf_header_read are slices of that line, valid until
 * the next call.  One per thread that reads samples.
 */
#ifndef KF_PERFHDR_H
#define KF_PERFHDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perfdata.h"
#include "sample.h"
#include "util.h"

struct kf_perf_header {
	int name_width;        /* the widest event name, at the first sample */
	struct kf_buf line;    /* the comm and the header after it */
};

/* What stackcollapse-perf.pl took from one header line. */
struct kf_perf_header_read {
	bool matched;          /* false: the header regex did not match, the
				  sample folds to nothing */
	const char *comm;      /* the comm group (not NUL-terminated) */
	size_t comm_len;
	bool has_event;        /* the event regex matched: */
	const char *event;     /* its event name */
	size_t event_len;
	uint64_t period;       /* its period digits; 0 when none */
};

void kf_perf_header_init(struct kf_perf_header *h);
void kf_perf_header_fini(struct kf_perf_header *h);

/* Prints the header line of sample smp of a thread named comm, delivered
 * as event attr_idx of pd named evname, and reads it (*out, borrowed
 * until the next call).  0 or KF_ENOMEM. */
int kf_perf_header_read(struct kf_perf_header *h, const struct kf_pd *pd, int attr_idx,
			const struct kf_sample *smp, const char *evname,
			const char *comm, struct kf_perf_header_read *out);

#endif
