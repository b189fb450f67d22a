/* header.h - what a capture says about where it was recorded, in the
 * words of `perf report --header-only`.
 *
 * Prints plain facts (the header's feature sections as the reader parsed
 * them, and the events), not a session: the header is known once the
 * capture is opened, before any sample is read.  One "# key : value"
 * line per fact the capture has, in the order and wording of perf's
 * print_* functions (util/header.c).
 *
 * May use: util, perfdata (struct kf_env).
 */
#ifndef KF_HEADER_H
#define KF_HEADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "perfdata.h"

/* One event (attr) as the header lists it. */
struct kf_header_event {
	const char *name;
	uint32_t type;
	uint64_t config, sample_type, sample_period;
	bool freq;               /* sample_period is a frequency */
};

/* Borrowed by kf_header_write only. */
struct kf_header_facts {
	const struct kf_env *env;
	const struct kf_header_event *events;
	size_t n_events;
};

/* Writes the lines and flushes out: 0, or KF_EIO with errno set by the
 * failed write. */
int kf_header_write(const struct kf_header_facts *h, FILE *out);

#endif
