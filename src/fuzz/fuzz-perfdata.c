/* fuzz-perfdata.c - the whole pipeline on one input held in memory: read,
 * order, track state, fold.  No file but the input is opened (no_files). */
#include <stdint.h>
#include <stdio.h>

#include "kfold.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fold(const uint8_t *data, size_t size, enum kf_compat compat)
{
	kf_options o = KF_OPTIONS_INIT;
	kf_session *s;
	FILE *null = fopen("/dev/null", "w");

	o.no_files = true;
	o.compat = compat;
	o.max_queue_bytes = 1 << 20;
	if (kf_session_new(&s, &o) == 0 && kf_session_load_mem(s, data, size) == 0 &&
	    null)
		kf_session_write_folded(s, null);
	kf_session_free(s);
	if (null)
		fclose(null);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fold(data, size, KF_COMPAT_NONE);
	/* compat mode names frames through other code paths */
	fold(data, size, KF_COMPAT_PERF);
	return 0;
}
