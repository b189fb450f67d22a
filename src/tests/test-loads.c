/* test-loads.c - symbol files are loaded at the load steps only (dso.h):
 * opening a capture loads nothing, the run (the callchain stage and the
 * prepare step after it) loads every hit module's symbols, and writing
 * every output after that loads nothing more.  A getter asked before
 * its module's load stops a debug build (dso.c's assert), so the test
 * also shows no consumer relies on loading by asking.
 *
 * usage: test-loads CAPTURE SYMFS KALLSYMS BUILDID_DIR [OPTION...]
 * with OPTION one of --compat=perf --inline --no-inline --srcline
 * --context (loads.sh runs it over committed captures).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kfold.h"
#include "session.h"

static void write_all(kf_session *s, FILE *null)
{
	kf_module_info mi;
	kf_unwind_stop us;
	kf_fp_break fb;
	uint64_t a, b;
	size_t i;

	CHECK_EQ(kf_session_write_folded(s, null), 0);
	if (s->o.classify) {
		CHECK_EQ(kf_session_write_json(s, null), 0);
		CHECK_EQ(kf_session_write_explain(s, null), 0);
	}
	CHECK_EQ(kf_session_write_header(s, null), 0);
	for (i = 0; i < kf_session_n_modules(s); i++) {
		CHECK_EQ(kf_session_module(s, i, &mi), 0);
		(void)kf_session_debuginfo_advice(s, i);
	}
	for (i = 0; i < kf_session_n_unwind_stops(s); i++)
		CHECK_EQ(kf_session_unwind_stop(s, i, &us), 0);
	kf_session_fp_chains(s, &a, &b);
	for (i = 0; i < kf_session_n_fp_breaks(s); i++)
		CHECK_EQ(kf_session_fp_break(s, i, &fb), 0);
}

int main(int argc, char **argv)
{
	kf_options o;
	kf_session *s;
	FILE *null;
	uint64_t after_run;
	size_t i;
	int k;

	if (argc < 5) {
		fprintf(stderr, "usage: test-loads CAPTURE SYMFS KALLSYMS BUILDID_DIR "
			"[OPTION...]\n");
		return 2;
	}
	kf_options_init(&o);
	o.symfs = argv[2];
	o.kallsyms = argv[3];
	o.buildid_dir = argv[4];
	for (k = 5; k < argc; k++) {
		if (strcmp(argv[k], "--compat=perf") == 0)
			o.compat = KF_COMPAT_PERF;
		else if (strcmp(argv[k], "--inline") == 0)
			o.inline_frames = true;
		else if (strcmp(argv[k], "--no-inline") == 0)
			o.inline_frames = false;
		else if (strcmp(argv[k], "--srcline") == 0)
			o.srcline = true;
		else if (strcmp(argv[k], "--context") == 0)
			o.context = KF_CONTEXT_FRAMES;
		else {
			fprintf(stderr, "test-loads: unknown option %s\n", argv[k]);
			return 2;
		}
	}
	/* JSON and --explain need the classifier, which --compat=perf,
	 * perf's output only, refuses */
	o.classify = o.compat != KF_COMPAT_PERF;
	null = fopen("/dev/null", "w");
	CHECK(null != NULL);
	CHECK_EQ(kf_session_new(&s, &o), 0);
	if (!null || !s)
		return 1;

	CHECK_EQ(kf_session_open_path(s, argv[1]), 0);
	CHECK_EQ(s->dsos.n_loads, 0);           /* the header loads nothing */
	CHECK_EQ(kf_session_run(s), 0);
	after_run = s->dsos.n_loads;
	CHECK(after_run > 0);
	/* the prepare step left every hit module's symbols loaded */
	for (i = 1; i < s->modules.n; i++)
		if (s->modules.v[i]->hit)
			CHECK(kf_dso_loaded(&s->dsos, (uint32_t)i, KF_DSO_LOAD_SYMS));
	CHECK(kf_session_n_modules(s) > 0);

	write_all(s, null);
	CHECK_EQ(s->dsos.n_loads, after_run);   /* the outputs only read */
	write_all(s, null);                     /* and again: still nothing */
	CHECK_EQ(s->dsos.n_loads, after_run);

	printf("%s: %" PRIu64 " parts loaded by the run, none by the outputs\n",
	       argv[1], after_run);
	kf_session_free(s);
	fclose(null);
	return check_failures ? 1 : 0;
}
