/* filter.h - which samples count: perf script's --pid, --tid, --comms,
 * --cpu and --time, with perf 6.1's syntax and meaning.
 *
 * perf script drops a sample, before anything else is done with it, when
 * its time is outside the --time ranges (perf_time__ranges_skip_sample:
 * a sample without a time, 0, is kept), when its thread is filtered
 * (thread__is_filtered: the thread's comm at that moment is not in the
 * --comms list, its pid or tid not in --pid/--tid), or when its CPU is
 * not in the --cpu list.  kfold spells the lists --pids, --tids, --comms
 * and --cpus (its --pid and --tid name the root frames, as
 * stackcollapse-perf.pl's do).
 *
 * Syntax (tools/perf/util/{intlist,strlist,time-utils}.c, libperf's
 * cpumap.c):
 *  - pids, tids: decimal numbers separated by ','; an empty item is
 *    refused here (perf reads it as 0);
 *  - comms: names separated by ',', taken byte for byte;
 *  - cpus: numbers and ranges A-B separated by ',', each below
 *    KF_FILTER_MAX_CPUS;
 *  - time: "START,STOP" in seconds with up to nine decimals (either may
 *    be empty: open), several such ranges separated by spaces, ascending
 *    and not overlapping; or percentages of the span from the first to
 *    the last sample (the header's HEADER_SAMPLE_TIME): "P%/N" (the Nth
 *    slice of P%), "A%-B%", each list separated by ',', or one "P%"
 *    (the first slice).
 *
 * May use: util.
 */
#ifndef KF_FILTER_H
#define KF_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

#define KF_FILTER_MAX_CPUS 4096

struct kf_time_range {
	uint64_t start, end;          /* ns; 0: open */
};

enum kf_filter_kind { KF_FILTER_PIDS, KF_FILTER_TIDS, KF_FILTER_COMMS, KF_FILTER_CPUS,
		       KF_FILTER_TIME, KF_FILTER_CGROUPS, KF_FILTER_NKINDS };

struct kf_filter {
	bool on;                      /* some filter is set */
	char *given[KF_FILTER_NKINDS]; /* the arguments as given; NULL: none */
	bool pids_set, tids_set, comms_set, cpus_set, time_set;
	int64_t *pids, *tids;
	size_t n_pids, n_tids;
	char **comms;
	size_t n_comms;
	bool cgroups_set;             /* kfold's --cgroups (not perf script's) */
	char **cgroups;
	size_t n_cgroups;
	uint8_t cpus[KF_FILTER_MAX_CPUS / 8];
	bool time_percent;            /* it needs the sample time span */
	struct kf_time_range *ranges;
	size_t n_ranges;
};

/* Parses the lists and, unless it is made of percentages, the time (each
 * argument NULL: not given).  0, KF_ENOMEM, or KF_EINVAL with what is
 * wrong in err (errlen bytes). */
int kf_filter_init(struct kf_filter *f, const char *pids, const char *tids,
		   const char *comms, const char *cpus, const char *time,
		   char *err, size_t errlen);
void kf_filter_fini(struct kf_filter *f);

/* --cgroups: cgroup paths separated by ',' ("/system.slice/x.service",
 * as perf's PERF_RECORD_CGROUP records name them), byte for byte.  0 or
 * KF_ENOMEM. */
int kf_filter_set_cgroups(struct kf_filter *f, const char *list);
/* Whether a sample in the cgroup at `path` is left out. */
bool kf_filter_cgroup_out(const struct kf_filter *f, const char *path);

/* "pids", "tids", "comms", "cpus", "time", "cgroups" */
const char *kf_filter_name(enum kf_filter_kind k);

/* The percentages of --time, of the span [first, last].  0, KF_ENOMEM
 * or KF_EINVAL (err). */
int kf_filter_time_span(struct kf_filter *f, uint64_t first, uint64_t last,
			char *err, size_t errlen);

/* Whether a sample at `time` (0: none) is outside the --time ranges. */
bool kf_filter_time_out(const struct kf_filter *f, uint64_t time);
/* Whether a sample of this thread (pid, tid -1 when the sample has none;
 * comm: the thread's current comm, NULL when not needed) is left out. */
bool kf_filter_thread_out(const struct kf_filter *f, int64_t pid, int64_t tid,
			  const char *comm);
bool kf_filter_cpu_out(const struct kf_filter *f, uint32_t cpu);

#endif
