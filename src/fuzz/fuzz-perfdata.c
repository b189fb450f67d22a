/* fuzz-perfdata.c - the whole pipeline on one input held in memory: read,
 * order, track state, fold.  No file but the input is opened (no_files),
 * unless KFOLD_FUZZ_SYMFS names a symfs: then a third pass looks for the
 * recorded files there (only there: with no host, the library's default,
 * kfold reads nothing of this machine's and asks no debuginfod server),
 * so that DWARF unwinding runs with real CFI on mutated registers and
 * stack copies (seed it with testdata/cases/dwarf-small/perf.data and
 * testdata/symfs). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "kfold.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void quiet(void *payload, enum kf_log_level level, const char *msg)
{
	(void)payload;
	(void)level;
	(void)msg;
}

static void fold(const uint8_t *data, size_t size, enum kf_compat compat,
		 const char *symfs, bool contexts, bool off_cpu)
{
	kf_options o;
	kf_options_init(&o);
	kf_session *s;
	FILE *null = fopen("/dev/null", "w");

	o.no_files = symfs == NULL;
	o.symfs = symfs;
	o.buildid_dir = "";
	/* no host (kf_options_init's o.host = NULL): nothing of this
	 * machine is read, no kallsyms, perf map or debuginfod server */
	o.log = quiet;
	o.compat = compat;
	o.max_queue_bytes = 1 << 20;
	if (contexts) {
		/* kernel contexts: the rewritten stacks, the report, the summary */
		o.classify = true;
		o.context = size & 1 ? KF_CONTEXT_FRAMES : KF_CONTEXT_VERDICT;
		o.exclude = 1u << KF_VERDICT_IDLE;
		/* the threads in a table (kfold report's) or in the roots */
		o.thread_table = (size >> 3 & 1) != 0;
		/* cut DWARF stacks completed from earlier samples */
		o.stitch = true;
	}
	/* off-CPU times: sched_switch's fields from the tracing data's
	 * formats, the switch-ins, the stacks waiting for them */
	o.off_cpu = off_cpu;
	/* and the cgroups of PERF_RECORD_CGROUP and the samples' ids (a
	 * capture without them is refused at its first sample) */
	o.cgroup_root = off_cpu;
	if (kf_session_new(&s, &o) == 0 && kf_session_load_mem(s, data, size) == 0 &&
	    null) {
		kf_session_write_folded(s, null);
		if (contexts) {
			kf_session_write_json(s, null);
			kf_session_write_explain(s, null);
		}
	}
	kf_session_free(s);
	if (null)
		fclose(null);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int init;
	static const char *symfs;

	if (!init) {
		symfs = getenv("KFOLD_FUZZ_SYMFS");
		if (symfs && !*symfs)
			symfs = NULL;
		init = 1;
	}
	fold(data, size, KF_COMPAT_NONE, NULL, false, false);
	/* compat mode names frames through other code paths */
	fold(data, size, KF_COMPAT_PERF, NULL, false, false);
	fold(data, size, KF_COMPAT_NONE, symfs, true, false);
	fold(data, size, KF_COMPAT_NONE, symfs, true, true);
	return 0;
}
