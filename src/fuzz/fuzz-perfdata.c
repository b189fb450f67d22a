/* fuzz-perfdata.c - the whole pipeline on one input held in memory: read,
 * order, track state, fold.  No file but the input is opened (no_files). */
#include <stdint.h>
#include <stdio.h>

#include "kfold.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	kf_options o = KF_OPTIONS_INIT;
	kf_session *s;
	FILE *null = fopen("/dev/null", "w");

	o.no_files = true;
	o.max_queue_bytes = 1 << 20;
	if (kf_session_new(&s, &o) == 0 && kf_session_load_mem(s, data, size) == 0 &&
	    null)
		kf_session_write_folded(s, null);
	kf_session_free(s);
	if (null)
		fclose(null);
	/* the same bytes in compat mode, where other code paths name frames */
	o.compat = KF_COMPAT_PERF;
	null = fopen("/dev/null", "w");
	if (kf_session_new(&s, &o) == 0 && kf_session_load_mem(s, data, size) == 0 &&
	    null)
		kf_session_write_folded(s, null);
	kf_session_free(s);
	if (null)
		fclose(null);
	return 0;
}
