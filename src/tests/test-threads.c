/* test-threads.c - the JSON report and --explain read the same from a
 * table of each stack's threads (opts.thread_table, what `kfold report`
 * and `kfold explain` use) as from a trie with a root per thread.
 *
 * For one capture, with each --jobs in 1 and 2: a session with a root per
 * thread and one with the table, each writing the report and the
 * explanation.  The explanations are equal byte for byte; the reports are
 * equal but for which stack of a line frame_info describes (its heaviest:
 * over all threads with the table, per thread without), so they are
 * compared without frame_info and frame_table, and each line's frame_info
 * must list as many frames as the line has.  The table's trie has at most
 * the other's stacks; `fewer` asks for strictly fewer (a capture whose
 * threads share stacks).
 *
 * usage: test-threads CAPTURE SYMFS KALLSYMS BUILDID_DIR [fewer]
 * (threads.sh runs it over committed captures).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kfold.h"

struct out {
	char *json, *explain;
	size_t json_len, explain_len;
	size_t stacks;
};

static void one(const char **argv, bool table, unsigned jobs, struct out *o)
{
	kf_options opt;
	kf_session *s = NULL;
	FILE *f;

	memset(o, 0, sizeof(*o));
	kf_options_init(&opt);
	opt.symfs = argv[2];
	opt.kallsyms = argv[3];
	opt.buildid_dir = argv[4];
	opt.classify = true;
	opt.thread_table = table;
	opt.jobs = jobs;
	CHECK_EQ(kf_session_new(&s, &opt), 0);
	if (!s)
		return;
	CHECK_EQ(kf_session_load_path(s, argv[1]), 0);
	o->stacks = kf_session_n_stacks(s);
	f = open_memstream(&o->json, &o->json_len);
	CHECK(f != NULL);
	if (f) {
		CHECK_EQ(kf_session_write_json(s, f), 0);
		fclose(f);
	}
	f = open_memstream(&o->explain, &o->explain_len);
	CHECK(f != NULL);
	if (f) {
		CHECK_EQ(kf_session_write_explain(s, f), 0);
		fclose(f);
	}
	kf_session_free(s);
}

/* The report less frame_info and frame_table; each line's frame_info as
 * long as its frames.  NULL if it does not parse. */
static json_t *without_frames(const char *text)
{
	json_error_t err;
	json_t *j = json_loads(text, 0, &err), *st, *line;
	size_t i;

	CHECK(j != NULL);
	if (!j)
		return NULL;
	st = json_object_get(j, "stacks");
	CHECK(json_is_array(st));
	json_array_foreach(st, i, line) {
		CHECK_EQ(json_array_size(json_object_get(line, "frame_info")),
			 json_array_size(json_object_get(line, "frames")));
		json_object_del(line, "frame_info");
	}
	CHECK(json_is_array(json_object_get(j, "frame_table")));
	json_object_del(j, "frame_table");
	return j;
}

int main(int argc, char **argv)
{
	struct out a, b;
	unsigned jobs;
	bool fewer = argc > 5 && strcmp(argv[5], "fewer") == 0;

	if (argc < 5 || (argc > 5 && !fewer)) {
		fprintf(stderr, "usage: test-threads CAPTURE SYMFS KALLSYMS BUILDID_DIR "
			"[fewer]\n");
		return 2;
	}
	for (jobs = 1; jobs <= 2; jobs++) {
		json_t *ja, *jb;

		one((const char **)argv, false, jobs, &a);
		one((const char **)argv, true, jobs, &b);
		CHECK(a.json && b.json && a.explain && b.explain);
		if (!a.json || !b.json || !a.explain || !b.explain)
			return 1;
		CHECK(b.stacks <= a.stacks);
		if (fewer)
			CHECK(b.stacks < a.stacks);
		CHECK(a.explain_len > 0);
		CHECK(a.explain_len == b.explain_len &&
		      memcmp(a.explain, b.explain, a.explain_len) == 0);
		ja = without_frames(a.json);
		jb = without_frames(b.json);
		CHECK(ja && jb && json_equal(ja, jb));
		printf("%s --jobs %u: %zu stacks with a root per thread, %zu with the table; "
		       "report and explanation the same (%s frame_info)\n", argv[1], jobs,
		       a.stacks, b.stacks,
		       a.json_len == b.json_len && memcmp(a.json, b.json, a.json_len) == 0 ?
		       "with" : "but for");
		json_decref(ja);
		json_decref(jb);
		free(a.json);
		free(a.explain);
		free(b.json);
		free(b.explain);
	}
	return check_failures ? 1 : 0;
}
