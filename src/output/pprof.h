/* pprof.h - the stacks as a gzip-compressed profile.proto (google/pprof),
 * the format `go tool pprof`, Pyroscope, Parca and Grafana read.
 *
 * Built over the public stacks (kf_session_stack: raw chains with their
 * structured frames) and modules (kf_session_module), or anything that
 * gives the same structures (kfold merge's folded lines), plus the few
 * facts of the event the caller gives: one Sample per distinct
 * raw chain, one Location per distinct (module, address, inline chain),
 * one Function per distinct (name, file), one Mapping per module a
 * location falls into.  The encoder is this file's own: profile.proto
 * needs varints and length-delimited fields only, fewer lines than the
 * glue a generated protobuf-c encoder would need.
 *
 * May use: util, kfold.h.
 */
#ifndef KF_PPROF_H
#define KF_PPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "kfold.h"
#include "stacksrc.h"

struct kf_pprof_facts {
	const char *event;        /* the weights' sample type: the folded event,
				     as perf script names it */
	const char *unit;         /* its unit: "nanoseconds" for the software
				     clocks, else "count" */
	bool count_samples;       /* weights are sample counts: one sample
				     type ("samples") only */
	bool no_samples;          /* the stacks' sample counts are not known
				     (folded text): one sample type, the
				     weights' */
	int64_t period;           /* the fixed sample period, 0 when sampled
				     by frequency */
	int64_t duration_ns;      /* last sample time - first, 0 unknown */
	const char *const *comments; /* lines for the profile's comments */
	size_t n_comments;
};

/* Writes the profile, gzip-compressed, to out.  0, KF_EIO (writing
 * failed, errno set), KF_ENOMEM, or what src->stack returned. */
int kf_pprof_write(const struct kf_stack_src *src, const struct kf_pprof_facts *f,
		   FILE *out);

#endif
